"""The deployment's aggregate log (docs/tlog.md, "The aggregate log"): one RFC 6962 log whose
entries commit to the tenant logs' checkpoints, hashes only.

    entry = SHA-256("recordseal-aggregate-entry-v1" ‖ le32(len(origin)) ‖ origin
                    ‖ le64(size) ‖ root)

``origin`` the tenant log's origin as UTF-8 bytes, ``size`` its checkpoint's tree size,
``root`` the checkpoint's 32-byte root; the entry's leaf hash is ``SHA-256(0x00 ‖ entry)``.
No tenant name is readable in an entry: the root is a 256-bit hash, so an entry cannot be
traced to its log without the checkpoint. The aggregate has no genesis leaf: entry 0 is the
first tenant checkpoint it took.

Pure hashing, written once for every backend (as ``merkle.log``) and imported by the offline
verifier.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from recordseal.core import leaf_hash
from recordseal.merkle import tree
from recordseal.merkle.log import grow_nodes

#: A new derivation needs a new tag.
AGGREGATE_ENTRY_TAG = b"recordseal-aggregate-entry-v1"
#: Tenant checkpoints taken into the aggregate by one of its checkpoints at most: a larger
#: backlog (the history of a store upgraded to the aggregate) takes several seconds.
AGGREGATE_LIMIT = 16384


def aggregate_entry(origin: str, size: int, root: bytes) -> bytes:
    """The aggregate's entry for the checkpoint (``size``, ``root``) of the log ``origin``."""
    if len(root) != 32:
        raise ValueError("a checkpoint root is 32 bytes")
    name = origin.encode()
    return hashlib.sha256(
        AGGREGATE_ENTRY_TAG + struct.pack("<I", len(name)) + name + struct.pack("<Q", size) + root
    ).digest()


@dataclass(frozen=True, slots=True)
class Pending:
    """A tenant checkpoint not yet in the aggregate: its log's row id, origin, size, root."""

    log_id: int
    origin: str
    size: int
    root: bytes


@dataclass(frozen=True, slots=True)
class AggregateGrowth:
    """What one aggregate checkpoint adds: its entries by position (log id, size, entry),
    each log's largest checkpoint now taken, the new nodes, size and root."""

    entries: list[tuple[int, int, int, bytes]]  # (position, log id, size, entry)
    taken: dict[int, int]  # log id -> its largest checkpoint size in the aggregate
    size: int
    root: bytes
    nodes: dict[tree.NodeId, bytes]

    @property
    def first_index(self) -> int:
        return self.entries[0][0]


def grow_aggregate(
    size: int, pending: Sequence[Pending], stored: Mapping[tree.NodeId, bytes]
) -> AggregateGrowth | None:
    """Append the entries of ``pending`` (in that order) to an aggregate of ``size`` entries
    whose frontier nodes are ``stored``; None when nothing is pending."""
    if not pending:
        return None
    entries = [
        (size + offset, p.log_id, p.size, aggregate_entry(p.origin, p.size, p.root))
        for offset, p in enumerate(pending)
    ]
    taken: dict[int, int] = {}
    for p in pending:
        taken[p.log_id] = max(taken.get(p.log_id, 0), p.size)
    nodes, root = grow_nodes(size, [leaf_hash(entry) for *_, entry in entries], stored)
    return AggregateGrowth(entries, taken, size + len(entries), root, nodes)
