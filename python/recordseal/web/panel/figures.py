"""Numbers and times as people read them on the panel's pages (docs/panel.md, "Numbers for
people"): thousands separated, rates with their unit, times to the second with their age.

Jinja filters (``web/panel/routes.py`` registers :data:`FILTERS`); the JSON answers keep the
raw values.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from html import escape
from typing import Any

from markupsafe import Markup

from recordseal.clock import utc_datetime

NOTHING = "—"


def count(value: float | None) -> str:
    """``353005`` as ``353,005``; a fraction keeps one decimal (``2.5``), a whole one none."""
    if value is None:
        return NOTHING
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.1f}"
    return f"{int(value):,}"


def per_minute(records: float | None) -> str:
    """A number of records in one minute as a rate: ``1,234 records/min``."""
    return NOTHING if records is None else f"{count(records)} records/min"


def per_second(records_per_minute: float | None) -> str:
    """The same rate per second: ``20.6 records/s``."""
    if records_per_minute is None:
        return NOTHING
    return f"{count(round(records_per_minute / 60, 1))} records/s"


def age(seconds: float | None) -> str:
    """How long ago, in the unit that reads best: ``12 s``, ``3 min``, ``5.2 h``, ``3.0 days``."""
    if seconds is None:
        return NOTHING
    if seconds < 120:
        return f"{max(0, round(seconds))} s"
    if seconds < 7200:
        return f"{round(seconds / 60)} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def when(moment: str | None, now: float | None = None) -> Markup | str:
    """An RFC 3339 time to the second in UTC, with its age beside it:
    ``2026-11-21 08:20:26 UTC (3 min ago)``; the exact value stays in ``<time datetime>``.
    ``now``: the page's clock, in seconds since the Unix epoch (the real clock when None)."""
    if not moment:
        return NOTHING
    try:
        parsed = datetime.fromisoformat(moment.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return Markup.escape(moment)
    reference = utc_datetime() if now is None else datetime.fromtimestamp(now, UTC)
    elapsed = (reference - parsed).total_seconds()
    text = parsed.strftime("%Y-%m-%d %H:%M:%S UTC")
    ago = f"in {age(-elapsed)}" if elapsed < -1 else f"{age(elapsed)} ago"
    return Markup(
        f'<time datetime="{escape(moment, quote=True)}">{text}</time> <small>({ago})</small>'
    )


FILTERS: dict[str, Callable[..., Any]] = {
    "count": count,
    "per_minute": per_minute,
    "per_second": per_second,
    "age": age,
    "when": when,
}
