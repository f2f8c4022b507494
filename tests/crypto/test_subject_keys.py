"""Subject keys: the native HKDF (``rust-core/src/subject_keys.rs``) gives the bytes of
``cryptography``'s, payloads sealed before still open, and AES-GCM is keyed only when used."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recordseal._native import derive_subject_keys as native
from recordseal.crypto import vault
from recordseal.crypto.vault import SubjectKeys, VaultError

VECTORS = json.loads(
    (Path(__file__).parents[1] / "vectors" / "subject_keys.json").read_text(encoding="utf-8")
)
DERIVATIONS: dict[str, Callable[[bytes], tuple[bytes, bytes]]] = {
    "native": native,
    "cryptography": vault._derive_subject_keys,
}

# Sealed by the code before the native derivation (HKDF and AES-GCM through `cryptography`):
# subject key 00 01 .. 1f, record id "rec-0001", nonce 00 01 .. 0b.
SEALED_BEFORE = bytes.fromhex(
    "000102030405060708090a0b2686bc40f742e82d76701e97b8bd1970af371785f68e34cb4a4dafd1d1ea2ca7"
    "4e73a5120a02ae6315d5276b"
)


def test_the_vault_uses_the_native_derivation() -> None:
    assert vault.derive_subject_keys is native


@pytest.mark.parametrize("name", sorted(DERIVATIONS))
@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda case: case["name"])
def test_vectors(name: str, case: dict[str, str]) -> None:
    salt_key, payload_key = DERIVATIONS[name](bytes.fromhex(case["subject_key"]))
    assert (salt_key.hex(), payload_key.hex()) == (case["salt_key"], case["payload_key"])


@given(st.binary(min_size=32, max_size=32))
def test_native_equals_cryptography(subject_key: bytes) -> None:
    assert native(subject_key) == vault._derive_subject_keys(subject_key)
    keys = SubjectKeys.derive(subject_key)
    assert (keys.salt_key, keys.payload_key) == native(subject_key)


@pytest.mark.parametrize("name", sorted(DERIVATIONS))
@pytest.mark.parametrize("length", [0, 1, 16, 31, 33, 64])
def test_a_key_of_another_length_is_refused(name: str, length: int) -> None:
    with pytest.raises(ValueError, match=f"a subject key is 32 bytes, not {length}"):
        DERIVATIONS[name](bytes(length))


def test_payloads_sealed_before_still_open() -> None:
    keys = SubjectKeys.derive(bytes(range(32)))
    assert keys.decrypt_payload("rec-0001", SEALED_BEFORE) == b'{"amount":12.5,"name":"Ada"}'
    with pytest.raises(VaultError):
        keys.decrypt_payload("rec-0002", SEALED_BEFORE)


def test_aes_gcm_is_keyed_on_first_use_and_kept() -> None:
    keys = SubjectKeys.derive(bytes(range(32)))
    assert keys._payload_aead is None
    sealed = keys.encrypt_payload("r", b"payload")
    aead = keys._payload_aead
    assert aead is not None
    assert keys.decrypt_payload("r", sealed) == b"payload"
    assert keys._payload_aead is aead
    assert SubjectKeys.derive(bytes(range(32))).decrypt_payload("r", sealed) == b"payload"


def test_without_the_extension_cryptography_derives() -> None:
    case = VECTORS["cases"][0]
    code = (
        "import sys\n"
        "sys.modules['recordseal._native'] = None  # as on a machine without the wheel\n"
        "from recordseal.crypto import vault\n"
        "assert vault.derive_subject_keys is vault._derive_subject_keys\n"
        f"keys = vault.SubjectKeys.derive(bytes.fromhex({case['subject_key']!r}))\n"
        f"assert keys.salt_key.hex() == {case['salt_key']!r}\n"
        f"assert keys.payload_key.hex() == {case['payload_key']!r}\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
