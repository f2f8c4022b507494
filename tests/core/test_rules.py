"""One test per rule of the record spec (sections 2.3, 7 and 8) through ``commit_record``."""

from __future__ import annotations

import hashlib
from types import ModuleType

import pytest

from .support import KEY, MAX_SAFE, RECORD_ID, assert_refused, commit, generated_payload, summary

H64 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"


def paths(record: object) -> list[str]:
    return [leaf.path for leaf in record.leaves]  # type: ignore[attr-defined]


def name_payload(name: str) -> str:
    return '{"' + name + '":1}'


def leaf(record: object, path: str) -> object:
    (found,) = [x for x in record.leaves if x.path == path]  # type: ignore[attr-defined]
    return found


# --- 2.3 payload rules -----------------------------------------------------------------------


def test_no_schema_needed(impl: ModuleType) -> None:
    record = commit(impl, '{"anything":{"goes":[1,"two",{"three":3.5}]},"here":true}')
    assert record.field_count == 4
    assert {x.kind for x in record.leaves} == {"free"}


def test_every_leaf_committed_at_any_depth(impl: ModuleType) -> None:
    record = commit(impl, '{"a":{"b":[1,{"c":[true,null]}]},"d":"x"}')
    assert paths(record) == ["o:/d", "ooa:/a/b/0", "ooaoa:/a/b/1/c/0", "ooaoa:/a/b/1/c/1"]
    assert record.field_count == len(record.leaves) == 4


def test_key_order_is_irrelevant(impl: ModuleType) -> None:
    one = commit(impl, '{"b":1,"a":{"y":[1,2],"x":null}}')
    other = commit(impl, '{"a":{"x":null,"y":[1,2]},"b":1}')
    assert summary(one) == summary(other)
    assert one.canonical == b'{"a":{"x":null,"y":[1,2]},"b":1}'


def test_array_order_matters(impl: ModuleType) -> None:
    assert commit(impl, '{"a":[1,2]}').root != commit(impl, '{"a":[2,1]}').root


def test_empty_container_is_a_committed_fact(impl: ModuleType) -> None:
    with_k = commit(impl, '{"k":{},"x":1}')
    without_k = commit(impl, '{"x":1}')
    with_list = commit(impl, '{"k":[],"x":1}')
    assert leaf(with_k, "o:/k").encoded == b"obj:{}"
    assert leaf(with_list, "o:/k").encoded == b"arr:[]"
    assert (with_k.field_count, without_k.field_count) == (2, 1)
    assert len({with_k.root, without_k.root, with_list.root}) == 3


def test_null_is_committed(impl: ModuleType) -> None:
    record = commit(impl, '{"a":null}')
    assert record.field_count == 1
    assert leaf(record, "o:/a").encoded == b"null:"
    assert record.root != commit(impl, '{"a":"null"}').root


@pytest.mark.parametrize("spelling", ["1.0", "1e0", "1E+0", "10e-1", "0.1e1"])
def test_one_number_commits_identically(impl: ModuleType, spelling: str) -> None:
    assert summary(commit(impl, f'{{"n":{spelling}}}')) == summary(commit(impl, '{"n":1}'))


def test_string_and_number_differ(impl: ModuleType) -> None:
    assert commit(impl, '{"a":"1"}').root != commit(impl, '{"a":1}').root


def test_documents_are_committed_as_digests(impl: ModuleType) -> None:
    record = commit(impl, f'{{"doc":"sha256:{H64.upper()}"}}', {"o:/doc": "digest"})
    assert leaf(record, "o:/doc").encoded == f"digest:sha256:{H64}".encode()
    assert_refused(
        lambda: commit(impl, '{"doc":"%PDF-1.7 raw bytes"}', {"o:/doc": "digest"}),
        "digest_invalid",
        "o:/doc",
    )


def test_each_field_is_a_unit_of_proof(impl: ModuleType) -> None:
    record = commit(
        impl, '{"name":"Ada","tags":["x","y"],"address":{"city":"Paris","zip":"75001"}}'
    )
    commitments = []
    for x in record.leaves:
        assert x.salt == impl.derive_salt(KEY, RECORD_ID, x.path)
        assert x.commitment == impl.commit_field(x.path, x.salt, x.encoded)
        commitments.append(x.commitment)
    assert record.root == impl.merkle_root(commitments)
    for index, commitment in enumerate(commitments):
        proof = impl.inclusion_proof(commitments, index)
        assert (
            impl.verify_inclusion(commitment, index, len(commitments), proof, record.root) is None
        )


def test_commitment_construction(impl: ModuleType) -> None:
    """Section 4 written out with hashlib: the salt and commitment of one field."""
    import hmac

    record = commit(impl, '{"a":"same"}')
    salt = hmac.new(KEY, b"recordseal/salt/v1\x00rec-0001\x00o:/a", hashlib.sha256).digest()
    commitment = hashlib.sha256(b"recordseal/field/v1o:/a\x00" + salt + b"\x00str:same").digest()
    assert (leaf(record, "o:/a").salt, leaf(record, "o:/a").commitment) == (salt, commitment)
    assert record.root == hashlib.sha256(b"\x00" + commitment).digest()


def test_same_value_in_two_records_differs(impl: ModuleType) -> None:
    first = commit(impl, '{"a":"same"}', record_id="rec-1")
    second = commit(impl, '{"a":"same"}', record_id="rec-2")
    assert leaf(first, "o:/a").encoded == leaf(second, "o:/a").encoded
    assert leaf(first, "o:/a").salt != leaf(second, "o:/a").salt
    assert leaf(first, "o:/a").commitment != leaf(second, "o:/a").commitment
    assert first.root != second.root


def test_salt_key_changes_every_commitment(impl: ModuleType) -> None:
    first = commit(impl, '{"a":1,"b":2}')
    second = commit(impl, '{"a":1,"b":2}', salt_key=bytes(32))
    assert all(
        x.commitment != y.commitment for x, y in zip(first.leaves, second.leaves, strict=True)
    )


# --- 7 errors --------------------------------------------------------------------------------


def test_money_fraction_names_the_field(impl: ModuleType) -> None:
    assert_refused(
        lambda: commit(impl, '{"order":{"total":12.5}}', {"oo:/order/total": "money"}),
        "money_fraction",
        "oo:/order/total",
    )
    record = commit(impl, '{"order":{"total":1.5e3}}', {"oo:/order/total": "money"})
    assert leaf(record, "oo:/order/total").encoded == b"money:1500"


@pytest.mark.parametrize(
    "value",
    [
        "2024-01-01",
        "2024-01-01T00:00:00",
        "2024-01-01 00:00:00Z",
        "yesterday",
        "2016-12-31T23:59:60Z",
    ],
)
def test_non_rfc3339_timestamp_is_refused(impl: ModuleType, value: str) -> None:
    assert_refused(
        lambda: commit(impl, f'{{"at":"{value}"}}', {"o:/at": "timestamp"}),
        "timestamp_invalid",
        "o:/at",
    )


def test_strict_refuses_undeclared_fields(impl: ModuleType) -> None:
    declarations = {"o:/a": "integer", "o:/meta": "free"}
    record = commit(impl, '{"a":1,"meta":{"any":["shape"]}}', declarations, strict=True)
    assert [x.kind for x in record.leaves] == ["integer", "free"]
    assert_refused(
        lambda: commit(impl, '{"a":1,"b":2}', declarations, strict=True), "undeclared_field", "o:/b"
    )
    # Without strict the same payload is accepted.
    assert commit(impl, '{"a":1,"b":2}', declarations).field_count == 2


def test_strict_wildcards_cover_every_element(impl: ModuleType) -> None:
    declarations = {"oao:/items/*/price": "money", "oao:/items/*/sku": "text"}
    payload = '{"items":[{"price":100,"sku":"A"},{"price":250,"sku":"B"},{"price":1,"sku":"C"}]}'
    record = commit(impl, payload, declarations, strict=True)
    assert [x.kind for x in record.leaves] == ["money", "text"] * 3
    assert_refused(
        lambda: commit(
            impl, '{"items":[{"price":100,"sku":"A","qty":2}]}', declarations, strict=True
        ),
        "undeclared_field",
        "oao:/items/0/qty",
    )


def test_wildcard_is_only_for_array_steps(impl: ModuleType) -> None:
    record = commit(impl, '{"a":{"0":1.5},"*":2.5}', {"oa:/a/*": "money"})
    assert [(x.path, x.kind) for x in record.leaves] == [("o:/*", "free"), ("oo:/a/0", "free")]
    assert_refused(lambda: commit(impl, '{"*":2.5}', {"o:/*": "money"}), "money_fraction", "o:/*")


def test_declared_field_may_be_absent(impl: ModuleType) -> None:
    assert commit(impl, '{"a":1}', {"o:/missing": "money"}, strict=False).field_count == 1


def test_declared_kind_refuses_a_container(impl: ModuleType) -> None:
    assert_refused(lambda: commit(impl, '{"a":{"b":1}}', {"o:/a": "money"}), "value_type", "o:/a")


@pytest.mark.parametrize("payload", ["[1]", "[]", "1", '"object"', "null", "true"])
def test_payload_must_be_an_object(impl: ModuleType, payload: str) -> None:
    assert_refused(lambda: commit(impl, payload), "payload_not_object")


@pytest.mark.parametrize("payload", ["{}", " {\n} "])
def test_payload_needs_a_field(impl: ModuleType, payload: str) -> None:
    assert_refused(lambda: commit(impl, payload), "payload_empty")


@pytest.mark.parametrize("char", ["\u0000", "\u0001", "\n", "\u001f", "\u007f", "\u0085", "\u009f"])
def test_control_character_in_a_name_is_refused(impl: ModuleType, char: str) -> None:
    escaped = f"\\u{ord(char):04x}"
    assert_refused(
        lambda: commit(impl, f'{{"ok":1,"x":{{"a{escaped}b":1}}}}'),
        "control_character",
        f"oo:/x/a{char}b",
    )


@pytest.mark.parametrize("char", ["\u00a0", "\u2028", "\u200b", "\ufeff"])
def test_other_invisible_characters_are_allowed(impl: ModuleType, char: str) -> None:
    assert commit(impl, f'{{"a{char}b":1}}').leaves[0].path == f"o:/a{char}b"


def test_invalid_declarations_are_refused(impl: ModuleType) -> None:
    assert impl.validate_declarations({"oao:/items/*/price": "money", "o:/*": "free"}) is None
    assert impl.validate_declarations({}) is None
    assert_refused(
        lambda: impl.validate_declarations({"oa:/a/0": "money"}), "declaration_invalid", "oa:/a/0"
    )
    assert_refused(lambda: impl.validate_declarations({"o:/a": "email"}), "unknown_kind", "o:/a")
    assert_refused(
        lambda: commit(impl, '{"a":1}', {"o:/a~2": "free"}), "declaration_invalid", "o:/a~2"
    )


# --- 8 limits: each boundary from both sides -------------------------------------------------


def test_payload_size_limit(impl: ModuleType) -> None:
    record = commit(impl, generated_payload({"bytes": 262144}))
    # Nothing is truncated: the whole value is committed.
    assert record.leaves[0].encoded == b"str:" + b"x" * (262144 - 8)
    assert_refused(lambda: commit(impl, generated_payload({"bytes": 262145})), "payload_too_large")


def test_size_is_checked_on_the_text_as_received(impl: ModuleType) -> None:
    padded = b'{"a":1}' + b" " * (262145 - 7)
    assert_refused(lambda: commit(impl, padded), "payload_too_large")
    assert commit(impl, padded[:-1]).field_count == 1


def test_size_is_counted_in_bytes(impl: ModuleType) -> None:
    fits = '{"s":"' + "\u00e9" * 131068 + '"}'
    assert len(fits.encode()) == 262144
    assert commit(impl, fits).field_count == 1
    assert_refused(lambda: commit(impl, fits[:-2] + 'x"}'), "payload_too_large")


def test_field_count_limit(impl: ModuleType) -> None:
    assert commit(impl, generated_payload({"fields": 4096})).field_count == 4096
    assert_refused(lambda: commit(impl, generated_payload({"fields": 4097})), "too_many_fields")


def test_empty_containers_count_as_fields(impl: ModuleType) -> None:
    payload = "{" + ",".join(f'"f{i:04d}":{{}}' for i in range(4097)) + "}"
    assert_refused(lambda: commit(impl, payload), "too_many_fields")


@pytest.mark.parametrize("depth", [1, 120, 125])
def test_depth_accepted(impl: ModuleType, depth: int) -> None:
    record = commit(impl, generated_payload({"depth": depth}))
    assert paths(record) == ["o" * depth + ":" + "/a" * depth]


@pytest.mark.parametrize("depth", [126, 127, 200])
def test_depth_refused(impl: ModuleType, depth: int) -> None:
    assert_refused(
        lambda: commit(impl, generated_payload({"depth": depth})),
        "depth_exceeded",
        "o" * 125 + ":" + "/a" * 125,
    )


def test_depth_counts_arrays(impl: ModuleType) -> None:
    ok = '{"a":' + "[" * 124 + "1" + "]" * 124 + "}"
    assert commit(impl, ok).field_count == 1
    too_deep = '{"a":' + "[" * 125 + "1" + "]" * 125 + "}"
    assert_refused(
        lambda: commit(impl, too_deep), "depth_exceeded", "o" + "a" * 124 + ":/a" + "/0" * 124
    )


def test_path_length_limit(impl: ModuleType) -> None:
    assert paths(commit(impl, name_payload("x" * 509))) == ["o:/" + "x" * 509]
    assert_refused(
        lambda: commit(impl, name_payload("x" * 510)), "path_too_long", "o:/" + "x" * 510
    )


def test_path_length_is_counted_in_utf8_bytes(impl: ModuleType) -> None:
    assert commit(impl, name_payload("\u00e9" * 254 + "x")).field_count == 1
    assert_refused(
        lambda: commit(impl, name_payload("\u00e9" * 255)), "path_too_long", "o:/" + "\u00e9" * 255
    )


@pytest.mark.parametrize("value", [MAX_SAFE, -MAX_SAFE])
def test_integer_limit_accepted(impl: ModuleType, value: int) -> None:
    assert commit(impl, f'{{"n":{value}}}').leaves[0].encoded == f"num:{value}".encode()


@pytest.mark.parametrize(
    "text",
    [
        "9007199254740992",
        "-9007199254740992",
        "9007199254740992.0",
        "9.007199254740992e15",
        "1e300",
    ],
)
def test_integer_limit_refused(impl: ModuleType, text: str) -> None:
    assert_refused(lambda: commit(impl, f'{{"x":[0,{text}]}}'), "integer_out_of_range", "oa:/x/1")


def test_large_values_go_as_strings(impl: ModuleType) -> None:
    record = commit(impl, '{"n":"9007199254740993"}')
    assert record.leaves[0].encoded == b"str:9007199254740993"
