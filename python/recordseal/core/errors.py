"""The one exception class of the commitment core.

Both implementations (native and reference) raise :class:`CommitError`, so every caller
catches the same class and reads the same ``code`` and ``field``.
"""

from __future__ import annotations


class CommitError(ValueError):
    """A refused input: ``code`` names the rule, ``field`` the committed path (or None).

    The message is for people and never contains a value taken from the payload.
    """

    code: str
    field: str | None

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.field = field

    def __repr__(self) -> str:
        return f"CommitError(code={self.code!r}, field={self.field!r}, message={str(self)!r})"

    def __reduce__(self) -> tuple[type[CommitError], tuple[str, str, str | None]]:
        return (CommitError, (self.code, str(self), self.field))
