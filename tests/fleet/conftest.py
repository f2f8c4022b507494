"""Fixtures of the fleet suites: ``store`` (tests/conftest.py) runs a test once per Store
backend, SQLite and PostgreSQL, unopened: open it inside the test's event loop
(``tests.fleet.support.using``), since a backend may bind to the loop that opened it."""
