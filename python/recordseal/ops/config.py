"""``recordseal config show``: the settings in force, each with its source (default, file,
environment, command line), secrets redacted (``settings/show.py``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from recordseal.ops.options import config_option
from recordseal.settings import resolve
from recordseal.settings.show import as_text, effective


def add_settings_options(command: argparse.ArgumentParser) -> None:
    """The options ``serve`` takes that override settings, so that a command shows or checks
    what ``serve`` with the same options would run with."""
    command.add_argument("--data-dir", type=Path, default=None, help="RECORDSEAL_DATA_DIR")
    command.add_argument("--host", default=None, help="RECORDSEAL_HOST")
    command.add_argument("--port", type=int, default=None, help="RECORDSEAL_PORT")
    command.add_argument("--database-url", default=None, help="RECORDSEAL_DATABASE_URL")


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "data_dir": args.data_dir,
        "host": args.host,
        "port": args.port,
        "database_url": args.database_url,
    }


def register(commands: Any) -> None:
    config = commands.add_parser(
        "config", help="the settings in force and their sources: show"
    ).add_subparsers(dest="config_command", required=True, metavar="COMMAND")
    show = config.add_parser(
        "show",
        help="print the settings in force, each with its source (default, file, environment,"
        " command line); passwords redacted",
    )
    config_option(show)
    add_settings_options(show)
    show.add_argument("--json", action="store_true", help="print the settings as JSON")
    show.set_defaults(run=_show)


def _show(args: argparse.Namespace) -> int:
    resolved = resolve(**overrides(args))
    if args.json:
        document = {
            "config_file": None if resolved.config is None else str(resolved.config),
            "settings": effective(resolved),
        }
        print(json.dumps(document, indent=2))
    else:
        print(as_text(resolved), end="")
    return 0
