"""Signed notes (c2sp.org/signed-note).

A signed note is a text ending in a newline, a blank line, then one or more signature lines
``— <key name> base64(key ID ‖ signature)``. A verifier is found by (key name, key ID);
signatures from unknown keys are ignored, a known key's bad signature rejects the note, and at
least one known key must have signed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from . import strict_base64
from .errors import TlogError
from .keys import CONTROL, KEY_ID_SIZE, NoteSigner, NoteVerifier, is_valid_name

#: More signature lines than this reject the note; the spec asks for at least 16.
MAX_SIGNATURES = 100
SIGNATURE_PREFIX = "— "


@dataclass(frozen=True, slots=True)
class NoteSignature:
    """One signature line: key name, key ID, and the signature bytes after the key ID."""

    name: str
    key_id: int
    signature: bytes

    @property
    def line(self) -> str:
        """The signature line, newline included."""
        encoded = strict_base64.encode(self.key_id.to_bytes(KEY_ID_SIZE, "big") + self.signature)
        return f"{SIGNATURE_PREFIX}{self.name} {encoded}\n"

    @classmethod
    def parse_line(cls, line: str, number: int = 1) -> NoteSignature:
        """Parse one signature line (with or without its newline); ``number`` is for errors."""
        body = line.removesuffix("\n")
        evidence: dict[str, str | int] = {"line": number}
        if not body.startswith(SIGNATURE_PREFIX):
            message = f"signature line {number} does not start with an em dash and a space"
            raise TlogError("signature_malformed", message, evidence)
        name, space, encoded = body[len(SIGNATURE_PREFIX) :].partition(" ")
        if not space or not is_valid_name(name) or "\n" in body:
            message = f"signature line {number} has no valid key name followed by a space"
            raise TlogError("signature_malformed", message, evidence)
        evidence["name"] = name
        raw = strict_base64.decode(encoded)
        if raw is None:
            message = f"signature line {number} ({name}) is not canonical base64"
            raise TlogError("signature_malformed", message, evidence)
        if len(raw) <= KEY_ID_SIZE:
            message = f"signature line {number} ({name}) has no signature after the key ID"
            raise TlogError("signature_malformed", message, evidence)
        return cls(name, int.from_bytes(raw[:KEY_ID_SIZE], "big"), raw[KEY_ID_SIZE:])


@dataclass(frozen=True, slots=True)
class Note:
    """A note text and its signature lines, in order; nothing about it is verified yet."""

    text: str
    signatures: tuple[NoteSignature, ...]

    def encode(self) -> str:
        """The signed note: text, blank line, signature lines."""
        return self.text + "\n" + "".join(signature.line for signature in self.signatures)

    def with_signatures(self, signatures: Iterable[NoteSignature]) -> Note:
        """This note with more signature lines after its own; a repeated key is refused."""
        combined = (*self.signatures, *signatures)
        _check_unique(combined)
        return Note(self.text, combined)


@dataclass(frozen=True, slots=True)
class VerifiedNote:
    """A note whose ``verified`` signatures come from known keys and are valid.

    ``unverified`` lists the signatures from keys the verifier did not know; they are ignored.
    """

    text: str
    verified: tuple[NoteSignature, ...]
    unverified: tuple[NoteSignature, ...]


def check_text(text: str) -> bytes:
    """The UTF-8 bytes of a note text; refuses control characters and a missing final newline."""
    try:
        data = text.encode()
    except UnicodeEncodeError as error:
        raise TlogError("note_malformed", "note text is not valid UTF-8") from error
    if not text.endswith("\n"):
        raise TlogError("note_malformed", "note text does not end in a newline")
    if CONTROL.search(text):
        raise TlogError("note_malformed", "note text contains an ASCII control character")
    return data


def parse_note(data: bytes | str) -> Note:
    """Parse a signed note's syntax (signatures are not verified); see :func:`open_note`."""
    if isinstance(data, bytes):
        try:
            data = data.decode()
        except UnicodeDecodeError as error:
            raise TlogError("note_malformed", "note is not valid UTF-8") from error
    if CONTROL.search(data):
        raise TlogError("note_malformed", "note contains an ASCII control character")
    try:
        data.encode()
    except UnicodeEncodeError as error:
        raise TlogError("note_malformed", "note is not valid UTF-8") from error
    split = data.rfind("\n\n")
    if split < 0:
        raise TlogError("note_malformed", "note has no blank line before its signatures")
    text, block = data[: split + 1], data[split + 2 :]
    if not block:
        raise TlogError("note_malformed", "note has no signature line after its last blank line")
    if not block.endswith("\n"):
        raise TlogError("note_malformed", "note does not end in a newline")
    lines = block[:-1].split("\n")
    if len(lines) > MAX_SIGNATURES:
        message = f"note has {len(lines)} signature lines, more than {MAX_SIGNATURES}"
        raise TlogError("too_many_signatures", message, {"count": len(lines)})
    signatures = tuple(
        NoteSignature.parse_line(line, number) for number, line in enumerate(lines, 1)
    )
    _check_unique(signatures)
    return Note(text, signatures)


def _check_unique(signatures: Sequence[NoteSignature]) -> None:
    seen: set[tuple[str, int]] = set()
    for signature in signatures:
        key = (signature.name, signature.key_id)
        if key in seen:
            raise TlogError(
                "signature_duplicate",
                f"two signatures by the key {signature.name}+{signature.key_id:08x}",
                {"name": signature.name, "key_id": f"{signature.key_id:08x}"},
            )
        seen.add(key)


def verify_note(note: Note, verifiers: Iterable[NoteVerifier]) -> VerifiedNote:
    """Check ``note`` against known keys (see the module docstring for the rules)."""
    known: dict[tuple[str, int], NoteVerifier] = {}
    for verifier in verifiers:
        key = (verifier.name, verifier.key_id)
        if key in known and known[key] != verifier:
            raise TlogError(
                "verifier_ambiguous",
                f"two different verifiers share the key {key[0]}+{key[1]:08x}",
                {"name": key[0], "key_id": f"{key[1]:08x}"},
            )
        known[key] = verifier
    message = note.text.encode()
    verified: list[NoteSignature] = []
    unverified: list[NoteSignature] = []
    for signature in note.signatures:
        found = known.get((signature.name, signature.key_id))
        if found is None:
            unverified.append(signature)
        elif found.verify(message, signature.signature):
            verified.append(signature)
        else:
            raise TlogError(
                "signature_invalid",
                f"the signature of {signature.name}+{signature.key_id:08x} does not verify",
                {"name": signature.name, "key_id": f"{signature.key_id:08x}"},
            )
    if not verified:
        raise TlogError(
            "note_unverified",
            "no signature on the note is from a known key",
            {"signers": ", ".join(f"{s.name}+{s.key_id:08x}" for s in note.signatures)},
        )
    return VerifiedNote(note.text, tuple(verified), tuple(unverified))


def open_note(data: bytes | str, verifiers: Iterable[NoteVerifier]) -> VerifiedNote:
    """Parse a signed note and verify it against ``verifiers``."""
    return verify_note(parse_note(data), verifiers)


def sign_note(text: str, signers: Sequence[NoteSigner]) -> str:
    """The signed note of ``text`` with one signature line per signer, in order."""
    message = check_text(text)
    if not signers:
        raise TlogError("note_malformed", "a signed note needs at least one signer")
    for signer in signers:
        if not is_valid_name(signer.name):
            reason = f"key name {signer.name!r} is empty or has a space or '+'"
            raise TlogError("name_invalid", reason)
    signatures = [NoteSignature(s.name, s.key_id, s.sign(message)) for s in signers]
    return Note(text, ()).with_signatures(signatures).encode()
