"""The ingest pipeline: the native one gives the reference composition's bytes (hypothesis),
and both give the bytes of the record path before them (chain.build_header + HeaderSigner).

Agreement means identical roots, field counts, headers, signatures, chain leaves and final
heads, identical refusals (code and field), and sealed payloads that both open, with the
subject's keys, to the same canonical payload. Only the nonces differ: they are random.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recordseal import chain
from recordseal.core import commit_record, reference
from recordseal.core.errors import CommitError
from recordseal.crypto.signing import HeaderSigner, verify_header_signature
from recordseal.crypto.vault import SubjectKeys
from recordseal.services.header_keys import pipeline_from_seed
from recordseal.services.pipeline import NativePipeline, Pipeline, Prepared, RecordInput, Signed
from recordseal.services.reference_pipeline import ReferencePipeline
from tests.core.test_properties import declarations, json_texts, names, values

SEED = bytes(range(100, 132))
INGESTED_AT = "2026-11-21T07:20:26.123456Z"
SETTINGS: dict[str, Any] = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
NATIVE = NativePipeline(SEED)
REFERENCE = ReferencePipeline(SEED)

# Header members a caller may pass through: quotes, backslashes, controls, non-ASCII, astral.
labels = st.one_of(
    st.sampled_from(["acme", 'q"uote', "back\\slash", "tab\tnl\n\x00\x1f\x7f", "é€\uffff"]),
    st.sampled_from(["\U0001f600", "\u2028", "/", ""]),
    st.text(st.characters(exclude_categories=["Cs"]), max_size=8),
)

# Payloads the core accepts more often than the core suite's (which favours edge cases).
clean_text = st.text(st.characters(exclude_categories=["Cc", "Cs"]), max_size=8)
clean_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**53) + 1, 2**53 - 1),
        st.floats(-1e15, 1e15),
        clean_text,
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(clean_text, children, max_size=3)
    ),
    max_leaves=12,
)
shapes = st.one_of(
    st.dictionaries(clean_text, clean_values, min_size=1, max_size=5),
    st.dictionaries(names, values, min_size=1, max_size=5),
)


@dataclass
class Batch:
    items: list[RecordInput]
    #: The stream (an index into ``heads``) of each item.
    streams: list[int]
    heads: list[tuple[int, bytes]]


def _declarable(value: Any, vector: str = "", pointer: str = "") -> dict[str, list[str]]:
    """Declaration patterns of ``value``'s leaves, each with kinds its value may fit."""
    if isinstance(value, dict) and value:
        found: dict[str, list[str]] = {}
        for name, child in value.items():
            token = name.replace("~", "~0").replace("/", "~1")
            found |= _declarable(child, vector + "o", f"{pointer}/{token}")
        return found
    if isinstance(value, list) and value:
        return _declarable(value[0], vector + "a", f"{pointer}/*")
    if isinstance(value, str):
        return {f"{vector}:{pointer}": ["free", "text", "integer"]}
    if isinstance(value, int) and not isinstance(value, bool):
        return {f"{vector}:{pointer}": ["free", "integer", "money"]}
    return {f"{vector}:{pointer}": ["free", "text"]}


@st.composite
def stream_declarations(draw: st.DrawFn, shape: dict[str, Any]) -> dict[str, str] | None:
    """None, declarations of the shape's leaves (kinds that fit or break them), or the core
    suite's declarations (often invalid)."""
    how = draw(st.sampled_from(["none", "fitted", "fitted", "core"]))
    if how == "none":
        return None
    if how == "core":
        return draw(declarations(shape))
    declarable = _declarable(shape)
    chosen = draw(st.lists(st.sampled_from(sorted(declarable)), max_size=4))
    return {pattern: draw(st.sampled_from(declarable[pattern])) for pattern in chosen}


@st.composite
def batches(draw: st.DrawFn) -> Batch:
    """Records of several streams and subjects interleaved; some payloads refused (damaged
    text, declared kinds they break, strict streams)."""
    tenant = draw(labels)
    streams = []
    for index in range(draw(st.integers(1, 3))):
        shape = draw(shapes)
        decls = draw(stream_declarations(shape))
        strict = bool(decls) and draw(st.booleans())
        streams.append((f"{draw(labels)}-{index}", shape, decls, strict))
    subjects = [
        (SubjectKeys.derive(draw(st.binary(min_size=32, max_size=32))), draw(labels))
        for _ in range(draw(st.integers(1, 3)))
    ]
    items, slots = [], []
    for number in range(draw(st.integers(1, 10))):
        slot = draw(st.integers(0, len(streams) - 1))
        name, shape, decls, strict = streams[slot]
        keys, subject_ref = draw(st.sampled_from(subjects))
        if draw(st.integers(0, 2)):
            # The stream's own shape, so that its declarations apply.
            payload = json.dumps(shape, ensure_ascii=draw(st.booleans())).encode()
        else:
            _, payload = draw(json_texts(shapes))
        record_id = f"rec-{number}" + draw(
            st.sampled_from(["", "", "", "", "-é\U0001f600", "\x01"])
        )
        items.append(
            RecordInput(
                tenant=tenant,
                stream=name,
                record_type=draw(labels),
                occurred_at=draw(labels),
                subject_ref=subject_ref,
                record_id=record_id,
                payload=payload,
                declarations=decls,
                strict=strict,
                salt_key=keys.salt_key,
                payload_key=keys.payload_key,
            )
        )
        slots.append(slot)
    seqs = st.one_of(st.integers(1, 5), st.integers(2**53 - 2, 2**53 + 2))
    heads = [(draw(seqs), draw(st.binary(min_size=32, max_size=32))) for _ in range(len(streams))]
    return Batch(items, slots, heads)


def opened(item: RecordInput, prepared: Prepared) -> bytes:
    return SubjectKeys(item.salt_key, item.payload_key).decrypt_payload(
        prepared.record_id, prepared.sealed_payload
    )


def run(pipeline: Pipeline, batch: Batch) -> tuple[list[Any], list[Signed], list[Any]]:
    """Prepare and sign a batch: (outcome of each item, signed records, final heads)."""
    prepared = pipeline.prepare(batch.items)
    assert len(prepared) == len(batch.items)
    outcomes: list[Any] = []
    accepted, slots = [], []
    for item, slot, result in zip(batch.items, batch.streams, prepared, strict=True):
        if isinstance(result, CommitError):
            assert type(result) is CommitError
            outcomes.append(("error", result.code, result.field))
        else:
            assert result.record_id == item.record_id
            canonical = opened(item, result)
            assert len(result.sealed_payload) == 12 + len(canonical) + 16
            outcomes.append(("ok", result.root, result.field_count, canonical))
            accepted.append(result)
            slots.append(slot)
    nonces = {record.sealed_payload[:12] for record in accepted}
    assert len(nonces) == len(accepted)
    heads = list(batch.heads)
    signed = pipeline.sign(accepted, slots, heads, INGESTED_AT)
    return outcomes, signed, heads


@settings(max_examples=500, **SETTINGS)
@given(batch=batches())
def test_native_pipeline_equals_reference(batch: Batch) -> None:
    native = run(NATIVE, batch)
    assert native == run(REFERENCE, batch)
    outcomes, signed, _ = native
    assert all(type(record) is Signed for record in signed)
    for outcome, item in zip(outcomes, batch.items, strict=True):
        if outcome[0] == "ok":
            committed = reference.commit_record(
                item.payload, item.declarations, item.strict, item.salt_key, item.record_id
            )
            assert outcome[3] == committed.canonical
    for record in signed[:2]:
        assert verify_header_signature(NATIVE.public_key, record.header, record.signature)


@settings(max_examples=50, **SETTINGS)
@given(batch=batches())
def test_streams_from_genesis_form_chains(batch: Batch) -> None:
    tenant = batch.items[0].tenant
    names_by_slot = {
        slot: item.stream for item, slot in zip(batch.items, batch.streams, strict=True)
    }
    heads = [(1, chain.stream_genesis(tenant, names_by_slot.get(slot, ""))) for slot in range(3)]
    prepared = NATIVE.prepare(batch.items)
    accepted = [
        (p, s)
        for p, s in zip(prepared, batch.streams, strict=True)
        if not isinstance(p, CommitError)
    ]
    signed = NATIVE.sign([p for p, _ in accepted], [s for _, s in accepted], heads, INGESTED_AT)
    for slot, name in names_by_slot.items():
        headers = [r.header for r, (_, s) in zip(signed, accepted, strict=True) if s == slot]
        chain.verify_links(tenant, name, headers)
        assert heads[slot][0] == len(headers) + 1


def test_keys_are_those_of_the_header_signer() -> None:
    signer = HeaderSigner.from_seed(SEED)
    for pipeline in (NATIVE, REFERENCE, pipeline_from_seed(SEED)):
        assert (pipeline.key_id, pipeline.public_key) == (signer.key_id, signer.public_key)
    assert isinstance(pipeline_from_seed(SEED), NativePipeline)


def test_without_the_extension_the_reference_pipeline_signs() -> None:
    """Where the native extension is not built, the header key's pipeline is the reference
    one (recordseal.core.backend decides), with the same key and the same header bytes."""
    items = shop_items()[:2]
    heads = [(1, bytes(32)), (1, bytes(32))]
    expected = NATIVE.sign(NATIVE.prepare(items), [0, 1], list(heads), INGESTED_AT)
    code = (
        "import sys\n"
        "sys.modules['recordseal._native'] = None  # as on a machine without the wheel\n"
        "from recordseal.core import BACKEND\n"
        "from recordseal.services.header_keys import pipeline_from_seed\n"
        "from recordseal.services.pipeline import RecordInput\n"
        "from recordseal.services.reference_pipeline import ReferencePipeline\n"
        f"pipeline = pipeline_from_seed({SEED!r})\n"
        "assert BACKEND == 'reference' and type(pipeline) is ReferencePipeline, pipeline\n"
        f"items = [RecordInput(*item) for item in {[tuple(i) for i in items]!r}]\n"
        f"signed = pipeline.sign(pipeline.prepare(items), [0, 1], {heads!r}, {INGESTED_AT!r})\n"
        "print(pipeline.key_id)\n"
        "for record in signed: print(record.header.hex(), record.signature.hex())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [
        NATIVE.key_id,
        *(f"{record.header.hex()} {record.signature.hex()}" for record in expected),
    ]


def shop_items() -> list[RecordInput]:
    keys = [SubjectKeys.derive(bytes([n]) * 32) for n in range(2)]
    declared = {"o:/amount": "money", "o:/at": "timestamp"}
    return [
        RecordInput(
            tenant="acme",
            stream=stream,
            record_type="order.placed",
            occurred_at="2026-11-21T07:20:26Z",
            subject_ref=f"sr_{number % 2}",
            record_id=f"0193a1b2-c3d4-7e5f-8a9b-{number:012}",
            payload=json.dumps(
                {"amount": 100 + number, "at": "2026-11-21T08:20:26+01:00", "note": "é\U0001f600"}
            ).encode(),
            declarations=declared if stream == "orders" else None,
            strict=False,
            salt_key=keys[number % 2].salt_key,
            payload_key=keys[number % 2].payload_key,
        )
        for number, stream in enumerate(["orders", "refunds", "orders", "orders", "refunds"])
    ]


@pytest.mark.parametrize("pipeline", [NATIVE, REFERENCE], ids=["native", "reference"])
def test_pipeline_equals_the_record_path_before_it(pipeline: Pipeline) -> None:
    """What services/records.py did per record: commit_record, then in ``build``
    chain.build_header, chain.canonical_header, HeaderSigner.sign and chain.chain_leaf."""
    items = shop_items()
    signer = HeaderSigner.from_seed(SEED)
    heads = [(1, chain.stream_genesis("acme", "orders")), (7, bytes(range(32)))]
    slots = [0 if item.stream == "orders" else 1 for item in items]
    prepared = pipeline.prepare(items)
    assert not any(isinstance(p, CommitError) for p in prepared)
    signed = pipeline.sign(prepared, slots, heads, INGESTED_AT)  # type: ignore[arg-type]
    old_heads = [(1, chain.stream_genesis("acme", "orders")), (7, bytes(range(32)))]
    for item, slot, record, new in zip(items, slots, prepared, signed, strict=True):
        assert not isinstance(record, CommitError)
        committed = commit_record(
            item.payload, item.declarations, item.strict, item.salt_key, item.record_id
        )
        assert (record.root, record.field_count) == (committed.root, committed.field_count)
        assert opened(item, record) == committed.canonical
        seq, prev = old_heads[slot]
        header = chain.build_header(
            tenant=item.tenant,
            stream=item.stream,
            seq=seq,
            record_id=item.record_id,
            record_type=item.record_type,
            occurred_at=item.occurred_at,
            subject_ref=item.subject_ref,
            root=committed.root,
            field_count=committed.field_count,
            prev=prev,
            key_id=signer.key_id,
            ingested_at=INGESTED_AT,
        )
        canonical = chain.canonical_header(header)
        old = Signed(seq, canonical, signer.sign(canonical), chain.chain_leaf(canonical))
        assert new == old
        old_heads[slot] = (seq + 1, old.chain_leaf)
    assert heads == old_heads == [(4, signed[3].chain_leaf), (9, signed[4].chain_leaf)]


def test_refusals_in_place_as_the_reference() -> None:
    """Refusals decided before the batch's work (size, declarations, record id) and during
    it keep their places, with the reference's code and field."""
    (good, *_) = shop_items()
    items = [
        good,
        good._replace(record_id="rec-big", payload=b'{"a":"' + b"x" * 262_144 + b'"}'),
        good._replace(record_id="rec-bad-declarations", declarations={"o:/amount": "bogus"}),
        good._replace(record_id="\ud800"),
        good._replace(record_id="\ud800", salt_key=b"short"),
        good._replace(record_id="rec-short-key", salt_key=b"short"),
        good._replace(record_id="rec-strict", declarations={"o:/at": "timestamp"}, strict=True),
        good._replace(record_id="rec-proxy", declarations=MappingProxyType({"o:/amount": "text"})),
        good._replace(record_id="rec-empty", payload=b"{}"),
        good._replace(record_id="rec-last"),
    ]

    def summary(results: list[Prepared | CommitError]) -> list[Any]:
        return [
            (r.code, r.field) if isinstance(r, CommitError) else (r.root, r.field_count)
            for r in results
        ]

    native = summary(NATIVE.prepare(items))
    assert native == summary(REFERENCE.prepare(items))
    assert [code if isinstance(code, str) else "ok" for code, _ in native] == [
        "ok",
        "payload_too_large",
        "unknown_kind",
        "record_id_invalid",
        "salt_key_invalid",
        "salt_key_invalid",
        "undeclared_field",
        "value_type",
        "payload_empty",
        "ok",
    ]


@pytest.mark.parametrize("pipeline", [NATIVE, REFERENCE], ids=["native", "reference"])
def test_sign_of_nothing(pipeline: Pipeline) -> None:
    heads = [(1, bytes(32))]
    assert pipeline.prepare([]) == []
    assert pipeline.sign([], [], heads, INGESTED_AT) == []
    assert heads == [(1, bytes(32))]


def test_native_sign_refuses_bad_places_and_keeps_the_heads() -> None:
    prepared = NATIVE.prepare(shop_items()[:2])
    heads = [(1, bytes(32))]
    with pytest.raises(ValueError, match="slot"):
        NATIVE.sign(prepared, [0, 1], heads, INGESTED_AT)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="slots"):
        NATIVE.sign(prepared, [0], heads, INGESTED_AT)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="32-byte"):
        NATIVE.sign(prepared, [0, 0], [(1, b"short")], INGESTED_AT)  # type: ignore[arg-type]
    with pytest.raises(OverflowError):
        NATIVE.sign(prepared, [0, 0], [(2**64 - 1, bytes(32))], INGESTED_AT)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        NATIVE.sign(REFERENCE.prepare(shop_items()[:1]), [0], heads, INGESTED_AT)  # type: ignore[arg-type]
    assert heads == [(1, bytes(32))]


def test_native_prepare_refuses_a_malformed_input() -> None:
    (good, *_) = shop_items()
    with pytest.raises(ValueError, match="32 bytes"):
        NATIVE.prepare([good._replace(payload_key=b"short")])
    with pytest.raises(ValueError, match="11 members"):
        NATIVE.prepare([tuple(good)[:10]])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        NATIVE.prepare([good._replace(payload="{}")])  # type: ignore[arg-type]
