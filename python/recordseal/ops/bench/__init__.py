"""``recordseal bench``: the native core against the pure-Python reference, side by side, on
this machine (docs/performance.md).

``command.py`` registers the command and runs it; ``cases.py`` holds the operations,
``worker.py`` times them in a process per core, ``runner.py`` alternates the two; ``results.py``
is the JSON a run writes, ``table.py``, ``compare.py`` and ``plot.py`` show it; ``service.py``
drives the ingest routes of a service on each core.
"""
