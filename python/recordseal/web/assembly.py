"""The parts of one worker, built from its settings (docs/layers.md, "The web layer").

:func:`assemble` is what the application's lifespan runs (``web/plugin.py``): it opens the
store and builds every part in the order their rules need, one well-named builder per part,
and returns a :class:`Worker`. The worker puts its parts on the application's typed state
(:meth:`Worker.install`, ``web/state.py``), runs its background tasks under one
:class:`~recordseal.web.background.TaskSupervisor`, and closes everything in order at shutdown
(:meth:`Worker.close`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial

import msgspec
from litestar.datastructures import State

from recordseal.audit import FleetAudit
from recordseal.crypto.keks import DirectoryWrapper
from recordseal.fleet.manifest import FleetManifest
from recordseal.fleet.panel_collisions import panel_collisions
from recordseal.fleet.reload import FleetRegistry, ReloadOutcome, scope_of, watch_manifest
from recordseal.fleet.status import FleetStatusReader
from recordseal.fleet.transparency import run_daily
from recordseal.ledger import refusals
from recordseal.ledger.continuity import Continuity
from recordseal.ledger.log_keys import LogKeyring
from recordseal.ledger.sealer import (
    Sealer,
    TimestampAuthority,
    Witness,
    configured_authorities,
    configured_witnesses,
)
from recordseal.panel.bootstrap import apply_seed
from recordseal.panel.cookie_keys import DirectoryKeyring
from recordseal.panel.legacy_import import import_panel_files
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
from recordseal.services.tiles import TileService
from recordseal.services.tokens import TokenService
from recordseal.services.verification import OnlineVerifier
from recordseal.settings import Settings
from recordseal.storage.backends import open_journal, open_store
from recordseal.storage.base import Store
from recordseal.verify import KeyDirectory, TrustStore
from recordseal.web.background import BACKGROUND_STATE, TaskSupervisor
from recordseal.web.panel.context import PanelContext
from recordseal.web.panel.passkeys import PasskeyConfig
from recordseal.web.panel.sso import SsoContext, build_sso_context
from recordseal.web.ratelimit import RateLimiter
from recordseal.web.state import AppServices


@dataclass(frozen=True, slots=True)
class Worker:
    """Everything one worker's requests and background tasks use."""

    store: Store
    continuity: Continuity
    services: AppServices
    fleets: FleetRegistry
    trust: TrustStore
    verifier: OnlineVerifier
    panel: PanelContext
    sso: SsoContext
    tasks: TaskSupervisor

    def install(self, state: State, settings: Settings) -> None:
        """The typed state the handlers read (``web/state.py`` and the panel's contexts)."""
        state.rate_limiter = RateLimiter.of(settings)
        state.fleets = self.fleets
        state.services = self.services
        state.trust_store = self.trust
        state.verifier = self.verifier
        state.passkey_config = PasskeyConfig.of(settings)
        state.panel = self.panel
        state.sso = self.sso
        state[BACKGROUND_STATE] = self.tasks

    async def close(self, state: State) -> None:
        """Background tasks stopped first, then the limiter, the tokens' pending writes, the
        store and the continuity journal (the limiter and the token service are the state's:
        a test may have replaced the limiter)."""
        await self.tasks.stop()
        state.rate_limiter.close()
        await state.services.tokens.drain()
        await self.store.close()
        await self.continuity.close()


async def assemble(settings: Settings, manifest: FleetManifest, sso: SsoSettings) -> Worker:
    """Open the store and build every part of a worker, in the order their rules need."""
    store = await open_and_adopt(settings)
    # Every KEK of keys/, followed while the service runs (a rotation, crypto/keks.py).
    wrapper = DirectoryWrapper(settings.data_dir / "keys")
    secrets = SecretBox.of_keys(settings.data_dir / "keys")
    tenants = await load_panel_state(settings, store, secrets, sso)
    tenant_states = TenantStates(store.hierarchy, settings.token_cache_seconds)
    # The store's active header key (docs/operations.md, "Keys"); the first one is made on a
    # new store. A store whose key this data directory lacks is refused.
    header_keys = await HeaderKeys.load(store.records, settings.data_dir / "keys")
    continuity = await open_continuity(settings, store)
    audit = FleetAudit(store.panel)
    witnesses = configured_witnesses(settings.witnesses)
    authorities = configured_authorities(settings.timestamp_authorities)
    sealer = build_sealer(settings, store, continuity, audit, witnesses, authorities)
    fleets, on_fleets_added = await bind_fleets(manifest, audit, tenants, sealer)
    records = RecordService(
        store,
        wrapper,
        header_keys,
        lambda: fleets.manifest,
        continuity=continuity,
        tenant_states=tenant_states,
    )
    proofs = ProofService(store, sealer, max_wait=settings.max_wait_seconds)
    services = AppServices(
        store=store,
        sealer=sealer,
        tokens=TokenService(store.tokens, settings.token_cache_seconds),
        records=records,
        proofs=proofs,
        disclosure=DisclosureService(store, records, proofs),
        continuity=continuity,
        listing=Listing(store),
        tiles=TileService(store.logs, settings.origin, public=[sealer.aggregate_origin]),
    )
    trust = build_trust_store(settings)
    panel = build_panel_context(
        settings,
        store,
        fleets,
        tenants,
        tenant_states,
        continuity,
        # A fleet's anchors are cosigned by the tenant logs' witnesses; those of the aggregate
        # log never see them (docs/tlog.md, "The aggregate log").
        witnesses=[w.client.witness.name for w in witnesses if w.logs == "tenant"],
        authorities=[authority.name for authority in authorities],
    )
    sso_context = build_sso_context(sso, store.panel, secrets)
    expose_file_keys(settings.data_dir / "keys")  # their ages, on /metrics
    return Worker(
        store=store,
        continuity=continuity,
        services=services,
        fleets=fleets,
        trust=trust,
        verifier=build_verifier(store, sealer, trust),
        panel=panel,
        sso=sso_context,
        tasks=background_tasks(
            settings, store, sealer, continuity, manifest, fleets, on_fleets_added
        ),
    )


async def open_and_adopt(settings: Settings) -> Store:
    """The store the settings name, opened (which migrates it), with the keys the settings
    name in a hardware module recorded on a first start (docs/operations.md, "Keys in a
    hardware module")."""
    store = open_store(settings)
    await store.open()
    await adopt_configured(settings, store.records)
    return store


async def load_panel_state(
    settings: Settings, store: Store, secrets: SecretBox, sso: SsoSettings
) -> StoredTenantStore:
    """The panel state of earlier versions (files in the data directory) imported into the
    database, then the seed file's tenants, organizations and fleets added once
    (docs/panel.md, "Upgrading" and "The seed file")."""
    await import_panel_files(store.panel, settings.data_dir, secrets, sso.provider_store_path)
    tenants = StoredTenantStore(store.hierarchy)
    await apply_seed(settings.panel_tenant_seed, tenants)
    return tenants


async def open_continuity(settings: Settings, store: Store) -> Continuity:
    """Before anything is served: erasures re-applied, streams and logs the store lost
    fenced (docs/continuity.md)."""
    continuity = Continuity(open_journal(settings))
    await continuity.start(store)
    return continuity


def build_sealer(
    settings: Settings,
    store: Store,
    continuity: Continuity,
    audit: FleetAudit,
    witnesses: list[Witness],
    authorities: list[TimestampAuthority],
) -> Sealer:
    """The sealer of every log, with the configured witnesses and time-stamping authorities."""
    return Sealer(
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


async def bind_fleets(
    manifest: FleetManifest, audit: FleetAudit, tenants: StoredTenantStore, sealer: Sealer
) -> tuple[FleetRegistry, Callable[[ReloadOutcome], Awaitable[None]]]:
    """The fleet registry bound to the manifest, collisions with the panel logged, and every
    bound fleet's log started from its genesis root (idempotent: only new logs); with what a
    reload that adds fleets does the same for them."""
    registry = FleetRegistry(manifest, audit)
    await registry.bind()
    await panel_collisions(manifest, tenants)
    await sealer.open_fleet_logs([scope_of(fleet) for fleet in manifest.fleets])

    async def open_added(outcome: ReloadOutcome) -> None:
        await panel_collisions(registry.manifest, tenants)
        await sealer.open_fleet_logs(
            [scope_of(c.new) for c in outcome.changes if c.kind == "added" and c.new]
        )

    return registry, open_added


def build_trust_store(settings: Settings) -> TrustStore:
    """The verifier's trust store of the configured witnesses and authorities."""
    return msgspec.convert(
        trust_store(settings.witnesses, settings.timestamp_authorities, settings.witness_quorum),
        TrustStore,
    )


def build_verifier(store: Store, sealer: Sealer, trust: TrustStore) -> OnlineVerifier:
    """The online verifier, with the key directory read from the store when it changes."""

    async def verification_context() -> tuple[KeyDirectory, TrustStore]:
        directory = await key_directory(store, sealer.every, sealer.log_compromise)
        return msgspec.convert(directory, KeyDirectory), trust

    return OnlineVerifier(verification_context)


def build_panel_context(
    settings: Settings,
    store: Store,
    fleets: FleetRegistry,
    tenants: StoredTenantStore,
    tenant_states: TenantStates,
    continuity: Continuity,
    *,
    witnesses: list[str],
    authorities: list[str],
) -> PanelContext:
    """The panel's context: tenants, cookie keys, its store, fleet status and fences."""
    return PanelContext(
        tenants=tenants,
        keyring=DirectoryKeyring(settings.data_dir / "keys"),
        store=store.panel,
        fleet_status=FleetStatusReader(
            store.logs,
            lambda: fleets.manifest,
            witnesses,
            authorities,
        ),
        transparency_root=settings.transparency_root,
        fences=continuity.tenant_fences,
        tenant_changed=tenant_states.forget,
        activity=store.activity,
        records=Listing(store),
    )


def background_tasks(
    settings: Settings,
    store: Store,
    sealer: Sealer,
    continuity: Continuity,
    manifest: FleetManifest,
    fleets: FleetRegistry,
    on_fleets_added: Callable[[ReloadOutcome], Awaitable[None]],
) -> TaskSupervisor:
    """The worker's background tasks, as its settings enable them (docs/operations.md,
    "Background tasks")."""
    tasks = TaskSupervisor()
    # Fences journaled by any process, taken up by this one within a second.
    tasks.add("shared_fences", continuity.watch)
    if settings.seal_interval > 0:
        tasks.add("sealing", partial(sealer.run, settings.seal_interval))
    tasks.add(
        "idempotency_purge",
        partial(purge_loop, store.records, settings.idempotency_retention_hours * 3600),
    )
    if settings.manifest_reload_interval > 0 and manifest.path is not None:
        tasks.add(
            "manifest_watch",
            partial(watch_manifest, fleets, settings.manifest_reload_interval, on_fleets_added),
        )
    if settings.transparency_interval > 0:
        tasks.add(
            "transparency_files",
            partial(
                run_daily,
                store.logs,
                settings.transparency_root,
                store.logs.claim_sealing,
                settings.transparency_interval,
            ),
        )
    return tasks
