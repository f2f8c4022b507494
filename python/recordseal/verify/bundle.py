"""The verifier's documents (docs/bundle.md sections 1 and 2) as strict msgspec structs.

``decode_bundle``, ``load_key_directory`` and ``load_trust_store`` accept exactly the
documented shapes: duplicate members, unknown members, wrong types, non-lowercase hex and
non-canonical base64 are refused as one :class:`BundleError` naming the member.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, TypeVar

import msgspec
from msgspec import Meta, Struct

from recordseal.chain import (
    ERASURE_RECEIPT_FORMAT,
    GAP_FORMAT,
    HEADER_FORMAT,
    canonical_header,
    valid_gap_reason,
)
from recordseal.core import CommitError, canonicalize

from .encoding import (
    BASE64_PATTERN,
    HEX32_PATTERN,
    HEX_PATTERN,
    Timestamp,
    b64decode,
    parse_instant,
)
from .errors import Below, BundleError, refused
from .result import RESULT_FORMAT

BUNDLE_FORMAT = "recordseal/bundle/v1"
KEYS_FORMAT = "recordseal/keys/v1"
TRUST_FORMAT = "recordseal/trust/v1"

# The patterns document the forms (JSON Schema, OpenAPI); the structs check them in
# ``__post_init__`` (``_hex``, ``_canonical_base64``), which is several times faster than a
# regular expression per string on a bundle of thousands of hashes.
Hex = Annotated[str, Meta(extra_json_schema={"pattern": HEX_PATTERN})]
Hex32 = Annotated[str, Meta(extra_json_schema={"pattern": HEX32_PATTERN})]
Base64 = Annotated[str, Meta(extra_json_schema={"pattern": BASE64_PATTERN})]
Sequence = Annotated[int, Meta(ge=1, le=2**53 - 1)]


#: Marks a member named by a struct's own check, so the error names it as msgspec would:
#: ``Expected lowercase hex - at `$.fields[0].salt```. msgspec adds no path to an error of the
#: document's own struct (``$``), so ``_named`` reads the path as optional.
_MEMBER = "member "
_NAMED = re.compile(r"member ([A-Za-z_]+(?:\[[0-9]+\])?): (.*?)(?: - at `([^`]*)`)?")


def _instant(value: str | None, member: str) -> None:
    if value is not None and parse_instant(value) is None:
        raise ValueError(f"{_MEMBER}{member}: Expected an RFC 3339 date-time")


def _hex(value: str, member: str, size: int | None = None, *, odd: bool = False) -> None:
    """Refuse anything but lowercase hex (of ``size`` bytes when given; ``odd``: refuse)."""
    try:
        length = -1 if odd else len(bytes.fromhex(value))
    except ValueError:
        length = -1
    if length * 2 != len(value) or value != value.lower():  # fromhex skips spaces
        raise ValueError(f"{_MEMBER}{member}: Expected lowercase hex")
    if size is not None and length != size:
        raise ValueError(f"{_MEMBER}{member}: Expected the lowercase hex of {size} bytes")


def _canonical_base64(values: list[str], member: str, *, listed: bool = True) -> None:
    """Refuse base64 that is not canonical; ``listed``: name the entry (``member[i]``)."""
    for position, value in enumerate(values):
        if b64decode(value) is None:
            named = f"{member}[{position}]" if listed else member
            raise ValueError(f"{_MEMBER}{named}: Expected canonical padded base64")


# --- the bundle ----------------------------------------------------------------------------


class Header(Struct, forbid_unknown_fields=True, tag_field="format", tag=HEADER_FORMAT):
    """The signed record header (docs/records.md); its RFC 8785 form is what was signed.

    ``format`` is the struct's tag: a covered record is a :class:`Header` or a
    :class:`GapHeader`, told apart by it."""

    tenant: str
    stream: str
    seq: Sequence
    record_id: str
    record_type: str
    occurred_at: Timestamp
    subject_ref: str
    root: Hex32
    field_count: Annotated[int, Meta(ge=0, le=2**53 - 1)]
    prev: Hex32
    key_id: str
    ingested_at: Timestamp
    attestation: str

    def __post_init__(self) -> None:
        _hex(self.root, "root", 32)
        _hex(self.prev, "prev", 32)
        _instant(self.ingested_at, "ingested_at")

    def canonical(self) -> bytes:
        """RFC 8785 bytes: the signed message body and the log entry."""
        return canonical_header(msgspec.to_builtins(self))


class GapHeader(Struct, forbid_unknown_fields=True, tag_field="format", tag=GAP_FORMAT):
    """A signed gap header (docs/records.md): ``from_seq..to_seq`` of the stream declared
    lost, stored as the stream's record at ``seq``. Only ever covered, never disclosed.

    Its own check refuses what is malformed (rule M10); that the range ends just before
    ``seq`` is check 6's (rule 6.11)."""

    tenant: str
    stream: str
    seq: Sequence
    from_seq: Sequence
    to_seq: Sequence
    reason: str
    declared_at: Timestamp
    prev: Hex32
    key_id: str
    attestation: str

    def __post_init__(self) -> None:
        if not valid_gap_reason(self.reason):
            raise ValueError(f"{_MEMBER}reason: Expected 1 to 64 characters of a-z, 0-9 and _")
        _hex(self.prev, "prev", 32)
        _instant(self.declared_at, "declared_at")

    def canonical(self) -> bytes:
        """RFC 8785 bytes: the signed message body and the chain leaf's data."""
        return canonical_header(msgspec.to_builtins(self))


class DisclosedField(Struct, forbid_unknown_fields=True):
    """One disclosed leaf: its value, salt, and inclusion proof in the record tree."""

    path: str
    kind: str
    value: Any
    salt: Hex
    index: Annotated[int, Meta(ge=0, le=2**53 - 1)]
    proof: list[Hex]

    def __post_init__(self) -> None:
        _hex(self.salt, "salt")
        try:  # one check for the whole path: each node of even length, all of them hex
            _hex("".join(self.proof), "proof", odd=any(len(node) % 2 for node in self.proof))
        except ValueError:
            for position, node in enumerate(self.proof):
                _hex(node, f"proof[{position}]")


class TimestampReceipt(Struct, forbid_unknown_fields=True):
    """An RFC 3161 token over the sealing checkpoint's root, base64 DER."""

    authority: str
    token: Base64

    def __post_init__(self) -> None:
        _canonical_base64([self.token], "token", listed=False)


class AggregateSeal(Struct, forbid_unknown_fields=True):
    """The path from the sealing checkpoint into a checkpoint of the deployment's aggregate
    log (docs/tlog.md, "The aggregate log"): a c2sp.org/tlog-proof@v1 of the sealing
    checkpoint's aggregate entry, its checkpoint carrying the aggregate's witnesses'
    cosignatures."""

    proof: str


class Seal(Struct, forbid_unknown_fields=True):
    """The sealed batch: a c2sp.org/tlog-proof@v1 of the header's log entry, and receipts;
    ``aggregate`` is absent unless the sealing checkpoint is proven into the aggregate log
    (absent, not null, when unset: a verifier older than it reads such bundles as before)."""

    log: str
    proof: str
    previous: str | None = None
    previous_consistency: list[Base64] = []
    timestamps: list[TimestampReceipt] = []
    aggregate: AggregateSeal | msgspec.UnsetType = msgspec.UNSET

    def __post_init__(self) -> None:
        _canonical_base64(self.previous_consistency, "previous_consistency")


class SignedHeader(Struct, forbid_unknown_fields=True):
    """A covered record: a record header or a gap header, and its signature."""

    header: Header | GapHeader
    signature: Hex

    def __post_init__(self) -> None:
        _hex(self.signature, "signature")


class Coverage(Struct, forbid_unknown_fields=True):
    """The signed headers of every record of the stream from ``from_seq`` to ``to_seq``."""

    from_seq: Sequence
    to_seq: Sequence
    records: list[SignedHeader]


class Bundle(Struct, forbid_unknown_fields=True):
    """A disclosure bundle (docs/bundle.md section 1); its own header is never a gap header
    (rule M11: the service never discloses a gap record)."""

    format: Literal["recordseal/bundle/v1"]
    header: Header
    signature: Hex
    fields: list[DisclosedField]
    seal: Seal | None = None
    coverage: Coverage | None = None

    def __post_init__(self) -> None:
        _hex(self.signature, "signature")


# --- the key directory and the trust store -------------------------------------------------


class DirectoryKey(Struct, forbid_unknown_fields=True):
    """A header-signing key, its validity, and when it was compromised, if it was."""

    key_id: str
    algorithm: Literal["Ed25519"]
    public_key: Hex32
    not_before: Timestamp
    not_after: Timestamp | None = None
    revoked_at: Timestamp | None = None
    compromised_at: Timestamp | None = None

    def __post_init__(self) -> None:
        _hex(self.public_key, "public_key", 32)
        _instant(self.not_before, "not_before")
        _instant(self.not_after, "not_after")
        _instant(self.revoked_at, "revoked_at")
        _instant(self.compromised_at, "compromised_at")


class LogKey(Struct, forbid_unknown_fields=True):
    """A log's checkpoint key: its origin and C2SP note verifier key (type 0x01), and when it
    was compromised, if it was."""

    origin: str
    vkey: str
    compromised_at: Timestamp | None = None

    def __post_init__(self) -> None:
        _instant(self.compromised_at, "compromised_at")


class KeyDirectory(Struct, forbid_unknown_fields=True):
    """What ``recordseal keys export`` writes: header-signing keys and log keys."""

    format: Literal["recordseal/keys/v1"]
    keys: list[DirectoryKey]
    logs: list[LogKey] = []


class TrustedWitness(Struct, forbid_unknown_fields=True):
    """A witness: its name and a C2SP cosigning verifier key (type 0x04 Ed25519, or 0x06
    ML-DSA-44); a witness with keys of both algorithms is listed once per key, under one name."""

    name: str
    vkey: str


class TrustedAuthority(Struct, forbid_unknown_fields=True):
    """An RFC 3161 time-stamping authority: its name and PEM trust roots."""

    name: str
    roots: list[str]
    intermediates: list[str] = []


class TrustStore(Struct, forbid_unknown_fields=True):
    """Whom the verifier trusts to vouch for a checkpoint, and how many must."""

    format: Literal["recordseal/trust/v1"]
    witnesses: list[TrustedWitness] = []
    timestamp_authorities: list[TrustedAuthority] = []
    quorum: Annotated[int, Meta(ge=1)] = 1
    #: The algorithms of the log signatures every sealing checkpoint must carry (rule 4.9);
    #: absent (and then left out when written) means Ed25519 alone.
    checkpoint_signatures: (
        Annotated[list[Literal["Ed25519", "ML-DSA-44"]], Meta(min_length=1, max_length=2)]
        | msgspec.UnsetType
    ) = msgspec.UNSET

    def __post_init__(self) -> None:
        required = self.required_signatures
        if len(set(required)) != len(required):
            raise ValueError(f"{_MEMBER}checkpoint_signatures: Expected distinct algorithms")

    @property
    def required_signatures(self) -> tuple[str, ...]:
        """The algorithms rule 4.9 requires: ``checkpoint_signatures``, or Ed25519."""
        if isinstance(self.checkpoint_signatures, msgspec.UnsetType):
            return ("Ed25519",)
        return tuple(self.checkpoint_signatures)


# --- the erasure receipt -------------------------------------------------------------------


class ErasureReceipt(Struct, forbid_unknown_fields=True):
    """What the service signs when it erases a subject (docs/records.md, "Erasure receipts")."""

    format: Literal["recordseal/erasure-receipt/v1"]
    tenant: str
    subject_ref: str
    erased_at: Timestamp
    key_id: str
    attestation: str

    def __post_init__(self) -> None:
        _hex(self.subject_ref, "subject_ref", 16)
        _instant(self.erased_at, "erased_at")

    def canonical(self) -> bytes:
        """RFC 8785 bytes: what follows the context in the signed message."""
        return canonical_header(msgspec.to_builtins(self))


class SignedReceipt(Struct, forbid_unknown_fields=True):
    """An erasure receipt and the header-signing key's signature over it."""

    receipt: ErasureReceipt
    signature: Hex

    def __post_init__(self) -> None:
        _hex(self.signature, "signature")


# --- decoding ------------------------------------------------------------------------------

T = TypeVar("T")


#: The documents a verifier is given, by their ``format``: one given for another is named.
DOCUMENTS = {
    BUNDLE_FORMAT: "bundle",
    KEYS_FORMAT: "key directory",
    TRUST_FORMAT: "trust store",
    RESULT_FORMAT: "verification result",
}


class _Formatted(Struct):
    """Any JSON object, read for its ``format`` alone."""

    format: Any = None


def _decode(data: bytes | str, kind: type[T], what: str) -> T:
    raw = data.encode() if isinstance(data, str) else bytes(data)
    # The core's parser refuses what msgspec would let through: duplicate members, lone
    # surrogates, invalid UTF-8, numbers beyond the double range.
    with refused(_not_json, document=what):
        canonicalize(raw)
    try:
        return msgspec.json.decode(raw, type=kind, strict=True)
    except msgspec.ValidationError as error:
        raise _other_document(raw, what) or BundleError(what, _named(str(error))) from None
    except msgspec.DecodeError as error:
        raise BundleError(what, f"not valid JSON: {error}") from None


def _not_json(error: Below) -> str:
    """The core's refusal of a document's JSON, at the member it names as msgspec would."""
    field = error.field if isinstance(error, CommitError) else None
    where = f" - at `{_json_path(field)}`" if field else ""
    return f"not valid JSON ({error.code}: {error}){where}"


def _other_document(raw: bytes, what: str) -> BundleError | None:
    """The error naming the mix-up when ``raw`` is another of the verifier's documents."""
    try:
        named = msgspec.json.decode(raw, type=_Formatted).format
    except msgspec.MsgspecError:
        return None
    found = DOCUMENTS.get(named) if isinstance(named, str) else None
    if found is None or found == what:
        return None
    message = f"this is a {found} ({named}), not a {what} - at `$.format`"
    return BundleError(what, message, found)


def _named(message: str) -> str:
    """Every error names its member as a path, a struct's own check as msgspec's do: at the
    end of the path (``$.seal.previous_consistency[0]``), and the document's own errors at
    ``$``, where msgspec names none."""
    found = _NAMED.fullmatch(message)
    if found is None:
        return message if " - at `" in message else f"{message} - at `$`"
    member, rule, path = found.groups()
    return f"{rule} - at `{path or '$'}.{member}`"


def _json_path(path: str) -> str:
    """A committed path of the document as msgspec names members: ``$.fields[0].salt``."""
    vector, _, pointer = path.partition(":")
    steps = pointer.split("/")[1:]
    text = "$"
    for kind, step in zip(vector, steps, strict=False):
        name = step.replace("~1", "/").replace("~0", "~")
        text += f"[{step}]" if kind == "a" else f".{name}"
    return text


def decode_bundle(data: bytes | str) -> Bundle:
    """Parse a bundle strictly; raise :class:`BundleError` naming the faulty member."""
    return _decode(data, Bundle, "bundle")


def encode_bundle(bundle: Bundle) -> bytes:
    """The bundle as JSON (members in documented order)."""
    return msgspec.json.encode(bundle)


def decode_key_directory(data: bytes | str) -> KeyDirectory:
    """Parse a key directory strictly (``context.load_key_directory`` checks its keys too)."""
    return _decode(data, KeyDirectory, "key directory")


def decode_trust_store(data: bytes | str) -> TrustStore:
    """Parse a trust store strictly (``context.load_trust_store`` checks its keys too)."""
    return _decode(data, TrustStore, "trust store")


def decode_erasure_receipt(data: bytes | str) -> SignedReceipt:
    """``{"receipt", "signature"}``, or a whole erase answer holding one as
    ``erasure_receipt``, parsed strictly; :class:`BundleError` naming the faulty member."""
    document = _decode(data, dict[str, Any], "erasure receipt")
    where = "$"
    if "erasure_receipt" in document and "receipt" not in document:
        document, where = document["erasure_receipt"], "$.erasure_receipt"
    try:
        return msgspec.convert(document, SignedReceipt, strict=True)
    except msgspec.ValidationError as error:
        message = _named(str(error)).replace("at `$", f"at `{where}", 1)
        raise BundleError("erasure receipt", message) from None


def header_of(members: dict[str, Any]) -> Header:
    """A header dict (as the service holds it) as a :class:`Header`; :class:`BundleError`."""
    try:
        return msgspec.convert(members, Header, strict=True)
    except msgspec.ValidationError as error:
        raise BundleError("header", _named(str(error))) from None


def covered_header_of(members: dict[str, Any]) -> Header | GapHeader:
    """A stored record's header dict, a record header or a gap header (by its ``format``),
    as a struct; :class:`BundleError`."""
    try:
        return msgspec.convert(members, Header | GapHeader, strict=True)
    except msgspec.ValidationError as error:
        raise BundleError("header", _named(str(error))) from None


__all__ = [
    "BUNDLE_FORMAT",
    "ERASURE_RECEIPT_FORMAT",
    "GAP_FORMAT",
    "HEADER_FORMAT",
    "KEYS_FORMAT",
    "TRUST_FORMAT",
    "Bundle",
    "Coverage",
    "DirectoryKey",
    "DisclosedField",
    "ErasureReceipt",
    "GapHeader",
    "Header",
    "KeyDirectory",
    "LogKey",
    "Seal",
    "SignedHeader",
    "SignedReceipt",
    "TimestampReceipt",
    "TrustStore",
    "TrustedAuthority",
    "TrustedWitness",
    "covered_header_of",
    "decode_bundle",
    "decode_erasure_receipt",
    "decode_key_directory",
    "decode_trust_store",
    "encode_bundle",
    "header_of",
]
