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
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from recordseal.core import leaf_hash
from recordseal.merkle import tree
from recordseal.merkle.log import grow_nodes

#: A new derivation needs a new tag.
AGGREGATE_ENTRY_TAG = b"recordseal-aggregate-entry-v1"
#: Tenant checkpoints taken into the aggregate by one of its checkpoints at most: a larger
#: backlog (the history of a store upgraded to the aggregate) takes several seconds.
AGGREGATE_LIMIT = 16384

#: How the store names a tenant log (its row's key): opaque here.
K = TypeVar("K", bound=Hashable)


def aggregate_entry(origin: str, size: int, root: bytes) -> bytes:
    """The aggregate's entry for the checkpoint (``size``, ``root``) of the log ``origin``."""
    if len(root) != 32:
        raise ValueError("a checkpoint root is 32 bytes")
    name = origin.encode()
    return hashlib.sha256(
        AGGREGATE_ENTRY_TAG + struct.pack("<I", len(name)) + name + struct.pack("<Q", size) + root
    ).digest()


@dataclass(frozen=True, slots=True)
class Pending(Generic[K]):
    """A tenant checkpoint not yet in the aggregate: its log's key in the store, origin,
    size, root."""

    log: K
    origin: str
    size: int
    root: bytes


@dataclass(frozen=True, slots=True)
class AggregateGrowth(Generic[K]):
    """What one aggregate checkpoint adds: its entries by position (log key, size, entry),
    each log's largest checkpoint now taken, the new nodes, size and root."""

    entries: list[tuple[int, K, int, bytes]]  # (position, log key, size, entry)
    taken: dict[K, int]  # log key -> its largest checkpoint size in the aggregate
    size: int
    root: bytes
    nodes: dict[tree.NodeId, bytes]

    @property
    def first_index(self) -> int:
        return self.entries[0][0]


def grow_aggregate(
    size: int, pending: Sequence[Pending[K]], stored: Mapping[tree.NodeId, bytes]
) -> AggregateGrowth[K] | None:
    """Append the entries of ``pending`` (in that order) to an aggregate of ``size`` entries
    whose frontier nodes are ``stored``; None when nothing is pending."""
    if not pending:
        return None
    entries = [
        (size + offset, p.log, p.size, aggregate_entry(p.origin, p.size, p.root))
        for offset, p in enumerate(pending)
    ]
    taken: dict[K, int] = {}
    for p in pending:
        taken[p.log] = max(taken.get(p.log, 0), p.size)
    nodes, root = grow_nodes(size, [leaf_hash(entry) for *_, entry in entries], stored)
    return AggregateGrowth(entries, taken, size + len(entries), root, nodes)
