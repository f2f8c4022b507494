"""Reading the settings from ``RECORDSEAL_*`` variables, once, with every value checked.

A value that breaks its rule raises :class:`SettingsError`, which names the variable and the
rule (never the value: a database URL may hold a password); the command line prints it on
one line and exits 2.
"""

from __future__ import annotations

import difflib
import os
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from msgspec import Meta

from recordseal.settings.model import Settings
from recordseal.settings.values import Rate, parse_network

PREFIX = "RECORDSEAL_"
#: Variables that are no settings of the service: the configuration file (``file.py``), set
#: by a command for its own workers, read by the client commands (``recordseal ingest``,
#: ``disclose``: the service and the token they use, ``client/connection.py``), or read by
#: tests.
NOT_SETTINGS = frozenset(
    {
        "RECORDSEAL_WITNESS_CONFIG",
        "RECORDSEAL_SUPERVISOR_PID",
        "RECORDSEAL_SCREENSHOTS",
        "RECORDSEAL_URL",
        "RECORDSEAL_TOKEN",
        "RECORDSEAL_CONFIG",
    }
)


class SettingsError(ValueError):
    """A variable's value breaks its rule."""

    def __init__(self, variable: str, rule: str, detail: str = "") -> None:
        self.variable, self.rule, self.detail = variable, rule, detail
        super().__init__(f"{variable} must be {rule}" + (f" ({detail})" if detail else ""))


@dataclass(frozen=True)
class Field:
    """One setting as the reader and the documentation see it."""

    name: str
    variable: str
    annotation: Any  # the field's type with its msgspec constraints (Annotated)
    kind: Any  # the type without None and constraints
    optional: bool
    default: Any
    help: str
    rule: str
    secret: bool = False  # its value may hold a password: ``config show`` redacts it

    @property
    def key(self) -> str:
        """Its key in a configuration file: the variable without the prefix, in lower case."""
        return self.variable.removeprefix(PREFIX).lower()


def fields() -> list[Field]:
    hints = typing.get_type_hints(Settings, include_extras=True)
    found = []
    for name, default in zip(Settings.__struct_fields__, _defaults(), strict=True):
        annotation = hints[name]
        kind, metas = typing.get_args(annotation)[0], typing.get_args(annotation)[1:]
        extra: dict[str, Any] = {}
        limits: dict[str, Any] = {}
        description = ""
        for meta in metas:
            extra.update(meta.extra or {})
            description = meta.description or description
            limits.update(
                {
                    k: getattr(meta, k)
                    for k in ("ge", "gt", "le", "pattern")
                    if getattr(meta, k) is not None
                }
            )
        members = typing.get_args(kind) if isinstance(kind, types.UnionType) else ()
        optional = type(None) in members
        if optional:
            (kind,) = [member for member in members if member is not type(None)]
        found.append(
            Field(
                name,
                extra.get("variable", PREFIX + name.upper()),
                _constrained(kind, limits),
                kind,
                optional,
                default,
                description,
                extra.get("rule") or _rule_of(kind, limits),
                bool(extra.get("secret")),
            )
        )
    return found


def _constrained(kind: Any, limits: dict[str, Any]) -> Any:
    return typing.Annotated[kind, Meta(**limits)] if limits else kind


def _defaults() -> list[Any]:
    defaults = Settings.__struct_defaults__
    missing = len(Settings.__struct_fields__) - len(defaults)
    return [msgspec.NODEFAULT] * missing + list(defaults)


def _rule_of(kind: Any, limits: dict[str, Any]) -> str:
    bounds = []
    for key, sign in (("ge", ">="), ("gt", ">"), ("le", "<=")):
        if key in limits:
            bounds.append(f"{sign} {limits[key]:g}" if kind is float else f"{sign} {limits[key]}")
    names = {int: "an integer", float: "a number", str: "text", bool: "true or false"}
    if kind in names:
        return names[kind] + (" " + " and ".join(bounds) if bounds else "")
    if kind is Path:
        return "a file system path"
    if kind is Rate:
        return Rate.RULE
    item = typing.get_args(kind)[0] if typing.get_origin(kind) is tuple else None
    if item is str:
        return "a list of names separated by commas"
    if item is not None and isinstance(item, types.UnionType):
        return "a list of networks in CIDR notation separated by commas"
    raise TypeError(f"no rule for settings of type {kind!r}")


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.replace(";", ",").split(",") if part.strip()]


def parse(field: Field, text: str, name: str | None = None) -> Any:
    """The value of ``field`` written as ``text``; SettingsError naming ``name`` (the field's
    variable by default) when it breaks the rule."""
    kind = field.kind
    try:
        if kind is Path:
            return Path(text)
        if kind is bool:
            lowered = text.strip().lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
            raise ValueError("")
        if kind in (int, float, str):
            try:
                return msgspec.convert(text.strip(), field.annotation, strict=False)
            except msgspec.ValidationError:
                raise ValueError("") from None  # the rule says it all
        if kind is Rate:
            try:
                return Rate.parse(text)
            except ValueError:
                raise ValueError("") from None
        item = typing.get_args(kind)[0]
        if item is str:
            return tuple(_split(text))
        if isinstance(item, types.UnionType):  # networks
            return tuple(parse_network(part) for part in _split(text))
        return msgspec.json.decode(text, type=kind)
    except (msgspec.ValidationError, msgspec.DecodeError, ValueError) as error:
        raise SettingsError(name or field.variable, field.rule, _detail(error)) from None


def _detail(error: Exception) -> str:
    """What is wrong beyond the rule, without the value (msgspec names the place, as in
    ``at `$[0].url```)."""
    return str(error)


def unknown_variables(environ: Mapping[str, str] | None = None) -> list[str]:
    """Warnings for ``RECORDSEAL_*`` variables that name no setting (a typo is ignored
    otherwise), each with the closest setting's variable if there is one."""
    environ = os.environ if environ is None else environ
    known = [field.variable for field in fields()]
    warnings = []
    for name in sorted(environ):
        if name.startswith(PREFIX) and name not in known and name not in NOT_SETTINGS:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            warnings.append(f"{name} is not a setting and is ignored{hint}")
    return warnings
