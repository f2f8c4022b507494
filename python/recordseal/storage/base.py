"""The store the services use: one part per concern, each its own interface.

``store.records`` (:class:`RecordStore`), ``store.logs`` (:class:`LogStore`),
``store.tokens`` (:class:`TokenStore`), ``store.hierarchy`` (:class:`HierarchyStore`: tenants,
organizations, fleet references), ``store.activity`` (:class:`ActivityStore`, the live
view's rows) and ``store.panel`` (:class:`PanelStore`, the operator
panel's state) share one database and its connections; a service
takes the parts it needs. Backends: SQLite (``sqlite.py``, the embedded default) and
PostgreSQL (``postgres.py``, for production and several service processes on one database);
each holds the SQL of every part, while the rules those parts apply live above them
(``storage.placing`` for appends, ``recordseal.merkle`` for log growth).
"""

from __future__ import annotations

from typing import Protocol

from recordseal.storage.activity import ActivityStore
from recordseal.storage.hierarchy import HierarchyStore
from recordseal.storage.logs import LogStore
from recordseal.storage.panel import PanelStore
from recordseal.storage.records import RecordStore
from recordseal.storage.tokens import TokenStore


class Store(Protocol):
    @property
    def records(self) -> RecordStore: ...

    @property
    def logs(self) -> LogStore: ...

    @property
    def tokens(self) -> TokenStore: ...

    @property
    def hierarchy(self) -> HierarchyStore:
        """Tenants, organizations and fleet references (``storage/hierarchy.py``)."""
        ...

    @property
    def activity(self) -> ActivityStore:
        """What the operator's live view shows (``storage/activity.py``)."""
        ...

    @property
    def panel(self) -> PanelStore:
        """The operator panel's state (``storage/panel.py``)."""
        ...

    async def open(self) -> None:
        """Connect, and bring the schema to the latest migration."""
        ...

    async def close(self) -> None: ...
