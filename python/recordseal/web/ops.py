"""Operations routes: liveness, readiness and metrics (docs/operations.md).

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
from litestar.openapi.datastructures import ResponseSpec

from recordseal import metrics
from recordseal.web.openapi import documented, refusal
from recordseal.web.problems import problem_response
from recordseal.web.schemas import Health
from recordseal.web.services import services_in

log = logging.getLogger("recordseal.web")

#: Seconds the store has to answer the readiness query.
READY_TIMEOUT = 2.0
READY_STATE = "ready"


class Readiness(msgspec.Struct):
    status: Literal["ready"]
    checks: dict[str, Literal["ok"]]


NOT_READY = refusal(
    503,
    "this worker is not ready: its keys are not loaded (starting or stopping) or its store does"
    " not answer; `detail` names which",
    "not_ready",
)


def _metrics_documented() -> dict[str, Any]:
    declared = documented()
    declared["responses"][200] = ResponseSpec(
        str,
        description="the Prometheus text exposition format (docs/operations.md, Metrics)",
        media_type="text/plain",
        generate_examples=False,
    )
    return declared


@get("/health", tags=["service"], **documented())
async def health() -> Health:
    """Liveness: the process answers."""
    return Health()


@get(
    "/readyz",
    tags=["service"],
    **documented(
        answers={200: (Readiness, "ready: keys loaded, store answering")}, refusals=[NOT_READY]
    ),
)
async def readyz(state: State) -> Response[bytes]:
    """Readiness: keys loaded and the store answering (200), or 503 naming what is not."""
    if not state.get(READY_STATE):
        return problem_response(503, "not_ready", "keys: the service is starting or stopping")
    try:
        await asyncio.wait_for(services_in(state).store.logs.log_origins(), READY_TIMEOUT)
    except Exception as error:  # any failure of the store means: not ready
        log.warning("readiness.store_unavailable", extra={"error": type(error).__name__})
        return problem_response(503, "not_ready", "store: the database does not answer")
    body = Readiness(status="ready", checks={"keys": "ok", "store": "ok"})
    return Response(msgspec.json.encode(body), media_type="application/json")


@get("/metrics", tags=["service"], sync_to_thread=True, **_metrics_documented())
def prometheus_metrics() -> Response[bytes]:
    """Prometheus text format: requests, ingest, sealing, witnesses, panel denials."""
    return Response(metrics.exposition(), media_type=metrics.CONTENT_TYPE)


OPS_ROUTES = [health, readyz, prometheus_metrics]
