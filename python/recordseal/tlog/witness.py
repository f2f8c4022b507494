"""The witness (c2sp.org/tlog-witness): cosign checkpoints consistent with what it saw.

For each configured log (origin → the log's note verifiers) the witness remembers the latest
checkpoint it cosigned, and cosigns a new one only when it extends that one: the client names
the size it believes the witness has (``old``) and proves consistency from it.

A witness may also be given *log families*: an Ed25519 key under a name ``N`` stands for every
log whose origin starts with ``N/``, each signing with that key under its own origin (as a
recordseal service signs all of its (tenant, fleet) logs, docs/tlog.md). Logs a service
creates later, such as a new tenant's, are then witnessed without a restart.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import NoReturn

from recordseal.core import CommitError, verify_consistency

from .checkpoint import Checkpoint
from .cosignature import Cosignature, CosignatureSigner
from .errors import TlogError
from .keys import Ed25519Verifier, NoteVerifier
from .note import parse_note, verify_note
from .state import LogState, StateStore

log = logging.getLogger("recordseal.witness")

#: The HTTP status of each refusal, as c2sp.org/tlog-witness requires.
STATUS_OF = {
    "request_malformed": 400,
    "note_malformed": 400,
    "signature_malformed": 400,
    "signature_duplicate": 400,
    "too_many_signatures": 400,
    "checkpoint_malformed": 400,
    "old_size_invalid": 400,
    "signature_invalid": 403,
    "note_unverified": 403,
    "unknown_origin": 404,
    "old_size_mismatch": 409,
    "root_mismatch": 409,
    "proof_invalid": 422,
}


def family_verifiers(vkeys: Iterable[str]) -> tuple[Ed25519Verifier, ...]:
    """Log families from vkeys: each key's name is the origin prefix of its logs."""
    return tuple(Ed25519Verifier.from_vkey(vkey) for vkey in vkeys)


def log_verifiers(logs: Mapping[str, Iterable[str]]) -> dict[str, tuple[NoteVerifier, ...]]:
    """Witness configuration from vkeys: origin → the log's Ed25519 verifiers."""
    return {
        origin: tuple(Ed25519Verifier.from_vkey(v) for v in vkeys) for origin, vkeys in logs.items()
    }


class FamilyFile:
    """Log families read from a file of vkeys, one a line (``witness serve
    --logs-under-file``), read again whenever the file changes: a service that adds a log key
    (``recordseal keys rotate log``) rewrites it and the witness follows without a restart."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._seen: tuple[int, int] | None = None
        self._families: tuple[Ed25519Verifier, ...] = ()
        try:
            self._read()  # a file that cannot be read is refused at start
        except OSError as error:
            raise TlogError(
                "config_invalid", f"--logs-under-file {path}: {error.strerror}"
            ) from None

    def __call__(self) -> tuple[Ed25519Verifier, ...]:
        """The families as the file holds them now (as last read, if it cannot be read)."""
        with contextlib.suppress(OSError, TlogError):
            self._read()
        return self._families

    def _read(self) -> None:
        status = self._path.stat()
        seen = (status.st_mtime_ns, status.st_size)
        if seen != self._seen:
            vkeys = [line.strip() for line in self._path.read_text().splitlines() if line.strip()]
            self._families = family_verifiers(vkeys)
            self._seen = seen


def write_family_file(path: Path, vkeys: Sequence[str]) -> bool:
    """Write ``vkeys`` to the family file ``path`` (whole, by rename) when they differ from
    what it holds; whether it changed."""
    text = "".join(vkey + "\n" for vkey in vkeys)
    try:
        if path.read_text() == text:
            return False
    except FileNotFoundError:
        pass
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    temporary.replace(path)
    return True


class Witness:
    """Cosigns checkpoints of the configured logs; its state survives restarts."""

    def __init__(
        self,
        state_dir: Path,
        signer: CosignatureSigner,
        logs: Mapping[str, Sequence[NoteVerifier]],
        clock: Callable[[], float] = time.time,
        families: Sequence[Ed25519Verifier] | Callable[[], Sequence[Ed25519Verifier]] = (),
    ) -> None:
        self.signer = signer
        self.logs = dict(logs)
        fixed = () if callable(families) else tuple(families)
        self._families = families if callable(families) else (lambda: fixed)
        self.store = StateStore(state_dir)
        self._clock = clock

    def latest(self, origin: str) -> LogState | None:
        """The latest checkpoint cosigned for ``origin``, if any."""
        return self.store.load(origin)

    def add_checkpoint(
        self, old_size: int, proof: Sequence[bytes], signed_checkpoint: bytes | str
    ) -> Cosignature:
        """Check the request against the rules of c2sp.org/tlog-witness, persist, cosign.

        Refusals are :class:`TlogError` whose code maps to the protocol's status through
        :data:`STATUS_OF`; ``old_size_mismatch`` carries ``witness_size``.
        """
        note = parse_note(signed_checkpoint)
        checkpoint = Checkpoint.parse(note.text)
        verifiers = self.verifiers_for(checkpoint.origin)
        if verifiers is None:
            raise TlogError(
                "unknown_origin",
                f"this witness does not witness the log {checkpoint.origin!r}",
                {"origin": checkpoint.origin},
            )
        verify_note(note, verifiers)
        if old_size > checkpoint.size:
            raise TlogError(
                "old_size_invalid",
                f"old size {old_size} is larger than the checkpoint size {checkpoint.size}",
                {"old_size": old_size, "size": checkpoint.size},
            )
        with self.store.locked():
            state = self.store.load(checkpoint.origin)
            self._check_extends(state, old_size, proof, checkpoint)
            cosignature = self.signer.cosign(note.text, int(self._clock()))
            self.store.save(
                LogState(checkpoint.origin, checkpoint.size, checkpoint.root_hash, note.encode())
            )
        return cosignature

    def verifiers_for(self, origin: str) -> Sequence[NoteVerifier] | None:
        """The log's keys: configured for the origin, or its families' keys under its name
        (a family may have several keys: a log key rotation, docs/tlog.md)."""
        configured = self.logs.get(origin)
        if configured is not None:
            return configured
        found = tuple(
            Ed25519Verifier(origin, family.public_key)
            for family in self._families()
            if origin.startswith(family.name + "/")
        )
        return found or None

    def _check_extends(
        self,
        state: LogState | None,
        old_size: int,
        proof: Sequence[bytes],
        checkpoint: Checkpoint,
    ) -> None:
        current = state.size if state else 0
        if old_size != current:
            raise TlogError(
                "old_size_mismatch",
                f"old size {old_size} is not the witness's latest size {current}",
                {"old_size": old_size, "witness_size": current, "origin": checkpoint.origin},
            )
        if state is None:
            if proof:
                self._refuse_proof(checkpoint, "the proof must be empty when the old size is 0")
            return
        if old_size == checkpoint.size:
            if proof:
                self._refuse_proof(checkpoint, "the proof must be empty for an unchanged size")
            if checkpoint.root_hash != state.root_hash:
                log.warning(
                    "witness.two_roots", extra={"origin": checkpoint.origin, "size": old_size}
                )
                raise TlogError(
                    "root_mismatch",
                    f"size {old_size} has another root than the one the witness cosigned",
                    {
                        "origin": checkpoint.origin,
                        "size": old_size,
                        "witness_root": state.root_hash.hex(),
                        "checkpoint_root": checkpoint.root_hash.hex(),
                    },
                )
            return
        try:
            verify_consistency(
                old_size, checkpoint.size, state.root_hash, checkpoint.root_hash, proof
            )
        except CommitError as error:
            self._refuse_proof(checkpoint, str(error), error.code)

    def _refuse_proof(self, checkpoint: Checkpoint, reason: str, rule: str = "") -> NoReturn:
        # A validly signed checkpoint without a valid proof may be evidence of a forked log.
        log.warning(
            "witness.proof_refused",
            extra={"origin": checkpoint.origin, "size": checkpoint.size, "reason": reason},
        )
        evidence: dict[str, str | int] = {"origin": checkpoint.origin, "size": checkpoint.size}
        if rule:
            evidence["rule"] = rule
        raise TlogError("proof_invalid", f"consistency proof refused: {reason}", evidence)
