"""The Makefile's dependency graph (issue 33 item 9): `make run` builds nothing when nothing
changed, and rebuilds the native extension when its sources or the package's metadata did.

Checked with `make -n` and `make -q` in a copy of the files the graph reads, so nothing is
built or installed: a real `maturin develop` would replace the shared virtualenv's package.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.servers import ROOT

#: `make test` runs this suite, so make is always here; its absence fails the tests, loudly.
MAKE = shutil.which("make")
BUILD_COMMAND = "maturin develop"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """The graph's inputs, all older than the virtualenv's stamps: a tree just built."""
    for name in ("Makefile", "Cargo.toml", "Cargo.lock", "pyproject.toml"):
        shutil.copy2(ROOT / name, tmp_path / name)
    shutil.copytree(
        ROOT / "rust-core", tmp_path / "rust-core", ignore=shutil.ignore_patterns("target")
    )
    (tmp_path / ".venv").mkdir()
    for stamp in (".deps", ".built"):
        (tmp_path / ".venv" / stamp).touch()
    sources = [p for p in tmp_path.rglob("*") if p.is_file() and ".venv" not in p.parts]
    for path in sources:
        os.utime(path, (1_000_000_000, 1_000_000_000))
    os.utime(tmp_path / ".venv" / ".deps", (1_000_000_100, 1_000_000_100))
    os.utime(tmp_path / ".venv" / ".built", (1_000_000_200, 1_000_000_200))
    return tmp_path


def _make(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert MAKE is not None, "make is not installed: `make system` installs it"
    return subprocess.run(
        [MAKE, "--no-print-directory", "-C", str(tree), *args],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def _newer(path: Path) -> None:
    os.utime(path, (2_000_000_000, 2_000_000_000))


def test_nothing_changed_nothing_is_built(tree: Path) -> None:
    assert _make(tree, "-q", ".venv/.built").returncode == 0  # up to date
    planned = _make(tree, "-n", "run").stdout
    assert BUILD_COMMAND not in planned
    assert "recordseal serve" in planned  # what run does is all it does


@pytest.mark.parametrize(
    "changed",
    ["rust-core/src/lib.rs", "rust-core/src/python.rs", "rust-core/Cargo.toml", "Cargo.toml",
     "Cargo.lock", "pyproject.toml", "rust-core/data/iso4217.txt"],
)  # fmt: skip
def test_a_changed_source_is_built_before_run(tree: Path, changed: str) -> None:
    _newer(tree / changed)
    assert _make(tree, "-q", ".venv/.built").returncode == 1  # out of date
    planned = _make(tree, "-n", "run").stdout.splitlines()
    assert [BUILD_COMMAND in line for line in planned].index(True) < len(planned) - 1
    assert "recordseal serve" in planned[-1]


def test_a_new_rust_file_is_a_source(tree: Path) -> None:
    added = tree / "rust-core" / "src" / "added.rs"
    added.write_text("// new\n")
    _newer(added)
    assert BUILD_COMMAND in _make(tree, "-n", "build").stdout


def test_python_sources_need_no_build(tree: Path) -> None:
    """maturin develop installs python/ in place: editing it needs no rebuild."""
    (tree / "python" / "recordseal").mkdir(parents=True)
    (tree / "python" / "recordseal" / "serve.py").write_text("")
    _newer(tree / "python" / "recordseal" / "serve.py")
    assert BUILD_COMMAND not in _make(tree, "-n", "run").stdout


def test_the_build_stamps_the_tree_it_built(tree: Path) -> None:
    _newer(tree / "rust-core" / "src" / "lib.rs")
    planned = _make(tree, "-n", "build").stdout
    assert "touch .venv/.built" in planned


def test_bench_answers_quickly_and_bench_all_runs_the_heavy_suites(tree: Path) -> None:
    """`make bench` is `recordseal bench` alone (about a minute, docs/performance.md); the
    pytest-benchmark suites, whose live-view and listing benchmarks write millions of rows,
    and cargo bench run under `make bench-all`."""
    bench = _make(tree, "-n", "bench").stdout.splitlines()
    assert bench == [".venv/bin/recordseal bench "]
    heavy = _make(tree, "-n", "bench-all").stdout
    assert ".venv/bin/recordseal bench" in heavy
    assert ".venv/bin/pytest benchmarks" in heavy and "cargo bench" in heavy
    assert "--service" in _make(tree, "-n", "bench-service").stdout
    baseline = _make(tree, "-n", "bench-baseline").stdout
    assert "--json docs/benchmarks/baseline.json --plot docs/benchmarks/core.svg" in baseline


def test_load_targets_runs_the_four_target_shapes_in_rounds_outside_the_tree(tree: Path) -> None:
    """`make load-targets` is the load script on the four shapes the ingest targets are set on
    (docs/performance.md), three interleaved rounds of 10 s each, every round's figures kept as
    JSON in LOAD_OUT: under /tmp unless told, never in the tree."""
    planned = _make(tree, "-n", "load-targets").stdout.splitlines()
    runs = [line.split() for line in planned if "benchmarks/load_ingest.py" in line]
    shapes = {
        "sqlite-batch": ["--batch", "100", "--connections", "8", "--subjects", "997"],
        "sqlite-single": ["--batch", "0", "--connections", "64"],
        "postgres-batch": ["--backend", "postgres", "--batch", "100", "--connections", "8",
                           "--subjects", "997"],
        "postgres-single": ["--backend", "postgres", "--batch", "0", "--connections", "64"],
    }  # fmt: skip
    assert len(runs) == len(shapes)
    for run, (name, shape) in zip(runs, shapes.items(), strict=True):
        assert run[:2] == [".venv/bin/python", "benchmarks/load_ingest.py"]
        options = run[2:]
        assert options[:4] == ["--seconds", "10", "--rounds", "3"]
        assert options[4:-2] == shape
        assert options[-2:] == ["--json", f"/tmp/recordseal-load-targets/{name}.json"]
    assert "mkdir -p /tmp/recordseal-load-targets" in planned
    elsewhere = _make(tree, "-n", "load-targets", "LOAD_OUT=/tmp/elsewhere").stdout
    assert elsewhere.count("--json /tmp/elsewhere/") == len(shapes)
