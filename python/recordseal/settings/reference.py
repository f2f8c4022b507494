"""``docs/configuration.md``, generated from the settings (``python -m recordseal.settings``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from recordseal.settings.environment import Field, fields
from recordseal.settings.values import Rate

HEADER = """\
# Configuration

Every setting of `recordseal serve` (and of the commands that open the store) is a
`RECORDSEAL_*` environment variable; `--data-dir`, `--host`, `--port` and `--database-url`
override theirs. They are read and checked once, before anything listens: a value that breaks
its rule stops the command with one line naming the variable and the rule, and exit code 2
(no traceback; the value itself is never printed, since a database URL may hold a password).
An empty variable counts as unset. A `RECORDSEAL_*` variable that names no setting is
reported as a warning (with the closest name), not ignored silently.

Generated from `python/recordseal/settings/model.py` by
`python -m recordseal.settings > docs/configuration.md` (a test checks it is current).

| variable | type | default | what |
| --- | --- | --- | --- |
"""

FOOTER = """
Not settings: `RECORDSEAL_WITNESS_CONFIG` and `RECORDSEAL_SUPERVISOR_PID` (set by `witness
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
        f"| `{field.variable}` | {field.rule} | {_default(field)} | {field.help} |"
        for field in fields()
    ]
    return HEADER + "\n".join(rows) + "\n" + FOOTER
