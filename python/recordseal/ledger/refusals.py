"""Witnesses that refuse a log's checkpoints, said where an operator looks.

A witness that does not answer only delays its cosignature. A witness that *refuses* — it does
not witness the log's origin, it holds another root at a size it cosigned, it rejects the
consistency proof from its size, or it reports a size beyond the log's — refuses every later
checkpoint of that log too, so the log's bundles stay VERIFICATION INCOMPLETE for good (a demo
witness kept from an earlier data directory was the common case: docs/operations.md).

The sealing leader is the only process that offers checkpoints, so it records, per witness,
how many logs it refuses now in ``witness-refusals.json`` of the data directory; every worker's
``GET /readyz`` reads it and says so in its ``detail``. Counts and witness names only: the
endpoint is public and origins name tenants.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import msgspec

#: Offer failures that are refusals (the witness answered, and said no), not unavailability.
CODES = frozenset({"witness_refused", "witness_ahead"})
FILE_NAME = "witness-refusals.json"


def refusing(failures: Mapping[tuple[str, str], tuple[int, str]]) -> dict[str, int]:
    """Per witness, the logs whose newest checkpoint it refused when last offered, from the
    sealer's ``{(origin, voucher): (failed offers, code)}``."""
    counts: dict[str, int] = {}
    for (_, voucher), (_, code) in failures.items():
        if code in CODES:
            counts[voucher] = counts.get(voucher, 0) + 1
    return dict(sorted(counts.items()))


def write(path: Path, counts: Mapping[str, int]) -> None:
    """Replace the file at once, so a reader never sees half of it."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_bytes(msgspec.json.encode(dict(counts)))
    os.replace(temporary, path)


def read(path: Path) -> dict[str, int]:
    """What the sealing leader last wrote; nothing when it wrote nothing (or not readable)."""
    try:
        return msgspec.json.decode(path.read_bytes(), type=dict[str, int])
    except (OSError, msgspec.DecodeError):
        return {}


def describe(counts: Mapping[str, int]) -> str | None:
    """One sentence for ``/readyz``, or None when no witness refuses anything."""
    if not counts:
        return None
    each = "; ".join(
        f"witness {name!r} refuses the checkpoints of {n} logs" for name, n in counts.items()
    )
    return (
        f"{each}: their bundles stay VERIFICATION INCOMPLETE until it accepts them (a witness"
        " that holds another history of these logs, such as a demo witness of an earlier data"
        " directory, or that does not witness them); the service log names the logs"
        " (voucher.refusing)"
    )
