"""The root of the record service's errors: :class:`RecordServiceError`.

Every error the service's own packages raise derives from it: the refusals of a request
(``services.errors.ServiceError`` and its kinds, answered as problem+json by
``web/problems.py``), and the errors that stop a command or a start (a header key this process
cannot use, a fleet manifest that cannot be read, a ``recover`` while the service runs, a
refused key or KEK command, a setting ``serve`` cannot use, a demo witness that did not start).
It lives in the lowest package of the service's surface (``ledger``), so that ``services``,
``fleet``, ``ledger`` and the entry points share it; ``services.errors`` re-exports it. Each
error keeps its evidence as fields (the path, the line, the key, the code), never only in its
message. The panel's errors derive from ``panel.errors.PanelError``, the API client's from
``client.errors.ClientError``; the layers below have their own: the store's
``storage.errors.StorageError``, the settings' ``settings.SettingsError``, the key material's
``crypto.errors.CryptoError``.
"""

from __future__ import annotations


class RecordServiceError(Exception):
    """Root of the errors of the record service (services, fleets, ledger, its commands)."""
