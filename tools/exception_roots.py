"""Count the exception classes of a package and their roots, from the source (AST only).

    python tools/exception_roots.py python/recordseal [-v]

A class is an exception when a base is a builtin exception, a known external one, or an
exception class of the package. Its roots are the topmost exception classes of the package
above it; a package base wins over a builtin one (``class X(PanelError, ValueError)`` is under
``PanelError``). A base name is resolved by its last dotted part: a class of the same module
first, then one the module imports under that name, then any class of that name.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import collections
from pathlib import Path

Key = tuple[str, str]  # (module, class name)

BUILTIN = {
    name
    for name in dir(builtins)
    if isinstance(getattr(builtins, name), type)
    and issubclass(getattr(builtins, name), BaseException)
}
EXTERNAL = {
    "HTTPException",
    "ValidationException",
    "NotAuthorizedException",
    "PermissionDeniedException",
    "NotFoundException",
    "InvalidSignature",
    "InvalidTag",
    "HTTPError",
    "ConnectError",
    "DecodeError",
    "ValidationError",
    "MsgspecError",
}


class Classes:
    def __init__(self, root: Path) -> None:
        self.bases: dict[Key, list[str]] = {}
        self.imported: dict[str, dict[str, str]] = collections.defaultdict(dict)
        self.by_name: dict[str, list[str]] = collections.defaultdict(list)
        for path in sorted(root.rglob("*.py")):
            module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ClassDef):
                    names = [ast.unparse(base).split(".")[-1] for base in node.bases]
                    self.bases[(module, node.name)] = names
                    self.by_name[node.name].append(module)
                elif isinstance(node, ast.ImportFrom) and node.module:
                    for alias in node.names:
                        self.imported[module][alias.asname or alias.name] = node.module

    def resolve(self, module: str, name: str) -> Key | None:
        if (module, name) in self.bases:
            return (module, name)
        source = self.imported[module].get(name)
        if source and (source, name) in self.bases:
            return (source, name)
        modules = self.by_name.get(name)
        return (modules[0], name) if modules else None

    def is_exception(self, key: Key, seen: frozenset[Key] = frozenset()) -> bool:
        if key in seen:
            return False
        for base in self.bases[key]:
            if base in BUILTIN or base in EXTERNAL:
                return True
            found = self.resolve(key[0], base)
            if found and found != key and self.is_exception(found, seen | {key}):
                return True
        return False

    def roots_of(self, key: Key) -> set[Key]:
        inner = []
        for base in self.bases[key]:
            found = self.resolve(key[0], base)
            if found and found != key and self.is_exception(found):
                inner.append(found)
        if not inner:
            return {key}
        return set().union(*(self.roots_of(found) for found in inner))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", type=Path)
    parser.add_argument("-v", "--verbose", action="store_true", help="list the roots")
    args = parser.parse_args()
    classes = Classes(args.package)
    errors = sorted(key for key in classes.bases if classes.is_exception(key))
    roots: dict[Key, list[Key]] = collections.defaultdict(list)
    for key in errors:
        for root in classes.roots_of(key):
            roots[root].append(key)
    print(f"{len(errors)} exception classes; {len(roots)} roots")
    if args.verbose:
        for (module, name), members in sorted(roots.items(), key=lambda item: -len(item[1])):
            print(f"  {module}.{name}: {len(members)}")


if __name__ == "__main__":
    main()
