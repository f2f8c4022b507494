"""Tiled logs (c2sp.org/tlog-tiles): the names of a log's resources, which tiles a tree size
has, and the entry bundle format.

Under a log's prefix: ``checkpoint``; hash tiles ``tile/<L>/<N>[.p/<W>]``, the 256 hashes of
tree level ``8 * L`` from index ``256 * N`` (``W`` of them for a partial tile); entry bundles
``tile/entries/<N>[.p/<W>]``, the entries ``256 * N`` ... as big-endian uint16
length-prefixed bytes. ``<N>`` is written in groups of three digits, all but the last
prefixed ``x`` (1234067: ``x001/x234/067``). Pure formats: no storage, no server.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import TlogError

#: Hashes per full tile (tiles have height 8) and entries per full bundle.
TILE_WIDTH = 256
TILE_HEIGHT = 8
#: The largest level the spec allows.
MAX_LEVEL = 63
#: An entry of a bundle is at most this long (its length is a uint16).
MAX_ENTRY = 0xFFFF
CHECKPOINT = "checkpoint"

_INDEX = r"(?:x[0-9]{3}/)*[0-9]{3}"
_RESOURCE = re.compile(
    rf"tile/(?P<level>entries|0|[1-9][0-9]?)/(?P<index>{_INDEX})(?:\.p/(?P<width>[1-9][0-9]{{0,2}}))?"
)


@dataclass(frozen=True, slots=True)
class Tile:
    """A hash tile (``level`` 0 to 63) or, with ``level`` None, an entry bundle; ``width``
    is 256 for a full one, 1 to 255 for a partial one."""

    level: int | None
    index: int
    width: int = TILE_WIDTH

    def __post_init__(self) -> None:
        if self.level is not None and not 0 <= self.level <= MAX_LEVEL:
            raise _malformed(f"tile level {self.level} is outside 0..{MAX_LEVEL}")
        if self.index < 0 or not 1 <= self.width <= TILE_WIDTH:
            raise _malformed(f"tile index {self.index} or width {self.width} is out of range")

    @property
    def is_entries(self) -> bool:
        return self.level is None

    @property
    def start(self) -> int:
        """The index of the tile's first hash at its own level (of its first entry for a
        bundle)."""
        return self.index * TILE_WIDTH

    def leaves(self) -> tuple[int, int]:
        """The range ``[begin, end)`` of log entries the tile's hashes span."""
        shift = TILE_HEIGHT * (self.level or 0)
        return self.start << shift, (self.start + self.width) << shift

    def path(self) -> str:
        """The resource name under the log's prefix (``tile/0/x001/234.p/7``)."""
        groups = [f"{self.index % 1000:03d}"]
        rest = self.index // 1000
        while rest:
            groups.insert(0, f"x{rest % 1000:03d}")
            rest //= 1000
        level = "entries" if self.level is None else str(self.level)
        partial = "" if self.width == TILE_WIDTH else f".p/{self.width}"
        return f"tile/{level}/{'/'.join(groups)}{partial}"


def parse_resource(name: str) -> Tile | None:
    """The tile named by ``name`` (a resource under a log's prefix); None for
    ``checkpoint``. Only the canonical spelling is accepted: three-digit groups without
    superfluous ``x000`` prefixes, levels and widths without leading zeros."""
    if name == CHECKPOINT:
        return None
    match = _RESOURCE.fullmatch(name)
    if match is None:
        raise _malformed(f"{name!r} names no resource of a tiled log")
    index = int("".join(group.removeprefix("x") for group in match["index"].split("/")))
    width = int(match["width"]) if match["width"] else TILE_WIDTH
    level = None if match["level"] == "entries" else int(match["level"])
    if (match["width"] and width >= TILE_WIDTH) or (level is not None and level > MAX_LEVEL):
        raise _malformed(f"{name!r} names no resource of a tiled log")
    tile = Tile(level, index, width)
    if tile.path() != name:  # e.g. x000/001 for 001
        raise _malformed(f"{name!r} is not the canonical name {tile.path()!r}")
    return tile


def split_resource(path: str) -> tuple[str, Tile | None]:
    """``(prefix, tile)`` of a path ``<prefix>/checkpoint`` or ``<prefix>/tile/...``. A
    prefix may contain ``tile`` itself (a tenant of that name); a resource name holds no
    ``tile`` after its first segment, so at most one split leaves a valid name."""
    for slash in (m.start() for m in re.finditer("/", path)):
        prefix, name = path[:slash], path[slash + 1 :]
        if prefix and (name == CHECKPOINT or name.startswith("tile/")):
            try:
                return prefix, parse_resource(name)
            except TlogError:
                continue
    raise _malformed("the path names no checkpoint, tile or entry bundle of a log")


def exists(tile: Tile, size: int) -> bool:
    """Whether a tree of ``size`` entries has ``tile``: every hash it holds is the hash of a
    complete subtree (a full tile of a larger tree, or a partial one of this width or more)."""
    return tile.leaves()[1] <= size


def tiles_of(size: int) -> list[Tile]:
    """Every hash tile of a tree of ``size``: full ones and the partial one of each level
    (what a mirror fetches)."""
    found: list[Tile] = []
    level = 0
    while (hashes := size >> (TILE_HEIGHT * level)) and level <= MAX_LEVEL:
        found += [Tile(level, n) for n in range(hashes // TILE_WIDTH)]
        if hashes % TILE_WIDTH:
            found.append(Tile(level, hashes // TILE_WIDTH, hashes % TILE_WIDTH))
        level += 1
    return found


def entry_bundle(entries: Iterable[bytes]) -> bytes:
    """Entries as a bundle: each one's length as a big-endian uint16, then its bytes."""
    parts = []
    for entry in entries:
        if len(entry) > MAX_ENTRY:
            raise _malformed(f"an entry of {len(entry)} bytes does not fit a bundle")
        parts += [struct.pack(">H", len(entry)), entry]
    return b"".join(parts)


def parse_entry_bundle(data: bytes) -> list[bytes]:
    """The entries of a bundle; ``tile_malformed`` when a length runs past the end."""
    entries, offset = [], 0
    while offset < len(data):
        if offset + 2 > len(data):
            raise _malformed("an entry bundle ends inside a length prefix")
        (length,) = struct.unpack_from(">H", data, offset)
        offset += 2
        if offset + length > len(data):
            raise _malformed("an entry of a bundle runs past its end")
        entries.append(data[offset : offset + length])
        offset += length
    return entries


def _malformed(message: str) -> TlogError:
    return TlogError("tile_malformed", message)
