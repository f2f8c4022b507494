"""The startup hint names the command that works from where serve was started (issue 33
item 9): `.venv/bin/recordseal` after `make run`, `recordseal` when that is on PATH."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from recordseal.invocation import command_path


@pytest.fixture
def venv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with a virtualenv holding the recordseal script, as the working
    directory, and a PATH without that virtualenv."""
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("python", "recordseal"):
        (bin_dir / name).write_text("#!/bin/sh\n")
        (bin_dir / name).chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/nonexistent")
    return bin_dir


def test_the_script_of_the_repository_s_virtualenv(venv: Path) -> None:
    """`make run` runs .venv/bin/recordseal, which is not on PATH: the hint says so."""
    python = str(venv / "python")
    assert command_path(".venv/bin/recordseal", python) == ".venv/bin/recordseal"
    assert command_path(str(venv / "recordseal"), python) == ".venv/bin/recordseal"


def test_python_m_names_the_script_beside_the_interpreter(venv: Path) -> None:
    cli = "/anywhere/python/recordseal/cli.py"
    assert command_path(cli, str(venv / "python")) == ".venv/bin/recordseal"


def test_recordseal_on_path_is_named_as_itself(venv: Path) -> None:
    os.environ["PATH"] = str(venv)
    assert command_path(str(venv / "recordseal"), str(venv / "python")) == "recordseal"


def test_outside_the_working_directory_the_path_is_absolute(
    venv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert command_path(str(venv / "recordseal"), str(venv / "python")) == str(venv / "recordseal")


def test_without_a_script_python_m_recordseal_cli(tmp_path: Path) -> None:
    python = tmp_path / "bin" / "python3"
    assert command_path("/src/recordseal/cli.py", str(python)) == f"{python} -m recordseal.cli"
