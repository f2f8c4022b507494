"""The root of the store's errors: :class:`StorageError`.

Every error ``recordseal.storage`` and its backends raise derives from it: settings that name
no usable store (``backends.BackendError``), a schema newer than this recordseal
(``schema_version.SchemaTooNew``), a seal that finds its log behind what was signed
(``requests.LogBehind``), a recovery whose plan went stale (``recovery.RecoveryConflict``), a
continuity journal that cannot be read or written (``journal.JournalError``), a backup refused
or failed (``backup.BackupRefused``, ``backup.BackupFailed``), PostgreSQL's COMMIT of unknown
outcome (``postgres.writer._CommitUnknown``) and a store that cannot be used until the process
has compared it with the journal again (:class:`StoreUnavailable`). Each keeps its name, its
module and the builtin base its callers catch it by; the evidence a caller acts on is in
fields where it has any (``LogBehind.origin`` and ``size``, ``SchemaTooNew.current`` and
``latest``).
"""

from __future__ import annotations


class StorageError(Exception):
    """Root of the errors of the store (its interface, both backends, journal and backup)."""


class StoreUnavailable(StorageError):
    """The store cannot serve now: its server changed under a running process (a failover)
    and the process has not compared it with the journal again yet, or it does not answer.
    Answered ``503 store_unavailable`` with ``Retry-After``; nothing was written."""
