"""What a :class:`~recordseal.verify.Verifier` remembers between bundles.

Bundles of one log share their checkpoints: the sealing checkpoint (every bundle proves
against the log's freshest witnessed one), the ``previous`` ones, and their cosignatures and
time-stamp tokens. Their parsing and verification depend only on their exact bytes (and on the
verifier's keys, fixed for its life), so each is done once and its outcome, success or
refusal, remembered by those bytes. Anything that depends on the clock (a witness time in the
future) is decided after, on every bundle.

A cache holds at most ``size`` outcomes per kind; the oldest goes first.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

from .errors import BELOW, Below, VerificationError

T = TypeVar("T")


class _Raised:
    """A remembered refusal."""

    __slots__ = ("error",)

    def __init__(self, error: Below | VerificationError) -> None:
        self.error = error


class OutcomeCache:
    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._tables: dict[str, dict[Hashable, object]] = {}

    def __call__(self, kind: str, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``'s outcome for ``key``: computed once, then remembered; a
        refusal it raises (an error of the layers below, or the verifier's own) is remembered
        and raised again."""
        table = self._tables.setdefault(kind, {})
        try:
            found = table[key]
        except KeyError:
            try:
                found = compute()
            except (*BELOW, VerificationError) as error:  # remembered, not translated
                found = _Raised(error)
            if len(table) >= self._size:
                del table[next(iter(table))]
            table[key] = found
        if isinstance(found, _Raised):
            raise found.error
        return found  # type: ignore[return-value]


def remembered(cache: OutcomeCache | None, kind: str, key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()`` through ``cache``, or directly without one."""
    return compute() if cache is None else cache(kind, key, compute)
