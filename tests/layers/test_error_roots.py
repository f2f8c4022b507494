"""One exception root per surface (issue 31, item 2): every exception class a package defines
derives from the root of its surface (``SURFACES``): the service's packages from
``RecordServiceError``, the panel's from ``PanelError``, the API client's from
``ClientError``, the store's from ``StorageError``, the key material's from ``CryptoError``,
and so on down the layers; no exception class of the package stands outside a root; and a bare
``except Exception`` in the upper layers is an outermost boundary that says so in a comment."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import recordseal
from recordseal.client.errors import ClientError
from recordseal.core.backend import CoreUnavailable
from recordseal.core.errors import CommitError
from recordseal.crypto.errors import CryptoError
from recordseal.datadir import DataDirError
from recordseal.ledger.errors import RecordServiceError
from recordseal.merkle.log import LogGap
from recordseal.panel.errors import PanelError
from recordseal.settings import SettingsError
from recordseal.storage.errors import StorageError
from recordseal.tlog.errors import TlogError
from recordseal.verify.errors import VerificationError

PACKAGE = Path(recordseal.__file__).parent

#: Each surface: its root and the packages and modules whose errors derive from it. A root
#: lives at or below every layer that raises it (the import contract, pyproject.toml).
SURFACES: dict[type[Exception], tuple[str, ...]] = {
    RecordServiceError: (
        "recordseal.services",
        "recordseal.ledger",
        "recordseal.fleet",
        "recordseal.serve",
        "recordseal.ops",
        "recordseal.demo_witness",
    ),
    PanelError: ("recordseal.panel", "recordseal.web.panel"),
    ClientError: ("recordseal.client",),
    StorageError: ("recordseal.storage",),
    SettingsError: ("recordseal.settings",),
    VerificationError: ("recordseal.verify",),
    TlogError: ("recordseal.tlog",),
    CryptoError: ("recordseal.crypto",),
    CommitError: ("recordseal.core",),
    DataDirError: ("recordseal.datadir",),
}

#: Exception classes of the package under no root, each with why.
UNROOTED: dict[type[BaseException], str] = {
    # An AssertionError: a broken invariant of the insert transactions (positions are handed
    # out densely), never an answer to input; nothing catches it.
    LogGap: "an invariant, not a refusal",
    # A SystemExit: RECORDSEAL_CORE asks for a core that cannot run, and the process ends
    # where the core is first imported, with one line (core/backend.py).
    CoreUnavailable: "ends the process, as a refused setting does",
}


def _modules(name: str) -> list[str]:
    """``name`` and, for a package, its modules but the ``__main__`` ones (importing one runs
    its command)."""
    module = importlib.import_module(name)
    if not hasattr(module, "__path__"):
        return [name]
    return [name] + [
        info.name
        for info in pkgutil.walk_packages(module.__path__, prefix=f"{name}.")
        if not info.name.endswith(".__main__")
    ]


def _exceptions(name: str) -> list[type[BaseException]]:
    module = importlib.import_module(name)
    return [
        value
        for value in vars(module).values()
        if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == name
    ]


@pytest.mark.parametrize(
    ("root", "package"),
    [(root, package) for root, packages in SURFACES.items() for package in packages],
    ids=lambda value: value if isinstance(value, str) else value.__name__,
)
def test_every_error_of_a_surface_derives_from_its_root(
    root: type[Exception], package: str
) -> None:
    found = [error for name in _modules(package) for error in _exceptions(name)]
    assert found, f"no exception class found in {package}: the walk is broken"
    strays = [
        f"{e.__module__}.{e.__qualname__}"
        for e in found
        if not issubclass(e, root) and e not in UNROOTED
    ]
    assert strays == [], f"not under {root.__name__}"


def test_every_error_of_the_package_is_under_a_root() -> None:
    """A new exception class anywhere, under no root of ``SURFACES``, fails here."""
    found = [error for name in _modules("recordseal") for error in _exceptions(name)]
    assert len(found) > len(SURFACES), "the walk is broken"
    roots = tuple(SURFACES)
    strays = [
        f"{e.__module__}.{e.__qualname__}"
        for e in found
        if not issubclass(e, roots) and e not in UNROOTED
    ]
    assert strays == []


def test_the_roots_are_distinct() -> None:
    roots = list(SURFACES)
    for root in roots:
        assert [other for other in roots if other is not root and issubclass(root, other)] == []


#: Where a bare ``except Exception`` may stand only as an outermost boundary.
GUARDED = ("web", "services", "panel", "fleet", "client", "ledger", "ops", "serve.py", "cli.py")


def _sources() -> list[Path]:
    paths: list[Path] = []
    for part in GUARDED:
        path = PACKAGE / part
        paths.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return paths


def test_a_bare_except_exception_is_an_outermost_boundary_that_says_so() -> None:
    unexplained = []
    count = 0
    for path in _sources():
        lines = path.read_text().splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(node, ast.ExceptHandler) or node.type is None:
                continue
            caught = ast.unparse(node.type)
            if caught not in ("Exception", "BaseException"):
                continue
            count += 1
            # The comment sits on the lines just above the ``except`` (or on it).
            above = " ".join(lines[max(0, node.lineno - 4) : node.lineno]).lower()
            if "boundary" not in above:
                unexplained.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert count > 0, "no except Exception found: the scan is broken"
    assert unexplained == []
