"""Waiting for proofs and refreshing them: ``?wait=<seconds>`` and ``POST /v1/proofs:refresh``.

``POST /v1/proofs:refresh`` is public, like ``/v1/verify``: anyone holding a bundle may bring
its proof up to date (docs/bundle.md, "Refreshing a proof"). The answer is the same bundle with
the newest witnessed proof of its record; when the old bundle had a seal, the header
``Recordseal-Consistency`` carries the RFC 6962 consistency proof between its checkpoint and
the new one: ``<smaller size> <larger size>`` then the proof's hashes in base64, separated by
spaces.
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from litestar import Controller, Request, Response, post
from litestar.di import NamedDependency, Provide

from recordseal.services.proofs import ProofService
from recordseal.verify import Bundle
from recordseal.verify.bundle import encode_bundle
from recordseal.verify.refresh import CONSISTENCY_HEADER, Consistency
from recordseal.web import examples
from recordseal.web.bodies import check_json_text, decode_strict, require_json, strict_decoder
from recordseal.web.controller import DomainController
from recordseal.web.ingest import JSON, NO_STORE
from recordseal.web.openapi import documented, refusal
from recordseal.web.state import provide_proofs
from recordseal.web.waiting import WAIT_PARAMETER, wait_of

_bundle_decoder = strict_decoder(Bundle)


def consistency_header(consistency: Consistency | None) -> dict[str, str]:
    return {} if consistency is None else {CONSISTENCY_HEADER: consistency.header()}


def _decode(raw: bytes) -> Bundle:
    check_json_text(raw)
    return decode_strict(raw, _bundle_decoder)


def proof_controller(max_bundle_bytes: int) -> type[Controller]:
    """``POST /v1/proofs:refresh`` for bundles up to ``max_bundle_bytes`` (the setting)."""

    class ProofController(DomainController):
        """Refreshing a bundle's proof; public, like ``/v1/verify``."""

        dependencies = {"proofs": Provide(provide_proofs, sync_to_thread=False)}  # noqa: RUF012

        @post(
            "/v1/proofs:refresh",
            status_code=200,
            tags=["verification"],
            request_max_body_size=max_bundle_bytes,
            **documented(
                summary="Refresh a bundle's proof to the newest witnessed checkpoint",
                body=Bundle,
                examples={"a bundle": examples.bundle()},
                body_description=f"a disclosure bundle, at most {max_bundle_bytes:,} bytes",
                answers={
                    200: (
                        Bundle,
                        "the same disclosure with the newest witnessed proof of its record;"
                        " when the bundle had a seal, the header"
                        f" `{CONSISTENCY_HEADER}` holds the smaller and the larger checkpoint"
                        " size, then the RFC 6962 consistency proof between them (base64),"
                        " separated by spaces",
                    )
                },
                refusals=[
                    refusal(
                        404,
                        "this service holds no record with the bundle's signed header and"
                        " signature",
                        "record_not_found",
                    ),
                    refusal(
                        409,
                        "the bundle's checkpoint is not consistent with the record's log",
                        "checkpoint_inconsistent",
                    ),
                    refusal(
                        422,
                        "the bundle's seal is not of the record's log, entry and log key, or `wait`"
                        " is not a number of seconds within the service's bound",
                        "seal_invalid",
                        "wait_invalid",
                    ),
                ],
                parameters=[WAIT_PARAMETER],
            ),
        )
        async def refresh_proof(
            self, request: Request[Any, Any, Any], proofs: NamedDependency[ProofService]
        ) -> Response[bytes]:
            """The same disclosure with the newest witnessed proof of its record (public).

            The record is found by the bundle's signed header; fields and coverage are returned
            untouched. 404 ``record_not_found`` when this service holds no record with that
            header and signature; 422 ``seal_invalid`` when the bundle's seal is not of the
            record's entry and log key; 409 ``checkpoint_inconsistent`` when its checkpoint is not
            consistent with the log.
            """
            wait = wait_of(request)
            require_json(request)
            bundle = await anyio.to_thread.run_sync(_decode, await request.body())
            refreshed = await proofs.refresh(bundle, wait)
            headers = {**NO_STORE, **consistency_header(refreshed.consistency)}
            body = await anyio.to_thread.run_sync(encode_bundle, refreshed.bundle)
            return Response(body, media_type=JSON, headers=headers)

    return ProofController
