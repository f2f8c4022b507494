"""``recordseal keys export|rotate|revoke|init|list``: the service's key material.

``export`` writes the public key directory and the witness trust store for offline
verifiers; ``rotate`` and ``revoke`` (``ops/key_rotation.py``) change the signing keys while
the service runs; ``init`` makes a first key inside a hardware module; ``list`` shows them all.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

from recordseal import datadir
from recordseal.crypto.hsm import KeyLocationError
from recordseal.ops import key_rotation
from recordseal.ops.key_rotation import hsm_of
from recordseal.ops.options import (
    create_data_dir_option,
    data_dir_option,
    database_url_option,
    family,
    hsm_option,
    json_option,
    store_options,
)
from recordseal.ops.stores import keys_dir, print_json, settings_of, with_store
from recordseal.services.key_admin import KeyRefused
from recordseal.settings import Settings, from_env
from recordseal.settings.served import recorded_trust

#: Modes of the files ``keys export`` writes: public material, readable by anyone.
EXPORT_MODE = 0o644


def register(commands: Any) -> None:
    keys = family(
        commands, "keys", "key material: export, rotate, revoke, init, list", "keys_command"
    )
    _register_export(keys)
    key_rotation.register(keys)
    init = keys.add_parser(
        "init",
        help="generate the first header, log or key-encryption key inside a hardware module"
        " (PKCS#11) and record where it is; the key never leaves the module",
    )
    init.add_argument(
        "purpose",
        choices=["header", "log", "kek"],
        help="header: the header-signing key; log: the checkpoint key; kek: the"
        " key-encryption key (with the subject index and panel secret keys beside it)",
    )
    hsm_option(init, "the key to make, as an RFC 7512 URI", required=True)
    store_options(init, "what was made")
    create_data_dir_option(init)
    init.set_defaults(run=_keys_init)
    key_list = keys.add_parser(
        "list", help="every key: id, purpose, where it lives, validity, revocation"
    )
    store_options(key_list, "the keys")
    key_list.set_defaults(run=_keys_list)


def _register_export(keys: Any) -> None:
    export = keys.add_parser(
        "export", help="write the key directory and the witness trust store for offline use"
    )
    data_dir_option(export)
    export.add_argument(
        "--keys-out",
        type=Path,
        default=Path("recordseal-keys.json"),
        help="where to write the key directory (recordseal-keys.json)",
    )
    export.add_argument(
        "--trust-out",
        type=Path,
        default=Path("recordseal-trust.json"),
        help="where to write the trust store of the service's witnesses (recordseal-trust.json)",
    )
    json_option(export, "what was written")
    database_url_option(export)
    export.set_defaults(run=_keys_export)


async def _key_directory(store: Any, settings: Settings) -> dict[str, object]:
    from recordseal.ledger.log_keys import LogKeyring
    from recordseal.services.keys import key_directory

    log_keys = LogKeyring.of_directory(keys_dir(settings))
    return await key_directory(store, log_keys.every, log_keys.compromise_of)


def _keys_export(args: argparse.Namespace) -> int:
    from recordseal.services.keys import trust_store

    settings = from_env(data_dir=args.data_dir, database_url=args.database_url)
    keys = with_store(settings, lambda store: _key_directory(store, settings))
    record = datadir.read_service_record(settings.data_dir)
    if record is not None:
        witnesses, authorities, quorum = recorded_trust(record)
        source = f"the service's configuration ({settings.data_dir / datadir.SERVICE_FILE})"
    else:
        witnesses, authorities = settings.witnesses, settings.timestamp_authorities
        quorum = settings.witness_quorum
        source = "this shell's settings (the service has not started in this data directory)"
    trust = trust_store(witnesses, authorities, quorum)
    for path, document in ((args.keys_out, keys), (args.trust_out, trust)):
        path.write_text(json.dumps(document, indent=2) + "\n")
        path.chmod(EXPORT_MODE)
    witness_names: list[str] = [w.name for w in witnesses]
    counts = _key_counts(keys)
    if args.json:
        print_json(
            {
                "keys": str(args.keys_out),
                "trust": str(args.trust_out),
                **counts,
                "witnesses": witness_names,
                "quorum": quorum,
                "source": source,
            }
        )
        return 0
    listed = (
        f"{_count(counts['logs'], 'log')}, {_count(counts['log_keys'], 'log key')};"
        f" {_count(counts['header_keys'], 'header key')}"
    )
    print(f"key directory: {args.keys_out} ({listed})")
    names = ", ".join(witness_names) or "none: bundles will verify INCOMPLETE"
    print(f"trust store: {args.trust_out} (witnesses: {names}; quorum {quorum})")
    print(f"witnesses from {source}")
    return 0


def _key_counts(keys: dict[str, object]) -> dict[str, int]:
    """Logs and keys apart: a log is listed once per key that signs it (Ed25519 and
    ML-DSA-44, two generations during a rotation)."""
    log_keys: list[Any] = keys["logs"]  # type: ignore[assignment]
    header_keys: list[Any] = keys["keys"]  # type: ignore[assignment]
    logs = len({entry["origin"] for entry in log_keys})
    return {"logs": logs, "log_keys": len(log_keys), "header_keys": len(header_keys)}


def _count(number: int, noun: str) -> str:
    """``1 log``, ``2 logs``: a count with its noun."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _keys_init(args: argparse.Namespace) -> int:
    from recordseal.services.key_custody import init_key

    settings = settings_of(args, create=args.create_data_dir)
    location = hsm_of(args)
    assert location is not None  # --hsm is required
    try:
        made = with_store(
            settings, lambda s: init_key(args.purpose, location, keys_dir(settings), s.records)
        )
    except KeyLocationError as error:
        raise KeyRefused(f"{args.purpose} key", str(error), message=str(error)) from None
    if args.json:
        print_json({"purpose": args.purpose, "made": made})
        return 0
    print(f"recordseal: {made}; its private half never leaves the module")
    return 0


def _keys_list(args: argparse.Namespace) -> int:
    from recordseal.services.key_admin import listing

    settings = settings_of(args)
    keys = with_store(settings, lambda s: listing(s.records, keys_dir(settings)))
    if args.json:
        print_json({"keys": [dataclasses.asdict(k) for k in keys]})
        return 0
    for key in keys:
        state = "active" if key.active else "retired"
        if key.compromised_at:
            state = f"compromised from {key.compromised_at}"
        validity = f"{key.not_before} .. {key.not_after or ''}" if key.purpose == "header" else ""
        algorithm = key.algorithm or ""
        print(
            f"{key.purpose:<7} {algorithm:<9} {key.key_id}  {state:<10} {validity}  {key.location}"
        )
    return 0
