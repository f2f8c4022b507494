"""The root of the API client's errors: :class:`ClientError`.

``Refused`` (the service's problem, as a field), ``Unavailable`` (no answer through every
retry), ``IngestIncomplete`` (per-record results and each failed batch's error, as fields) and
``MissingSetting`` (the service or token not given) derive from it, so a program using
``recordseal.client`` catches one class.
"""

from __future__ import annotations


class ClientError(Exception):
    """Root of the errors of the record service's API client."""
