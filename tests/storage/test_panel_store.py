"""The panel's part of the store (``storage/panel.py``) on both backends: every rule of its
contract, and two stores on one database (two processes) agreeing on each outcome."""

from __future__ import annotations

import asyncio

import pytest

from recordseal.settings import Settings
from recordseal.storage.backends import open_store
from recordseal.storage.base import Store
from recordseal.storage.panel import (
    ALL_TENANTS,
    AuditEntry,
    CeremonyRow,
    LinkRow,
    ManifestStep,
    PasskeyRow,
    PendingLoginRow,
    ProviderRow,
)
from tests.backends import opened

NOW = 1_800_000_000.0


def passkey(credential: bytes, user: str = "operator-1", role: str = "viewer") -> PasskeyRow:
    return PasskeyRow(credential, user, b"cose-key", 0, role, NOW)


def provider(provider_id: str, secret: bytes | None = b"sealed") -> ProviderRow:
    return ProviderRow(
        provider_id, "acme", "eng", b'{"id": "%s"}' % provider_id.encode(), secret, NOW
    )


def entry(event: str, fleet: str = "edge", tenant: str | None = "acme", key: str | None = None):
    return AuditEntry(
        event, fleet, tenant, "2026-11-21T00:00:00.000000Z", f'{{"e":"{event}"}}', key
    )


def test_a_link_registers_one_passkey_with_its_role(store: Store) -> None:
    async def run() -> None:
        async with opened(store):
            panel = store.panel
            await panel.add_link(LinkRow(b"L" * 32, "operator", NOW, NOW + 900))
            assert (await panel.link(b"L" * 32)) == LinkRow(b"L" * 32, "operator", NOW, NOW + 900)
            used = await panel.register_passkey(b"L" * 32, passkey(b"cred-1", role="viewer"))
            assert (used.state, used.role) == ("valid", "operator")  # the link's role wins
            stored = await panel.passkey(b"cred-1")
            assert stored is not None and stored.role == "operator"
            assert stored.user_id == "operator-1" and stored.public_key == b"cose-key"
            assert (await panel.link(b"L" * 32)).used_at == NOW  # type: ignore[union-attr]
            # Single use: a second registration through it stores nothing.
            again = await panel.register_passkey(b"L" * 32, passkey(b"cred-2"))
            assert (again.state, again.role) == ("used", "operator")
            assert await panel.passkey(b"cred-2") is None
            unknown = await panel.register_passkey(b"X" * 32, passkey(b"cred-3"))
            assert (unknown.state, unknown.role) == ("unknown", None)
            # Expired: created at or after its expiry.
            await panel.add_link(LinkRow(b"E" * 32, "viewer", NOW - 900, NOW))
            late = await panel.register_passkey(b"E" * 32, passkey(b"cred-4"))
            assert late.state == "expired" and await panel.passkey(b"cred-4") is None
            await panel.update_sign_count(b"cred-1", 7)
            assert (await panel.passkey(b"cred-1")).sign_count == 7  # type: ignore[union-attr]
            assert await panel.passkey_roles("operator-1") == ["operator"]
            assert await panel.passkey_roles("nobody") == []

    asyncio.run(run())


def test_imported_passkeys_keep_existing_ones(store: Store) -> None:
    async def run() -> None:
        async with opened(store):
            panel = store.panel
            assert await panel.add_passkeys([passkey(b"a", "u1"), passkey(b"b", "u1", "operator")])
            assert await panel.add_passkeys([passkey(b"a", "u1", "operator"), passkey(b"c")]) == 1
            assert (await panel.passkey(b"a")).role == "viewer"  # type: ignore[union-attr]
            assert await panel.passkey_roles("u1") == ["operator", "viewer"]

    asyncio.run(run())


def test_ceremonies_and_pending_logins_are_single_use(store: Store) -> None:
    async def run() -> None:
        async with opened(store):
            panel = store.panel
            ceremony = CeremonyRow("register", b"challenge", "u1", b"T" * 32, NOW + 300)
            await panel.put_ceremony("state-1", ceremony, NOW)
            await panel.put_ceremony(
                "old", CeremonyRow("authenticate", b"c", None, None, NOW), NOW - 1
            )
            assert await panel.take_ceremony("state-1") == ceremony
            assert await panel.take_ceremony("state-1") is None
            # An expired one is dropped by the next put.
            await panel.put_ceremony("state-2", ceremony, NOW + 1)
            assert await panel.take_ceremony("old") is None

            login = PendingLoginRow("acme-okta", "/tenants", b"sealed", b"B" * 32, NOW + 600)
            await panel.put_pending_login(b"N" * 32, login, NOW)
            await panel.put_pending_login(
                b"O" * 32, PendingLoginRow("x", "/", None, None, NOW), NOW - 1
            )
            assert await panel.pending_login_count() == 2
            assert await panel.take_pending_login(b"N" * 32) == login
            assert await panel.take_pending_login(b"N" * 32) is None
            await panel.put_pending_login(b"P" * 32, login, NOW + 1)  # drops the expired one
            assert await panel.pending_login_count() == 1

    asyncio.run(run())


def test_providers_register_once_and_removed_ids_are_not_imported_again(store: Store) -> None:
    async def run() -> None:
        async with opened(store):
            panel = store.panel
            assert await panel.add_provider(provider("acme-okta"))
            assert not await panel.add_provider(provider("acme-okta", b"other"))
            assert (await panel.provider("acme-okta")).secret == b"sealed"  # type: ignore[union-attr]
            assert await panel.import_provider(provider("acme-proxy", None))
            assert not await panel.import_provider(provider("acme-okta", b"from a file"))
            assert [p.provider_id for p in await panel.providers()] == ["acme-okta", "acme-proxy"]
            assert await panel.remove_provider("acme-okta", NOW)
            assert not await panel.remove_provider("acme-okta", NOW)
            assert await panel.provider("acme-okta") is None
            # An import never brings a removed provider back; a registration does.
            assert not await panel.import_provider(provider("acme-okta"))
            assert await panel.provider("acme-okta") is None
            assert await panel.add_provider(provider("acme-okta", b"new"))
            assert (await panel.provider("acme-okta")).secret == b"new"  # type: ignore[union-attr]

    asyncio.run(run())


def test_sign_out_epochs_per_scope(store: Store) -> None:
    async def run() -> None:
        async with opened(store):
            panel = store.panel
            assert await panel.current_signout_epoch() == 0
            assert await panel.signout_epochs([ALL_TENANTS, "acme"]) == {}
            assert await panel.raise_signout_epoch("acme") == 1
            assert await panel.raise_signout_epoch(ALL_TENANTS) == 2
            assert await panel.raise_signout_epoch("acme") == 3
            assert await panel.signout_epochs([ALL_TENANTS, "acme", "globex"]) == {
                ALL_TENANTS: 2,
                "acme": 3,
            }
            assert await panel.current_signout_epoch() == 3
            # An imported epoch file never lowers an epoch.
            await panel.adopt_signout_epoch(ALL_TENANTS, 1)
            await panel.adopt_signout_epoch("globex", 9)
            assert await panel.signout_epochs([ALL_TENANTS, "globex"]) == {
                ALL_TENANTS: 2,
                "globex": 9,
            }
            assert await panel.raise_signout_epoch(ALL_TENANTS) == 10

    asyncio.run(run())


def test_audit_entries_are_kept_once_by_key(store: Store) -> None:
    async def run() -> None:
        async with opened(store):
            panel = store.panel
            first = entry("anchor.sealed", key="anchor.sealed/o/2")
            assert await panel.record_audit([first, entry("anchor.sealed", key=None)]) == [
                first,
                entry("anchor.sealed", key=None),
            ]
            assert await panel.record_audit([first]) == []
            await panel.record_audit([entry("fleet.bound", "solo", None)])
            listed = await panel.audit_entries()
            assert [e.event for _, e in listed] == ["anchor.sealed"] * 2 + ["fleet.bound"]
            assert [e for _, e in await panel.audit_entries(tenant="acme")] == [
                first,
                entry("anchor.sealed", key=None),
            ]
            after = listed[0][0]
            assert len(await panel.audit_entries(after=after)) == 2
            assert len(await panel.audit_entries(limit=1)) == 1

    asyncio.run(run())


def test_manifest_steps_record_each_change_once(store: Store) -> None:
    async def run() -> None:
        async with opened(store):
            panel = store.panel
            bound = [entry("fleet.bound")]
            assert await panel.record_audit(bound, ManifestStep("start", "M")) == bound
            assert await panel.record_audit(bound, ManifestStep("start", "M")) == []
            updated = [entry("fleet.updated")]
            assert await panel.record_audit(updated, ManifestStep("applied", "N", "M")) == updated
            # A second process seeing the same reload, or one behind, records nothing.
            assert await panel.record_audit(updated, ManifestStep("applied", "N", "M")) == []
            assert await panel.record_audit(updated, ManifestStep("applied", "O", "M")) == []
            refused = [entry("fleet.rebind_refused")]
            assert await panel.record_audit(refused, ManifestStep("refused", "R", "N")) == refused
            assert await panel.record_audit(refused, ManifestStep("refused", "R", "N")) == []
            # Back to N (the refusal is over), then refused again: recorded again.
            assert await panel.record_audit([], ManifestStep("applied", "N", "N")) == []
            assert await panel.record_audit(refused, ManifestStep("refused", "R", "N")) == refused
            # N -> M -> N records both changes, also the second time.
            assert await panel.record_audit(updated, ManifestStep("applied", "M", "N")) == updated
            assert await panel.record_audit(updated, ManifestStep("applied", "N", "M")) == updated
            assert len(await panel.audit_entries()) == 6

    asyncio.run(run())


@pytest.mark.parametrize("rounds", [8])
def test_two_stores_on_one_database_record_a_step_once(
    store_settings: Settings, rounds: int
) -> None:
    """Two processes (two stores) move the head together: each step is recorded once, and
    each sign-out raises the shared epoch."""

    async def run() -> None:
        first, second = open_store(store_settings), open_store(store_settings)
        async with opened(first), opened(second):
            for number in range(rounds):
                step = ManifestStep("start", f"M{number}")
                results = await asyncio.gather(
                    first.panel.record_audit([entry("fleet.bound", f"f{number}")], step),
                    second.panel.record_audit([entry("fleet.bound", f"f{number}")], step),
                )
                assert sorted(len(r) for r in results) == [0, 1]
            assert len(await second.panel.audit_entries()) == rounds
            await first.panel.raise_signout_epoch("acme")
            assert await second.panel.signout_epochs(["acme"]) == {"acme": 1}
            await second.panel.add_link(LinkRow(b"L" * 32, "operator", NOW, NOW + 900))
            use = await first.panel.register_passkey(b"L" * 32, passkey(b"c"))
            assert use.state == "valid"
            assert await second.panel.passkey_roles("operator-1") == ["operator"]

    asyncio.run(run())
