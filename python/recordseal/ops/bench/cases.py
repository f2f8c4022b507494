"""The operations ``recordseal bench`` times, each written once against whichever core the
process runs (``RECORDSEAL_CORE``, ``core/backend.py``): the commitment API of
:mod:`recordseal.core`, the request reader of the ingest pipeline the service would use
(``services/header_keys.pipeline_from_seed``) and the offline verifier (:mod:`recordseal.verify`),
which both call the same core.

A case builds its call from the inputs (``payloads.py``, and the bundle of ``world.py``), and
says what its result is in bytes (``fingerprint``): both cores must give the same, or the run
stops, so a figure is never the cost of a wrong answer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from recordseal import core
from recordseal.ops.bench import payloads
from recordseal.ops.bench.world import World

Call = Callable[[], Any]


@dataclass(frozen=True)
class Case:
    """One operation: its name, the group it belongs to, what one call does (``per_call``
    ``unit``\\ s), how to build the call, and its result's bytes."""

    name: str
    group: str
    unit: str
    per_call: int
    build: Callable[[World], Call]
    fingerprint: Callable[[Any], bytes]


def _same(result: Any) -> bytes:
    return bytes(result)


def _proof(result: list[bytes]) -> bytes:
    return b"".join(result)


def _accepted(result: None) -> bytes:
    return b"accepted"  # a refusal raises


def _root(result: Any) -> bytes:
    return bytes(result.root)


def _reads(result: list[Any]) -> bytes:
    digest = hashlib.sha256()
    for read in result:
        digest.update(f"{read.stream}|{read.subject_id}|{read.occurred_at}|".encode())
        digest.update(read.canonical_payload())
    return digest.digest()


def _verdict(result: Any) -> bytes:
    return " ".join([result.verdict, *(check.status for check in result.checks)]).encode()


def _canonicalize(world: World) -> Call:
    record = payloads.record_1k()
    return lambda: core.canonicalize(record)


def _encode(kind: str) -> Callable[[World], Call]:
    value = payloads.KIND_VALUES[kind]
    return lambda world: lambda: core.encode_value(kind, value)


def _commit(payload: bytes, declarations: dict[str, str] | None) -> Callable[[World], Call]:
    key, record_id = payloads.SALT_KEY, payloads.RECORD_ID
    return lambda world: lambda: core.commit_record(payload, declarations, False, key, record_id)


TREE_SIZE, OLD_SIZE, INDEX = 4096, 2500, 1234


def _root_of(world: World) -> Call:
    leaves = payloads.leaves(TREE_SIZE)
    return lambda: core.merkle_root(leaves)


def _inclusion(world: World) -> Call:
    leaves = payloads.leaves(TREE_SIZE)
    return lambda: core.inclusion_proof(leaves, INDEX)


def _verify_inclusion(world: World) -> Call:
    leaves = payloads.leaves(TREE_SIZE)
    proof, root = core.inclusion_proof(leaves, INDEX), core.merkle_root(leaves)
    return lambda: core.verify_inclusion(leaves[INDEX], INDEX, TREE_SIZE, proof, root)


def _consistency(world: World) -> Call:
    leaves = payloads.leaves(TREE_SIZE)
    return lambda: core.consistency_proof(leaves, OLD_SIZE)


def _verify_consistency(world: World) -> Call:
    leaves = payloads.leaves(TREE_SIZE)
    old, new = core.merkle_root(leaves[:OLD_SIZE]), core.merkle_root(leaves)
    proof = core.consistency_proof(leaves, OLD_SIZE)
    return lambda: core.verify_consistency(OLD_SIZE, TREE_SIZE, old, new, proof)


BATCH = 100


def _read_request(world: World) -> Call:
    from recordseal.services.header_keys import pipeline_from_seed

    read, body = pipeline_from_seed(bytes(32)).read, payloads.batch_body(BATCH)
    return lambda: read(body, None, True)


def _verify_bundle(world: World) -> Call:
    from recordseal.verify import load_key_directory, load_trust_store, verify_bundle

    keys, trust = load_key_directory(world.keys), load_trust_store(world.trust)
    return lambda: verify_bundle(world.bundle, keys, trust)


CASES: tuple[Case, ...] = (
    Case("canonicalize 1 KB", "RFC 8785", "call", 1, _canonicalize, _same),
    *(
        Case(f"encode_value {kind}", "field kinds", "call", 1, _encode(kind), _same)
        for kind in payloads.KIND_VALUES
    ),
    Case("commit_record 5 fields", "records", "record", 1,
         _commit(payloads.record_small(), None), _root),
    Case("commit_record 1 KB, 20 fields", "records", "record", 1,
         _commit(payloads.record_1k(), payloads.DECLARATIONS_1K), _root),
    Case("commit_record 4096 fields", "records", "record", 1,
         _commit(payloads.record_4096(), None), _root),
    Case(f"merkle_root {TREE_SIZE} leaves", "RFC 6962", "call", 1, _root_of, _same),
    Case(f"inclusion_proof {TREE_SIZE} leaves", "RFC 6962", "call", 1, _inclusion, _proof),
    Case(f"verify_inclusion {TREE_SIZE} leaves", "RFC 6962", "call", 1, _verify_inclusion,
         _accepted),
    Case(f"consistency_proof {OLD_SIZE} to {TREE_SIZE}", "RFC 6962", "call", 1, _consistency,
         _proof),
    Case(f"verify_consistency {OLD_SIZE} to {TREE_SIZE}", "RFC 6962", "call", 1,
         _verify_consistency, _accepted),
    Case(f"read_request batch of {BATCH} x 1 KB", "ingest", "record", BATCH, _read_request,
         _reads),
    Case("verify bundle, 20 fields, witnessed", "verify", "bundle", 1, _verify_bundle,
         _verdict),
)  # fmt: skip

BY_NAME = {case.name: case for case in CASES}
