"""The key-encryption keys in the keys directory (docs/operations.md, "Keys").

``kek.key`` is KEK 1; ``recordseal keys rotate kek`` adds ``kek-<n>.key``, re-wraps every
subject key under it and then destroys the older KEK files. ``subject-index.key`` holds the
subject index key (HKDF of KEK 1), written before KEK 1 is ever destroyed: the subject index
is how a subject id finds its row, so it never changes. ``kek-rotation`` names the generation
a rotation under way re-wraps to, so a rotation that was interrupted resumes instead of
starting another. Every process follows the directory (``DirectoryWrapper``), so it unwraps
with every KEK there and wraps with the newest within ``RELOAD_SECONDS``.

A KEK in a hardware module is a ``.pkcs11`` file instead (``kek.pkcs11``, ``kek-<n>.pkcs11``)
naming it by URI; it wraps and unwraps there and never leaves it (crypto/hsm.py). A deployment
whose first KEK is in a module has its subject index key there too (``subject-index.pkcs11``,
an HMAC key made by ``keys init kek``); one that moves its KEK into a module later keeps the
index key it has (``subject-index.key``): the index never changes.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

from recordseal.crypto.hsm import (
    AES256,
    HMAC_SHA256,
    REFERENCE_SUFFIX,
    ModuleUri,
    open_key,
    read_reference,
    write_reference,
)
from recordseal.crypto.keyfiles import create_secret, read_or_create_secret, sync_directory
from recordseal.crypto.vault import Aead, KeyWrapper, Mac, subject_index_key

FIRST = "kek.key"
INDEX = "subject-index.key"
#: The subject index key when it is in a module (an HMAC-SHA-256 key; its URI).
INDEX_IN_MODULE = "subject-index" + REFERENCE_SUFFIX
ROTATION = "kek-rotation"
_FIRST = re.compile(r"kek\.(key|pkcs11)")
_LATER = re.compile(r"kek-([1-9][0-9]{0,2})\.(key|pkcs11)")
RELOAD_SECONDS = 2.0
#: The panel's secret-box key when it is in a module (an AES-256 key; its URI).
PANEL_IN_MODULE = "panel-secrets" + REFERENCE_SUFFIX
#: Labels, beside the KEK's own, of the keys ``keys init kek`` makes in the module.
INDEX_LABEL, PANEL_LABEL = ".subject-index", ".panel-secrets"


def kek_files(keys_dir: Path) -> dict[int, Path]:
    """The KEK files (key files and module references) by generation."""
    found: dict[int, Path] = {}
    if keys_dir.is_dir():
        for path in keys_dir.iterdir():
            match = _LATER.fullmatch(path.name)
            generation = 1 if _FIRST.fullmatch(path.name) else int(match.group(1)) if match else 0
            if 1 <= generation <= 255:
                if generation in found:
                    raise ValueError(
                        f"{keys_dir}: KEK {generation} is both a file and a module key"
                    )
                found[generation] = path
    return found


def in_module(path: Path) -> bool:
    return path.suffix == REFERENCE_SUFFIX


def _kek(path: Path) -> bytes | Aead:
    return open_key(read_reference(path), AES256) if in_module(path) else path.read_bytes()


def _index(keys_dir: Path) -> bytes | Mac | None:
    if (keys_dir / INDEX_IN_MODULE).is_file():
        return open_key(read_reference(keys_dir / INDEX_IN_MODULE), HMAC_SHA256)
    index = keys_dir / INDEX
    return index.read_bytes() if index.is_file() else None


def load_wrapper(keys_dir: Path) -> KeyWrapper:
    """The wrapper of every KEK in ``keys_dir`` (KEK 1 made when there is none)."""
    files = kek_files(keys_dir)
    if not files:
        read_or_create_secret(keys_dir / FIRST)
        files = kek_files(keys_dir)
    return KeyWrapper({g: _kek(path) for g, path in files.items()}, _index(keys_dir))


def module_keys(location: ModuleUri) -> list[tuple[str, str, str]]:
    """The keys of a first KEK in a module: (label, kind, the keys directory's file), the KEK
    first. Their files are written in the reverse order: the KEK's file marks the directory as
    having a KEK (:func:`kek_files`), so it comes when the other two are there."""
    return [
        (location.object, AES256, "kek" + REFERENCE_SUFFIX),
        (location.object + INDEX_LABEL, HMAC_SHA256, INDEX_IN_MODULE),
        (location.object + PANEL_LABEL, AES256, PANEL_IN_MODULE),
    ]


def init_in_module(keys_dir: Path, location: ModuleUri) -> list[str]:
    """KEK 1 generated in the module ``location`` names, with the subject index key and the
    panel's secret-box key beside it (labels ``<object>.subject-index`` and
    ``<object>.panel-secrets``); refused when the directory has a KEK. The files written."""
    if kek_files(keys_dir) or (keys_dir / INDEX).exists():
        raise ValueError(f"{keys_dir} has a key-encryption key already: rotate it instead")
    written = []
    # The KEK's reference last: a process that sees it finds the other two beside it.
    for label, kind, name in reversed(module_keys(location)):
        made = location.with_object(label)
        made.generate(kind)
        write_reference(keys_dir / name, made)
        written.append(name)
    return written[::-1]


def rotation_target(keys_dir: Path) -> int | None:
    """The generation an interrupted rotation re-wraps to, or None."""
    marker = keys_dir / ROTATION
    return int(marker.read_text()) if marker.is_file() else None


def begin_rotation(keys_dir: Path, location: ModuleUri | None = None) -> int:
    """A new KEK, a file or generated in the module ``location`` names (and the index key's
    own file, the first time); the rotation marked under way. Returns its generation."""
    files = kek_files(keys_dir)
    index = keys_dir / INDEX
    if not index.is_file() and not (keys_dir / INDEX_IN_MODULE).is_file():
        if in_module(files[1]):
            raise ValueError(f"{keys_dir}: KEK 1 is in a module but {INDEX_IN_MODULE} is missing")
        index_key = subject_index_key(files[1].read_bytes())
        _write(index, index_key)
    generation = max(files) + 1
    if generation > 255:
        raise ValueError("255 KEK generations are used up")
    if location is None:
        create_secret(keys_dir / f"kek-{generation}.key")
    else:
        location.generate(AES256)
        write_reference(keys_dir / f"kek-{generation}{REFERENCE_SUFFIX}", location)
    _write(keys_dir / ROTATION, str(generation).encode())
    return generation


def finish_rotation(keys_dir: Path, generation: int) -> list[str]:
    """Destroy every KEK file older than ``generation`` (every subject key is re-wrapped) and
    end the rotation; the names of the files destroyed."""
    destroyed = []
    for older, path in sorted(kek_files(keys_dir).items()):
        if older < generation:
            if in_module(path):
                read_reference(path).destroy()  # the module destroys the key itself
            else:
                size = path.stat().st_size
                with path.open("r+b") as handle:  # overwrite before unlinking, as far as a
                    handle.write(bytes(size))  # file system lets us
            path.unlink()
            destroyed.append(path.name)
    (keys_dir / ROTATION).unlink(missing_ok=True)
    sync_directory(keys_dir)
    return destroyed


def _write(path: Path, data: bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    temporary.chmod(0o600)
    temporary.rename(path)
    sync_directory(path.parent)


class DirectoryWrapper(KeyWrapper):
    """A KeyWrapper that follows the keys directory, re-read at most every RELOAD_SECONDS."""

    def __init__(self, keys_dir: Path, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._dir, self._clock = keys_dir, clock
        self._adopt(load_wrapper(keys_dir))
        self._seen = self._listing()
        self._checked = clock()

    def _listing(self) -> list[str]:
        return sorted(p.name for p in kek_files(self._dir).values())

    def _follow(self) -> None:
        if self._clock() - self._checked < RELOAD_SECONDS:
            return
        self._checked = self._clock()
        listing = self._listing()
        if listing != self._seen:
            self._adopt(load_wrapper(self._dir))
            self._seen = listing

    def wrap(self, tenant: str, subject_ref: str, key: bytes) -> bytes:
        self._follow()
        return super().wrap(tenant, subject_ref, key)

    def unwrap(self, tenant: str, subject_ref: str, wrapped: bytes) -> bytes:
        self._follow()
        return super().unwrap(tenant, subject_ref, wrapped)
