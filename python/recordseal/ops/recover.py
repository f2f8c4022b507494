"""``recordseal recover``: with the service stopped, after a restore fenced streams or logs,
declare the lost sequence numbers and start successor logs (``ledger/recovery.py``)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

from recordseal import logs
from recordseal.ops.options import store_options
from recordseal.ops.stores import keys_dir, print_json, settings_of
from recordseal.services.header_keys import KeyUnavailable
from recordseal.settings import Settings
from recordseal.storage.backends import open_journal, open_store

if TYPE_CHECKING:  # the ledger loads the metrics, which ``serve`` sets up first
    from recordseal.ledger.recovery import RecoveryReport


def register(commands: Any) -> None:
    recover = commands.add_parser(
        "recover",
        help="after a restore: declare losses, start successor logs",
        description="With the service stopped, after a restore or failover fenced streams or"
        " logs: declare the lost sequence numbers and start successor logs"
        " (docs/continuity.md).",
    )
    store_options(recover, "the gaps declared, the logs succeeded and what stays fenced")
    recover.set_defaults(run=_recover)


def _recover(args: argparse.Namespace) -> int:
    from recordseal.ledger.log_keys import has_log_key
    from recordseal.ledger.recovery import ServiceRunning

    settings = settings_of(args)
    open_store(settings)  # refuses a database URL of another kind,
    open_journal(settings)  # and a journal database on the store's own server
    if not has_log_key(keys_dir(settings)):
        print(
            f"recordseal: recover signs with the service's keys; {keys_dir(settings)}"
            " lacks the log key (log-signing.ed25519, or log-signing.pkcs11 for a key in a"
            " module): restore the keys (backed up apart) first; nothing was written",
            file=sys.stderr,
        )
        return 2
    # What the ledger logs (a fenced stream, say) goes to the log on standard error, in the
    # service's format; the answer below is sentences.
    logs.configure(settings.log_format, settings.log_level)  # type: ignore[arg-type]
    try:
        report = asyncio.run(run_recover(settings))
    except KeyUnavailable as missing:
        print(f"recordseal: {missing}", file=sys.stderr)
        return 2
    except ServiceRunning as running:
        print(
            f"recordseal: {running}: stop every service process of this store before"
            " `recordseal recover`; nothing was written",
            file=sys.stderr,
        )
        return 2
    if args.json:
        print_json(report.as_json())
    else:
        _print_report(report, args)
    return 1 if report.refused else 0


def _print_report(report: RecoveryReport, args: argparse.Namespace) -> None:
    for line in report.done():
        print(f"recordseal: {line}")
    for name, why in report.refused:
        print(f"recordseal: {name} stays fenced: {why}", file=sys.stderr)
    if not (report.changed or report.refused):
        print("recordseal: nothing is fenced; nothing to recover")
    for line in report.for_auditors():
        print(f"recordseal: {line}")
    if report.successions:
        print(f"recordseal: run now: {export_command(args)}")


def export_command(args: argparse.Namespace) -> str:
    """The ``keys export`` command for the same data directory and store as ``args``."""
    where = [] if args.data_dir is None else ["--data-dir", str(args.data_dir)]
    if args.database_url:
        where += ["--database-url", '"$RECORDSEAL_DATABASE_URL"']
    return " ".join(["recordseal", "keys", "export", *where])


async def run_recover(settings: Settings) -> RecoveryReport:
    """``ledger.recovery.recover`` with the store, the journal and the keys the settings name."""
    from recordseal.ledger.continuity import Continuity
    from recordseal.ledger.log_keys import LogKeyring
    from recordseal.ledger.recovery import recover
    from recordseal.services.header_keys import HeaderKeys

    store = open_store(settings)
    continuity = Continuity(open_journal(settings))  # refuses a journal on the store's server
    await store.open()
    try:
        log_keys = LogKeyring.of_directory(keys_dir(settings))
        header_keys = await HeaderKeys.load(store.records, keys_dir(settings))
        return await recover(
            store, continuity, header_keys.active.signer, log_keys.signing, settings.origin
        )
    finally:
        await continuity.close()
        await store.close()
