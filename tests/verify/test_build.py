"""The builder the service uses, and the loaders of the key directory and the trust store."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from recordseal.core import commit_record
from recordseal.services.bundles import (
    DisclosureError,
    DuplicateField,
    UnknownField,
    build_bundle,
    field_disclosures,
    leaf_values,
    tlog_proof_text,
)
from recordseal.tlog import CosignatureSigner, Ed25519Signer
from recordseal.verify import (
    BundleError,
    decode_bundle,
    encode_bundle,
    load_key_directory,
    load_trust_store,
)
from recordseal.verify.tlogproof import parse_tlog_proof

from .factory import World

AWKWARD = {
    "": 1,
    "a/b": {"~": [10, {"c/d": True}], "e": []},
    "x": [[], {}, [None, -0.0, 1.5e-7]],
    "é": "text",
    "deep": {"er": {"est": "value"}},
}


def test_leaf_values_match_the_committed_paths() -> None:
    committed = commit_record(json.dumps(AWKWARD).encode(), None, False, os.urandom(32), "r")
    values = leaf_values(AWKWARD)
    assert sorted(values, key=str.encode) == [leaf.path for leaf in committed.leaves]
    assert values["o:/"] == 1
    assert values["oo:/a~1b/e"] == []
    assert values["ooa:/a~1b/~0/0"] == 10
    assert values["ooao:/a~1b/~0/1/c~1d"] is True
    assert values["oa:/x/1"] == {}
    assert values["oaa:/x/2/1"] == -0.0


def test_disclosures_verify_for_awkward_paths() -> None:
    committed = commit_record(json.dumps(AWKWARD).encode(), None, False, os.urandom(32), "r")
    wanted = [leaf.path for leaf in committed.leaves]
    fields = field_disclosures(committed, leaf_values(AWKWARD), wanted)
    assert [field.path for field in fields] == wanted
    assert [field.index for field in fields] == list(range(len(wanted)))
    assert all(field.kind == "free" for field in fields)


def test_disclosures_keep_the_order_asked_for(world: World) -> None:
    target = world.target
    wanted = ["oo:/customer/name", "o:/amount"]
    fields = field_disclosures(target.committed, leaf_values(target.payload), wanted)
    assert [field.path for field in fields] == wanted
    assert fields[1].kind == "money"
    assert fields[1].value == 1400


@pytest.mark.parametrize("path", ["o:/missing", "o:/customer", "oo:/customer/tags", ""])
def test_unknown_field_names_the_path(world: World, path: str) -> None:
    target = world.target
    with pytest.raises(UnknownField) as raised:
        field_disclosures(target.committed, leaf_values(target.payload), ["o:/amount", path])
    assert raised.value.path == path
    assert repr(path) in str(raised.value)
    assert isinstance(raised.value, ValueError)


def test_a_path_asked_twice_is_refused(world: World) -> None:
    target = world.target
    with pytest.raises(DuplicateField):
        field_disclosures(target.committed, leaf_values(target.payload), ["o:/amount"] * 2)


@pytest.mark.parametrize("value", [1401, "1400", None])
def test_a_stale_value_is_refused(world: World, value: Any) -> None:
    target = world.target
    values = {**leaf_values(target.payload), "o:/amount": value}
    with pytest.raises(DisclosureError, match="not the committed one"):
        field_disclosures(target.committed, values, ["o:/amount"])


def test_tlog_proof_text_round_trips() -> None:
    hashes = [bytes([n]) * 32 for n in range(3)]
    checkpoint = "log.example\n8\n" + "A" * 43 + "=\n\n— log.example AAAA\n"
    text = tlog_proof_text(5, hashes, checkpoint)
    assert text.startswith("c2sp.org/tlog-proof@v1\nindex 5\nAAAA")
    assert text.endswith("\n\n" + checkpoint)
    proof = parse_tlog_proof(text)
    assert (proof.index, list(proof.hashes), proof.checkpoint) == (5, hashes, checkpoint)
    assert parse_tlog_proof(tlog_proof_text(0, [], checkpoint)).hashes == ()


@pytest.mark.parametrize(
    "text",
    [
        "c2sp.org/tlog-proof@v2\nindex 1\n\ncp\n",
        "c2sp.org/tlog-proof@v1\nindex 01\n\ncp\n",
        "c2sp.org/tlog-proof@v1\nindex -1\n\ncp\n",
        "c2sp.org/tlog-proof@v1\nindex 1\nAAAA\n\ncp\n",
        "c2sp.org/tlog-proof@v1\nextra !!\nindex 1\n\ncp\n",
        "c2sp.org/tlog-proof@v1\nindex 1\n",
        "c2sp.org/tlog-proof@v1\nindex 99999999999999999999\n\ncp\n",
    ],
)
def test_tlog_proof_parsing_is_strict(text: str) -> None:
    with pytest.raises(BundleError):
        parse_tlog_proof(text)


def test_the_extra_line_is_accepted_and_kept() -> None:
    proof = parse_tlog_proof("c2sp.org/tlog-proof@v1\nextra aGk=\nindex 3\n\ncp\n")
    assert (proof.extra, proof.index) == (b"hi", 3)


def test_build_bundle_round_trips(world: World) -> None:
    bundle = decode_bundle(world.bundle())
    again = build_bundle(
        world.target.header,
        world.target.signature,
        bundle.fields,
        bundle.seal,
        bundle.coverage,
    )
    assert again == bundle
    assert decode_bundle(encode_bundle(again)) == bundle
    assert json.loads(encode_bundle(again))["header"] == world.target.header


def test_build_bundle_refuses_a_header_of_the_wrong_shape(world: World) -> None:
    with pytest.raises(BundleError, match="seq"):
        build_bundle({**world.target.header, "seq": "4"}, b"", [])


# --- loaders ---------------------------------------------------------------------------------


def test_load_key_directory(world: World) -> None:
    keys = load_key_directory(json.dumps(world.keys_document()))
    assert keys.keys[0].key_id == world.header_signer.key_id


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.update(format="recordseal/keys/v2"),
        lambda d: d["keys"][0].update(key_id="0" * 16),
        lambda d: d["keys"][0].update(algorithm="RSA"),
        lambda d: d["keys"][0].update(not_before="soon"),
        lambda d: d["keys"][0].update(compromised_at="2026-02-30T00:00:00Z"),
        lambda d: d["keys"][0].update(compromised_at=1),
        lambda d: d["logs"][0].update(compromised_at="yesterday"),
        lambda d: d["logs"][0].update(compromised_at=False),
        lambda d: d["keys"][0].update(public_key="00"),
        lambda d: d["keys"].append(dict(d["keys"][0])),
        lambda d: d["logs"][0].update(vkey="not a vkey"),
        lambda d: d["logs"][0].update(vkey=CosignatureSigner.generate("w").vkey),
        lambda d: d.update(extra=True),
    ],
    ids=[
        "format",
        "key id",
        "algorithm",
        "not_before",
        "compromised_at",
        "compromised_at not a string",
        "a log's compromised_at",
        "a log's compromised_at not a string",
        "public key",
        "listed twice",
        "vkey",
        "cosigning vkey",
        "unknown member",
    ],
)
def test_key_directory_errors(world: World, edit: Any) -> None:
    document = world.keys_document()
    edit(document)
    with pytest.raises(BundleError, match=r"^key directory: "):
        load_key_directory(json.dumps(document))


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.update(quorum=0),
        lambda d: d["witnesses"][0].update(vkey=Ed25519Signer.generate("w").verifier().vkey),
        lambda d: d.update(timestamp_authorities=[{"name": "t", "roots": ["not a pem"]}]),
        lambda d: d.update(timestamp_authorities=[{"name": "t", "roots": []}]),
        lambda d: d.update(format=None),
    ],
    ids=["quorum", "plain vkey", "pem", "no roots", "format"],
)
def test_trust_store_errors(world: World, edit: Any) -> None:
    document = world.trust_document()
    edit(document)
    with pytest.raises(BundleError, match=r"^trust store: "):
        load_trust_store(json.dumps(document))


def test_the_record_tree_gives_every_audit_path_of_the_core() -> None:
    from recordseal.core import inclusion_proof
    from recordseal.services.bundles import RecordTree

    for size in range(1, 70):
        leaves = [bytes([i % 256, size]) * 16 for i in range(size)]
        tree = RecordTree(leaves)
        assert [tree.path(i) for i in range(size)] == [
            inclusion_proof(leaves, i) for i in range(size)
        ]
        for outside in (-1, size):
            with pytest.raises(ValueError, match="outside"):
                tree.path(outside)
