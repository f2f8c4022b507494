"""c2sp.org/tlog-tiles names, the tiles of a tree size and the entry bundle format
(``recordseal.tlog.tiles``), against the spec's own examples."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recordseal.tlog import TlogError
from recordseal.tlog.tiles import (
    Tile,
    entry_bundle,
    exists,
    parse_entry_bundle,
    parse_resource,
    split_resource,
    tiles_of,
)


def test_the_specs_index_example() -> None:
    assert Tile(0, 1234067).path() == "tile/0/x001/x234/067"
    assert parse_resource("tile/0/x001/x234/067") == Tile(0, 1234067)
    assert Tile(None, 5, 7).path() == "tile/entries/005.p/7"
    assert Tile(63, 0, 255).path() == "tile/63/000.p/255"


def test_the_specs_tree_of_70000() -> None:
    """273 full level 0 tiles, a partial one of width 112, one full level 1 tile, a partial
    one of width 17 and a partial level 2 tile of width 1 (tlog-tiles, "Partial Tiles")."""
    tiles = tiles_of(70_000)
    assert [t for t in tiles if t.level == 0 and t.width == 256] == [Tile(0, n) for n in range(273)]
    assert [t for t in tiles if t.level == 0 and t.width < 256] == [Tile(0, 273, 112)]
    assert [t for t in tiles if t.level == 1] == [Tile(1, 0), Tile(1, 1, 17)]
    assert [t for t in tiles if t.level == 2] == [Tile(2, 0, 1)]
    assert len(tiles) == 277


def test_a_tree_of_256() -> None:
    assert tiles_of(256) == [Tile(0, 0), Tile(1, 0, 1)]
    assert tiles_of(0) == []
    assert tiles_of(1) == [Tile(0, 0, 1)]


def test_a_tile_exists_once_every_hash_in_it_is_complete() -> None:
    assert exists(Tile(0, 0, 1), 1)
    assert not exists(Tile(0, 0, 2), 1)
    assert exists(Tile(0, 0, 255), 300) and exists(Tile(0, 0), 300)
    assert not exists(Tile(0, 1), 300) and exists(Tile(0, 1, 44), 300)
    assert exists(Tile(1, 0, 1), 256) and not exists(Tile(1, 0, 2), 511)
    assert exists(Tile(None, 1, 44), 300) and not exists(Tile(None, 1, 45), 300)
    assert Tile(2, 1, 3).leaves() == (256 * 65536, 259 * 65536)


@given(
    st.one_of(st.none(), st.integers(0, 63)),
    st.integers(0, 2**64 // 256),
    st.integers(1, 256),
)
def test_names_round_trip(level: int | None, index: int, width: int) -> None:
    tile = Tile(level, index, width)
    assert parse_resource(tile.path()) == tile


@pytest.mark.parametrize(
    "name",
    [
        "tile/0/x000/001",
        "tile/0/1",
        "tile/0/0001",
        "tile/00/000",
        "tile/64/000",
        "tile/0/000.p/0",
        "tile/0/000.p/256",
        "tile/0/000.p/07",
        "tile/entries/x1/000",
        "tile/8/0/000",
        "tile/data/000",
        "tile/0/000/",
        "checkpoints",
    ],
)
def test_non_canonical_names_are_refused(name: str) -> None:
    with pytest.raises(TlogError) as refused:
        parse_resource(name)
    assert refused.value.code == "tile_malformed"


def test_a_prefix_may_contain_tile_and_checkpoint() -> None:
    assert split_resource("svc/tile/0/tile/0/000") == ("svc/tile/0", Tile(0, 0))
    assert split_resource("svc/tile/entries/checkpoint") == ("svc/tile/entries", None)
    assert split_resource("svc/checkpoint/default/tile/entries/001.p/3") == (
        "svc/checkpoint/default",
        Tile(None, 1, 3),
    )
    assert split_resource("svc/tile/0/000") == ("svc", Tile(0, 0))
    for path in ("checkpoint", "/checkpoint", "svc/acme", "svc/tile/0/00"):
        with pytest.raises(TlogError):
            split_resource(path)


@given(st.lists(st.binary(max_size=300), max_size=20))
def test_entry_bundles_round_trip(entries: list[bytes]) -> None:
    assert parse_entry_bundle(entry_bundle(entries)) == entries


def test_entry_bundles_are_big_endian_uint16_prefixed() -> None:
    assert entry_bundle([b"ab", b"", b"\x00" * 256]) == (
        b"\x00\x02ab" + b"\x00\x00" + b"\x01\x00" + b"\x00" * 256
    )
    assert len(entry_bundle([b"x" * 0xFFFF])) == 0x10001
    with pytest.raises(TlogError):
        entry_bundle([b"x" * 0x10000])
    for broken in (b"\x00", b"\x00\x03ab", b"\x00\x01a\x00"):
        with pytest.raises(TlogError):
            parse_entry_bundle(broken)
