"""The log's keys in ``keys/`` (ledger/log_keys.py): each generation an Ed25519 key and an
ML-DSA-44 key beside it, made at first start, rotated and retired together, every checkpoint
signed by both (docs/tlog.md, "Dual-signed checkpoints")."""

from __future__ import annotations

import hashlib
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PrivateKey

from recordseal.ledger import log_keys
from recordseal.ledger.log_keys import ED25519, ML_DSA_44, LogKeyring
from recordseal.tlog import (
    Checkpoint,
    Cosignature,
    MLDSA44CosignatureSigner,
    log_verifier,
    open_checkpoint,
    parse_note,
    sign_note,
)

ORIGIN = "svc.example/acme/default"
TEXT = Checkpoint(ORIGIN, 3, hashlib.sha256(b"root").digest()).text()


def _names(keys: list[log_keys.LogKey]) -> list[tuple[str, str, bool]]:
    return [(key.path.name, key.algorithm, key.retired) for key in keys]


def test_a_new_directory_gets_both_keys(tmp_path: Path) -> None:
    keys = log_keys.log_keys(tmp_path)
    assert _names(keys) == [
        ("log-signing.ed25519", ED25519, False),
        ("log-signing.ml-dsa-44", ML_DSA_44, False),
    ]
    mldsa = tmp_path / "log-signing.ml-dsa-44"
    assert len(mldsa.read_bytes()) == 32 and mldsa.stat().st_mode & 0o777 == 0o600
    assert log_keys.log_keys(tmp_path) == keys  # made once


def test_a_directory_made_before_ml_dsa_gets_its_key_at_first_start(tmp_path: Path) -> None:
    (tmp_path / "log-signing.ed25519").write_bytes(bytes(32))
    ed25519 = log_keys.log_keys(tmp_path)[0]
    assert ed25519.seed == bytes(32)  # the Ed25519 key is kept
    assert (tmp_path / "log-signing.ml-dsa-44").is_file()


def test_every_checkpoint_is_signed_by_both(tmp_path: Path) -> None:
    ring = LogKeyring.of_directory(tmp_path)
    signers = ring.signing(ORIGIN)
    assert [type(s).__name__ for s in signers] == ["Ed25519Signer", "MLDSA44CosignatureSigner"]
    signed = sign_note(TEXT, signers)
    _, note = open_checkpoint(signed, [log_verifier(s.verifier().vkey) for s in signers])
    assert len(note.verified) == 2
    # The log states no time with its ML-DSA-44 signature.
    assert Cosignature.from_note_signature(parse_note(signed).signatures[1]).timestamp == 0


def test_the_ml_dsa_key_is_named_by_its_public_key(tmp_path: Path) -> None:
    mldsa = log_keys.log_keys(tmp_path)[1]
    assert mldsa.seed is not None
    public = MLDSA44PrivateKey.from_seed_bytes(mldsa.seed).public_key().public_bytes_raw()
    assert mldsa.key_id == hashlib.sha256(public).hexdigest()[:16]
    signer = mldsa.signer(ORIGIN)
    assert isinstance(signer, MLDSA44CosignatureSigner)
    assert signer.public_key == public


def test_rotation_makes_and_retires_generations_whole(tmp_path: Path) -> None:
    log_keys.log_keys(tmp_path)
    new = log_keys.rotate(tmp_path)
    assert new.path.name == "log-signing-2.ed25519"
    assert _names(log_keys.log_keys(tmp_path)) == [
        ("log-signing.ed25519", ED25519, False),
        ("log-signing.ml-dsa-44", ML_DSA_44, False),
        ("log-signing-2.ed25519", ED25519, False),
        ("log-signing-2.ml-dsa-44", ML_DSA_44, False),
    ]
    ring = LogKeyring.of_directory(tmp_path)
    assert len(ring.signing(ORIGIN)) == 4  # both generations sign during the rotation
    retired = log_keys.complete(tmp_path)
    assert sorted(key.path.name for key in retired) == [
        "log-signing.ed25519",
        "log-signing.ml-dsa-44",
    ]
    ring = LogKeyring.of_directory(tmp_path)
    assert [s.verifier().vkey for s in ring.signing(ORIGIN)] == [
        key.signer(ORIGIN).verifier().vkey for key in log_keys.log_keys(tmp_path)[2:]
    ]
    assert len(ring.every(ORIGIN)) == 4  # retired keys keep verifying


def test_a_compromised_ml_dsa_key_is_known_by_its_vkey(tmp_path: Path) -> None:
    mldsa = log_keys.log_keys(tmp_path)[1]
    log_keys.mark_compromised(mldsa, "2026-01-01T00:00:00.000000Z")
    ring = LogKeyring.of_directory(tmp_path)
    vkey = mldsa.signer("any.example/log").verifier().vkey
    assert ring.compromise_of(vkey) == "2026-01-01T00:00:00.000000Z"
    ed25519 = log_keys.log_keys(tmp_path)[0]
    assert ring.compromise_of(ed25519.signer("any.example/log").verifier().vkey) is None


def test_fixed_keys_sign_with_ml_dsa_only_when_given_its_seed() -> None:
    assert len(LogKeyring.of_seed(bytes(32)).signing(ORIGIN)) == 1
    assert len(LogKeyring.of_seed(bytes(32), bytes(range(32))).signing(ORIGIN)) == 2


def test_revoking_the_current_ml_dsa_key_moves_to_a_new_generation(tmp_path: Path) -> None:
    """``keys revoke`` of the signing generation's ML-DSA-44 key: a new generation takes over
    at once, the old one is retired whole, and only the revoked key is marked compromised."""
    from recordseal.services.key_admin import revoke_log_key

    mldsa = log_keys.log_keys(tmp_path)[1]
    revoked = revoke_log_key(tmp_path, mldsa.key_id, "2026-01-01T00:00:00Z")
    assert revoked is not None
    found, new = revoked
    assert found.path.name == "log-signing.ml-dsa-44"
    assert new is not None and new.path.name == "log-signing-2.ed25519"
    keys = log_keys.log_keys(tmp_path)
    assert _names(keys) == [
        ("log-signing.ed25519", ED25519, True),
        ("log-signing.ml-dsa-44", ML_DSA_44, True),
        ("log-signing-2.ed25519", ED25519, False),
        ("log-signing-2.ml-dsa-44", ML_DSA_44, False),
    ]
    assert [key.compromised_at for key in keys] == [None, "2026-01-01T00:00:00.000000Z", None, None]
