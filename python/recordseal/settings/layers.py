"""The settings in force and where each came from: defaults, then the configuration file,
then ``RECORDSEAL_*`` variables, then command-line options, each overriding the one before."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from recordseal.settings.environment import fields, parse
from recordseal.settings.file import CONFIG_VARIABLE, read_file
from recordseal.settings.model import Settings

#: Where a setting came from; ``service.json``: the service that started in the data directory
#: recorded it (``settings/served.py``).
Source = Literal["default", "file", "environment", "command line", "service.json"]


@dataclass(frozen=True)
class Resolved:
    settings: Settings
    sources: dict[str, Source]  # by field name
    config: Path | None  # the configuration file read, if any


def config_path(environ: Mapping[str, str]) -> Path | None:
    text = environ.get(CONFIG_VARIABLE, "").strip()
    return Path(text) if text else None


def resolve(environ: Mapping[str, str] | None = None, **overrides: object) -> Resolved:
    """The settings of ``environ`` (``os.environ`` by default) and of the file its
    ``RECORDSEAL_CONFIG`` names; explicit overrides (command-line options) win, and None
    means "not given"."""
    environ = os.environ if environ is None else environ
    known = {field.name: field for field in fields()}
    unknown = set(overrides) - set(known)
    if unknown:
        raise TypeError(f"no such setting: {', '.join(sorted(unknown))}")
    config = config_path(environ)
    values: dict[str, Any] = read_file(config) if config else {}
    sources: dict[str, Source] = {name: "file" for name in values}
    for field in known.values():
        text = environ.get(field.variable, "")
        if text.strip():  # checked even when an option overrides it: a bad value is refused
            values[field.name], sources[field.name] = parse(field, text), "environment"
        if overrides.get(field.name) is not None:
            value = overrides[field.name]
            values[field.name] = Path(str(value)) if field.kind is Path else value
            sources[field.name] = "command line"
    return Resolved(
        Settings(**values), {name: sources.get(name, "default") for name in known}, config
    )


def from_env(environ: Mapping[str, str] | None = None, **overrides: object) -> Settings:
    """The settings in force (:func:`resolve`), without their sources."""
    return resolve(environ, **overrides).settings
