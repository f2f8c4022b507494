"""A continuity journal for tests that build services by hand (docs/continuity.md)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from recordseal.ledger.continuity import Continuity
from recordseal.storage.journal import DirectoryJournal


def fresh_continuity(directory: Path | None = None) -> Continuity:
    """A Continuity over an opened journal in ``directory`` (by default a new temporary one,
    removed when the test run ends); the store is not compared with it."""
    if directory is None:
        directory = Path(tempfile.mkdtemp(prefix="recordseal-journal-"))
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
    journal = DirectoryJournal(directory)
    journal.open()
    return Continuity(journal)
