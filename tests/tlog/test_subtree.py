"""ML-DSA-44 cosignatures (c2sp.org/tlog-cosignature v1.1, type 0x06): the ``subtree/v1``
message, key IDs and vkeys, signing and verifying with ``cryptography``, and the published
and shared vectors of tests/vectors/mldsa44.json (torchwood's checkpoint among them)."""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PrivateKey

from recordseal.tlog import (
    MLDSA44,
    Checkpoint,
    Cosignature,
    CosignatureSigner,
    Ed25519Signer,
    MLDSA44CosignatureSigner,
    MLDSA44CosignatureVerifier,
    NoteSignature,
    TlogError,
    cosigner_verifier,
    log_verifier,
    open_checkpoint,
    open_note,
    parse_note,
    parse_vkey,
    sign_note,
    subtree_message,
    verify_cosignatures,
)

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).parents[1] / "vectors" / "mldsa44.json").read_text(encoding="utf-8")
)
ROOT = hashlib.sha256(b"a root").digest()
TEXT = Checkpoint("example.com/log", 5, ROOT).text()
SEED = hashlib.sha256(b"tests: an ML-DSA-44 key").digest()


@pytest.fixture(scope="module")
def witness() -> MLDSA44CosignatureSigner:
    return MLDSA44CosignatureSigner.from_seed("witness.example/w1", SEED)


def test_torchwoods_published_checkpoint_verifies() -> None:
    """filippo.io/torchwood's ML-DSA-44 log checkpoint (type 0x06, timestamp 0) opens with
    its vkey, and its seed gives that vkey."""
    torchwood = VECTORS["torchwood"]
    verifier = log_verifier(torchwood["vkey"])
    assert isinstance(verifier, MLDSA44CosignatureVerifier)
    checkpoint, note = open_checkpoint(torchwood["signed_checkpoint"], [verifier])
    assert (checkpoint.origin, checkpoint.size) == ("example.com/mldsa-log", 1)
    assert checkpoint.root_hash == hashlib.sha256(b"\x00testonly").digest()
    assert Cosignature.from_note_signature(note.verified[0]).timestamp == 0
    signer = MLDSA44CosignatureSigner.from_seed(
        "example.com/mldsa-log", bytes.fromhex(torchwood["seed"]), clock=None
    )
    assert signer.vkey == torchwood["vkey"]
    assert f"{signer.key_id:08x}" == "b5df45c5"


def test_torchwoods_checkpoint_refuses_a_changed_body() -> None:
    torchwood = VECTORS["torchwood"]
    changed = torchwood["signed_checkpoint"].replace("\n1\n", "\n2\n", 1)
    with pytest.raises(TlogError) as refused:
        open_checkpoint(changed, [log_verifier(torchwood["vkey"])])
    assert refused.value.code == "signature_invalid"


@pytest.mark.parametrize("case", VECTORS["messages"], ids=lambda case: case["name"])
def test_the_message_is_the_spelt_out_structure(case: dict[str, Any]) -> None:
    built = subtree_message(case["cosigner"], case["timestamp"], case["checkpoint"])
    assert built.hex() == case["message"]


def test_the_message_layout() -> None:
    """Label, one length byte then the name, the timestamp, one length byte then the origin,
    start 0, end the size, the root: RFC 8446 presentation, big-endian."""
    message = subtree_message("w", 7, TEXT)
    expected = b"subtree/v1\n\x00" + b"\x01w" + struct.pack(">Q", 7)
    expected += b"\x0fexample.com/log" + struct.pack(">QQ", 0, 5) + ROOT
    assert message == expected


@pytest.mark.parametrize(
    ("name", "timestamp", "text", "code"),
    [
        ("n" * 256, 1, TEXT, "cosignature_malformed"),
        ("w", 1, Checkpoint("o" * 256, 5, ROOT).text(), "cosignature_malformed"),
        ("w", 1, TEXT + "extension\n", "cosignature_malformed"),
        ("w", 1, Checkpoint("a", 0, ROOT).text(), "cosignature_malformed"),
        ("w", 2**63, TEXT, "cosignature_malformed"),
        ("w", 1, "example.com/log\n5\n", "checkpoint_malformed"),
    ],
    ids=["name of 256 bytes", "origin of 256 bytes", "extension line", "empty tree, other root",
         "timestamp 2^63", "not a checkpoint"],
)  # fmt: skip
def test_what_the_message_refuses(name: str, timestamp: int, text: str, code: str) -> None:
    with pytest.raises(TlogError) as refused:
        subtree_message(name, timestamp, text)
    assert refused.value.code == code


def test_limits_of_the_message_are_accepted() -> None:
    assert subtree_message("n" * 255, 1, Checkpoint("o" * 255, 5, ROOT).text())
    empty = Checkpoint("a", 0, hashlib.sha256(b"").digest()).text()
    assert subtree_message("w", 1, empty)


def test_key_id_and_vkey(witness: MLDSA44CosignatureSigner) -> None:
    public = MLDSA44PrivateKey.from_seed_bytes(SEED).public_key().public_bytes_raw()
    assert len(public) == 1312
    digest = hashlib.sha256(b"witness.example/w1\n\x06" + public).digest()
    assert witness.key_id == int.from_bytes(digest[:4], "big")
    key = parse_vkey(witness.vkey)
    assert (key.signature_type, key.public_key) == (MLDSA44, public)
    assert (
        witness.vkey
        == f"witness.example/w1+{witness.key_id:08x}+" + base64.b64encode(b"\x06" + public).decode()
    )
    assert cosigner_verifier(witness.vkey) == witness.verifier()
    assert log_verifier(witness.vkey) == witness.verifier()


def test_vkeys_of_the_wrong_size_or_role_are_refused(witness: MLDSA44CosignatureSigner) -> None:
    name, key_id, material = witness.vkey.split("+", 2)
    short = base64.b64encode(base64.b64decode(material)[:-1]).decode()
    with pytest.raises(TlogError) as refused:
        parse_vkey(f"{name}+{key_id}+{short}")
    assert refused.value.code == "key_malformed"
    with pytest.raises(TlogError) as refused:
        cosigner_verifier(Ed25519Signer.generate("log.example").verifier().vkey)
    assert refused.value.code == "key_unsupported"  # a log's plain key is no cosigner's
    with pytest.raises(TlogError) as refused:
        log_verifier(CosignatureSigner.generate("w.example").vkey)
    assert refused.value.code == "key_unsupported"  # an Ed25519 witness key is no log's


def test_a_cosignature_verifies_with_cryptography(witness: MLDSA44CosignatureSigner) -> None:
    """The signature is pure ML-DSA-44 (empty context) over the message: ``cryptography``'s
    own verify accepts it."""
    cosignature = witness.cosign(TEXT, 1767225600)
    assert len(cosignature.signature) == 2420
    public = MLDSA44PrivateKey.from_seed_bytes(SEED).public_key()
    public.verify(cosignature.signature, subtree_message(witness.name, 1767225600, TEXT))
    line = Cosignature.parse_line(cosignature.line)
    assert line == cosignature
    witness.verifier().verify_cosignature(TEXT, line)


def test_tampering_is_refused(witness: MLDSA44CosignatureSigner) -> None:
    cosignature = witness.cosign(TEXT, 1767225600)
    verifier = witness.verifier()
    later = Cosignature(cosignature.name, cosignature.key_id, 1767225601, cosignature.signature)
    other = Checkpoint("example.com/log", 6, ROOT).text()
    for text, candidate in ((TEXT, later), (other, cosignature)):
        with pytest.raises(TlogError) as refused:
            verifier.verify_cosignature(text, candidate)
        assert refused.value.code == "cosignature_invalid"
    with pytest.raises(TlogError) as refused:
        verifier.verify_cosignature(TEXT, cosignature, max_timestamp=1767225599)
    assert refused.value.code == "cosignature_future"


def test_the_log_signs_with_timestamp_zero_and_the_witness_with_the_time() -> None:
    log = MLDSA44CosignatureSigner.from_seed("example.com/log", SEED, clock=None)
    witness = MLDSA44CosignatureSigner.from_seed("w.example", SEED, clock=lambda: 1767225600.7)
    signed = sign_note(TEXT, [log])
    stamped = Cosignature.from_note_signature(parse_note(signed).signatures[0])
    assert stamped.timestamp == 0
    assert witness.cosign(TEXT).timestamp == 1767225600


def test_a_dual_signed_checkpoint_opens_with_either_key() -> None:
    """Ed25519 and ML-DSA-44 signatures under the origin: each key's verifier opens the note
    alone and ignores the other's line (unknown key); both together verify both."""
    ed25519 = Ed25519Signer.from_seed("example.com/log", SEED)
    mldsa = MLDSA44CosignatureSigner.from_seed("example.com/log", SEED, clock=None)
    signed = sign_note(TEXT, [ed25519, mldsa])
    assert len(open_note(signed, [ed25519.verifier()]).unverified) == 1
    assert len(open_note(signed, [mldsa.verifier()]).unverified) == 1
    assert len(open_note(signed, [ed25519.verifier(), mldsa.verifier()]).verified) == 2


def test_verify_cosignatures_takes_keys_of_both_algorithms(
    witness: MLDSA44CosignatureSigner,
) -> None:
    ed25519 = CosignatureSigner.from_seed("witness.example/w1", SEED)
    lines = [witness.cosign(TEXT, 10).note_signature, ed25519.cosign(TEXT, 11).note_signature]
    found = verify_cosignatures(TEXT, lines, [witness.verifier(), ed25519.verifier()])
    assert [c.timestamp for c in found] == [10, 11]


@pytest.mark.parametrize("case", VECTORS["cosignatures"]["cases"], ids=lambda case: case["name"])
def test_the_cosignature_vectors(case: dict[str, Any]) -> None:
    verifier = cosigner_verifier(case.get("vkey") or VECTORS["cosignatures"]["vkey"])
    signature = NoteSignature.parse_line(case["line"])
    if case["error"] is None:
        assert verify_cosignatures(case["checkpoint"], [signature], [verifier])
        return
    with pytest.raises(TlogError) as refused:
        verify_cosignatures(case["checkpoint"], [signature], [verifier])
    assert refused.value.code == case["error"]


def test_the_documented_example_verifies() -> None:
    example = VECTORS["example"]
    ed25519 = Ed25519Signer.from_seed(
        example["log_name"], hashlib.sha256(b"recordseal docs: log key").digest()
    )
    mldsa = MLDSA44CosignatureSigner.from_seed(
        example["log_name"], hashlib.sha256(b"recordseal docs: log ML-DSA-44 key").digest()
    )
    witness = MLDSA44CosignatureSigner.from_seed(
        example["witness_name"], hashlib.sha256(b"recordseal docs: witness ML-DSA-44 key").digest()
    )
    assert (ed25519.verifier().vkey, mldsa.vkey, witness.vkey) == (
        example["log_vkey"], example["log_mldsa_vkey"], example["witness_mldsa_vkey"]
    )  # fmt: skip
    note = example["signed_checkpoint"] + example["cosignature_line"]
    verifiers = [log_verifier(example["log_vkey"]), log_verifier(example["log_mldsa_vkey"])]
    verifiers.append(cosigner_verifier(example["witness_mldsa_vkey"]))
    assert len(open_note(note, verifiers).verified) == 3
    cosignature = Cosignature.parse_line(example["cosignature_line"])
    assert cosignature.timestamp == example["timestamp"]


def test_docs_show_the_vectors() -> None:
    """docs/tlog.md's ML-DSA-44 worked example is the vector file's: the messages in hex, the
    vkeys, key IDs and lines as far as the page shows them, the monitoring path."""
    shown = (Path(__file__).parents[2] / "docs" / "tlog.md").read_text()
    example = VECTORS["example"]
    for message in VECTORS["messages"][:2]:
        assert message["message"] in shown, message["name"]
    for vkey in (example["log_mldsa_vkey"], example["witness_mldsa_vkey"]):
        assert vkey[:50] in shown
    signed = example["signed_checkpoint"].split("\n")
    assert signed[-3] in shown  # the Ed25519 line, whole
    assert signed[-2][:80] in shown  # the ML-DSA-44 line, cut
    assert example["cosignature_line"][:41] in shown
    origin_hash = hashlib.sha256(example["log_name"].encode()).hexdigest()
    assert f"/monitor/{origin_hash}/checkpoint" in shown
