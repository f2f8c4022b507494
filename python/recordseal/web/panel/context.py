"""``PanelContext``: what the panel's handlers share, kept on ``app.state.panel``.

The application assembles one context in its lifespan (a tenant store, the cookie keyring,
the per-passkey role table) and stores it as ``app.state.panel``; handlers fetch it with
``panel_context(request)``. ``signout_epoch`` is mutable: sign-out-everywhere raises it, and
every cookie issued with a lower ``g=`` (or none) stops verifying. It lives in process memory:
a restart resets it, and several worker processes each keep their own.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from litestar.connection import ASGIConnection

from recordseal.panel.cookies import CookieKeyring
from recordseal.panel.sessions import Role
from recordseal.panel.tenants import TenantStore

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

    def count(self, metric: str) -> None:
        self.metrics[metric] = self.metrics.get(metric, 0) + 1


def panel_context(request: ASGIConnection[Any, Any, Any, Any]) -> PanelContext:
    """``request.app.state.panel``; a RuntimeError names the missing wiring."""
    context = getattr(request.app.state, "panel", None)
    if not isinstance(context, PanelContext):
        raise RuntimeError("app.state.panel is not a PanelContext: set it in the app lifespan")
    return context
