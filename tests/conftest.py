"""Shared fixtures: ``impl`` runs a test once per implementation of the commitment core."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

# `make build` runs `maturin develop --skip-install`, which builds the extension in place, so the
# source tree is the package under test.
_SOURCE = str(Path(__file__).resolve().parents[1] / "python")
if _SOURCE not in sys.path:
    sys.path.insert(0, _SOURCE)

IMPLEMENTATIONS = ("native", "reference")


@pytest.fixture(params=IMPLEMENTATIONS)
def impl(request: pytest.FixtureRequest) -> ModuleType:
    """``recordseal.core.native`` or ``recordseal.core.reference``; a missing build fails."""
    return importlib.import_module(f"recordseal.core.{request.param}")
