"""``create_app()``: the Litestar application of the record service.

The application lists its per-domain controllers (docs/layers.md, "The web layer") and builds
its typed state in the lifespan: the services (``AppServices``), the online verifier, the
panel's context, sign-on and passkey configuration (``web/services.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import msgspec
from litestar import Litestar

from recordseal.audit import FleetAudit
from recordseal.crypto.keks import DirectoryWrapper
from recordseal.fleet.join import panel_collisions
from recordseal.fleet.manifest import FleetManifest, load_manifest
from recordseal.fleet.reload import FleetRegistry, ReloadOutcome, scope_of, watch_manifest
from recordseal.fleet.status import FleetStatusReader
from recordseal.fleet.transparency import run_daily
from recordseal.ledger import refusals
from recordseal.ledger.continuity import Continuity
from recordseal.ledger.log_keys import LogKeyring
from recordseal.ledger.sealer import Sealer, configured_authorities, configured_witnesses
from recordseal.panel.bootstrap import apply_seed, store_from_seed
from recordseal.panel.cookie_keys import DirectoryKeyring
from recordseal.panel.migrate import import_panel_files
from recordseal.panel.sso.provider_store import SecretBox
from recordseal.panel.sso.settings import SsoSettings
from recordseal.panel.stored_tenants import StoredTenantStore
from recordseal.services.disclosure import DisclosureService
from recordseal.services.header_keys import HeaderKeys
from recordseal.services.key_admin import expose_file_keys
from recordseal.services.key_custody import adopt_configured
from recordseal.services.keys import key_directory, trust_store
from recordseal.services.listing import Listing
from recordseal.services.proofs import ProofService
from recordseal.services.records import RecordService
from recordseal.services.retention import purge_loop
from recordseal.services.tenant_states import TenantStates
from recordseal.services.tokens import TokenService
from recordseal.services.verification import OnlineVerifier
from recordseal.settings import Settings, from_env
from recordseal.storage.backends import open_journal, open_store
from recordseal.verify import KeyDirectory, TrustStore
from recordseal.web.headers import security_headers
from recordseal.web.ingest import IngestController
from recordseal.web.landing import LandingController
from recordseal.web.observe import RequestObserver
from recordseal.web.openapi import DocumentedAsPlugin, JsonSchemaFormatPlugin, openapi_config
from recordseal.web.ops import READY_STATE, ServiceController
from recordseal.web.panel.context import PanelContext
from recordseal.web.panel.passkeys import PASSKEY_ROUTES, PasskeyConfig
from recordseal.web.panel.routes import PANEL_ROUTES, panel_template_config
from recordseal.web.panel.sso import build_sso_context
from recordseal.web.problems import EXCEPTION_HANDLERS
from recordseal.web.proofs import proof_controller
from recordseal.web.ratelimit import RateLimiter
from recordseal.web.records import RecordController
from recordseal.web.services import AppServices
from recordseal.web.streams import StreamController
from recordseal.web.verify import static_files, verify_controller

log = logging.getLogger("recordseal")


def create_app(settings: Settings | None = None) -> Litestar:
    """The application; state (store, keys, services) is opened in its lifespan."""
    settings = settings or from_env()
    # Checked now, not in the lifespan: an inconsistent seed file stops the start at once, with
    # a BootstrapError naming the file and the identifier (docs/panel.md, "The seed file"). It
    # is loaded into the database in the lifespan, where a conflict with it stops the start.
    store_from_seed(settings.panel_tenant_seed)
    # Likewise the fleet manifest: an invalid one stops the start with a ManifestError naming
    # the file, the line and the key (docs/fleets.md, "The manifest").
    manifest = (
        load_manifest(settings.fleet_manifest) if settings.fleet_manifest else FleetManifest()
    )
    sso_settings = SsoSettings.of(settings)

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        store = open_store(settings)
        await store.open()
        # Keys the settings name in a hardware module, recorded on a first start
        # (docs/operations.md, "Keys in a hardware module").
        await adopt_configured(settings, store.records)
        # Every KEK of keys/, followed while the service runs (a rotation, crypto/keks.py).
        wrapper = DirectoryWrapper(settings.data_dir / "keys")
        secrets = SecretBox.of_keys(settings.data_dir / "keys")
        # Panel state of earlier versions (files in the data directory) into the database.
        await import_panel_files(
            store.panel, settings.data_dir, secrets, sso_settings.provider_store_path
        )
        # Tenants, organizations and fleets live in the database; the seed file adds its rows
        # once (docs/panel.md, "The seed file").
        tenants = StoredTenantStore(store.hierarchy)
        await apply_seed(settings.panel_tenant_seed, tenants)
        tenant_states = TenantStates(store.hierarchy, settings.token_cache_seconds)
        # The store's active header key (docs/operations.md, "Keys"); the first one is made
        # on a new store. A store whose key this data directory lacks is refused.
        header_keys = await HeaderKeys.load(store.records, settings.data_dir / "keys")
        # Before anything is served: erasures re-applied, streams and logs the store lost
        # fenced (docs/continuity.md).
        continuity = Continuity(open_journal(settings))
        await continuity.start(store)
        audit = FleetAudit(store.panel)
        witnesses = configured_witnesses(settings.witnesses)
        authorities = configured_authorities(settings.timestamp_authorities)
        sealer = Sealer(
            store.logs,
            LogKeyring.of_directory(settings.data_dir / "keys"),
            settings.origin,
            witnesses,
            authorities,
            audit,
            quorum=settings.witness_quorum,
            continuity=continuity,
            refusals_file=settings.data_dir / refusals.FILE_NAME,
        )
        registry = FleetRegistry(manifest, audit)
        await registry.bind()
        await panel_collisions(manifest, tenants)
        # Every bound fleet's log starts from its genesis root (idempotent: only new logs).
        await sealer.open_fleet_logs([scope_of(fleet) for fleet in manifest.fleets])

        async def open_added(outcome: ReloadOutcome) -> None:
            await panel_collisions(registry.manifest, tenants)
            await sealer.open_fleet_logs(
                [scope_of(c.new) for c in outcome.changes if c.kind == "added" and c.new]
            )

        app.state.rate_limiter = RateLimiter.of(settings)
        app.state.fleets = registry
        records = RecordService(
            store,
            wrapper,
            header_keys,
            lambda: registry.manifest,
            continuity=continuity,
            tenant_states=tenant_states,
        )
        proofs = ProofService(store, sealer, max_wait=settings.max_wait_seconds)
        app.state.services = AppServices(
            store=store,
            sealer=sealer,
            tokens=TokenService(store.tokens, settings.token_cache_seconds),
            records=records,
            proofs=proofs,
            disclosure=DisclosureService(store, records, proofs),
            continuity=continuity,
            listing=Listing(store),
        )

        trust = msgspec.convert(
            trust_store(
                settings.witnesses, settings.timestamp_authorities, settings.witness_quorum
            ),
            TrustStore,
        )

        app.state.trust_store = trust

        async def verification_context() -> tuple[KeyDirectory, TrustStore]:
            directory = await key_directory(store, sealer.every, sealer.log_compromise)
            return msgspec.convert(directory, KeyDirectory), trust

        app.state.verifier = OnlineVerifier(verification_context)
        app.state.passkey_config = PasskeyConfig.of(settings)
        app.state.panel = PanelContext(
            tenants=tenants,
            keyring=DirectoryKeyring(settings.data_dir / "keys"),
            store=store.panel,
            fleet_status=FleetStatusReader(
                store.logs,
                lambda: registry.manifest,
                [witness.client.witness.name for witness in witnesses],
                [authority.name for authority in authorities],
            ),
            transparency_root=settings.transparency_root,
            fences=continuity.tenant_fences,
            tenant_changed=tenant_states.forget,
            activity=store.activity,
        )
        app.state.sso = build_sso_context(sso_settings, store.panel, secrets)
        expose_file_keys(settings.data_dir / "keys")  # their ages, on /metrics
        tasks = []
        if settings.seal_interval > 0:
            tasks.append(asyncio.create_task(sealer.run(settings.seal_interval)))
        tasks.append(
            asyncio.create_task(
                purge_loop(store.records, settings.idempotency_retention_hours * 3600)
            )
        )
        if settings.manifest_reload_interval > 0 and manifest.path is not None:
            tasks.append(
                asyncio.create_task(
                    watch_manifest(registry, settings.manifest_reload_interval, open_added)
                )
            )
        if settings.transparency_interval > 0:
            tasks.append(
                asyncio.create_task(
                    run_daily(
                        store.logs,
                        settings.transparency_root,
                        store.logs.claim_sealing,
                        settings.transparency_interval,
                    )
                )
            )
        app.state[READY_STATE] = True
        try:
            yield
        finally:
            app.state[READY_STATE] = False
            for task in tasks:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            app.state.rate_limiter.close()
            await app.state.services.tokens.drain()
            await store.close()
            await continuity.close()

    app = Litestar(
        route_handlers=[
            LandingController,
            ServiceController,
            # In this order, the OpenAPI document lists streams, ingest, then stored records.
            StreamController,
            IngestController,
            RecordController,
            verify_controller(settings.max_bundle_bytes),
            static_files,
            proof_controller(settings.max_bundle_bytes),
            *PANEL_ROUTES,
            *PASSKEY_ROUTES,
        ],
        template_config=panel_template_config(),
        exception_handlers=dict(EXCEPTION_HANDLERS),
        lifespan=[lifespan],
        request_max_body_size=settings.max_body_bytes,
        openapi_config=openapi_config(),
        plugins=[DocumentedAsPlugin(), JsonSchemaFormatPlugin()],
        before_send=[security_headers],
        # One logging setup for every process (recordseal.logs), not Litestar's own.
        logging_config=None,
        debug=False,
    )
    # Outside the router, so requests no route matches are logged and counted too.
    app.asgi_handler = RequestObserver(app.asgi_handler, access_log=settings.access_log)
    return app
