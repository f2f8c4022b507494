"""Sign-out epochs in the panel's store: one scope per tenant plus every session's, shared by
every process on the database, kept across restarts, compatible with cookies issued by the
versions that kept one epoch in ``<data_dir>/panel-signout-epoch``."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from recordseal.panel.cookies import CookieKeyring, SigningKey
from recordseal.panel.legacy_import import import_panel_files
from recordseal.panel.sessions import LegacySession, TenantSession
from recordseal.panel.sso.provider_store import SecretBox
from recordseal.panel.tenants import InMemoryTenantStore
from recordseal.storage.sqlite import SQLiteStore
from recordseal.web.panel.context import PanelContext
from tests.backends import opened

KEYRING = CookieKeyring(SigningKey("k1", b"k" * 32))
EXP = int(time.time()) + 3600


def context(store: SQLiteStore) -> PanelContext:
    return PanelContext(InMemoryTenantStore(), KEYRING, store.panel)


def legacy(epoch: int | None) -> str:
    return KEYRING.issue(LegacySession("root", EXP, epoch))


def tenant(tenant_id: str, epoch: int | None) -> str:
    org = "eng" if tenant_id == "acme" else "hq"
    return KEYRING.issue(TenantSession("alice", tenant_id, org, EXP, "operator", epoch))


async def valid(panel: PanelContext, cookies: dict[str, str]) -> set[str]:
    return {name for name, cookie in cookies.items() if await panel.verify(cookie) is not None}


def test_a_sign_out_through_one_process_reaches_the_others_and_outlives_restarts(tmp_path: Path):
    database = tmp_path / "recordseal.sqlite3"

    async def run() -> None:
        async with opened(SQLiteStore(database)) as one, opened(SQLiteStore(database)) as two:
            first, second = context(one), context(two)
            cookie = legacy(await first.current_epoch())
            assert await second.verify(cookie) is not None
            assert await first.sign_out_everywhere(None) == 1
            assert await second.current_epoch() == 1  # another process sees it
            assert await second.verify(cookie) is None
            assert await second.sign_out_everywhere("acme") == 2
            assert await first.current_epoch() == 2
        async with opened(SQLiteStore(database)) as restarted:
            assert await context(restarted).verify(cookie) is None
            assert await context(restarted).current_epoch() == 2

    asyncio.run(run())


def test_tenant_and_legacy_scopes_with_cookies_issued_before_the_change(tmp_path: Path):
    """A deployment at global epoch 3 (the old epoch file) upgrades: its cookies with g=3 stay
    valid, those signed out before stay out; then a tenant's sign-out ends that tenant's
    sessions only, and a legacy operator-admin's ends all."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "panel-signout-epoch").write_text("3")
    before = {
        "legacy g=3": legacy(3),
        "legacy no g": legacy(None),
        "legacy g=2": legacy(2),
        "acme g=3": tenant("acme", 3),
        "acme no g": tenant("acme", None),
        "globex g=3": tenant("globex", 3),
    }

    async def run() -> None:
        async with opened(SQLiteStore(data_dir / "recordseal.sqlite3")) as store:
            panel = context(store)
            await import_panel_files(store.panel, data_dir, SecretBox(b"x" * 32))
            assert not (data_dir / "panel-signout-epoch").exists()
            assert (data_dir / "panel-signout-epoch.imported").read_text() == "3"
            # As before the upgrade: g=3 valid, lower or none signed out.
            assert await valid(panel, before) == {"legacy g=3", "acme g=3", "globex g=3"}
            assert await panel.current_epoch() == 3

            # acme's operator signs out everywhere: acme's sessions end, no others.
            assert await panel.sign_out_everywhere("acme") == 4
            fresh = {"acme new": tenant("acme", 4), "globex new": tenant("globex", 4)}
            cookies = {**before, **fresh, "legacy new": legacy(4)}
            assert await valid(panel, cookies) == {
                "legacy g=3",
                "globex g=3",
                "acme new",
                "globex new",
                "legacy new",
            }
            # globex signs out too: acme's new session is untouched.
            assert await panel.sign_out_everywhere("globex") == 5
            assert await valid(panel, cookies) == {"legacy g=3", "acme new", "legacy new"}

            # A legacy operator-admin signs out everywhere: every session ends.
            assert await panel.sign_out_everywhere(None) == 6
            assert await valid(panel, cookies) == set()
            issued = {"acme": tenant("acme", await panel.current_epoch()), "root": legacy(6)}
            assert await valid(panel, issued) == {"acme", "root"}

    asyncio.run(run())


def test_cookies_without_an_epoch_keep_verifying_until_the_first_sign_out(tmp_path: Path):
    async def run() -> None:
        async with opened(SQLiteStore(tmp_path / "recordseal.sqlite3")) as store:
            panel = context(store)
            cookies = {"legacy": legacy(None), "acme": tenant("acme", None)}
            assert await valid(panel, cookies) == {"legacy", "acme"}
            await panel.sign_out_everywhere("globex")
            assert await valid(panel, cookies) == {"legacy", "acme"}
            await panel.sign_out_everywhere("acme")
            assert await valid(panel, cookies) == {"legacy"}

    asyncio.run(run())
