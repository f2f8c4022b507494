"""``create_app()``: the Litestar application of the record service."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import msgspec
from litestar import Litestar, get
from litestar.datastructures import State
from litestar.di import Provide
from litestar.exceptions import HTTPException
from litestar.openapi import OpenAPIConfig

from recordseal.crypto.keyfiles import read_or_create_secret
from recordseal.crypto.signing import HeaderSigner
from recordseal.crypto.vault import KeyWrapper
from recordseal.ledger.sealer import Sealer, configured_witnesses
from recordseal.services.clock import utc_now
from recordseal.services.errors import ServiceError
from recordseal.services.records import RecordService
from recordseal.services.tokens import TokenService
from recordseal.settings import Settings
from recordseal.storage.base import SigningKeyRow, Store
from recordseal.storage.sqlite import SQLiteStore
from recordseal.web import problems, records
from recordseal.web.schemas import Health, KeyDirectory, KeyOut, LogKeyOut

log = logging.getLogger("recordseal")


@get("/health", tags=["service"])
async def health() -> Health:
    """Liveness: the process answers."""
    return Health()


@get("/v1/keys", tags=["records"])
async def key_directory(state: State) -> KeyDirectory:
    """The public key directory: header-signing keys with their validity, and log keys."""
    store: Store = state.store
    sealer: Sealer = state.sealer
    return KeyDirectory(
        logs=[
            LogKeyOut(origin=origin, vkey=sealer.signer(origin).verifier().vkey)
            for origin in await store.log_origins()
        ],
        keys=[
            KeyOut(
                key_id=key.key_id,
                algorithm=key.algorithm,
                public_key=key.public_key.hex(),
                not_before=key.not_before,
                not_after=key.not_after,
                revoked_at=key.revoked_at,
            )
            for key in await store.signing_keys()
        ],
    )


def open_store(settings: Settings) -> Store:
    return SQLiteStore(settings.database_path)


def create_app(settings: Settings | None = None) -> Litestar:
    """The application; state (store, keys, services) is opened in its lifespan."""
    settings = settings or Settings.from_env()

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        store = open_store(settings)
        await store.open()
        wrapper = KeyWrapper(read_or_create_secret(settings.data_dir / "keys" / "kek.key"))
        signer = HeaderSigner.load_or_create(settings.data_dir)
        await store.register_signing_key(
            SigningKeyRow(signer.key_id, "Ed25519", signer.public_key, utc_now(), None, None)
        )
        sealer = Sealer(
            store,
            read_or_create_secret(settings.data_dir / "keys" / "log-signing.ed25519"),
            settings.origin,
            settings.data_dir / "sealer.lock",
            configured_witnesses(settings.witnesses),
        )
        app.state.store = store
        app.state.sealer = sealer
        app.state.tokens = TokenService(store, settings.token_cache_seconds)
        app.state.records = RecordService(store, wrapper, signer)
        sealing = (
            asyncio.create_task(sealer.run(settings.seal_interval))
            if settings.seal_interval > 0
            else None
        )
        try:
            yield
        finally:
            if sealing is not None:
                sealing.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await sealing
            await store.close()

    return Litestar(
        route_handlers=[
            health,
            key_directory,
            records.create_stream,
            records.post_record,
            records.get_record,
            records.get_payload,
            records.erase_subject,
        ],
        dependencies={
            "tenant": Provide(records.tenant_of),
            "records": Provide(records.records_of, sync_to_thread=False),
        },
        exception_handlers={
            ServiceError: problems.service_error_handler,
            msgspec.ValidationError: problems.validation_error_handler,
            msgspec.DecodeError: problems.decode_error_handler,
            HTTPException: problems.http_error_handler,
            Exception: problems.internal_error_handler,
        },
        lifespan=[lifespan],
        request_max_body_size=settings.max_body_bytes,
        openapi_config=OpenAPIConfig(title="recordseal", version="1.0.0"),
        debug=False,
    )
