"""``recordseal.verify`` raises one root class, VerificationError (docs/bundle.md), and its
errors carry their evidence."""

from __future__ import annotations

import inspect
import json

import pytest

import recordseal.verify as verify
from recordseal.merkle.genesis import tenant_genesis
from recordseal.verify import (
    VerificationError,
    errors,
    transparency,
)
from recordseal.verify.errors import BundleError


def test_every_exception_class_of_the_package_has_the_one_root() -> None:
    modules = [verify, transparency, errors]
    classes = {
        value
        for module in modules
        for value in vars(module).values()
        if inspect.isclass(value) and issubclass(value, BaseException)
        and value.__module__.startswith("recordseal.verify")
    }  # fmt: skip
    assert {BundleError, transparency.TransparencyLogError} <= classes
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
