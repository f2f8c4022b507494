"""Real bundles from primitives, without the service: commit, sign, chain, log, cosign.

A :class:`World` is one tenant's stream ``orders`` of six records, signed with a header key,
entered in an RFC 6962 log (leaf 0 the tenant genesis root, a record of another stream in
between) whose checkpoints are signed by the log key and cosigned by a witness. Its
:meth:`World.bundle` discloses fields of record 4 with any of the optional parts. With
``log_mldsa`` the log signs with an ML-DSA-44 key too (dual-signed checkpoints, as the
service does); the witness may cosign with Ed25519 or ML-DSA-44.

With ``gap=(from_seq, to_seq)`` the stream lost those seqs (a restore, docs/records.md): its
record at ``to_seq + 1`` is a signed gap header and it goes on to ``last_seq``. With ``seed``
every salt key and subject handle is derived from it (the vectors of tests/vectors/gaps.json).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from recordseal.chain import (
    build_gap_header,
    build_header,
    canonical_header,
    chain_leaf,
    gap_signing_message,
    stream_genesis,
)
from recordseal.core import (
    CommittedRecord,
    commit_record,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    merkle_root,
)
from recordseal.crypto.signing import HeaderSigner
from recordseal.merkle.aggregate import aggregate_entry
from recordseal.services.bundles import (
    build_bundle,
    coverage_of,
    field_disclosures,
    leaf_values,
    seal_of,
    tlog_proof_text,
)
from recordseal.tlog import (
    Checkpoint,
    CosignatureSigner,
    Ed25519Signer,
    MLDSA44CosignatureSigner,
    parse_note,
    sign_note,
)
from recordseal.verify import (
    KeyDirectory,
    TrustStore,
    encode_bundle,
    load_key_directory,
    load_trust_store,
)
from recordseal.verify.encoding import format_instant

SERVICE = "recordseal.local"
PUBLIC_WITNESS = "public.witness"
TENANT = "acme"
STREAM = "orders"
ORIGIN = f"{SERVICE}/{TENANT}/default"
WITNESS = "witness.example"
TARGET_SEQ = 4
RECORDS = 6
DECLARATIONS = {"o:/amount": "money", "o:/currency": "currency", "o:/placed_at": "timestamp"}
FIELDS = ("o:/amount", "o:/currency", "oo:/customer/name")


def payload_of(seq: int) -> dict[str, Any]:
    return {
        "amount": 1000 + seq * 100,
        "currency": "EUR",
        "placed_at": "2026-11-21T07:00:00Z",
        "customer": {"name": f"Customer {seq}", "tags": ["new", "eu"], "vip": seq % 2 == 0},
        "notes": None,
        "extras": {},
        "lines": [],
    }


@dataclass
class Record:
    header: dict[str, Any]
    signature: bytes
    committed: CommittedRecord
    payload: dict[str, Any]

    @property
    def canonical(self) -> bytes:
        return canonical_header(self.header)


Cosigner = CosignatureSigner | MLDSA44CosignatureSigner


def _cosigned(signed: str, signer: Cosigner, when: datetime) -> str:
    note = parse_note(signed)
    text = note.text
    cosignature = signer.cosign(text, int(when.timestamp()))
    return note.with_signatures([cosignature.note_signature]).encode()


@dataclass
class World:
    """A stream, its log and its witness, around ``base`` (a whole second, in the past)."""

    base: datetime = field(
        default_factory=lambda: datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
    )
    header_signer: HeaderSigner = field(
        default_factory=lambda: HeaderSigner.from_seed(os.urandom(32))
    )
    log_signer: Ed25519Signer = field(default_factory=lambda: Ed25519Signer.generate(ORIGIN))
    witness: Cosigner = field(default_factory=lambda: CosignatureSigner.generate(WITNESS))
    #: the log's ML-DSA-44 key (it states no time: clock None), signing beside ``log_signer``
    log_mldsa: MLDSA44CosignatureSigner | None = None
    #: the deployment's aggregate log's key (its name is the service's origin) and the
    #: witness that cosigns the aggregate alone (docs/tlog.md, "The aggregate log")
    aggregate_signer: Ed25519Signer = field(default_factory=lambda: Ed25519Signer.generate(SERVICE))
    public_witness: Cosigner = field(
        default_factory=lambda: CosignatureSigner.generate(PUBLIC_WITNESS)
    )
    #: the aggregate log's ML-DSA-44 key, signing beside ``aggregate_signer`` (as the service
    #: signs the aggregate's checkpoints like the tenant logs')
    aggregate_mldsa: MLDSA44CosignatureSigner | None = None
    gap: tuple[int, int] | None = None
    last_seq: int = RECORDS
    seed: bytes | None = None
    records: list[Record] = field(default_factory=list)
    #: every header of the stream (records and the gap), with its signature, in seq order
    covered: list[tuple[dict[str, Any], bytes]] = field(default_factory=list)
    log: list[bytes] = field(default_factory=list)

    def __post_init__(self) -> None:
        leaves = {0: stream_genesis(TENANT, STREAM)}
        lost = range(self.gap[0], self.gap[1] + 1) if self.gap else range(0)
        for seq in range(1, self.last_seq + 1):
            if seq in lost:
                continue
            if self.gap is not None and seq == self.gap[1] + 1:
                header = self.gap_header(*self.gap, prev=leaves[self.gap[0] - 1])
                self.covered.append((header, self.sign_gap(header)))
            else:
                record = self.make_record(seq, leaves[seq - 1])
                self.records.append(record)
                self.covered.append((record.header, record.signature))
            leaves[seq] = chain_leaf(canonical_header(self.covered[-1][0]))
        other = self.make_record(1, stream_genesis(TENANT, "invoices"), stream="invoices")
        genesis_root = leaf_hash(b"recordseal tenant genesis " + TENANT.encode())
        canonical = [canonical_header(header) for header, _ in self.covered]
        self.log = [genesis_root, canonical[0], other.canonical, *canonical[1:]]

    def random(self, size: int, label: str) -> bytes:
        """Random bytes, or bytes derived from ``seed`` and ``label`` when it is set."""
        if self.seed is None:
            return os.urandom(size)
        return hashlib.sha256(self.seed + label.encode()).digest()[:size]

    # --- records ---------------------------------------------------------------------------

    def ingested_at(self, seq: int) -> datetime:
        return self.base + timedelta(seconds=10 * seq, microseconds=123456)

    def make_record(self, seq: int, prev: bytes, *, stream: str = STREAM) -> Record:
        payload = payload_of(seq)
        record_id = f"0193a1b2-c3d4-7e5f-8a9b-{seq:012d}"
        salt_key = self.random(32, f"salt key {stream} {seq}")
        committed = commit_record(
            json.dumps(payload).encode(), DECLARATIONS, False, salt_key, record_id
        )
        header = build_header(
            tenant=TENANT,
            stream=stream,
            seq=seq,
            record_id=record_id,
            record_type="order.placed",
            occurred_at="2026-11-21T07:00:00Z",
            subject_ref=self.random(16, f"subject {stream} {seq}").hex(),
            root=committed.root,
            field_count=committed.field_count,
            prev=prev,
            key_id=self.header_signer.key_id,
            ingested_at=format_instant(self.ingested_at(seq)),
        )
        return Record(header, self.sign(header), committed, payload)

    def sign(self, header: dict[str, Any]) -> bytes:
        return self.header_signer.sign(canonical_header(header))

    def gap_header(self, first: int, last: int, prev: bytes, **changes: Any) -> dict[str, Any]:
        """A gap header declaring ``first..last`` lost, declared at its seq's ingest slot."""
        header = build_gap_header(
            tenant=TENANT,
            stream=STREAM,
            from_seq=first,
            to_seq=last,
            reason="store_rolled_back",
            declared_at=format_instant(self.ingested_at(last + 1)),
            prev=prev,
            key_id=self.header_signer.key_id,
        )
        return {**header, **changes}

    def sign_gap(self, header: dict[str, Any]) -> bytes:
        return self.header_signer.sign_message(gap_signing_message(canonical_header(header)))

    @property
    def target(self) -> Record:
        return next(record for record in self.records if record.header["seq"] == TARGET_SEQ)

    @property
    def target_index(self) -> int:
        return self.log.index(self.target.canonical)

    # --- the log ---------------------------------------------------------------------------

    def checkpoint(self, size: int) -> Checkpoint:
        return Checkpoint(ORIGIN, size, merkle_root(self.log[:size]))

    @property
    def log_signers(self) -> list[Ed25519Signer | MLDSA44CosignatureSigner]:
        return [self.log_signer, *([self.log_mldsa] if self.log_mldsa is not None else [])]

    def signed_checkpoint(self, size: int, cosigned_at: datetime | None) -> str:
        signed = sign_note(self.checkpoint(size).text(), self.log_signers)
        return signed if cosigned_at is None else _cosigned(signed, self.witness, cosigned_at)

    @property
    def sealed_at(self) -> datetime:
        return self.ingested_at(RECORDS) + timedelta(seconds=5)

    @property
    def previous_at(self) -> datetime:
        return self.ingested_at(TARGET_SEQ) - timedelta(seconds=2)

    # --- bundles ---------------------------------------------------------------------------

    def bundle(
        self,
        fields: Sequence[str] = FIELDS,
        *,
        sealed: bool = True,
        cosigned: bool = True,
        previous: bool = True,
        timestamps: Sequence[tuple[str, bytes]] = (),
        coverage: tuple[int, int] | None = (1, RECORDS),
        sealed_at: datetime | None = None,
        aggregate: bool = False,
        aggregate_cosigned: bool = True,
    ) -> bytes:
        """``aggregate``: the seal carries the path of its checkpoint into the aggregate
        log, whose checkpoint the public witness cosigned (``aggregate_cosigned``) at
        :attr:`aggregated_at`."""
        target = self.target
        disclosed = field_disclosures(target.committed, leaf_values(target.payload), list(fields))
        seal = None
        if sealed:
            size, index = len(self.log), self.target_index
            cosigned_at = sealed_at or self.sealed_at
            signed = self.signed_checkpoint(size, cosigned_at if cosigned else None)
            proof = tlog_proof_text(index, inclusion_proof(self.log, index), signed)
            seal = seal_of(
                ORIGIN,
                proof,
                previous=self.signed_checkpoint(index, self.previous_at) if previous else None,
                previous_consistency=consistency_proof(self.log, index) if previous else (),
                timestamps=timestamps,
                aggregate=self.aggregate_proof(aggregate_cosigned) if aggregate else None,
            )
        window = None
        if coverage is not None:
            low, high = coverage
            window = coverage_of(
                low, high, [(h, sig) for h, sig in self.covered if low <= h["seq"] <= high]
            )
        return encode_bundle(build_bundle(target.header, target.signature, disclosed, seal, window))

    def sealing_root(self) -> bytes:
        return merkle_root(self.log)

    # --- the aggregate log -------------------------------------------------------------------

    @property
    def aggregated_at(self) -> datetime:
        """When the public witness cosigned the aggregate checkpoint: 3 s after the seal."""
        return self.sealed_at + timedelta(seconds=3)

    def aggregate_entries(self) -> list[bytes]:
        """Another tenant's checkpoint, the sealing checkpoint (entry 1), another one."""
        other = f"{SERVICE}/globex/default"
        return [
            aggregate_entry(other, 3, hashlib.sha256(b"globex 3").digest()),
            aggregate_entry(ORIGIN, len(self.log), self.sealing_root()),
            aggregate_entry(other, 5, hashlib.sha256(b"globex 5").digest()),
        ]

    def aggregate_checkpoint(
        self, signer: Ed25519Signer | None = None, cosigned: bool = True
    ) -> str:
        """The aggregate's signed checkpoint (by its keys, or ``signer`` alone), cosigned."""
        entries = self.aggregate_entries()
        signers: list[Ed25519Signer | MLDSA44CosignatureSigner] = [signer or self.aggregate_signer]
        if signer is None and self.aggregate_mldsa is not None:
            signers.append(self.aggregate_mldsa)
        body = Checkpoint(signers[0].name, len(entries), merkle_root(entries))
        signed = sign_note(body.text(), signers)
        return _cosigned(signed, self.public_witness, self.aggregated_at) if cosigned else signed

    def aggregate_proof(self, cosigned: bool = True, signer: Ed25519Signer | None = None) -> str:
        """The tlog proof of the sealing checkpoint's entry (1) in the aggregate."""
        entries = self.aggregate_entries()
        return tlog_proof_text(
            1, inclusion_proof(entries, 1), self.aggregate_checkpoint(signer, cosigned)
        )

    # --- what a verifier is given ------------------------------------------------------------

    def keys_document(
        self,
        *,
        log_compromised_at: str | None = None,
        aggregate: bool = False,
        aggregate_compromised_at: str | None = None,
        **validity: str | None,
    ) -> dict[str, Any]:
        """The key directory; ``validity`` sets members of the header key (``compromised_at``
        among them), ``log_compromised_at`` the log key's ``compromised_at``; ``aggregate``
        lists the aggregate log's key too (with ``aggregate_compromised_at``)."""
        key = {
            "key_id": self.header_signer.key_id,
            "algorithm": "Ed25519",
            "public_key": self.header_signer.public_key.hex(),
            "not_before": format_instant(self.base - timedelta(days=1)),
            "not_after": None,
            "revoked_at": None,
        }
        key.update(validity)
        log = {"origin": ORIGIN, "vkey": self.log_signer.verifier().vkey}
        if log_compromised_at is not None:
            log["compromised_at"] = log_compromised_at
        logs = [log]
        if self.log_mldsa is not None:
            logs.append({"origin": ORIGIN, "vkey": self.log_mldsa.vkey})
        if aggregate:
            aggregate_logs = [{"origin": SERVICE, "vkey": self.aggregate_signer.verifier().vkey}]
            if self.aggregate_mldsa is not None:
                aggregate_logs.append({"origin": SERVICE, "vkey": self.aggregate_mldsa.vkey})
            for entry in aggregate_logs:
                if aggregate_compromised_at is not None:
                    entry["compromised_at"] = aggregate_compromised_at
            logs += aggregate_logs
        return {"format": "recordseal/keys/v1", "keys": [key], "logs": logs}

    def keys(self, **validity: str | None) -> KeyDirectory:
        return load_key_directory(json.dumps(self.keys_document(**validity)).encode())

    def trust_document(
        self,
        *,
        quorum: int = 1,
        witnesses: Sequence[Cosigner] | None = None,
        authorities: Sequence[tuple[str, str]] = (),
        checkpoint_signatures: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        witnesses = [self.witness] if witnesses is None else witnesses
        document: dict[str, Any] = {
            "format": "recordseal/trust/v1",
            "witnesses": [{"name": w.name, "vkey": w.vkey} for w in witnesses],
            "timestamp_authorities": [
                {"name": name, "roots": [pem], "intermediates": []} for name, pem in authorities
            ],
            "quorum": quorum,
        }
        if checkpoint_signatures is not None:
            document["checkpoint_signatures"] = list(checkpoint_signatures)
        return document

    def trust(self, **options: Any) -> TrustStore:
        return load_trust_store(json.dumps(self.trust_document(**options)).encode())


def write_documents(folder: Path, documents: dict[str, bytes]) -> dict[str, Path]:
    """Write each document into ``folder``; their paths by name without ``.json``."""
    for name, data in documents.items():
        (folder / name).write_bytes(data)
    return {name.removesuffix(".json"): folder / name for name in documents}
