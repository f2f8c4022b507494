"""The building blocks one by one (spec sections 3-5), for inputs a JSON file cannot hold."""

from __future__ import annotations

import hashlib
import hmac
import math
from types import ModuleType

import pytest

from .support import KEY, MAX_SAFE, assert_refused

LEAVES = [b"", b"\x00", b"\x10", b"\x20\x21", b"\x30\x31"]


# --- encode_value on Python values (section 3) ----------------------------------------------


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
@pytest.mark.parametrize("kind", ["free", "money", "decimal", "lat6", "text", "boolean"])
def test_non_finite_numbers_are_refused(impl: ModuleType, kind: str, value: float) -> None:
    assert_refused(lambda: impl.encode_value(kind, value), "number_out_of_range")


def test_unknown_kind_is_checked_first(impl: ModuleType) -> None:
    assert_refused(lambda: impl.encode_value("bogus", math.nan), "unknown_kind")


@pytest.mark.parametrize("value", [2**53, 2**64, -(2**63), 10**20])
def test_large_python_ints_are_refused(impl: ModuleType, value: int) -> None:
    assert_refused(lambda: impl.encode_value("free", value), "integer_out_of_range")


@pytest.mark.parametrize(
    "value",
    [10**400, -(10**400), 2**1024, 2**1024 - 2**970],
    ids=["10^400", "-10^400", "2^1024", "overflow midpoint"],
)
def test_ints_beyond_the_doubles_are_out_of_range(impl: ModuleType, value: int) -> None:
    # Section 1.4: a number is read as the nearest double, here infinite (2^1024 - 2^970 is the
    # midpoint and ties to even, upwards); so check 2 of section 3 reports number_out_of_range,
    # as canonicalize does for the same number written in JSON (jcs.json, "401-digit integer").
    assert_refused(lambda: impl.encode_value("free", value), "number_out_of_range")


def test_largest_int_below_the_overflow_midpoint(impl: ModuleType) -> None:
    assert_refused(lambda: impl.encode_value("free", 2**1024 - 2**970 - 1), "integer_out_of_range")


def test_int_and_float_of_equal_value_are_one_number(impl: ModuleType) -> None:
    for kind in ("free", "money", "integer", "decimal", "lat6", "lat9", "lon6"):
        assert impl.encode_value(kind, 3) == impl.encode_value(kind, 3.0)
    assert impl.encode_value("free", MAX_SAFE) == impl.encode_value("free", float(MAX_SAFE))


def test_bool_is_never_a_number(impl: ModuleType) -> None:
    assert impl.encode_value("free", True) == b"bool:true"
    assert impl.encode_value("free", False) == b"bool:false"
    for kind in ("money", "integer", "decimal", "lat6"):
        assert_refused(lambda kind=kind: impl.encode_value(kind, True), "value_type")


def test_every_kind_encodes_something(impl: ModuleType) -> None:
    samples = {
        "boolean": True,
        "currency": "EUR",
        "date": "2024-02-29",
        "decimal": 1.5,
        "digest": "sha256:" + "ab" * 32,
        "free": None,
        "integer": 7,
        "lat6": 1.5,
        "lat9": 1.5,
        "lon6": 1.5,
        "money": 100,
        "text": "x",
        "timestamp": "2024-01-01T00:00:00Z",
        "uuid": "00000000-0000-0000-0000-000000000000",
    }
    assert set(samples) == set(impl.KINDS)
    for kind, value in samples.items():
        assert isinstance(impl.encode_value(kind, value), bytes)


# --- salts and commitments (section 4) --------------------------------------------------------


def test_derive_salt(impl: ModuleType) -> None:
    expected = hmac.new(
        KEY, "recordseal/salt/v1\x00r\u00e9c\x00oo:/a/\u00e9".encode(), hashlib.sha256
    ).digest()
    assert impl.derive_salt(KEY, "r\u00e9c", "oo:/a/\u00e9") == expected


@pytest.mark.parametrize("key", [b"", bytes(31), bytes(33), bytes(64)])
def test_salt_key_must_be_32_bytes(impl: ModuleType, key: bytes) -> None:
    assert_refused(lambda: impl.derive_salt(key, "rec", "o:/a"), "salt_key_invalid")


@pytest.mark.parametrize("record_id", ["", "\x00", "a\x00b"])
def test_record_id_must_be_non_empty_without_nul(impl: ModuleType, record_id: str) -> None:
    assert_refused(lambda: impl.derive_salt(KEY, record_id, "o:/a"), "record_id_invalid")


def test_commit_field(impl: ModuleType) -> None:
    salt = bytes(range(100, 132))
    expected = hashlib.sha256(b"recordseal/field/v1o:/a\x00" + salt + b"\x00num:1").digest()
    assert impl.commit_field("o:/a", salt, b"num:1") == expected


# --- RFC 6962 (section 5) ---------------------------------------------------------------------


def test_hashes(impl: ModuleType) -> None:
    assert impl.leaf_hash(b"") == hashlib.sha256(b"\x00").digest()
    assert impl.merkle_root([]) == hashlib.sha256(b"").digest()
    assert impl.merkle_root([b"x"]) == impl.leaf_hash(b"x")
    pair = hashlib.sha256(b"\x01" + impl.leaf_hash(b"x") + impl.leaf_hash(b"y")).digest()
    assert impl.merkle_root([b"x", b"y"]) == pair


@pytest.mark.parametrize("index", [5, 6, 100])
def test_inclusion_proof_index_out_of_range(impl: ModuleType, index: int) -> None:
    assert_refused(lambda: impl.inclusion_proof(LEAVES, index), "index_out_of_range")


def test_inclusion_proof_of_no_leaves(impl: ModuleType) -> None:
    assert_refused(lambda: impl.inclusion_proof([], 0), "index_out_of_range")


def test_consistency_proof_sizes(impl: ModuleType) -> None:
    assert impl.consistency_proof(LEAVES, 0) == []
    assert impl.consistency_proof(LEAVES, len(LEAVES)) == []
    assert_refused(lambda: impl.consistency_proof(LEAVES, 6), "size_invalid")


def test_verify_inclusion_reports_both_roots(impl: ModuleType) -> None:
    root = impl.merkle_root(LEAVES)
    proof = impl.inclusion_proof(LEAVES, 2)
    wrong = bytes(range(32))
    error = assert_refused(
        lambda: impl.verify_inclusion(LEAVES[2], 2, len(LEAVES), proof, wrong), "root_mismatch"
    )
    assert wrong.hex() in str(error).lower()
    assert root.hex() in str(error).lower()


def test_verify_inclusion_index_beyond_size(impl: ModuleType) -> None:
    root = impl.merkle_root(LEAVES)
    assert_refused(lambda: impl.verify_inclusion(b"x", 0, 0, [], root), "index_out_of_range")
    assert_refused(lambda: impl.verify_inclusion(b"x", 5, 5, [], root), "index_out_of_range")


def test_verify_consistency_trivial_sizes(impl: ModuleType) -> None:
    root = impl.merkle_root(LEAVES)
    other = impl.merkle_root(LEAVES[:3])
    # Any roots are consistent with the empty tree, given an empty proof.
    assert impl.verify_consistency(0, 5, b"anything", root, []) is None
    assert_refused(lambda: impl.verify_consistency(0, 5, b"", root, [root]), "proof_invalid")
    assert impl.verify_consistency(5, 5, root, root, []) is None
    assert_refused(lambda: impl.verify_consistency(5, 5, root, other, []), "root_mismatch")
    assert_refused(lambda: impl.verify_consistency(5, 5, root, root, [root]), "proof_invalid")
    assert_refused(lambda: impl.verify_consistency(6, 5, root, root, []), "size_invalid")


# --- decisions recorded in docs/spec.md for inputs the record spec does not name ---------------


@pytest.mark.parametrize("kind", ["free", "text", "currency", "timestamp", "uuid", "digest"])
def test_a_python_str_with_a_lone_surrogate_is_refused(impl: ModuleType, kind: str) -> None:
    assert_refused(lambda: impl.encode_value(kind, "ab\ud800"), "lone_surrogate")


def test_a_lone_surrogate_str_for_a_number_kind_is_the_wrong_type(impl: ModuleType) -> None:
    assert_refused(lambda: impl.encode_value("money", "\ud800"), "value_type")


@pytest.mark.parametrize(
    ("index", "size", "code"),
    [
        (-1, 5, "index_out_of_range"),
        (0, -1, "size_invalid"),
        (-1, -1, "index_out_of_range"),
        (5, 5, "index_out_of_range"),
    ],
)
def test_verify_inclusion_checks_index_then_size(impl: ModuleType, index, size, code) -> None:
    assert_refused(lambda: impl.verify_inclusion(b"a", index, size, [], bytes(32)), code)


def test_negative_consistency_sizes_are_invalid(impl: ModuleType) -> None:
    assert_refused(lambda: impl.verify_consistency(-1, 3, bytes(32), bytes(32), []), "size_invalid")


def test_consistency_from_the_empty_tree_ignores_the_roots(impl: ModuleType) -> None:
    impl.verify_consistency(0, 0, bytes(32), b"\x01" * 32, [])
    impl.verify_consistency(0, 7, bytes(32), b"\x01" * 32, [])


@pytest.mark.parametrize("function", ["canonicalize", "commit_record"])
def test_text_instead_of_bytes_is_a_type_error(impl: ModuleType, function: str) -> None:
    with pytest.raises(TypeError):
        if function == "canonicalize":
            impl.canonicalize("{}")
        else:
            impl.commit_record("{}", None, False, KEY, "r")
