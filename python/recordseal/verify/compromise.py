"""Compromised keys (docs/bundle.md, "Compromised keys"): rules 3.5, 4.8 and 6.16.

Whoever holds a leaked key can sign anything and date it as they like, the service's own
``ingested_at`` included. A signature by a key compromised at T therefore proves something
only of what a trusted witness had seen by T: the earliest trusted witness time on the
sealing checkpoint, read as check 7 reads it (the end of the witness's second, the bracket's
``not_after``), must be at most T. One trusted witness is enough to show that the record
existed; whether enough of them vouch is check 5's business (the quorum).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from recordseal.tlog import NoteSignature

from .bundle import GapHeader, Header, SignedHeader
from .context import Keyring
from .encoding import format_instant
from .sealing import WitnessTime, end_of_second


@dataclass(frozen=True, slots=True)
class Witnessed:
    """By when a trusted witness had seen the sealing checkpoint (``until``: the end of the
    second of the earliest trusted witness time on it) and who (``by``), or why nothing
    shows it (``missing``)."""

    until: datetime | None = None
    by: str = ""
    missing: str = ""

    @classmethod
    def of(cls, times: Sequence[WitnessTime]) -> Witnessed:
        if not times:
            return cls(missing="no trusted witness time on the sealing checkpoint")
        first = min(times, key=lambda time: time.at)
        return cls(end_of_second(first.at), first.by)

    def shows(self, compromised_at: datetime) -> bool:
        """Whether a trusted witness had seen it by ``compromised_at``."""
        return self.until is not None and self.until <= compromised_at

    def __str__(self) -> str:
        if self.until is None:
            return self.missing
        return f"{self.by} saw it by {format_instant(self.until)}"


#: Why a covered header signed by a compromised key is not vouched for (rule 6.16).
NOT_VOUCHED = Witnessed(
    missing="the bundle's witness time vouches only for the record and the covered headers"
    " its chain links reach"
)


def compromise_problem(
    signer: str, compromised_at: datetime | None, witnessed: Witnessed, what: str
) -> str | None:
    """Why ``signer``'s signature proves nothing of ``what``, or None: its key was not
    compromised, or a trusted witness had seen ``what`` by then."""
    if compromised_at is None or witnessed.shows(compromised_at):
        return None
    when = format_instant(compromised_at)
    return (
        f"signed by {signer} compromised at {when}, and no trusted witness shows {what}"
        f" before then ({witnessed})"
    )


def checkpoint_problem(
    origin: str, signatures: Iterable[NoteSignature], keyring: Keyring, witnessed: Witnessed
) -> str | None:
    """Rule 4.8: why the log's verified ``signatures`` on the sealing checkpoint prove
    nothing, or None when one of them is by a key not compromised before a trusted witness
    saw the checkpoint."""
    problems = []
    for signature in signatures:
        signer = f"log key {signature.name}+{signature.key_id:08x}"
        compromised_at = keyring.compromised_logs.get((origin, signature.name, signature.key_id))
        problem = compromise_problem(signer, compromised_at, witnessed, "the checkpoint")
        if problem is None:
            return None
        problems.append(problem)
    return "; ".join(problems) or None


def after_compromise(compromised_at: datetime | None, witnessed: Witnessed) -> str:
    """What a passing check adds when its key was compromised after the witness saw it."""
    if compromised_at is None:
        return ""
    return f"; compromised at {format_instant(compromised_at)}, after {witnessed}"


def linked_to_record(header: Header, records: Sequence[SignedHeader]) -> set[int]:
    """The seqs of the covered headers the record's chain reaches: its own covered header,
    then each one's predecessor (for a gap header, the seq before its range) while it is
    covered. The record's witness time vouches for these alone (rule 6.16); the links
    themselves are rules 6.6, 6.7 and 6.13."""
    covered = {item.header.seq: item.header for item in records}
    reached: set[int] = set()
    seq = header.seq
    while seq in covered and seq not in reached and seq <= header.seq:
        reached.add(seq)
        found = covered[seq]
        seq = (found.from_seq if isinstance(found, GapHeader) else found.seq) - 1
    return reached
