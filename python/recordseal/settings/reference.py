"""``docs/configuration.md``, generated from the settings (``python -m recordseal.settings``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from recordseal.settings.environment import Field, fields
from recordseal.settings.values import Rate

HEADER = """\
# Configuration

**Who it is for:** operators who configure the service: every setting, its type, its default
and what it does.

Every setting of `recordseal serve` (and of the commands that open the store) is a key of a
TOML configuration file and a `RECORDSEAL_*` environment variable. Each is read from, in
order, each overriding the one before: its default, the configuration file, its variable, and
the command line (`--data-dir`, `--host`, `--port` and `--database-url`). They are read and
checked once, before anything listens: a value that breaks its rule stops the command with
one line naming the variable (or the file and key) and the rule, and exit code 2 (no
traceback; the value itself is never printed, since a database URL may hold a password). An
empty variable counts as unset. A `RECORDSEAL_*` variable that names no setting is reported
as a warning by every command (with the closest name), not ignored silently.

## The configuration file

`recordseal serve --config recordseal.toml` (or `RECORDSEAL_CONFIG=recordseal.toml`; every
command that opens the store takes `--config` too) reads the file, and its workers read it
as well. A setting's key is its variable without `RECORDSEAL_`, in lower case:

```toml
data_dir = "/srv/recordseal"
port = 8000
database_url = "postgresql://recordseal@db.internal/recordseal"
panel_origins = ["https://panel.example"]
rate_limit_login = "30/60"
access_log = false
witnesses = [
  { name = "witness.example", url = "https://witness.example", vkey = "witness.example+…" },
]
```

Values are TOML values of the setting's type (a number, `true`/`false`, a list of strings,
a list of tables for `witnesses` and `timestamp_authorities`), or text written as the variable
is. Paths relative to the working directory, as in the variables (not to the file). A key
that names no setting is refused, naming the closest key: a typo never passes silently.

`recordseal config show [--json]` prints each setting in force with its source (`default`,
`file`, `environment`, `command line`). Settings marked *secret* below may hold a password in
a URL (in its user information or as a `password` parameter); `config show` prints it as
`REDACTED`. `recordseal doctor` checks what the settings point at (docs/operations.md).

Generated from `python/recordseal/settings/model.py` by
`python -m recordseal.settings > docs/configuration.md` (a test checks it is current).

| variable | file key | type | default | what |
| --- | --- | --- | --- | --- |
"""
FOOTER = """
Not settings: `RECORDSEAL_CONFIG` (the configuration file), `RECORDSEAL_URL` and
`RECORDSEAL_TOKEN` (the service and token of the client commands: docs/client.md),
`RECORDSEAL_WITNESS_CONFIG` and `RECORDSEAL_SUPERVISOR_PID` (set by `witness
serve` and `serve` for their own workers: the witness's configuration, and the pid of the
process whose death ends the workers) and `RECORDSEAL_SCREENSHOTS` (where the browser tests
write their screenshots; `make screenshots`).
"""


def _default(field: Field) -> str:
    value: Any = field.default
    if value is None or value == ():
        return "unset"
    if isinstance(value, Rate):
        return f"`{value.limit}/{value.seconds}`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, Path):
        return f"`{value}`"
    return f"`{msgspec.json.encode(value).decode().strip(chr(34))}`"


def table() -> str:
    rows = [
        f"| `{field.variable}` | `{field.key}` | {field.rule} | {_default(field)} | {field.help}"
        + (" (*secret*: a URL's password is redacted)" if field.secret else "")
        + " |"
        for field in fields()
    ]
    return HEADER + "\n".join(rows) + "\n" + FOOTER
