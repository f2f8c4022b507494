"""One logging setup for the service, its worker processes and the witness (docs/operations.md).

Every line goes to standard error, as text by default or, with ``RECORDSEAL_LOG_FORMAT=json``,
as one JSON object per line: ``time`` (UTC, RFC 3339), ``level``, ``logger``, ``event``, then
the event's fields. Code logs an event name and passes its fields through ``extra``::

    log.warning("witness.cosign_failed", extra={"witness": name, "code": code})

which reads ``2026-05-01T10:00:00.123Z WARNING recordseal.sealer: witness.cosign_failed
witness=demo code=unknown_origin`` as text. Lines of other libraries (granian, httpx) keep their
message as the event. Only standard-library logging is used, so any module may log without
importing this one; only the entry points (``recordseal serve``, ``witness serve``, the ASGI
factories) call :func:`configure`.
"""

from __future__ import annotations

import json
import logging
import logging.config
import re
import time
from typing import Any, Literal

LogFormat = Literal["text", "json"]
FORMATS: tuple[LogFormat, ...] = ("text", "json")
LEVELS = ("debug", "info", "warning", "error")

#: Attributes every LogRecord has: whatever else a record carries came through ``extra``.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
}
#: Libraries whose INFO lines are per request or per connection: only their warnings are kept.
_QUIET = ("httpx", "httpcore", "asyncio", "hpack", "multipart")


def fields_of(record: logging.LogRecord) -> dict[str, Any]:
    """The fields a record was given through ``extra`` (private names left out)."""
    return {
        key: value
        for key, value in vars(record).items()
        if key not in _STANDARD and not key.startswith("_")
    }


#: What makes a text value need quotes: a space of any kind, a quote, ``=``, a control character.
_NEEDS_QUOTES = re.compile(r'[\s"=\x00-\x1f\x7f-\x9f]')


def _text_value(value: Any) -> str:
    if isinstance(value, str):
        text = value
    elif value is None or isinstance(value, bool):
        text = "null" if value is None else ("true" if value else "false")
    elif isinstance(value, int | float):
        text = repr(value)
    else:
        text = json.dumps(value, default=str)
    if not text or _NEEDS_QUOTES.search(text):
        return json.dumps(text, ensure_ascii=False)
    return text


def _utc(created: float) -> str:
    """RFC 3339 in UTC with milliseconds, e.g. ``2026-11-21T08:00:00.123Z``."""
    seconds = int(created)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    return f"{stamp}.{int((created - seconds) * 1000):03d}Z"


class Formatter(logging.Formatter):
    """Text (``time LEVEL logger: event key=value …``) or JSON lines (one object a line)."""

    def __init__(self, log_format: LogFormat = "text") -> None:
        super().__init__()
        if log_format not in FORMATS:
            raise ValueError(f"log format {log_format!r} is not one of {', '.join(FORMATS)}")
        self.log_format = log_format

    def format(self, record: logging.LogRecord) -> str:
        when = _utc(record.created)
        fields = fields_of(record)
        if record.exc_info:
            fields["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            fields["exception"] = record.exc_text
        event = record.getMessage()
        if self.log_format == "json":
            line = {
                "time": when,
                "level": record.levelname.lower(),
                "logger": record.name,
                "event": event,
            }
            line.update((k, v) for k, v in fields.items() if k not in line)
            return json.dumps(line, default=str, ensure_ascii=False)
        exception = fields.pop("exception", None)
        text = f"{when} {record.levelname:<7} {record.name}: {event}"
        if fields:
            text += " " + " ".join(f"{k}={_text_value(v)}" for k, v in fields.items())
        if exception:
            text += "\n" + exception
        return text


class ServerLines(logging.Filter):
    """granian's lines under the name of the process that runs it (``recordseal.serve``,
    ``recordseal.witness``), not ``_granian``: with the demo witness, two granian servers
    write to one terminal. Its ``Listening at`` line is left out: each process logs its own
    listening line (``serve.listening``, ``witness.listening``) naming itself, the service's
    first, so the first address a reader sees is the service's."""

    def __init__(self, server: str) -> None:
        super().__init__()
        self.server = server

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name != "_granian" and not record.name.startswith("_granian."):
            return True
        if record.getMessage().startswith("Listening at"):
            return False
        record.name = self.server
        return True


def dict_config(
    log_format: LogFormat = "text", level: str = "info", server: str | None = None
) -> dict[str, Any]:
    """The ``logging.config.dictConfig`` of every recordseal process; granian applies it to
    its supervisor and to each worker (``Server(log_dictconfig=…)``). ``server``: the name
    granian's lines are logged under (:class:`ServerLines`)."""
    if log_format not in FORMATS:
        raise ValueError(f"log format {log_format!r} is not one of {', '.join(FORMATS)}")
    if level not in LEVELS:
        raise ValueError(f"log level {level!r} is not one of {', '.join(LEVELS)}")
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"recordseal": {"()": "recordseal.logs.Formatter", "log_format": log_format}},
        "filters": {"server": {"()": "recordseal.logs.ServerLines", "server": server}}
        if server
        else {},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
                "formatter": "recordseal",
                "filters": [] if server is None else ["server"],
            }
        },
        "root": {"handlers": ["stderr"], "level": level.upper()},
        "loggers": {
            # granian's own lines go through the root handler, in the same format.
            "_granian": {"handlers": [], "propagate": True},
            # recordseal writes its own access log (web/observe.py): without query strings.
            "granian.access": {"handlers": [], "propagate": False, "level": "CRITICAL"},
            **{name: {"level": "WARNING"} for name in _QUIET},
        },
    }


def configure(
    log_format: LogFormat = "text", level: str = "info", server: str | None = None
) -> None:
    """Apply :func:`dict_config` to this process."""
    logging.config.dictConfig(dict_config(log_format, level, server))
