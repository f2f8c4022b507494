"""Both implementations against independent oracles built from the standard library (hypothesis).

Parity (test_properties.py) cannot catch a mistake both implementations share; these oracles
restate docs/spec.md with ``datetime``, ``decimal``, ``uuid``, ``unicodedata`` and the vector
generator tests/vectors/generate_records.py.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import unicodedata
import uuid
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .support import KEY, MAX_SAFE, VECTORS, both, outcome

IMPLS = both()
SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}


def _load_generator() -> Any:
    spec = importlib.util.spec_from_file_location(
        "generate_records", VECTORS / "generate_records.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATOR = _load_generator()


def encoded(kind: str, value: Any) -> list[tuple[str, Any]]:
    return [outcome(lambda impl=impl: impl.encode_value(kind, value)) for impl in IMPLS]


# --- coordinates (3.4): round the shortest decimal text half to even --------------------------


def coordinate_oracle(kind: str, x: float) -> tuple[str, Any]:
    limit = 180 if kind == "lon6" else 90
    if abs(x) > limit:
        return "error", ("coordinate_out_of_range", None)
    places = 9 if kind == "lat9" else 6
    rounded = Decimal(repr(float(x))).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN)
    text = f"{rounded:f}"
    if rounded == 0:
        text = text.lstrip("-")
    return "ok", f"{kind}:{text}".encode()


coordinates = st.one_of(
    st.floats(-181, 181),
    st.decimals(-181, 181, places=7).map(float),
    st.decimals(-91, 91, places=10).map(float),
    st.builds(lambda n, p: n / 10**p, st.integers(-(10**12), 10**12), st.integers(0, 12)),
)


@settings(max_examples=1500, **SETTINGS)
@given(kind=st.sampled_from(["lat6", "lat9", "lon6"]), x=coordinates)
def test_coordinates(kind: str, x: float) -> None:
    expected = coordinate_oracle(kind, x)
    assert encoded(kind, x) == [expected, expected]


# --- timestamps (3.2) --------------------------------------------------------------------------


def _day(moment: dt.datetime) -> str:
    return f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"  # %Y does not pad on Linux


@st.composite
def timestamps(draw: st.DrawFn) -> tuple[str, tuple[str, Any]]:
    moment = draw(st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30)))
    digits = draw(st.one_of(st.just(""), st.from_regex(r"[0-9]{1,12}", fullmatch=True)))
    sign = draw(st.sampled_from("+-"))
    hours, minutes = draw(st.integers(0, 23)), draw(st.integers(0, 59))
    offset = draw(st.sampled_from(["Z", "z", f"{sign}{hours:02d}:{minutes:02d}"]))
    t = draw(st.sampled_from("Tt"))
    text = f"{_day(moment)}{t}{moment:%H:%M:%S}" + (f".{digits}" if digits else "") + offset
    delta = dt.timedelta(0)
    if offset[0] in "+-":
        delta = dt.timedelta(hours=hours, minutes=minutes) * (1 if sign == "+" else -1)
    utc = moment.replace(microsecond=0) - delta
    fraction = digits.rstrip("0")
    expected = f"time:{_day(utc)}T{utc:%H:%M:%S}" + (f".{fraction}" if fraction else "") + "Z"
    return text, ("ok", expected.encode())


@settings(max_examples=1000, **SETTINGS)
@given(case=timestamps())
def test_timestamps(case: tuple[str, tuple[str, Any]]) -> None:
    text, expected = case
    assert encoded("timestamp", text) == [expected, expected]


# --- dates, uuids, text ------------------------------------------------------------------------


def date_oracle(text: str) -> tuple[str, Any]:
    try:
        year, month, day = (int(part) for part in text.split("-"))
        # Year 0000 is a leap year in the proleptic Gregorian calendar, like 2000.
        dt.date(2000 if year == 0 else year, month, day)
    except ValueError:
        return "error", ("date_invalid", None)
    return "ok", f"date:{text}".encode()


@settings(max_examples=800, **SETTINGS)
@given(text=st.from_regex(r"[0-9]{4}-(0[0-9]|1[0-3])-[0-3][0-9]", fullmatch=True))
def test_dates(text: str) -> None:
    expected = date_oracle(text)
    assert encoded("date", text) == [expected, expected]


@settings(max_examples=500, **SETTINGS)
@given(value=st.uuids(), form=st.integers(0, 3), upper=st.booleans())
def test_uuids(value: uuid.UUID, form: int, upper: bool) -> None:
    text = [str(value), f"{{{value}}}", f"urn:uuid:{value}", value.hex][form]
    text = text.upper() if upper else text
    expected = ("ok", f"uuid:{value}".encode())
    assert encoded("uuid", text) == [expected, expected]


@settings(max_examples=500, **SETTINGS)
@given(text=st.text())
def test_text_is_nfc(text: str) -> None:
    assert unicodedata.unidata_version == "14.0.0"
    expected = ("ok", ("txt:" + unicodedata.normalize("NFC", text)).encode())
    assert encoded("text", text) == [expected, expected]


# --- whole records against the vector generator -------------------------------------------------

safe_numbers = st.one_of(
    st.integers(-MAX_SAFE, MAX_SAFE),
    st.floats(-float(MAX_SAFE), float(MAX_SAFE), allow_nan=False),
)
scalars = st.one_of(st.none(), st.booleans(), safe_numbers, st.text(max_size=6))
names = st.text(max_size=5).filter(lambda s: not any(unicodedata.category(c) == "Cc" for c in s))
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(names, children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=500, **SETTINGS)
@given(
    payload=st.dictionaries(names, values, min_size=1, max_size=5), record_id=st.text(min_size=1)
)
def test_records_match_the_independent_construction(
    payload: dict[str, Any], record_id: str
) -> None:
    if "\x00" in record_id:
        return
    text = json.dumps(payload, ensure_ascii=False)
    expected = GENERATOR.commit(text, None, KEY.hex(), record_id, True)
    for impl in IMPLS:
        record = impl.commit_record(text.encode(), None, False, KEY, record_id)
        assert record.canonical.decode() == expected["canonical"]
        assert record.root.hex() == expected["root"]
        assert record.field_count == expected["field_count"]
        got = [
            {
                "path": leaf.path,
                "kind": leaf.kind,
                "encoded": leaf.encoded.decode(),
                "salt": leaf.salt.hex(),
                "commitment": leaf.commitment.hex(),
            }
            for leaf in record.leaves
        ]
        assert got == expected["leaves"]
