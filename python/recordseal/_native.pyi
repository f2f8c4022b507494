"""Type stub of ``recordseal._native``, the Rust commitment core (``rust-core/``).

The module is private: import the API from :mod:`recordseal.core`. Every function raises
:class:`recordseal.core.errors.CommitError` on refused input; the rules, codes and byte formats
are in ``docs/spec.md``. The pure-Python reference (:mod:`recordseal.core.reference`) has the
same names, signatures, results and errors.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Self, final

from recordseal.core.errors import CommitError

#: Unicode version of the NFC tables used by the kind ``text``.
UNICODE_VERSION: str
#: Every field kind, ``free`` included, in alphabetical order.
KINDS: tuple[str, ...]
#: ``release`` when the extension was built optimised (``make build``), else ``debug``.
BUILD_PROFILE: str

@final
class Leaf:
    """One committed field: its path, kind, ``enc(value)``, salt and commitment."""

    @property
    def path(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def encoded(self) -> bytes: ...
    @property
    def salt(self) -> bytes: ...
    @property
    def commitment(self) -> bytes: ...

@final
class CommittedRecord:
    """The result of :func:`commit_record`."""

    @property
    def canonical(self) -> bytes:
        """RFC 8785 bytes of the payload."""
    @property
    def leaves(self) -> list[Leaf]:
        """Leaves in the UTF-8 order of their committed paths."""
    @property
    def root(self) -> bytes:
        """RFC 6962 root over the commitments, in leaf order."""
    @property
    def field_count(self) -> int: ...

@final
class Ed25519Signer:
    """An Ed25519 private key (RFC 8032) from its 32-byte seed (``ed25519-dalek``)."""

    def __new__(cls, seed: bytes) -> Self: ...
    @property
    def public_key(self) -> bytes: ...
    def sign(self, message: bytes, prefix: bytes = b"") -> bytes:
        """The signature of ``prefix + message``."""
    def sign_headers(
        self,
        key_id: str,
        ingested_at: str,
        records: Sequence[PreparedRecord],
        slots: Sequence[int],
        heads: list[tuple[int, bytes]],
    ) -> list[tuple[int, bytes, bytes, bytes]]:
        """Place, sign and chain prepared records in order, the interpreter released.

        Record ``i`` takes ``heads[slots[i]]`` (next seq, 32-byte prev chain leaf); its header
        is signed after ``recordseal/header/v1\\x00``. ``heads`` is updated in place to the
        final heads. Gives ``(seq, header, signature, chain_leaf)`` of each record.
        """

@final
class ModuleToken:
    """A token of a PKCS#11 module, logged in (``cryptoki``)."""

    def __new__(
        cls,
        module_path: str,
        pin: str,
        *,
        token: str | None = None,
        serial: str | None = None,
        slot_id: int | None = None,
    ) -> Self: ...
    def key(self, label: str, kind: str) -> ModuleKey:
        """The key labelled ``label`` of ``kind`` (``ed25519``, ``aes256``, ``hmac-sha256``)."""
    def generate(self, label: str, kind: str) -> ModuleKey:
        """A new key generated inside the module; refused when the label is taken."""
    def has(self, label: str) -> bool: ...
    def destroy(self, label: str) -> int:
        """Destroy every object labelled ``label``; how many there were."""

@final
class ModuleKey:
    """A key held in a PKCS#11 module: Ed25519, AES-256 or HMAC-SHA-256, by its kind."""

    @property
    def public_key(self) -> bytes: ...
    def sign(self, message: bytes, prefix: bytes = b"") -> bytes: ...
    def sign_headers(
        self,
        key_id: str,
        ingested_at: str,
        records: Sequence[PreparedRecord],
        slots: Sequence[int],
        heads: list[tuple[int, bytes]],
    ) -> list[tuple[int, bytes, bytes, bytes]]: ...
    def encrypt(self, nonce: bytes, data: bytes, associated_data: bytes | None) -> bytes: ...
    def decrypt(self, nonce: bytes, data: bytes, associated_data: bytes | None) -> bytes: ...
    def mac(self, message: bytes) -> bytes: ...

@final
class PreparedRecord:
    """An accepted record of :func:`prepare_records`, waiting for :meth:`sign_headers`."""

    @property
    def record_id(self) -> str: ...
    @property
    def root(self) -> bytes: ...
    @property
    def field_count(self) -> int: ...
    @property
    def sealed_payload(self) -> bytes:
        """``nonce(12) ‖ AES-256-GCM(canonical payload) ‖ tag``, the record id as AAD."""

@final
class RecordRead:
    """One record of an ingest request as :func:`read_request` read it: its envelope, and its
    payload as a parsed tree that :func:`prepare_records` commits without parsing again."""

    @property
    def stream(self) -> str: ...
    @property
    def record_type(self) -> str: ...
    @property
    def occurred_at(self) -> str:
        """In UTC, as the kind ``timestamp`` writes it (empty when ``refusal`` refuses it)."""
    @property
    def subject_id(self) -> str: ...
    @property
    def payload_len(self) -> int | None:
        """Bytes of the payload's text as sent; None when the body is no longer than a payload
        may be (no payload in it can be too large)."""
    @property
    def idempotency(self) -> tuple[str, bytes] | None:
        """``(key, SHA-256 of the record's text as sent)`` with an ``Idempotency-Key``; a
        batch's item ``i`` is keyed ``<key>#<i>``."""
    @property
    def refusal(self) -> CommitError | None:
        """The first envelope rule broken (``record_type``, ``subject_id``, ``occurred_at``)."""
    def canonical_payload(self) -> bytes:
        """The payload's RFC 8785 form."""

def read_request(
    body: bytes, idempotency_key: str | None, batch: bool
) -> list[RecordRead | CommitError]:
    """Read an ingest request's body once (``batch``: ``{"records": [...]}``): a RecordRead
    or the CommitError (``request_invalid``) of each record. Raises the CommitError of a body
    the core's reader refuses, of a batch's envelope or size, or of a malformed key."""

def encode_answers(
    results: Sequence[tuple[bytes, bytes, bytes, bool] | tuple[int, bytes]], batch: bool
) -> bytes:
    """The JSON answer of an ingest route (``RecordOut``, or ``BatchOut`` when ``batch``) from
    each record's result: ``(header, signature, chain_leaf, replayed)`` of a stored record,
    ``(status, problem JSON)`` of a refused one (``web/ingest.py``)."""

def canonicalize(data: bytes) -> bytes:
    """JSON text in, RFC 8785 canonical bytes out."""

def encode_value(kind: str, value: object) -> bytes:
    """``enc(value)`` for a field kind (spec section 3)."""

def validate_declarations(declarations: Mapping[str, str]) -> None:
    """Check path patterns and kinds of a stream's declarations (spec 6.1)."""

def derive_salt(salt_key: bytes, record_id: str, path: str) -> bytes:
    """HMAC-SHA-256 salt of one field (spec section 4)."""

def commit_field(path: str, salt: bytes, encoded: bytes) -> bytes:
    """SHA-256 commitment of one field (spec section 4)."""

def commit_record(
    payload: bytes,
    declarations: Mapping[str, str] | None,
    strict: bool,
    salt_key: bytes,
    record_id: str,
) -> CommittedRecord:
    """Parse, check and commit one payload (spec section 6)."""

def prepare_records(
    items: Iterable[
        tuple[str, str, str, str, str, str, bytes, Mapping[str, str] | None, bool, bytes, bytes]
        | tuple[RecordRead, str, str, Mapping[str, str] | None, bool, bytes, bytes]
    ],
) -> list[PreparedRecord | CommitError]:
    """Commit and seal a batch of ``RecordInput`` or ``ReadInput`` tuples
    (``services/pipeline.py``), the interpreter released: a refused payload gives its
    CommitError in its place. A ``ReadInput``'s record gets a new UUIDv7 record id."""

def leaf_hash(data: bytes) -> bytes:
    """RFC 6962 leaf hash: SHA-256(0x00 || data)."""

def merkle_root(leaves: Sequence[bytes]) -> bytes:
    """RFC 6962 MTH over the leaf data."""

def inclusion_proof(leaves: Sequence[bytes], index: int) -> list[bytes]:
    """RFC 6962 audit path of ``leaves[index]``, from the leaf upwards."""

def verify_inclusion(
    leaf: bytes, index: int, size: int, proof: Sequence[bytes], root: bytes
) -> None:
    """Raise CommitError unless ``proof`` places ``leaf`` at ``index`` under ``root``."""

def consistency_proof(leaves: Sequence[bytes], old_size: int) -> list[bytes]:
    """RFC 6962 consistency proof from the first ``old_size`` leaves to all of them."""

def verify_consistency(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> None:
    """Raise CommitError unless ``proof`` shows the old tree is a prefix of the new one."""

def derive_subject_keys(subject_key: bytes) -> tuple[bytes, bytes]:
    """``(salt_key, payload_key)``: HKDF-SHA-256 of the 32-byte subject key, no salt, infos
    ``recordseal/salt-key/v1`` and ``recordseal/payload-key/v1``; ValueError for another
    length. The fast path of ``recordseal.crypto.vault.SubjectKeys.derive``."""

def place_appends(
    calls: list[Any],
    keys: dict[tuple[str, str], tuple[bytes, str]],
    subjects: dict[tuple[str, bytes], tuple[str, bool]],
    check: Callable[[int, int, int], bool],
) -> tuple[list[Any], list[int], list[int], list[tuple[str, str, bytes, str]]]:
    """Decide the appends of ``calls`` (``storage.requests.Call``) by the placement rules of
    ``recordseal.storage.placing`` (the reference), given the stored idempotency keys and
    subjects (read for those the calls name) and ``check(stream, call, append)``, rule 4's
    check of a stream, asked once per stream where the reference asks it. Gives per append
    its index among the placed or ``(refusal, value)``, each placed append's slot, the slots'
    streams and the placed keys as ``(tenant, key, hash, record id)``.
    ``recordseal.storage.native_placing`` calls it."""

def grow_log(
    size: int, leaf_hashes: Sequence[bytes], stored: Mapping[tuple[int, int], bytes]
) -> tuple[dict[tuple[int, int], bytes], bytes]:
    """Append 32-byte leaf hashes to a log of ``size`` leaves kept as complete-subtree nodes
    (``recordseal.merkle.tree``); ``stored`` holds its frontier (KeyError for a missing node).
    Gives every node completed, by ``(level, index)`` in the order they complete, and the new
    root; the interpreter is released for large batches. ``recordseal.merkle.log.grow_log`` is
    the reference."""
