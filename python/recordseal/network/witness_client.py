"""An async c2sp.org/tlog-witness client: submit a checkpoint, get verified cosignatures.

A witness may cosign with several keys (Ed25519 and ML-DSA-44): the client keeps the valid
cosignatures of the keys it is given, and needs at least one.

When the witness answers 409 with its latest size, the client asks ``proof_for`` for a
consistency proof from that size and tries again; network failures and 5xx answers are
retried with exponential backoff. Every attempt counts against one bound.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence

import httpx

from recordseal.tlog.checkpoint import Checkpoint
from recordseal.tlog.cosignature import Cosignature, CosignerKey, verify_cosignatures
from recordseal.tlog.errors import TlogError
from recordseal.tlog.note import NoteSignature, parse_note
from recordseal.tlog.protocol import (
    ADD_CHECKPOINT_PATH,
    SIZE_MEDIA_TYPE,
    encode_add_checkpoint,
    parse_size_reply,
)

#: ``proof_for(old_size)``: the log's consistency proof from ``old_size`` to the checkpoint.
ProofSource = Callable[[int], Sequence[bytes] | Awaitable[Sequence[bytes]]]

_RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})


class WitnessClient:
    """Talks to one witness, whose cosignatures ``witness`` verifies (one key of the witness,
    or several: its keys of each algorithm)."""

    def __init__(
        self,
        url: str,
        witness: CosignerKey | Sequence[CosignerKey],
        *,
        http: httpx.AsyncClient | None = None,
        attempts: int = 5,
        backoff_seconds: float = 0.25,
        max_backoff_seconds: float = 8.0,
        timeout_seconds: float = 10.0,
    ) -> None:
        """``url`` is the witness's submission prefix (``/add-checkpoint`` is appended)."""
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        self.url = url.rstrip("/") + ADD_CHECKPOINT_PATH
        self.keys = (witness,) if isinstance(witness, CosignerKey) else tuple(witness)
        if not self.keys:
            raise ValueError("a witness needs at least one key")
        self.witness = self.keys[0]
        self._http = http
        self._attempts = attempts
        self._backoff = backoff_seconds
        self._max_backoff = max_backoff_seconds
        self._timeout = timeout_seconds

    async def add_checkpoint(
        self, signed_checkpoint: str, old_size: int, proof_for: ProofSource
    ) -> Cosignature:
        """Submit ``signed_checkpoint`` with a proof from ``old_size``; return the cosignature
        (the first key's, when the witness cosigned with several: :meth:`cosign`)."""
        return (await self.cosign(signed_checkpoint, old_size, proof_for))[0]

    async def cosign(
        self, signed_checkpoint: str, old_size: int, proof_for: ProofSource
    ) -> list[Cosignature]:
        """Submit ``signed_checkpoint`` with a proof from ``old_size``; return the valid
        cosignatures of the given keys, in the order of the reply (at least one).

        ``old_size`` is the size the witness is believed to have (0 if unknown): a 409 corrects
        it. Raises :class:`TlogError` (``witness_refused``, ``witness_ahead``,
        ``witness_unavailable``, or a verification code for a bad cosignature).
        """
        checkpoint = Checkpoint.parse(parse_note(signed_checkpoint).text)
        if self._http is not None:
            return await self._submit(
                self._http, signed_checkpoint, checkpoint, old_size, proof_for
            )
        async with httpx.AsyncClient(timeout=self._timeout) as http:
            return await self._submit(http, signed_checkpoint, checkpoint, old_size, proof_for)

    async def _submit(
        self,
        http: httpx.AsyncClient,
        signed_checkpoint: str,
        checkpoint: Checkpoint,
        old_size: int,
        proof_for: ProofSource,
    ) -> list[Cosignature]:
        last_failure = "no attempt made"
        for attempt in range(self._attempts):
            proof = await _call(proof_for, old_size)
            body = encode_add_checkpoint(old_size, proof, signed_checkpoint)
            try:
                response = await http.post(self.url, content=body, timeout=self._timeout)
            except httpx.TransportError as error:
                last_failure = f"{type(error).__name__}: {error}"
                await self._sleep(attempt)
                continue
            if response.status_code == 200:
                return self._cosignature(checkpoint, response.content)
            if response.status_code == 409 and _is_size_reply(response):
                old_size = self._corrected_size(checkpoint, old_size, response.content)
                last_failure = f"409: witness is at size {old_size}"
                continue
            if response.status_code in _RETRYABLE_STATUS:
                last_failure = f"{response.status_code}: {_excerpt(response)}"
                await self._sleep(attempt)
                continue
            raise TlogError(
                "witness_refused",
                f"{self.witness.name} refused the checkpoint with {response.status_code}",
                {
                    "witness": self.witness.name,
                    "status": response.status_code,
                    "detail": _excerpt(response),
                    "size": checkpoint.size,
                },
            )
        raise TlogError(
            "witness_unavailable",
            f"{self.witness.name} gave no cosignature in {self._attempts} attempts",
            {"witness": self.witness.name, "url": self.url, "last": last_failure},
        )

    def _corrected_size(self, checkpoint: Checkpoint, old_size: int, body: bytes) -> int:
        witness_size = parse_size_reply(body)
        if witness_size > checkpoint.size:
            raise TlogError(
                "witness_ahead",
                f"{self.witness.name} has cosigned size {witness_size}, beyond {checkpoint.size}",
                {
                    "witness": self.witness.name,
                    "witness_size": witness_size,
                    "size": checkpoint.size,
                },
            )
        if witness_size == old_size:
            raise TlogError(
                "witness_refused",
                f"{self.witness.name} answered 409 yet reports the size {old_size} that was sent",
                {"witness": self.witness.name, "witness_size": witness_size},
            )
        return witness_size

    def _cosignature(self, checkpoint: Checkpoint, body: bytes) -> list[Cosignature]:
        try:
            text = body.decode()
        except UnicodeDecodeError as error:
            raise TlogError("reply_malformed", "the witness's reply is not UTF-8") from error
        if not text.endswith("\n"):
            raise TlogError("reply_malformed", "the witness's reply does not end in a newline")
        signatures = [
            NoteSignature.parse_line(line, number)
            for number, line in enumerate(text[:-1].split("\n"), 1)
        ]
        found = verify_cosignatures(checkpoint.text(), signatures, self.keys)
        if not found:
            key_ids = ", ".join(f"{key.key_id:08x}" for key in self.keys)
            raise TlogError(
                "cosignature_missing",
                f"the reply holds no cosignature by {self.witness.name}",
                {"witness": self.witness.name, "key_id": key_ids},
            )
        return found

    async def _sleep(self, attempt: int) -> None:
        if attempt + 1 < self._attempts:
            await asyncio.sleep(min(self._max_backoff, self._backoff * 2**attempt))


async def _call(proof_for: ProofSource, old_size: int) -> Sequence[bytes]:
    result = proof_for(old_size)
    if inspect.isawaitable(result):
        return await result
    return result


def _is_size_reply(response: httpx.Response) -> bool:
    media_type = str(response.headers.get("content-type", "")).split(";")[0].strip().lower()
    return media_type == SIZE_MEDIA_TYPE


def _excerpt(response: httpx.Response) -> str:
    return response.text[:300]
