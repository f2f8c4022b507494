"""The read stage of ingest: the native read of a request (``_native.read_request``) gives the
reference read's records and refusals, word for word (hypothesis: generated bodies, envelopes,
payloads and keys, malformed ones mixed in), and what a record read gives ``prepare_records``
commits as its payload's text does."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recordseal._native import read_request as native_read
from recordseal.core import reference
from recordseal.core.errors import CommitError
from recordseal.crypto.vault import SubjectKeys
from recordseal.services import reading
from recordseal.services.pipeline import NativePipeline, RecordInput
from recordseal.services.reference_pipeline import ReferencePipeline
from tests.core.test_properties import names, values

SETTINGS: dict[str, Any] = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


@dataclass(frozen=True)
class Text:
    """JSON text written as is (a number's spelling, a name with escapes, damage)."""

    text: str


def write(value: Any, spaced: bool, ascii_only: bool) -> str:
    """JSON text of ``value``, :class:`Text` parts kept as they are; a dict's items in their
    order (repeated names are a list of pairs)."""
    comma, colon = (" , ", " : ") if spaced else (",", ":")
    if isinstance(value, Text):
        return value.text
    if isinstance(value, list) and value and isinstance(value[0], Pairs):
        return "{" + comma.join(write(p, spaced, ascii_only) for p in value) + "}"
    if isinstance(value, Pairs):
        name = value.name if isinstance(value.name, Text) else Text(_string(value.name, ascii_only))
        return write(name, spaced, ascii_only) + colon + write(value.value, spaced, ascii_only)
    if isinstance(value, dict):
        return write([Pairs(k, v) for k, v in value.items()] or Text("{}"), spaced, ascii_only)
    if isinstance(value, list):
        return "[" + comma.join(write(v, spaced, ascii_only) for v in value) + "]"
    if isinstance(value, str):
        return _string(value, ascii_only)
    return json.dumps(value)


def _string(value: str, ascii_only: bool) -> str:
    return json.dumps(value, ensure_ascii=ascii_only)


@dataclass(frozen=True)
class Pairs:
    """One member of an object written in a given order."""

    name: str | Text
    value: Any


# Envelope members: mostly good, often breaking a rule, sometimes not strings at all.
odd_json = st.sampled_from(
    [Text(t) for t in ["-0", "-0.0", "1", "1.5", "1E2", "18446744073709551615",
                       "18446744073709551616", "-9223372036854775809", "true", "null",
                       "[]", "{}", '["x"]', '{"a":1}']]
)  # fmt: skip
labels = st.one_of(
    st.sampled_from(["order.placed", "c-1", "", "tab\there", "nel\u0085", "é" * 128, "é" * 129]),
    st.text(max_size=10),
    st.text(min_size=250, max_size=260, alphabet="ab\U0001f600"),
)
timestamps = st.sampled_from(
    [
        "2026-11-21T08:00:00Z",
        "2026-11-21T09:00:00.120+01:00",
        "2026-11-21t08:00:00z",
        "2024-02-29T23:59:59-00:30",
        "2026-02-30T00:00:00Z",
        "2026-11-21T08:00:60Z",
        "2026-11-21 08:00:00Z",
        "yesterday",
        "",
    ]
)
streams = st.sampled_from(["orders", "audit", "", "o\u0000", "ünï"])
member_names = {
    "stream": st.sampled_from(["stream", Text('"str\\u0065am"')]),
    "record_type": st.just("record_type"),
    "occurred_at": st.sampled_from(["occurred_at", Text('"occurred\\u005fat"')]),
    "subject_id": st.just("subject_id"),
    "payload": st.just("payload"),
}
member_values = {
    "stream": streams,
    "record_type": labels,
    "occurred_at": timestamps,
    "subject_id": labels,
    "payload": st.one_of(
        st.dictionaries(names, values, min_size=1, max_size=4),
        st.dictionaries(names, values, max_size=4),
        values,
    ),
}


@st.composite
def record_bodies(draw: st.DrawFn) -> Any:
    """A record body: its members in any order, some missing, wrong or unknown; sometimes
    not an object at all."""
    if draw(st.integers(0, 15)) == 15:
        return draw(st.one_of(odd_json, st.just(Text('"a record"'))))
    members = []
    for name, strategy in member_values.items():
        if draw(st.integers(0, 25)) == 25:
            continue  # missing
        value = draw(odd_json) if draw(st.integers(0, 20)) == 20 else draw(strategy)
        members.append(Pairs(draw(member_names[name]), value))
    if draw(st.integers(0, 20)) == 20:
        members.append(Pairs(draw(st.sampled_from(["extra", "a`b", "Stream"])), 1))
    return draw(st.permutations(members)) or Text("{}")


@dataclass
class Request:
    body: bytes
    key: str | None
    batch: bool


keys = st.one_of(
    st.none(),
    st.none(),
    st.sampled_from(["k1", "order-17.attempt_2:x", "A" * 255]),
    st.sampled_from(["", "has space", "a#b", "é", "A" * 256]),
)


@st.composite
def requests(draw: st.DrawFn) -> Request:
    batch = draw(st.booleans())
    if batch:
        shape = draw(st.sampled_from(["records"] * 17 + ["array", "odd", "extra", "empty"]))
        records = draw(st.lists(record_bodies(), min_size=1, max_size=6))
        if shape == "array":
            top: Any = records  # not an object
        elif shape == "odd":
            top = {"records": draw(odd_json)}
        elif shape == "extra":
            top = [Pairs("records", records), Pairs("extra", 1)]
        elif shape == "empty":
            top = {"records": []}
        else:
            top = {"records": records}
    else:
        top = draw(record_bodies())
    text = write(top, draw(st.booleans()), draw(st.booleans()))
    if draw(st.integers(0, 40)) == 40:  # past a payload's limit: sizes measured
        filler = '{"big":"' + "x" * 262_150 + '"}'
        text = text.replace('"payload":{', '"payload":{"big":' + json.dumps(filler) + ",", 1)
    damage = draw(st.sampled_from(["none"] * 12 + ["truncate", "insert", "duplicate", "depth"]))
    if damage == "truncate" and text:
        text = text[: draw(st.integers(0, len(text) - 1))]
    elif damage == "insert":
        at = draw(st.integers(0, len(text)))
        piece = draw(st.sampled_from([",", "]", "}", '"', "\\", "1e400", "\x01", "\\ud800"]))
        text = text[:at] + piece + text[at:]
    elif damage == "duplicate" and '"payload"' in text:
        text = text.replace('"payload"', '"payload":1,"payload"', 1)
    elif damage == "depth":
        depth = draw(st.sampled_from([118, 121, 122, 123, 124, 125, 126]))
        nested = '{"a":' * depth + "1" + "}" * depth
        text = text.replace('"payload":', '"payload":' + nested + ',"p":', 1)
    body = text.encode()
    if draw(st.integers(0, 30)) == 30 and body:
        at = draw(st.integers(0, len(body) - 1))
        body = body[:at] + b"\xff" + body[at:]
    return Request(body, draw(keys), batch)


def outcome(read: Any, request: Request) -> Any:
    """What a read gave: its raised refusal, or each record's envelope, payload, hash and
    refusal."""
    try:
        items = read(request.body, request.key, request.batch)
    except CommitError as refusal:
        return ("raised", refusal.code, str(refusal), refusal.field)
    described: list[Any] = []
    for item in items:
        if isinstance(item, CommitError):
            described.append(("refused", item.code, str(item), item.field))
            continue
        refusal = item.refusal
        described.append(
            (
                item.stream,
                item.record_type,
                item.occurred_at,
                item.subject_id,
                item.payload_len,
                item.idempotency,
                None if refusal is None else (refusal.code, str(refusal), refusal.field),
                item.canonical_payload(),
            )
        )
    return described


@settings(max_examples=1500, **SETTINGS)
@given(request=requests())
def test_the_native_read_is_the_reference_read(request: Request) -> None:
    assert outcome(native_read, request) == outcome(reading.read_request, request)


def test_a_batch_of_1_to_1000_records() -> None:
    record = {"stream": "s", "record_type": "t", "occurred_at": "x", "subject_id": "s",
              "payload": {"a": 1}}  # fmt: skip
    for size, refused in [(0, True), (1, False), (1000, False), (1001, True)]:
        request = Request(json.dumps({"records": [record] * size}).encode(), None, True)
        native = outcome(native_read, request)
        assert native == outcome(reading.read_request, request)
        assert (native[0] == "raised") is refused
        if refused:
            assert native == ("raised", "batch_size_invalid", "a batch holds 1 to 1000 records",
                              "records")  # fmt: skip


# --- what prepare_records makes of a read -------------------------------------------------------

SEED = bytes(range(32))
KEYS = SubjectKeys.derive(bytes(range(32, 64)))


@settings(max_examples=300, **SETTINGS)
@given(
    payload=st.dictionaries(names, values, min_size=1, max_size=5),
    spaced=st.booleans(),
    declarations=st.sampled_from([None, {"o:/a": "integer"}, {"o:/a": "text"}]),
    strict=st.booleans(),
)
def test_a_read_record_prepares_as_its_payload_text(
    payload: dict[str, Any], spaced: bool, declarations: dict[str, str] | None, strict: bool
) -> None:
    strict = strict and declarations is not None
    body = write(
        {"stream": "s", "record_type": "t", "occurred_at": "2026-11-21T08:00:00Z",
         "subject_id": "c", "payload": payload},
        spaced,
        False,
    ).encode()  # fmt: skip
    (read,) = native_read(body, None, False)
    assert not isinstance(read, CommitError)
    (prepared,) = NativePipeline(SEED).prepare(
        [(read, "acme", "sr", declarations, strict, KEYS.salt_key, KEYS.payload_key)]
    )
    text = reading.read_request(body, None, False)[0]
    assert isinstance(text, reading.ReferenceRead)
    item = RecordInput("acme", "s", "t", read.occurred_at, "sr", "", text.payload,
                       declarations, strict, KEYS.salt_key, KEYS.payload_key)  # fmt: skip
    if isinstance(prepared, CommitError):
        (expected,) = ReferencePipeline(SEED).prepare([item._replace(record_id="r")])
        assert isinstance(expected, CommitError)
        assert (prepared.code, prepared.field, str(prepared)) == (
            expected.code, expected.field, str(expected))  # fmt: skip
        return
    # The record id is made by the pipeline: the text's record under that id is the same.
    (expected,) = ReferencePipeline(SEED).prepare([item._replace(record_id=prepared.record_id)])
    assert not isinstance(expected, CommitError)
    assert (prepared.root, prepared.field_count) == (expected.root, expected.field_count)
    opened = KEYS.decrypt_payload(prepared.record_id, prepared.sealed_payload)
    assert opened == reference.canonicalize(text.payload)


def test_record_ids_made_by_the_pipeline_are_uuid7() -> None:
    body = b'{"stream":"s","record_type":"t","occurred_at":"x","subject_id":"s","payload":{"a":1}}'
    reads = native_read(body, None, False) * 3
    made = NativePipeline(SEED).prepare(
        [(r, "acme", "sr", None, False, KEYS.salt_key, KEYS.payload_key) for r in reads]
    )
    ids = [p.record_id for p in made if not isinstance(p, CommitError)]
    assert len(set(ids)) == 3
    for record_id in ids:
        assert record_id[14] == "7" and record_id[19] in "89ab" and len(record_id) == 36


def test_a_measured_payload_too_large_is_refused_by_prepare() -> None:
    payload = '{"s":"' + "x" * 262_140 + '"}'
    body = ('{"stream":"s","record_type":"t","occurred_at":"x","subject_id":"s","payload":'
            + payload + "}").encode()  # fmt: skip
    (read,) = native_read(body, None, False)
    assert read.payload_len == len(payload) > 262_144
    (refused,) = NativePipeline(SEED).prepare(
        [(read, "acme", "sr", None, False, KEYS.salt_key, KEYS.payload_key)]
    )
    assert isinstance(refused, CommitError) and refused.code == "payload_too_large"


@pytest.mark.parametrize("key", [None, "k"])
def test_reads_keep_their_body_alive(key: str | None) -> None:
    body = bytearray(b'{"stream":"s","record_type":"t","occurred_at":"x","subject_id":"s",'
                     b'"payload":{"a":"' + b"y" * 10_000 + b'"}}')  # fmt: skip
    (read,) = native_read(bytes(body), key, False)
    del body
    import gc

    gc.collect()
    assert read.canonical_payload() == b'{"a":"' + b"y" * 10_000 + b'"}'
