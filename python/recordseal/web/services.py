"""The application's services, typed: built once in the lifespan (``create_app``) and kept as
one :class:`AppServices` on ``app.state.services``; handlers and dependencies take them from
:func:`services_of` instead of reading untyped attributes of the state one by one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litestar.connection import ASGIConnection
from litestar.datastructures import State

from recordseal.ledger.sealer import Sealer
from recordseal.services.disclosure import DisclosureService
from recordseal.services.proofs import ProofService
from recordseal.services.records import RecordService
from recordseal.services.tokens import TokenService
from recordseal.storage.base import Store


@dataclass(frozen=True, slots=True)
class AppServices:
    store: Store
    sealer: Sealer
    tokens: TokenService
    records: RecordService
    proofs: ProofService
    disclosure: DisclosureService


def services_in(state: State) -> AppServices:
    """The services of an application's state; a RuntimeError names missing wiring."""
    found = state.get("services")
    if not isinstance(found, AppServices):
        raise RuntimeError("app.state.services is not an AppServices: set it in the lifespan")
    return found


def services_of(connection: ASGIConnection[Any, Any, Any, Any]) -> AppServices:
    return services_in(connection.app.state)
