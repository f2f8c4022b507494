"""What the service says about itself: ``ServiceController`` (docs/operations.md).

``GET /v1/keys`` is the public key directory (docs/bundle.md): header-signing keys with
their validity, and the note verifier key of every log; ``GET /v1/trust`` the trust store of
the service's witnesses and time-stamping authorities.

``GET /health`` answers while the process runs. ``GET /readyz`` answers 200 once this worker
has its keys loaded and its store answers a query (within :data:`READY_TIMEOUT` seconds),
else 503 with a problem naming the check that failed: a load balancer sends traffic only to
ready workers. ``GET /metrics`` is the Prometheus text of every worker of the service.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Literal

import msgspec
from litestar import Response, get
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.openapi.datastructures import ResponseSpec

from recordseal import metrics
from recordseal.ledger import refusals
from recordseal.services.keys import key_directory
from recordseal.verify import KeyDirectory
from recordseal.verify.bundle import TrustStore
from recordseal.web.background import BACKGROUND_STATE, TaskSupervisor
from recordseal.web.controller import DomainController
from recordseal.web.openapi import documented, refusal
from recordseal.web.problems import problem_response
from recordseal.web.schemas import Health
from recordseal.web.state import AppServices, provide_services, provide_trust_store

log = logging.getLogger("recordseal.web")

#: Seconds the store has to answer the readiness query.
READY_TIMEOUT = 2.0
READY_STATE = "ready"


class Readiness(msgspec.Struct, omit_defaults=True):
    status: Literal["ready"]
    checks: dict[str, Literal["ok"]]
    #: Ready, but something an operator should know: a witness refuses logs (ledger.refusals),
    #: a background task ended (web/background.py).
    detail: str | None = None


NOT_READY = refusal(
    503,
    "this worker is not ready: its keys are not loaded (starting or stopping) or its store does"
    " not answer; `detail` names which",
    "not_ready",
)


ROLLED_BACK = refusal(
    503,
    "the store is behind what the service signed (a restore or failover): `detail` counts the"
    " fenced streams and logs; `recordseal recover` lifts the fence (docs/continuity.md)",
    "store_rolled_back",
)


def _metrics_documented() -> dict[str, Any]:
    declared = documented(summary="Read the service's metrics (Prometheus text)")
    declared["responses"][200] = ResponseSpec(
        str,
        description="the Prometheus text exposition format (docs/operations.md, Metrics)",
        media_type="text/plain",
        generate_examples=False,
    )
    return declared


class ServiceController(DomainController):
    """Liveness, readiness, metrics and the public key directory; no authentication."""

    dependencies = {"services": Provide(provide_services, sync_to_thread=False)}  # noqa: RUF012

    @get("/health", tags=["service"], **documented(summary="Check that the service answers"))
    async def health(self) -> Health:
        """Liveness: the process answers."""
        return Health()

    @get(
        "/readyz",
        tags=["service"],
        **documented(
            summary="Check that the service is ready to serve",
            answers={200: (Readiness, "ready: keys loaded, store answering")},
            refusals=[NOT_READY, ROLLED_BACK],
        ),
    )
    async def readyz(self, state: State) -> Response[bytes]:
        """Readiness: keys loaded and the store answering (200, with a ``detail`` when a
        witness refuses logs or a background task ended), or 503 naming what is not."""
        if state.get(READY_STATE) is not True:
            return problem_response(503, "not_ready", "keys: the service is starting or stopping")
        try:
            store = provide_services(state).store
            await asyncio.wait_for(store.logs.log_origins(), READY_TIMEOUT)
        # Outermost boundary of the readiness probe: whatever the store raises (each backend
        # and driver its own errors), the answer is 503 not_ready, never a 500.
        except Exception as error:
            log.warning("readiness.store_unavailable", extra={"error": type(error).__name__})
            return problem_response(503, "not_ready", "store: the database does not answer")
        services = provide_services(state)
        continuity = services.continuity
        notes = []
        if services.sealer.refusals_file is not None:
            notes.append(refusals.describe(refusals.read(services.sealer.refusals_file)))
        background = state.get(BACKGROUND_STATE)
        if isinstance(background, TaskSupervisor):
            notes.extend(background.faults())
        refused = "; ".join(note for note in notes if note) or None
        streams, logs = len(continuity.streams), len(continuity.logs)
        if streams or logs:  # a public endpoint: counts, never tenant or stream names
            return problem_response(
                503,
                "store_rolled_back",
                f"{streams} streams and {logs} logs are fenced: the store is behind what the"
                " service signed; stop the service and run `recordseal recover`"
                + (f". Also: {refused}" if refused else ""),
            )
        body = Readiness(status="ready", checks={"keys": "ok", "store": "ok"}, detail=refused)
        return Response(msgspec.json.encode(body), media_type="application/json")

    @get("/metrics", tags=["service"], sync_to_thread=True, **_metrics_documented())
    def prometheus_metrics(self) -> Response[bytes]:
        """Prometheus text format: requests, ingest, sealing, witnesses, panel denials."""
        return Response(metrics.exposition(), media_type=metrics.CONTENT_TYPE)

    @get(
        "/v1/keys",
        tags=["records"],
        **documented(
            summary="Read the public key directory",
            answers={200: (KeyDirectory, "the key directory (docs/bundle.md)")},
        ),
    )
    async def keys(self, services: NamedDependency[AppServices]) -> Response[bytes]:
        """The public key directory (docs/bundle.md): header-signing keys with their validity, and
        the note verifier key of every log."""
        return Response(
            msgspec.json.encode(
                await key_directory(
                    services.store, services.sealer.every, services.sealer.log_compromise
                )
            ),
            media_type="application/json",
        )

    @get(
        "/v1/trust",
        tags=["records"],
        dependencies={"trust": Provide(provide_trust_store, sync_to_thread=False)},
        **documented(
            summary="Read the trust store of the service's witnesses",
            answers={
                200: (TrustStore, "the trust store of the service's witnesses (docs/bundle.md)")
            },
        ),
    )
    async def trust(self, trust: NamedDependency[TrustStore]) -> Response[bytes]:
        """The witnesses, time-stamping authorities and quorum the service is configured with,
        as a verifier's trust store (docs/bundle.md): what ``POST /v1/verify`` uses and
        ``recordseal keys export`` writes. It is the service's own word on whom it asks to
        vouch: an auditor who does not take that word names the witnesses it trusts itself."""
        return Response(msgspec.json.encode(trust), media_type="application/json")
