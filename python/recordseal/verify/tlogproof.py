"""c2sp.org/tlog-proof@v1: an entry's index, its RFC 6962 inclusion proof, and the checkpoint.

::

    c2sp.org/tlog-proof@v1
    [extra <base64>]
    index <decimal>
    <base64 hash>            (zero or more, from the leaf's sibling upwards)
    <empty line>
    <signed checkpoint note, verbatim>

The ``extra`` line is unauthenticated; it is kept but never trusted. The service writes the
format (``services.bundles.tlog_proof_text``); the verifier only reads it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .encoding import b64decode
from .errors import BundleError

HEADER = "c2sp.org/tlog-proof@v1"
_INDEX = re.compile("index (0|[1-9][0-9]{0,18})")
MAX_INDEX = 2**63 - 1
HASH_SIZE = 32


@dataclass(frozen=True, slots=True)
class TlogProof:
    index: int
    hashes: tuple[bytes, ...]
    checkpoint: str
    extra: bytes | None = None


def _malformed(message: str) -> BundleError:
    return BundleError("tlog proof", message)


def parse_tlog_proof(text: str) -> TlogProof:
    """Parse a tlog proof strictly; the checkpoint note is returned unparsed."""
    head, blank, checkpoint = text.partition("\n\n")
    if not blank or not checkpoint:
        raise _malformed("no empty line followed by a checkpoint")
    lines = head.split("\n")
    if lines[0] != HEADER:
        raise _malformed(f"the first line is not {HEADER}")
    position = 1
    extra = None
    if len(lines) > position and lines[position].startswith("extra "):
        extra = b64decode(lines[position].removeprefix("extra "))
        if extra is None:
            raise _malformed("the extra line is not canonical base64")
        position += 1
    match = _INDEX.fullmatch(lines[position]) if len(lines) > position else None
    if match is None or int(match.group(1)) > MAX_INDEX:
        raise _malformed("no 'index' line with a decimal below 2^63 without leading zeros")
    hashes = []
    for number, line in enumerate(lines[position + 1 :], start=1):
        node = b64decode(line)
        if node is None or len(node) != HASH_SIZE:
            raise _malformed(f"proof line {number} is not the base64 of 32 bytes")
        hashes.append(node)
    return TlogProof(int(match.group(1)), tuple(hashes), checkpoint, extra)
