"""The ledger: append-only logs of chain leaves, sealed into signed checkpoints."""
