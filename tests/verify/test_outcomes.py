"""The outcome docs/bundle.md section 3 states for every rule, one test per row (issue 19).

Each row of the tables (``M1``…``M11`` for a malformed bundle, ``1.1``…``7.3`` for the checks)
has its cases here, each breaking that rule alone as far as a bundle allows; the test asserts
the stated status of the stated check. ``test_every_documented_rule_has_a_test`` reads the
tables from the page, so a row without a test, or a test without a row, fails.
``tests/verify_js/test_agreement.py`` runs the same cases through the browser verifier.
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest

from recordseal.chain import GAP_FORMAT, canonical_header, chain_leaf
from recordseal.core import inclusion_proof, merkle_root
from recordseal.services.bundles import tlog_proof_text
from recordseal.tlog import Checkpoint, Ed25519Signer, MLDSA44CosignatureSigner, sign_checkpoint
from recordseal.verify import (
    KeyDirectory,
    VerificationResult,
    load_key_directory,
    load_trust_store,
    verify_bundle,
)
from recordseal.verify.encoding import format_instant
from recordseal.verify.sealing import end_of_second

from .conftest import in_order, tampered
from .factory import ORIGIN, PUBLIC_WITNESS, RECORDS, SERVICE, TARGET_SEQ, WITNESS, World
from .test_tamper import (
    _checkpoint_start,
    _drop_coverage,
    _edit_proof,
    _first_proof_hash,
    _flip_hex,
    _flip_line,
    _index,
    _resigned,
    _set,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "bundle.md"
Doc = dict[str, Any]


@dataclass
class Case:
    """A bundle and what the verifier is given; ``keys`` and ``trust`` are documents (or, for
    a directory no loader would accept, the struct); ``browser``: the browser verifier runs it
    too (not when it needs what the browser does not check, docs/bundle.md)."""

    name: str
    bundle: bytes
    keys: Doc | KeyDirectory | None
    trust: Doc | None
    now: datetime | None = None
    browser: bool = True


@dataclass
class Rule:
    check: int
    status: str
    cases: Callable[[World], list[Case]]
    malformed: bool = field(default=False)


def _field(document: Doc, index: int = 0) -> Doc:
    item: Doc = document["fields"][index]
    return item


def _complete(world: World, name: str, edit: Callable[[Doc], None] | None = None) -> Case:
    """The complete bundle (every part), edited, with the key directory and trust store."""
    bundle = world.bundle() if edit is None else tampered(world.bundle(), edit)
    return Case(name, bundle, world.keys_document(), world.trust_document())


def _raw(world: World, name: str, text: Callable[[str], str]) -> Case:
    return Case(name, text(world.bundle().decode()).encode(), world.keys_document(), None)


def _edits(**edits: Callable[[Doc], None]) -> Callable[[World], list[Case]]:
    """One case per edit of the complete bundle."""
    return lambda world: [_complete(world, name, edit) for name, edit in edits.items()]


def _unusable_directory(world: World) -> KeyDirectory:
    document = world.keys_document()
    document["keys"][0]["key_id"] = "00" * 8  # not the key ID of its public key
    return msgspec.convert(document, KeyDirectory)


def _other_key_only(world: World) -> Doc:
    document = world.keys_document()
    document["keys"] = World().keys_document()["keys"]
    return document


def _signed_by_another_key(world: World) -> Callable[[Doc], None]:
    stranger = Ed25519Signer.generate(ORIGIN)
    signed = sign_checkpoint(world.checkpoint(len(world.log)), stranger)

    def edit(document: Doc) -> None:
        lines = str(document["seal"]["proof"]).split("\n")
        start = _checkpoint_start(lines)
        document["seal"]["proof"] = "\n".join(lines[:start]) + "\n" + signed

    return edit


def _authority_pem() -> str:
    """A throwaway self-signed certificate: a listed authority whose token will not verify."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric.ec import SECP256R1, generate_private_key
    from cryptography.x509.oid import NameOID

    key = generate_private_key(SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "outcome test TSA")])
    now = datetime.now(UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    return certificate.public_bytes(serialization.Encoding.PEM).decode()


def _bad_token(world: World) -> Case:
    bundle = tampered(
        world.bundle(),
        lambda d: d["seal"].update(
            timestamps=[{"authority": "tsa.example", "token": base64.b64encode(b"0" * 40).decode()}]
        ),
    )
    trust = world.trust_document(authorities=[("tsa.example", _authority_pem())])
    return Case(
        "a listed authority's token that does not verify",
        bundle,
        world.keys_document(),
        trust,
        browser=False,
    )


def _at(world: World, shift: timedelta) -> str:
    return format_instant(world.ingested_at(TARGET_SEQ) + shift)


# --- compromised keys (docs/bundle.md, "Compromised keys") --------------------------------

#: Long after every witness time of the factory's worlds: only the lack of a witness fails.
LATER = timedelta(days=1)


def _witnessed(world: World) -> datetime:
    """The bundle's ``not_after``: the end of the second the witness cosigned the sealing
    checkpoint in (check 7)."""
    return end_of_second(world.sealed_at)


def _compromised(world: World, shift: timedelta, **options: Any) -> Case:
    """The complete bundle (no window unless ``coverage``), its header key compromised at the
    witness time + ``shift``; ``options`` go to :meth:`World.bundle`, ``trust=None`` drops
    the trust store."""
    trust = options.pop("trust", world.trust_document())
    name = options.pop("name")
    options.setdefault("coverage", None)
    keys = world.keys_document(compromised_at=format_instant(_witnessed(world) + shift))
    return Case(name, world.bundle(**options), keys, trust)


def _log_compromised(world: World, shift: timedelta, **options: Any) -> Case:
    trust = options.pop("trust", world.trust_document())
    name = options.pop("name")
    moment = format_instant(_witnessed(world) + shift)
    keys = world.keys_document(log_compromised_at=moment)
    return Case(name, world.bundle(coverage=None, **options), keys, trust)


# --- a stream with a declared gap (docs/records.md, "Gap declarations") -------------------

#: seqs 5..1002 lost; the gap header is the stream's record 1003, records 1004 and 1005 follow
GAP = (5, 1002)
GAP_SEQ = GAP[1] + 1
LAST_SEQ = 1005


@functools.cache
def gap_world() -> World:
    """Records 1-4, the gap header at 1003, records 1004-1005 (a day ago: none in the future)."""
    base = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
    return World(gap=GAP, last_seq=LAST_SEQ, base=base)


def _gap_case(
    name: str,
    edit: Callable[[Doc], None] | None = None,
    *,
    window: tuple[int, int] = (1, LAST_SEQ),
    keys: Doc | None = None,
    world: World | None = None,
) -> Case:
    """A bundle of record 4 whose window may cross the gap, edited; keys and trust given."""
    world = world or gap_world()
    bundle = world.bundle(coverage=window)
    bundle = bundle if edit is None else tampered(bundle, edit)
    return Case(
        name, bundle, world.keys_document() if keys is None else keys, world.trust_document()
    )


def _gap_item(document: Doc) -> Doc:
    item: Doc = next(
        i for i in document["coverage"]["records"] if i["header"]["format"] == GAP_FORMAT
    )
    return item


def _gap_set(member: str, value: Any) -> Callable[[Doc], None]:
    return lambda document: _gap_item(document)["header"].update({member: value})


def _gap_resigned(world: World, sign: str = "gap", **changes: Any) -> Callable[[Doc], None]:
    """The gap header changed and signed again (``sign="header"``: as a record header)."""

    def apply(document: Doc) -> None:
        item = _gap_item(document)
        header = {**item["header"], **changes}
        signature = world.sign_gap(header) if sign == "gap" else world.sign(header)
        item.update(header=header, signature=signature.hex())

    return apply


def _record_resigned(world: World, seq: int, **changes: Any) -> Callable[[Doc], None]:
    """The covered record header at ``seq`` changed and signed again."""

    def apply(document: Doc) -> None:
        item = next(i for i in document["coverage"]["records"] if i["header"]["seq"] == seq)
        header = {**item["header"], **changes}
        item.update(header=header, signature=world.sign(header).hex())

    return apply


def _gap_appended(world: World, first: int, *, covered: bool = True) -> Callable[[Doc], None]:
    """A gap header declaring ``first..6`` lost appended as seq 7 of the plain stream (1..6),
    linked to seq ``first - 1``; the records it declares lost stay covered, or not."""
    prev = chain_leaf(canonical_header(world.records[first - 2].header))
    header = world.gap_header(first, RECORDS, prev)
    signature = world.sign_gap(header).hex()

    def apply(document: Doc) -> None:
        document["coverage"]["to_seq"] = RECORDS + 1
        records = document["coverage"]["records"]
        if not covered:
            records[:] = [item for item in records if item["header"]["seq"] < first]
        records.append({"header": header, "signature": signature})

    return apply


def _gap_header_disclosed(document: Doc) -> None:
    item = _gap_item(document)
    document.update(header=item["header"], signature=item["signature"])


RULES: dict[str, Rule] = {
    # --- a malformed bundle: check 1 failed, 2-7 unchecked ---------------------------------
    "M1": Rule(
        1,
        "failed",
        lambda w: [
            _raw(w, "a repeated member", lambda t: t.replace('"seq":4,', '"seq":4,"seq":4,', 1)),
            Case("invalid UTF-8", b'{"format": "\xff"}', None, None),
            Case("a number beyond the double range", b'{"format": 1e400}', None, None),
            Case("not JSON", b"{", None, None),
        ],
        malformed=True,
    ),
    "M2": Rule(
        1,
        "failed",
        lambda w: [
            Case("an array", b"[]", None, None),
            _complete(w, "another format", _set("format", "recordseal/bundle/v2")),
        ],
        malformed=True,
    ),
    "M3": Rule(
        1,
        "failed",
        _edits(
            **{
                "no signature": lambda d: d.pop("signature"),
                "an unknown member": lambda d: d.update(extra=1),
                "an unknown member of a field": lambda d: _field(d).update(note="x"),
                "an unknown member of the seal": lambda d: d["seal"].update(note="x"),
                "a seal without its log": lambda d: d["seal"].pop("log"),
                "a header without a member": lambda d: d["header"].pop("attestation"),
                "an unknown member of the aggregate path": lambda d: d["seal"].update(
                    aggregate={"proof": "x", "note": "x"}
                ),
                "an aggregate path without its proof": lambda d: d["seal"].update(aggregate={}),
            }
        ),
        malformed=True,
    ),
    "M4": Rule(
        1,
        "failed",
        _edits(
            **{
                "seq as a string": _set("header.seq", "4"),
                "seq as a fraction": _set("header.seq", 4.5),
                "fields as an object": _set("fields", {}),
                "a path as a number": lambda d: _field(d).update(path=1),
                "a null aggregate path": lambda d: d["seal"].update(aggregate=None),
                "an aggregate proof as a list": lambda d: d["seal"].update(aggregate={"proof": []}),
            }
        ),
        malformed=True,
    ),
    "M5": Rule(
        1,
        "failed",
        _edits(
            **{
                "a header of another format": _set("header.format", "recordseal/header/v2"),
                "seq 0": _set("header.seq", 0),
                "seq beyond 2^53 - 1": _set("header.seq", 2**53),
                "field_count negative": _set("header.field_count", -1),
                "root in upper case": lambda d: d["header"].update(
                    root=d["header"]["root"].upper()
                ),
                "prev of 31 bytes": lambda d: d["header"].update(prev=d["header"]["prev"][2:]),
                "ingested_at on the 30th of February": _set(
                    "header.ingested_at", "2026-02-30T00:00:00Z"
                ),
                "a covered header's root not hex": _set("coverage.records.0.header.root", "x" * 64),
            }
        ),
        malformed=True,
    ),
    "M6": Rule(
        1,
        "failed",
        _edits(
            **{
                "signature not hex": _set("signature", "xyz"),
                "signature of odd length": lambda d: d.update(signature=d["signature"][:-1]),
                "a covered signature in upper case": lambda d: d["coverage"]["records"][0].update(
                    signature=d["coverage"]["records"][0]["signature"].upper()
                ),
            }
        ),
        malformed=True,
    ),
    "M7": Rule(
        1,
        "failed",
        _edits(
            **{
                "salt not hex": lambda d: _field(d).update(salt="zz" * 32),
                "salt of odd length": lambda d: _field(d).update(salt="a" * 63),
                "a proof node not hex": lambda d: _field(d)["proof"].__setitem__(0, "0g"),
                "a proof node with a space": lambda d: _field(d)["proof"].__setitem__(0, "ab cd"),
                "index negative": lambda d: _field(d).update(index=-1),
                "index as a string": lambda d: _field(d).update(index="0"),
            }
        ),
        malformed=True,
    ),
    "M8": Rule(
        1,
        "failed",
        _edits(
            **{
                "a consistency node not base64": _set("seal.previous_consistency", ["%%%"]),
                "a token of non-canonical base64": _set(
                    "seal.timestamps", [{"authority": "tsa.example", "token": "AB=="}]
                ),
            }
        ),
        malformed=True,
    ),
    "M9": Rule(
        1,
        "failed",
        _edits(
            **{
                "from_seq 0": _set("coverage.from_seq", 0),
                "to_seq as a string": _set("coverage.to_seq", "6"),
            }
        ),
        malformed=True,
    ),
    "M10": Rule(
        1,
        "failed",
        lambda w: [
            _gap_case("a reason in upper case", _gap_set("reason", "Store_rolled_back")),
            _gap_case("an empty reason", _gap_set("reason", "")),
            _gap_case("a reason of 65 characters", _gap_set("reason", "x" * 65)),
            _gap_case("a reason with a hyphen", _gap_set("reason", "store-rolled-back")),
            _gap_case("prev of 31 bytes", _gap_set("prev", "ab" * 31)),
            _gap_case("declared_at not a date-time", _gap_set("declared_at", "yesterday")),
            _gap_case("from_seq 0", _gap_set("from_seq", 0)),
            _gap_case("to_seq as a string", _gap_set("to_seq", "1002")),
            _gap_case("seq beyond 2^53 - 1", _gap_set("seq", 2**53)),
            _gap_case("an unknown member", _gap_set("note", "x")),
            _gap_case("no reason", lambda d: _gap_item(d)["header"].pop("reason")),
            _gap_case("a record member", _gap_set("record_id", "x")),
            _gap_case("another format", _gap_set("format", "recordseal/gap/v2")),
        ],
        malformed=True,
    ),
    "M11": Rule(
        1,
        "failed",
        lambda w: [
            _gap_case("the bundle's header is the gap header", _gap_header_disclosed),
            _gap_case(
                "the gap header disclosed without fields",
                lambda d: (_gap_header_disclosed(d), d.update(fields=[]), d.update(coverage=None)),
            ),
        ],
        malformed=True,
    ),
    # --- 1. field commitments --------------------------------------------------------------
    "1.1": Rule(
        1,
        "failed",
        _edits(
            **{
                "a salt of 31 bytes": lambda d: _field(d).update(salt=_field(d)["salt"][2:]),
                "a salt of 33 bytes": lambda d: _field(d).update(salt=_field(d)["salt"] + "00"),
            }
        ),
    ),
    "1.2": Rule(
        1,
        "failed",
        _edits(
            **{
                "no pointer": lambda d: _field(d).update(path="o:amount"),
                "an array first": lambda d: _field(d).update(path="a:/0"),
                "steps and vector differ": lambda d: _field(d).update(path="oo:/amount"),
                "an index with a leading zero": lambda d: _field(d).update(path="oa:/lines/01"),
                "a bad escape": lambda d: _field(d).update(path="o:/a~2b"),
                "a control character": lambda d: _field(d).update(path="o:/a\u0001"),
                "over 512 bytes": lambda d: _field(d).update(path="o:/" + "a" * 510),
            }
        ),
    ),
    "1.3": Rule(
        1,
        "failed",
        _edits(
            **{
                "an unknown kind": lambda d: _field(d).update(kind="nonsense"),
                "a value its kind refuses": lambda d: _field(d).update(value=12.5),
            }
        ),
    ),
    "1.4": Rule(
        1,
        "failed",
        _edits(
            **{
                "a path twice": lambda d: d["fields"].append({**_field(d), "index": 999}),
            }
        ),
    ),
    "1.5": Rule(
        1,
        "failed",
        _edits(
            **{
                "an index twice": lambda d: _field(d, 1).update(index=_field(d)["index"]),
            }
        ),
    ),
    # --- 2. record tree --------------------------------------------------------------------
    "2.1": Rule(
        2,
        "unchecked",
        _edits(
            **{
                "check 1 failed": lambda d: _field(d).update(salt=_field(d)["salt"][2:]),
            }
        ),
    ),
    "2.2": Rule(
        2,
        "failed",
        _edits(
            **{
                "a proof node changed": lambda d: _field(d)["proof"].__setitem__(
                    0, _flip_hex(_field(d)["proof"][0])
                ),
                "a proof node dropped": lambda d: _field(d).update(proof=_field(d)["proof"][1:]),
                "a proof node of 31 bytes": lambda d: _field(d)["proof"].__setitem__(
                    0, _field(d)["proof"][0][2:]
                ),
                "an index beyond field_count": lambda d: _field(d).update(index=1000),
                "a value changed": lambda d: _field(d).update(value=1001),
                # A tree size that gives the paths another shape (sizes with the same shape
                # verify alike: the header's signature, check 3, covers the count).
                "a field_count of 1": _set("header.field_count", 1),
            }
        ),
    ),
    # --- 3. header signature ---------------------------------------------------------------
    "3.1": Rule(
        3,
        "unchecked",
        lambda w: [
            Case("no key directory", w.bundle(), None, w.trust_document()),
            Case(
                "an unusable key directory",
                w.bundle(),
                _unusable_directory(w),
                w.trust_document(),
                browser=False,
            ),
        ],
    ),
    "3.2": Rule(
        3,
        "unchecked",
        lambda w: [
            Case("the key not listed", w.bundle(), _other_key_only(w), w.trust_document()),
        ],
    ),
    "3.3": Rule(
        3,
        "failed",
        _edits(
            **{
                "a changed signature": lambda d: d.update(signature=_flip_hex(d["signature"], 20)),
                "a truncated signature": lambda d: d.update(signature=d["signature"][:-2]),
                "a changed header": _set("header.record_type", "order.cancelled"),
            }
        ),
    ),
    "3.4": Rule(
        3,
        "failed",
        lambda w: [
            Case(
                f"{member} {when}",
                w.bundle(coverage=None),
                w.keys_document(**{member: _at(w, shift)}),
                w.trust_document(),
            )
            for member, when, shift in [
                ("not_before", "after ingested_at", timedelta(microseconds=1)),
                ("not_after", "at ingested_at", timedelta(0)),
                ("revoked_at", "at ingested_at", timedelta(0)),
                ("revoked_at", "before ingested_at", timedelta(seconds=-1)),
            ]
        ],
    ),
    "3.5": Rule(
        3,
        "failed",
        lambda w: [
            _compromised(w, timedelta(microseconds=-1), name="compromised within the second"),
            _compromised(w, -timedelta(minutes=1), name="compromised before the witness time"),
            _compromised(w, LATER, cosigned=False, name="no witness cosigned the checkpoint"),
            _compromised(w, LATER, sealed=False, name="not sealed"),
            _compromised(w, LATER, trust=None, name="no trust store"),
            Case(
                "the seal does not verify",
                tampered(w.bundle(coverage=None), _edit_proof(_first_proof_hash)),
                w.keys_document(compromised_at=format_instant(_witnessed(w) + LATER)),
                w.trust_document(),
            ),
            Case(
                "the log key is compromised too",
                w.bundle(coverage=None),
                w.keys_document(
                    compromised_at=format_instant(_witnessed(w) + LATER),
                    log_compromised_at=format_instant(_witnessed(w) - timedelta(minutes=1)),
                ),
                w.trust_document(),
            ),
        ],
    ),
    # --- 4. sealed batch -------------------------------------------------------------------
    "4.1": Rule(
        4,
        "unchecked",
        lambda w: [
            Case("no seal", w.bundle(sealed=False), w.keys_document(), w.trust_document()),
        ],
    ),
    "4.2": Rule(
        4,
        "failed",
        lambda w: [
            _complete(w, "not a tlog proof", _set("seal.proof", "not a proof")),
            Case(
                "not a tlog proof, alone", tampered(w.bundle(), _set("seal.proof", "x")), None, None
            ),
            _complete(
                w, "another proof format", _edit_proof(lambda lines: lines.__setitem__(0, "v2"))
            ),
            _complete(
                w,
                "a checkpoint without signatures",
                lambda d: d["seal"].update(
                    proof=str(d["seal"]["proof"]).rsplit("\n\n", 1)[0] + "\n\n"
                ),
            ),
        ],
    ),
    "4.3": Rule(
        4,
        "unchecked",
        lambda w: [
            Case("no key directory", w.bundle(), None, w.trust_document()),
            Case("no log key", w.bundle(), {**w.keys_document(), "logs": []}, w.trust_document()),
        ],
    ),
    "4.4": Rule(
        4,
        "failed",
        lambda w: [
            Case(
                "the seal names another log",
                tampered(w.bundle(), _set("seal.log", "other/log")),
                {
                    **w.keys_document(),
                    "logs": [
                        *w.keys_document()["logs"],
                        {"origin": "other/log", "vkey": w.log_signer.verifier().vkey},
                    ],
                },
                w.trust_document(),
            ),
        ],
    ),
    "4.5": Rule(
        4,
        "failed",
        lambda w: [
            _complete(w, "a changed log signature", _edit_proof(_flip_line(ORIGIN, 30))),
            _complete(w, "signed by another key", _signed_by_another_key(w)),
        ],
    ),
    "4.6": Rule(
        4,
        "failed",
        lambda w: [
            _complete(w, "index 0", _edit_proof(_index(0))),
        ],
    ),
    "4.7": Rule(
        4,
        "failed",
        lambda w: [
            _complete(w, "an inclusion hash changed", _edit_proof(_first_proof_hash)),
            _complete(w, "another index", _edit_proof(_index(6))),
            _complete(w, "another header", _set("header.occurred_at", "2026-11-21T07:00:01Z")),
        ],
    ),
    "4.8": Rule(
        4,
        "failed",
        lambda w: [
            _log_compromised(w, timedelta(microseconds=-1), name="compromised within the second"),
            _log_compromised(w, -timedelta(minutes=1), name="compromised before the witness"),
            _log_compromised(w, LATER, cosigned=False, name="no witness cosigned it"),
            _log_compromised(w, LATER, trust=None, name="no trust store"),
        ],
    ),
    "4.9": Rule(
        4,
        "unchecked",
        lambda w: [
            Case(
                "an Ed25519-only checkpoint, the trust store requiring ML-DSA-44 too",
                w.bundle(),
                w.keys_document(),
                w.trust_document(checkpoint_signatures=["Ed25519", "ML-DSA-44"]),
            ),
            Case(
                "a dual-signed checkpoint, the directory without the ML-DSA-44 key",
                pq_world().bundle(),
                {**pq_world().keys_document(), "logs": pq_world().keys_document()["logs"][:1]},
                pq_world().trust_document(checkpoint_signatures=["ML-DSA-44"]),
            ),
            Case(
                "the Ed25519 signature dropped, the default policy",
                tampered(pq_world().bundle(), _edit_proof(_drop_log_line(64))),
                pq_world().keys_document(),
                pq_world().trust_document(),
            ),
        ],
    ),
    # --- 5. witness receipts ---------------------------------------------------------------
    "5.1": Rule(
        5,
        "unchecked",
        lambda w: [
            Case("no seal", w.bundle(sealed=False), w.keys_document(), w.trust_document()),
            _complete(w, "a proof that does not parse", _set("seal.proof", "not a proof")),
        ],
    ),
    "5.2": Rule(
        5,
        "unchecked",
        lambda w: [
            Case("no trust store", w.bundle(), w.keys_document(), None),
        ],
    ),
    "5.3": Rule(
        5,
        "failed",
        lambda w: [
            _complete(w, "a changed cosignature", _edit_proof(_flip_line("witness.example", 30))),
            Case(
                "a cosignature in the future",
                w.bundle(),
                w.keys_document(),
                w.trust_document(),
                now=w.sealed_at - timedelta(minutes=10),
            ),
            _complete(w, "a malformed cosignature", _edit_proof(_short_cosignature)),
        ],
    ),
    "5.4": Rule(5, "failed", lambda w: [_bad_token(w)]),
    "5.5": Rule(
        5,
        "unchecked",
        lambda w: [
            Case("quorum 2 of 1", w.bundle(), w.keys_document(), w.trust_document(quorum=2)),
            Case("not cosigned", w.bundle(cosigned=False), w.keys_document(), w.trust_document()),
            Case(
                "cosigned by a witness nobody trusts",
                w.bundle(),
                w.keys_document(),
                w.trust_document(witnesses=[World().witness]),
            ),
        ],
    ),
    "5.6": Rule(
        5,
        "unchecked",
        lambda w: [
            _complete(w, "an Ed25519 cosignature dated 0", _edit_proof(_undated(w))),
            Case(
                "an ML-DSA-44 cosignature dated 0",
                tampered(pq_world().bundle(), _edit_proof(_undated(pq_world()))),
                pq_world().keys_document(),
                pq_world().trust_document(),
            ),
            _through(
                w,
                "the aggregate's cosignature dated 0",
                _edit_aggregate(_undated_aggregate(w)),
            ),
        ],
    ),
    "5.7": Rule(
        5,
        "failed",
        lambda w: [
            _through(w, "not a tlog proof", _set("seal.aggregate.proof", "not a proof")),
            _through(
                w,
                "a checkpoint without signatures",
                lambda d: d["seal"]["aggregate"].update(
                    proof=str(d["seal"]["aggregate"]["proof"]).rsplit("\n\n", 1)[0] + "\n\n"
                ),
            ),
            _through(
                w, "another proof format", _edit_aggregate(lambda ls: ls.__setitem__(0, "v2"))
            ),
        ],
    ),
    "5.8": Rule(
        5,
        "failed",
        lambda w: [_another_service(w)],
    ),
    "5.9": Rule(
        5,
        "unchecked",
        lambda w: [
            _through(w, "no log key for the aggregate", keys=w.keys_document()),
            _through(w, "no key directory", keys=None),
        ],
    ),
    "5.10": Rule(
        5,
        "failed",
        lambda w: [
            _through(w, "a changed log signature", _edit_aggregate(_flip_line(SERVICE, 30))),
            _through(
                w,
                "signed by another key",
                lambda d: d["seal"]["aggregate"].update(
                    proof=w.aggregate_proof(signer=Ed25519Signer.generate(SERVICE))
                ),
            ),
        ],
    ),
    "5.11": Rule(
        5,
        "failed",
        lambda w: [
            _through(w, "another index", _edit_aggregate(_index(2))),
            _through(w, "a changed proof hash", _edit_aggregate(_first_proof_hash)),
            _through(
                w,
                "the path of another checkpoint",
                lambda d: d["seal"].update(proof=_smaller_sealing(w)),
                keys=w.keys_document(aggregate=True),
                trust=w.trust_document(witnesses=[w.public_witness, w.witness]),
            ),
        ],
    ),
    "5.12": Rule(
        5,
        "failed",
        lambda w: [
            _through(w, "a changed cosignature", _edit_aggregate(_flip_line(PUBLIC_WITNESS, 30))),
            _through(w, "a cosignature in the future", now=w.aggregated_at - timedelta(minutes=10)),
        ],
    ),
    "5.13": Rule(
        5,
        "failed",
        lambda w: [
            _through(
                w,
                f"the aggregate's key compromised {when}",
                keys=w.keys_document(
                    aggregate=True,
                    aggregate_compromised_at=format_instant(end_of_second(w.aggregated_at) + shift),
                ),
            )
            for when, shift in [
                ("within the witness's second", timedelta(microseconds=-1)),
                ("before the witness time", -timedelta(minutes=1)),
            ]
        ],
    ),
    "5.14": Rule(
        5,
        "unchecked",
        lambda w: [
            _dual_through(
                "the trust store requires ML-DSA-44, the aggregate is signed with Ed25519 alone",
                dual_aggregate=False,
                directory_mldsa=False,
            ),
            _dual_through(
                "the aggregate is dual-signed, the directory lacks its ML-DSA-44 key",
                dual_aggregate=True,
                directory_mldsa=False,
            ),
        ],
    ),
    # --- 6. sequence continuity ------------------------------------------------------------
    "6.1": Rule(6, "failed", _edits(**{"an empty window": _set("coverage.from_seq", 7)})),
    "6.2": Rule(
        6,
        "failed",
        _edits(
            **{
                "a window before the record": _set("coverage.to_seq", TARGET_SEQ - 1),
                "a window after the record": _set("coverage.from_seq", TARGET_SEQ + 1),
            }
        ),
    ),
    "6.3": Rule(
        6,
        "failed",
        lambda w: [
            _complete(w, "a header of another stream", _resigned(w, 2, stream="invoices")),
            _complete(w, "a header of another tenant", _resigned(w, 2, tenant="globex")),
            _gap_case(
                "a gap header of another stream",
                _gap_resigned(gap_world(), stream="invoices"),
                window=(1, GAP_SEQ),
            ),
        ],
    ),
    "6.4": Rule(
        6,
        "failed",
        _edits(
            **{
                "a header beyond the window": _set("coverage.to_seq", TARGET_SEQ),
            }
        ),
    ),
    "6.5": Rule(
        6,
        "failed",
        _edits(
            **{
                "headers out of order": lambda d: d["coverage"]["records"].reverse(),
                "a header twice": lambda d: d["coverage"]["records"].insert(
                    1, d["coverage"]["records"][1]
                ),
            }
        ),
    ),
    "6.6": Rule(
        6,
        "failed",
        lambda w: [
            _complete(
                w,
                "another header at the record's seq",
                _resigned(w, TARGET_SEQ, record_type="order.rewritten"),
            ),
        ],
    ),
    "6.7": Rule(
        6,
        "failed",
        lambda w: [
            _complete(w, "a broken prev link", _resigned(w, 2, prev="11" * 32)),
            _complete(w, "seq 1 off the genesis", _resigned(w, 1, prev="22" * 32)),
        ],
    ),
    "6.8": Rule(
        6,
        "failed",
        lambda w: [
            _complete(
                w, "a changed covered signature", _set("coverage.records.1.signature", "00" * 64)
            ),
            Case(
                "a covered header's key revoked",
                w.bundle(),
                w.keys_document(revoked_at=_at(w, timedelta(seconds=15))),
                w.trust_document(),
            ),
        ],
    ),
    "6.9": Rule(
        6,
        "unchecked",
        lambda w: [
            Case("no key directory", w.bundle(), None, w.trust_document()),
            Case(
                "a covered header's key not listed",
                tampered(w.bundle(), _foreign_header(w)),
                w.keys_document(),
                w.trust_document(),
            ),
            Case(
                "a gap, no key directory",
                gap_world().bundle(coverage=(1, LAST_SEQ)),
                None,
                gap_world().trust_document(),
            ),
            _gap_case(
                "a gap header's key not listed",
                _foreign_gap(gap_world()),
                window=(1, GAP_SEQ),
            ),
        ],
    ),
    "6.10": Rule(
        6,
        "unchecked",
        lambda w: [
            _complete(w, "a gap", _drop_coverage(2)),
            _complete(w, "the record's own seq missing", _drop_coverage(TARGET_SEQ)),
            _complete(w, "a huge window", _set("coverage.to_seq", 2**53 - 1)),
            _gap_case("a gap, and seq 2 missing undeclared", _record_dropped(2)),
        ],
    ),
    "6.11": Rule(
        6,
        "failed",
        lambda w: [
            _gap_case(
                "a range that ends two before the gap",
                _gap_resigned(gap_world(), to_seq=GAP[1] - 1),
                window=(1, GAP_SEQ),
            ),
            _gap_case(
                "an empty range",
                _gap_resigned(gap_world(), from_seq=GAP[1] + 1, to_seq=GAP[1]),
                window=(1, GAP_SEQ),
            ),
            _gap_case(
                "a range that ends at the gap itself",
                _gap_resigned(gap_world(), to_seq=GAP_SEQ),
                window=(1, GAP_SEQ),
            ),
        ],
    ),
    "6.12": Rule(
        6,
        "failed",
        lambda w: [
            _gap_case(
                "a changed gap signature", lambda d: _gap_item(d).update(signature="00" * 64)
            ),
            _gap_case(
                "a gap signed as a record header",
                _gap_resigned(gap_world(), sign="header"),
                window=(1, GAP_SEQ),
            ),
            _gap_case(
                "a changed reason",
                _gap_set("reason", "operator_error"),
                window=(1, GAP_SEQ),
            ),
            _gap_case(
                "the key revoked before declared_at",
                window=(1, GAP_SEQ),
                keys=gap_world().keys_document(revoked_at=_declared(timedelta(seconds=-1))),
            ),
            _gap_case(
                "the key expired at declared_at",
                window=(1, GAP_SEQ),
                keys=gap_world().keys_document(not_after=_declared(timedelta(0))),
            ),
        ],
    ),
    "6.13": Rule(
        6,
        "failed",
        lambda w: [
            _gap_case(
                "a gap that does not link to the header before its range",
                _gap_resigned(gap_world(), prev="11" * 32),
                window=(1, GAP_SEQ),
            ),
            _gap_case(
                "the header after the gap does not link to it",
                _record_resigned(gap_world(), GAP_SEQ + 1, prev="22" * 32),
            ),
            _gap_case(
                "a gap from seq 1 off the genesis",
                _gap_resigned(_first_gap_world(), prev="33" * 32),
                window=(1, RECORDS),
                world=_first_gap_world(),
            ),
        ],
    ),
    "6.14": Rule(
        6,
        "failed",
        lambda w: [
            _complete(w, "records declared lost are covered", _gap_appended(w, TARGET_SEQ + 1)),
            _complete(
                w,
                "the record itself declared lost",
                _gap_appended(w, TARGET_SEQ, covered=False),
            ),
        ],
    ),
    "6.15": Rule(
        6,
        "unchecked",
        lambda w: [
            _gap_case("a window across the gap"),
            _gap_case("a window that ends at the gap", window=(1, GAP_SEQ)),
            _gap_case(
                "a window inside a gap from seq 1",
                window=(2, RECORDS),
                world=_first_gap_world(),
            ),
        ],
    ),
    "6.16": Rule(
        6,
        "failed",
        lambda w: [
            _compromised(w, LATER, coverage=(1, RECORDS), name="covered headers after the record"),
            Case(
                "covered headers before the record, not linked to it",
                tampered(w.bundle(coverage=(1, TARGET_SEQ)), _drop_coverage(TARGET_SEQ - 1)),
                w.keys_document(compromised_at=format_instant(_witnessed(w) + LATER)),
                w.trust_document(),
            ),
            _compromised(
                w,
                -timedelta(minutes=1),
                coverage=(1, TARGET_SEQ),
                name="linked headers, compromised before the witness time",
            ),
            _gap_case(
                "a gap header after the record",
                window=(1, GAP_SEQ),
                keys=gap_world().keys_document(
                    compromised_at=format_instant(_witnessed(gap_world()) + LATER)
                ),
            ),
            _gap_case(
                "a gap header before the record, compromised before the witness time",
                window=(1, TARGET_SEQ),
                world=_first_gap_world(),
                keys=_first_gap_world().keys_document(
                    compromised_at=format_instant(_witnessed(_first_gap_world()) - LATER)
                ),
            ),
        ],
    ),
    # --- 7. verdict and time bracket -------------------------------------------------------
    "7.1": Rule(
        7,
        "unchecked",
        lambda w: [
            Case("no seal", w.bundle(sealed=False), w.keys_document(), w.trust_document()),
            Case("no log key", w.bundle(), {**w.keys_document(), "logs": []}, w.trust_document()),
            _complete(w, "a failed seal", _edit_proof(_first_proof_hash)),
        ],
    ),
    "7.2": Rule(
        7,
        "unchecked",
        lambda w: [
            Case("not cosigned", w.bundle(cosigned=False), w.keys_document(), w.trust_document()),
            Case("no trust store", w.bundle(), w.keys_document(), None),
        ],
    ),
    "7.3": Rule(
        7,
        "unchecked",
        lambda w: [
            Case(
                "the service's clock seconds ahead of the witness's",
                w.bundle(
                    previous=False, sealed_at=w.ingested_at(TARGET_SEQ) - timedelta(seconds=2)
                ),
                w.keys_document(),
                w.trust_document(),
            ),
            Case(
                "the previous checkpoint cosigned after the sealing one",
                w.bundle(sealed_at=w.previous_at - timedelta(seconds=5)),
                w.keys_document(),
                w.trust_document(),
            ),
        ],
    ),
}


@functools.cache
def pq_world() -> World:
    """A log signing with Ed25519 and ML-DSA-44 (as the service does), an ML-DSA-44 witness."""
    return World(
        log_mldsa=MLDSA44CosignatureSigner.generate(ORIGIN, clock=None),
        witness=MLDSA44CosignatureSigner.generate(WITNESS),
    )


def _drop_log_line(size: int) -> Callable[[list[str]], None]:
    """Drop the log's signature line whose signature (after the key ID) has ``size`` bytes."""

    def edit(lines: list[str]) -> None:
        prefix = f"— {ORIGIN} "
        for at, line in enumerate(lines):
            if line.startswith(prefix) and len(base64.b64decode(line[len(prefix) :])) == 4 + size:
                del lines[at]
                return
        raise AssertionError("no such log signature")

    return edit


def _undated(world: World) -> Callable[[list[str]], None]:
    """The witness's cosignature replaced by its valid cosignature dated 0: it states no time
    (c2sp.org/tlog-cosignature), so it vouches for nothing (rule 5.6)."""
    undated = world.witness.cosign(world.checkpoint(len(world.log)).text(), 0)

    def edit(lines: list[str]) -> None:
        prefix = f"— {WITNESS} "
        at = next(i for i, line in enumerate(lines) if line.startswith(prefix))
        lines[at] = undated.line.removesuffix("\n")

    return edit


# --- the path into the aggregate log (rules 5.7 to 5.14) -------------------------------------

_UNSET: Any = object()


def _through(
    world: World,
    name: str,
    edit: Callable[[Doc], None] | None = None,
    *,
    keys: Any = _UNSET,
    trust: Any = _UNSET,
    now: datetime | None = None,
) -> Case:
    """A bundle whose checkpoint only the aggregate's witness vouches for, through the
    aggregate log, edited; by default with the directory listing the aggregate's key and a
    trust store naming only the public witness."""
    bundle = world.bundle(aggregate=True, cosigned=False)
    return Case(
        name,
        bundle if edit is None else tampered(bundle, edit),
        world.keys_document(aggregate=True) if keys is _UNSET else keys,
        world.trust_document(witnesses=[world.public_witness]) if trust is _UNSET else trust,
        now,
    )


def _edit_aggregate(edit: Callable[[list[str]], None]) -> Callable[[Doc], None]:
    def apply(document: Doc) -> None:
        lines = str(document["seal"]["aggregate"]["proof"]).split("\n")
        edit(lines)
        document["seal"]["aggregate"]["proof"] = "\n".join(lines)

    return apply


def _another_service(world: World) -> Case:
    """The aggregate of another service, whose key the directory lists too."""
    stranger = Ed25519Signer.generate("other.service")
    keys = world.keys_document(aggregate=True)
    keys["logs"].append({"origin": "other.service", "vkey": stranger.verifier().vkey})

    def edit(document: Doc) -> None:
        document["seal"]["aggregate"]["proof"] = world.aggregate_proof(signer=stranger)

    return _through(world, "the aggregate of another service", edit, keys=keys)


def _undated_aggregate(world: World) -> Callable[[list[str]], None]:
    """The public witness's cosignature on the aggregate checkpoint replaced by its valid
    cosignature dated 0: it vouches for nothing there either (rule 5.6)."""
    entries = world.aggregate_entries()
    text = Checkpoint(SERVICE, len(entries), merkle_root(entries)).text()
    undated = world.public_witness.cosign(text, 0)

    def edit(lines: list[str]) -> None:
        prefix = f"— {PUBLIC_WITNESS} "
        at = next(i for i, line in enumerate(lines) if line.startswith(prefix))
        lines[at] = undated.line.removesuffix("\n")

    return edit


@functools.cache
def dual_world(dual_aggregate: bool) -> World:
    """A log signing with Ed25519 and ML-DSA-44, as the service does, and its aggregate
    signed the same way (``dual_aggregate``) or with Ed25519 alone."""
    return World(
        log_mldsa=MLDSA44CosignatureSigner.generate(ORIGIN, clock=None),
        aggregate_mldsa=(
            MLDSA44CosignatureSigner.generate(SERVICE, clock=None) if dual_aggregate else None
        ),
    )


def _dual_through(name: str, *, dual_aggregate: bool, directory_mldsa: bool) -> Case:
    """A dual-signed sealing checkpoint only the aggregate's witness vouches for, under a
    trust store requiring both algorithms (so rule 4.9 holds, and 5.14 is what is left);
    ``directory_mldsa``: the directory lists the aggregate's ML-DSA-44 key."""
    world = dual_world(dual_aggregate)
    keys = world.keys_document(aggregate=True)
    if not directory_mldsa:
        mldsa = world.aggregate_mldsa.vkey if world.aggregate_mldsa is not None else None
        keys["logs"] = [log for log in keys["logs"] if log["vkey"] != mldsa]
    trust = world.trust_document(
        witnesses=[world.public_witness], checkpoint_signatures=["Ed25519", "ML-DSA-44"]
    )
    return _through(world, name, keys=keys, trust=trust)


def _smaller_sealing(world: World) -> str:
    """The seal's proof against the log's checkpoint one entry larger than the record
    (cosigned): a true proof, of a checkpoint the aggregate's path is not of."""
    size, index = world.target_index + 1, world.target_index
    signed = world.signed_checkpoint(size, world.sealed_at)
    return tlog_proof_text(index, inclusion_proof(world.log[:size], index), signed)


def _short_cosignature(lines: list[str]) -> None:
    """The witness's cosignature cut to 40 bytes: its key ID kept, so it is the trusted
    witness's, and too short to be a cosignature (8 + 64 bytes)."""
    prefix = "— witness.example "
    at = next(i for i, line in enumerate(lines) if line.startswith(prefix))
    raw = base64.b64decode(lines[at][len(prefix) :])
    lines[at] = prefix + base64.b64encode(raw[:40]).decode()


def _foreign_header(world: World) -> Callable[[Doc], None]:
    """The last covered header signed by a key the directory does not list (its key_id says
    so); nothing in the window links to it, so no link breaks."""
    stranger = World()
    header = {**world.records[-1].header, "key_id": stranger.header_signer.key_id}
    signature = stranger.sign(header).hex()

    def apply(document: Doc) -> None:
        document["coverage"]["records"][-1] = {"header": header, "signature": signature}

    return apply


def _declared(shift: timedelta) -> str:
    return format_instant(gap_world().ingested_at(GAP_SEQ) + shift)


@functools.cache
def _first_gap_world() -> World:
    """seqs 1-2 lost: the gap header at 3 links to the stream genesis, record 4 to the gap."""
    return World(gap=(1, 2))


def _record_dropped(seq: int) -> Callable[[Doc], None]:
    def apply(document: Doc) -> None:
        records = document["coverage"]["records"]
        records[:] = [item for item in records if item["header"]["seq"] != seq]

    return apply


def _foreign_gap(world: World) -> Callable[[Doc], None]:
    """The gap header signed by a key the directory does not list (its key_id says so);
    the window ends with it, so no link breaks."""
    stranger = World()

    def apply(document: Doc) -> None:
        item = _gap_item(document)
        header = {**item["header"], "key_id": stranger.header_signer.key_id}
        item.update(header=header, signature=stranger.sign_gap(header).hex())

    return apply


def cases(world: World) -> Iterator[tuple[str, Case]]:
    """Every case of every rule, with its rule's number."""
    for number, rule in RULES.items():
        for case in rule.cases(world):
            yield number, case


def run(case: Case) -> VerificationResult:
    keys = case.keys
    if isinstance(keys, dict):
        keys = load_key_directory(json.dumps(keys))
    trust = None if case.trust is None else load_trust_store(json.dumps(case.trust))
    return verify_bundle(case.bundle, keys, trust, now=case.now)


@pytest.mark.parametrize("number", RULES)
def test_the_documented_outcome(world: World, number: str) -> None:
    rule = RULES[number]
    for case in rule.cases(world):
        result = run(case)
        check = result.check(rule.check)
        assert check.status == rule.status, (case.name, check.detail)
        if rule.malformed:
            assert check.detail.startswith("malformed bundle: "), (case.name, check.detail)
            assert [c.status for c in result.checks[1:]] == ["unchecked"] * 6
            assert result.record is None and result.disclosed == {}
        expected = "FAILED" if rule.status == "failed" else result.verdict
        assert result.verdict == expected
        if rule.status == "unchecked":
            assert result.verdict != "VERIFIED", case.name


def test_no_time_bracket_is_inverted(world: World) -> None:
    """Whatever a case breaks, a bracket with both ends has ``not_before <= not_after``; a
    lower bound that would be later is dropped (rule 7.3)."""
    for number, case in cases(world):
        bracket = run(case).time_bracket
        assert in_order(bracket), (number, case.name, bracket)
    for case in RULES["7.3"].cases(world):
        result = run(case)
        assert (result.time_bracket.not_before, result.time_bracket.not_before_by) == (None, None)
        assert result.time_bracket.not_after is not None
        assert "is later than the upper bound" in result.check(7).detail, case.name


def test_every_documented_rule_has_a_test() -> None:
    documented = re.findall(r"^\| `([0-9]\.[0-9]+|M[0-9]+)` ", DOCS.read_text(), re.MULTILINE)
    assert len(documented) == len(set(documented))
    assert documented == list(RULES)


def test_the_complete_bundle_passes_every_check(world: World) -> None:
    """The reference the cases break: with everything given, every check passes."""
    result = run(_complete(world, "complete"))
    assert result.verdict == "VERIFIED", [(c.number, c.detail) for c in result.checks]
