"""Fixtures of the ledger tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from recordseal.settings import Settings
from tests.continuity_support import Backup


@pytest.fixture
def backup(store_settings: Settings, request: pytest.FixtureRequest, tmp_path: Path) -> Backup:
    """An operator's backup of the store of ``store_settings`` (each backend), not yet taken."""
    postgres = request.getfixturevalue("postgres") if store_settings.database_url else None
    return Backup(store_settings, postgres, tmp_path / "backup")
