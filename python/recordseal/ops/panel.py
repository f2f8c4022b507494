"""``recordseal panel link``: a one-time passkey registration link, the first operator's way
into the panel."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from recordseal import datadir
from recordseal.ops.options import create_data_dir_option, family, store_options
from recordseal.ops.stores import data_dir_for, print_json, with_store
from recordseal.settings import from_env

#: How long a registration link works.
LINK_SECONDS = 15 * 60


def register(commands: Any) -> None:
    panel = family(commands, "panel", "operator panel: link", "panel_command")
    link = panel.add_parser(
        "link", help="print a one-time passkey registration link (the first operator's way in)"
    )
    link.add_argument(
        "--role",
        choices=["operator", "viewer"],
        default="operator",
        help="the role the passkey gets (operator)",
    )
    link.add_argument(
        "--base-url",
        default=None,
        help="the panel's address as the browser reaches it (default: the first"
        " RECORDSEAL_PANEL_ORIGINS, else built from --host and --port, else from the host and"
        " port the service last started with (DATA_DIR/service.json), else from the settings)",
    )
    link.add_argument("--host", default=None, help="the service's host (RECORDSEAL_HOST)")
    link.add_argument("--port", type=int, default=None, help="the service's port (RECORDSEAL_PORT)")
    store_options(link, "the link")
    create_data_dir_option(link)
    link.set_defaults(run=_panel_link)


def _panel_link(args: argparse.Namespace) -> int:
    from recordseal.panel.passkey_store import PasskeyStore
    from recordseal.web.panel.passkey_config import create_registration_link, link_base_url

    settings = from_env(data_dir=args.data_dir, database_url=args.database_url)
    # Where the service listens: the options, else what its last start recorded
    # (service.json), else the settings of this shell.
    served = datadir.read_service_record(settings.data_dir)
    host = args.host or (served.host if served else None)
    port = args.port or (served.port if served else None)
    settings = from_env(
        data_dir=args.data_dir, database_url=args.database_url, host=host, port=port
    )
    data_dir_for(settings, args.create_data_dir)
    datadir.secure(settings.data_dir)
    base_url = args.base_url or link_base_url(settings)
    url = with_store(
        settings,
        lambda store: create_registration_link(PasskeyStore(store.panel), args.role, base_url),
    )
    if args.json:
        print_json({"url": url, "role": args.role, "expires_in_seconds": LINK_SECONDS})
        return 0
    print("one-time passkey registration link (15 minutes, single use):", file=sys.stderr)
    print(url)
    return 0
