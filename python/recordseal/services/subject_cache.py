"""A short-lived, bounded cache of derived subject keys, to keep them off the hot path.

Entries are found by the subject id a record names, so a cached subject costs neither the
keyed hash of its index nor a lookup; they live in this process's memory only.

Safe against erasure by construction: the cache only saves the lookup and key derivation;
every append still checks, inside its transaction, that the subject's key exists, so a record
for a subject erased by another process is refused whatever this cache holds. Entries expire
after ``ttl`` seconds, so keys of a subject erased elsewhere leave this process's memory soon.
"""

from __future__ import annotations

import time
from collections import OrderedDict

from recordseal.crypto.vault import SubjectKeys
from recordseal.storage.requests import SubjectClaim


class SubjectKeyCache:
    def __init__(self, size: int = 4096, ttl: float = 30.0) -> None:
        self._size = size
        self._ttl = ttl
        self._entries: OrderedDict[tuple[str, str], tuple[SubjectClaim, SubjectKeys, float]]
        self._entries = OrderedDict()

    def get(self, tenant: str, subject_id: str) -> tuple[SubjectClaim, SubjectKeys] | None:
        entry = self._entries.get((tenant, subject_id))
        if entry is None:
            return None
        claim, keys, expires = entry
        if expires < time.monotonic():
            del self._entries[(tenant, subject_id)]
            return None
        self._entries.move_to_end((tenant, subject_id))
        return claim, keys

    def put(self, tenant: str, subject_id: str, claim: SubjectClaim, keys: SubjectKeys) -> None:
        self._entries[(tenant, subject_id)] = (claim, keys, time.monotonic() + self._ttl)
        self._entries.move_to_end((tenant, subject_id))
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)

    def forget(self, tenant: str, subject_id: str) -> None:
        self._entries.pop((tenant, subject_id), None)
