"""The import contract of ``pyproject.toml`` (docs/layers.md), run by import-linter as
``make test`` runs it: it holds for the code, it breaks on a forbidden edge, and the verifier
loads nothing that needs a network or a server."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
CONTRACTS = ("layers", "offline-verifier", "formats-only", "store-interface", "acyclic")


def lint_imports(python_path: Path, *contracts: str) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with the project's contracts over the package under ``python_path``."""
    selected = [arg for contract in contracts for arg in ("--contract", contract)]
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(ROOT / "pyproject.toml"), "--no-cache", *selected],
        cwd=python_path,
        env={**os.environ, "PYTHONPATH": str(python_path)},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_the_code_keeps_every_contract() -> None:
    result = lint_imports(ROOT / "python")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in result.stdout


@pytest.mark.parametrize(
    ("module", "added", "contract", "evidence"),
    [
        # The verifier would need an HTTP client.
        ("verify/encoding.py", "import httpx", "offline-verifier", "recordseal.verify.encoding"),
        # ... nor the witness server, nor a network client.
        (
            "verify/encoding.py",
            "import recordseal.network.witness_client",
            "offline-verifier",
            "recordseal.verify.encoding -> recordseal.network.witness_client",
        ),
        # The formats would need an HTTP client.
        ("tlog/note.py", "import httpx", "formats-only", "recordseal.tlog.note -> httpx"),
        # A lower layer would import a higher one (storage -> services).
        (
            "storage/rows.py",
            "import recordseal.services.errors",
            "layers",
            "recordseal.storage.rows -> recordseal.services.errors",
        ),
        # Two modules of one package would import each other (bundle already imports
        # encoding).
        ("verify/encoding.py", "from recordseal.verify import bundle", "acyclic", ".encoding"),
        # A service would talk to a backend directly.
        (
            "services/retention.py",
            "import recordseal.storage.sqlite",
            "store-interface",
            "recordseal.services.retention -> recordseal.storage.sqlite",
        ),
        # ... or to any module of a backend's package.
        (
            "services/retention.py",
            "import recordseal.storage.postgres.writer",
            "store-interface",
            "recordseal.services.retention -> recordseal.storage.postgres.writer",
        ),
    ],
)
def test_a_forbidden_edge_breaks_its_contract(
    tmp_path: Path, module: str, added: str, contract: str, evidence: str
) -> None:
    package = tmp_path / "recordseal"
    shutil.copytree(ROOT / "python" / "recordseal", package, ignore=shutil.ignore_patterns("*.so"))
    path = package / module
    path.write_text(path.read_text() + f"\n{added}  # noqa\n")
    result = lint_imports(tmp_path, contract)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "BROKEN" in result.stdout and evidence in result.stdout, result.stdout


def test_importing_the_verifier_loads_no_network_or_server_library() -> None:
    offline = ("httpx", "litestar", "granian", "asyncpg", "jinja2", "anyio", "sqlite3")
    probe = (
        "import sys, recordseal.verify\n"
        f"print(sorted(m for m in {offline!r} if m in sys.modules))\n"
        "print(sorted(m for m in sys.modules if m.startswith('recordseal.')"
        " and m.split('.')[1] in ('storage', 'web', 'services', 'ledger', 'panel', 'fleet')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.splitlines() == ["[]", "[]"]
