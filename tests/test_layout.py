"""The package layout's one rule: imports run downwards, counting imports inside functions too.

The graph is read from the source with `ast` (every `import` anywhere in a module, lazy ones
included), so a test fails the moment someone adds an upward import, whether or not it runs.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "gradcli"

# Each part and the parts it may import. Lower parts never import higher ones. `errors` and
# `source` are leaves shared by everything; `jsonable` (numbers and JSON text) reads Tensors, so
# it sits just above the engine. Views import no language internals; the language imports
# nothing from the layer that runs it (program) or above.
# The torch library (`nn`, `optim`, `data`, `func`, `distributions`, `distributed`) sits on the engine, which never imports it: where the
# engine must reach library code it holds a registry the library fills.
LIBRARY = {"nn", "optim", "data", "func", "distributions", "distributed"}
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "source": set(),
    "engine": {"errors"},
    "nn": {"engine", "errors"},
    "optim": {"nn", "engine", "errors"},
    "data": {"engine", "errors"},
    "func": {"nn", "engine", "errors"},
    "distributions": {"nn", "engine", "errors"},
    "distributed": {"nn", "data", "engine", "errors"},
    "jsonable": {"engine", "errors"},
    "lang": LIBRARY | {"engine", "errors", "source"},
    "program": LIBRARY | {"lang", "engine", "errors", "source", "jsonable"},
    "check": LIBRARY | {"program", "lang", "engine", "errors", "source", "jsonable"},
    "views": LIBRARY | {"check", "program", "engine", "errors", "source", "jsonable"},
    "top": {"engine", "program", "errors"},  # gradcli/__init__.py: the public API
}
TOP = {"commands", "cli", "pytest_plugin", "__main__", "jupyter"}  # the command layer may import any part
CYCLES_ALLOWED = {"engine"}  # Tensor methods <-> the functional ops, as in PyTorch


def module_name(path: Path) -> str:
    parts = ("gradcli",) + path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_in(source: str) -> set[str]:
    """The gradcli modules a file imports anywhere in it (`from a import b` counts a.b when that is a module)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        found.update(n for n in names if n in MODULES)
    return found


GRAPH = {name: imports_in(path.read_text(encoding="utf-8")) - {name} for name, path in MODULES.items()}


def part(module: str) -> str:
    """`gradcli.engine.tensor` -> engine, `gradcli.errors` -> errors, `gradcli` -> top."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else "top"


def test_every_part_is_placed() -> None:
    assert {part(m) for m in MODULES} <= set(ALLOWED) | TOP


@pytest.mark.parametrize("module", sorted(m for m in MODULES if part(m) not in TOP))
def test_imports_run_downwards(module: str) -> None:
    here = part(module)
    upward = sorted(t for t in GRAPH[module] if part(t) != here and part(t) not in ALLOWED[here])
    assert upward == [], f"{module} ({here}) may import only {sorted(ALLOWED[here])}, not {upward}"


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's components, iteratively (the graph is small, but recursion is not needed)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                components.append(component)
    return components


def test_cycles_lie_inside_the_engine_only() -> None:
    cycles = [c for c in strongly_connected(GRAPH) if len(c) > 1]
    outside = [sorted(c) for c in cycles if {part(m) for m in c} - CYCLES_ALLOWED]
    assert outside == []


def test_the_graph_sees_lazy_and_upward_imports() -> None:
    """The checks above can fail: a lazy import inside a function counts, and a two-module cycle is found."""
    assert imports_in("def f():\n    if True:\n        from gradcli.check import checker\n") == {"gradcli.check"}
    assert "check" not in ALLOWED["program"]
    assert sorted(map(sorted, strongly_connected({"a": {"b"}, "b": {"a"}, "c": set()}))) == [["a", "b"], ["c"]]
