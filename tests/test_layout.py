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


def module_level_imports(source: str) -> set[str]:
    """The gradcli modules a file imports when it is imported: its top-level statements only, no lazy imports."""
    return imports_in("\n".join(ast.unparse(node) for node in ast.parse(source).body
                                if isinstance(node, (ast.Import, ast.ImportFrom))))


def engine_circles(lazy: bool) -> list[list[str]]:
    """The import circles among the engine's modules (the package's own `__init__` left out: `from gradcli.engine
    import ops` runs it, but what it needs is `ops`), counting lazy imports or only those that run on import."""
    read = (lambda path: imports_in(path.read_text(encoding="utf-8"))) if lazy else \
        (lambda path: module_level_imports(path.read_text(encoding="utf-8")))
    graph = {name: {t for t in read(path) if t.startswith("gradcli.engine.")} - {name}
             for name, path in MODULES.items() if name.startswith("gradcli.engine.")}
    return sorted(sorted(m.removeprefix("gradcli.engine.") for m in c) for c in strongly_connected(graph) if len(c) > 1)


def test_the_engines_circle_on_import_is_tensor_and_its_functions_and_the_op_tables_reading_of_its_package() -> None:
    """What docs/layout.md says of the circle: on import, Tensor <-> the functional API (and what builds tensors
    with them), and the op table's families <-> `engine/ops/__init__` (NUMPY, read at call time); the autograd API,
    backward, hooks, modes, forward AD and random join the circle only through lazy imports, the core's calls back."""
    on_import = engine_circles(lazy=False)
    assert len(on_import) == 2
    ops_circle, tensor_circle = sorted(on_import, key=len)
    assert all(m == "ops" or m.startswith("ops.") for m in ops_circle)
    assert {"tensor", "tensor_methods", "functions", "functions.declared", "views", "inplace"} <= set(tensor_circle)
    assert not {"backward", "autograd", "hooks", "modes", "state", "forward_ad", "random"} & set(tensor_circle)
    assert not [m for c in engine_circles(lazy=True) for m in c if m.startswith(("sliding", "special", "costs"))]


def test_the_graph_sees_lazy_and_upward_imports() -> None:
    """The checks above can fail: a lazy import inside a function counts, and a two-module cycle is found."""
    assert imports_in("def f():\n    if True:\n        from gradcli.check import checker\n") == {"gradcli.check"}
    assert "check" not in ALLOWED["program"]
    assert sorted(map(sorted, strongly_connected({"a": {"b"}, "b": {"a"}, "c": set()}))) == [["a", "b"], ["c"]]


# -- start-up: what a command imports (module names, never times) ------------------------------------------
LIBRARY_MODULES = tuple(f"gradcli.{name}" for name in sorted(LIBRARY))


def loaded_by(code: str) -> set[str]:
    """The gradcli modules (and sympy) a fresh interpreter holds after running `code`."""
    import subprocess
    import sys
    probe = code + "\nimport sys\nprint(' '.join(m for m in sys.modules if m.startswith(('gradcli', 'sympy'))))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300,
                          cwd=PACKAGE.parent, env={**__import__("os").environ, "PYTHONPATH": str(PACKAGE.parent)})
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split("\n")[-2].split())


def gradcli_main(*argv: str) -> str:
    """Run the `gradcli` command in-process (--debug: no watchdog fork, so the modules are this process's)."""
    return (f"import sys\nsys.argv = ['gradcli', *{list(argv)!r}, '--debug']\nfrom gradcli.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n")


def library_in(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.startswith(LIBRARY_MODULES) or m == "sympy")


def test_eval_of_one_line_imports_no_library_package_and_no_sympy() -> None:
    modules = loaded_by(gradcli_main("eval", "z = torch.sin(x) * (x + 2) ** 2", "x=ones(2)"))
    assert "gradcli.lang.interpreter" in modules  # the probe ran the command
    assert library_in(modules) == []


def test_run_of_a_script_on_core_tensors_imports_no_library_package(tmp_path: Path) -> None:
    script = tmp_path / "core.py"
    script.write_text("import torch\nimport math\nx = torch.ones(2, requires_grad=True)\n"
                      "y = (x * math.pi).sin().sum()\ny.backward()\nprint(x.grad)\n")
    modules = loaded_by(gradcli_main("run", str(script)))
    assert "gradcli.program.scripts" in modules
    assert library_in(modules) == []


def test_a_program_that_reaches_into_a_library_namespace_loads_that_family_only() -> None:
    modules = loaded_by(gradcli_main("eval", "import torch.nn as nn\nimport torch.optim\nout = nn.Linear(2, 1)(x).sum()",
                                     "x=ones(1,2)"))
    assert "gradcli.nn.layers" in modules
    assert not any(m.startswith(("gradcli.optim", "gradcli.distributions", "gradcli.func", "gradcli.data"))
                   for m in modules)


def test_the_command_line_and_the_public_api_load_no_language_runner_views_or_library() -> None:
    """`gradcli --help` needs the commands' options (and the limits' defaults they print), nothing that runs a
    program; `import gradcli` nothing at all until a name of its API is used."""
    assert not any(m.startswith("gradcli.") for m in loaded_by("import gradcli"))
    modules = loaded_by("import gradcli.cli")
    assert "gradcli.commands.eval" in modules
    assert not any(m.startswith(("gradcli.program.", "gradcli.views.", "gradcli.check")) for m in modules)
    assert not {"gradcli.lang.builtins", "gradcli.lang.interpreter", "gradcli.lang.parser"} & modules
    assert library_in(modules) == []


@pytest.mark.parametrize("first", ["gradcli.engine.functions", "gradcli.engine.rearranging", "gradcli.engine.logical"])
def test_the_engine_can_be_entered_through_any_of_its_modules(first: str) -> None:
    """Tensor's module, the functional API and the op table import each other; the circle closes whichever
    engine module a caller imports first (the engine package enters through Tensor's module)."""
    assert first in loaded_by(f"import {first}")


def test_a_library_type_tests_values_without_importing_its_module() -> None:
    code = ("from gradcli.lang.library import Module\nfrom gradcli.engine.creation import ones\n"
            "assert not isinstance(ones(2), Module) and not issubclass(int, Module)\n")
    assert library_in(loaded_by(code)) == []
    code += ("from gradcli.nn.layers import Linear\nassert isinstance(Linear(2, 1), Module) and issubclass(Linear, Module)\n"
             "assert not isinstance(ones(2), Module)\n")
    assert "gradcli.nn.modules" in loaded_by(code)


def test_a_library_function_called_wrongly_before_its_family_loads_is_told_its_usage() -> None:
    """`torch.selu` stands deferred in the table until `gradcli.nn` loads; a wrong first call is still the
    user's error with the function's own usage, as after the load."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "gradcli", "eval", "y = torch.selu(x, 1, 2, 3)", "x=1"],
                          capture_output=True, text=True, timeout=300, cwd=PACKAGE.parent,
                          env={**__import__("os").environ, "PYTHONPATH": str(PACKAGE.parent), "NO_COLOR": "1"})
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == "error[argument]: torch.selu(): too many positional arguments"


def test_a_family_whose_load_failed_is_loaded_again_on_the_next_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from gradcli.lang import builtins as B
    space = B._lazy("torch.trial", "trial")
    calls: list[int] = []

    def load() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        space.members["x"] = 1
    monkeypatch.setitem(B._LOADERS, "trial", load)
    with pytest.raises(KeyboardInterrupt):
        space.lookup("x")
    assert space.lookup("x") == 1
    assert space.lookup("x") == 1 and len(calls) == 2
