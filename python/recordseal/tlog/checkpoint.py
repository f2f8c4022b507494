"""Checkpoints (c2sp.org/tlog-checkpoint): a log's signed tree head as a note text.

The text is the origin line, the tree size in decimal, the base64 RFC 6962 root hash, then
optional non-empty extension lines, each ending in a newline.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from . import strict_base64
from .errors import TlogError
from .keys import NoteSigner, NoteVerifier
from .note import VerifiedNote, check_text, open_note, sign_note

HASH_SIZE = 32
#: Tree sizes are unsigned 64-bit integers, as in RFC 6962 and the Go implementations.
MAX_SIZE = 2**64 - 1
_DECIMAL = re.compile("0|[1-9][0-9]{0,19}")


def parse_size(text: str) -> int | None:
    """The value of a decimal size without leading zeros, or None."""
    if not _DECIMAL.fullmatch(text):
        return None
    value = int(text)
    return value if value <= MAX_SIZE else None


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A checkpoint body; constructing one checks every field, so it always formats."""

    origin: str
    size: int
    root_hash: bytes
    extensions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.origin or "\n" in self.origin:
            raise _malformed("the origin is empty or spans lines", "origin")
        if not 0 <= self.size <= MAX_SIZE:
            raise _malformed(f"tree size {self.size} is outside 0..2^64-1", "size")
        if len(self.root_hash) != HASH_SIZE:
            message = f"root hash has {len(self.root_hash)} bytes, not {HASH_SIZE}"
            raise _malformed(message, "root_hash")
        for extension in self.extensions:
            if not extension or "\n" in extension:
                raise _malformed("an extension line is empty or spans lines", "extensions")
        try:
            check_text(self.text())
        except TlogError as error:
            raise _malformed(str(error), "text") from error

    def text(self) -> str:
        """The note text (the checkpoint body), final newline included."""
        lines = [
            self.origin,
            str(self.size),
            strict_base64.encode(self.root_hash),
            *self.extensions,
        ]
        return "".join(line + "\n" for line in lines)

    @classmethod
    def parse(cls, text: str) -> Checkpoint:
        """Parse a checkpoint body strictly; every deviation is ``checkpoint_malformed``."""
        if not text.endswith("\n"):
            raise _malformed("the checkpoint does not end in a newline", "text")
        lines = text[:-1].split("\n")
        if len(lines) < 3:
            raise _malformed(f"the checkpoint has {len(lines)} lines, fewer than 3", "text")
        origin, size_line, root_line, *extensions = lines
        size = parse_size(size_line)
        if size is None:
            message = "the tree size is not a decimal in 0..2^64-1 without leading zeros"
            raise _malformed(message, "size")
        root_hash = strict_base64.decode(root_line)
        if root_hash is None or len(root_hash) != HASH_SIZE:
            raise _malformed("the root hash is not the base64 of 32 bytes", "root_hash")
        return cls(origin, size, root_hash, tuple(extensions))


def _malformed(message: str, field: str) -> TlogError:
    return TlogError("checkpoint_malformed", message, {"field": field})


def sign_checkpoint(checkpoint: Checkpoint, signer: NoteSigner) -> str:
    """The signed note of ``checkpoint`` (the signer's key name should be the origin)."""
    return sign_note(checkpoint.text(), [signer])


def open_checkpoint(
    signed: bytes | str, verifiers: Iterable[NoteVerifier]
) -> tuple[Checkpoint, VerifiedNote]:
    """Verify a signed checkpoint with the log's key(s) and parse its body."""
    note = open_note(signed, verifiers)
    return Checkpoint.parse(note.text), note
