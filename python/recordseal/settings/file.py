"""Settings from a TOML file (``--config FILE`` or ``RECORDSEAL_CONFIG``): one key per setting,
its variable's name without ``RECORDSEAL_`` in lower case (``port = 8000``), each value checked
by the setting's rule as its variable's text is. A key that names no setting is refused,
naming the closest key: a typo never passes silently in a file."""

from __future__ import annotations

import difflib
import tomllib
import types
import typing
from pathlib import Path
from typing import Any

import msgspec

from recordseal.settings.environment import Field, SettingsError, fields, parse
from recordseal.settings.values import Rate, parse_network

#: The variable naming the configuration file when ``--config`` does not.
CONFIG_VARIABLE = "RECORDSEAL_CONFIG"


def read_file(path: Path) -> dict[str, Any]:
    """The settings ``path`` holds, by field name; SettingsError naming the file and the key
    when the file cannot be read, a key is unknown, or a value breaks its rule."""
    try:
        with path.open("rb") as file:
            document = tomllib.load(file)
    except OSError as error:
        reason = error.strerror or ""
        raise SettingsError(f"the configuration file {path}", "readable", reason) from None
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"the configuration file {path}", "TOML", str(error)) from None
    by_key = {field.key: field for field in fields()}
    values = {}
    for key, raw in document.items():
        field = by_key.get(key)
        if field is None:
            close = difflib.get_close_matches(key, list(by_key), n=1)
            hint = f"did you mean {close[0]!r}?" if close else "docs/configuration.md lists them"
            raise SettingsError(f"{path}: key {key!r}", "the name of a setting", hint)
        values[field.name] = value_of(field, raw, f"{path}: {key}")
    return values


def value_of(field: Field, raw: Any, name: str) -> Any:
    """``raw`` (a TOML value) as ``field``'s value: text is read as its variable's text is,
    other TOML values are converted by the field's type."""
    if isinstance(raw, str):
        return parse(field, raw, name)
    item = typing.get_args(field.kind)[0] if typing.get_origin(field.kind) is tuple else None
    try:
        if field.kind in (Path, Rate):
            raise ValueError("")  # written as text only
        if isinstance(item, types.UnionType):  # networks, each written as text
            return tuple(parse_network(text) for text in msgspec.convert(raw, tuple[str, ...]))
        return msgspec.convert(raw, field.annotation)
    except (msgspec.ValidationError, ValueError) as error:
        raise SettingsError(name, field.rule, str(error)) from None
