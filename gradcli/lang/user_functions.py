"""A program's own functions (`def`, `lambda`) and the scopes its names live in.

A `UserFunction` is an ordinary Python callable, so the engine can take it wherever PyTorch takes
a callable (`jacobian(f, x)`, `x.register_hook(fn)`); calling it runs its body in the interpreter
that defined it. Scopes follow Python's rules: a function's locals are the names it assigns
anywhere in its body (so reading one before assigning it is Python's error, not a silent read of
a global), reads fall back to the enclosing functions (closures, late-bound), then the module.
"""
from __future__ import annotations

import ast
import inspect
from typing import Any, Callable

from gradcli.errors import ArgumentError
from gradcli.lang.generators import is_generator


class Scope:
    """One namespace: a module's, a call's locals, or a comprehension's loop variables."""

    __slots__ = ("values", "local_names", "parent")

    def __init__(self, values: dict[str, Any], local_names: frozenset[str] = frozenset(),
                 parent: "Scope | None" = None) -> None:
        self.values = values
        self.local_names = local_names
        self.parent = parent


class UserFunction:
    """A `def` or `lambda` of the program, closed over the scope it was defined in."""

    def __init__(self, name: str, node: ast.FunctionDef | ast.Lambda, signature: inspect.Signature,
                 scope: Scope, run: Callable[["UserFunction", tuple, dict], Any],
                 names: frozenset[str] | None = None) -> None:
        self.__name__ = name
        self.node = node
        self.signature = signature
        self.scope = scope
        self.local_names = local_names(node) if names is None else names
        self.generator = is_generator(node)
        self._run = run
        params = list(signature.parameters.values())
        # A call with positions only, of a function with positional parameters only, binds without
        # inspect (most calls in a loop); anything else goes through Signature.bind and its messages.
        self._positional = None if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params) \
            else ([p.name for p in params], [p.default for p in params])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(self, args, kwargs)

    def bind(self, args: tuple, kwargs: dict) -> dict[str, Any]:
        """The call's local variables, with Python's rules for positions, keywords and defaults."""
        if self._positional is not None and not kwargs and len(args) <= len(self._positional[0]):
            names, defaults = self._positional
            bound = dict(zip(names, args))
            for name, default in zip(names[len(args):], defaults[len(args):]):
                if default is inspect.Parameter.empty:
                    break  # a missing argument: Signature.bind words the error
                bound[name] = default
            else:
                return bound
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as mismatch:
            raise ArgumentError(f"{self.__name__}(): {mismatch}",
                                hint=f"usage: {self.__name__}{_shown(self.signature)}") from None
        bound.apply_defaults()
        return dict(bound.arguments)

    def __repr__(self) -> str:
        return f"<function {self.__name__}>"  # Python's shape, without an address


def signature(args: ast.arguments, defaults: list[Any], kw_defaults: list[Any]) -> inspect.Signature:
    """The signature `def f(a, b=1, *rest, c, d=2)` declares, with its defaults already evaluated."""
    P = inspect.Parameter
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(defaults)
    params = [P(a.arg, P.POSITIONAL_ONLY if k < len(args.posonlyargs) else P.POSITIONAL_OR_KEYWORD,
                default=defaults[k - first_default] if k >= first_default else P.empty)
              for k, a in enumerate(positional)]
    if args.vararg is not None:
        params.append(P(args.vararg.arg, P.VAR_POSITIONAL))
    params += [P(a.arg, P.KEYWORD_ONLY, default=P.empty if d is REQUIRED else d)
               for a, d in zip(args.kwonlyargs, kw_defaults)]
    if args.kwarg is not None:
        params.append(P(args.kwarg.arg, P.VAR_KEYWORD))
    return inspect.Signature(params)


REQUIRED = object()
"""Marks a keyword-only parameter without a default in `kw_defaults`."""


def local_names(node: ast.FunctionDef | ast.Lambda) -> frozenset[str]:
    """Parameters and every name the body binds, not looking into nested functions or comprehensions."""
    args = node.args
    names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    for collected in (args.vararg, args.kwarg):
        if collected is not None:
            names.add(collected.arg)
    if isinstance(node, ast.Lambda):
        return frozenset(names)
    declared: set[str] = set()
    stack: list[ast.AST] = list(node.body)
    while stack:
        item = stack.pop()
        if isinstance(item, ast.FunctionDef):
            names.add(item.name)
            continue
        if isinstance(item, (ast.Global, ast.Nonlocal)):
            declared.update(item.names)
        if isinstance(item, (ast.Lambda, ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
            continue
        if isinstance(item, ast.ExceptHandler) and item.name:
            names.add(item.name)
        if isinstance(item, ast.Name) and isinstance(item.ctx, ast.Store):
            names.add(item.id)
        elif isinstance(item, ast.alias):
            names.add(item.asname or item.name.split(".")[0])
        stack.extend(ast.iter_child_nodes(item))
    return frozenset(names - declared)


def _shown(sig: inspect.Signature) -> str:
    return "(" + ", ".join(("*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else "") + p.name + ("" if p.default is p.empty else "=...")
                           for p in sig.parameters.values()) + ")"
