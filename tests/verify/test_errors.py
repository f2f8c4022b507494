"""``recordseal.verify`` raises one root class, VerificationError (docs/bundle.md), and its
errors carry their evidence."""

from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path

import pytest

import recordseal.verify as verify
import recordseal.verify.receipt as receipt_module
import recordseal.verify.verifier as verifier_module
from recordseal.core import CommitError
from recordseal.merkle.genesis import tenant_genesis
from recordseal.tlog import TlogError
from recordseal.verify import (
    VerificationError,
    errors,
    transparency,
)
from recordseal.verify.errors import BundleError

from .factory import World


def test_every_exception_class_of_the_package_has_the_one_root() -> None:
    modules = [verify, transparency, errors]
    classes = {
        value
        for module in modules
        for value in vars(module).values()
        if inspect.isclass(value) and issubclass(value, BaseException)
        and value.__module__.startswith("recordseal.verify")
    }  # fmt: skip
    assert {BundleError, errors.Refused, transparency.TransparencyLogError} <= classes
    assert all(issubclass(cls, VerificationError) for cls in classes), classes


def test_a_bad_document_is_a_verification_error() -> None:
    with pytest.raises(VerificationError):
        verify.load_key_directory(b"{")
    with pytest.raises(VerificationError):
        verify.decode_bundle(b"[]")


def test_a_wrong_genesis_carries_the_expected_and_the_stated_root() -> None:
    wrong = bytes(32)
    header = {
        "format": transparency.FORMAT,
        "origin": "svc.example/acme/f1",
        "tenant": "acme",
        "fleet": "f1",
        "date": "2026-11-21",
        "genesis": transparency.b64(wrong),
        "previous": None,
    }
    with pytest.raises(transparency.TransparencyLogError) as refused:
        transparency.replay_log_file(json.dumps(header).encode() + b"\n")
    assert refused.value.code == "genesis_mismatch"
    assert refused.value.expected == tenant_genesis("acme", "f1")
    assert refused.value.computed == wrong


# --- one translation, one boundary ------------------------------------------------------------

PACKAGE = Path(verify.__file__).parent


def _handlers(path: Path) -> list[tuple[int, str]]:
    """(line, caught classes as written) of every ``except`` of a module."""
    tree = ast.parse(path.read_text())
    return [
        (node.lineno, ast.unparse(node.type) if node.type else "")
        for node in ast.walk(tree)
        if isinstance(node, ast.ExceptHandler)
    ]


def test_only_errors_py_catches_the_roots_of_the_layers_below() -> None:
    """The core's CommitError and the formats' TlogError become the verifier's in one place
    (``errors.refused``); every other module reads them as a Refused."""
    found = {
        f"{path.name}:{line}: {caught}"
        for path in PACKAGE.glob("*.py")
        if path.name not in ("errors.py", "outcome_cache.py")  # the cache remembers, as raised
        for line, caught in _handlers(path)
        if any(name in caught for name in ("CommitError", "TlogError", "BELOW"))
    }
    assert not found, found


def test_one_bare_except_exception_at_the_outermost_boundary() -> None:
    found = [
        f"{path.name}:{line}"
        for path in PACKAGE.glob("*.py")
        for line, caught in _handlers(path)
        if caught in ("", "Exception", "BaseException")
    ]
    assert len(found) == 1 and found[0].startswith("boundary.py:"), found


def test_a_refusal_carries_the_lower_error_its_code_and_evidence() -> None:
    words = "the witness {name} refused it ({code}): {error}"
    with pytest.raises(errors.Refused) as caught, errors.refused(words, name="w{0}"):
        raise TlogError("signature_invalid", "bad signature", {"key_id": "0a0b0c0d"})
    refusal = caught.value
    assert str(refusal) == "the witness w{0} refused it (signature_invalid): bad signature"
    assert isinstance(refusal, VerificationError)
    assert refusal.code == "signature_invalid"
    assert refusal.evidence == {"key_id": "0a0b0c0d"}
    assert isinstance(refusal.cause, TlogError)
    with (
        pytest.raises(BundleError) as document,
        errors.refused("logs[{at}]: {error}", document="key directory", at=2),
    ):
        raise CommitError("proof_invalid", "the proof does not verify", "o:/a")
    assert str(document.value) == "key directory: logs[2]: the proof does not verify"
    assert document.value.code == "proof_invalid"
    outcome = errors.attempt(lambda: 1 // 1, "never said")
    assert outcome == 1


def test_a_fault_of_the_verifier_is_answered_not_raised(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check that fails in an unexpected way (a bug, not an input) gives a FAILED result
    naming the fault, from the outermost boundary; so does the erasure-receipt verifier."""

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(verifier_module, "check_sequence_continuity", broken)
    result = verify.verify_bundle(world.bundle(), world.keys(), world.trust())
    assert result.verdict == verify.FAILED
    assert result.check(1).detail == "internal error: RuntimeError: a bug"
    assert {check.status for check in result.checks[1:]} == {"unchecked"}
    monkeypatch.setattr(receipt_module, "decode_erasure_receipt", broken)
    answer = verify.verify_erasure_receipt(b"{}", world.keys())
    assert (answer.valid, answer.reason) == (False, "internal error: RuntimeError: a bug")
