"""The command layer (docs/operations.md, "Commands by family"): ``cli.py`` only assembles
the families, each a module with ``register(commands)``; no function of the command layer is
long; the store-interface contract lists no exception, since the commands that open the store
live in ``ops`` above it."""

from __future__ import annotations

import ast
import importlib
import tomllib
from pathlib import Path

import recordseal
from recordseal import cli

PACKAGE = Path(recordseal.__file__).parent
ROOT = PACKAGE.parents[1]
#: The modules of the command layer: the entry point, ``ops``, and the command modules the
#: client, the verifier and the witness keep.
COMMAND_MODULES = [
    PACKAGE / "cli.py",
    *sorted((PACKAGE / "ops").glob("*.py")),
    *sorted((PACKAGE / "client").glob("*cli.py")),
    PACKAGE / "client" / "commands.py",
    PACKAGE / "verify" / "cli.py",
    PACKAGE / "witness" / "cli.py",
]
#: Modules of ``ops`` that are not a family: what the families share.
SHARED = {"__init__", "options", "stores", "service_calls", "key_rotation"}
LONGEST_FUNCTION = 60


def test_cli_py_only_assembles_the_families() -> None:
    assert len((PACKAGE / "cli.py").read_text().splitlines()) < 150
    families = {path.stem for path in (PACKAGE / "ops").glob("*.py") if path.stem not in SHARED}
    registered = {f.__module__.rsplit(".", 1)[-1] for f in cli.FAMILIES}
    assert families <= registered, f"ops modules not in FAMILIES: {families - registered}"
    for family in families:
        module = importlib.import_module(f"recordseal.ops.{family}")
        assert callable(getattr(module, "register", None)), f"ops/{family}.py has no register"


def test_no_function_of_the_command_layer_is_over_60_lines() -> None:
    long = []
    for path in COMMAND_MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > LONGEST_FUNCTION:
                    long.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name} {length}")
    assert long == []


def test_the_import_contracts_list_no_exception() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert [c["id"] for c in contracts["contracts"] if c.get("ignore_imports")] == []
