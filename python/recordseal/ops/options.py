"""The options the service's commands share: where the data and the store are, ``--json``,
``--hsm``. Each family module calls these when it registers its commands."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def config_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--config",
        type=Path,
        default=None,
        metavar="FILE",
        help="TOML file of settings, overridden by RECORDSEAL_* variables (RECORDSEAL_CONFIG;"
        " docs/configuration.md)",
    )


def data_dir_option(command: argparse.ArgumentParser) -> None:
    config_option(command)
    command.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="the service's state directory: keys, SQLite database (RECORDSEAL_DATA_DIR; ./data)",
    )


def database_url_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--database-url",
        default=None,
        help="postgresql:// URL of the record store (RECORDSEAL_DATABASE_URL; SQLite if unset)",
    )


def create_data_dir_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--create-data-dir",
        action="store_true",
        help="create the data directory when it does not exist (refused otherwise)",
    )


def json_option(command: argparse.ArgumentParser, what: str) -> None:
    command.add_argument("--json", action="store_true", help=f"print {what} as JSON")


def store_options(command: argparse.ArgumentParser, what: str) -> None:
    """The options of a command on the store: data directory, database, ``--json``."""
    data_dir_option(command)
    json_option(command, what)
    database_url_option(command)


def hsm_option(command: argparse.ArgumentParser, text: str, *, required: bool = False) -> None:
    command.add_argument(
        "--hsm",
        metavar="URI",
        required=required,
        default=None,
        help=f"{text}: pkcs11:token=T;object=LABEL?module-path=LIB&pin-source=file:PATH"
        " (docs/operations.md, Keys in a hardware module)",
    )


def family(commands: Any, name: str, text: str, dest: str) -> Any:
    """A family's command (``recordseal NAME``) and the ``add_subparsers()`` of its own."""
    return commands.add_parser(name, help=text).add_subparsers(
        dest=dest, required=True, metavar="COMMAND"
    )


def path_option(
    command: argparse.ArgumentParser, *flags: str, metavar: str, text: str, **more: Any
) -> None:
    """An option naming a file or directory (``--to DIR``, ``--receipt FILE``)."""
    command.add_argument(*flags, type=Path, metavar=metavar, help=text, **more)
