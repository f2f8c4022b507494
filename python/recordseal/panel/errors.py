"""The root of the operator panel's errors: :class:`PanelError`.

Every error of the panel (``panel/``: the tenant store's, the seed file's, sessions', passkey
links', sign-on's; ``web/panel/``: a refused panel request) derives from it, each with its
evidence as fields (the status and code of a refusal, the field a registration names, the
tenant and organization a lookup missed). The service's errors derive from
``ledger.errors.RecordServiceError``, the API client's from ``client.errors.ClientError``.
"""

from __future__ import annotations


class PanelError(Exception):
    """Root of the errors of the operator panel."""


class PanelRefusal(PanelError):
    """A refused panel request, with its problem's evidence as fields: the HTTP ``status``,
    the stable ``code``, the ``detail`` and the input ``field`` it names (``web/problems.py``
    answers it; the panel's handler renders it as a page for a browser)."""

    def __init__(self, status: int, code: str, detail: str, field: str | None = None) -> None:
        super().__init__(f"{status} {code}: {detail}")
        self.status = status
        self.code = code
        self.detail = detail
        self.field = field
