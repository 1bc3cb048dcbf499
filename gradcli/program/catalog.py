"""The catalogue behind `gradcli ops`: what a program can call, and how each call is differentiated.

Generated, never written out: names come from the language's allowlist (`builtins.FUNCTIONS`,
Python's builtins, torch's own switches, `TENSOR_METHODS`, `TENSOR_ATTRIBUTES`, `MODULES`), signatures from `inspect`, node names, rules
and `--check` coverage from the op table through `builtins.OP_OF`. Operators appear in no table,
so each is run once through the interpreter and the node it records tells its op. Primitives
that no name reaches (such as the op indexing's backward records under `create_graph`) are
listed too, so every entry of `ops.TABLE` shows up.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable

_EXAMPLES = {str: "'text'", list: "xs", dict: "d", set: "s"}
OPERATOR_FORMS = ("a + b", "a - b", "a * b", "a / b", "a ** b", "a @ b", "-a", "a[0]")


@dataclass(frozen=True)
class Entry:
    """One way to reach a computation: its name, how it is written, and the primitive behind it."""

    name: str
    kind: str
    call: str
    op: Any

    def to_json(self) -> dict:
        return {"name": self.name, "kind": self.kind, "call": self.call,
                "op": self.op.name if self.op else None, "node": self.op.node if self.op else None,
                "rule": self.op.rule if self.op else None, "check": self.op.sym is not None if self.op else None}


def _signature(fn: Callable[..., Any], bound: bool) -> str:
    """Parameters as a program writes them: names and defaults, no annotations, no `self`."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return "(...)"
    params = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()][1 if bound else 0:]
    return str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))


def _operator_ops() -> dict[str, Any]:
    """Each operator's primitive, read off the node it records on two tensors."""
    from gradcli.program.evaluation import Settings, engine_settings, run_program
    found = {}
    with engine_settings(Settings()):
        for form in OPERATOR_FORMS:
            out = run_program(f"out = {form}", {"a": "ones(2, 2)", "b": "ones(2, 2)"}).output
            found[form] = out.grad_fn.op
    return found


def _module_op(make: Callable[..., Any]) -> Any:
    """The primitive an `nn` module's functional records, if it has one."""
    from gradcli.lang import builtins as B
    functional = getattr(getattr(make, "__wrapped__", None), "functional", None)
    return None if functional is None else B.OP_OF.get(functional.__name__)


def entries() -> list[Entry]:
    """Every function, method, attribute and operator, then the primitives none of them reaches."""
    from gradcli.engine import ops as O
    from gradcli.lang import builtins as B
    from gradcli.engine.tensor import Tensor
    from gradcli.lang.python_builtins import PYTHON
    B.load_library()  # the catalogue lists every name, the library's too
    rows = [Entry(name, "function", name + _signature(fn, bound=False), B.OP_OF.get(name))
            for name, fn in B.FUNCTIONS.items()]
    rows += [Entry(name, "python", name + _signature(fn, bound=False), None) for name, fn in PYTHON.items()]
    rows += [Entry(name, "torch", f"torch.{name}" + _signature(fn, bound=False), None)
             for name, fn in B.TORCH.members.items() if callable(fn) and name not in B.FUNCTIONS]
    rows += [Entry(name, f"{kind.__name__} method", f"{_EXAMPLES.get(kind, kind.__name__.lower())}.{name}(...)", None)
             for kind, methods in B.SEQUENCE_METHODS.items() for name in methods]
    for name in B.TENSOR_METHODS:
        rows.append(Entry(name, "method", f"x.{name}{_signature(getattr(Tensor, name), bound=True)}",
                          B.OP_OF.get(name)))
    rows += [Entry(name, "attribute", f"x.{name}", B.OP_OF.get(name)) for name in B.TENSOR_ATTRIBUTES]
    for name, forms in B.TENSOR_FORMS.items():
        for op, args in forms:
            rows += [Entry(name, "function", f"{name}(x, {args})", op), Entry(name, "method", f"x.{name}({args})", op)]
    rows += [Entry(f"linalg.{name}", "function", f"torch.linalg.{name}{_signature(fn, bound=False)}",
                   B.OP_OF.get(name)) for name, fn in B.LINALG.members.items()]
    rows += [Entry(form, "operator", form, op) for form, op in _operator_ops().items()]
    rows += [Entry(f"F.{name}", "function", f"F.{name}{_signature(fn, bound=False)}", B.OP_OF.get(name))
             for name, fn in B.NN_FUNCTIONAL.members.items() if callable(fn) and name not in B.FUNCTIONS]
    rows += [Entry(f"nn.utils.{name}", "function", f"nn.utils.{name}{_signature(fn, bound=False)}", B.OP_OF.get(name))
             for name, fn in B.NN_UTILS.members.items() if callable(fn) and not isinstance(fn, B.Namespace)]
    for prefix, kind, space in (("nn", "module", B.NN), ("optim", "optimizer", B.OPTIM)):
        rows += [Entry(f"{prefix}.{name}", kind, f"{prefix}.{name}{_signature(fn, bound=False)}", _module_op(fn))
                 for name, fn in space.members.items() if callable(fn)]
    rows.sort(key=lambda e: (e.name.lower(), e.kind))
    reached = {id(e.op) for e in rows if e.op is not None}
    rows += [Entry(op.name, "primitive", "(recorded by gradcli itself, e.g. by a backward under create_graph)", op)
             for op in O.TABLE if id(op) not in reached]
    return rows


def matching(rows: list[Entry], text: str | None) -> list[Entry]:
    """Case-insensitive substring of the name, the primitive's name or its PyTorch node name.

    A filter nothing matches is a user error (a typo, most often), with the closest name.
    """
    if not text:
        return rows
    needle = text.lower()
    found = [e for e in rows if needle in e.name.lower()
             or (e.op is not None and (needle in e.op.name.lower() or needle in e.op.node.lower()))]
    if not found:
        import difflib

        from gradcli.errors import ArgumentError
        names = {e.name for e in rows} | {e.op.node for e in rows if e.op is not None}
        close = difflib.get_close_matches(text, sorted(names), n=1, cutoff=0.6)
        raise ArgumentError(f"no function, method, attribute or operator matches '{text}'",
                            hint=f"did you mean '{close[0]}'?" if close else
                            "no name is close to it; gradcli ops with no filter lists everything a program can use")
    return found


def namespaces(text: str | None = None) -> dict[str, str]:
    """Where else the functions are reachable (`torch.X`, `F.relu`), from the module table; with a filter,
    only the names that contain it, in the modules that have one (`gradcli ops softmax` asks where softmax
    is, not for every name of every module)."""
    from gradcli.lang import builtins as B
    B.load_library()
    out: dict[str, str] = {}
    for module, space in B.MODULES.items():
        names = {n for n, v in space.members.items() if callable(v)}
        if text:
            found = sorted(n for n in names if text.lower() in n.lower())
            if found:
                out[module] = ", ".join(found)
            continue
        missing = sorted(set(B.FUNCTIONS) - names)
        extra = sorted(names - set(B.FUNCTIONS))
        if len(missing) < len(names):
            out[module] = "every function" + (f" except {', '.join(missing)}" if missing else "") + \
                (f", and {', '.join(extra)}" if extra else "")
        elif names:
            out[module] = ", ".join(sorted(names))
    return out
