"""Check 7: the time bracket (docs/bundle.md, "7. Verdict and time bracket").

``not_before`` is the latest trusted witness time on ``previous`` (which does not include the
record), else the header's ``ingested_at``, vouched for by the service alone. ``not_after``
comes from the earliest trusted witness time on the sealing checkpoint (which includes it).

Witness times are whole seconds: a cosignature's timestamp is, and a token's ``genTime`` is
read at the same resolution. A witness that says 04:25:58 signed before 04:25:59, so the
upper bound is the end of the witness's second; the lower bound keeps its own resolution.
Compared any other way, a record ingested at 04:25:58.03 and cosigned in the same second
would get a bracket whose end precedes its start. A lower bound still later than the upper
one (clocks that disagree by more than that second) bounds nothing: ``not_before`` is then
null and the check unchecked (rule 7.3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from .bundle import Header, Seal
from .checks import CLOCK_SKEW, guarded
from .context import Keyring, Policy
from .encoding import format_instant, parse_instant
from .errors import BundleError
from .outcome_cache import OutcomeCache
from .result import CheckResult, TimeBracket, passed, unchecked
from .sealing import OpenedSeal, WitnessTime, end_of_second, previous_times

HOSTED_INGEST = "hosted-ingest"


@dataclass(frozen=True, slots=True)
class Bracket:
    """The time bracket, the witness time its upper bound comes from, and why its lower
    bound was dropped (empty when it was not)."""

    bracket: TimeBracket
    upper: WitnessTime | None
    inverted: str


def bracket_of(
    header: Header,
    included: bool,
    sealing_times: Sequence[WitnessTime],
    previous: Sequence[WitnessTime],
) -> Bracket:
    """The bracket of a record; the upper bound only when check 4 proved it ``included``."""
    lower_at = parse_instant(header.ingested_at)
    bracket = TimeBracket(not_before=header.ingested_at, not_before_by=HOSTED_INGEST)
    lower = f"the service's ingested_at {header.ingested_at}"
    if previous:
        latest = max(previous, key=lambda time: time.at)
        lower_at = latest.at
        bracket.not_before, bracket.not_before_by = format_instant(latest.at), latest.by
        lower = f"{latest.by}'s time on the previous checkpoint {bracket.not_before}"
    if not (included and sealing_times):
        return Bracket(bracket, None, "")
    first = min(sealing_times, key=lambda time: time.at)
    upper_at = end_of_second(first.at)
    bracket.not_after, bracket.not_after_by = format_instant(upper_at), first.by
    if lower_at is not None and lower_at > upper_at:
        bracket.not_before = bracket.not_before_by = None
        return Bracket(bracket, first, f"{lower} is later than the upper bound")
    return Bracket(bracket, first, "")


@guarded(7)
def check_time_bracket(found: Bracket, included: bool, previous_reason: str) -> CheckResult:
    bracket = found.bracket
    if found.inverted:
        lower = f"no lower bound: {found.inverted} (the clocks disagree)"
    else:
        lower = f"not before {bracket.not_before} ({bracket.not_before_by})"
        if bracket.not_before_by == HOSTED_INGEST and previous_reason:
            lower += f" [{previous_reason}]"
    if not included:
        return unchecked(7, f"{lower}; no trusted upper bound: the seal is not verified")
    if found.upper is None:
        return unchecked(7, f"{lower}; no trusted witness time on the sealing checkpoint")
    upper = found.upper
    second = format_instant(upper.at.replace(microsecond=0))
    detail = f"{lower}; not after {bracket.not_after} ({upper.by}: {upper.how} in the second"
    detail += f" from {second})"
    return unchecked(7, detail) if found.inverted else passed(7, detail)


def previous_bound(
    seal: Seal | None,
    opened: OpenedSeal | BundleError | None,
    keyring: Keyring | None,
    policy: Policy | None,
    now: datetime,
    cache: OutcomeCache | None = None,
) -> tuple[list[WitnessTime], str]:
    """Trusted times on ``seal.previous`` (see :func:`sealing.previous_times`).

    Call it only when check 4 passed: the entry's index is then proven, so a checkpoint
    smaller than it provably predates the record.
    """
    if seal is None or not isinstance(opened, OpenedSeal):
        return [], ""
    verifiers = keyring.logs.get(seal.log, ()) if keyring is not None else ()
    if not verifiers:
        return [], "no log key to check the previous checkpoint"
    latest = int((now + CLOCK_SKEW).timestamp())
    return previous_times(seal, opened, verifiers, policy, latest, cache)
