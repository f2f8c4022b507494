"""``create_witness_app()``: the HTTP face of a witness (c2sp.org/tlog-witness).

``POST /add-checkpoint`` answers 200 with the cosignature lines (one per key of the witness),
or the protocol's refusal: 400 malformed, 403 no trusted signature, 404 unknown log, 409 old
size mismatch (body: the witness's size, ``text/x.tlog.size``), 422 a second root at one size,
a size-0 checkpoint with another root than the empty tree's, or a bad proof. Other refusals
are RFC 9457 problem documents. ``GET /monitor/<hex SHA-256 of the origin>/checkpoint`` (the
monitoring API, c2sp.org/tlog-witness) answers the latest checkpoint the witness cosigned for
that log, with the log signatures it verified and its cosignatures, or 404. ``GET /health``
answers while the process runs, with the witness's vkeys and whether it is a demo witness
(``recordseal serve --demo-witness``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio.to_thread
import msgspec
from litestar import Litestar, Request, Response, get, post
from litestar.params import FromPath

from recordseal.tlog.errors import TlogError
from recordseal.tlog.protocol import (
    ADD_CHECKPOINT_PATH,
    SIZE_MEDIA_TYPE,
    encode_size,
    parse_add_checkpoint,
)

from .families import FamilyFile, family_verifiers
from .keys import ALGORITHM_CHOICES, load_signers
from .witness import STATUS_OF, Cosigner, Witness, log_verifiers

#: The variable through which ``witness serve`` hands its configuration to server workers.
CONFIG_ENV = "RECORDSEAL_WITNESS_CONFIG"
#: Large enough for a checkpoint with 100 post-quantum cosignatures and a full proof.
MAX_BODY_BYTES = 1 << 20
COSIGNATURE_MEDIA_TYPE = "text/plain; charset=utf-8"
CHECKPOINT_MEDIA_TYPE = "text/plain; charset=utf-8"
MONITOR_PREFIX = "/monitor"
PROBLEM_MEDIA_TYPE = "application/problem+json"
PROBLEM_TYPE = "https://recordseal.dev/problems/"


class WitnessConfig(msgspec.Struct, frozen=True):
    state_dir: str
    name: str
    #: the data directory holding the key files (``witness.keys``)
    key_dir: str
    logs: dict[str, list[str]]
    #: vkeys of log families (docs/tlog.md, "Log families").
    families: list[str] = []
    demo: bool = False
    #: a file of family vkeys, read again when it changes (``--logs-under-file``)
    families_file: str | None = None
    #: ``ed25519``, ``ml-dsa-44`` or ``both`` (``witness serve --algorithm``)
    algorithm: str = "ed25519"


class _Health(msgspec.Struct, frozen=True):
    status: str
    #: the vkey of the witness's first key (Ed25519 when it cosigns with Ed25519)
    witness: str
    demo: bool
    #: the vkey of every key it cosigns with, in the order of its reply's lines
    vkeys: list[str]


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
    key_dir: Path,
    logs: Mapping[str, Iterable[str]],
    *,
    families: Iterable[str] = (),
    families_file: Path | None = None,
    demo: bool = False,
    clock: Callable[[], float] = time.time,
    algorithm: str = "ed25519",
    signers: Sequence[Cosigner] | None = None,
) -> Litestar:
    """The witness application.

    ``logs`` maps each witnessed origin to the vkeys of the log's keys (Ed25519 or ML-DSA-44);
    ``families`` are vkeys of log families. The witness's keys are the seed files of
    ``algorithm`` (``ed25519``, ``ml-dsa-44`` or ``both``) in ``key_dir``, generated (mode
    0600) if absent, unless ``signers`` gives them.
    """
    if algorithm not in ALGORITHM_CHOICES:
        raise TlogError("config_invalid", f"--algorithm {algorithm!r} is not one of ed25519,"
                        " ml-dsa-44, both")  # fmt: skip
    keys = list(signers) if signers is not None else load_signers(key_dir, witness_name, algorithm)
    fixed = family_verifiers(families)
    follow = FamilyFile(families_file) if families_file is not None else None
    witness = Witness(
        state_dir,
        keys,
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
            cosignatures = await anyio.to_thread.run_sync(
                witness.cosign, parsed.old_size, parsed.proof, parsed.signed_checkpoint
            )
        except TlogError as error:
            return refusal(error)
        lines = "".join(cosignature.line for cosignature in cosignatures)
        return Response(lines.encode(), status_code=200, media_type=COSIGNATURE_MEDIA_TYPE)

    @get(MONITOR_PREFIX + "/{origin_hash:str}/checkpoint")
    async def monitor(origin_hash: FromPath[str]) -> Response[bytes]:
        try:
            found = await anyio.to_thread.run_sync(witness.monitored, origin_hash)
        except TlogError as error:
            return refusal(error)
        if found is None:
            return refusal(
                TlogError(
                    "unknown_origin",
                    "this witness never cosigned a checkpoint of a log with this origin hash"
                    " (the lowercase hex SHA-256 of the origin)",
                    {"origin_hash": origin_hash[:64]},
                )
            )
        return Response(found.encode(), status_code=200, media_type=CHECKPOINT_MEDIA_TYPE)

    @get("/health")
    async def health() -> _Health:
        vkeys = [key.vkey for key in keys]
        return _Health(status="ok", witness=vkeys[0], demo=demo, vkeys=vkeys)

    app = Litestar(
        route_handlers=[add_checkpoint, monitor, health],
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
        Path(config.key_dir),
        config.logs,
        families=config.families,
        families_file=Path(config.families_file) if config.families_file else None,
        demo=config.demo,
        algorithm=config.algorithm,
    )
