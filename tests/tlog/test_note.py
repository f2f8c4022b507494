"""Signed notes: round trips, the verification rules, and every malformed form."""

from __future__ import annotations

import base64
import contextlib

import pytest

from recordseal.tlog import (
    Ed25519Signer,
    Ed25519Verifier,
    NoteSignature,
    TlogError,
    encode_vkey,
    key_id,
    open_note,
    parse_note,
    parse_vkey,
    sign_note,
)
from recordseal.tlog.note import MAX_SIGNATURES

TEXT = "example.com/log\n42\nsome text with a blank line follows\n\nand more\n"


@pytest.fixture
def alice() -> Ed25519Signer:
    return Ed25519Signer.generate("alice.example/key")


@pytest.fixture
def bob() -> Ed25519Signer:
    return Ed25519Signer.generate("bob.example/key")


@pytest.fixture
def signed(alice: Ed25519Signer) -> str:
    return sign_note(TEXT, [alice])


def refused(data: str | bytes, verifiers: list[Ed25519Verifier]) -> TlogError:
    with pytest.raises(TlogError) as error:
        open_note(data, verifiers)
    return error.value


def test_round_trip(alice: Ed25519Signer, bob: Ed25519Signer) -> None:
    note = sign_note(TEXT, [alice, bob])
    assert note.startswith(TEXT + "\n— alice.example/key ")
    verified = open_note(note, [alice.verifier(), bob.verifier()])
    assert verified.text == TEXT
    assert [s.name for s in verified.verified] == [alice.name, bob.name]
    assert parse_note(note).encode() == note
    assert open_note(note.encode(), [bob.verifier()]).text == TEXT


def test_key_id_is_the_spec_formula(alice: Ed25519Signer) -> None:
    import hashlib

    digest = hashlib.sha256(alice.name.encode() + b"\n\x01" + alice.public_key).digest()
    assert alice.key_id == int.from_bytes(digest[:4], "big")
    assert key_id(alice.name, 0x01, alice.public_key) == alice.key_id
    line = parse_note(sign_note(TEXT, [alice])).signatures[0]
    assert line.key_id == alice.key_id and len(line.signature) == 64


def test_unknown_signers_are_ignored(alice: Ed25519Signer, bob: Ed25519Signer) -> None:
    note = sign_note(TEXT, [bob, alice])
    verified = open_note(note, [alice.verifier()])
    assert [s.name for s in verified.unverified] == [bob.name]


def test_no_known_signer_is_refused(signed: str, bob: Ed25519Signer) -> None:
    assert refused(signed, [bob.verifier()]).code == "note_unverified"
    assert refused(signed, []).code == "note_unverified"


def test_same_name_other_key_is_unknown(signed: str, alice: Ed25519Signer) -> None:
    impostor = Ed25519Signer.generate(alice.name)
    assert refused(signed, [impostor.verifier()]).code == "note_unverified"


def test_same_key_other_name_is_unknown(signed: str, alice: Ed25519Signer) -> None:
    renamed = Ed25519Verifier("carol.example/key", alice.public_key)
    assert refused(signed, [renamed]).code == "note_unverified"


def test_bad_signature_from_known_key_rejects_the_note(
    alice: Ed25519Signer, bob: Ed25519Signer
) -> None:
    good = parse_note(sign_note(TEXT, [alice, bob]))
    bad_bob = NoteSignature(bob.name, bob.key_id, bytes(64))
    note = good.signatures[0].line, bad_bob.line
    error = refused(TEXT + "\n" + "".join(note), [alice.verifier(), bob.verifier()])
    assert error.code == "signature_invalid"
    assert error.evidence["name"] == bob.name


def test_tampered_text_is_refused(signed: str, alice: Ed25519Signer) -> None:
    error = refused(signed.replace("42", "43"), [alice.verifier()])
    assert error.code == "signature_invalid"


def _line_of(signed: str) -> str:
    return signed[len(TEXT) + 1 :]


def _flip_key_id(signed: str) -> str:
    line = _line_of(signed)
    name_end = line.index(" ", 2)
    raw = bytearray(base64.b64decode(line[name_end + 1 :]))
    raw[0] ^= 0x01
    return TEXT + "\n" + line[: name_end + 1] + base64.b64encode(bytes(raw)).decode() + "\n"


def test_wrong_key_hash_is_an_unknown_key(signed: str, alice: Ed25519Signer) -> None:
    assert refused(_flip_key_id(signed), [alice.verifier()]).code == "note_unverified"


def test_duplicate_signer_is_refused(signed: str, alice: Ed25519Signer) -> None:
    error = refused(signed + _line_of(signed), [alice.verifier()])
    assert error.code == "signature_duplicate"
    other = parse_note(sign_note(TEXT, [alice])).signatures[0]
    assert refused(signed + other.line, [alice.verifier()]).code == "signature_duplicate"


MALFORMED = {
    "not utf-8": lambda s: s.encode()[:-3] + b"\xff\xfe\n",
    "control character": lambda s: s.replace("some text", "some\ttext"),
    "carriage return": lambda s: s.replace("\n", "\r\n"),
    "no blank line": lambda s: s.replace(TEXT + "\n", TEXT),
    "no signature": lambda s: TEXT + "\n",
    "no final newline": lambda s: s[:-1],
    "trailing garbage": lambda s: s + "garbage",
    "trailing blank line": lambda s: s + "\n",
    "trailing garbage line": lambda s: s + "garbage\n",
    "hyphen for em dash": lambda s: s.replace("— ", "- "),
    "no space after dash": lambda s: s.replace("— ", "—"),
    "two spaces": lambda s: s.replace("— alice.example/key ", "— alice.example/key  "),
    "plus in name": lambda s: s.replace("alice.example/key", "alice+example/key"),
    "bad base64": lambda s: s[:-6] + "!" + s[-5:],
    "unpadded base64": lambda s: s.rstrip("=\n") + "\n",
    "space in base64": lambda s: s[:-10] + " " + s[-10:],
    "signature too short": lambda s: TEXT + "\n— alice.example/key AAAAAA==\n",
    "empty signature": lambda s: TEXT + "\n— alice.example/key \n",
    "empty name": lambda s: TEXT + "\n—  AAAAAAAA\n",
}


@pytest.mark.parametrize("mutate", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_notes_raise_tlog_error(
    signed: str, alice: Ed25519Signer, mutate: object
) -> None:
    bad = mutate(signed)  # type: ignore[operator]
    error = refused(bad, [alice.verifier()])
    assert error.code in {"note_malformed", "signature_malformed"}, error


def test_non_canonical_base64_is_refused(signed: str, alice: Ed25519Signer) -> None:
    # 68 bytes end in one "=": the last character carries 2 unused bits; set one.
    line = _line_of(signed)
    assert line.endswith("=\n")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    last = line[-3]
    tweaked = alphabet[alphabet.index(last) ^ 0x01]
    bad = TEXT + "\n" + line[:-3] + tweaked + "=\n"
    assert base64.b64decode(bad[len(TEXT) + 1 :].split(" ")[1]) == base64.b64decode(
        line.split(" ")[1]
    )
    assert refused(bad, [alice.verifier()]).code == "signature_malformed"


def test_signature_count_limit(alice: Ed25519Signer) -> None:
    strangers = [Ed25519Signer.generate(f"s{i}.example") for i in range(MAX_SIGNATURES)]
    sixteen = sign_note(TEXT, [alice, *strangers[:15]])
    assert len(open_note(sixteen, [alice.verifier()]).unverified) == 15
    too_many = sign_note(TEXT, [alice, *strangers])
    assert refused(too_many, [alice.verifier()]).code == "too_many_signatures"


def test_every_byte_mutation_is_accepted_or_a_tlog_error(signed: str, alice: Ed25519Signer) -> None:
    data = signed.encode()
    for position in range(len(data)):
        for replacement in (b"\n", b"\x00", b"A", b"\xe2"):
            mutated = data[:position] + replacement + data[position + 1 :]
            with contextlib.suppress(TlogError):
                open_note(mutated, [alice.verifier()])
        for cut in (data[:position], data[position:]):
            with contextlib.suppress(TlogError):
                open_note(cut, [alice.verifier()])


def test_sign_refuses_bad_texts(alice: Ed25519Signer) -> None:
    for text in ("no newline", "tab\there\n", "\ud800\n"):
        with pytest.raises(TlogError) as error:
            sign_note(text, [alice])
        assert error.value.code == "note_malformed"
    with pytest.raises(TlogError):
        sign_note(TEXT, [])


@pytest.mark.parametrize("name", ["", "a b", "a+b", "a\u00a0b", "tab\tname"])
def test_invalid_key_names_are_refused(name: str) -> None:
    with pytest.raises(TlogError) as error:
        Ed25519Signer.generate(name)
    assert error.value.code == "name_invalid"


def test_vkey_round_trip(alice: Ed25519Signer) -> None:
    vkey = alice.verifier().vkey
    name, id_hex, material = vkey.split("+", 2)
    assert name == alice.name and id_hex == f"{alice.key_id:08x}"
    assert base64.b64decode(material) == b"\x01" + alice.public_key
    assert Ed25519Verifier.from_vkey(vkey) == alice.verifier()
    assert Ed25519Verifier.from_vkey(vkey.replace(id_hex, id_hex.upper())) == alice.verifier()


def test_vkey_malformed_forms(alice: Ed25519Signer) -> None:
    vkey = alice.verifier().vkey
    name, id_hex, material = vkey.split("+", 2)
    wrong_id = f"{alice.key_id ^ 1:08x}"
    short_key = base64.b64encode(b"\x01" + alice.public_key[:31]).decode()
    cases = {
        f"{name}+{wrong_id}+{material}": "key_hash_mismatch",
        f"{name}+{id_hex[:7]}+{material}": "key_malformed",
        f"{name}+{id_hex}": "key_malformed",
        f"{name}+zzzzzzzz+{material}": "key_malformed",
        f"+{id_hex}+{material}": "key_malformed",
        f"{name}+{id_hex}+{material[:-1]}": "key_malformed",
        f"{name}+{id_hex}+": "key_malformed",
        encode_vkey(name, 0x01, alice.public_key[:31]).replace(short_key, short_key): (
            "key_malformed"
        ),
        encode_vkey(name, 0x02, alice.public_key): "key_unsupported",
    }
    for text, code in cases.items():
        with pytest.raises(TlogError) as error:
            parse_vkey(text)
        assert error.value.code == code, text
    cosigning = encode_vkey(name, 0x04, alice.public_key)
    with pytest.raises(TlogError) as error:
        Ed25519Verifier.from_vkey(cosigning)
    assert error.value.code == "key_unsupported"


def test_errors_pickle_with_evidence(signed: str, bob: Ed25519Signer) -> None:
    import pickle

    error = refused(signed, [bob.verifier()])
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.code, str(copy), copy.evidence) == (error.code, str(error), error.evidence)
    assert isinstance(copy, ValueError)
