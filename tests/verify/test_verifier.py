"""One ``Verifier`` for many bundles (issue 19): key material built once, checkpoints and
cosignatures verified once and remembered by their exact bytes. Whatever order bundles come
in, good and tampered interleaved, every result is the one a fresh verifier gives."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec

from recordseal.verify import (
    Verifier,
    verify_bundle,
)
from recordseal.verify.outcome_cache import OutcomeCache

from .conftest import tampered
from .factory import World
from .test_tamper import COVERAGE_TAMPERING, FIELD_TAMPERING, HEADER_TAMPERING, SEAL_TAMPERING


def _results_equal(world: World, bundles: list[bytes]) -> None:
    keys, trust = world.keys(), world.trust()
    now = datetime.now(UTC)
    shared = Verifier(keys, trust)
    for bundle in bundles:
        alone = verify_bundle(bundle, keys, trust, now=now)
        together = shared.verify(bundle, now=now)
        assert msgspec.to_builtins(together) == msgspec.to_builtins(alone)


def test_a_shared_verifier_gives_each_bundle_its_own_result(world: World) -> None:
    good = world.bundle()
    edits = {**FIELD_TAMPERING, **HEADER_TAMPERING, **SEAL_TAMPERING, **COVERAGE_TAMPERING}
    bundles = [good]
    for edit, _ in edits.values():
        bundles += [tampered(good, edit), good]
    # The same checkpoints twice, cosigned and not: the cosignature is judged on its own.
    bundles += [world.bundle(cosigned=False), good, world.bundle(previous=False), good]
    _results_equal(world, bundles)


def test_a_future_cosignature_is_refused_even_when_it_was_remembered(world: World) -> None:
    """What depends on the clock is decided per bundle, never remembered: the same bytes are
    refused at one ``now`` and accepted at a later one."""
    keys, trust = world.keys(), world.trust()
    bundle = world.bundle()
    verifier = Verifier(keys, trust)
    assert verifier.verify(bundle).verdict == "VERIFIED"
    long_ago = world.sealed_at.replace(year=world.sealed_at.year - 1)
    early = verifier.verify(bundle, now=long_ago)
    assert early.check(5).status == "failed" and "cosignature_future" in early.check(5).detail
    assert verifier.verify(bundle).verdict == "VERIFIED"


def test_the_outcome_cache_remembers_refusals_and_forgets_the_oldest() -> None:
    from recordseal.tlog import TlogError

    cache = OutcomeCache(size=2)
    calls: list[str] = []

    def compute(value: str) -> str:
        calls.append(value)
        if value == "bad":
            raise TlogError("note_malformed", "bad")
        return value.upper()

    assert cache("kind", "a", lambda: compute("a")) == "A"
    assert cache("kind", "a", lambda: compute("a")) == "A"
    for _ in range(2):
        try:
            cache("kind", "bad", lambda: compute("bad"))
        except TlogError as error:
            assert error.code == "note_malformed"
    assert calls == ["a", "bad"]
    cache("kind", "c", lambda: compute("c"))  # the table is full: "a" goes
    cache("kind", "a", lambda: compute("a"))
    assert calls == ["a", "bad", "c", "a"]
