"""The add-checkpoint request body and the size reply."""

from __future__ import annotations

import base64

import pytest

from recordseal.tlog import TlogError
from recordseal.tlog.protocol import (
    MAX_PROOF_LINES,
    encode_add_checkpoint,
    encode_size,
    parse_add_checkpoint,
    parse_size_reply,
)

CHECKPOINT = "o\n1\n" + base64.b64encode(bytes(32)).decode() + "\n\n— k AAAAAAAA\n"
NODE = bytes(range(32))
NODE_B64 = base64.b64encode(NODE).decode()


def test_round_trip() -> None:
    body = encode_add_checkpoint(5, [NODE, NODE], CHECKPOINT)
    assert body == f"old 5\n{NODE_B64}\n{NODE_B64}\n\n{CHECKPOINT}".encode()
    request = parse_add_checkpoint(body)
    assert (request.old_size, request.proof, request.signed_checkpoint) == (
        5,
        (NODE, NODE),
        CHECKPOINT,
    )
    assert request.encode() == body
    assert parse_add_checkpoint(b"old 0\n\n" + CHECKPOINT.encode()).proof == ()


MALFORMED = {
    "no blank line": f"old 0\n{CHECKPOINT}",
    "missing old": f"\n\n{CHECKPOINT}",
    "old leading zero": f"old 05\n\n{CHECKPOINT}",
    "old negative": f"old -1\n\n{CHECKPOINT}",
    "old two spaces": f"old  1\n\n{CHECKPOINT}",
    "wrong keyword": f"new 1\n\n{CHECKPOINT}",
    "bad proof base64": f"old 1\n!!!!\n\n{CHECKPOINT}",
    "short proof hash": f"old 1\n{base64.b64encode(NODE[:31]).decode()}\n\n{CHECKPOINT}",
    "too many proof lines": "old 1\n" + f"{NODE_B64}\n" * (MAX_PROOF_LINES + 1) + f"\n{CHECKPOINT}",
}


@pytest.mark.parametrize("body", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_requests(body: str) -> None:
    with pytest.raises(TlogError) as error:
        parse_add_checkpoint(body.encode())
    assert error.value.code == "request_malformed"


def test_not_utf8() -> None:
    with pytest.raises(TlogError):
        parse_add_checkpoint(b"old 0\n\n\xff")


def test_63_proof_lines_are_allowed() -> None:
    body = "old 1\n" + f"{NODE_B64}\n" * MAX_PROOF_LINES + f"\n{CHECKPOINT}"
    assert len(parse_add_checkpoint(body.encode()).proof) == MAX_PROOF_LINES
    with pytest.raises(TlogError):
        encode_add_checkpoint(1, [NODE] * (MAX_PROOF_LINES + 1), CHECKPOINT)


def test_size_reply() -> None:
    assert encode_size(42) == b"42\n"
    assert parse_size_reply(b"42\n") == 42
    for body in (b"", b"x\n", b"042\n", b"-1\n", b"4 2\n"):
        with pytest.raises(TlogError) as error:
            parse_size_reply(body)
        assert error.value.code == "reply_malformed"
