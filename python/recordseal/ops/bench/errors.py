"""The one error of ``recordseal bench``."""

from recordseal.ledger.errors import RecordServiceError


class BenchError(RecordServiceError):
    """The run cannot be made or judged: a core or a service that does not start, cores that
    disagree on a result, a baseline of another schema, a tool that is missing. The message
    says why, in one line (the command prints it and exits 2)."""
