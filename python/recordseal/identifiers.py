"""Identifiers of tenants, organizations, fleets and sign-on providers: one format, written
once (docs/panel.md, "Tenants, organizations, fleets").

1 to 64 characters of ASCII letters, digits, ``.``, ``_`` and ``-``, starting with a letter or
digit: no ``/``, so a log origin ``<service>/<tenant>/<fleet>`` splits one way only.
"""

from __future__ import annotations

import re

IDENTIFIER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
IDENTIFIER_RULE = (
    "1 to 64 characters of letters, digits, '.', '_' and '-', starting with a letter or digit"
)

#: The fleet of a tenant's record streams unless the manifest binds them elsewhere
#: (docs/fleets.md, "Record streams").
DEFAULT_FLEET = "default"


def is_identifier(value: str) -> bool:
    return IDENTIFIER.fullmatch(value) is not None


def check_identifier(field: str, value: str) -> str:
    """``value`` if it is a well-formed identifier, else ValueError naming ``field``."""
    if not is_identifier(value):
        raise ValueError(f"{field} {value!r} is not an identifier: {IDENTIFIER_RULE}")
    return value
