"""The witness's durable memory: per origin, the latest cosigned size, root and checkpoint.

One JSON file per origin, named by the lowercase hex SHA-256 of the origin (as the monitoring
API names a log), replaced atomically (temporary file, fsync, rename, fsync of the
directory), so after a crash or restart the witness remembers every checkpoint it cosigned.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec

from recordseal.crypto.keyfiles import sync_directory
from recordseal.tlog import strict_base64
from recordseal.tlog.checkpoint import HASH_SIZE
from recordseal.tlog.errors import TlogError

FORMAT = "recordseal/witness-state/v1"


class LogState(msgspec.Struct, frozen=True):
    """What the witness last cosigned for one log."""

    origin: str
    size: int
    root_hash: bytes
    checkpoint: str


class _StateFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    format: str
    origin: str
    size: int
    root_hash: str
    checkpoint: str


class StateStore:
    """Log states under ``directory``; :meth:`locked` serialises check-and-update."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self._thread_lock = threading.Lock()
        self._lock_path = directory / "witness.lock"

    def path_for(self, origin: str) -> Path:
        # Origins are arbitrary text; a hash makes a safe, fixed-length file name.
        return self.directory / f"{hashlib.sha256(origin.encode()).hexdigest()}.json"

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store exclusively, across threads and processes sharing the directory."""
        with self._thread_lock:
            fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)

    def load(self, origin: str) -> LogState | None:
        return self._load(self.path_for(origin), origin)

    def load_by_hash(self, origin_hash: str) -> LogState | None:
        """The state of the origin whose SHA-256 is ``origin_hash`` (64 lowercase hex)."""
        path = self.directory / f"{origin_hash}.json"
        state = self._load(path, None)
        if state is not None and self.path_for(state.origin) != path:
            raise _corrupt(path, "holds the state of another origin")
        return state

    def _load(self, path: Path, origin: str | None) -> LogState | None:
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            stored = msgspec.json.decode(raw, type=_StateFile)
        except msgspec.DecodeError as error:
            raise _corrupt(path, f"is not a witness state file ({error})") from error
        root_hash = strict_base64.decode(stored.root_hash)
        if stored.format != FORMAT or stored.origin != (origin or stored.origin):
            raise _corrupt(path, f"does not hold the state of {origin!r} in {FORMAT}")
        if root_hash is None or len(root_hash) != HASH_SIZE or stored.size < 0:
            raise _corrupt(path, "holds an invalid size or root hash")
        return LogState(stored.origin, stored.size, root_hash, stored.checkpoint)

    def save(self, state: LogState) -> None:
        """Replace the origin's state atomically and durably."""
        stored = _StateFile(
            FORMAT,
            state.origin,
            state.size,
            strict_base64.encode(state.root_hash),
            state.checkpoint,
        )
        path = self.path_for(state.origin)
        fd, temporary = tempfile.mkstemp(dir=self.directory, prefix=".state-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(msgspec.json.encode(stored))
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        sync_directory(self.directory)


def _corrupt(path: Path, message: str) -> TlogError:
    return TlogError("state_corrupt", f"{path} {message}", {"path": str(path)})
