"""Shared fixtures: ``impl`` runs a test once per implementation of the commitment core."""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest

IMPLEMENTATIONS = ("native", "reference")


@pytest.fixture(params=IMPLEMENTATIONS)
def impl(request: pytest.FixtureRequest) -> ModuleType:
    """``recordseal.core.native`` or ``recordseal.core.reference``; a missing build fails."""
    return importlib.import_module(f"recordseal.core.{request.param}")
