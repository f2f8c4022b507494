"""The panel's cookie keys in the keys directory, and their rotation (docs/panel.md,
"Sessions"; docs/operations.md, "Keys").

``panel-cookie.key`` is key ``panel-1``; ``recordseal keys rotate cookie`` adds
``panel-cookie-2.key`` (``panel-2``), then 3… The newest signs; an older key keeps verifying
the cookies it signed while they can still be alive, until its successor is ``keep_for``
seconds old (longer than any session lasts). Every process re-reads the directory at most
every ``RELOAD_SECONDS`` (``DirectoryKeyring``), so a rotation reaches all of them, and a
cookie issued by a process that already signs with the new key verifies everywhere.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

from recordseal.crypto.keyfiles import create_secret, read_or_create_secret
from recordseal.panel.cookies import CookieKeyring, SigningKey

FIRST = "panel-cookie.key"
_LATER = re.compile(r"panel-cookie-([1-9][0-9]{0,5})\.key")
RELOAD_SECONDS = 2.0
#: How long an older key keeps verifying after its successor was made: above every session's
#: lifetime (the panel's sessions last at most 8 h).
KEEP_FOR_SECONDS = 24 * 3600.0


def key_files(keys_dir: Path) -> list[tuple[int, Path]]:
    """The cookie key files by generation (1: ``panel-cookie.key``), oldest first."""
    found = [(1, keys_dir / FIRST)] if (keys_dir / FIRST).is_file() else []
    if keys_dir.is_dir():
        for path in keys_dir.iterdir():
            match = _LATER.fullmatch(path.name)
            if match and int(match.group(1)) > 1:
                found.append((int(match.group(1)), path))
    return sorted(found)


def load_keyring(keys_dir: Path, now: float, keep_for: float = KEEP_FOR_SECONDS) -> CookieKeyring:
    """The newest key signing, the older ones still needed verifying; the first key is made
    when there is none."""
    files = key_files(keys_dir)
    if not files:
        read_or_create_secret(keys_dir / FIRST)
        files = key_files(keys_dir)
    keys = [SigningKey(f"panel-{n}", path.read_bytes()) for n, path in files]
    kept = [
        key
        for key, (_, successor) in zip(keys, files[1:], strict=False)
        if now - successor.stat().st_mtime < keep_for
    ]
    return CookieKeyring(keys[-1], kept)


def rotate(keys_dir: Path) -> str:
    """A new cookie key, signing once the processes re-read the directory; its id."""
    files = key_files(keys_dir)
    generation = files[-1][0] + 1 if files else 1
    name = FIRST if generation == 1 else f"panel-cookie-{generation}.key"
    create_secret(keys_dir / name)
    return f"panel-{generation}"


class DirectoryKeyring(CookieKeyring):
    """A CookieKeyring that follows the keys directory, re-read at most every
    ``RELOAD_SECONDS`` when it signs or verifies."""

    def __init__(
        self,
        keys_dir: Path,
        *,
        keep_for: float = KEEP_FOR_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._dir, self._keep_for, self._clock, self._wall = keys_dir, keep_for, clock, wall
        self._seen: list[tuple[int, Path]] = []
        self._checked = clock()
        self._load()

    def _load(self) -> None:
        keyring = load_keyring(self._dir, self._wall(), self._keep_for)
        self._active, self._keys = keyring._active, keyring._keys
        self._seen = key_files(self._dir)

    def _follow(self) -> None:
        if self._clock() - self._checked < RELOAD_SECONDS:
            return
        self._checked = self._clock()
        files = key_files(self._dir)
        now = self._wall()
        needed = 1 + sum(now - path.stat().st_mtime < self._keep_for for _, path in files[1:])
        if files != self._seen or needed != len(self._keys):  # rotated, or an old key expired
            self._load()

    def sign_payload(self, payload: bytes) -> str:
        self._follow()
        return super().sign_payload(payload)

    def _authentic_payload(self, token: str) -> bytes | None:
        self._follow()
        return super()._authentic_payload(token)
