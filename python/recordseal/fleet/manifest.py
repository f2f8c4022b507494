"""The proxy fleet manifest (docs/fleets.md, "The manifest"), a TOML file::

    version = 1

    [defaults]               # optional: seed_path, preset, tenant_id
    tenant_id = "acme"

    [[fleet]]                # id (required), seed_path, preset, tenant_id
    id = "edge-eu"
    seed_path = "/etc/proxy/edge-eu.seed"
    preset = "balanced"

A fleet's own value overrides the default. Anything invalid is a ``ManifestError`` naming the
file, the line (when the key can be located) and the key. Lines come from ``tomllib``'s own
message for syntax errors and, for keys, from a light scan of the text for table headers and
``key =`` lines (a key it cannot find is reported at its table's header line).
"""

from __future__ import annotations

import logging
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recordseal.identifiers import IDENTIFIER, IDENTIFIER_RULE
from recordseal.ledger.errors import RecordServiceError

log = logging.getLogger("recordseal.fleet")

MANIFEST_VERSION = 1
TOP_KEYS = ("version", "defaults", "fleet")
DEFAULT_KEYS = ("seed_path", "preset", "tenant_id")
FLEET_KEYS = ("id", "seed_path", "preset", "tenant_id")


class ManifestError(RecordServiceError):
    """The manifest cannot be used; ``line`` and ``key`` locate the problem when known."""

    def __init__(
        self, path: Path | None, message: str, line: int | None = None, key: str | None = None
    ) -> None:
        where = f"fleet manifest {path or '<text>'}" + (f", line {line}" if line else "")
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line
        self.key = key
        self.message = message


@dataclass(frozen=True, slots=True)
class FleetBinding:
    """One fleet after defaults are applied. ``tenant_id`` None: a legacy (untenanted) fleet."""

    id: str
    tenant_id: str | None = None
    seed_path: str | None = None
    preset: str | None = None


@dataclass(frozen=True, slots=True)
class FleetManifest:
    fleets: tuple[FleetBinding, ...] = ()
    path: Path | None = None

    def fleet(self, fleet_id: str) -> FleetBinding | None:
        return next((fleet for fleet in self.fleets if fleet.id == fleet_id), None)

    @property
    def ids(self) -> list[str]:
        return [fleet.id for fleet in self.fleets]


def load_manifest(path: str | Path) -> FleetManifest:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError(path, f"cannot be read ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise ManifestError(path, "is not UTF-8 text") from exc
    return parse_manifest(text, path)


def parse_manifest(text: str, path: Path | None = None) -> FleetManifest:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))
        raise ManifestError(
            path, f"not valid TOML: {exc}", int(found.group(1)) if found else None
        ) from exc
    return _Reader(path, _KeyLines(text)).manifest(data)


class _KeyLines:
    """Where tables and keys are written: (table, array index, key) -> 1-based line.

    Besides ``key =`` lines under a header, a key may be written as a sub-table header
    (``[fleet.tenant_id]``, under the last ``[[fleet]]``) or as a dotted key at the top level
    (``defaults.tenant_id = …``); a table written inline (``defaults = {…}``,
    ``fleet = [{…}]``) is located at the line of its top-level key.
    """

    _HEADER = re.compile(r"\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
    _KEY = re.compile(
        r"""\s*("(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)\s*(?:\.\s*("(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)\s*)?[.=]"""
    )

    def __init__(self, text: str) -> None:
        self.lines: dict[tuple[str, int, str | None], int] = {}
        table, counts = "", dict[str, int]()
        index = 0
        for number, line in enumerate(text.splitlines(), start=1):
            header = self._HEADER.match(line)
            if header:
                name = header.group(2).strip().strip("\"'")
                if header.group(1) == "[[":
                    table, index = name, counts.get(name, 0)
                    counts[name] = index + 1
                else:
                    parent, _, key = name.partition(".")
                    if key:  # [fleet.tenant_id]: the key tenant_id of the last [[fleet]]
                        at = max(counts.get(parent, 1) - 1, 0)
                        self.lines.setdefault((parent, at, key.strip().strip("\"'")), number)
                    table, index = name, 0
                self.lines.setdefault((table, index, None), number)
                continue
            key = self._KEY.match(line)
            if key:
                first = key.group(1).strip("\"'")
                self.lines.setdefault((table, index, first), number)
                if key.group(2) and not table:  # defaults.tenant_id = … at the top level
                    self.lines.setdefault((first, 0, key.group(2).strip("\"'")), number)

    def of(self, table: str, index: int = 0, key: str | None = None) -> int | None:
        """The key's line, else the line of a table header named after it (``[fleet]`` for
        the key ``fleet``), else its table's header line, else the line of the top-level
        key naming its table (an inline table)."""
        return (
            self.lines.get((table, index, key))
            or (self.lines.get((key, 0, None)) if key and not table else None)
            or self.lines.get((table, index, None))
            or (self.lines.get(("", 0, table)) if table else None)
        )


class _Reader:
    def __init__(self, path: Path | None, lines: _KeyLines) -> None:
        self.path = path
        self.lines = lines

    def fail(self, message: str, table: str, index: int = 0, key: str | None = None) -> Any:
        raise ManifestError(self.path, message, self.lines.of(table, index, key), key)

    def manifest(self, data: dict[str, Any]) -> FleetManifest:
        self.only(data, TOP_KEYS, "", 0, "the top level")
        if "version" not in data:
            self.fail(f"missing key 'version' (it must be {MANIFEST_VERSION})", "", 0, "version")
        version = data["version"]
        if type(version) is not int or version != MANIFEST_VERSION:
            self.fail(
                f"key 'version': unsupported version {version!r} (this service reads"
                f" version {MANIFEST_VERSION})",
                "",
                0,
                "version",
            )
        defaults = data.get("defaults", {})
        if not isinstance(defaults, dict):
            self.fail("key 'defaults' must be a table: write [defaults]", "", 0, "defaults")
        self.only(defaults, DEFAULT_KEYS, "defaults", 0, "[defaults]")
        base = {key: self.value(defaults, key, "defaults", 0, "[defaults]") for key in defaults}
        fleets = data.get("fleet", [])
        if not isinstance(fleets, list) or not all(isinstance(f, dict) for f in fleets):
            self.fail("key 'fleet' must be an array of tables: write [[fleet]]", "", 0, "fleet")
        bindings: list[FleetBinding] = []
        for index, table in enumerate(fleets):
            bindings.append(self.fleet(table, index, base))
        self.unique(bindings)
        return FleetManifest(tuple(bindings), self.path)

    def fleet(self, table: dict[str, Any], index: int, base: dict[str, str]) -> FleetBinding:
        where = f"[[fleet]] number {index + 1}"
        self.only(table, FLEET_KEYS, "fleet", index, where)
        if "id" not in table:
            self.fail(f"{where}: missing key 'id'", "fleet", index, "id")
        values = {**base}
        for key in table:
            values[key] = self.value(table, key, "fleet", index, where)
        return FleetBinding(
            id=values["id"],
            tenant_id=values.get("tenant_id"),
            seed_path=values.get("seed_path"),
            preset=values.get("preset"),
        )

    def value(self, table: dict[str, Any], key: str, name: str, index: int, where: str) -> str:
        value = table[key]
        if not isinstance(value, str):
            self.fail(f"{where}: key {key!r} must be a string, not {value!r}", name, index, key)
        if key in ("id", "tenant_id", "preset") and not IDENTIFIER.fullmatch(value):
            self.fail(
                f"{where}: key {key!r} = {value!r} is not an identifier: {IDENTIFIER_RULE}",
                name,
                index,
                key,
            )
        if key == "seed_path" and (not value or "\x00" in value):
            self.fail(f"{where}: key 'seed_path' must be a non-empty path", name, index, key)
        return str(value)

    def only(
        self, table: dict[str, Any], allowed: tuple[str, ...], name: str, index: int, where: str
    ) -> None:
        for key in table:
            if key not in allowed:
                self.fail(
                    f"{where}: unknown key {key!r} (allowed: {', '.join(allowed)})",
                    name,
                    index,
                    key,
                )

    def unique(self, fleets: list[FleetBinding]) -> None:
        seen: dict[str, tuple[int, FleetBinding]] = {}
        for index, fleet in enumerate(fleets):
            first = seen.get(fleet.id)
            if first is None:
                seen[fleet.id] = (index, fleet)
                continue
            if first[1].tenant_id != fleet.tenant_id:
                # docs/fleets.md, "Audit events": a collision across tenants is not a plain
                # duplicate
                log.warning(
                    "cross-tenant fleet id collision in the fleet manifest: fleet %r is bound"
                    " to %s and again to %s",
                    fleet.id,
                    _tenant(first[1]),
                    _tenant(fleet),
                )
                self.fail(
                    f"[[fleet]] number {index + 1}: fleet id {fleet.id!r} collides across"
                    f" tenants: number {first[0] + 1} binds it to {_tenant(first[1])}, this"
                    f" one to {_tenant(fleet)}",
                    "fleet",
                    index,
                    "id",
                )
            self.fail(
                f"[[fleet]] number {index + 1}: fleet id {fleet.id!r} is declared twice"
                f" (first as number {first[0] + 1})",
                "fleet",
                index,
                "id",
            )


def _tenant(fleet: FleetBinding) -> str:
    return "no tenant" if fleet.tenant_id is None else f"tenant {fleet.tenant_id!r}"
