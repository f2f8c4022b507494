"""The Rust core's top-level modules form no import cycle (docs/layers.md, "The Rust core").

A module is ``src/<name>.rs`` with its submodules under ``src/<name>/``; it depends on another
when its code (not its comments) names ``crate::<other>``. The Python bindings (``python``)
and the crate root sit on top and may name anything.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "rust-core" / "src"
CRATE_PATH = re.compile(r"\bcrate::(?:\{([^}]*)\}|(\w+))")
COMMENT = re.compile(r"//.*$", re.MULTILINE)


def module_of(path: Path) -> str:
    return path.relative_to(SRC).parts[0].removesuffix(".rs")


def dependencies() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for path in SRC.rglob("*.rs"):
        source = module_of(path)
        if source in {"lib", "python"}:
            continue
        graph[source]
        for group, single in CRATE_PATH.findall(COMMENT.sub("", path.read_text())):
            parts = [single] if single else group.split(",")
            names = [part.split("::")[0].strip() for part in parts]
            for name in names:
                target = name.removesuffix(";")
                if target and target not in {"self", source} and target != "python":
                    graph[source].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def test_the_graph_is_read_from_the_code() -> None:
    graph = dependencies()
    # Known edges: the canonical writer reads parsed trees, and both order members alike.
    assert "json" in graph["jcs"]
    assert "member_order" in graph["json"]
    assert "member_order" in graph["jcs"] or "member_order" in graph["ingest"]


def test_no_module_cycle() -> None:
    assert cycles(dependencies()) == []


def test_a_cycle_is_found() -> None:
    assert cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b", "a"]]
