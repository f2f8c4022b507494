"""``recordseal token create|list|revoke`` (docs/records.md, "API tokens").

``create`` prints the token alone on the last line of standard output (shown once).
``list`` prints one token a line, tab-separated under a header: id, tenant, label, created,
last used, status (never the token, which only its holder has); with ``--json``, a list of
objects with the same members. ``revoke ID`` revokes the
live token with that id, of any tenant (``--tenant`` narrows it, and is needed in the unlikely
case that two tenants hold tokens with the same 64-bit id); every service process refuses it
within the token cache time (1 s). Exit codes: 0 done, 1 no such live token, 2 bad input.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from recordseal import datadir
from recordseal.ops.options import create_data_dir_option, family, store_options
from recordseal.ops.stores import print_json, settings_of, with_store
from recordseal.services.errors import ServiceError
from recordseal.services.tokens import TokenService
from recordseal.settings import Settings
from recordseal.storage.backends import open_store
from recordseal.storage.rows import TokenRow

T = TypeVar("T")
TOKEN_ID = re.compile(r"[0-9a-fA-F]{16}")
COLUMNS = ("id", "tenant", "label", "created", "last used", "status")


def register(commands: Any) -> None:
    token = family(commands, "token", "API tokens: create, list, revoke", "token_command")
    create = token.add_parser("create", help="create a tenant-scoped API token")
    create.add_argument("--tenant", required=True, help="the tenant the token acts for")
    create.add_argument("--label", default="", help="a note on what the token is for")
    store_options(create, "tenant, label and token")
    create_data_dir_option(create)
    create.set_defaults(run=token_create)
    listing = token.add_parser(
        "list", help="list API tokens: id, tenant, label, created, last used (never the token)"
    )
    listing.add_argument("--tenant", default=None, help="only this tenant's tokens")
    store_options(listing, "the tokens")
    listing.set_defaults(run=token_list)
    revoke = token.add_parser(
        "revoke", help="revoke a token by its id; every service process refuses it within 1 s"
    )
    revoke.add_argument("token_id", metavar="ID", help="the id `token list` shows")
    revoke.add_argument("--tenant", default=None, help="the tenant the token belongs to")
    store_options(revoke, "the revoked token")
    revoke.set_defaults(run=token_revoke)


async def create_token(settings: Settings, tenant: str, label: str) -> str:
    """A new API token of ``tenant``, in the store the settings name."""
    store = open_store(settings)
    await store.open()
    try:
        return await TokenService(store.tokens).create(tenant, label)
    finally:
        await store.close()


def token_create(args: argparse.Namespace) -> int:
    settings = settings_of(args, create=args.create_data_dir)
    datadir.secure(settings.data_dir)
    try:
        token = with_store(
            settings, lambda s: TokenService(s.tokens).create(args.tenant, args.label)
        )
    except ServiceError as error:
        print(f"recordseal: {error} ({error.code})", file=sys.stderr)
        return 2
    if args.json:
        print_json({"tenant": args.tenant, "label": args.label, "token": token})
        return 0
    print(f"API token for tenant {args.tenant!r} (shown once; keep it secret):", file=sys.stderr)
    print(token)
    return 0


def _with_tokens(settings: Settings, action: Callable[[TokenService], Awaitable[T]]) -> T:
    return with_store(settings, lambda store: action(TokenService(store.tokens)))


def _cell(value: str) -> str:
    """A label as one tab-free cell (labels are free text)."""
    return " ".join(value.split()) or "-"


def format_rows(rows: list[TokenRow]) -> list[str]:
    lines = ["\t".join(COLUMNS)]
    for row in rows:
        status = f"revoked {row.revoked_at}" if row.revoked_at else "active"
        cells = (
            row.token_id,
            row.tenant,
            _cell(row.label),
            row.created_at,
            row.last_used_at or "never",
            status,
        )
        lines.append("\t".join(cells))
    return lines


def token_list(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    rows = _with_tokens(settings, lambda tokens: tokens.list(args.tenant))
    if args.json:
        print(json.dumps([dataclasses.asdict(row) for row in rows], indent=2))
        return 0
    for line in format_rows(rows):
        print(line)
    return 0


def token_revoke(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    token_id = args.token_id.lower()
    if not TOKEN_ID.fullmatch(token_id):
        print(
            f"recordseal: {args.token_id!r} is not a token id: 16 hexadecimal characters, as"
            " `recordseal token list` shows them",
            file=sys.stderr,
        )
        return 2

    async def revoke(tokens: TokenService) -> tuple[list[TokenRow], int]:
        matching = [row for row in await tokens.list(args.tenant) if row.token_id == token_id]
        live = {row.tenant for row in matching if row.revoked_at is None}
        if len(live) != 1:
            return matching, 0
        return matching, await tokens.revoke(live.pop(), token_id)

    matching, revoked = _with_tokens(settings, revoke)
    live = sorted({row.tenant for row in matching if row.revoked_at is None})
    if len(live) > 1:
        print(
            f"recordseal: tokens of tenants {', '.join(live)} have the id {token_id}:"
            " pass --tenant to say which",
            file=sys.stderr,
        )
        return 2
    if not revoked:
        scope = f" of tenant {args.tenant!r}" if args.tenant else ""
        state = "is already revoked" if matching else "does not exist"
        print(f"recordseal: token {token_id}{scope} {state}", file=sys.stderr)
        return 1
    if args.json:
        within = settings.token_cache_seconds
        print(json.dumps({"revoked": token_id, "tenant": live[0], "within_seconds": within}))
        return 0
    print(
        f"revoked token {token_id} of tenant {live[0]!r}; every service process refuses it"
        f" within {settings.token_cache_seconds:g} s"
    )
    return 0
