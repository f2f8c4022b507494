"""``python -m recordseal.settings``: print docs/configuration.md."""

from recordseal.settings.reference import table

print(table(), end="")
