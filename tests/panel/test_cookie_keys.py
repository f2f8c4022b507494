"""Rotating the panel's cookie key (``recordseal keys rotate cookie``, docs/operations.md
"Keys"): every process follows the keys directory, signs with the newest key within the
reload interval, and verifies a cookie signed by an older key until its successor is older
than any session; the clocks are injected, nothing waits."""

from __future__ import annotations

import os
import time
from pathlib import Path

from recordseal.panel import cookie_keys
from recordseal.panel.cookie_keys import KEEP_FOR_SECONDS, RELOAD_SECONDS, DirectoryKeyring
from recordseal.panel.sessions import TenantSession

SESSION = TenantSession(
    subject="ops@acme", tenant_id="acme", org_id="org-1", exp=int(time.time()) + 3600
)


class Clock:
    def __init__(self) -> None:
        self.monotonic, self.wall = 0.0, time.time()

    def advance(self, seconds: float) -> None:
        self.monotonic += seconds
        self.wall += seconds


def keyring(keys: Path, clock: Clock) -> DirectoryKeyring:
    return DirectoryKeyring(keys, clock=lambda: clock.monotonic, wall=lambda: clock.wall)


def test_every_process_follows_a_rotation(tmp_path: Path) -> None:
    clock = Clock()
    one, two = keyring(tmp_path, clock), keyring(tmp_path, clock)  # two processes
    assert one.active_key_id == "panel-1"
    before = one.issue(SESSION)
    assert cookie_keys.rotate(tmp_path) == "panel-2"
    assert one.issue(SESSION).split(".")[1] == "panel-1"  # not re-read yet
    clock.advance(RELOAD_SECONDS)
    after = one.issue(SESSION)
    assert after.split(".")[1] == "panel-2"
    now = clock.wall
    for token in (before, after):
        assert two.verify(token, now) == SESSION  # the other process verifies both
    assert two.active_key_id == "panel-2"


def test_an_older_key_verifies_until_its_successor_outlives_every_session(tmp_path: Path) -> None:
    clock = Clock()
    ring = keyring(tmp_path, clock)
    old = ring.issue(SESSION)
    cookie_keys.rotate(tmp_path)
    clock.advance(RELOAD_SECONDS)
    assert ring.verify(old, clock.wall) == SESSION
    assert ring.key_ids == {"panel-1", "panel-2"}
    successor = tmp_path / "panel-cookie-2.key"
    made = successor.stat().st_mtime
    os.utime(successor, (made - KEEP_FOR_SECONDS, made - KEEP_FOR_SECONDS))
    clock.advance(RELOAD_SECONDS)
    assert ring.verify(old, clock.wall) is None  # panel-1 is gone: it can sign nothing alive
    assert ring.key_ids == {"panel-2"}


def test_a_new_keys_directory_gets_the_first_key(tmp_path: Path) -> None:
    ring = keyring(tmp_path / "keys", Clock())
    assert ring.key_ids == {"panel-1"}
    assert (tmp_path / "keys" / "panel-cookie.key").stat().st_mode & 0o777 == 0o600
