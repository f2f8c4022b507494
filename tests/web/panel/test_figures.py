"""Numbers and times for people on the panel's pages (``web/panel/figures.py``; docs/panel.md,
"Numbers for people"): thousands separated, rates with their unit, times to the second with
their age beside them."""

from __future__ import annotations

from datetime import UTC, datetime

from recordseal.web.panel.figures import age, count, per_minute, per_second, when

NOW = datetime(2026, 11, 21, 8, 23, 26, tzinfo=UTC).timestamp()


def test_counts_are_separated_in_thousands() -> None:
    assert count(353005) == "353,005"
    assert count(1_000_000) == "1,000,000"
    assert count(999) == "999"
    assert count(2.0) == "2" and count(1234.5) == "1,234.5"
    assert count(None) == "—"


def test_rates_carry_their_unit() -> None:
    assert per_minute(1234) == "1,234 records/min"
    assert per_minute(0.0) == "0 records/min"
    assert per_second(1234) == "20.6 records/s"
    assert per_second(0) == "0 records/s"


def test_ages_read_in_the_unit_that_fits() -> None:
    assert [age(s) for s in (0, 59.6, 180, 7200, 3 * 86400)] == [
        "0 s",
        "60 s",
        "3 min",
        "2.0 h",
        "3.0 days",
    ]


def test_times_are_to_the_second_in_utc_with_their_age() -> None:
    shown = when("2026-11-21T08:20:26.123456Z", NOW)
    assert shown == (
        '<time datetime="2026-11-21T08:20:26.123456Z">2026-11-21 08:20:26 UTC</time>'
        " <small>(3 min ago)</small>"
    )
    assert when(None, NOW) == "—"
    assert "in 60 s" in when("2026-11-21T08:24:26Z", NOW)


def test_a_time_that_is_not_rfc_3339_is_shown_as_it_is_escaped() -> None:
    assert when("<b>yesterday</b>", NOW) == "&lt;b&gt;yesterday&lt;/b&gt;"
