"""``PanelContext``: what the panel's handlers share, kept on ``app.state.panel``.

The application assembles one context in its lifespan (a tenant store, the cookie keyring,
the per-passkey role table) and stores it as ``app.state.panel``; handlers fetch it with
``panel_context(request)``. Sign-out-everywhere raises the epoch (``bump_epoch``), and every
cookie issued with a lower ``g=`` (or none) stops verifying. With ``epoch_file`` set (the app
sets ``<data_dir>/panel-signout-epoch``) the epoch survives restarts and is shared by every
worker process: each check re-reads the file when its modification time changed, and a bump
is written atomically under a lock. Without it, the epoch lives in this process only (tests).
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from litestar.connection import ASGIConnection

from recordseal.fleet.status import FleetStatus
from recordseal.panel.cookies import CookieKeyring
from recordseal.panel.sessions import Role
from recordseal.panel.tenants import FleetRef, TenantStore

METRIC_NAMES = (
    "forbidden_cross_tenant",
    "forbidden_role",
    "csrf_rejected",
    "not_found",
    "unauthenticated",
)


def _zero_metrics() -> dict[str, int]:
    return dict.fromkeys(METRIC_NAMES, 0)


@dataclass
class PanelContext:
    """The tenant store, cookie keyring and sign-out epoch of one panel process.

    ``passkey_roles`` maps a passkey (legacy) user id to its role; a user not listed is a
    viewer. ``metrics`` are in-process counters (see ``METRIC_NAMES``); ``clock`` answers
    seconds since the Unix epoch and is replaceable in tests.
    """

    tenants: TenantStore
    keyring: CookieKeyring
    signout_epoch: int = 0
    passkey_roles: dict[str, Role] = field(default_factory=dict)
    metrics: dict[str, int] = field(default_factory=_zero_metrics)
    clock: Callable[[], float] = time.time
    epoch_file: Path | None = None
    #: The organization page's fleet status (latest anchor, witnesses); None: not shown.
    fleet_status: Callable[[FleetRef], Awaitable[FleetStatus]] | None = None
    #: Root of the daily transparency log files; None: ``/transparency`` answers 404.
    transparency_root: Path | None = None
    _epoch_seen: tuple[int, int] | None = field(default=None, init=False, repr=False)

    def count(self, metric: str) -> None:
        self.metrics[metric] = self.metrics.get(metric, 0) + 1

    def current_epoch(self) -> int:
        """The sign-out-everywhere epoch in force (from the shared file when there is one)."""
        if self.epoch_file is None:
            return self.signout_epoch
        try:
            stat = self.epoch_file.stat()
        except FileNotFoundError:
            return self.signout_epoch
        # Every bump replaces the file, so a new inode marks a change even within the
        # file system's timestamp granularity.
        version = (stat.st_ino, stat.st_mtime_ns)
        if version != self._epoch_seen:
            self.signout_epoch = int(self.epoch_file.read_text() or "0")
            self._epoch_seen = version
        return self.signout_epoch

    def bump_epoch(self) -> int:
        """Sign out everywhere: raise the epoch by one, durably when it is file-backed."""
        if self.epoch_file is None:
            self.signout_epoch += 1
            return self.signout_epoch
        with open(self.epoch_file.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self._epoch_seen = None
            new = self.current_epoch() + 1
            temporary = self.epoch_file.with_suffix(".tmp")
            with open(temporary, "w") as out:
                out.write(str(new))
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, self.epoch_file)
        self.signout_epoch = new
        return new


def panel_context(request: ASGIConnection[Any, Any, Any, Any]) -> PanelContext:
    """``request.app.state.panel``; a RuntimeError names the missing wiring."""
    context = getattr(request.app.state, "panel", None)
    if not isinstance(context, PanelContext):
        raise RuntimeError("app.state.panel is not a PanelContext: set it in the app lifespan")
    return context
