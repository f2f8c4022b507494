"""Where a database's schema stands against the migrations this code knows.

Both backends keep applied migration numbers in ``schema_version``. A database whose newest
number is higher than the number of migrations of this code was migrated by a newer recordseal:
opening it is refused (:class:`SchemaTooNew`) before anything is read or written, since this
code would misread tables it does not know. ``recordseal migrate --status`` reports the state
without changing anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from recordseal.storage.errors import StorageError

State = Literal["up_to_date", "behind", "ahead", "absent"]


@dataclass(frozen=True, slots=True)
class SchemaStatus:
    """``current``: the database's newest migration (0: none); ``latest``: this code's."""

    backend: Literal["sqlite", "postgresql"]
    current: int
    latest: int

    @property
    def state(self) -> State:
        if self.current == 0:
            return "absent"
        if self.current > self.latest:
            return "ahead"
        return "up_to_date" if self.current == self.latest else "behind"

    @property
    def pending(self) -> int:
        return max(0, self.latest - self.current)

    def describe(self) -> str:
        where = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}[self.backend]
        if self.state == "absent":
            return f"{where}: no schema yet; {self.latest} migrations to apply"
        if self.state == "ahead":
            return str(SchemaTooNew(self.current, self.latest))
        if self.state == "behind":
            return (
                f"{where}: schema version {self.current} of {self.latest};"
                f" {self.pending} migration{'s' if self.pending > 1 else ''} to apply"
            )
        return f"{where}: schema version {self.current} of {self.latest}, up to date"


class SchemaTooNew(StorageError, RuntimeError):
    """The database was migrated by a newer recordseal than this one."""

    def __init__(self, current: int, latest: int) -> None:
        super().__init__(
            f"the database schema is version {current}, newer than this recordseal knows"
            f" ({latest}): upgrade recordseal; nothing was changed"
        )
        self.current = current
        self.latest = latest


def refuse_newer(current: int, latest: int) -> None:
    """Raise :class:`SchemaTooNew` when ``current`` is beyond ``latest``."""
    if current > latest:
        raise SchemaTooNew(current, latest)
