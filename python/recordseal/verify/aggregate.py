"""The seal's path into the aggregate log (docs/bundle.md, check 5, rules 5.7 to 5.14): the
trusted witness times on a witnessed aggregate checkpoint that includes the sealing checkpoint.

A seal's ``aggregate`` is a c2sp.org/tlog-proof@v1 whose entry is the sealing checkpoint's
aggregate entry (``merkle.aggregate``: a hash of its origin, size and root) and whose
checkpoint is the deployment's aggregate log's, signed by its log key and cosigned by the
witnesses that watch the aggregate. What they vouch for it, they vouch for the sealing
checkpoint it includes: their times count as witness times on the sealing checkpoint
(checks 5 and 7, rules 3.5, 4.8 and 6.16).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial

import msgspec

from recordseal.core import verify_inclusion
from recordseal.merkle.aggregate import aggregate_entry
from recordseal.tlog import verify_note

from .bundle import Seal
from .compromise import Witnessed, checkpoint_problem
from .context import Keyring, Policy
from .errors import BundleError, Refused, attempt
from .outcome_cache import OutcomeCache, remembered
from .sealing import (
    STALE_DIRECTORY,
    OpenedSeal,
    WitnessTime,
    cosignature_times,
    open_tlog_proof,
    signed_algorithms,
    unsigned_reasons,
)

#: How a witness time on the aggregate checkpoint reads in check 7's detail.
HOW = "cosigned the aggregate checkpoint"


@dataclass
class AggregateTimes:
    """Trusted witness times on the seal's aggregate checkpoint (``times``), what is false in
    the path (``problems``: check 5 fails), and why it could not be checked (``missing``)."""

    times: list[WitnessTime] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    missing: str = ""
    where: str = ""  # "the aggregate log <origin> at size <n>", once its path verified


def aggregate_times(
    seal: Seal,
    opened: OpenedSeal,
    keyring: Keyring | None,
    policy: Policy,
    max_timestamp: int,
    cache: OutcomeCache | None = None,
) -> AggregateTimes:
    """Rules 5.7 to 5.14 over ``seal.aggregate`` (nothing when the seal has none)."""
    if seal.aggregate is msgspec.UNSET:
        return AggregateTimes()
    try:
        path = open_tlog_proof(seal.aggregate.proof, cache)
    except BundleError as error:
        reason = str(error).removeprefix(f"{error.what}: ")
        return AggregateTimes(problems=[f"the aggregate proof is malformed: {reason}"])
    origin = path.checkpoint.origin
    if not seal.log.startswith(origin + "/"):
        return AggregateTimes(
            problems=[f"the aggregate log {origin!r} is not the service of {seal.log!r}"]
        )
    verifiers = keyring.logs.get(origin, ()) if keyring is not None else ()
    if keyring is None or not verifiers:
        return AggregateTimes(
            missing=f"no log key for the aggregate log {origin!r} in the directory:"
            f" {STALE_DIRECTORY}"
        )
    note = path.note
    verified = attempt(
        partial(
            remembered,
            cache,
            "sealing",
            (origin, path.proof.checkpoint),
            lambda: verify_note(note, verifiers),
        ),
        "the aggregate checkpoint's log signature is refused ({code}): {error}",
    )
    if isinstance(verified, Refused):
        return AggregateTimes(problems=[str(verified)])
    sealing, aggregate = opened.checkpoint, path.checkpoint
    entry = aggregate_entry(sealing.origin, sealing.size, sealing.root_hash)
    index = path.proof.index
    included = attempt(
        partial(
            verify_inclusion,
            entry,
            index,
            aggregate.size,
            list(path.proof.hashes),
            aggregate.root_hash,
        ),
        "the sealing checkpoint is not entry {index} of the aggregate checkpoint: {error}",
        index=index,
    )
    if isinstance(included, Refused):
        return AggregateTimes(problems=[str(included)])
    times, problems = cosignature_times(note.text, note.signatures, policy, max_timestamp, cache)
    times = [replace(time, how=HOW) for time in times]
    if problems:
        return AggregateTimes(problems=[f"on the aggregate checkpoint, {p}" for p in problems])
    compromised = checkpoint_problem(origin, verified.verified, keyring, Witnessed.of(times))
    if compromised is not None:
        return AggregateTimes(problems=[f"the aggregate checkpoint is {compromised}"])
    # Rule 5.14: signed as the trust store requires, as the sealing checkpoint (rule 4.9).
    signed = signed_algorithms(verified.verified, verifiers)
    if absent := [a for a in policy.checkpoint_signatures if a not in signed]:
        return AggregateTimes(
            missing="the aggregate checkpoint is not signed as the trust store requires"
            f" ({' and '.join(absent)} signatures): {unsigned_reasons(origin, absent, verifiers)}"
        )
    return AggregateTimes(times, where=f"the aggregate log {origin} at size {aggregate.size}")
