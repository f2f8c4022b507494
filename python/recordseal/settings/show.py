"""The settings in force as ``recordseal config show`` prints them: each with its source, and
the password of any URL a secret setting holds redacted."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import msgspec

from recordseal.settings.environment import fields
from recordseal.settings.layers import Resolved
from recordseal.settings.values import Rate

REDACTED = "REDACTED"
#: libpq's connection parameters that hold a secret when written in a URL's query.
SECRET_PARAMETERS = frozenset({"password", "sslpassword"})


def redact_url(text: str) -> str:
    """``text`` with a URL's password (in its authority or its query) replaced."""
    parts = urlsplit(text)
    if not parts.scheme or not parts.netloc:
        return text
    netloc = parts.netloc
    if parts.password is not None:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}:{REDACTED}@{host}"
    query = urlencode(
        [
            (key, REDACTED if key.lower() in SECRET_PARAMETERS else value)
            for key, value in parse_qsl(parts.query, keep_blank_values=True)
        ],
        safe=REDACTED,
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _plain(value: Any) -> Any:
    if isinstance(value, Rate):
        return f"{value.limit}/{value.seconds}"
    return msgspec.to_builtins(value, enc_hook=str)


def effective(resolved: Resolved) -> list[dict[str, Any]]:
    """Every setting: its key, variable, value (as JSON values; None when unset) and source."""
    shown = []
    for field in fields():
        value = _plain(getattr(resolved.settings, field.name))
        if field.secret and isinstance(value, str):
            value = redact_url(value)
        shown.append(
            {
                "key": field.key,
                "variable": field.variable,
                "value": value,
                "source": resolved.sources[field.name],
            }
        )
    return shown


def as_text(resolved: Resolved) -> str:
    """One line a setting, ``key = value`` (values as JSON) and its source; unset ones say so."""
    lines = [f"# configuration file: {resolved.config or 'none'}"]
    for entry in effective(resolved):
        value = (
            "(unset)" if entry["value"] is None else msgspec.json.encode(entry["value"]).decode()
        )
        lines.append(f"{entry['key']} = {value}  # {entry['source']}")
    return "\n".join(lines) + "\n"
