"""Secret files in the data directory: created once, readable by the owner only."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def read_or_create_secret(path: Path, size: int = 32) -> bytes:
    """Return the bytes in ``path``, creating it with random bytes (mode 0600) on first use.

    Creation is atomic (``O_EXCL``), so two processes starting together agree on one key.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            data = path.read_bytes()
        else:
            data = secrets.token_bytes(size)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            return data
    if len(data) != size:
        raise RuntimeError(f"{path} holds {len(data)} bytes, expected {size}")
    return data
