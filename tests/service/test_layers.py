"""Dependencies point one way: the services and the ledger know the store's interface only,
never a backend, and nothing below the web layer imports it."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "recordseal"
BACKENDS = ("recordseal.storage.sqlite", "recordseal.storage.postgres", "asyncpg", "sqlite3")


def imports_of(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def modules(*folders: str) -> list[Path]:
    return [path for folder in folders for path in sorted((PACKAGE / folder).rglob("*.py"))]


def test_services_and_ledger_know_no_storage_backend():
    for path in modules("services", "ledger"):
        for name in imports_of(path):
            assert not name.startswith(BACKENDS), f"{path.relative_to(PACKAGE)} imports {name}"


def test_nothing_below_the_web_layer_imports_it():
    for path in modules("services", "ledger", "storage", "core", "crypto", "verify", "client"):
        for name in imports_of(path):
            assert not name.startswith("recordseal.web"), (
                f"{path.relative_to(PACKAGE)} imports {name}"
            )
