"""The transparency-log fixtures (keys, a growing log): tests/tlog/support.py."""

from tests.tlog.support import forked_log, log, log_signer, witness_signer

__all__ = ["forked_log", "log", "log_signer", "witness_signer"]
