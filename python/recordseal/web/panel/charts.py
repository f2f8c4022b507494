"""Charts of the live view as inline SVG, drawn on the server (docs/panel.md, "Live view").

No script and no inline style: the panel's Content-Security-Policy (``web/headers.py``)
allows neither, so the bars carry classes that ``static/panel/panel.css`` colours, and every
chart has a text alternative (its title and a summary) for screen readers. Values are drawn
to scale against the largest one; text is escaped by :func:`markupsafe.escape`.
"""

from __future__ import annotations

import time

from markupsafe import Markup, escape

from recordseal.panel.live import Series

WIDTH = 600
HEIGHT = 160
MARGIN_LEFT = 48
MARGIN_BOTTOM = 22
MARGIN_TOP = 8


def _clock(minute: int) -> str:
    return time.strftime("%H:%M", time.gmtime(minute * 60))


def bar_chart(series: Series, title: str, unit: str, css_class: str) -> Markup:
    """A bar per minute of ``series``: its title, the largest value on the axis, the first and
    last minute (UTC) under it."""
    values = series.values
    top = max(values) if values and max(values) > 0 else 1
    plot_w = WIDTH - MARGIN_LEFT
    plot_h = HEIGHT - MARGIN_BOTTOM - MARGIN_TOP
    step = plot_w / max(len(values), 1)
    bars = []
    for i, value in enumerate(values):
        h = plot_h * value / top
        x = MARGIN_LEFT + i * step
        y = MARGIN_TOP + plot_h - h
        minute = series.first_minute + i
        bars.append(
            f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{max(step - 1, 1):.1f}"'
            f' height="{h:.1f}"><title>{_clock(minute)} UTC: {value} {escape(unit)}</title></rect>'
        )
    last = series.first_minute + len(values) - 1
    summary = (
        f"{title}, per minute from {_clock(series.first_minute)} to {_clock(last)} UTC:"
        f" highest {max(values, default=0)}, now {values[-1] if values else 0} {unit}"
    )
    base = MARGIN_TOP + plot_h
    return Markup(
        f'<svg class="chart {escape(css_class)}" viewBox="0 0 {WIDTH} {HEIGHT}"'
        f' role="img" aria-label="{escape(summary)}" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{escape(summary)}</title>"
        f'<line class="axis" x1="{MARGIN_LEFT}" y1="{base}" x2="{WIDTH}" y2="{base}"/>'
        f'<line class="axis" x1="{MARGIN_LEFT}" y1="{MARGIN_TOP}" x2="{MARGIN_LEFT}" y2="{base}"/>'
        f'<text class="label" x="{MARGIN_LEFT - 4}" y="{MARGIN_TOP + 10}" text-anchor="end">'
        f"{top if max(values, default=0) > 0 else 0}</text>"
        f'<text class="label" x="{MARGIN_LEFT - 4}" y="{base}" text-anchor="end">0</text>'
        f'<text class="label" x="{MARGIN_LEFT}" y="{HEIGHT - 6}">'
        f"{_clock(series.first_minute)}</text>"
        f'<text class="label" x="{WIDTH}" y="{HEIGHT - 6}" text-anchor="end">'
        f"{_clock(last)} UTC</text>" + "".join(bars) + "</svg>"
    )
