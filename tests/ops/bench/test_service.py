"""``recordseal bench --service``: a service of each core (``RECORDSEAL_CORE``), started for
real and driven by wrk on both ingest routes in the same run; both rates and their ratio are
printed and saved. Quick mode: two rounds of a second; the rates themselves are not judged."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from recordseal.ops.bench import results


def test_both_cores_serve_the_same_load_and_the_ratio_is_printed(tmp_path: Path) -> None:
    saved = tmp_path / "service.json"
    done = subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "bench", "--service", "--quick",
         "--json", str(saved)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    result = results.decode(saved.read_bytes())
    assert result.operations == []
    assert [(r.route, r.records_per_request) for r in result.service] == [
        ("/v1/records", 1),
        ("/v1/records:batch", 100),
    ]
    for route in result.service:
        for rates in (route.native, route.reference):
            assert len(rates.samples) == 2 and all(rate > 0 for rate in rates.samples)
            assert rates.non_2xx == 0  # every record of the load was stored
        assert route.ratio == route.native.median / route.reference.median
        assert route.route in done.stdout
    assert "native rec/s" in done.stdout and "reference rec/s" in done.stdout
