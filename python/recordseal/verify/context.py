"""The key directory and the trust store in usable form: parsed keys, vkeys and certificates."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from cryptography import x509

from recordseal.crypto.signing import key_id_of
from recordseal.tlog import CosignerKey, LogVerifier, cosigner_verifier, log_verifier

from .bundle import KeyDirectory, TrustStore, decode_key_directory, decode_trust_store
from .encoding import format_instant, parse_instant
from .errors import BundleError, refused


@dataclass(frozen=True, slots=True)
class HeaderKey:
    """A header-signing key with its validity as instants."""

    key_id: str
    public_key: bytes
    not_before: datetime
    not_after: datetime | None
    revoked_at: datetime | None
    compromised_at: datetime | None = None

    def problem_at(self, moment: datetime) -> str | None:
        """Why the key was not valid at ``moment``, or None when it was."""
        if moment < self.not_before:
            return f"key {self.key_id} is valid only from {format_instant(self.not_before)}"
        if self.not_after is not None and moment >= self.not_after:
            return f"key {self.key_id} expired at {format_instant(self.not_after)}"
        if self.revoked_at is not None and moment >= self.revoked_at:
            return f"key {self.key_id} was revoked at {format_instant(self.revoked_at)}"
        return None


def _instant(text: str) -> datetime:
    moment = parse_instant(text)
    if moment is None:  # the struct's own check makes this unreachable after decoding
        raise BundleError("key directory", f"{text!r} is not an RFC 3339 date-time")
    return moment


def _optional_instant(text: str | None) -> datetime | None:
    return None if text is None else _instant(text)


@dataclass(frozen=True, slots=True)
class Keyring:
    """Header keys by key ID, log verifiers (Ed25519 and ML-DSA-44) by origin, and when each
    compromised log key was compromised, by (origin, key name, key ID)."""

    header_keys: dict[str, HeaderKey]
    logs: dict[str, tuple[LogVerifier, ...]]
    compromised_logs: dict[tuple[str, str, int], datetime] = field(default_factory=dict)

    @classmethod
    def of(cls, directory: KeyDirectory) -> Keyring:
        header_keys: dict[str, HeaderKey] = {}
        for position, key in enumerate(directory.keys):
            public_key = bytes.fromhex(key.public_key)
            where = f"keys[{position}]"
            if key_id_of(public_key) != key.key_id:
                message = f"{where}: key_id {key.key_id} is not the key ID of its public key"
                raise BundleError("key directory", message)
            if key.key_id in header_keys:
                raise BundleError("key directory", f"{where}: key {key.key_id} is listed twice")
            header_keys[key.key_id] = HeaderKey(
                key.key_id,
                public_key,
                _instant(key.not_before),
                _optional_instant(key.not_after),
                _optional_instant(key.revoked_at),
                _optional_instant(key.compromised_at),
            )
        logs: dict[str, list[LogVerifier]] = {}
        compromised: dict[tuple[str, str, int], datetime] = {}
        for position, log in enumerate(directory.logs):
            with refused("logs[{at}]: {error}", document="key directory", at=position):
                verifier = log_verifier(log.vkey)
            logs.setdefault(log.origin, []).append(verifier)
            if (moment := _optional_instant(log.compromised_at)) is not None:
                # a key listed twice for one log counts as compromised from the earlier time
                signer = (log.origin, verifier.name, verifier.key_id)
                compromised[signer] = min(moment, compromised.get(signer, moment))
        origins = {origin: tuple(found) for origin, found in logs.items()}
        return cls(header_keys, origins, compromised)


@dataclass(frozen=True, slots=True)
class Authority:
    name: str
    roots: tuple[x509.Certificate, ...]
    intermediates: tuple[x509.Certificate, ...]


@dataclass(frozen=True, slots=True)
class Policy:
    """Trusted witnesses (by trust-store name), time-stamping authorities, the quorum, and
    the algorithms of the log signatures a sealing checkpoint must carry (rule 4.9)."""

    witnesses: tuple[tuple[str, CosignerKey], ...]
    authorities: dict[str, Authority]
    quorum: int
    checkpoint_signatures: tuple[str, ...] = ("Ed25519",)

    @classmethod
    def of(cls, store: TrustStore) -> Policy:
        witnesses = []
        for position, witness in enumerate(store.witnesses):
            with refused("witnesses[{at}]: {error}", document="trust store", at=position):
                witnesses.append((witness.name, cosigner_verifier(witness.vkey)))
        authorities: dict[str, Authority] = {}
        for position, authority in enumerate(store.timestamp_authorities):
            where = f"timestamp_authorities[{position}]"
            if not authority.roots:
                raise BundleError("trust store", f"{where}: no trust root")
            if authority.name in authorities:
                raise BundleError("trust store", f"{where}: {authority.name!r} is listed twice")
            authorities[authority.name] = Authority(
                authority.name,
                _certificates(authority.roots, f"{where}.roots"),
                _certificates(authority.intermediates, f"{where}.intermediates"),
            )
        return cls(tuple(witnesses), authorities, store.quorum, store.required_signatures)

    def witness_names(self) -> dict[tuple[str, int], tuple[str, CosignerKey]]:
        """Trusted cosigning keys by (key name, key ID), as they appear on note lines."""
        return {(v.name, v.key_id): (name, v) for name, v in self.witnesses}


def _certificates(pems: list[str], where: str) -> tuple[x509.Certificate, ...]:
    certificates = []
    for position, pem in enumerate(pems):
        try:
            certificates.append(x509.load_pem_x509_certificate(pem.encode()))
        except ValueError as error:
            message = f"{where}[{position}] is not a PEM certificate: {error}"
            raise BundleError("trust store", message) from None
    return tuple(certificates)


def load_key_directory(data: bytes | str) -> KeyDirectory:
    """Parse a key directory and check its keys (key IDs, vkeys); :class:`BundleError`."""
    directory = decode_key_directory(data)
    Keyring.of(directory)  # the compiled form checks what the structs cannot
    return directory


def load_trust_store(data: bytes | str) -> TrustStore:
    """Parse a trust store and check its vkeys and certificates; :class:`BundleError`."""
    store = decode_trust_store(data)
    Policy.of(store)
    return store
