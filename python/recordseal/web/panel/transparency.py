"""The daily transparency log files over HTTP (docs/fleets.md, "Transparency log files"),
``TransparencyController``, behind the panel's sign-on and tenant scope.

- ``GET /transparency/{date}/{tenant}/{fleet}.log``: a tenant's fleet. A tenant-scoped
  session asking for another tenant gets 403 before the file system is touched (the same
  ``tenant_scope`` guard and counters as the tenant views); a legacy session may read every
  tenant's files.
- ``GET /transparency/{date}/{fleet}.log``: a fleet with no tenant (legacy or single-tenant).
  Such files belong to no tenant, so only legacy (operator-admin) sessions may read them
  (the ``tenantless`` guard).

A malformed date or name, or a file that does not exist, is 404. Files are served as
``application/jsonl`` (the format is ``recordseal.verify.transparency``), never cached.
"""

from __future__ import annotations

import logging
import re
from datetime import date
from pathlib import Path

from litestar import Response, get
from litestar.params import FromPath

from recordseal.identifiers import IDENTIFIER
from recordseal.web.controller import DomainController
from recordseal.web.panel.call import Call, PanelCall
from recordseal.web.panel.guards import tenant_scope, tenantless
from recordseal.web.panel.session import PRIVATE_HEADERS

log = logging.getLogger("recordseal.panel.web")

MEDIA_TYPE = "application/jsonl"
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _valid_date(text: str) -> bool:
    if not _DATE.fullmatch(text):
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _serve(call: PanelCall, day: str, tenant: str | None, file_name: str) -> Response[bytes]:
    fleet = file_name.removesuffix(".log")
    root = call.context.transparency_root
    valid = (
        file_name.endswith(".log")
        and IDENTIFIER.fullmatch(fleet) is not None
        and (tenant is None or IDENTIFIER.fullmatch(tenant) is not None)
        and _valid_date(day)
    )
    if root is None or not valid:
        raise call.not_found("transparency_log")
    folder: Path = root / day if tenant is None else root / day / tenant
    try:
        data = (folder / f"{fleet}.log").read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise call.not_found("transparency_log") from None
    return Response(data, media_type=MEDIA_TYPE, headers=PRIVATE_HEADERS)


class TransparencyController(DomainController):
    """The daily transparency log files of the fleets a session may see."""

    @get(
        "/transparency/{day:str}/{tenant_id:str}/{file_name:str}",
        name="transparency_tenant_log",
        guards=[tenant_scope],
    )
    async def tenant_log(
        self, call: Call, day: FromPath[str], tenant_id: FromPath[str], file_name: FromPath[str]
    ) -> Response[bytes]:
        """A tenant's fleet log of one day; 403 for another tenant, before any file lookup."""
        return _serve(call, day, tenant_id, file_name)

    @get(
        "/transparency/{day:str}/{file_name:str}",
        name="transparency_legacy_log",
        guards=[tenantless],
    )
    async def legacy_log(
        self, call: Call, day: FromPath[str], file_name: FromPath[str]
    ) -> Response[bytes]:
        """The log of a fleet with no tenant: legacy sessions only."""
        return _serve(call, day, None, file_name)
