"""Which checkpoint to offer to which witness or time-stamping authority, and when.

The newest checkpoint of every log is offered to every configured voucher (witness or
authority) until each has vouched for it: at start, when a log gets a new checkpoint, and,
after a failure, again with exponential backoff. New entries or not: a quiet log's newest
checkpoint is cosigned as soon as a witness is configured and reachable.

A voucher that keeps failing is reported once per change of state (a new failure code, or
its recovery), never once per attempt.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from recordseal.storage.rows import CheckpointRow, LatestCheckpoint, SealedBatch

#: Seconds before the first retry after a failed offer; doubled per failure up to the cap.
FIRST_DELAY = 1.0
MAX_DELAY = 60.0


@dataclass(frozen=True, slots=True)
class Head:
    """A log's newest checkpoint: what is offered."""

    origin: str
    size: int
    root: bytes
    note: str

    @classmethod
    def of(cls, checkpoint: SealedBatch | CheckpointRow) -> Head:
        return cls(checkpoint.origin, checkpoint.size, checkpoint.root, checkpoint.note)


@dataclass(slots=True)
class _Health:
    """How offers of one log's checkpoints to one voucher have gone lately."""

    failures: int = 0
    code: str | None = None  # the last failure's code; None while offers succeed
    retry_at: float = 0.0
    in_flight: bool = False


@dataclass(slots=True)
class _Log:
    head: Head
    pending: set[str] = field(default_factory=set)  # vouchers that have not vouched for it


@dataclass(frozen=True, slots=True)
class Change:
    """A change of a voucher's state worth one log line: ``failing`` with ``code``, or
    recovered (``code`` None) after ``failures`` failed offers."""

    origin: str
    voucher: str
    size: int
    code: str | None
    failures: int
    retry_in: float = 0.0


class Offers:
    """The offering state of one sealing leader (rebuilt from the store when it leads)."""

    def __init__(
        self,
        vouchers: Sequence[str],
        *,
        first_delay: float = FIRST_DELAY,
        max_delay: float = MAX_DELAY,
        clock: Callable[[], float] = time.monotonic,
        scoped: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """``vouchers`` vouch for every log but those ``scoped`` names: each of these is
        offered to its own vouchers instead (the aggregate log to its public witnesses)."""
        self.vouchers = tuple(vouchers)
        self._scoped = {origin: tuple(names) for origin, names in (scoped or {}).items()}
        self._first_delay = first_delay
        self._max_delay = max_delay
        self._clock = clock
        self._logs: dict[str, _Log] = {}
        self._health: dict[tuple[str, str], _Health] = {}

    def load(self, latest: Iterable[LatestCheckpoint]) -> None:
        """Start from the stored newest checkpoints and the receipts they already carry."""
        self._logs = {
            item.checkpoint.origin: _Log(
                Head.of(item.checkpoint),
                set(self.vouchers_of(item.checkpoint.origin)) - item.vouched_by,
            )
            for item in latest
        }

    def vouchers_of(self, origin: str) -> tuple[str, ...]:
        """Who is offered the checkpoints of ``origin``."""
        return self._scoped.get(origin, self.vouchers)

    def sealed(self, checkpoint: SealedBatch | CheckpointRow) -> None:
        """A log has a new newest checkpoint: every voucher is to be offered it."""
        current = self._logs.get(checkpoint.origin)
        if current is None or checkpoint.size > current.head.size:
            self._logs[checkpoint.origin] = _Log(
                Head.of(checkpoint), set(self.vouchers_of(checkpoint.origin))
            )

    def due(self) -> list[tuple[Head, str]]:
        """The offers to make now (each marked in flight until its outcome is reported)."""
        now = self._clock()
        offers = []
        for origin, log in self._logs.items():
            for voucher in sorted(log.pending):
                health = self._health.setdefault((origin, voucher), _Health())
                if not health.in_flight and health.retry_at <= now:
                    health.in_flight = True
                    offers.append((log.head, voucher))
        return offers

    def pending(self) -> dict[str, set[str]]:
        """Per log, the vouchers its newest checkpoint still waits for."""
        return {origin: set(log.pending) for origin, log in self._logs.items() if log.pending}

    def failures(self) -> dict[tuple[str, str], tuple[int, str]]:
        """Per (origin, voucher) failing now: failed offers in a row and the last code."""
        return {
            key: (health.failures, health.code)
            for key, health in self._health.items()
            if health.code is not None
        }

    def vouched(self, head: Head, voucher: str) -> Change | None:
        """``voucher`` vouched for ``head``; a Change when it had been failing."""
        log = self._logs.get(head.origin)
        if log is not None and log.head.size == head.size:
            log.pending.discard(voucher)
        health = self._health.setdefault((head.origin, voucher), _Health())
        change = None
        if health.code is not None:
            change = Change(head.origin, voucher, head.size, None, health.failures)
        self._health[(head.origin, voucher)] = _Health()
        return change

    def failed(self, head: Head, voucher: str, code: str) -> Change | None:
        """An offer failed: retry after a backoff; a Change when the failure is new."""
        health = self._health.setdefault((head.origin, voucher), _Health())
        health.in_flight = False
        health.failures += 1
        delay = min(self._max_delay, self._first_delay * 2 ** (health.failures - 1))
        health.retry_at = self._clock() + delay
        if health.code == code:
            return None
        health.code = code
        return Change(head.origin, voucher, head.size, code, health.failures, delay)
