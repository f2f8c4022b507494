"""The native Ed25519 signer gives exactly OpenSSL's signatures (Ed25519 is deterministic)."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from hypothesis import given
from hypothesis import strategies as st

from recordseal._native import Ed25519Signer
from recordseal.crypto.signing import HEADER_CONTEXT, HeaderSigner, verify_header_signature

# RFC 8032 section 7.1, TEST 2: secret key, public key, message, signature.
RFC8032_TEST2 = (
    "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
    "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
    "72",
    "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
    "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
)


def test_rfc8032_vector():
    seed, public, message, signature = (bytes.fromhex(x) for x in RFC8032_TEST2)
    signer = Ed25519Signer(seed)
    assert signer.public_key == public
    assert signer.sign(message) == signature
    assert signer.sign(message[1:], prefix=message[:1]) == signature


@given(st.binary(min_size=32, max_size=32), st.binary(max_size=2048), st.binary(max_size=64))
def test_native_signatures_equal_openssl(seed, message, prefix):
    openssl = Ed25519PrivateKey.from_private_bytes(seed)
    native = Ed25519Signer(seed)
    assert native.public_key == openssl.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    assert native.sign(message, prefix) == openssl.sign(prefix + message)


def test_header_signer_signs_the_context_and_the_header():
    signer = HeaderSigner.from_seed(bytes(range(32)))
    header = b'{"seq":1}'
    signature = signer.sign(header)
    expected = Ed25519PrivateKey.from_private_bytes(bytes(range(32))).sign(HEADER_CONTEXT + header)
    assert signature == expected
    assert verify_header_signature(signer.public_key, header, signature)
    assert not verify_header_signature(signer.public_key, header + b" ", signature)


@pytest.mark.parametrize("seed", [b"", bytes(31), bytes(33)])
def test_a_seed_is_32_bytes(seed):
    with pytest.raises(ValueError, match="32 bytes"):
        Ed25519Signer(seed)
