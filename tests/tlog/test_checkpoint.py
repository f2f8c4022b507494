"""Checkpoints: strict parsing and formatting, signing and opening."""

from __future__ import annotations

import base64

import pytest

from recordseal.tlog import Checkpoint, Ed25519Signer, TlogError, open_checkpoint, sign_checkpoint
from recordseal.tlog.checkpoint import MAX_SIZE

ROOT = bytes(range(32))
ROOT_B64 = base64.b64encode(ROOT).decode()


def test_format_and_parse_round_trip() -> None:
    checkpoint = Checkpoint("example.com/log", 1234, ROOT, ("ext one", "ext two"))
    text = checkpoint.text()
    assert text == f"example.com/log\n1234\n{ROOT_B64}\next one\next two\n"
    assert Checkpoint.parse(text) == checkpoint


@pytest.mark.parametrize("size", [0, 1, 2**63, MAX_SIZE])
def test_sizes_at_the_edges(size: int) -> None:
    checkpoint = Checkpoint("o", size, ROOT)
    assert Checkpoint.parse(checkpoint.text()).size == size


MALFORMED = {
    "no final newline": f"o\n1\n{ROOT_B64}",
    "two lines": "o\n1\n",
    "empty origin": f"\n1\n{ROOT_B64}\n",
    "leading zero": f"o\n01\n{ROOT_B64}\n",
    "plus sign": f"o\n+1\n{ROOT_B64}\n",
    "negative": f"o\n-1\n{ROOT_B64}\n",
    "space in size": f"o\n 1\n{ROOT_B64}\n",
    "hex size": f"o\n0x10\n{ROOT_B64}\n",
    "empty size": f"o\n\n{ROOT_B64}\n",
    "size over 2^64-1": f"o\n{MAX_SIZE + 1}\n{ROOT_B64}\n",
    "unicode digit": f"o\n\u0661\n{ROOT_B64}\n",
    "root not base64": "o\n1\nnot base64!\n",
    "root 31 bytes": f"o\n1\n{base64.b64encode(ROOT[:31]).decode()}\n",
    "root 33 bytes": f"o\n1\n{base64.b64encode(ROOT + b'x').decode()}\n",
    "root unpadded": f"o\n1\n{ROOT_B64.rstrip('=')}\n",
    "root with trailing space": f"o\n1\n{ROOT_B64} \n",
    "empty extension line": f"o\n1\n{ROOT_B64}\n\n",
    "empty line between extensions": f"o\n1\n{ROOT_B64}\na\n\nb\n",
    "control character": f"o\x01\n1\n{ROOT_B64}\n",
}


@pytest.mark.parametrize("text", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_checkpoints(text: str) -> None:
    with pytest.raises(TlogError) as error:
        Checkpoint.parse(text)
    assert error.value.code == "checkpoint_malformed"


@pytest.mark.parametrize(
    ("origin", "size", "root", "extensions"),
    [
        ("", 1, ROOT, ()),
        ("a\nb", 1, ROOT, ()),
        ("o", -1, ROOT, ()),
        ("o", MAX_SIZE + 1, ROOT, ()),
        ("o", 1, ROOT[:31], ()),
        ("o", 1, ROOT, ("",)),
        ("o", 1, ROOT, ("a\nb",)),
        ("o\t", 1, ROOT, ()),
    ],
)
def test_constructor_refuses_what_cannot_format(
    origin: str, size: int, root: bytes, extensions: tuple[str, ...]
) -> None:
    with pytest.raises(TlogError) as error:
        Checkpoint(origin, size, root, extensions)
    assert error.value.code == "checkpoint_malformed"


def test_sign_and_open() -> None:
    signer = Ed25519Signer.generate("example.com/log")
    checkpoint = Checkpoint("example.com/log", 7, ROOT)
    signed = sign_checkpoint(checkpoint, signer)
    opened, note = open_checkpoint(signed, [signer.verifier()])
    assert opened == checkpoint
    assert note.verified[0].name == "example.com/log"
    other = Ed25519Signer.generate("example.com/log")
    with pytest.raises(TlogError) as error:
        open_checkpoint(signed, [other.verifier()])
    assert error.value.code == "note_unverified"


def test_open_refuses_a_signed_note_that_is_not_a_checkpoint() -> None:
    from recordseal.tlog import sign_note

    signer = Ed25519Signer.generate("example.com/log")
    with pytest.raises(TlogError) as error:
        open_checkpoint(sign_note("hello\n", [signer]), [signer.verifier()])
    assert error.value.code == "checkpoint_malformed"
