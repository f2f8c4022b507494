"""The c2sp.org/tlog-witness wire format: the add-checkpoint request and the size reply.

Request body::

    old <size>
    <base64 consistency proof hash>      (0 to 63 lines)
    <empty line>
    <signed checkpoint note>

A 409 reply whose content type is ``text/x.tlog.size`` carries the witness's latest size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import strict_base64
from .checkpoint import HASH_SIZE, parse_size
from .errors import TlogError

ADD_CHECKPOINT_PATH = "/add-checkpoint"
SIZE_MEDIA_TYPE = "text/x.tlog.size"
#: The most consistency proof lines a client may send (RFC 6962 proofs need at most 63).
MAX_PROOF_LINES = 63


@dataclass(frozen=True, slots=True)
class AddCheckpointRequest:
    old_size: int
    proof: tuple[bytes, ...]
    signed_checkpoint: str

    def encode(self) -> bytes:
        return encode_add_checkpoint(self.old_size, self.proof, self.signed_checkpoint)


def encode_add_checkpoint(old_size: int, proof: Sequence[bytes], signed_checkpoint: str) -> bytes:
    """The request body for ``POST <prefix>/add-checkpoint``."""
    if old_size < 0:
        raise TlogError("request_malformed", f"old size {old_size} is negative")
    if len(proof) > MAX_PROOF_LINES:
        message = f"consistency proof has {len(proof)} hashes, more than {MAX_PROOF_LINES}"
        raise TlogError("request_malformed", message, {"count": len(proof)})
    lines = [f"old {old_size}", *(strict_base64.encode(node) for node in proof), ""]
    return ("".join(line + "\n" for line in lines) + signed_checkpoint).encode()


def parse_add_checkpoint(body: bytes) -> AddCheckpointRequest:
    """Parse a request body; every deviation is ``request_malformed`` (HTTP 400)."""
    try:
        text = body.decode()
    except UnicodeDecodeError as error:
        raise _malformed("the request is not valid UTF-8", 0) from error
    head, blank, signed_checkpoint = text.partition("\n\n")
    if not blank:
        raise _malformed("the request has no empty line before the checkpoint", 0)
    old_line, *proof_lines = head.split("\n")
    keyword, _, size_text = old_line.partition(" ")
    old_size = parse_size(size_text)
    if keyword != "old" or old_size is None:
        raise _malformed("the first line is not 'old <size>'", 1)
    if len(proof_lines) > MAX_PROOF_LINES:
        message = f"the request has {len(proof_lines)} proof lines, more than {MAX_PROOF_LINES}"
        raise _malformed(message, 2 + MAX_PROOF_LINES)
    proof: list[bytes] = []
    for number, line in enumerate(proof_lines, 2):
        node = strict_base64.decode(line)
        if node is None or len(node) != HASH_SIZE:
            raise _malformed(f"proof line {number} is not the base64 of a 32-byte hash", number)
        proof.append(node)
    return AddCheckpointRequest(old_size, tuple(proof), signed_checkpoint)


def _malformed(message: str, line: int) -> TlogError:
    return TlogError("request_malformed", message, {"line": line})


def encode_size(size: int) -> bytes:
    """The body of a 409 ``text/x.tlog.size`` reply."""
    return f"{size}\n".encode()


def parse_size_reply(body: bytes) -> int:
    """The witness's size from a ``text/x.tlog.size`` body."""
    size = parse_size(body.decode("ascii", errors="replace").removesuffix("\n"))
    if size is None:
        raise TlogError("reply_malformed", "the witness's size reply is not '<decimal>\\n'")
    return size
