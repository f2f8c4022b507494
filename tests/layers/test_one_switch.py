"""One native-or-reference switch: ``recordseal/core/backend.py`` alone tries the native
extension and falls back when it is absent; every other module asks it (``extension``,
``BACKEND``). A second ``except ImportError`` or ``except ModuleNotFoundError`` anywhere in the
package fails here, as does a backend that hides a broken build."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import recordseal
from recordseal.core import backend

PACKAGE = Path(recordseal.__file__).resolve().parent
IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}


def caught(handler: ast.ExceptHandler) -> set[str]:
    """The names of the exception classes ``handler`` catches (``except (A, b.C)``: A, C)."""
    if handler.type is None:
        return {"BaseException"}
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return {t.attr if isinstance(t, ast.Attribute) else getattr(t, "id", "") for t in types}


def imports_native(statements: list[ast.stmt]) -> bool:
    """Whether ``statements`` import the native extension (``recordseal._native``)."""
    for node in (inner for statement in statements for inner in ast.walk(statement)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("_native"):
            return True
        if isinstance(node, ast.Import) and any(a.name.endswith("_native") for a in node.names):
            return True
    return False


def import_error_handlers(tree: ast.AST) -> Iterator[int]:
    """The lines of the handlers in ``tree`` that catch a failed import: any that names
    ImportError or ModuleNotFoundError, and a catch-all around an import of the extension."""
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Try, ast.TryStar)):
            continue
        broad = {"Exception", "BaseException"} if imports_native(node.body) else set()
        for handler in node.handlers:
            if caught(handler) & (IMPORT_ERRORS | broad):
                yield handler.lineno


def switches() -> list[tuple[str, int]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        where = path.relative_to(PACKAGE).as_posix()
        found += [(where, line) for line in import_error_handlers(tree)]
    return found


def test_only_the_backend_catches_a_failed_import() -> None:
    found = switches()
    assert [where for where, _ in found] == ["core/backend.py"], found


def test_the_check_sees_a_second_switch() -> None:
    """What the rule exists to refuse: a module trying the extension itself."""
    second = ast.parse(
        "try:\n"
        "    from recordseal._native import grow_log\n"
        "except (ModuleNotFoundError, AttributeError):\n"
        "    grow_log = None\n"
        "try:\n"
        "    import recordseal._native\n"
        "except builtins.ImportError:\n"
        "    pass\n"
        "try:\n"
        "    from ._native import Ed25519Signer\n"
        "except Exception:\n"
        "    Ed25519Signer = None\n"
        "try:\n"
        "    cleanup()\n"
        "except BaseException:\n"  # a catch-all that imports nothing is not a switch
        "    raise\n"
    )
    assert list(import_error_handlers(second)) == [3, 7, 11]


def test_the_backend_is_native_here() -> None:
    """The extension is built in this checkout (the suite's other native tests need it)."""
    import recordseal._native

    assert backend.extension is recordseal._native
    assert backend.BACKEND == recordseal.core.BACKEND == "native"


BLOCKED = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "recordseal._native":
            raise {error}
sys.meta_path.insert(0, Block())
from recordseal.core import backend
print(backend.BACKEND, backend.extension)
"""


def run_blocked(error: str) -> subprocess.CompletedProcess[str]:
    code = BLOCKED.format(error=error)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_an_absent_extension_falls_back_to_the_reference() -> None:
    done = run_blocked('ModuleNotFoundError("absent", name=name)')
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["reference", "None"]


@pytest.mark.parametrize(
    "error",
    [
        # The extension is there but needs a library that is not.
        'ModuleNotFoundError("No module named \'libdep\'", name="libdep")',
        # A stale build: a symbol the interpreter does not have.
        'ImportError("undefined symbol: PyFoo", name=name)',
    ],
    ids=["missing-dependency", "stale-build"],
)
def test_a_broken_build_fails_loudly(error: str) -> None:
    done = run_blocked(error)
    assert done.returncode == 1
    assert "Traceback" in done.stderr and error.split("(")[0] in done.stderr
