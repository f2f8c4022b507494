"""The live view (docs/panel.md, "Live view"; issue 30, item 2), ``LiveController``:

- ``GET /tenants/{id}/live``: one tenant's streams, ingest rate, logs (size, latest
  checkpoint and its age, sealing lag, witnesses with their failures, ``witness.two_roots``
  first, fenced state), erasures and tokens, with charts of the last hour. Tenant-scoped like
  every panel route (``tenant_scope``: another tenant's id is 403 before any lookup; a missing
  tenant 404); every role may read it.
- ``GET /live``: every tenant's summary, for legacy sessions, whose view is the operator-admin
  one (all tenants visible, whatever their role: the page changes nothing); a tenant-scoped
  session is refused 403 ``forbidden_tenant`` before any lookup (``all_tenants``).

Both answer JSON when the client prefers ``application/json`` and HTML otherwise (``render``
of ``web/panel/call.py``); the figures come from ``store.activity`` (no record is read) and
are computed in ``panel/live.py``, the charts drawn in ``web/panel/charts.py``.
"""

from __future__ import annotations

from typing import Any

from litestar import Response, get
from litestar.params import FromPath

from recordseal.panel.live import Series, service_view, tenant_view, window_start
from recordseal.web.controller import DomainController
from recordseal.web.panel.call import Call
from recordseal.web.panel.charts import bar_chart
from recordseal.web.panel.context import PanelContext
from recordseal.web.panel.guards import all_tenants, tenant_scope
from recordseal.web.panel.session import PanelDenied


def _activity(context: PanelContext) -> Any:
    if context.activity is None:
        raise PanelDenied(404, "live_view_unavailable", "this panel has no store to read")
    return context.activity


def _series(data: dict[str, Any]) -> Series:
    return Series(data["first_minute"], data["values"])


class LiveController(DomainController):
    """The live view of one tenant, and of the whole service."""

    @get(
        "/tenants/{tenant_id:str}/live",
        name="panel_tenant_live",
        guards=[tenant_scope],
    )
    async def tenant_live(self, call: Call, tenant_id: FromPath[str]) -> Response[Any]:
        """One tenant's live view; 403 for another tenant's id, 404 for a missing one."""
        panel = call.context
        tenant = await call.tenant(tenant_id)
        now = panel.clock()
        activity = await _activity(panel).tenant_activity(tenant_id, window_start(now))
        view = tenant_view(activity, now)
        view["now"] = now
        fences = list(panel.fences(tenant_id))
        view["fences"] = [
            {"kind": f.kind, "name": f.name, "reason": f.reason, "since": f.since} for f in fences
        ]
        fenced = {(f.kind, f.name) for f in fences}
        for log in view["logs"]:
            log["fenced"] = ("log", log["origin"]) in fenced
        for stream in view["streams"]:
            stream["fenced"] = ("stream", stream["name"]) in fenced
        charts = {
            "ingest": bar_chart(
                _series(view["ingest_series"]), "Records ingested", "records", "ingest"
            ),
            "lag": bar_chart(
                _series(view["lag_series"]), "Records not yet sealed", "records", "lag"
            ),
        }
        return call.render("panel/live.html", view, page={"tenant": tenant, "charts": charts})

    @get("/live", name="panel_live", guards=[all_tenants])
    async def service_live(self, call: Call) -> Response[Any]:
        """Every tenant's summary; legacy sessions only (403 for a tenant-scoped one)."""
        now = call.context.clock()
        summaries = await _activity(call.context).service_activity(window_start(now))
        view = service_view(summaries)
        view["now"] = now
        return call.render("panel/service_live.html", view)
