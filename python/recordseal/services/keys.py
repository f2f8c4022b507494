"""The key directory and the witness trust store, as published and exported (docs/bundle.md)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from recordseal.ledger.log_keys import LogSigner, as_signers
from recordseal.settings import AuthoritySetting, WitnessSetting
from recordseal.storage.base import Store
from recordseal.storage.rows import SigningKeyRow


async def key_directory(
    store: Store,
    log_signer: Callable[[str], LogSigner | Sequence[LogSigner]],
    log_compromise: Callable[[str], str | None] = lambda vkey: None,
) -> dict[str, Any]:
    """Header-signing keys with their validity, and the note verifier key of every log
    (``log_signer(origin)``: the log key, or every log key, under the log's name:
    ``Sealer.every``; a log listed once per key: its Ed25519 and ML-DSA-44 keys, and those of
    every generation after a rotation, docs/tlog.md)."""
    return {
        "format": "recordseal/keys/v1",
        "keys": [_header_key(key) for key in await store.records.signing_keys()],
        "logs": [
            _log_key(origin, signer.verifier().vkey, log_compromise)
            for origin in await store.logs.log_origins()
            for signer in as_signers(log_signer(origin))
        ],
    }


def _log_key(origin: str, vkey: str, compromise: Callable[[str], str | None]) -> dict[str, Any]:
    entry = {"origin": origin, "vkey": vkey}
    compromised_at = compromise(vkey)
    if compromised_at is not None:  # absent otherwise, as for header keys
        entry["compromised_at"] = compromised_at
    return entry


def _header_key(key: SigningKeyRow) -> dict[str, Any]:
    entry = {
        "key_id": key.key_id,
        "algorithm": key.algorithm,
        "public_key": key.public_key.hex(),
        "not_before": key.not_before,
        "not_after": key.not_after,
        "revoked_at": key.revoked_at,
    }
    if key.compromised_at is not None:  # absent otherwise: earlier verifiers read the rest
        entry["compromised_at"] = key.compromised_at
    return entry


def trust_store(
    witnesses: Sequence[WitnessSetting],
    authorities: Sequence[AuthoritySetting] = (),
    quorum: int = 1,
) -> dict[str, Any]:
    """The configured witnesses and time-stamping authorities as a verifier's trust store."""
    return {
        "format": "recordseal/trust/v1",
        "witnesses": [{"name": w.name, "vkey": vkey} for w in witnesses for vkey in w.vkeys],
        "timestamp_authorities": [
            {"name": a.name, "roots": _pem_blocks(a.roots_pem), "intermediates": []}
            for a in authorities
        ],
        "quorum": quorum,
    }


def _pem_blocks(pem: str) -> list[str]:
    end = "-----END CERTIFICATE-----"
    return [block.strip() + "\n" + end + "\n" for block in pem.split(end) if block.strip()]
