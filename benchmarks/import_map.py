"""The import map of a package, read from its source (nothing is imported): which module imports
which, at the top or inside a function, the cycles among them, the imports of another module's
private (`_name`) names, and the largest modules.

    .venv/bin/python benchmarks/import_map.py memcli          # summary: counts, cycles, private names, sizes
    .venv/bin/python benchmarks/import_map.py memcli -v       # and every module's imports

tests/test_architecture.py checks memcli's rules (no cycle, no private-name import, what a front
end may import, modules under 600 lines) with the ``Graph`` this module builds.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def size(text: str) -> int:
    """A module's lines as a reader sees them: every physical line, wrapped ones included."""
    return text.count("\n") + (bool(text) and not text.endswith("\n"))


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


class Graph:
    """modules: dotted name -> file; edges: (importer, imported, line, inside a function);
    private: (importer, line, what) for each use of another module's private name; lines: sizes
    (``size``: physical lines)."""

    def __init__(self, package: Path):
        package = Path(package)
        self.name = package.name
        self.modules: dict[str, Path] = {}
        for p in sorted(package.rglob("*.py")):
            parts = list(p.relative_to(package.parent).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            self.modules[".".join(parts)] = p
        self.edges: list[tuple[str, str, int, bool]] = []
        self.statements = {True: 0, False: 0}  # import statements of the package's modules, inside a function or not
        self.private: list[tuple[str, int, str]] = []
        self.lines = {m: size(p.read_text(encoding="utf-8")) for m, p in self.modules.items()}
        for mod, path in self.modules.items():
            self._read(mod, ast.parse(path.read_text(encoding="utf-8")))

    def _target(self, dotted: str) -> str | None:
        while dotted and dotted not in self.modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    def _base(self, mod: str, node: ast.ImportFrom) -> str | None:
        if not node.level:
            return node.module
        parts = mod.split(".") if self.modules[mod].name == "__init__.py" else mod.split(".")[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        return ".".join(parts + ([node.module] if node.module else []))

    def _read(self, mod: str, tree: ast.AST) -> None:
        aliases: dict[str, str] = {}  # a local name bound to one of the package's modules

        def visit(node, in_function: bool) -> None:
            for child in ast.iter_child_nodes(node):
                inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    base = child.names[0].name if isinstance(child, ast.Import) else self._base(mod, child)
                    if base and base.split(".")[0] == self.name:
                        self.statements[inner] += 1
                if isinstance(child, ast.Import):
                    for a in child.names:
                        if a.name.split(".")[0] == self.name:
                            self._edge(mod, a.name, child.lineno, inner)
                            if a.asname:
                                aliases[a.asname] = a.name
                            if any(_private(p) for p in a.name.split(".")):
                                self.private.append((mod, child.lineno, a.name))
                elif isinstance(child, ast.ImportFrom):
                    base = self._base(mod, child)
                    if base and base.split(".")[0] == self.name:
                        if any(_private(p) for p in base.split(".")):
                            self.private.append((mod, child.lineno, base))
                        for a in child.names:
                            full = f"{base}.{a.name}"
                            self._edge(mod, full if full in self.modules else base, child.lineno, inner)
                            if full in self.modules:
                                aliases[a.asname or a.name] = full
                            elif _private(a.name):
                                self.private.append((mod, child.lineno, f"{base}.{a.name}"))
                elif (
                    isinstance(child, ast.Attribute)
                    and isinstance(child.value, ast.Name)
                    and child.value.id in aliases
                    and _private(child.attr)
                    and self._target(aliases[child.value.id]) != mod
                ):
                    self.private.append((mod, child.lineno, f"{aliases[child.value.id]}.{child.attr}"))
                visit(child, inner)

        visit(tree, False)

    def _edge(self, mod: str, dotted: str, line: int, inner: bool) -> None:
        target = self._target(dotted)
        if target is not None and target != mod:
            self.edges.append((mod, target, line, inner))

    def imports(self) -> dict[str, set]:
        out: dict[str, set] = {m: set() for m in self.modules}
        for a, b, _, _ in self.edges:
            out[a].add(b)
        return out

    def package_of(self, module: str) -> str:
        """The package a module belongs to, one level below the top (``memcli.store.root`` ->
        ``memcli.store``); a module at the top is its own (``memcli.config``)."""
        return ".".join(module.split(".")[:2])

    def package_imports(self) -> dict[str, set]:
        """package -> the other packages its modules import (``package_of``)."""
        out: dict[str, set] = {self.package_of(m): set() for m in self.modules}
        for a, b, _, _ in self.edges:
            pa, pb = self.package_of(a), self.package_of(b)
            if pa != pb:
                out[pa].add(pb)
        return out

    def cycles(self, packages: bool = False) -> list[list[str]]:
        """The strongly connected groups of more than one module (Tarjan), each sorted; with
        ``packages``, of packages (``package_imports``)."""
        graph, index, low, stack, on, out = (
            self.package_imports() if packages else self.imports(),
            {},
            {},
            [],
            set(),
            [],
        )
        counter = [0]
        sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

        def connect(v):
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on.add(v)
            for w in graph[v]:
                if w not in index:
                    connect(w)
                    low[v] = min(low[v], low[w])
                elif w in on:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                group = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    group.append(w)
                    if w == v:
                        break
                if len(group) > 1:
                    out.append(sorted(group))

        for v in sorted(graph):
            if v not in index:
                connect(v)
        return out


def report(package: Path, verbose: bool = False) -> str:
    g = Graph(package)
    short = lambda m: m.removeprefix(g.name + ".")  # noqa: E731
    cycles = g.cycles()
    out = [
        f"modules {len(g.modules)}, edges {sum(len(s) for s in g.imports().values())}, "
        f"import statements at top {g.statements[False]}, inside functions {g.statements[True]}",
        f"cycles (strongly connected groups): {len(cycles)}; largest {max(map(len, cycles), default=0)}",
    ]
    out += ["  cycle: " + " ".join(map(short, c)) for c in cycles]
    groups = g.cycles(packages=True)
    out.append(f"package-level cycles: {len(groups)}")
    out += ["  packages: " + " ".join(map(short, c)) for c in groups]
    out.append(f"private-name imports: {len(g.private)}")
    out += [f"  {m}:{line}: {what}" for m, line, what in g.private]
    big = sorted(((n, m) for m, n in g.lines.items()), reverse=True)
    out.append("modules over 600 lines: " + (", ".join(f"{m} {n}" for n, m in big if n > 600) or "none"))
    out.append("largest: " + ", ".join(f"{short(m)} {n}" for n, m in big[:8]))
    if verbose:
        for m, targets in sorted(g.imports().items()):
            if targets:
                out.append(f"{m} -> {', '.join(sorted(targets))}")
    return "\n".join(out)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    print(report(Path(args[0] if args else "memcli"), verbose="-v" in sys.argv))
