"""``recordseal serve``: prepare once, then run the workers (granian) with one logging setup.

Before any worker starts: logging is configured (``RECORDSEAL_LOG_FORMAT``), the data directory
is made owner-only, the schema is migrated (a database newer than the code is refused), the
tenant seed file is loaded into the database (a conflict with it stops the start, naming the
row), the metric files get a fresh directory (prometheus_client's multiprocess mode), the demo
witness starts if asked, and ``service.json`` records the witnesses and quorum in force and
the host and port served (``panel link`` builds its URL from them). Workers read their
settings from the environment this process sets.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import os
import shutil
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

import msgspec

from recordseal import core, datadir, logs
from recordseal.invocation import this_command
from recordseal.ledger.errors import RecordServiceError
from recordseal.settings import Settings
from recordseal.storage.backends import open_journal, open_store

#: The modules of the workers' application (``recordseal.web.asgi`` builds it on import).
WORKER_MODULE = "recordseal.web.app"
#: Seconds a worker has to finish its requests after a stop signal before it is killed.
WORKERS_KILL_TIMEOUT = 10
METRICS_ENV = "PROMETHEUS_MULTIPROC_DIR"
log = logging.getLogger("recordseal.serve")


class ConfigError(RecordServiceError, ValueError):
    """A setting that cannot be used; ``setting`` names it (the message starts with it)."""

    def __init__(self, setting: str, rule: str) -> None:
        super().__init__(f"{setting}: {rule}")
        self.setting = setting
        self.rule = rule


async def _migrate(settings: Settings) -> None:
    from recordseal.panel.bootstrap import BootstrapError, apply_seed
    from recordseal.panel.stored_tenants import StoredTenantStore

    store = open_store(settings)
    await store.open()  # opening migrates, or refuses a newer schema
    try:
        await apply_seed(settings.panel_tenant_seed, StoredTenantStore(store.hierarchy))
    except BootstrapError as error:
        raise ConfigError("RECORDSEAL_PANEL_TENANT_SEED", str(error)) from None
    finally:
        await store.close()


def _metrics_directory(stack: ExitStack) -> None:
    """A fresh directory for the workers' metric files (before prometheus_client loads)."""
    if "prometheus_client" in sys.modules:
        raise RuntimeError("prometheus_client was imported before its multiprocess directory")
    configured = os.environ.get(METRICS_ENV)
    if configured:
        directory = Path(configured)
        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob("*.db"):  # files of an earlier run would be added up
            stale.unlink()
    else:
        directory = Path(tempfile.mkdtemp(prefix="recordseal-metrics-"))
        stack.callback(shutil.rmtree, directory, ignore_errors=True)
    os.environ[METRICS_ENV] = str(directory)


def _witnesses(settings: Settings) -> list[dict[str, object]]:
    """The witnesses of the settings (checked as they were read) as the service record and
    the workers' ``RECORDSEAL_WITNESSES`` hold them."""
    return [msgspec.to_builtins(witness) for witness in settings.witnesses]


def _family_vkeys(settings: Settings, data_dir: Path) -> list[str]:
    """The service's log keys under its origin: the demo witness's log families (one per
    log key; followed while it runs, so it knows a key ``keys rotate log`` adds). Public
    halves only: a key in a module is not opened here, in the process that forks workers."""
    from recordseal.ledger.log_keys import log_keys

    return [key.signer(settings.origin).verifier().vkey for key in log_keys(data_dir / "keys")]


def serve(settings: Settings, workers: int, demo_witness_dir: Path | None) -> int:
    from granian.constants import Interfaces
    from granian.server import Server

    from recordseal.clock import utc_now

    try:
        log_config = logs.dict_config(settings.log_format, settings.log_level, log.name)  # type: ignore[arg-type]
    except ValueError as error:
        raise ConfigError("RECORDSEAL_LOG_FORMAT or RECORDSEAL_LOG_LEVEL", str(error)) from None
    if settings.witness_quorum < 1:
        raise ConfigError("RECORDSEAL_WITNESS_QUORUM", "must be 1 or more")
    with ExitStack() as stack:
        _metrics_directory(stack)  # first: before anything imports prometheus_client
        logs.configure(settings.log_format, settings.log_level, log.name)  # type: ignore[arg-type]
        witnesses = _witnesses(settings)
        open_store(settings)  # refuses a database URL of another kind before anything starts
        open_journal(settings)  # ... and a journal database on the store's own server
        data_dir = datadir.secure(settings.data_dir)
        os.environ["RECORDSEAL_DATA_DIR"] = str(data_dir)
        if settings.database_url:
            os.environ["RECORDSEAL_DATABASE_URL"] = settings.database_url
        asyncio.run(_migrate(settings))
        _announce_start(settings, data_dir, workers)  # before the demo witness's own lines
        if demo_witness_dir is not None:
            from recordseal.demo_witness import demo_witness

            entry = stack.enter_context(
                demo_witness(
                    datadir.secure(demo_witness_dir),
                    lambda: _family_vkeys(settings, data_dir),
                    settings.log_format,
                    meanwhile=_preload_workers,  # while the witness starts on another core
                )
            )
            witnesses.append(entry)
            os.environ["RECORDSEAL_WITNESSES"] = json.dumps(witnesses)
        else:
            _preload_workers()
        datadir.write_service_record(
            data_dir,
            datadir.ServiceRecord(
                format=datadir.SERVICE_FORMAT,
                witnesses=[dict(w) for w in witnesses],
                timestamp_authorities=msgspec.to_builtins(settings.timestamp_authorities),
                quorum=settings.witness_quorum,
                started_at=utc_now(),
                host=settings.host,
                port=settings.port,
            ),
        )
        _announce_witnesses(settings, witnesses)
        Server(
            "recordseal.web.asgi:app",
            address=settings.host,
            port=settings.port,
            interface=Interfaces.ASGI,
            workers=workers,
            log_access=False,
            log_dictconfig=log_config,
            # A worker still starting when the stop signal comes can miss it (granian 2.8: a
            # signal that comes while it imports reaches the handler it inherited from this
            # process by fork, and a second one before it serves blocks it for good, see
            # web/orphan_guard.py): after this many seconds it is killed. In-flight writes are
            # never acknowledged before their commit, so nothing acknowledged is lost.
            workers_kill_timeout=WORKERS_KILL_TIMEOUT,
        ).serve()
    return 0


def _preload_workers() -> None:
    """Import what every worker imports, once, here: granian forks the workers from this
    process, so each starts with it loaded instead of importing it again (about a second of
    a worker's start). Only modules: each worker still builds its application, from the
    environment this process has set by then. A module that fails to import is left to the
    workers, which report it as they did before."""
    try:
        importlib.import_module(WORKER_MODULE)
        from litestar import Litestar

        Litestar(logging_config=None)  # its plugins' modules (pydantic) load with a first app
    # Outermost boundary of an optional preload: whatever fails here, the workers' own
    # import says what is wrong.
    except Exception:
        log.debug("serve.preload_failed", exc_info=True)


def _announce_start(settings: Settings, data_dir: Path, workers: int) -> None:
    store = "PostgreSQL" if settings.database_url else "SQLite"
    log.info(
        "serve.starting",
        extra={"data_dir": str(data_dir), "store": store, "core": core.BACKEND},
    )
    log.info(
        "serve.listening",
        extra={"url": f"http://{settings.host}:{settings.port}", "workers": workers},
    )


def _announce_witnesses(settings: Settings, witnesses: list[dict[str, object]]) -> None:
    for witness in witnesses:
        log.info("serve.witness", extra={"witness": witness["name"], "url": witness["url"]})
    if not witnesses:
        log.warning(
            "serve.no_witness",
            extra={
                "note": "no witness cosigns checkpoints: bundles verify INCOMPLETE"
                " (set RECORDSEAL_WITNESSES, or --demo-witness on one machine)"
            },
        )
    command = this_command()
    log.info(
        "serve.hint",
        extra={"next": f"{command} token create --data-dir {settings.data_dir} --tenant <tenant>"},
    )
