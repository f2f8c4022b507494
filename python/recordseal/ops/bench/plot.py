"""The picture of a run (``--plot FILE.svg``, or ``.png``): per operation, the native and the
reference time per call as bars on a log scale, and the ratio beside them. Drawn by
matplotlib, an optional dependency (``pip install 'recordseal[bench]'``; ``make setup``
installs it), loaded only when a picture is asked for."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from recordseal.ops.bench.errors import BenchError
from recordseal.ops.bench.results import Result
from recordseal.ops.bench.table import ratio

NATIVE, REFERENCE = "#1f6f8b", "#e07a2f"


def plot(result: Result, path: Path) -> None:
    """Write ``result``'s picture to ``path``; its format is the file's suffix (svg, png)."""
    if importlib.util.find_spec("matplotlib") is None:
        raise BenchError(
            "--plot draws with matplotlib, which is not installed:"
            " pip install 'recordseal[bench]' (make setup installs it)"
        )
    import matplotlib
    from matplotlib.figure import Figure

    operations = result.operations
    names = [operation.name for operation in operations]
    height = 0.38
    with matplotlib.rc_context(
        {"svg.hashsalt": "recordseal-bench", "svg.fonttype": "none", "font.size": 9}
    ):
        figure = Figure(figsize=(9.5, 0.32 * len(names) + 1.6), layout="constrained")
        axes = figure.add_subplot()
        rows = range(len(names))
        native = [operation.native.median for operation in operations]
        reference = [operation.reference.median for operation in operations]
        axes.barh([r - height / 2 for r in rows], native, height, label="native", color=NATIVE)
        axes.barh([r + height / 2 for r in rows], reference, height, label="reference",
                  color=REFERENCE)  # fmt: skip
        axes.set_xscale("log")
        axes.set_yticks(list(rows), names)
        axes.invert_yaxis()
        axes.set_xlabel("seconds per call (log scale; shorter is faster)")
        axes.grid(axis="x", which="major", alpha=0.3)
        right = max(reference) * 6
        axes.set_xlim(min(native) / 2, right * 4)
        for row, operation in zip(rows, operations, strict=True):
            axes.annotate(ratio(operation.ratio), (right, row), va="center", fontsize=8)
        machine, build = result.machine, result.build
        commit = build.commit[:12] if build.commit else "no commit"
        axes.set_title(
            f"recordseal bench, {result.started_at[:10]}: native ({build.extension_profile}) and"
            f" reference; the ratio on the right\n{machine.cpu}, {machine.usable_cores} usable"
            f" CPUs, {machine.python}, {commit}",
            fontsize=9,
        )
        figure.legend(loc="outside lower center", ncols=2)
        metadata = {"Date": None} if path.suffix == ".svg" else {}
        figure.savefig(path, metadata=metadata)
