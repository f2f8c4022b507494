"""Genesis roots (spec panel 2.5, 9.2) against the language-neutral vectors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from recordseal.core import leaf_hash
from recordseal.ledger import sealer
from recordseal.merkle.genesis import (
    SUCCESSOR_GENESIS_TAG,
    TENANT_GENESIS_TAG,
    log_origin,
    successor_genesis,
    successor_origin,
    tenant_genesis,
)
from recordseal.tlog import Checkpoint, Ed25519Signer, open_checkpoint, sign_checkpoint

VECTORS = json.loads((Path(__file__).parents[1] / "vectors" / "genesis.json").read_text())


def test_the_tag_is_the_spec_tag_with_the_brand_and_ends_in_v1() -> None:
    assert VECTORS["tag"] == TENANT_GENESIS_TAG.decode()
    assert TENANT_GENESIS_TAG == b"recordseal-audit-tenant-genesis-v1"


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda case: case["name"])
def test_genesis_vectors(case: dict[str, Any]) -> None:
    genesis = tenant_genesis(case["tenant"], case["fleet"])
    assert genesis.hex() == case["genesis"]
    assert leaf_hash(genesis).hex() == case["root_size_1"]


def test_length_prefixes_separate_a_bc_from_ab_c() -> None:
    by_name = {case["name"]: case for case in VECTORS["cases"]}
    assert by_name["pair a, bc"]["genesis"] != by_name["pair ab, c"]["genesis"]
    # without the prefixes both preimages would end in the same three bytes "abc"
    assert tenant_genesis("a", "bc") != tenant_genesis("ab", "c")


def test_equal_fleet_ids_of_two_tenants_and_of_no_tenant_have_distinct_chains() -> None:
    roots = {tenant_genesis(tenant, "fleet-1") for tenant in ("acme", "globex", None)}
    assert len(roots) == 3


def test_the_sealer_uses_the_same_derivation() -> None:
    assert sealer.tenant_genesis is tenant_genesis


def test_log_origins_of_tenant_and_legacy_fleets() -> None:
    assert log_origin("svc.example", "acme", "f1") == "svc.example/acme/f1"
    assert log_origin("svc.example", None, "f1") == "svc.example/f1"


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda case: case["name"])
def test_each_vector_spells_out_its_preimage(case: dict[str, Any]) -> None:
    """The vector's preimage is tag ‖ le32(len) ‖ tenant ‖ le32(len) ‖ fleet, byte by byte,
    and hashes to its genesis: the length width (4 bytes, little endian) is pinned here."""
    import hashlib

    tenant, fleet = (case["tenant"] or "").encode(), case["fleet"].encode()
    spelled = (
        TENANT_GENESIS_TAG
        + len(tenant).to_bytes(4, "little")
        + tenant
        + len(fleet).to_bytes(4, "little")
        + fleet
    )
    assert bytes.fromhex(case["preimage"]) == spelled
    assert hashlib.sha256(spelled).hexdigest() == case["genesis"]


SUCCESSORS = json.loads((Path(__file__).parents[1] / "vectors" / "successors.json").read_text())


def test_the_successor_tag_is_its_own_and_ends_in_v1() -> None:
    assert SUCCESSORS["tag"] == SUCCESSOR_GENESIS_TAG.decode() == "recordseal-log-successor-v1"
    assert SUCCESSOR_GENESIS_TAG != TENANT_GENESIS_TAG


@pytest.mark.parametrize("case", SUCCESSORS["cases"], ids=lambda case: case["name"])
def test_successor_vectors(case: dict[str, Any]) -> None:
    """Leaf 0 of a successor log, its root at size 1, its origin and its signed checkpoint of
    size 1 (docs/tlog.md, "Successor logs")."""
    root = bytes.fromhex(case["root"])
    leaf = successor_genesis(case["predecessor"], case["size"], root)
    assert leaf.hex() == case["leaf"]
    assert hashlib.sha256(bytes.fromhex(case["preimage"])).hexdigest() == case["leaf"]
    assert leaf_hash(leaf).hex() == case["root_size_1"]
    assert successor_origin(case["first"], case["predecessor"]) == case["successor"]
    seed = hashlib.sha256(b"recordseal docs: log key").digest()
    checkpoint = Checkpoint(case["successor"], 1, leaf_hash(leaf))
    signer = Ed25519Signer.from_seed(case["successor"], seed)
    assert sign_checkpoint(checkpoint, signer) == case["signed_checkpoint"]
    opened, _ = open_checkpoint(case["signed_checkpoint"], [signer.verifier()])
    assert (opened.origin, opened.size, opened.root_hash) == (case["successor"], 1, leaf_hash(leaf))


def test_a_successor_commits_to_every_part_of_the_predecessor_checkpoint() -> None:
    root = bytes(32)
    leaves = {
        successor_genesis("svc/a/f", 5, root),
        successor_genesis("svc/a/g", 5, root),
        successor_genesis("svc/a/f", 6, root),
        successor_genesis("svc/a/f", 5, b"\x01" + root[1:]),
    }
    assert len(leaves) == 4
    with pytest.raises(ValueError):
        successor_genesis("svc/a/f", 5, b"short")


def test_successor_origins_refuse_another_line() -> None:
    assert successor_origin("svc/a/f", "svc/a/f/9") == "svc/a/f/10"
    for stranger in ("svc/a/g", "svc/a/f/x", "svc/a/f2"):
        with pytest.raises(ValueError):
            successor_origin("svc/a/f", stranger)
