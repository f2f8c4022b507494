"""Online verification (``POST /v1/verify``, ``/verify-record``) with the service's own key
directory and trust store.

The verifier (header keys, log keys, trust policy, in usable form) is built once, and rebuilt
only when keys or logs have changed: keys and logs appear while the service runs (a tenant's
first seal, a key registered by another process), so a bundle naming a header key or a log
the verifier does not know makes it read the key directory again, at most once per
``rebuild_interval`` seconds (bundles naming made-up keys cannot make every request read the
store), and rebuild when what it read differs. It also reads them again once
``refresh_interval`` seconds have passed, so a key marked compromised or retired while the
service runs (``recordseal keys revoke``, docs/operations.md "Keys") is applied within that
time.

Decoding and verifying run in worker threads, at most ``concurrency`` at a time: a large
bundle (docs/bundle.md, "Verifying online") never blocks the event loop, and the memory held
by bundles being verified stays bounded.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

import anyio
import anyio.to_thread

from recordseal.verify import (
    Bundle,
    BundleError,
    KeyDirectory,
    TrustStore,
    VerificationResult,
    Verifier,
    decode_bundle,
)
from recordseal.verify.verifier import malformed

P = ParamSpec("P")
T = TypeVar("T")

#: Reads the service's key directory and trust store (the store may have new keys and logs).
ContextSource = Callable[[], Awaitable[tuple[KeyDirectory | None, TrustStore | None]]]


class OnlineVerifier:
    def __init__(
        self,
        load: ContextSource,
        *,
        rebuild_interval: float = 1.0,
        refresh_interval: float = 10.0,
        concurrency: int = 2,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._load = load
        self._rebuild_interval = rebuild_interval
        self._refresh_interval = refresh_interval
        self._clock = clock
        self._limiter = anyio.CapacityLimiter(concurrency)
        self._lock = anyio.Lock()
        self._verifier: Verifier | None = None
        self._documents: tuple[KeyDirectory | None, TrustStore | None] | None = None
        self._checked_at = 0.0
        #: How many times the verifier was built (read by tests and operators).
        self.builds = 0

    async def verify(self, bundle_bytes: bytes) -> VerificationResult:
        """The verification result of a bundle; never raises on its content."""
        try:
            bundle = await self._in_thread(decode_bundle, bundle_bytes)
        except BundleError as error:
            return malformed(str(error))
        verifier = await self.verifier(bundle)
        return await self._in_thread(verifier.verify_decoded, bundle)

    async def verifier(self, bundle: Bundle | None = None) -> Verifier:
        """The current verifier, rebuilt first when ``bundle`` names what it does not know."""
        async with self._lock:
            current = self._verifier
            unknown = bundle is not None and current is not None and not current.knows(bundle)
            age = self._clock() - self._checked_at
            if (
                current is None
                or (unknown and age >= self._rebuild_interval)
                or age >= self._refresh_interval
            ):
                documents = await self._load()
                self._checked_at = self._clock()
                if current is None or documents != self._documents:
                    current = self._verifier = await self._in_thread(Verifier, *documents)
                    self._documents = documents
                    self.builds += 1
            return current

    async def _in_thread(self, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        call = functools.partial(function, *args, **kwargs)
        return await anyio.to_thread.run_sync(call, limiter=self._limiter)
