"""The ``recordseal`` command line, assembled from its families.

Each family is a module with ``register(commands)``, which adds its subcommands to the
top-level ``add_subparsers()`` object and sets each one's ``run`` handler: the service's
commands live in ``recordseal/ops/``; the client's (``ingest``, ``disclose``, ``bundle``),
the verifier's (``verify``, ``verify-receipt``) and the witness's stay with their packages
(the verifier ships as its own wheel). To add a family, write its module and name it in
:data:`FAMILIES`.

Every command that prints a result takes ``--json``. Exit codes: 0 success, 2 a refusal or
bad setting (one line on standard error), 64 a usage error, 130 interrupted (Ctrl-C); each
family's module states its own others (docs/operations.md, docs/client.md, docs/bundle.md).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from recordseal import __version__, datadir
from recordseal.client import commands as client_commands
from recordseal.crypto.hsm import KeyLocationError
from recordseal.datadir import DataDirError
from recordseal.interrupts import EXIT_INTERRUPTED
from recordseal.ops import (
    config,
    data,
    doctor,
    fleet,
    keys,
    panel,
    records,
    recover,
    restore,
    serve,
    streams,
    subjects,
    tenants,
    tokens,
)
from recordseal.ops.bench import command as bench
from recordseal.ops.stores import MissingDataDir
from recordseal.services.header_keys import KeyUnavailable
from recordseal.services.key_admin import KeyRefused
from recordseal.settings import CONFIG_VARIABLE, SettingsError, unknown_variables
from recordseal.storage.backends import BackendError
from recordseal.storage.schema_version import SchemaTooNew
from recordseal.verify.cli import UsageParser
from recordseal.witness.cli import add_witness_parser

#: The families, in the order ``recordseal --help`` lists them.
FAMILIES: tuple[Callable[[Any], None], ...] = (
    serve.register,
    config.register,
    doctor.register,
    data.register,
    restore.register,
    recover.register,
    tenants.register,
    tokens.register,
    keys.register,
    panel.register,
    streams.register,
    records.register,
    subjects.register,
    client_commands.register,
    add_witness_parser,
    fleet.register,
    bench.register,
)

#: Refusals any command may meet: one line on standard error, exit 2.
REFUSALS = (
    SettingsError,  # naming the variable and the rule
    BackendError,
    SchemaTooNew,
    DataDirError,
    MissingDataDir,
    KeyRefused,
    KeyUnavailable,
    KeyLocationError,
)


class _OneLineEach(argparse.HelpFormatter):
    """Help wide enough that every family stays on one line (argparse measures the commands
    two columns short of where it indents them)."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=24, width=100)

    def add_argument(self, action: argparse.Action) -> None:
        super().add_argument(action)
        if action.help is not argparse.SUPPRESS:
            self._action_max_length += 2


def parser() -> UsageParser:
    top = UsageParser(
        prog="recordseal",
        description="recordseal: the record service, its tokens and witnesses",
        formatter_class=_OneLineEach,
    )
    top.add_argument(
        "--version", action="version", version=f"recordseal {__version__}", help="print the version"
    )
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in FAMILIES:
        register(commands)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    from recordseal.demo_witness import DemoWitnessError
    from recordseal.serve import ConfigError

    datadir.owner_only()
    args = parser().parse_args(argv)
    if getattr(args, "config", None) is not None:  # read by every process of the command
        os.environ[CONFIG_VARIABLE] = str(args.config.absolute())
    for warning in unknown_variables():
        print(f"recordseal: warning: {warning}", file=sys.stderr)
    try:
        result: int = args.run(args)
    except (*REFUSALS, ConfigError, DemoWitnessError) as error:
        print(f"recordseal: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # a command that does not handle Ctrl-C itself
        print("recordseal: interrupted (Ctrl-C)", file=sys.stderr)
        return EXIT_INTERRUPTED
    return result


if __name__ == "__main__":
    sys.exit(main())
