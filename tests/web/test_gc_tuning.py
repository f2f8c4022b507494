"""Serving processes run with the collector settings of recordseal.web.gc_tuning."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from recordseal.web.gc_tuning import THRESHOLDS


def test_the_asgi_entry_point_raises_the_collector_thresholds(tmp_path: Path) -> None:
    probe = "import gc, recordseal.web.asgi; print(*gc.get_threshold())"
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "RECORDSEAL_DATA_DIR": str(tmp_path / "data")},
    ).stdout
    assert tuple(int(n) for n in out.split()) == THRESHOLDS
    assert THRESHOLDS[0] > 700  # CPython's default for the youngest generation
