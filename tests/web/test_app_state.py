"""The application's services are one typed object on ``app.state.services``."""

from __future__ import annotations

from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from recordseal.services.records import RecordService
from recordseal.settings import Settings
from recordseal.web.app import create_app
from recordseal.web.state import AppServices, services_in


def test_the_lifespan_provides_every_service_typed(tmp_path: Path) -> None:
    app = create_app(Settings(data_dir=tmp_path, seal_interval=0, transparency_interval=0))
    with TestClient(app):
        services = services_in(app.state)
        assert isinstance(services, AppServices)
        assert isinstance(services.records, RecordService)
        assert services.disclosure is not None and services.store is not None


def test_missing_wiring_is_named() -> None:
    with pytest.raises(RuntimeError, match=r"app\.state\.services"):
        services_in(Litestar().state)
