"""Rate limits per client address, shared by the worker processes of one ``serve``.

Three scopes (docs/security.md, "Rate limits"):

- ``bearer``: failed bearer-token attempts on the record API. Only failures count, and a valid
  token is always served, so ingest with a good token is never throttled. Past the limit a
  failure answers 429 instead of 401.
- ``login``: every passkey ceremony request (``POST /login/...``), counted before any work
  (the route's :class:`RateLimited` guard).
- ``sso``: every sign-on start and callback (``/sso/<id>/start``, ``/sso/<id>/callback``),
  counted before any work (the same guard).

Each is a fixed window: ``limit`` requests per ``seconds`` per address, the window starting
at a multiple of ``seconds`` since the Unix epoch; a refusal carries ``Retry-After`` (the
seconds until the window ends). The counters live in a small SQLite file in the data
directory (``ratelimit.sqlite3``), which every worker of the host opens, so the limit holds
for the service as a whole and not per worker. They need no durability (``synchronous=OFF``):
a crash forgets at most the current window. Should the file fail, the limiter logs it and lets
requests through rather than refuse everyone.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from litestar.connection import ASGIConnection
from litestar.handlers import BaseRouteHandler

from recordseal.services.errors import TooManyRequests
from recordseal.settings import Rate, Settings
from recordseal.web.state import typed_state

log = logging.getLogger("recordseal.web")

Scope = Literal["bearer", "login", "sso"]
DATABASE = "ratelimit.sqlite3"
#: Purge windows that ended this many hits ago (every process, on its own count).
_PURGE_EVERY = 1000


class RateLimiter:
    """Fixed-window counters per (scope, address); in ``path`` (shared) or in memory."""

    def __init__(
        self,
        rates: Mapping[Scope, Rate | None],
        path: Path | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.rates = dict(rates)
        self._clock = clock
        self._lock = threading.Lock()
        self._memory: dict[tuple[str, str, int], int] = {}
        self._hits = 0
        self._db: sqlite3.Connection | None = None
        if path is not None:
            self._db = sqlite3.connect(
                path, timeout=5.0, isolation_level=None, check_same_thread=False
            )
            self._db.execute("PRAGMA synchronous=OFF")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS hits (scope TEXT NOT NULL, address TEXT NOT NULL,"
                " window INTEGER NOT NULL, count INTEGER NOT NULL,"
                " PRIMARY KEY (scope, address, window)) WITHOUT ROWID"
            )

    @classmethod
    def of(cls, settings: Settings) -> RateLimiter:
        """The service's limiter: the settings' rates, counters in the data directory."""
        rates: dict[Scope, Rate | None] = {
            "bearer": settings.rate_limit_failed_tokens,
            "login": settings.rate_limit_login,
            "sso": settings.rate_limit_sso,
        }
        return cls(rates, settings.data_dir / DATABASE)

    def hit(self, scope: Scope, address: str) -> int | None:
        """Count one request; None while within the limit, else the seconds to wait."""
        rate = self.rates.get(scope)
        if rate is None:
            return None
        now = self._clock()
        window = int(now // rate.seconds)
        try:
            count = self._count(scope, address, window)
        except sqlite3.Error as error:
            log.warning("rate_limit.store_unavailable", extra={"error": type(error).__name__})
            return None
        if count <= rate.limit:
            return None
        return max(1, int((window + 1) * rate.seconds - now + 0.999))

    def check(self, scope: Scope, address: str) -> None:
        """:meth:`hit`, raising ``TooManyRequests`` past the limit."""
        retry_after = self.hit(scope, address)
        if retry_after is not None:
            log.info(
                "rate_limit.refused",
                extra={"scope": scope, "address": address, "retry_after": retry_after},
            )
            raise TooManyRequests(
                "rate_limited",
                f"too many requests from this address; retry after {retry_after} s",
                retry_after,
            )

    def _count(self, scope: str, address: str, window: int) -> int:
        with self._lock:
            self._hits += 1
            purge = self._hits % _PURGE_EVERY == 0
            if self._db is None:
                key = (scope, address, window)
                self._memory[key] = self._memory.get(key, 0) + 1
                if purge:
                    self._memory = {
                        k: v for k, v in self._memory.items() if k[0] != scope or k[2] >= window
                    }
                return self._memory[key]
            row = self._db.execute(
                "INSERT INTO hits VALUES (?, ?, ?, 1) ON CONFLICT (scope, address, window)"
                " DO UPDATE SET count = count + 1 RETURNING count",
                (scope, address, window),
            ).fetchone()
            if purge:
                self._db.execute("DELETE FROM hits WHERE scope = ? AND window < ?", (scope, window))
            return int(row[0])

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def client_address(connection: ASGIConnection[Any, Any, Any, Any]) -> str:
    """The peer's address as the server saw it (no forwarded headers are trusted)."""
    return peer_address(connection.scope)


def peer_address(asgi_scope: Any) -> str:
    """:func:`client_address` from the request's ASGI scope."""
    client = asgi_scope.get("client")
    return client[0] if client else "unknown"


def limiter_of(connection: ASGIConnection[Any, Any, Any, Any]) -> RateLimiter:
    """``app.state.rate_limiter``; a RuntimeError names missing wiring (never: no limit)."""
    return typed_state(connection.app.state, "rate_limiter", RateLimiter)


def enforce(connection: ASGIConnection[Any, Any, Any, Any], scope: Scope) -> None:
    """Count this request in ``scope``; ``TooManyRequests`` past the limit."""
    limiter_of(connection).check(scope, client_address(connection))


@dataclass(frozen=True)
class RateLimited:
    """Guard: count every request of the route in ``scope``, before any work."""

    scope: Scope

    async def __call__(
        self, connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler
    ) -> None:
        enforce(connection, self.scope)
