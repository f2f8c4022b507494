"""recordseal: bind JSON records, field by field, to signed and witnessed Merkle roots."""

__version__ = "0.1.0"
