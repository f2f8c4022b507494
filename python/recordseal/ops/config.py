"""``recordseal config show``: the settings in force, each with its source (default, file,
environment, command line), secrets redacted (``settings/show.py``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from recordseal.datadir import SERVICE_FILE, ServiceRecord
from recordseal.ops.options import config_option, family, json_option
from recordseal.settings import resolve
from recordseal.settings.environment import fields
from recordseal.settings.layers import Resolved
from recordseal.settings.served import with_service_record
from recordseal.settings.show import as_text, effective


def add_settings_options(command: argparse.ArgumentParser, what: str) -> None:
    """``--config``, the options ``serve`` takes that override settings (so that a command
    shows or checks what ``serve`` with the same options would run with), and ``--json``."""
    config_option(command)
    command.add_argument("--data-dir", type=Path, default=None, help="RECORDSEAL_DATA_DIR")
    command.add_argument("--host", default=None, help="RECORDSEAL_HOST")
    command.add_argument("--port", type=int, default=None, help="RECORDSEAL_PORT")
    command.add_argument("--database-url", default=None, help="RECORDSEAL_DATABASE_URL")
    json_option(command, what)


def in_force(args: argparse.Namespace) -> tuple[Resolved, ServiceRecord | None]:
    """The settings of this shell and its options, with what the service that started in the
    data directory recorded for those left at their default (``settings/served.py``)."""
    return with_service_record(resolve(**overrides(args)))


def taken_from_service(resolved: Resolved) -> list[str]:
    """The settings' keys that came from ``service.json``."""
    keys = {field.name: field.key for field in fields()}
    return [keys[name] for name, source in resolved.sources.items() if source == "service.json"]


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "data_dir": args.data_dir,
        "host": args.host,
        "port": args.port,
        "database_url": args.database_url,
    }


SHOW_HELP = (
    "print the settings in force, each with its source (default, file, service.json,"
    " environment, command line); passwords redacted"
)


def register(commands: Any) -> None:
    config = family(
        commands, "config", "the settings in force and their sources: show", "config_command"
    )
    show = config.add_parser("show", help=SHOW_HELP)
    add_settings_options(show, "the settings")
    show.set_defaults(run=_show)


def _show(args: argparse.Namespace) -> int:
    resolved, record = in_force(args)
    service = resolved.settings.data_dir / SERVICE_FILE
    if args.json:
        document = {
            "config_file": None if resolved.config is None else str(resolved.config),
            "service_file": None if record is None else str(service),
            "from_service_file": taken_from_service(resolved),
            "settings": effective(resolved),
        }
        print(json.dumps(document, indent=2))
        return 0
    if record is not None:
        taken = ", ".join(taken_from_service(resolved)) or "none (this shell sets them all)"
        print(f"# service file: {service} (the service started at {record.started_at})")
        print(f"# from the service file: {taken}")
    print(as_text(resolved), end="")
    return 0
