"""Commands for the operator of a deployment: ``config show`` and ``doctor``."""
