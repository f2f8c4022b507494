"""``recordseal doctor``: what would stop the service or its bundles, each with a fix hint.

Checks, in order: the data directory, the keys (readable by this user), the store (reachable,
migrated), each witness and time-stamping authority (answering; an authority's token verifies
against its roots), the port (free, or held by a recordseal answering ``/health``) and the
clock (within :data:`MAX_SKEW_SECONDS` of every witness's ``Date`` and authority's token).
Exit 1 when a check fails; nothing is written.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recordseal.crypto.hsm import (
    AES256,
    ED25519,
    HMAC_SHA256,
    REFERENCE_SUFFIX,
    KeyLocationError,
    read_reference,
)
from recordseal.ledger.log_keys import has_log_key
from recordseal.ops.config import add_settings_options, in_force, taken_from_service
from recordseal.settings import AuthoritySetting, Settings, WitnessSetting
from recordseal.storage.backends import schema_status
from recordseal.tlog import TlogError
from recordseal.web.preflight import port_refusal

if TYPE_CHECKING:  # httpx loads when a check needs the network, not with every command
    import httpx

#: Largest difference tolerated between this host's clock and a witness's or authority's.
MAX_SKEW_SECONDS = 30.0
#: Seconds each witness or authority has to answer.
ANSWER_SECONDS = 5.0
#: The kind of key each module reference of keys/ names (docs/operations.md, "Keys in a
#: hardware module"), by the start of its file name.
MODULE_KEY_KINDS = (
    ("log-signing", ED25519),
    ("kek", AES256),
    ("subject-index", HMAC_SHA256),
    ("panel-secrets", AES256),
)


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def check_keys(settings: Settings) -> list[Check]:
    keys = settings.data_dir / "keys"
    if not settings.data_dir.is_dir():
        fix = "check --data-dir / RECORDSEAL_DATA_DIR (recordseal serve creates it at first start)"
        return [Check("data directory", False, f"{settings.data_dir} does not exist", fix)]
    if not keys.is_dir():
        fix = (
            "restore keys/ from its backup (backed up apart from the data); a new deployment"
            " gets its keys at the first `recordseal serve`"
        )
        return [Check("keys", False, f"{keys} does not exist", fix)]
    # The key without which the service cannot sign checkpoints (others are made when first
    # needed): a file, or a reference to a key in a module.
    problems = [] if has_log_key(keys) else ["the log key (log-signing.ed25519) is missing"]
    files = sorted(path for path in keys.iterdir() if path.is_file())
    for path in files:
        try:
            if not path.read_bytes():
                problems.append(f"{path.name} is empty")
        except OSError as error:
            problems.append(f"{path.name}: {error.strerror}")
    if problems:
        fix = (
            "run as the service's user (the keys are owner-only), or restore the files from the"
            " keys' backup"
        )
        return [Check("keys", False, f"{keys}: {'; '.join(problems)}", fix)]
    checks = [Check("keys", True, f"{keys}: {len(files)} files readable")]
    in_module = [path for path in files if path.suffix == REFERENCE_SUFFIX]
    if in_module:
        checks.append(_check_module_keys(in_module))
    return checks


def _check_module_keys(references: list[Path]) -> Check:
    """Every key keys/ names in a hardware module is there and opens with its PIN."""
    problems = []
    for path in references:
        kind = next((k for prefix, k in MODULE_KEY_KINDS if path.name.startswith(prefix)), None)
        if kind is None:
            continue
        try:
            read_reference(path).key(kind)
        except KeyLocationError as error:
            problems.append(f"{path.name}: {error}")
    if problems:
        fix = (
            "check the module's library (module-path), its configuration (e.g. SOFTHSM2_CONF),"
            " the PIN file (pin-source) and that the token holds the labels; docs/operations.md,"
            " Keys in a hardware module"
        )
        return Check("keys in a module", False, "; ".join(problems), fix)
    return Check("keys in a module", True, f"{len(references)} keys found in their modules")


def check_store(settings: Settings) -> Check:
    try:
        status = asyncio.run(schema_status(settings))
    except Exception as error:  # this check's boundary: any driver's failure is the finding
        reason = f"{type(error).__name__}: {error}"
        fix = "check RECORDSEAL_DATABASE_URL, that the database server runs and accepts this host"
        return Check("store", False, f"not reachable ({reason})", fix)
    if status.state == "up_to_date":
        return Check("store", True, status.describe())
    fix = {
        "behind": "run `recordseal migrate` (serve migrates at start too)",
        "absent": "run `recordseal migrate` (serve migrates at start too)",
        "ahead": "run the recordseal release that migrated this store, or a newer one",
    }[status.state]
    return Check("store", False, status.describe(), fix)


async def _witness(witness: WitnessSetting, client: httpx.AsyncClient, skews: list[float]) -> Check:
    import httpx

    name = f"witness {witness.name}"
    try:
        answer = await client.get(witness.url)
    except httpx.HTTPError as error:
        fix = f"start the witness at {witness.url}, or correct its url in witnesses"
        return Check(name, False, f"{witness.url} did not answer ({error!r})", fix)
    if answer.status_code >= 500:
        fix = "look at the witness's own log"
        return Check(name, False, f"{witness.url} answered {answer.status_code}", fix)
    if "date" in answer.headers:
        skews.append(_skew(parsedate_to_datetime(answer.headers["date"])))
    return Check(name, True, f"{witness.url} answers")


async def _authority(
    authority: AuthoritySetting, client: httpx.AsyncClient, skews: list[float]
) -> Check:
    from recordseal.network.tsa_client import timestamp_root

    name = f"time-stamping authority {authority.name}"
    try:
        stamp = await timestamp_root(
            authority.url, bytes(32), authority.roots(), http=client,
            timeout_seconds=ANSWER_SECONDS,
        )  # fmt: skip
    except TlogError as error:
        fix = "check that the authority runs, its url, and that roots_pem holds its CA"
        return Check(name, False, str(error), fix)
    skews.append(_skew(stamp.gen_time))
    return Check(name, True, f"{authority.url} answers with a token its roots verify")


def _skew(remote: datetime) -> float:
    return datetime.now(UTC).timestamp() - remote.timestamp()


async def check_remotes(settings: Settings) -> list[Check]:
    """The witnesses and authorities, then the clock against what they said the time was."""
    import httpx

    skews: list[float] = []
    async with httpx.AsyncClient(timeout=ANSWER_SECONDS) as client:
        found = [await _witness(w, client, skews) for w in settings.witnesses]
        found += [await _authority(a, client, skews) for a in settings.timestamp_authorities]
    if not skews:
        return [*found, Check("clock", True, "not compared: no witness or authority answered")]
    worst = max(skews, key=abs)
    if abs(worst) > MAX_SKEW_SECONDS:
        way = "ahead of" if worst > 0 else "behind"
        detail = f"{abs(worst):.0f} s {way} a witness or authority (at most {MAX_SKEW_SECONDS:.0f})"
        fix = "synchronise the clock (NTP: `timedatectl status`, chrony or systemd-timesyncd)"
        return [*found, Check("clock", False, detail, fix)]
    compared = f"within {abs(worst):.0f} s of {len(skews)} witnesses and authorities"
    return [*found, Check("clock", True, compared)]


def check_port(settings: Settings) -> Check:
    import httpx

    refusal = port_refusal(settings.host, settings.port)
    where = f"{settings.host}:{settings.port}"
    if refusal is None:
        return Check("port", True, f"{where} is free")
    try:
        health = httpx.get(f"http://{where}/health", timeout=ANSWER_SECONDS)
        if health.status_code == 200 and health.json() == {"status": "ok"}:
            detail = f"{where} is held by a service answering /health as recordseal does"
            return Check("port", True, detail + " (this deployment, running?)")
    except (httpx.HTTPError, ValueError):
        pass
    fix = "stop what listens there (`ss -ltnp`), or choose another --port / RECORDSEAL_PORT"
    return Check("port", False, refusal.message, fix)


def diagnose(settings: Settings) -> list[Check]:
    found = check_keys(settings)
    if settings.data_dir.is_dir() or settings.database_url:
        found.append(check_store(settings))
    found += asyncio.run(check_remotes(settings))
    found.append(check_port(settings))
    return found


HELP = "check keys, store, witnesses, authorities, port and clock"
DESCRIPTION = (
    "Check keys, store, witnesses, time-stamping authorities, port and clock, each with a fix;"
    " exit 1 when something is wrong."
)


def register(commands: Any) -> None:
    doctor = commands.add_parser("doctor", help=HELP, description=DESCRIPTION)
    add_settings_options(doctor, "the checks")
    doctor.set_defaults(run=_doctor)


def _doctor(args: argparse.Namespace) -> int:
    resolved, record = in_force(args)
    found = diagnose(resolved.settings)
    if record is not None:
        taken = ", ".join(taken_from_service(resolved)) or "none (this shell sets them all)"
        where = resolved.settings.data_dir / "service.json"
        detail = f"from {where} (the service started at {record.started_at}): {taken}"
        found.insert(0, Check("settings", True, detail))
    healthy = all(check.ok for check in found)
    if args.json:
        print(json.dumps({"ok": healthy, "checks": [asdict(c) for c in found]}, indent=2))
    else:
        for check in found:
            print(f"{'ok  ' if check.ok else 'FAIL'}  {check.name}: {check.detail}")
            if check.fix:
                print(f"      fix: {check.fix}")
        print("recordseal: all checks passed" if healthy else "recordseal: something is wrong")
    return 0 if healthy else 1
