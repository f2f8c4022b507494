"""docs/layers.md draws the package graph the code has: ``tools/import_graph.py`` computes it
(grimp, which import-linter uses) and the document holds that output between two marker lines.
A change that adds or drops an edge between packages, or changes how many module imports are
behind one, fails here until the document is redrawn:

    .venv/bin/python tools/import_graph.py --write docs/layers.md
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "tools/import_graph.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("import_graph", module)
    spec.loader.exec_module(module)
    return module


def test_the_document_draws_the_graph_the_code_has() -> None:
    tool = _tool()
    document = (ROOT / "docs/layers.md").read_text(encoding="utf-8")
    drawn = tool.drawn(document)
    assert drawn == tool.report(), (
        "docs/layers.md does not draw the code's graph: redraw it with "
        "`.venv/bin/python tools/import_graph.py --write docs/layers.md`"
    )
    assert "# package cycles: 0\n" in drawn


def test_a_drawing_is_read_back_as_written() -> None:
    tool = _tool()
    document = f"intro\n{tool.BEGIN}\nold\n{tool.END}\nafter\n"
    text = "# package edges\na -> b: 1\n"
    redrawn = tool.redraw(document, text)
    assert tool.drawn(redrawn) == text
    assert redrawn.startswith("intro\n") and redrawn.endswith(f"{tool.END}\nafter\n")
    assert tool.redraw(redrawn, text) == redrawn
