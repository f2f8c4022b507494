"""Storage: one async store interface (base), with SQLite as the embedded default."""
