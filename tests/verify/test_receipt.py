"""Erasure receipts (docs/records.md, "Erasure receipts"): ``verify_erasure_receipt`` and
``recordseal verify-receipt``, with real Ed25519 keys and key directories."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from recordseal.chain import (
    build_erasure_receipt,
    canonical_header,
    erasure_receipt_message,
    gap_signing_message,
)
from recordseal.crypto.signing import HEADER_CONTEXT, HeaderSigner
from recordseal.verify import (
    load_key_directory,
    verify_erasure_receipt,
)

from .factory import write_documents

#: The worked example of docs/records.md: the key of seed 00 01 ... 1f.
SEED = bytes(range(32))
SUBJECT_REF = "019ac1d2e3f40718293a4b5c6d7e8f90"
ERASED_AT = "2026-11-26T08:00:00.000000Z"
EXAMPLE_SIGNATURE = (
    "6babe4e618a660a25e13c52d5bea5e5e706dd9501655206aa4aacfbf6501b1e2"
    "9f0c531d951f0a9de8bfd08fd1299a497a2a3379b3812f071aed0b25bcc08d09"
)
DOCS = Path(__file__).resolve().parents[2] / "docs" / "records.md"
Doc = dict[str, Any]


def directory(signer: HeaderSigner, **validity: str | None) -> Doc:
    """A key directory as ``recordseal keys export`` writes it (docs/bundle.md section 2)."""
    key = {
        "key_id": signer.key_id,
        "algorithm": "Ed25519",
        "public_key": signer.public_key.hex(),
        "not_before": "2026-11-01T00:00:00Z",
        "not_after": None,
        "revoked_at": None,
    }
    return {"format": "recordseal/keys/v1", "keys": [{**key, **validity}], "logs": []}


def signed(signer: HeaderSigner, **changes: Any) -> Doc:
    receipt = build_erasure_receipt(
        tenant="acme", subject_ref=SUBJECT_REF, erased_at=ERASED_AT, key_id=signer.key_id
    )
    receipt.update(changes)
    message = erasure_receipt_message(canonical_header(receipt))
    return {"receipt": receipt, "signature": signer.sign_message(message).hex()}


SIGNER = HeaderSigner.from_seed(SEED)
KEYS = load_key_directory(json.dumps(directory(SIGNER)))


def verify(document: Doc | bytes, keys: Doc | None = None) -> tuple[bool, str]:
    data = document if isinstance(document, bytes) else json.dumps(document).encode()
    directory_ = KEYS if keys is None else load_key_directory(json.dumps(keys))
    result = verify_erasure_receipt(data, directory_)
    return result.valid, result.reason


def test_a_receipt_of_the_header_key_is_valid() -> None:
    result = verify_erasure_receipt(json.dumps(signed(SIGNER)), KEYS)
    assert result.valid and result.reason == ""
    assert result.receipt is not None and result.receipt.subject_ref == SUBJECT_REF


def test_the_worked_example() -> None:
    """The bytes docs/records.md shows, signed independently with ``cryptography``."""
    document = signed(SIGNER)
    canonical = canonical_header(document["receipt"])
    assert canonical == (
        b'{"attestation":"hosted-ingest","erased_at":"2026-11-26T08:00:00.000000Z",'
        b'"format":"recordseal/erasure-receipt/v1","key_id":"' + SIGNER.key_id.encode() + b'",'
        b'"subject_ref":"019ac1d2e3f40718293a4b5c6d7e8f90","tenant":"acme"}'
    )
    message = b"recordseal/erasure-receipt/v1\x00" + canonical
    signature = Ed25519PrivateKey.from_private_bytes(SEED).sign(message)
    assert document["signature"] == signature.hex() == EXAMPLE_SIGNATURE
    text = " ".join(DOCS.read_text().split())
    signature_lines = f"{EXAMPLE_SIGNATURE[:64]} {EXAMPLE_SIGNATURE[64:]}"
    for shown in (signature_lines, SIGNER.key_id, SIGNER.public_key.hex(), canonical.decode()):
        assert shown in text


def test_the_whole_erase_answer() -> None:
    answer = {
        "status": "erased",
        "erased_at": ERASED_AT,
        "payloads_deleted": 3,
        "attestation": "hosted-ingest",
        "erasure_receipt": signed(SIGNER),
    }
    assert verify(answer) == (True, "")


@pytest.mark.parametrize(
    ("member", "value"),
    [
        ("subject_ref", "119ac1d2e3f40718293a4b5c6d7e8f90"),
        ("tenant", "globex"),
        ("erased_at", "2026-11-26T08:00:00.000001Z"),
        ("attestation", "self-attested"),
    ],
)
def test_a_changed_member_breaks_the_signature(member: str, value: str) -> None:
    document = signed(SIGNER)
    document["receipt"][member] = value
    valid, reason = verify(document)
    assert not valid and "signature does not verify" in reason


def test_a_changed_signature() -> None:
    document = signed(SIGNER)
    document["signature"] = "00" + document["signature"][2:]
    assert not verify(document)[0]


def test_another_key() -> None:
    stranger = HeaderSigner.from_seed(bytes(32))
    valid, reason = verify(signed(stranger))
    assert not valid and f"no public key in the supplied directory for key {stranger.key_id}" in (
        reason
    )
    assert "export the directory again (recordseal keys export)" in reason
    # signed by another key while naming the listed one
    valid, reason = verify(signed(stranger, key_id=SIGNER.key_id))
    assert not valid and "signature does not verify" in reason


@pytest.mark.parametrize(
    "message",
    [
        lambda canonical: HEADER_CONTEXT + canonical,
        gap_signing_message,
        lambda canonical: canonical,
    ],
    ids=["as a record header", "as a gap header", "without context"],
)
def test_another_context(message: Any) -> None:
    document = signed(SIGNER)
    signature = SIGNER.sign_message(message(canonical_header(document["receipt"])))
    document["signature"] = signature.hex()
    assert not verify(document)[0]


@pytest.mark.parametrize(
    ("validity", "words"),
    [
        ({"not_before": "2026-11-26T08:00:00.000001Z"}, "is valid only from"),
        ({"not_after": ERASED_AT}, "expired at"),
        ({"revoked_at": ERASED_AT}, "was revoked at"),
        ({"revoked_at": "2026-11-25T00:00:00Z"}, "was revoked at"),
    ],
    ids=["not yet valid", "expired at erased_at", "revoked at erased_at", "revoked before"],
)
def test_a_key_not_valid_at_erased_at(validity: Doc, words: str) -> None:
    valid, reason = verify(signed(SIGNER), directory(SIGNER, **validity))
    assert not valid and words in reason and "the subject was erased at" in reason


@pytest.mark.parametrize(
    "validity",
    [
        {"not_before": ERASED_AT},
        {"not_after": "2026-11-26T08:00:00.000001Z"},
        {"revoked_at": "2026-11-26T09:00:00.000001+01:00"},
    ],
    ids=["valid from erased_at", "expires just after", "revoked later"],
)
def test_a_key_valid_at_erased_at(validity: Doc) -> None:
    assert verify(signed(SIGNER), directory(SIGNER, **validity)) == (True, "")


def _compromised(at: str) -> str:
    return (
        f"signed by key {SIGNER.key_id} compromised at {at}, and an erasure receipt carries no"
        " witnessed time to show it was signed before then"
    )


@pytest.mark.parametrize(
    "compromised_at",
    ["2026-11-26T08:00:00.000001Z", "2027-01-01T00:00:00Z", "2026-11-25T00:00:00Z"],
    ids=["just after erased_at", "long after", "before erased_at"],
)
def test_a_receipt_of_a_compromised_key_is_invalid(compromised_at: str) -> None:
    """Whatever its erased_at: a receipt carries no witnessed time (docs/records.md)."""
    valid, reason = verify(signed(SIGNER), directory(SIGNER, compromised_at=compromised_at))
    assert (valid, reason) == (False, _compromised(compromised_at))


def test_a_compromise_of_another_key_leaves_the_receipt_valid() -> None:
    keys = directory(SIGNER)
    other = HeaderSigner.from_seed(bytes(32))
    keys["keys"].append(
        {**keys["keys"][0], "key_id": other.key_id, "public_key": other.public_key.hex(),
         "compromised_at": "2026-11-25T00:00:00Z"}
    )  # fmt: skip
    assert verify(signed(SIGNER), keys) == (True, "")


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (b"{not json", "not valid JSON"),
        (b'{"receipt": {}, "signature": "00", "signature": "00"}', "not valid JSON"),
        (b"[]", "Expected `object`"),
        (b'{"status": "erased", "erasure_receipt": null}', "$.erasure_receipt"),
    ],
)
def test_malformed_documents(data: bytes, where: str) -> None:
    valid, reason = verify(data)
    assert not valid and reason.startswith("erasure receipt: ") and where in reason


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (lambda d: d["receipt"].update(note="x"), "unknown field `note`"),
        (lambda d: d.update(note="x"), "unknown field `note`"),
        (lambda d: d["receipt"].pop("attestation"), "missing required field `attestation`"),
        (lambda d: d["receipt"].update(subject_ref="ab" * 15), "$.receipt.subject_ref"),
        (lambda d: d["receipt"].update(subject_ref="AB" * 16), "$.receipt.subject_ref"),
        (lambda d: d["receipt"].update(erased_at="2026-02-30T00:00:00Z"), "erased_at"),
        (lambda d: d["receipt"].update(format="recordseal/header/v1"), "$.receipt.format"),
        (lambda d: d.update(signature="xyz"), "$.signature"),
    ],
    ids=["unknown receipt member", "unknown member", "missing member", "short subject_ref",
         "upper-case subject_ref", "impossible date", "another format", "signature not hex"],
)  # fmt: skip
def test_a_receipt_of_another_shape(edit: Any, where: str) -> None:
    document = signed(SIGNER)
    edit(document)
    valid, reason = verify(document)
    assert not valid and where in reason, reason


def test_build_erasure_receipt_members_in_documented_order() -> None:
    receipt = build_erasure_receipt(
        tenant="acme", subject_ref=SUBJECT_REF, erased_at=ERASED_AT, key_id="0" * 16
    )
    assert list(receipt) == [
        "format", "tenant", "subject_ref", "erased_at", "key_id", "attestation"
    ]  # fmt: skip
    assert receipt["format"] == "recordseal/erasure-receipt/v1"


# --- recordseal verify-receipt ---------------------------------------------------------------


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("receipts")
    tampered = signed(SIGNER)
    tampered["receipt"]["tenant"] = "globex"
    documents = {
        "receipt.json": json.dumps(signed(SIGNER)).encode(),
        "answer.json": json.dumps({"status": "erased", "erasure_receipt": signed(SIGNER)}).encode(),
        "tampered.json": json.dumps(tampered).encode(),
        "malformed.json": b"{not json",
        "keys.json": json.dumps(directory(SIGNER)).encode(),
        "compromised-keys.json": json.dumps(
            directory(SIGNER, compromised_at="2027-01-01T00:00:00Z")
        ).encode(),
        "bad-keys.json": b'{"format": "recordseal/keys/v1"}',
    }
    return write_documents(folder, documents)


def _run(*args: str | Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "verify-receipt", *map(str, args)],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_command_valid(files: dict[str, Path]) -> None:
    expected = f"VALID erasure of subject {SUBJECT_REF} at {ERASED_AT} (key {SIGNER.key_id})\n"
    for name in ("receipt", "answer"):
        done = _run(files[name], "--keys", files["keys"])
        assert (done.returncode, done.stdout) == (0, expected), done.stderr
    done = _run("-", "--keys", files["keys"], stdin=files["receipt"].read_bytes())
    assert (done.returncode, done.stdout) == (0, expected)


def test_the_command_invalid(files: dict[str, Path]) -> None:
    done = _run(files["tampered"], "--keys", files["keys"])
    assert done.returncode == 1
    assert done.stdout == (
        f"INVALID: the Ed25519 signature does not verify with key {SIGNER.key_id}\n"
    )
    done = _run(files["malformed"], "--keys", files["keys"])
    assert done.returncode == 1 and done.stdout.startswith("INVALID: erasure receipt: not valid")
    done = _run(files["receipt"], "--keys", files["compromised-keys"])
    invalid = f"INVALID: {_compromised('2027-01-01T00:00:00Z')}\n"
    assert (done.returncode, done.stdout) == (1, invalid)


def test_the_command_exit_codes(files: dict[str, Path]) -> None:
    assert _run(files["receipt"]).returncode == 64  # --keys is required
    assert _run("--keys", files["keys"]).returncode == 64
    assert _run(files["receipt"], "--keys", files["keys"], "--nonsense").returncode == 64
    assert _run(files["receipt"], "--keys", files["bad-keys"]).returncode == 65
    assert _run(files["receipt"].with_name("absent.json"), "--keys", files["keys"]).returncode == 66
    assert _run(files["receipt"], "--keys", files["receipt"].with_name("no.json")).returncode == 66
