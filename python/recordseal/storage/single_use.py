"""The panel's single-use rows, written once for both backends: pending WebAuthn ceremonies
and pending sso sign-ins (``PanelStore.put_ceremony`` / ``take_ceremony``,
``put_pending_login`` / ``take_pending_login``).

The rule: a put first deletes the rows already expired and never replaces a row of the same
key; a take deletes the row and answers it, so a second take of one key finds nothing. Each
table is described once (:class:`SingleUse`) and its SQL made here, with the placeholders of
the backend that runs it (``?`` for SQLite, ``$n`` for PostgreSQL: a ``Marks``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import Any, Generic, TypeVar

from recordseal.storage.panel import CeremonyRow, PendingLoginRow

R = TypeVar("R")

#: The placeholder of the n-th parameter (from 1) of a backend's SQL.
Marks = Callable[[int], str]


def sqlite_marks(n: int) -> str:
    return "?"


def postgres_marks(n: int) -> str:
    return f"${n}"


@dataclass(frozen=True, slots=True)
class SingleUse(Generic[R]):
    """A table of single-use rows: its key column, and the row type whose fields are its
    other columns (``expires_at`` among them), in the same order."""

    table: str
    key: str
    row: type[R]

    @property
    def columns(self) -> list[str]:
        return [f.name for f in fields(self.row)]  # type: ignore[arg-type]

    def purge(self, mark: Marks) -> str:
        """Delete the rows expired by a time (one parameter)."""
        return f"DELETE FROM {self.table} WHERE expires_at <= {mark(1)}"

    def put(self, mark: Marks) -> str:
        """Insert a row unless its key is taken (the parameters of :meth:`values`)."""
        names = [self.key, *self.columns]
        marks = ", ".join(mark(n) for n in range(1, len(names) + 1))
        return (
            f"INSERT INTO {self.table} ({', '.join(names)}) VALUES ({marks}) ON CONFLICT DO NOTHING"
        )

    def take(self, mark: Marks) -> str:
        """Delete the row of a key (one parameter), returning its columns."""
        return (
            f"DELETE FROM {self.table} WHERE {self.key} = {mark(1)}"
            f" RETURNING {', '.join(self.columns)}"
        )

    def values(self, key: object, row: R) -> tuple[Any, ...]:
        return (key, *(getattr(row, name) for name in self.columns))

    def read(self, values: Iterable[Any]) -> R:
        """The row of what :meth:`take` returned (blobs as ``bytes`` on both backends)."""
        return self.row(*(bytes(v) if isinstance(v, memoryview) else v for v in values))


CEREMONIES = SingleUse("panel_ceremonies", "state_id", CeremonyRow)
PENDING_LOGINS = SingleUse("panel_pending_logins", "nonce_hash", PendingLoginRow)


class SingleUseRows(ABC):
    """``PanelStore``'s methods of single-use rows, over a backend's :meth:`_put` and
    :meth:`_take` (each one transaction)."""

    async def put_ceremony(self, state_id: str, ceremony: CeremonyRow, now: float) -> None:
        await self._put(CEREMONIES, state_id, ceremony, now)

    async def take_ceremony(self, state_id: str) -> CeremonyRow | None:
        return await self._take(CEREMONIES, state_id)

    async def put_pending_login(
        self, nonce_hash: bytes, login: PendingLoginRow, now: float
    ) -> None:
        await self._put(PENDING_LOGINS, nonce_hash, login, now)

    async def take_pending_login(self, nonce_hash: bytes) -> PendingLoginRow | None:
        return await self._take(PENDING_LOGINS, nonce_hash)

    @abstractmethod
    async def _put(self, kind: SingleUse[R], key: object, row: R, now: float) -> None:
        """Purge ``kind``'s expired rows (by ``now``), then insert ``row`` unless ``key`` is
        taken."""

    @abstractmethod
    async def _take(self, kind: SingleUse[R], key: object) -> R | None:
        """Delete and answer the row of ``key``."""
