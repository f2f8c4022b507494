"""Fixtures of the fleet suites: ``store`` runs a test once per Store backend.

Only SQLite exists in this branch; the PostgreSQL backend joins as a second entry of
``STORE_BACKENDS`` (its factory returning a store on a fresh schema), and every test that
takes ``store`` then runs on it too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from recordseal.storage.base import Store
from recordseal.storage.sqlite import SQLiteStore


def _sqlite(tmp_path: Path) -> Store:
    return SQLiteStore(tmp_path / "store.sqlite3")


STORE_BACKENDS: dict[str, Callable[[Path], Store]] = {"sqlite": _sqlite}


@pytest.fixture(params=sorted(STORE_BACKENDS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    """A fresh, not yet opened store of each backend: open it inside the test's event loop
    (``tests.fleet.support.using``), since a backend may bind to the loop that opened it."""
    return STORE_BACKENDS[request.param](tmp_path)
