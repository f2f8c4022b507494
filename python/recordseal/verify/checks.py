"""Checks 1 to 6 of docs/bundle.md section 3, one small function each (check 7, the time
bracket, is ``bracket.py``'s).

Each returns a :class:`CheckResult`: a fault is a ``failed`` result naming it. What the layers
below refuse reaches a check as a :class:`~.errors.Refused` (``errors.refused``, the one
translation): a check reports it among its problems, or lets it end the check, and
:func:`guarded` turns it into the check's ``failed`` result. What several checks read (the
trusted receipts) is gathered once by the helpers next to them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import ParamSpec

from recordseal.chain import chain_leaf, gap_signing_message, stream_genesis
from recordseal.core import commit_field, encode_value, verify_inclusion
from recordseal.crypto.signing import HEADER_CONTEXT, verify_signature
from recordseal.tlog import verify_note

from .aggregate import aggregate_times
from .bundle import Coverage, DisclosedField, GapHeader, Header, Seal
from .compromise import (
    NOT_VOUCHED,
    Witnessed,
    after_compromise,
    checkpoint_problem,
    compromise_problem,
    linked_to_record,
)
from .context import Keyring, Policy
from .encoding import parse_instant
from .errors import BundleError, Refused, attempt, refused
from .outcome_cache import OutcomeCache, remembered
from .paths import path_problem
from .result import CheckResult, failed, passed, unchecked
from .sealing import (
    STALE_DIRECTORY,
    OpenedSeal,
    WitnessTime,
    cosignature_times,
    signed_algorithms,
    timestamp_times,
    unsigned_reasons,
)

SALT_SIZE = 32
#: How far in the future a witness time may lie before it is refused (clock skew).
CLOCK_SKEW = timedelta(minutes=5)
NO_PUBLIC_KEY = "no public key in the supplied directory"
NO_INCLUSION_PROOF = "no chain inclusion proof"
NO_RECEIPTS = "no witness receipts"


P = ParamSpec("P")


def guarded(number: int) -> Callable[[Callable[P, CheckResult]], Callable[P, CheckResult]]:
    """The one place a refusal becomes a check's failure: a check that ends in a
    :class:`~.errors.Refused` (what a layer below refused, in the rule's words) reports it as
    ``failed``. Anything else it raises is a fault of the verifier, which the public entry
    points answer (``boundary.py``)."""

    def wrap(check: Callable[P, CheckResult]) -> Callable[P, CheckResult]:
        @functools.wraps(check)
        def run(*args: P.args, **kwargs: P.kwargs) -> CheckResult:
            try:
                return check(*args, **kwargs)
            except Refused as refusal:
                return failed(number, str(refusal))

        return run

    return wrap


def _joined(problems: Sequence[str], limit: int = 3) -> str:
    text = "; ".join(problems[:limit])
    return text + (f"; and {len(problems) - limit} more" if len(problems) > limit else "")


# --- 1. field commitments ------------------------------------------------------------------


def recompute(fields: Sequence[DisclosedField]) -> tuple[list[bytes], list[str]]:
    """Each field's commitment, and what prevents computing some of them."""
    problems: list[str] = []
    commitments: list[bytes] = []
    seen_paths: set[str] = set()
    seen_indexes: set[int] = set()
    for disclosed in fields:
        label = repr(disclosed.path)
        if disclosed.path in seen_paths:
            problems.append(f"{label} is disclosed twice")
        if disclosed.index in seen_indexes:
            problems.append(f"{label}: index {disclosed.index} is used by another field")
        seen_paths.add(disclosed.path)
        seen_indexes.add(disclosed.index)
        salt = bytes.fromhex(disclosed.salt)
        if (problem := path_problem(disclosed.path)) is not None:
            problems.append(f"{label} is not a committed path: it {problem}")
            continue
        if len(salt) != SALT_SIZE:
            problems.append(f"{label}: the salt has {len(salt)} bytes, not {SALT_SIZE}")
            continue
        encoded = attempt(
            functools.partial(encode_value, disclosed.kind, disclosed.value),
            "{label}: the value is refused as {kind!r} ({code})",
            label=label,
            kind=disclosed.kind,
        )
        if isinstance(encoded, Refused):
            problems.append(str(encoded))
            continue
        commitments.append(commit_field(disclosed.path, salt, encoded))
    return commitments, problems


Recomputed = tuple[list[bytes], list[str]]


@guarded(1)
def check_field_commitments(
    fields: Sequence[DisclosedField], recomputed: Recomputed | None = None
) -> CheckResult:
    _, problems = recompute(fields) if recomputed is None else recomputed
    if problems:
        return failed(1, _joined(problems))
    if not fields:
        return passed(1, "no field disclosed: the bundle proves the header only")
    return passed(1, f"{len(fields)} field{'s' * (len(fields) != 1)} recomputed")


# --- 2. record tree ------------------------------------------------------------------------


@guarded(2)
def check_record_tree(
    header: Header, fields: Sequence[DisclosedField], recomputed: Recomputed | None = None
) -> CheckResult:
    commitments, problems = recompute(fields) if recomputed is None else recomputed
    if problems:
        return unchecked(2, "not run: the field commitments could not be recomputed (check 1)")
    problems = []
    root = bytes.fromhex(header.root)
    for disclosed, commitment in zip(fields, commitments, strict=True):
        proof = [bytes.fromhex(node) for node in disclosed.proof]
        where = f"{disclosed.path!r} at index {disclosed.index}"
        included = attempt(
            functools.partial(
                verify_inclusion, commitment, disclosed.index, header.field_count, proof, root
            ),
            "{where}: {code} ({error})",
            where=where,
        )
        if isinstance(included, Refused):
            problems.append(str(included))
    if problems:
        return failed(2, _joined(problems))
    where = f"root {header.root[:16]}… of {header.field_count} fields"
    if not fields:
        return passed(2, f"no field to place under {where}")
    return passed(2, f"{len(fields)} of {header.field_count} fields verified under {where}")


# --- 3. header signature -------------------------------------------------------------------


def signature_problem(
    header: Header | GapHeader,
    canonical: bytes,
    signature: bytes,
    keyring: Keyring,
    witnessed: Witnessed,
) -> tuple[str, str] | None:
    """(status, reason) when the header's signature or key fails, else None. A record header
    is signed under ``recordseal/header/v1`` by a key valid at its ``ingested_at``, a gap
    header under ``recordseal/gap/v1`` by a key valid at its ``declared_at``; by a key
    compromised at T only when ``witnessed`` shows the header by T."""
    key = keyring.header_keys.get(header.key_id)
    if key is None:
        return "unchecked", f"{NO_PUBLIC_KEY} for key {header.key_id}"
    if isinstance(header, GapHeader):
        message, when, event = gap_signing_message(canonical), header.declared_at, "declared"
    else:
        message, when, event = HEADER_CONTEXT + canonical, header.ingested_at, "ingested"
    if not verify_signature(key.public_key, message, signature):
        return "failed", f"the Ed25519 signature does not verify with key {header.key_id}"
    moment = parse_instant(when)
    if moment is None:  # the struct's own check makes this unreachable after decoding
        return "failed", f"{when!r} is not an RFC 3339 date-time"
    if (problem := key.problem_at(moment)) is not None:
        what = "the gap was" if isinstance(header, GapHeader) else "the record was"
        return "failed", f"{problem}, and {what} {event} at {when}"
    what = "the gap header" if isinstance(header, GapHeader) else "the record"
    signer = f"key {header.key_id}"
    if (problem := compromise_problem(signer, key.compromised_at, witnessed, what)) is not None:
        return "failed", problem
    return None


@guarded(3)
def check_header_signature(
    header: Header,
    canonical: bytes,
    signature: bytes,
    keyring: Keyring | None,
    no_keys: str,
    witnessed: Witnessed,
) -> CheckResult:
    """``witnessed``: the record's trusted witness time, only when check 4 passed."""
    if keyring is None:
        return unchecked(3, f"{NO_PUBLIC_KEY}: {no_keys}")
    problem = signature_problem(header, canonical, signature, keyring, witnessed)
    if problem is None:
        detail = f"signed by key {header.key_id}, valid at {header.ingested_at}"
        compromised_at = keyring.header_keys[header.key_id].compromised_at
        return passed(3, detail + after_compromise(compromised_at, witnessed))
    status, reason = problem
    return (
        unchecked(3, f"{reason}: {STALE_DIRECTORY}") if status == "unchecked" else failed(3, reason)
    )


# --- 4. sealed batch -----------------------------------------------------------------------


@guarded(4)
def check_sealed_batch(
    canonical: bytes,
    seal: Seal | None,
    opened: OpenedSeal | BundleError | None,
    keyring: Keyring | None,
    witnessed: Witnessed,
    cache: OutcomeCache | None = None,
    required: Sequence[str] = ("Ed25519",),
    no_keys: str = "no key directory supplied",
) -> CheckResult:
    """``witnessed``: the trusted witness time on the sealing checkpoint (rule 4.8);
    ``required``: the algorithms of the log signatures the policy requires (rule 4.9);
    ``no_keys``: why there is no keyring, when there is none (as check 3 says it)."""
    if seal is None or opened is None:
        return unchecked(4, f"{NO_INCLUSION_PROOF}: the record is not in a sealed batch yet")
    if isinstance(opened, BundleError):
        return failed(4, str(opened))
    if keyring is None:  # no directory to be stale: nothing to export again
        return unchecked(4, f"{NO_INCLUSION_PROOF} can be checked: {no_keys}")
    verifiers = keyring.logs.get(seal.log, ())
    if not verifiers:
        missing = f"no log key for {seal.log!r} in the directory: {STALE_DIRECTORY}"
        return unchecked(4, f"{NO_INCLUSION_PROOF} can be checked: {missing}")
    checkpoint = opened.checkpoint
    if checkpoint.origin != seal.log:
        return failed(4, f"the checkpoint is of {checkpoint.origin!r}, not of {seal.log!r}")
    note = opened.note
    with refused("the checkpoint's log signature is refused ({code}): {error}"):
        verified = remembered(
            cache,
            "sealing",
            (seal.log, opened.proof.checkpoint),
            lambda: verify_note(note, verifiers),
        )
    index = opened.proof.index
    if index < 1:
        return failed(4, "index 0 of a log is its tenant genesis root, never a record")
    with refused("the header is not entry {index} of the checkpoint: {error}", index=index):
        verify_inclusion(
            canonical, index, checkpoint.size, list(opened.proof.hashes), checkpoint.root_hash
        )
    if (problem := checkpoint_problem(seal.log, verified.verified, keyring, witnessed)) is not None:
        return failed(4, problem)
    signed = signed_algorithms(verified.verified, verifiers)
    if absent := [algorithm for algorithm in required if algorithm not in signed]:  # rule 4.9
        reasons = unsigned_reasons(seal.log, absent, verifiers)
        return unchecked(
            4,
            f"{NO_INCLUSION_PROOF} can be checked as the trust store requires"
            f" ({' and '.join(absent)} signatures): {reasons}",
        )
    return passed(
        4,
        f"entry {index} of {seal.log} in its checkpoint of size {checkpoint.size}"
        f" (signed with {' and '.join(sorted(signed))})",
    )


# --- 5. witness receipts -------------------------------------------------------------------


@dataclass
class Receipts:
    """Trusted witness times on the sealing checkpoint (its own receipts, and those of the
    aggregate checkpoint that includes it), the trusted receipts that fail, and why the
    aggregate's could not be checked (``aggregate_missing``)."""

    times: list[WitnessTime] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    aggregate_missing: str = ""
    aggregate_where: str = ""


def gather_receipts(
    seal: Seal | None,
    opened: OpenedSeal | BundleError | None,
    policy: Policy | None,
    now: datetime,
    cache: OutcomeCache | None = None,
    keyring: Keyring | None = None,
) -> Receipts | None:
    """None when there is nothing to check (no seal, no parsed proof, or no trust store)."""
    if seal is None or not isinstance(opened, OpenedSeal) or policy is None:
        return None
    latest = now + CLOCK_SKEW
    text, root = opened.note.text, opened.checkpoint.root_hash
    cosigned, problems = cosignature_times(
        text, opened.note.signatures, policy, int(latest.timestamp()), cache
    )
    stamped, token_problems = timestamp_times(seal.timestamps, root, policy, latest, cache)
    through = aggregate_times(seal, opened, keyring, policy, int(latest.timestamp()), cache)
    return Receipts(
        cosigned + stamped + through.times,
        problems + token_problems + through.problems,
        through.missing,
        through.where,
    )


@guarded(5)
def check_witness_receipts(
    seal: Seal | None,
    opened: OpenedSeal | BundleError | None,
    policy: Policy | None,
    receipts: Receipts | None,
) -> CheckResult:
    if seal is None or opened is None:
        return unchecked(5, f"{NO_RECEIPTS}: the record is not sealed yet")
    if isinstance(opened, BundleError):
        return unchecked(5, "not run: the seal's proof does not parse (check 4)")
    if policy is None or receipts is None:
        return unchecked(5, f"{NO_RECEIPTS} can be checked: no trust store supplied")
    if receipts.problems:
        return failed(5, _joined(receipts.problems))
    vouching = sorted({time.by for time in receipts.times})
    # Rule 5.9: an aggregate path without its log key adds nothing, and says so.
    aside = f" [{receipts.aggregate_missing}]" if receipts.aggregate_missing else ""
    through = f", through {receipts.aggregate_where}" if receipts.aggregate_where else ""
    if not vouching:
        detail = f"{NO_RECEIPTS} from a trusted witness (quorum not met: 0 of {policy.quorum})"
        return unchecked(5, detail + aside)
    if len(vouching) < policy.quorum:
        detail = f"quorum not met: {len(vouching)} of {policy.quorum} ({', '.join(vouching)})"
        return unchecked(5, detail + through + aside)
    many = len(vouching) != 1
    detail = f"{len(vouching)} trusted witness{'es vouch' if many else ' vouches'}"
    return passed(5, f"{detail} (quorum {policy.quorum}): {', '.join(vouching)}{through}{aside}")


# --- 6. sequence continuity ----------------------------------------------------------------


def _gaps(low: int, high: int, present: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans of ``low..high`` missing from the ``present`` spans (sorted by their first
    seq), without listing them all."""
    gaps: list[tuple[int, int]] = []
    expected = low
    for first, last in present:
        if first > expected:
            gaps.append((expected, min(first - 1, high)))
        expected = max(expected, last + 1)
    if expected <= high:
        gaps.append((expected, high))
    return [(first, last) for first, last in gaps if first <= last]


def _missing(gaps: Sequence[tuple[int, int]]) -> str:
    count = sum(last - first + 1 for first, last in gaps)
    spans = [str(a) if a == b else f"{a}-{b}" for a, b in gaps[:5]]
    listed = ", ".join(spans) + (f" and {len(gaps) - 5} more spans" if len(gaps) > 5 else "")
    return f"sequence{'s' * (count != 1)} {listed} missing from the claimed window"


def declared_lost(first: int, last: int, gap: GapHeader) -> str:
    """``seqs 3\u20131002 declared lost on 2026-11-26 (store_rolled_back)``, an en dash
    between the seqs: the part of a gap's range inside the window, the UTC date of
    ``declared_at``, the reason."""
    moment = parse_instant(gap.declared_at)
    day = gap.declared_at[:10] if moment is None else moment.date().isoformat()
    seqs = f"seq {first}" if first == last else f"seqs {first}\u2013{last}"
    return f"{seqs} declared lost on {day} ({gap.reason})"


@guarded(6)
def check_sequence_continuity(
    header: Header,
    canonical: bytes,
    coverage: Coverage | None,
    keyring: Keyring | None,
    witnessed: Witnessed,
) -> CheckResult:
    """``witnessed``: the record's trusted witness time, only when check 4 passed."""
    if coverage is None:
        return passed(6, "no window claimed")
    low, high = coverage.from_seq, coverage.to_seq
    if low > high:
        return failed(6, f"the claimed window {low}..{high} is empty")
    if not low <= header.seq <= high:
        return failed(6, f"the record (seq {header.seq}) is outside the claimed window")
    problems: list[str] = []
    keyless: list[str] = []
    present: list[int] = []
    gaps: list[GapHeader] = []
    leaves: dict[int, bytes] = {}  # chain leaves of the covered headers, by seq
    last_seq: int | None = None
    vouched = linked_to_record(header, coverage.records)
    for item in coverage.records:
        covered, where = item.header, f"seq {item.header.seq}"
        covered_canonical = covered.canonical()
        if (covered.tenant, covered.stream) != (header.tenant, header.stream):
            problems.append(f"{where} is a header of another stream")
        if not low <= covered.seq <= high:
            problems.append(f"{where} lies outside the claimed window")
        if last_seq is not None and covered.seq <= last_seq:
            problems.append(f"{where} comes after seq {last_seq}: headers out of order")
        if covered.seq == header.seq and covered_canonical != canonical:
            problems.append(f"{where} is not the record's own header")
        # A record header links to the one before it; a gap header to the one before the
        # range it declares lost (rule 6.13).
        linked = covered.seq - 1
        if isinstance(covered, GapHeader):
            gaps.append(covered)
            linked = covered.from_seq - 1
            if not covered.from_seq <= covered.to_seq == covered.seq - 1:
                problems.append(
                    f"{where} declares seqs {covered.from_seq}..{covered.to_seq} lost,"
                    " not a range that ends just before it"
                )
        expected_prev = stream_genesis(covered.tenant, covered.stream) if linked == 0 else None
        expected_prev = leaves.get(linked, expected_prev)
        if expected_prev is not None and covered.prev != expected_prev.hex():
            to = f"the header at seq {linked}" if linked else "the stream genesis"
            problems.append(f"{where} does not link to {to} (prev)")
        if keyring is not None:
            signature = bytes.fromhex(item.signature)
            vouching = witnessed if covered.seq in vouched else NOT_VOUCHED
            problem = signature_problem(covered, covered_canonical, signature, keyring, vouching)
            if problem is not None:
                status, reason = problem
                (keyless if status == "unchecked" else problems).append(f"{where}: {reason}")
        present.append(covered.seq)
        leaves[covered.seq] = chain_leaf(covered_canonical)
        last_seq = covered.seq
    for gap in gaps:
        inside = [seq for seq in (*present, header.seq) if gap.from_seq <= seq <= gap.to_seq]
        if inside:
            problems.append(f"seq {inside[0]} is present, yet declared lost by seq {gap.seq}")
    if problems:
        return failed(6, _joined(problems))
    lost = [(max(gap.from_seq, low), gap.to_seq, gap) for gap in gaps if gap.to_seq >= low]
    spans = sorted([(seq, seq) for seq in present] + [(a, b) for a, b, _ in lost])
    missing = _gaps(low, high, spans)
    reasons = [_missing(missing)] if missing else []
    reasons += [declared_lost(first, last, gap) for first, last, gap in lost]
    if keyring is None:
        reasons.append(f"the {len(present)} headers' signatures need the key directory")
    reasons += keyless
    if reasons:
        return unchecked(6, _joined(reasons))
    return passed(6, f"seq {low}..{high}: {len(present)} headers, each signed and linked")
