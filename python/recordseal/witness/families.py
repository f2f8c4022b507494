"""Log families (docs/tlog.md, "Log families"): a log key under a name ``N`` stands for
every log whose origin starts with ``N/``; the family file (``witness serve
--logs-under-file``) lists their vkeys, one a line, and is read again when it changes."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from pathlib import Path

from recordseal.tlog.errors import TlogError
from recordseal.tlog.vkeys import LogVerifier, log_verifier


def family_verifiers(vkeys: Iterable[str]) -> tuple[LogVerifier, ...]:
    """Log families from vkeys (Ed25519 or ML-DSA-44): each key's name is the origin prefix of
    its logs."""
    return tuple(log_verifier(vkey) for vkey in vkeys)


class FamilyFile:
    """Log families read from a file of vkeys, one a line (``witness serve
    --logs-under-file``), read again whenever the file changes: a service that adds a log key
    (``recordseal keys rotate log``) rewrites it and the witness follows without a restart."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._seen: tuple[int, int] | None = None
        self._families: tuple[LogVerifier, ...] = ()
        try:
            self._read()  # a file that cannot be read is refused at start
        except OSError as error:
            raise TlogError(
                "config_invalid", f"--logs-under-file {path}: {error.strerror}"
            ) from None

    def __call__(self) -> tuple[LogVerifier, ...]:
        """The families as the file holds them now (as last read, if it cannot be read)."""
        with contextlib.suppress(OSError, TlogError):
            self._read()
        return self._families

    def _read(self) -> None:
        status = self._path.stat()
        seen = (status.st_mtime_ns, status.st_size)
        if seen != self._seen:
            vkeys = [line.strip() for line in self._path.read_text().splitlines() if line.strip()]
            self._families = family_verifiers(vkeys)
            self._seen = seen


def write_family_file(path: Path, vkeys: Sequence[str]) -> bool:
    """Write ``vkeys`` to the family file ``path`` (whole, by rename) when they differ from
    what it holds; whether it changed."""
    text = "".join(vkey + "\n" for vkey in vkeys)
    try:
        if path.read_text() == text:
            return False
    except FileNotFoundError:
        pass
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    temporary.replace(path)
    return True
