"""``tests/`` mirrors the package (tests/README.md): every directory under ``tests/`` that holds
test files is the path of a package of ``python/recordseal/`` (``tests/web/panel`` for
``recordseal/web/panel``) or lies in one of the suites named below, which test the product as a
whole rather than one package; the test files are in Python packages (an ``__init__.py`` in
each directory up to ``tests/``, so two files of one name in two directories never collide
under pytest's default import mode); ``tests/`` itself holds only shared helpers."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Suites that exercise the whole product, not one package, with why each stands alone.
SUITES = {
    "browser": "Playwright drives real Chromium through pages served by `recordseal serve`",
    "interop": "Go's sumdb and tlog packages check our checkpoints, proofs and tiles",
    "layers": "rules over the whole source tree (import contracts, error roots, this layout)",
    "verify_dist": "the verifier's own distribution, built and installed without Rust",
    "verify_js": "the browser's JavaScript verifier, under Node, against the Python one",
}


def misplaced(tests: Path, package: Path, suites: set[str]) -> list[str]:
    """Each breach of the layout under ``tests`` for the package at ``package``, in words."""
    problems: list[str] = []
    problems += [
        f"{path.relative_to(tests)}: a test file directly in tests/ (put it in the directory"
        " of the package it tests)"
        for path in sorted(tests.glob("test_*.py"))
    ]
    directories = sorted({path.parent for path in tests.rglob("test_*.py")} - {tests})
    for directory in directories:
        relative = directory.relative_to(tests)
        if relative.parts[0] not in suites and not (package / relative / "__init__.py").is_file():
            problems.append(
                f"tests/{relative.as_posix()}: no package recordseal/{relative.as_posix()} and"
                " not a named suite"
            )
        folder = directory
        while folder != tests:
            if not (folder / "__init__.py").is_file():
                problems.append(f"tests/{folder.relative_to(tests).as_posix()}: no __init__.py")
            folder = folder.parent
    return sorted(set(problems))


def test_every_test_directory_is_a_package_path_or_a_named_suite() -> None:
    assert misplaced(ROOT / "tests", ROOT / "python" / "recordseal", set(SUITES)) == []


def test_every_named_suite_exists_and_is_no_package() -> None:
    package = ROOT / "python" / "recordseal"
    for suite in SUITES:
        assert any((ROOT / "tests" / suite).rglob("test_*.py")), suite
        assert not (package / suite).exists(), f"{suite} is a package: it needs no naming"


def test_a_directory_off_the_mirror_is_named(tmp_path: Path) -> None:
    package = tmp_path / "python" / "recordseal"
    for name in ("web", "web/panel", "storage"):
        (package / name).mkdir(parents=True)
        (package / name / "__init__.py").touch()
    (package / "chain.py").touch()
    tests = tmp_path / "tests"
    files = {
        "__init__.py": "",
        "servers.py": "",
        "test_stray.py": "",
        "web/__init__.py": "",
        "web/test_routes.py": "",
        "web/panel/__init__.py": "",
        "web/panel/test_guards.py": "",
        "service/__init__.py": "",
        "service/test_records.py": "",
        "chain/__init__.py": "",
        "chain/test_chain.py": "",
        "storage/sqlite/test_opening.py": "",
        "storage/__init__.py": "",
        "browser/__init__.py": "",
        "browser/test_pages.py": "",
        "browser/pages/__init__.py": "",
        "browser/pages/test_more.py": "",
        "vectors/generate.py": "",
    }
    for name, text in files.items():
        (tests / name).parent.mkdir(parents=True, exist_ok=True)
        (tests / name).write_text(text)

    assert misplaced(tests, package, {"browser"}) == [
        "test_stray.py: a test file directly in tests/ (put it in the directory of the package"
        " it tests)",
        "tests/chain: no package recordseal/chain and not a named suite",
        "tests/service: no package recordseal/service and not a named suite",
        "tests/storage/sqlite: no __init__.py",
        "tests/storage/sqlite: no package recordseal/storage/sqlite and not a named suite",
    ]
