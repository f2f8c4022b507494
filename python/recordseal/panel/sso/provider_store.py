"""The provider store file named by ``RECORDSEAL_PANEL_PROVIDER_STORE_PATH`` (docs/sso.md).

Format (JSON, written with mode 0600 because it holds client secrets)::

    {"version": 1, "providers": [<provider>, ...]}

where each provider is an ``OidcCodeConfig`` (``"kind": "oidc-code"``) or a
``JwtBearerConfig`` (``"kind": "oidc-jwt-bearer"``) with every field of its struct, including
the endpoints, pinned algorithms and key set found by discovery at registration, so a restart
needs no call to the IdP. Updates take an exclusive ``flock`` on ``<path>.lock``, re-read the
file, and replace it atomically (write to ``<path>.tmp``, fsync, rename); readers notice a new
version by its inode and modification time, so every worker process sees registrations made
by the others. A file that the group or others may read (an operator created it by hand) is
logged at WARNING on every load, naming the path and its mode, until it is fixed; the panel's
own writes always leave mode 0600.
"""

from __future__ import annotations

import fcntl
import logging
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeAlias

import msgspec

from recordseal.panel.sso.jwt_bearer import JwtBearerConfig
from recordseal.panel.sso.oidc import OidcCodeConfig

log = logging.getLogger("recordseal.panel.sso")


FORMAT_VERSION = 1

ProviderConfig: TypeAlias = OidcCodeConfig | JwtBearerConfig


class ProviderStoreError(Exception):
    """The provider store file cannot be read or has invalid content."""


class ProviderFile(msgspec.Struct, forbid_unknown_fields=True):
    version: int
    providers: list[ProviderConfig]


class ProviderStore:
    """Registered providers in one JSON file (see the module docstring)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._seen: tuple[int, int] | None = None

    def _version(self) -> tuple[int, int] | None:
        try:
            status = self.path.stat()
        except FileNotFoundError:
            return None
        return (status.st_ino, status.st_mtime_ns)

    def changed(self) -> bool:
        """Whether the file changed since this object last read or wrote it."""
        return self._version() != self._seen

    def load(self) -> list[ProviderConfig]:
        version = self._version()
        if version is None:
            self._seen = None
            return []
        mode = stat.S_IMODE(self.path.stat().st_mode)
        if mode & 0o077:
            log.warning(
                "sso.provider_store_readable_by_others",
                extra={"path": str(self.path), "mode": f"{mode:o}", "fix": "chmod 0600"},
            )
        try:
            raw = self.path.read_bytes()
            content = msgspec.json.decode(raw, type=ProviderFile)
        except OSError as exc:
            raise ProviderStoreError(f"{self.path}: cannot be read ({exc.strerror})") from None
        except msgspec.MsgspecError as exc:
            raise ProviderStoreError(f"{self.path}: invalid content: {exc}") from None
        if content.version != FORMAT_VERSION:
            raise ProviderStoreError(
                f"{self.path}: version {content.version} is not {FORMAT_VERSION}"
            )
        self._seen = version
        return content.providers

    @contextmanager
    def update(self) -> Iterator[list[ProviderConfig]]:
        """The current providers, under an exclusive lock; the list as left is written back."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            providers = self.load()
            yield providers
            self._write(providers)

    def _write(self, providers: list[ProviderConfig]) -> None:
        data = msgspec.json.format(
            msgspec.json.encode(ProviderFile(FORMAT_VERSION, providers)), indent=2
        )
        temporary = self.path.with_name(self.path.name + ".tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, self.path)
        self._seen = self._version()
