"""How long ``recordseal bench`` measures unless told otherwise (docs/performance.md)."""

#: Interleaved rounds of the core operations, and the CPU seconds each core is given per round
#: and operation: about a minute in all on two cores.
ROUNDS, ROUND_SECONDS = 41, 0.02
#: Rounds of ``--service``, each a wrk run of ``SERVICE_SECONDS`` per core and route.
SERVICE_ROUNDS, SERVICE_SECONDS = 3, 5.0
#: ``--quick``, a smoke run: three rounds of 2 ms; with ``--service`` two rounds of a second.
QUICK_ROUNDS, QUICK_SECONDS = 3, 0.002
QUICK_SERVICE = (2, 1.0)
#: What ``--compare`` calls a regression when ``--fail-over`` does not say.
FAIL_OVER = 0.15
