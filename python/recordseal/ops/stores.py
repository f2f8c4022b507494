"""How a command reaches the store: the settings of its options, a data directory that must
exist, one store opened and closed around the work, results printed as JSON."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from recordseal.ledger.errors import RecordServiceError
from recordseal.settings import Settings, from_env
from recordseal.storage.backends import open_store
from recordseal.storage.base import Store

T = TypeVar("T")


class MissingDataDir(RecordServiceError):
    """The command would work in a data directory that does not exist (a typo, most often);
    ``path`` is that directory."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"data directory {path} does not exist (no service has run there);"
            " check --data-dir / RECORDSEAL_DATA_DIR, or pass --create-data-dir to create it"
        )
        self.path = path


def data_dir_for(settings: Settings, create: bool) -> None:
    """Refuse a SQLite data directory that does not exist, unless told to create it: a typo
    would otherwise give an empty database whose tokens and links work nowhere."""
    if settings.database_url or settings.data_dir.is_dir():
        return
    if not create:
        raise MissingDataDir(settings.data_dir)
    settings.data_dir.mkdir(parents=True)


def settings_of(args: argparse.Namespace, *, create: bool = False) -> Settings:
    """The settings of ``--data-dir`` and ``--database-url``, the data directory checked."""
    settings = from_env(data_dir=args.data_dir, database_url=args.database_url)
    data_dir_for(settings, create)
    return settings


def sqlite_settings(args: argparse.Namespace, refusal: str) -> Settings | None:
    """The settings of a command that works on a SQLite data directory only; None, once
    ``refusal`` is said, for a PostgreSQL store (a URL of another kind is refused as every
    command refuses it)."""
    settings = from_env(data_dir=args.data_dir, database_url=args.database_url)
    if not settings.database_url:
        return settings
    open_store(settings)
    print(f"recordseal: {refusal}", file=sys.stderr)
    return None


def keys_dir(settings: Settings) -> Path:
    return settings.data_dir / "keys"


def with_store(settings: Settings, work: Callable[[Store], Awaitable[T]]) -> T:
    """``work`` on the store the settings name, opened for it and closed after."""

    async def run() -> T:
        store = open_store(settings)
        await store.open()
        try:
            return await work(store)
        finally:
            await store.close()

    return asyncio.run(run())


def print_json(value: Any) -> None:
    print(json.dumps(value, indent=2))
