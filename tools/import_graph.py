"""The package import graph of recordseal, computed from the code (grimp, which import-linter
uses): every edge between its top-level packages and modules, with the imports behind it,
the cycles among them, and what ``import recordseal.verify`` loads.

    .venv/bin/python tools/import_graph.py            # the graph as text
    .venv/bin/python tools/import_graph.py --details  # with the module imports of each edge
    .venv/bin/python tools/import_graph.py --write docs/layers.md  # redraw its "now" graph

docs/layers.md holds the graph as this prints it, between two marker lines;
``tests/layers/test_layers_doc.py`` fails when the code's graph is not the one drawn there.

Type-only imports (under ``if TYPE_CHECKING:``) are counted too: they are dependencies of
the design even when they are not of the running program.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections import defaultdict

import grimp

ROOT = "recordseal"
#: Third-party modules the offline verifier must never load.
NOT_OFFLINE = ("httpx", "litestar", "asyncpg", "granian", "jinja2", "webauthn", "authlib")


def package_of(module: str) -> str:
    """``recordseal.verify.checks`` -> ``verify``; ``recordseal.cli`` -> ``cli``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def package_edges(graph: grimp.ImportGraph) -> dict[tuple[str, str], list[tuple[str, str]]]:
    edges: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for module in sorted(graph.modules):
        if not module.startswith(ROOT + "."):
            continue
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if not imported.startswith(ROOT + "."):
                continue
            source, target = package_of(module), package_of(imported)
            if source != target and target != "_native":
                edges[(source, target)].append((module, imported))
    return edges


def cycles(edges: dict[tuple[str, str], list[tuple[str, str]]]) -> list[list[str]]:
    """The strongly connected components with more than one package (Tarjan)."""
    succ: dict[str, set[str]] = defaultdict(set)
    nodes: set[str] = set()
    for source, target in edges:
        succ[source].add(target)
        nodes |= {source, target}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(succ[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return found


def verify_loads() -> list[str]:
    """The third-party packages that ``import recordseal.verify`` loads in a new interpreter."""
    probe = (
        "import sys; before = set(sys.modules); import recordseal.verify; "
        "tops = {m.split('.')[0] for m in set(sys.modules) - before}; "
        "print(' '.join(sorted(t for t in tops if t not in sys.stdlib_module_names "
        "and not t.startswith('_') and t != 'recordseal')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], check=True, capture_output=True, text=True
    ).stdout
    return out.split()


#: The lines of docs/layers.md between which ``--write`` draws the graph.
BEGIN = "<!-- tools/import_graph.py: begin -->"
END = "<!-- tools/import_graph.py: end -->"


def report(details: bool = False) -> str:
    """The graph as text: its package edges, its cycles, what the verifier loads."""
    graph = grimp.build_graph(ROOT, cache_dir=None)  # no .grimp_cache in the checkout
    edges = package_edges(graph)
    lines = [f"# package edges of {ROOT} (importer -> imported: module imports)"]
    for (source, target), imports in sorted(edges.items()):
        lines.append(f"{source} -> {target}: {len(imports)}")
        if details:
            lines += [f"    {module} -> {imported}" for module, imported in imports]
    found = cycles(edges)
    lines.append(f"# package cycles: {len(found)}")
    lines += ["cycle: " + ", ".join(component) for component in found]
    loaded = verify_loads()
    lines.append("# import recordseal.verify loads (third-party): " + " ".join(loaded))
    lines.append(
        "# of which never for an offline verifier: "
        + (" ".join(m for m in loaded if m in NOT_OFFLINE) or "none")
    )
    return "\n".join(lines) + "\n"


def drawn(document: str) -> str:
    """The graph a document draws between the markers (its fenced block's text)."""
    start, end = document.index(BEGIN), document.index(END)
    block = document[start + len(BEGIN) : end].strip("\n")
    return block.removeprefix("```\n").removesuffix("\n```") + "\n"


def redraw(document: str, text: str) -> str:
    start, end = document.index(BEGIN), document.index(END)
    return document[: start + len(BEGIN)] + "\n```\n" + text + "```\n" + document[end:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--details", action="store_true", help="list the imports of each edge")
    parser.add_argument("--write", metavar="DOC", help="redraw the graph in DOC (docs/layers.md)")
    args = parser.parse_args()
    text = report(args.details)
    if args.write is None:
        sys.stdout.write(text)
        return
    with open(args.write, encoding="utf-8") as file:
        document = file.read()
    with open(args.write, "w", encoding="utf-8") as file:
        file.write(redraw(document, text))


if __name__ == "__main__":
    main()
