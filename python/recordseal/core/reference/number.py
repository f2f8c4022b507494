"""Number text: ECMAScript ``Number::toString`` (docs/spec.md 1.4) and coordinates (docs/spec.md
3.4)."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_EVEN, Decimal


def shortest_digits(x: float) -> tuple[str, int]:
    """The ``s`` and ``n`` of ECMA-262 7.1.12.1 for a finite ``x > 0``.

    ``s`` is the shortest digit string (no trailing zeros) such that ``s * 10^(n - len(s))``
    rounds to ``x``. Python's ``repr`` already picks those digits (shortest, then closest).
    """
    mantissa, _, exponent = repr(x).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    n = len(whole) + int(exponent or "0")
    significant = digits.lstrip("0")
    n -= len(digits) - len(significant)
    return significant.rstrip("0"), n


def number_text(x: float) -> str:
    """``Number::toString(x)`` (ECMA-262 7.1.12.1) for a finite double; ``-0`` gives ``0``."""
    if not math.isfinite(x):
        raise ValueError("JSON numbers are finite")
    if x == 0:
        return "0"
    if x < 0:
        return "-" + number_text(-x)
    s, n = shortest_digits(x)
    k = len(s)
    if k <= n <= 21:
        return s + "0" * (n - k)
    if 0 < n <= 21:
        return s[:n] + "." + s[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + s
    exponent = f"e+{n - 1}" if n - 1 >= 0 else f"e-{1 - n}"
    if k == 1:
        return s + exponent
    return s[0] + "." + s[1:] + exponent


def coordinate_text(x: float, decimals: int) -> str:
    """The shortest decimal text of ``x`` rounded half to even to ``decimals`` places.

    Written with exactly that many decimals and no exponent; a zero result has no sign.
    """
    # repr is the shortest text, the same decimal value as number_text(x).
    rounded = Decimal(repr(x)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_EVEN)
    if rounded.is_zero():
        rounded = abs(rounded)
    return f"{rounded:f}"
