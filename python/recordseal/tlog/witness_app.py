"""``create_witness_app()``: the HTTP face of a witness (c2sp.org/tlog-witness).

``POST /add-checkpoint`` answers 200 with the cosignature line, or the protocol's refusal:
400 malformed, 403 no trusted signature, 404 unknown log, 409 old size mismatch (body: the
witness's size, ``text/x.tlog.size``) or a second root at one size, 422 bad proof. Other
refusals are RFC 9457 problem documents. ``GET /health`` answers while the process runs, with
the witness's vkey and whether it is a demo witness (``recordseal serve --demo-witness``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import anyio.to_thread
import msgspec
from litestar import Litestar, Request, Response, get, post

from recordseal.crypto.keyfiles import read_or_create_secret

from .cosignature import CosignatureSigner
from .errors import TlogError
from .protocol import ADD_CHECKPOINT_PATH, SIZE_MEDIA_TYPE, encode_size, parse_add_checkpoint
from .witness import STATUS_OF, FamilyFile, Witness, family_verifiers, log_verifiers

#: The variable through which ``witness serve`` hands its configuration to server workers.
CONFIG_ENV = "RECORDSEAL_WITNESS_CONFIG"
#: Large enough for a checkpoint with 100 post-quantum cosignatures and a full proof.
MAX_BODY_BYTES = 1 << 20
COSIGNATURE_MEDIA_TYPE = "text/plain; charset=utf-8"
PROBLEM_MEDIA_TYPE = "application/problem+json"
PROBLEM_TYPE = "https://recordseal.dev/problems/"


class WitnessConfig(msgspec.Struct, frozen=True):
    state_dir: str
    name: str
    key_path: str
    logs: dict[str, list[str]]
    #: vkeys of log families (docs/tlog.md, "Log families").
    families: list[str] = []
    demo: bool = False
    #: a file of family vkeys, read again when it changes (``--logs-under-file``)
    families_file: str | None = None


class _Health(msgspec.Struct, frozen=True):
    status: str
    witness: str
    demo: bool


class _Problem(msgspec.Struct, frozen=True, omit_defaults=True):
    type: str
    title: str
    status: int
    code: str
    detail: str
    evidence: dict[str, str | int] = {}


def refusal(error: TlogError) -> Response[bytes]:
    """The protocol's answer to a refused request."""
    status = STATUS_OF.get(error.code, 500)
    if error.code == "old_size_mismatch":
        size = int(error.evidence["witness_size"])
        # Exactly this type, without the charset parameter Litestar adds to text/* types.
        headers = {"Content-Type": SIZE_MEDIA_TYPE}
        return Response(encode_size(size), status_code=409, headers=headers)
    problem = _Problem(
        type=PROBLEM_TYPE + error.code,
        title="Checkpoint refused" if status < 500 else "Witness failure",
        status=status,
        code=error.code,
        detail=str(error),
        evidence=error.evidence,
    )
    return Response(msgspec.json.encode(problem), status_code=status, media_type=PROBLEM_MEDIA_TYPE)


def create_witness_app(
    state_dir: Path,
    witness_name: str,
    witness_key_seed_path: Path,
    logs: Mapping[str, Iterable[str]],
    *,
    families: Iterable[str] = (),
    families_file: Path | None = None,
    demo: bool = False,
    clock: Callable[[], float] = time.time,
) -> Litestar:
    """The witness application.

    ``logs`` maps each witnessed origin to the vkeys of the log's Ed25519 keys; ``families``
    are vkeys of log families. The witness key is the 32-byte seed in
    ``witness_key_seed_path``, generated (mode 0600) if absent.
    """
    signer = CosignatureSigner.from_seed(witness_name, read_or_create_secret(witness_key_seed_path))
    fixed = family_verifiers(families)
    follow = FamilyFile(families_file) if families_file is not None else None
    witness = Witness(
        state_dir,
        signer,
        log_verifiers(logs),
        clock,
        families=fixed if follow is None else (lambda: (*fixed, *follow())),
    )

    @post(ADD_CHECKPOINT_PATH, status_code=200)
    async def add_checkpoint(request: Request[Any, Any, Any]) -> Response[bytes]:
        body = await request.body()
        try:
            parsed = parse_add_checkpoint(body)
            # File locking and fsync block: keep them off the event loop.
            cosignature = await anyio.to_thread.run_sync(
                witness.add_checkpoint, parsed.old_size, parsed.proof, parsed.signed_checkpoint
            )
        except TlogError as error:
            return refusal(error)
        return Response(
            cosignature.line.encode(), status_code=200, media_type=COSIGNATURE_MEDIA_TYPE
        )

    @get("/health")
    async def health() -> _Health:
        return _Health(status="ok", witness=signer.vkey, demo=demo)

    app = Litestar(
        route_handlers=[add_checkpoint, health],
        request_max_body_size=MAX_BODY_BYTES,
        openapi_config=None,
        logging_config=None,
    )
    app.state.witness = witness
    return app


def app_from_env() -> Litestar:
    """Factory for server workers: the configuration is JSON in ``RECORDSEAL_WITNESS_CONFIG``."""
    config = msgspec.json.decode(os.environ[CONFIG_ENV], type=WitnessConfig)
    return create_witness_app(
        Path(config.state_dir),
        config.name,
        Path(config.key_path),
        config.logs,
        families=config.families,
        families_file=Path(config.families_file) if config.families_file else None,
        demo=config.demo,
    )
