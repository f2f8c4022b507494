"""Writes ingest_answers.json: the scenario of tests/ingest_answers.py and what the service
answered and stored, normalised (see that module).

The file was written by the implementation before issue 29's native read (main at 983c5c9:
msgspec, the Python envelope checks, the Python record path), on SQLite:

    PYTHONPATH=<983c5c9 tree>/python python tests/vectors/generate_ingest_answers.py

tests/web/test_ingest_answers.py requires every later implementation, on both backends,
to answer and store the same.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.ingest_answers import answers_of, scenario

OUT = Path(__file__).with_name("ingest_answers.json")


def main() -> None:
    requests = scenario()
    with tempfile.TemporaryDirectory() as tmp:
        recorded = answers_of(Path(tmp), requests)
    document = {
        "note": "written by tests/vectors/generate_ingest_answers.py; see its docstring",
        "requests": [request.as_json() for request in requests],
        **recorded,
    }
    with OUT.open("w") as out:
        out.write("{\n")
        for n, (name, value) in enumerate(document.items()):
            if isinstance(value, list):
                out.write(f" {json.dumps(name)}: [\n")
                out.write(",\n".join("  " + json.dumps(item) for item in value))
                out.write("\n ]")
            else:
                out.write(f" {json.dumps(name)}: {json.dumps(value)}")
            out.write(",\n" if n < len(document) - 1 else "\n")
        out.write("}\n")


if __name__ == "__main__":
    main()
