"""The root of the key material's errors: :class:`CryptoError`.

Every error ``recordseal.crypto`` raises derives from it: a ``pkcs11:`` URI or a module that
cannot be used (``hsm.KeyLocationError``), a hardware module that refused or failed an
operation (:class:`KeyModuleError`, raised by the native core: ``rust-core`` imports this class
as it imports ``core.errors.CommitError``), a wrapped key or ciphertext that does not
authenticate (``vault.VaultError``). Each keeps the builtin base its callers catch it by.
"""

from __future__ import annotations


class CryptoError(Exception):
    """Root of the errors of the key material (signing keys, KEKs, subject keys, modules)."""


class KeyModuleError(CryptoError, RuntimeError):
    """A hardware security module refused or failed an operation (the text names its answer).

    Raised by the native core (``rust-core/src/python/hsm.rs``); without the extension no key
    is in a module and it is never raised."""
