"""A short-lived, bounded cache of derived subject keys, to keep them off the hot path.

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
        self._entries: OrderedDict[tuple[str, bytes], tuple[SubjectClaim, SubjectKeys, float]]
        self._entries = OrderedDict()

    def get(self, tenant: str, index: bytes) -> tuple[SubjectClaim, SubjectKeys] | None:
        entry = self._entries.get((tenant, index))
        if entry is None:
            return None
        claim, keys, expires = entry
        if expires < time.monotonic():
            del self._entries[(tenant, index)]
            return None
        self._entries.move_to_end((tenant, index))
        return claim, keys

    def put(self, tenant: str, index: bytes, claim: SubjectClaim, keys: SubjectKeys) -> None:
        self._entries[(tenant, index)] = (claim, keys, time.monotonic() + self._ttl)
        self._entries.move_to_end((tenant, index))
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)

    def forget(self, tenant: str, index: bytes) -> None:
        self._entries.pop((tenant, index), None)
