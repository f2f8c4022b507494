"""Shared fixtures: ``impl`` runs a test once per implementation of the commitment core;
``store_settings`` and ``store`` once per storage backend (SQLite, PostgreSQL)."""

from __future__ import annotations

import importlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis.configuration import set_hypothesis_home_dir

from recordseal.settings import Settings
from recordseal.storage.backends import open_store
from recordseal.storage.base import Store
from tests.pg_cluster import Cluster

IMPLEMENTATIONS = ("native", "reference")

#: Tests write only into temporary directories: Hypothesis keeps its example database and its
#: caches in one made for this run, not in ./.hypothesis of the checkout (pytest's own cache is
#: off: ``-p no:cacheprovider`` in pyproject.toml).
HYPOTHESIS_HOME = Path(tempfile.mkdtemp(prefix="recordseal-hypothesis-"))
set_hypothesis_home_dir(HYPOTHESIS_HOME)


def pytest_sessionfinish(session: pytest.Session) -> None:
    shutil.rmtree(HYPOTHESIS_HOME, ignore_errors=True)


@pytest.fixture(params=IMPLEMENTATIONS)
def impl(request: pytest.FixtureRequest) -> ModuleType:
    """``recordseal.core.native`` or ``recordseal.core.reference``; a missing build fails."""
    return importlib.import_module(f"recordseal.core.{request.param}")


# --- storage backends ---------------------------------------------------------------------

BACKENDS = ("sqlite", "postgres")


@pytest.fixture(scope="session")
def postgres() -> Iterator[Cluster]:
    """A PostgreSQL cluster for the whole run, started on first use."""
    cluster = Cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def journal_server() -> Iterator[Cluster]:
    """A second PostgreSQL cluster, another server than ``postgres``: where a continuity
    journal lives when it is a database (docs/continuity.md)."""
    cluster = Cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(params=BACKENDS)
def store_settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """Settings of a fresh data directory, once per backend: SQLite in the directory, or a
    new schema of the test cluster's PostgreSQL database."""
    if request.param == "postgres":
        cluster: Cluster = request.getfixturevalue("postgres")
        return Settings(data_dir=tmp_path, database_url=cluster.url())
    return Settings(data_dir=tmp_path)


@pytest.fixture
def store(store_settings: Settings) -> Store:
    """A store of each backend, not open: a test opens it in its own event loop
    (``async with opened(store)``, tests/backends.py)."""
    return open_store(store_settings)
