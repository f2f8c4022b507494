"""What the seal proves: the opened tlog proof, and the trusted witness times on checkpoints.

A *witness time* is a trusted party's statement about a checkpoint at a moment: a valid
cosignature by a trust-store witness (its timestamp) or a valid RFC 3161 token from a listed
authority (its ``genTime``). A cosignature dated 0 states no time (c2sp.org/tlog-cosignature):
it is checked like any other, and vouches for nothing (rule 5.6).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from recordseal.core import verify_consistency
from recordseal.tlog import (
    Checkpoint,
    Cosignature,
    CosignerKey,
    LogVerifier,
    Note,
    NoteSignature,
    algorithm_of,
    open_checkpoint,
    parse_note,
)
from recordseal.tlog.tsa import verify_token

from .bundle import Seal, TimestampReceipt
from .context import Policy
from .encoding import b64decode
from .errors import Refused, attempt, refused
from .outcome_cache import OutcomeCache, remembered
from .tlogproof import TlogProof, parse_tlog_proof

#: Said of a key or log the directory lacks: the usual cause is a directory older than it.
STALE_DIRECTORY = (
    "if it is newer than the directory, export the directory again (recordseal keys export)"
    " or use the service's published one (GET /v1/keys)"
)


@dataclass(frozen=True, slots=True)
class WitnessTime:
    """``by`` (a trust-store name) vouched for a checkpoint at ``at``."""

    by: str
    at: datetime
    how: str  # "cosigned" or "time-stamped"


def end_of_second(moment: datetime) -> datetime:
    """The first instant after the whole second ``moment`` falls in: a witness time is a
    whole second, so this is the upper bound it gives (check 7's ``not_after``)."""
    return moment.replace(microsecond=0) + timedelta(seconds=1)


@dataclass(frozen=True, slots=True)
class OpenedSeal:
    """The seal's tlog proof and its checkpoint, parsed (signatures not yet verified)."""

    proof: TlogProof
    note: Note
    checkpoint: Checkpoint


def open_seal(seal: Seal, cache: OutcomeCache | None = None) -> OpenedSeal:
    """Parse ``seal.proof`` and the checkpoint inside; :class:`BundleError` when malformed."""
    return open_tlog_proof(seal.proof, cache)


def open_tlog_proof(text: str, cache: OutcomeCache | None = None) -> OpenedSeal:
    """Parse a tlog proof and the checkpoint inside (the seal's, or its path into the
    aggregate log); :class:`BundleError` when malformed."""
    proof = parse_tlog_proof(text)
    note, checkpoint = remembered(
        cache, "checkpoint", proof.checkpoint, lambda: _checkpoint_of(proof.checkpoint)
    )
    return OpenedSeal(proof, note, checkpoint)


def _checkpoint_of(signed: str) -> tuple[Note, Checkpoint]:
    with refused("the checkpoint is malformed: {error}", document="tlog proof"):
        note = parse_note(signed)
        return note, Checkpoint.parse(note.text)


def signed_algorithms(
    signatures: Sequence[NoteSignature], verifiers: Sequence[LogVerifier]
) -> set[str]:
    """The algorithms of the log keys whose signatures on a checkpoint verified: what the
    trust store's ``checkpoint_signatures`` is held to (rule 4.9 on the sealing checkpoint,
    5.14 on the aggregate's)."""
    by_key = {(v.name, v.key_id): algorithm_of(v) for v in verifiers}
    return {by_key[(s.name, s.key_id)] for s in signatures}


def unsigned_reasons(log: str, missing: Sequence[str], verifiers: Sequence[LogVerifier]) -> str:
    """Why each required algorithm lacks a log signature: the checkpoint has none by a key
    of it, or the directory has no key of it for ``log``."""
    listed = {algorithm_of(v) for v in verifiers}
    reasons = []
    for algorithm in missing:
        if algorithm in listed:
            reasons.append(f"the checkpoint carries no {algorithm} signature by a log key")
        else:
            reasons.append(f"the directory has no {algorithm} key for {log!r} ({STALE_DIRECTORY})")
    return "; ".join(reasons)


def cosignature_times(
    checkpoint_text: str,
    signatures: Iterable[NoteSignature],
    policy: Policy,
    max_timestamp: int,
    cache: OutcomeCache | None = None,
) -> tuple[list[WitnessTime], list[str]]:
    """Valid trusted cosignatures on a checkpoint, and what is wrong with the invalid ones."""
    known = policy.witness_names()
    times: list[WitnessTime] = []
    problems: list[str] = []
    for signature in signatures:
        found = known.get((signature.name, signature.key_id))
        if found is None:
            continue  # the log's own signature, or a witness nobody trusts here
        name, verifier = found
        key = (checkpoint_text, signature.name, signature.key_id, signature.signature)
        cosigned = attempt(
            partial(_cosignature, cache, key, verifier, checkpoint_text, signature, max_timestamp),
            "the cosignature of {name} does not verify ({code}): {error}",
            name=name,
        )
        if isinstance(cosigned, Refused):
            problems.append(str(cosigned))
        elif cosigned.timestamp != 0:  # dated 0: no statement of time, no receipt
            times.append(WitnessTime(name, cosigned.time, "cosigned"))
    return times, problems


def _cosignature(
    cache: OutcomeCache | None,
    key: tuple[str, str, int, bytes],
    verifier: CosignerKey,
    checkpoint_text: str,
    signature: NoteSignature,
    max_timestamp: int,
) -> Cosignature:
    """The cosignature, once it verifies and is not dated in the future (``TlogError``
    otherwise). Whether it parses and verifies is remembered; the clock is read every time."""
    cosignature = remembered(
        cache, "cosignature", key, partial(Cosignature.from_note_signature, signature)
    )
    if cosignature.timestamp > max_timestamp:  # refused as in the future, as ever
        verifier.verify_cosignature(checkpoint_text, cosignature, max_timestamp=max_timestamp)
    remembered(
        cache,
        "cosigned",
        key,
        partial(verifier.verify_cosignature, checkpoint_text, cosignature),
    )
    return cosignature


def timestamp_times(
    receipts: Iterable[TimestampReceipt],
    root: bytes,
    policy: Policy,
    latest: datetime,
    cache: OutcomeCache | None = None,
) -> tuple[list[WitnessTime], list[str]]:
    """Valid tokens from listed authorities over ``root``, and the problems of the others."""
    times: list[WitnessTime] = []
    problems: list[str] = []
    for receipt in receipts:
        authority = policy.authorities.get(receipt.authority)
        if authority is None:
            continue
        token = b64decode(receipt.token)
        if token is None:  # the struct's own check makes this unreachable after decoding
            problems.append(f"the token of {authority.name} is not base64")
            continue
        stamp = attempt(
            partial(
                remembered,
                cache,
                "token",
                (authority.name, token, root),
                partial(verify_token, token, root, authority.roots, authority.intermediates),
            ),
            "the token of {name} does not verify ({code}): {error}",
            name=authority.name,
        )
        if isinstance(stamp, Refused):
            problems.append(str(stamp))
            continue
        if stamp.gen_time > latest:
            problems.append(f"the token of {authority.name} is dated in the future")
            continue
        times.append(WitnessTime(authority.name, stamp.gen_time, "time-stamped"))
    return times, problems


def previous_times(
    seal: Seal,
    opened: OpenedSeal,
    verifiers: tuple[LogVerifier, ...],
    policy: Policy | None,
    max_timestamp: int,
    cache: OutcomeCache | None = None,
) -> tuple[list[WitnessTime], str]:
    """Trusted witness times on ``seal.previous``, or none and the reason it cannot be used.

    ``previous`` counts only when the log signed it, it is of the same log, it does not yet
    include the entry, and it is consistent with the sealing checkpoint.
    """
    if seal.previous is None:
        return [], "no previous checkpoint in the seal"
    if policy is None:
        return [], "no trust store for the previous checkpoint's witnesses"
    signed = seal.previous
    opened_previous = attempt(
        partial(
            remembered,
            cache,
            "previous",
            (seal.log, signed),
            lambda: (open_checkpoint(signed, verifiers)[0], parse_note(signed)),
        ),
        "the previous checkpoint is not usable ({code}): {error}",
    )
    if isinstance(opened_previous, Refused):
        return [], str(opened_previous)
    previous, note = opened_previous
    sealing = opened.checkpoint
    if previous.origin != sealing.origin:
        return [], "the previous checkpoint is of another log"
    if previous.size > opened.proof.index:
        return [], "the previous checkpoint already includes the entry"
    consistency = [b64decode(node) or b"" for node in seal.previous_consistency]
    consistent = attempt(
        partial(
            verify_consistency,
            previous.size,
            sealing.size,
            previous.root_hash,
            sealing.root_hash,
            consistency,
        ),
        "the previous checkpoint is not consistent with the sealing one: {error}",
    )
    if isinstance(consistent, Refused):
        return [], str(consistent)
    times, _ = cosignature_times(note.text, note.signatures, policy, max_timestamp, cache)
    if not times:
        return [], "no trusted witness time on the previous checkpoint"
    return times, ""
