"""The answers of the ingest routes: the native core writes them (``encode_answers``) byte
for byte as msgspec encodes ``RecordOut`` and ``BatchOut`` (``reference_answer``), for any
signed header, replay flag and problem (hypothesis)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recordseal import chain
from recordseal._native import encode_answers
from recordseal.services.errors import (
    AlreadyExists,
    Gone,
    Invalid,
    Malformed,
    NotFound,
    TooLarge,
    Unavailable,
)
from recordseal.web.ingest import reference_answer
from recordseal.web.problems import service_problem

texts = st.text(max_size=12)
hashes = st.binary(min_size=32, max_size=32)


@st.composite
def headers(draw: st.DrawFn) -> bytes:
    header = chain.build_header(
        tenant=draw(texts),
        stream=draw(texts),
        seq=draw(st.one_of(st.integers(1, 10), st.integers(2**53 - 3, 2**53 - 1))),
        record_id=draw(st.one_of(st.uuids().map(str), texts)),
        record_type=draw(texts),
        occurred_at=draw(texts),
        subject_ref=draw(texts),
        root=draw(hashes),
        field_count=draw(st.integers(1, 4096)),
        prev=draw(hashes),
        key_id=draw(st.text("0123456789abcdef", min_size=16, max_size=16)),
        ingested_at=draw(texts),
    )
    return chain.canonical_header(header)


refusals = st.builds(
    lambda kind, code, detail, field: kind(code, detail, field),
    st.sampled_from([Invalid, Malformed, NotFound, Gone, TooLarge, AlreadyExists, Unavailable]),
    st.sampled_from(["request_invalid", "payload_empty", "money_fraction", "stream_not_found"]),
    texts,
    st.one_of(st.none(), texts),
)


@st.composite
def answers(draw: st.DrawFn) -> Any:
    if draw(st.booleans()):
        problem = service_problem(draw(refusals))
        return problem.status, msgspec.json.encode(problem)
    return (
        draw(headers()),
        draw(st.binary(min_size=64, max_size=64)),
        draw(hashes),
        draw(st.booleans()),
    )


@settings(max_examples=300, deadline=None)
@given(results=st.lists(answers(), min_size=1, max_size=6))
def test_a_batch_answer_is_the_msgspec_encoding(results: list[Any]) -> None:
    assert encode_answers(results, True) == reference_answer(results, True)


@settings(max_examples=300, deadline=None)
@given(header=headers(), signature=st.binary(max_size=64), leaf=hashes, replayed=st.booleans())
def test_a_record_answer_is_the_msgspec_encoding(
    header: bytes, signature: bytes, leaf: bytes, replayed: bool
) -> None:
    result = [(header, signature, leaf, replayed)]
    assert encode_answers(result, False) == reference_answer(result, False)


def test_results_that_are_no_answer_are_refused() -> None:
    with pytest.raises(ValueError, match="no member"):
        encode_answers([(b'{"record_id":"r"}', b"", b"", False)], True)
    with pytest.raises(ValueError, match="one stored record"):
        encode_answers([(422, b"{}")], False)
    with pytest.raises(ValueError, match="3 members"):
        encode_answers([(b"", b"", b"")], True)  # type: ignore[list-item]
