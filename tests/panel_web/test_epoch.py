"""Sign-out-everywhere is shared by worker processes and survives a restart."""

from __future__ import annotations

import time
from pathlib import Path

from recordseal.panel.cookies import CookieKeyring, SigningKey
from recordseal.panel.sessions import LegacySession
from recordseal.panel.tenants import InMemoryTenantStore
from recordseal.web.panel.context import PanelContext


def context(epoch_file: Path) -> PanelContext:
    keyring = CookieKeyring(SigningKey("k1", b"k" * 32))
    return PanelContext(InMemoryTenantStore(), keyring, epoch_file=epoch_file)


def test_a_bump_in_one_worker_reaches_the_others_and_outlives_restarts(tmp_path: Path):
    epoch_file = tmp_path / "panel-signout-epoch"
    first, second = context(epoch_file), context(epoch_file)
    now = time.time()
    cookie = first.keyring.issue(LegacySession("op", int(now) + 600, epoch=first.current_epoch()))
    assert second.keyring.verify(cookie, now, epoch=second.current_epoch()) is not None

    assert first.bump_epoch() == 1
    assert second.current_epoch() == 1  # another process sees it
    assert second.keyring.verify(cookie, now, epoch=second.current_epoch()) is None
    assert context(epoch_file).current_epoch() == 1  # and so does a restarted one
    assert second.bump_epoch() == 2
    assert first.current_epoch() == 2


def test_without_a_file_the_epoch_is_in_memory():
    ctx = PanelContext(InMemoryTenantStore(), CookieKeyring(SigningKey("k1", b"k" * 32)))
    assert (ctx.current_epoch(), ctx.bump_epoch(), ctx.current_epoch()) == (0, 1, 1)
