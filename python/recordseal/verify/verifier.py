"""``verify_bundle``: decode a bundle, run the seven checks, and give the verdict.

A :class:`Verifier` holds one key directory and trust store in usable form (keys parsed,
certificates loaded) for many bundles; ``verify_bundle`` makes one per call.
"""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec

from .boundary import outermost
from .bracket import bracket_of, check_time_bracket, previous_bound
from .bundle import Bundle, KeyDirectory, Seal, TrustStore, decode_bundle
from .checks import (
    Receipts,
    check_field_commitments,
    check_header_signature,
    check_record_tree,
    check_sealed_batch,
    check_sequence_continuity,
    check_witness_receipts,
    gather_receipts,
    recompute,
)
from .compromise import Witnessed
from .context import Keyring, Policy
from .errors import BundleError
from .outcome_cache import OutcomeCache
from .result import RecordRef, TimeBracket, VerificationResult, failed, unchecked, verdict_of
from .sealing import OpenedSeal, WitnessTime, open_seal, open_tlog_proof


class Verifier:
    """Verifies bundles against one key directory and trust store (docs/bundle.md section 3).

    ``keys`` enables checks 3 and 4 (and the signatures of check 6), ``trust`` check 5 and the
    witness-backed time bracket. Both are built into their usable form once, here; the
    checkpoints, cosignatures and time-stamp tokens that bundles of one log share are parsed
    and verified once, and remembered by their exact bytes (``verify.outcome_cache``).
    """

    def __init__(self, keys: KeyDirectory | None = None, trust: TrustStore | None = None) -> None:
        self._keyring, self._no_keys = _keyring(keys)
        self._policy = _policy(trust)
        self._cache = OutcomeCache()

    def knows(self, bundle: Bundle) -> bool:
        """Whether the key directory lists the bundle's header key and, when it is sealed,
        its log (a service rebuilds its verifier when a bundle names keys it lacks)."""
        if self._keyring is None:
            return False
        if bundle.header.key_id not in self._keyring.header_keys:
            return False
        if bundle.seal is None:
            return True
        return bundle.seal.log in self._keyring.logs and self._knows_aggregate(bundle.seal)

    def _knows_aggregate(self, seal: Seal) -> bool:
        """Whether the directory lists the log of the seal's aggregate checkpoint, if any."""
        if seal.aggregate is msgspec.UNSET or self._keyring is None:
            return True
        try:
            origin = open_tlog_proof(seal.aggregate.proof, self._cache).checkpoint.origin
        except BundleError:
            return True  # malformed: no directory would help (check 5 fails it)
        return origin in self._keyring.logs

    @outermost(lambda reason: faulty(reason))
    def verify(self, bundle_bytes: bytes, *, now: datetime | None = None) -> VerificationResult:
        """Verify a bundle; never raises on input (a malformed one is ``FAILED``).

        ``now`` (default: the clock; naive means UTC) bounds witness times: one more than five
        minutes after it is refused.
        """
        try:
            bundle = decode_bundle(bundle_bytes)
        except BundleError as error:
            return malformed(str(error))
        return self.verify_decoded(bundle, now=now)

    @outermost(lambda reason: faulty(reason))
    def verify_decoded(self, bundle: Bundle, *, now: datetime | None = None) -> VerificationResult:
        """The seven checks over a bundle that :func:`decode_bundle` produced."""
        return _verify(bundle, self._keyring, self._no_keys, self._policy, now, self._cache)


def verify_bundle(
    bundle_bytes: bytes,
    keys: KeyDirectory | None = None,
    trust: TrustStore | None = None,
    *,
    now: datetime | None = None,
) -> VerificationResult:
    """Verify a disclosure bundle offline (docs/bundle.md section 3); never raises on input.

    One call, one :class:`Verifier`: to verify many bundles, make one and reuse it.
    """
    return Verifier(keys, trust).verify(bundle_bytes, now=now)


def malformed(reason: str) -> VerificationResult:
    """The result for a bundle that does not parse: check 1 failed, the others not run."""
    checks = [failed(1, f"malformed bundle: {reason}")]
    checks += [unchecked(number, "not run: the bundle is malformed") for number in range(2, 8)]
    return VerificationResult(
        verdict="FAILED", checks=checks, time_bracket=TimeBracket(), record=None, disclosed={}
    )


def faulty(reason: str) -> VerificationResult:
    """The result when the verifier itself fails (``boundary.py``): ``FAILED``, the fault
    named in check 1, the others not run."""
    checks = [failed(1, reason)]
    checks += [unchecked(number, "not run: the verifier failed") for number in range(2, 8)]
    return VerificationResult(
        verdict="FAILED", checks=checks, time_bracket=TimeBracket(), record=None, disclosed={}
    )


def _keyring(keys: KeyDirectory | None) -> tuple[Keyring | None, str]:
    if keys is None:
        return None, "no key directory supplied"
    try:
        return Keyring.of(keys), ""
    except BundleError as error:
        return None, f"the key directory is unusable ({error})"


def _policy(trust: TrustStore | None) -> Policy | None:
    try:
        return None if trust is None else Policy.of(trust)
    except BundleError:
        return None


def _open(bundle: Bundle, cache: OutcomeCache) -> OpenedSeal | BundleError | None:
    if bundle.seal is None:
        return None
    try:
        return open_seal(bundle.seal, cache)
    except BundleError as error:
        return error


def _witnessed(seal: Seal | None, policy: Policy | None, receipts: Receipts | None) -> Witnessed:
    """The earliest trusted witness time on the sealing checkpoint, or why there is none."""
    if seal is None:
        return Witnessed(missing="the record is not sealed yet")
    if policy is None:
        return Witnessed(missing="no trust store supplied")
    if receipts is None:
        return Witnessed(missing="the seal's proof does not parse")
    return Witnessed.of(receipts.times)


def verify_decoded(
    bundle: Bundle,
    keys: KeyDirectory | None = None,
    trust: TrustStore | None = None,
    *,
    now: datetime | None = None,
) -> VerificationResult:
    """The seven checks over a bundle that :func:`decode_bundle` produced."""
    return Verifier(keys, trust).verify_decoded(bundle, now=now)


def _verify(
    bundle: Bundle,
    keyring: Keyring | None,
    no_keys: str,
    policy: Policy | None,
    now: datetime | None,
    cache: OutcomeCache,
) -> VerificationResult:
    now = datetime.now(UTC) if now is None else now
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    header, seal = bundle.header, bundle.seal
    canonical = header.canonical()
    opened = _open(bundle, cache)
    receipts = gather_receipts(seal, opened, policy, now, cache, keyring)

    witnessed = _witnessed(seal, policy, receipts)
    required = policy.checkpoint_signatures if policy is not None else ("Ed25519",)
    sealed = check_sealed_batch(
        canonical, seal, opened, keyring, witnessed, cache, required, no_keys
    )
    included = sealed.status == "passed"
    if not included and witnessed.until is not None:
        witnessed = Witnessed(missing="the seal is not verified (check 4)")
    previous: list[WitnessTime] = []
    previous_reason = ""
    if included:
        previous, previous_reason = previous_bound(seal, opened, keyring, policy, now, cache)
    sealing_times = receipts.times if receipts is not None else []
    bracket = bracket_of(header, included, sealing_times, previous)

    recomputed = recompute(bundle.fields)
    checks = [
        check_field_commitments(bundle.fields, recomputed),
        check_record_tree(header, bundle.fields, recomputed),
        check_header_signature(
            header, canonical, bytes.fromhex(bundle.signature), keyring, no_keys, witnessed
        ),
        sealed,
        check_witness_receipts(seal, opened, policy, receipts),
        check_sequence_continuity(header, canonical, bundle.coverage, keyring, witnessed),
        check_time_bracket(bracket, included, previous_reason),
    ]
    fields_sound = checks[0].status == checks[1].status == "passed"
    return VerificationResult(
        verdict=verdict_of(checks),
        checks=checks,
        time_bracket=bracket.bracket,
        record=RecordRef(header.tenant, header.stream, header.seq, header.record_id),
        disclosed={field.path: field.value for field in bundle.fields} if fields_sound else {},
    )
