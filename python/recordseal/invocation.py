"""How a person runs recordseal from where this process runs: the command and the paths to
type, for the hints the service prints (``serve``'s start) and shows (the sign-in page of an
install without passkeys)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def this_command() -> str:
    """:func:`command_path` of this process (workers inherit ``serve``'s ``sys.argv``)."""
    return command_path(sys.argv[0], sys.executable)


def command_path(argv0: str, executable: str) -> str:
    """How a person runs recordseal as this process was run: ``recordseal`` when that is
    the command on PATH, else the script's path (``.venv/bin/recordseal`` after ``make
    run``), else ``python -m recordseal.cli`` with this interpreter."""
    script = Path(argv0)
    if script.name != "recordseal":  # python -m recordseal.cli: the script beside python
        script = Path(executable).with_name("recordseal")
        if not script.is_file():
            return f"{shown_path(Path(executable))} -m recordseal.cli"
    on_path = shutil.which("recordseal")
    if on_path is not None and Path(on_path).resolve() == script.resolve():
        return "recordseal"
    return shown_path(script)


def shown_path(path: Path) -> str:
    """``path`` as a command: relative to the working directory when under it."""
    absolute = path.absolute()
    try:
        shown = str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)
    return shown if "/" in shown else f"./{shown}"
