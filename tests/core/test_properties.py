"""Native and reference agree byte for byte on generated input (hypothesis).

Agreement means identical results, or identical refusals (code and field). Valid canonical
output is also compared with the independent ``rfc8785`` package.
"""

from __future__ import annotations

import json
import math
import struct
from functools import partial
from typing import Any

import rfc8785
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .support import KEY, MAX_SAFE, both, outcome, summary

NATIVE, REFERENCE = both()
KINDS = list(REFERENCE.KINDS)
SETTINGS = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}

# --- JSON values and payload texts -----------------------------------------------------------

names = st.one_of(
    st.sampled_from(
        [
            "",
            "a",
            "b",
            "/",
            "~",
            "a/b",
            "~0",
            "~1",
            "*",
            "0",
            "10",
            "\U0001f600",
            "\uff61",
            "\u00e9",
            "e\u0301",
            "\x01",
            "\x7f",
            "\u0085",
            "\u2028",
        ]
    ),
    st.text(max_size=6),
)
numbers = st.one_of(
    st.integers(-10, 10),
    st.integers(-MAX_SAFE - 3, -MAX_SAFE + 3),
    st.integers(MAX_SAFE - 3, MAX_SAFE + 3),
    st.integers(-(2**60), 2**60),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(
        [0.0, -0.0, 5e-324, 1.7976931348623157e308, 1e21, 1e-7, 1e-6, 0.1, 2.0**53, -(2.0**53)]
    ),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=8))
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(names, children, max_size=4)
    ),
    max_leaves=24,
)


@st.composite
def json_texts(draw: st.DrawFn, top: st.SearchStrategy[Any] | None = None) -> tuple[Any, bytes]:
    """A value and one spelling of it as JSON text; sometimes damaged, to exercise refusals."""
    value = draw(top if top is not None else values)
    text = json.dumps(
        value,
        ensure_ascii=draw(st.booleans()),
        indent=draw(st.sampled_from([None, None, 1])),
        sort_keys=draw(st.booleans()),
    )
    damage = draw(st.sampled_from(["none"] * 6 + ["truncate", "insert", "lone_surrogate"]))
    if damage == "truncate" and text:
        text = text[: draw(st.integers(0, len(text) - 1))]
    elif damage == "insert":
        at = draw(st.integers(0, len(text)))
        text = (
            text[:at]
            + draw(st.sampled_from([",", "]", "}", '"', "\\", "1e400", "\x01", " "]))
            + text[at:]
        )
    elif damage == "lone_surrogate" and '"' in text:
        at = text.index('"') + 1
        text = text[:at] + "\\ud800" + text[at:]
    return value, text.encode()


def _paths(value: Any, vector: str = "", pointer: str = "") -> list[str]:
    """Every committed path in ``value``, as a declaration pattern (array steps as ``*``)."""
    found = [f"{vector}:{pointer}"] if vector else []
    if isinstance(value, dict):
        for name, child in value.items():
            token = name.replace("~", "~0").replace("/", "~1")
            found += _paths(child, vector + "o", f"{pointer}/{token}")
    elif isinstance(value, list):
        for child in value:
            found += _paths(child, vector + "a", f"{pointer}/*")
    return found


@st.composite
def declarations(draw: st.DrawFn, value: Any) -> dict[str, str] | None:
    if draw(st.integers(0, 4)) == 0:
        return None
    patterns = sorted(set(_paths(value)))
    chosen = draw(st.lists(st.sampled_from(patterns), max_size=4)) if patterns else []
    extra = draw(
        st.lists(
            st.one_of(
                st.sampled_from(
                    ["", ":", "o:", "oa:/a/0", "o:/a~2", "o:/a/b", "x:/a", "o:/\x01", "oa:/a/*"]
                ),
                st.text(max_size=6),
            ),
            max_size=2,
        )
    )
    kinds = st.sampled_from([*KINDS, "free", "free", "bogus"])
    return {pattern: draw(kinds) for pattern in [*chosen, *extra]}


# --- records ---------------------------------------------------------------------------------


@settings(max_examples=1000, **SETTINGS)
@given(data=st.data())
def test_commit_record_parity(data: st.DataObject) -> None:
    top = st.one_of(st.dictionaries(names, values, max_size=6), values)
    value, payload = data.draw(json_texts(top))
    decls = data.draw(declarations(value))
    strict = data.draw(st.booleans())
    key = data.draw(st.sampled_from([KEY, bytes(32), b"\xff" * 32, KEY[:31]]))
    record_id = data.draw(st.sampled_from(["rec-1", "r\u00e9c \U0001f600", "", "a\x00b"]))

    def run(impl: Any) -> tuple[str, Any]:
        return outcome(lambda: summary(impl.commit_record(payload, decls, strict, key, record_id)))

    assert run(NATIVE) == run(REFERENCE)


@settings(max_examples=300, **SETTINGS)
@given(data=st.data())
def test_validate_declarations_parity(data: st.DataObject) -> None:
    value = data.draw(st.dictionaries(names, values, max_size=4))
    decls = data.draw(declarations(value)) or {}
    assert outcome(lambda: NATIVE.validate_declarations(decls)) == outcome(
        lambda: REFERENCE.validate_declarations(decls)
    )


# --- canonicalisation and number text --------------------------------------------------------


def _rfc8785(value: Any) -> bytes | None:
    try:
        return rfc8785.dumps(value)
    except rfc8785.CanonicalizationError:
        return None  # e.g. integers beyond 2^53, which canonicalize reads as doubles


@settings(max_examples=1000, **SETTINGS)
@given(sample=json_texts())
def test_canonicalize_parity(sample: tuple[Any, bytes]) -> None:
    value, text = sample
    native, reference = (
        outcome(lambda: NATIVE.canonicalize(text)),
        outcome(lambda: REFERENCE.canonicalize(text)),
    )
    assert native == reference
    if native[0] == "ok" and json.loads(text) == value:
        expected = _rfc8785(value)
        if expected is not None:
            assert native[1] == expected


@settings(max_examples=3000, **SETTINGS)
@given(bits=st.integers(0, 2**64 - 1))
def test_number_text_parity(bits: int) -> None:
    x = struct.unpack(">d", struct.pack(">Q", bits))[0]
    if not math.isfinite(x):
        return
    text = f"[{x!r}]".encode()
    native = NATIVE.canonicalize(text)
    assert native == REFERENCE.canonicalize(text) == rfc8785.dumps([x])
    # The text reads back to the same double (ECMAScript shortest round trip).
    assert float(native[1:-1]) == x


# --- encode_value ----------------------------------------------------------------------------

offsets = st.one_of(
    st.sampled_from(["Z", "z", "+00:00", "-00:00"]),
    st.builds(
        lambda s, h, m: f"{s}{h:02d}:{m:02d}",
        st.sampled_from("+-"),
        st.integers(0, 25),
        st.integers(0, 61),
    ),
)
timestamps = st.builds(
    lambda d, t, h, m, s, frac, off: f"{d.isoformat()}{t}{h:02d}:{m:02d}:{s:02d}{frac}{off}",
    st.dates(),
    st.sampled_from("Tt T"),
    st.integers(0, 24),
    st.integers(0, 60),
    st.integers(0, 61),
    st.one_of(st.just(""), st.from_regex(r"\.[0-9]{1,12}", fullmatch=True)),
    offsets,
)
dates = st.one_of(
    st.dates().map(lambda d: d.isoformat()),
    st.from_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", fullmatch=True),
)


def _uuid_spelling(u: Any, form: int, upper: bool) -> str:
    text = [str(u), f"{{{u}}}", f"urn:uuid:{u}", u.hex, f"{{urn:uuid:{u}}}", f"urn:uuid:{u.hex}"][
        form
    ]
    return text.upper() if upper else text


uuids = st.builds(_uuid_spelling, st.uuids(), st.integers(0, 5), st.booleans())
digests = st.builds(
    lambda prefix, h: prefix + h,
    st.sampled_from(["sha256:", "SHA256:", "sha256", ""]),
    st.from_regex(r"[0-9a-fA-F]{63,65}", fullmatch=True),
)
currencies = st.one_of(
    st.sampled_from(["EUR", "eur", "usd", "XXX", "EU", "EURO", "\u0131nr", "\u017fek"]),
    st.text(
        alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=3, max_size=3
    ),
)
coordinates = st.one_of(
    st.floats(-200, 200),
    st.integers(-200, 200),
    st.decimals(-181, 181, places=7).map(float),
    st.decimals(-91, 91, places=10).map(float),
)
kind_values = st.one_of(
    scalars,
    timestamps,
    dates,
    uuids,
    digests,
    currencies,
    coordinates,
    st.text(),
    st.just({}),
    st.just([]),
    st.just({"a": 1}),
    st.just([1]),
)


BY_KIND: dict[str, st.SearchStrategy[Any]] = {
    "timestamp": timestamps,
    "date": dates,
    "uuid": uuids,
    "digest": digests,
    "currency": currencies,
    "lat6": coordinates,
    "lat9": coordinates,
    "lon6": coordinates,
    "text": st.text(),
    "boolean": st.booleans(),
}


@settings(max_examples=2000, **SETTINGS)
@given(data=st.data(), kind=st.sampled_from([*KINDS, "bogus"]))
def test_encode_value_parity(data: st.DataObject, kind: str) -> None:
    value = data.draw(st.one_of(BY_KIND.get(kind, numbers), kind_values))
    assert outcome(lambda: NATIVE.encode_value(kind, value)) == outcome(
        lambda: REFERENCE.encode_value(kind, value)
    )


@settings(max_examples=200, **SETTINGS)
@given(value=st.text())
def test_text_nfc_parity(value: str) -> None:
    assert NATIVE.encode_value("text", value) == REFERENCE.encode_value("text", value)


# --- merkle ----------------------------------------------------------------------------------


def _mutate(proof: list[bytes], how: int, where: int) -> list[bytes]:
    if how == 0:
        return [*proof, b"\x00" * 32]
    if how == 1 and proof:
        return proof[:-1]
    if how == 2 and proof:
        i = where % len(proof)
        return [*proof[:i], bytes([proof[i][0] ^ 1]) + proof[i][1:], *proof[i + 1 :]]
    if how == 3 and proof:
        i = where % len(proof)
        return [*proof[:i], proof[i] + b"\x00", *proof[i + 1 :]]
    return [b"", *proof]


@settings(max_examples=200, **SETTINGS)
@given(
    leaves=st.lists(st.binary(max_size=8), max_size=33),
    how=st.integers(0, 4),
    where=st.integers(0, 64),
)
def test_merkle_parity(leaves: list[bytes], how: int, where: int) -> None:
    n = len(leaves)
    root = NATIVE.merkle_root(leaves)
    assert root == REFERENCE.merkle_root(leaves)
    roots = [NATIVE.merkle_root(leaves[:m]) for m in range(n + 1)]
    for index in range(n):
        proof = NATIVE.inclusion_proof(leaves, index)
        assert proof == REFERENCE.inclusion_proof(leaves, index)
        for impl in (NATIVE, REFERENCE):
            assert impl.verify_inclusion(leaves[index], index, n, proof, root) is None
        args = (leaves[index], index, n, _mutate(proof, how, where), root)
        native = outcome(partial(NATIVE.verify_inclusion, *args))
        assert native == outcome(partial(REFERENCE.verify_inclusion, *args))
        assert native[0] == "error"
    for old in range(n + 1):
        proof = NATIVE.consistency_proof(leaves, old)
        assert proof == REFERENCE.consistency_proof(leaves, old)
        for impl in (NATIVE, REFERENCE):
            assert impl.verify_consistency(old, n, roots[old], root, proof) is None
        args = (old, n, roots[old], root, _mutate(proof, how, where))
        native = outcome(partial(NATIVE.verify_consistency, *args))
        assert native == outcome(partial(REFERENCE.verify_consistency, *args))
        assert native[0] == "error"
