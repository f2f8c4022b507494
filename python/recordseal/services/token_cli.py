"""``recordseal token list`` and ``recordseal token revoke`` (docs/records.md, "API tokens").

``list`` prints one token a line, tab-separated under a header: id, tenant, label, created,
last used, status (never the token, which only its holder has); with ``--json``, a list of
objects with the same members. ``revoke ID`` revokes the
live token with that id, of any tenant (``--tenant`` narrows it, and is needed in the unlikely
case that two tenants hold tokens with the same 64-bit id); every service process refuses it
within the token cache time (1 s). Exit codes: 0 done, 1 no such live token, 2 bad input.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import re
import sys
from collections.abc import Awaitable, Callable
from typing import TypeVar

from recordseal.services.tokens import TokenService
from recordseal.settings import Settings
from recordseal.storage.backends import open_store
from recordseal.storage.rows import TokenRow

T = TypeVar("T")
TOKEN_ID = re.compile(r"[0-9a-fA-F]{16}")
COLUMNS = ("id", "tenant", "label", "created", "last used", "status")


def _with_tokens(settings: Settings, action: Callable[[TokenService], Awaitable[T]]) -> T:
    async def run() -> T:
        store = open_store(settings)
        await store.open()
        try:
            return await action(TokenService(store.tokens))
        finally:
            await store.close()

    return asyncio.run(run())


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


def token_list(args: argparse.Namespace, settings: Settings) -> int:
    rows = _with_tokens(settings, lambda tokens: tokens.list(args.tenant))
    if args.json:
        print(json.dumps([dataclasses.asdict(row) for row in rows], indent=2))
        return 0
    for line in format_rows(rows):
        print(line)
    return 0


def token_revoke(args: argparse.Namespace, settings: Settings) -> int:
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
