"""The witness (c2sp.org/tlog-witness): cosign checkpoints consistent with what it saw.

For each configured log (origin → the log's note verifiers) the witness remembers the latest
checkpoint it cosigned, and cosigns a new one only when it extends that one: the client names
the size it believes the witness has (``old``) and proves consistency from it.

A witness may also be given *log families*: a log key (Ed25519 or ML-DSA-44) under a name
``N`` stands for every log whose origin starts with ``N/``, each signing with that key under
its own origin (as a recordseal service signs all of its (tenant, fleet) logs, docs/tlog.md).
Logs a service creates later, such as a new tenant's, are then witnessed without a restart.

The witness cosigns with one key or two (Ed25519 ``cosignature/v1``, ML-DSA-44 ``subtree/v1``:
``witness serve --algorithm``), always with the time (never 0, c2sp.org/tlog-witness), and
remembers per origin the checkpoint it last cosigned with the log signatures it verified and
its own cosignatures: what the monitoring API serves.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import NoReturn

from recordseal.core import CommitError, verify_consistency
from recordseal.tlog.checkpoint import Checkpoint
from recordseal.tlog.cosignature import Cosignature, CosignatureSigner
from recordseal.tlog.errors import TlogError
from recordseal.tlog.keys import NoteVerifier
from recordseal.tlog.note import Note, parse_note, verify_note
from recordseal.tlog.subtree import MLDSA44CosignatureSigner
from recordseal.tlog.vkeys import LogVerifier, log_verifier

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
    "root_mismatch": 422,
    "empty_root_invalid": 422,
    "proof_invalid": 422,
    "extensions_unsupported": 400,
}
#: The empty tree's root (RFC 6962): the only root of a checkpoint of size 0.
EMPTY_ROOT = hashlib.sha256(b"").digest()
_ORIGIN_HASH = re.compile("[0-9a-f]{64}")

#: A witness's cosigning key: Ed25519 (``cosignature/v1``) or ML-DSA-44 (``subtree/v1``).
Cosigner = CosignatureSigner | MLDSA44CosignatureSigner


def log_verifiers(logs: Mapping[str, Iterable[str]]) -> dict[str, tuple[NoteVerifier, ...]]:
    """Witness configuration from vkeys: origin → the log's verifiers (Ed25519, ML-DSA-44)."""
    return {origin: tuple(log_verifier(v) for v in vkeys) for origin, vkeys in logs.items()}


class Witness:
    """Cosigns checkpoints of the configured logs; its state survives restarts."""

    def __init__(
        self,
        state_dir: Path,
        signer: Cosigner | Sequence[Cosigner],
        logs: Mapping[str, Sequence[NoteVerifier]],
        clock: Callable[[], float] = time.time,
        families: Sequence[LogVerifier] | Callable[[], Sequence[LogVerifier]] = (),
    ) -> None:
        """``signer``: the witness's key, or its keys (one per algorithm, in the order of
        the reply's lines)."""
        self.signers: tuple[Cosigner, ...] = (
            tuple(signer) if isinstance(signer, Sequence) else (signer,)
        )
        if not self.signers:
            raise ValueError("a witness needs at least one key")
        self.signer = self.signers[0]
        self.logs = dict(logs)
        fixed = () if callable(families) else tuple(families)
        self._families = families if callable(families) else (lambda: fixed)
        self.store = StateStore(state_dir)
        self._clock = clock

    def latest(self, origin: str) -> LogState | None:
        """The latest checkpoint cosigned for ``origin``, if any."""
        return self.store.load(origin)

    def monitored(self, origin_hash: str) -> str | None:
        """The monitoring API's answer for the lowercase hex SHA-256 of an origin: the latest
        checkpoint cosigned for it, with the log signatures the witness verified and its own
        cosignatures; None when it never cosigned that log (or the text is not such a hash)."""
        if not _ORIGIN_HASH.fullmatch(origin_hash):
            return None
        state = self.store.load_by_hash(origin_hash)
        return None if state is None else state.checkpoint

    def add_checkpoint(
        self, old_size: int, proof: Sequence[bytes], signed_checkpoint: bytes | str
    ) -> Cosignature:
        """:meth:`cosign`, returning the first key's cosignature."""
        return self.cosign(old_size, proof, signed_checkpoint)[0]

    def cosign(
        self, old_size: int, proof: Sequence[bytes], signed_checkpoint: bytes | str
    ) -> list[Cosignature]:
        """Check the request against the rules of c2sp.org/tlog-witness, persist, cosign with
        every key of the witness (an ML-DSA-44 key skips a checkpoint with extension lines,
        which its signature cannot cover; with no other key that is a refusal).

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
        verified = verify_note(note, verifiers)
        if old_size > checkpoint.size:
            raise TlogError(
                "old_size_invalid",
                f"old size {old_size} is larger than the checkpoint size {checkpoint.size}",
                {"old_size": old_size, "size": checkpoint.size},
            )
        signers = [s for s in self.signers if _can_cosign(s, checkpoint)]
        with self.store.locked():
            state = self.store.load(checkpoint.origin)
            self._check_extends(state, old_size, proof, checkpoint)
            if not signers:
                raise TlogError(
                    "extensions_unsupported",
                    "this witness cosigns with ML-DSA-44 alone, whose signature covers no"
                    " extension lines, and the checkpoint has some",
                    {"origin": checkpoint.origin, "size": checkpoint.size},
                )
            when = int(self._clock())
            cosignatures = [signer.cosign(note.text, when) for signer in signers]
            kept = Note(note.text, verified.verified).with_signatures(
                c.note_signature for c in cosignatures
            )
            self.store.save(
                LogState(checkpoint.origin, checkpoint.size, checkpoint.root_hash, kept.encode())
            )
        return cosignatures

    def verifiers_for(self, origin: str) -> Sequence[NoteVerifier] | None:
        """The log's keys: configured for the origin, or its families' keys under its name
        (a family may have several keys: a log key rotation, and the Ed25519 and ML-DSA-44
        keys of one generation, docs/tlog.md)."""
        configured = self.logs.get(origin)
        if configured is not None:
            return configured
        found = tuple(
            type(family)(origin, family.public_key)
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
        if checkpoint.size == 0 and checkpoint.root_hash != EMPTY_ROOT:
            raise TlogError(
                "empty_root_invalid",
                "a checkpoint of size 0 has the empty tree's root, SHA-256 of the empty string",
                {"origin": checkpoint.origin, "checkpoint_root": checkpoint.root_hash.hex()},
            )
        if state is None:
            if proof:
                self._refuse_proof(checkpoint, "the proof must be empty when the old size is 0")
            return
        if old_size == checkpoint.size:
            if proof:
                self._refuse_proof(checkpoint, "the proof must be empty for an unchanged size")
            if checkpoint.root_hash != state.root_hash:  # 422 (c2sp.org/tlog-witness)
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


def _can_cosign(signer: Cosigner, checkpoint: Checkpoint) -> bool:
    """An ML-DSA-44 cosignature covers no extension lines (c2sp.org/tlog-cosignature)."""
    return not (isinstance(signer, MLDSA44CosignatureSigner) and checkpoint.extensions)
