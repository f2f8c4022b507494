"""The application's typed state (docs/layers.md, "The web layer").

The lifespan (``create_app``) builds every service once and keeps each part of the state as
one typed object: the services as an :class:`AppServices` on ``app.state.services``, the online
verifier (``app.state.verifier``), the panel's context, sign-on and passkey configuration. Route
handlers never read the state's untyped attributes: they take a part as a Litestar dependency
(``Provide(provide_services)`` and the like, declared by their controller) or, on the ingest
hot path where dependency injection would cost every request, through the typed accessor
:func:`services_of`. Either way a part that is missing or of the wrong type is a RuntimeError
naming the wiring, never an ``AttributeError`` deep in a handler.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from litestar.connection import ASGIConnection
from litestar.datastructures import State

from recordseal.ledger.continuity import Continuity
from recordseal.ledger.sealer import Sealer
from recordseal.services.disclosure import DisclosureService
from recordseal.services.listing import Listing
from recordseal.services.proofs import ProofService
from recordseal.services.records import RecordService
from recordseal.services.tiles import TileService
from recordseal.services.tokens import TokenService
from recordseal.services.verification import OnlineVerifier
from recordseal.storage.base import Store
from recordseal.verify.bundle import TrustStore

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class AppServices:
    store: Store
    sealer: Sealer
    tokens: TokenService
    records: RecordService
    proofs: ProofService
    disclosure: DisclosureService
    continuity: Continuity
    listing: Listing
    tiles: TileService


def typed_state(state: State, name: str, kind: type[T]) -> T:
    """``state.<name>``, checked to be a ``kind``; a RuntimeError names missing wiring."""
    found = state.get(name)
    if not isinstance(found, kind):
        raise RuntimeError(f"app.state.{name} holds no {kind.__name__}: set it in the lifespan")
    return found


def services_in(state: State) -> AppServices:
    """The services of an application's state; a RuntimeError names missing wiring."""
    return typed_state(state, "services", AppServices)


def services_of(connection: ASGIConnection[Any, Any, Any, Any]) -> AppServices:
    """The typed accessor of the hot path (no dependency injection)."""
    return services_in(connection.app.state)


# -- providers: what controllers declare as dependencies (``Provide(..., sync_to_thread=False)``)


def provide_services(state: State) -> AppServices:
    return services_in(state)


def provide_records(state: State) -> RecordService:
    return services_in(state).records


def provide_listing(state: State) -> Listing:
    return services_in(state).listing


def provide_disclosure(state: State) -> DisclosureService:
    return services_in(state).disclosure


def provide_proofs(state: State) -> ProofService:
    return services_in(state).proofs


def provide_tiles(state: State) -> TileService:
    return services_in(state).tiles


def provide_tokens(state: State) -> TokenService:
    return services_in(state).tokens


def provide_verifier(state: State) -> OnlineVerifier:
    """The online verifier (``app.state.verifier``), built from the key directory and trust
    store once and rebuilt only when keys or logs change (``services.verification``)."""
    return typed_state(state, "verifier", OnlineVerifier)


def provide_trust_store(state: State) -> TrustStore:
    """The trust store of the service's witnesses and authorities (``app.state.trust_store``):
    what ``POST /v1/verify`` verifies with and ``GET /v1/trust`` publishes."""
    return typed_state(state, "trust_store", TrustStore)
