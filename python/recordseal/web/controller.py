"""``DomainController``: the base of the service's per-domain controllers (docs/layers.md,
"The web layer")."""

from __future__ import annotations

from litestar import Controller
from litestar.handlers import BaseRouteHandler


class DomainController(Controller):
    """A Litestar ``Controller`` whose routes are registered in the order they are written.

    Litestar registers a controller's handlers sorted by name; registered in source order
    instead, the OpenAPI document lists the operations of a module as the module reads
    (and as they were listed before the handlers were grouped into controllers).

    A subclass declares its ``dependencies`` and ``guards`` as class attributes, as Litestar
    reads them (hence ``# noqa: RUF012``: Litestar copies them, nothing mutates them).
    """

    def get_route_handlers(self) -> list[BaseRouteHandler]:
        return sorted(super().get_route_handlers(), key=_source_line)


def _source_line(handler: BaseRouteHandler) -> int:
    function = getattr(handler.fn, "__func__", handler.fn)
    return int(function.__code__.co_firstlineno)
