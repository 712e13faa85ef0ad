"""The packages are layers with one direction of imports (docs/contracts.md, "Layers").

Read with ``ast`` only (nothing of the project is imported), every import counted, also
inside functions and under TYPE_CHECKING: between packages against the layer order, and
between modules for circles (a module that needs another to be imported first must not be
needed by it). MCASTLAB_LAYERS_ROOT checks another checkout.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

ROOT = Path(os.environ.get("MCASTLAB_LAYERS_ROOT", Path(__file__).resolve().parent.parent))
# What each package may import besides itself: the foundation nothing; the network
# (topologies builds on multicast); the readers, importable without root or Mininet
# (analysis reads captures' files); the campaigns, which run networks and captures.
MAY_IMPORT = {
    "mcastlab": set(),
    "multicast": {"mcastlab"},
    "topologies": {"mcastlab", "multicast"},
    "captures": {"mcastlab"},
    "analysis": {"mcastlab", "captures"},
    "experiments": {"mcastlab", "multicast", "topologies", "captures"},
}
TOP = {"mcastlab/cli.py"}  # the command line sits on every layer


def _imports(node: ast.AST, here: str) -> list[tuple[str, list[str], list[str]]]:
    """[(imported module, names taken from it, names bound here)]; `here` is the package
    the importing module is in, against which a relative import is resolved."""
    if isinstance(node, ast.Import):
        return [(a.name, [], [a.asname or a.name.split(".")[0]]) for a in node.names]
    if isinstance(node, ast.ImportFrom):
        mod = node.module or ""
        if node.level:
            up = here.rsplit(".", node.level - 1)[0] if node.level > 1 else here
            mod = f"{up}.{mod}".rstrip(".")
        return [(mod, [a.name for a in node.names], [a.asname or a.name for a in node.names])]
    return []


def _package_of(f: Path, root: Path) -> str:
    """The dotted package a source file is in (for a package's __init__.py, that package)."""
    return ".".join(f.relative_to(root).parent.parts)


def _is_net(e: ast.expr) -> bool:
    return (isinstance(e, ast.Name) and e.id == "net") or (
        isinstance(e, ast.Attribute) and e.attr == "net"
        and isinstance(e.value, ast.Name) and e.value.id == "self")


def _module_of(f: Path, root: Path) -> str:
    parts = f.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_edges(root: Path) -> dict[str, set[str]]:
    """{module: the project's modules it imports}; `from pkg import sub` counts as `pkg.sub`."""
    files = {_module_of(f, root): f for p in MAY_IMPORT for f in (root / p).rglob("*.py")}

    def known(name: str) -> str:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name

    edges: dict[str, set[str]] = {}
    for mod, f in files.items():
        targets: set[str] = set()
        for n in ast.walk(ast.parse(f.read_text())):
            for imported, names, _bound in _imports(n, _package_of(f, root)):
                subs = [f"{imported}.{x}" for x in names]
                targets.update(known(t) if t in files else known(imported)
                               for t in subs or [imported])
        edges[mod] = targets - {"", mod}
    return edges


def module_cycles(root: Path = ROOT) -> list[str]:
    """Each circle of imports between modules, once, as a path from its first name."""
    edges, out, seen = _module_edges(root), set(), []

    def visit(m: str, done: set[str]) -> None:
        if m in seen:
            c = seen[seen.index(m):]
            i = c.index(min(c))
            out.add(" -> ".join([*c[i:], *c[:i], min(c)]))
            return
        if m in done:
            return
        seen.append(m)
        for q in sorted(edges.get(m, ())):
            visit(q, done)
        seen.pop()
        done.add(m)

    finished: set[str] = set()
    for m in sorted(edges):
        visit(m, finished)
    return sorted(out)


def problems(root: Path = ROOT) -> list[str]:
    out, edges = [], {p: set() for p in MAY_IMPORT}
    for pkg in MAY_IMPORT:
        for f in sorted((root / pkg).rglob("*.py")):
            rel, tree = f.relative_to(root).as_posix(), ast.parse(f.read_text())
            foreign: set[str] = set()  # names bound to another package's modules
            for n in ast.walk(tree):
                for mod, names, bound in _imports(n, _package_of(f, root)):
                    top = mod.split(".")[0]
                    if top not in MAY_IMPORT or top == pkg:
                        continue
                    edges[pkg].add(top)
                    if top not in MAY_IMPORT[pkg] and rel not in TOP:
                        out.append(f"{rel}:{n.lineno}: {pkg} imports {mod} (a higher layer)")
                    out += [f"{rel}:{n.lineno}: private {mod}.{x}" for x in names
                            if x.startswith("_") and not x.startswith("__")]
                    foreign.update(bound)
            for n in ast.walk(tree):
                if (isinstance(n, ast.Attribute) and n.attr.startswith("_")
                        and not n.attr.startswith("__") and (_is_net(n.value) or (
                            isinstance(n.value, ast.Name) and n.value.id in foreign))):
                    out.append(f"{rel}:{n.lineno}: private {ast.unparse(n)}")
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    args = n.args
                    out += [f"{rel}:{n.lineno}: {n.name}(net: Any)" for a in
                            [*args.posonlyargs, *args.args, *args.kwonlyargs]
                            if a.arg == "net" and a.annotation is not None
                            and ast.unparse(a.annotation).strip("'\"") in {"Any", "typing.Any"}]
                if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                        and n.func.id in {"hasattr", "getattr"} and n.args and _is_net(n.args[0])):
                    out.append(f"{rel}:{n.lineno}: probes {ast.unparse(n)}")
    seen: list[str] = []

    def visit(p: str) -> None:  # a cycle between packages, whatever the table says
        if p in seen:
            cycle = seen[seen.index(p):]
            i = cycle.index(min(cycle))  # each cycle once, from its first name
            out.append("import cycle: " + " -> ".join([*cycle[i:], *cycle[:i], min(cycle)]))
            return
        seen.append(p)
        for q in sorted(edges[p]):
            visit(q)
        seen.pop()

    for p in MAY_IMPORT:
        visit(p)
    return sorted(set(out))


def test_layers() -> None:
    found = problems()
    assert not found, "\n".join(found)


def test_no_module_import_circle() -> None:
    found = module_cycles()
    assert not found, "import circles between modules:\n" + "\n".join(found)


MAX_FUNCTION_LINES = 80  # experiments/ and analysis/: a longer function does several things


def long_functions(root: Path = ROOT) -> list[str]:
    """Each function of experiments/ and analysis/ over MAX_FUNCTION_LINES lines."""
    out = []
    for pkg in ("experiments", "analysis"):
        for f in sorted((root / pkg).rglob("*.py")):
            for n in ast.walk(ast.parse(f.read_text())):
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = (n.end_lineno or n.lineno) - n.lineno + 1
                    if lines > MAX_FUNCTION_LINES:
                        out.append(f"{f.relative_to(root)}:{n.lineno}: {n.name} ({lines} lines)")
    return out


def test_no_function_over_80_lines() -> None:
    found = long_functions()
    assert not found, "functions to split:\n" + "\n".join(found)
