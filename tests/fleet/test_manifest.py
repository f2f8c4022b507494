"""The proxy fleet manifest (spec panel 2.5, 9.1): defaults, overrides, and clear errors."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from recordseal.fleet.manifest import FleetBinding, ManifestError, load_manifest, parse_manifest

GOOD = """\
version = 1

[defaults]
tenant_id = "acme"
preset = "balanced"
seed_path = "/etc/proxy/default.seed"

[[fleet]]
id = "edge-eu"

[[fleet]]
id = "edge-us"
tenant_id = "globex"
preset = "strict"
"""


def test_defaults_apply_and_a_fleet_value_overrides_them() -> None:
    manifest = parse_manifest(GOOD)
    assert manifest.fleets == (
        FleetBinding("edge-eu", "acme", "/etc/proxy/default.seed", "balanced"),
        FleetBinding("edge-us", "globex", "/etc/proxy/default.seed", "strict"),
    )
    assert manifest.fleet("edge-us") == manifest.fleets[1]
    assert manifest.fleet("nope") is None


def test_without_defaults_a_fleet_has_no_tenant() -> None:
    manifest = parse_manifest('version = 1\n[[fleet]]\nid = "solo"\n')
    assert manifest.fleets == (FleetBinding("solo", None, None, None),)


def test_no_fleets_is_an_empty_manifest() -> None:
    assert parse_manifest("version = 1\n").fleets == ()


def test_load_manifest_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "fleets.toml"
    path.write_text(GOOD)
    manifest = load_manifest(path)
    assert manifest.path == path and manifest.ids == ["edge-eu", "edge-us"]


def error_of(text: str) -> ManifestError:
    with pytest.raises(ManifestError) as caught:
        parse_manifest(text, Path("fleets.toml"))
    return caught.value


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("version = 2\n", 1, "unsupported version 2"),
        ('# comment\nversion = "1"\n', 2, "unsupported version '1'"),
        ("version = true\n", 1, "unsupported version True"),
        ("version = 1.0\n", 1, "unsupported version 1.0"),
        ('[[fleet]]\nid = "a"\n', None, "missing key 'version'"),
    ],
)
def test_a_bad_version_is_refused(text: str, line: int | None, needle: str) -> None:
    error = error_of(text)
    assert error.line == line
    assert needle in str(error)
    assert str(error).startswith("fleet manifest fleets.toml")


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ('version = 1\nowner = "x"\n', 2, "owner"),
        ('version = 1\n[defaults]\nid = "x"\n', 3, "id"),
        ('version = 1\n[defaults]\npreset = "a"\nwidth_N = 3\n', 4, "width_N"),
        ('version = 1\n[[fleet]]\nid = "a"\n\n[[fleet]]\nid = "b"\ntenant = "acme"\n', 7, "tenant"),
        ('version = 1\n[[fleet]]\nid = "a"\n"seed path" = "x"\n', 4, "seed path"),
    ],
)
def test_an_unknown_key_is_named_with_its_line(text: str, line: int, key: str) -> None:
    error = error_of(text)
    assert (error.line, error.key) == (line, key)
    assert f"unknown key {key!r}" in str(error)
    assert f"line {line}" in str(error)


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ('version = 1\n[[fleet]]\nseed_path = "x"\n', 2, "[[fleet]] number 1: missing key 'id'"),
        ("version = 1\n[[fleet]]\nid = 7\n", 3, "key 'id' must be a string"),
        ('version = 1\n[[fleet]]\nid = "a b"\n', 3, "is not an identifier"),
        ('version = 1\n[[fleet]]\nid = "a"\ntenant_id = "-x"\n', 4, "'tenant_id' = '-x'"),
        ('version = 1\n[[fleet]]\nid = "a"\npreset = ""\n', 4, "'preset' = ''"),
        ('version = 1\n[[fleet]]\nid = "a"\nseed_path = ""\n', 4, "non-empty path"),
        ("version = 1\n[defaults]\ntenant_id = 3\n", 3, "[defaults]: key 'tenant_id'"),
        ('version = 1\ndefaults = "x"\n', 2, "'defaults' must be a table"),
        ('version = 1\n[fleet]\nid = "a"\n', 2, "must be an array of tables"),
        ('version = 1\n[[fleet]]\nid = "a"\n[[fleet]]\nid = "a"\n', 5, "declared twice"),
        ("version = 1\n[[fleet]\n", 2, "not valid TOML"),
        ("version = 1\nversion = 1\n", 2, "not valid TOML"),
    ],
)
def test_invalid_values_are_named_with_their_line(text: str, line: int, needle: str) -> None:
    error = error_of(text)
    assert error.line == line, str(error)
    assert needle in str(error)


def test_a_fleet_id_colliding_across_tenants_is_refused_and_logged_at_warn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    text = (
        'version = 1\n[[fleet]]\nid = "edge"\ntenant_id = "acme"\n'
        '[[fleet]]\nid = "edge"\ntenant_id = "globex"\n'
    )
    with caplog.at_level(logging.WARNING, logger="recordseal.fleet"):
        error = error_of(text)
    assert "collides across tenants" in str(error) and error.line == 6
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "cross-tenant fleet id collision" in warnings[0].getMessage()
    assert "'acme'" in warnings[0].getMessage() and "'globex'" in warnings[0].getMessage()


def test_an_unreadable_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match=r"missing\.toml: cannot be read"):
        load_manifest(tmp_path / "missing.toml")


@pytest.mark.parametrize(
    ("text", "line", "key", "needle"),
    [
        ('[[fleet]]\nid = "a"\n', None, "version", "missing key 'version'"),
        ("version = [1]\n", 1, "version", "unsupported version [1]"),
        ("version = -1\n", 1, "version", "unsupported version -1"),
        ("[version]\nmajor = 1\n", 1, "version", "unsupported version {'major': 1}"),
        ('version = 1\n[[fleet]]\npreset = "x"\n', 2, "id", "missing key 'id'"),
        ('version = 1\n[[fleet]]\nid = ""\n', 3, "id", "is not an identifier"),
        ("version = 1\n[defaults]\npreset = 5\n", 3, "preset", "must be a string, not 5"),
        ("version = 1\n[[fleet]]\nid = 'a'\nseed_path = true\n", 4, "seed_path", "not True"),
        ("version = 1\n[[fleet]]\nid = 'a'\npreset = ['x']\n", 4, "preset", "not ['x']"),
        ("version = 1\n[[fleet]]\nid = 'a'\n[fleet.tenant_id]\nx = 1\n", 4, "tenant_id", "string"),
        ("version = 1\n[defaults.extra]\nx = 1\n", 2, "extra", "unknown key 'extra'"),
        ("version = 1\ndefaults.tenant_id = '-x'\n", 2, "tenant_id", "not an identifier"),
        ("version = 1\ndefaults = { tenant_id = 3 }\n", 2, "tenant_id", "must be a string"),
        ("version = 1\nfleet = [{ id = 'a' }, { id = 'b', c = 1 }]\n", 2, "c", "number 2"),
        ("version = 1\nfleet = [1, 2]\n", 2, "fleet", "must be an array of tables"),
        ("version = 1\nfleet = 'a'\n", 2, "fleet", "must be an array of tables"),
        ('version = 1\n[[fleet]]\nid = "a"\nseed_path = "a\\u0000b"\n', 4, "seed_path", "path"),
        (
            'version = 1\n[[fleet]]\nid = "a"\n[[fleet]]\nid = "b"\n[[fleet]]\nid = "a"\n',
            7,
            "id",
            "[[fleet]] number 3: fleet id 'a' is declared twice (first as number 1)",
        ),
        (
            'version = 1\n[[fleet]]\nid = "a"\n[[fleet]]\nid = "a"\ntenant_id = "globex"\n',
            5,
            "id",
            "binds it to no tenant, this one to tenant 'globex'",
        ),
    ],
)
def test_every_kind_of_invalid_input_names_its_key_and_line(
    text: str, line: int | None, key: str, needle: str
) -> None:
    """Wrong types, bad versions, missing and duplicate ids, keys written as sub-tables,
    dotted keys or inline tables: the error carries the key and, where it is written, the
    line (a missing ``version`` has none)."""
    error = error_of(text)
    assert (error.line, error.key) == (line, key), str(error)
    assert needle in str(error)
    assert (f", line {line}:" in str(error)) == (line is not None)
