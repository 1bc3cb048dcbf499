"""The expressions of a program, compiled once into closures: names, constants, operators, comparisons,
attribute reads, subscripts, calls (of gradcli's functions, the program's own, classes, methods), lambdas,
comprehensions and f-strings. `Interpreter` inherits them; the statements, scopes and the call stack
are `interpreter.py`'s, reached through `self`."""
from __future__ import annotations

import ast
import difflib
import inspect
from types import MethodType
from typing import Any, Callable

import numpy as np

from gradcli.engine.autograd import as_tensor_backward
from gradcli.engine.backward import run_backward
from gradcli.engine.logical import invert
from gradcli.engine.tensor import AccumulateGrad, Node, Tensor, program_node
from gradcli.engine.tensor_str import UNINITIALIZED, Size
from gradcli.errors import ArgumentError, GradcliError, NameLookupError, NotAllowedError, ValueDomainError
from gradcli.lang import arrays as ARR
from gradcli.lang import dunders
from gradcli.lang import builtins as B
from gradcli.lang import classes as C
from gradcli.lang import containers as D
from gradcli.lang import formatting as T
from gradcli.lang import statements as S
from gradcli.lang.stdlib import runtime
from gradcli.lang.objects import Instance
from gradcli.lang.library import Module, registered
from gradcli.lang.exceptions import EXCEPTIONS, RaisedError, builtins_own
from gradcli.lang import generators as G
from gradcli.lang.limits import check_list, check_string
from gradcli.lang.operators import (BINARY, COMPARE, COMPARED, EXACT, NUMBER, PLAIN, arithmetic, compare, exact, index,
                                    truth, type_name)
from gradcli.lang.python_builtins import PYTHON, items, iterate
from gradcli.lang.user_functions import Scope, UserFunction, signature
from gradcli.lang.numpy_facade.namespace import refusal as numpy_refusal
from gradcli.lang.parser import READABLE_ATTRIBUTES


_NUMPY_ALIASES = {"axis": "dim", "keepdims": "keepdim"}


def _takes_numpy_aliases(func: Any, kwargs: dict) -> bool:
    """PyTorch's argument parser reads `axis=` as `dim=` and `keepdims=` as `keepdim=` for its own functions
    and methods: true for an engine function taking the torch names that was given only the NumPy ones."""
    given = [alias for alias in _NUMPY_ALIASES if alias in kwargs]
    if not given or any(_NUMPY_ALIASES[alias] in kwargs for alias in given):
        return False
    owner = getattr(func, "__self__", None)
    if not (getattr(func, "__module__", "") or "").startswith(B.TORCH_MODULES) and type(owner) is not Tensor:
        return False
    try:
        names = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return all(_NUMPY_ALIASES[alias] in names and alias not in names for alias in given)


def _produced(generators: list, element_of: Callable[[], Any], step: Callable[[], None]) -> Callable[..., Any]:
    """A comprehension's items, level by level (`produce(0, first_values)` yields them); each item visited is
    a `step`, kept or filtered out, so `[0 for i in r for j in r if False]` meets the step limit too."""
    def produce(level: int, values: Any) -> Any:
        _, bind, tests = generators[level]
        for value in values:
            step()
            bind(value)
            if not all(truth(test_of()) for test_of in tests):
                continue
            if level + 1 < len(generators):
                yield from produce(level + 1, iterate(generators[level + 1][0]()))
            else:
                yield element_of()
    return produce


class _Print:
    """`print` as a value: `callable(print)`, `map(print, xs)`. A call of it at a call site is the
    interpreter's own (`_print`, titled by the source); one made by a builtin prints its text."""

    def __call__(self, *args: Any, sep: str | None = " ", end: str | None = "\n", flush: bool = False) -> None:
        text = (" " if sep is None else str(sep)).join(T.to_str(a) for a in args)
        check_string(len(text))
        runtime.show(text)

    def __repr__(self) -> str:
        return "<built-in function print>"


_PRINT = _Print()


def _shown(value: Any) -> Any:
    """A list or tuple goes to the caller as its (bounded) text; other values as they are."""
    if isinstance(value, C.Instance):  # its own __str__, run now, under the program's budget
        return T.Shown(T.to_str(value))
    return T.Shown(T.to_repr(value)) if isinstance(value, (list, tuple, dict, set)) else value


def _plain_method(owner: Any, attr: str, func: Any) -> bool:
    """Whether every instance of `owner`'s class gives `func` (a method bound to `owner`) for `attr`, and
    `_invoke` would only call it: it is callable and not backward (a bound method is never one of the
    gradient functions, and the call has no device= to check)."""
    cls = type(owner)
    return type(func) is MethodType and func.__self__ is owner and cls.__dictoffset__ == 0 and \
        cls.__getattribute__ is object.__getattribute__ and getattr(cls, attr, None) is func.__func__ and \
        not _is_backward(func)


def _is_backward(func: Any) -> bool:
    return getattr(func, "__name__", None) == "backward" and isinstance(getattr(func, "__self__", None), Tensor)


def _suggest(name: str, candidates: Any) -> str | None:
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else None


def _pythons_own(exc: Exception) -> RaisedError:
    """A Python exception out of a builtin or a facade (`random.uniform(0, 's')`, `sorted(xs, key=0)`) is what
    Python raises there: the program's own, of the same type, which it may catch (--debug shows where it began).
    The caller has asked `builtins_own`: anything else is a bug in gradcli, raised on as it is (an internal error)."""
    text = str(exc) if not isinstance(exc, KeyError) or not exc.args else exc.args[0]
    return RaisedError(EXCEPTIONS[type(exc).__name__](text if isinstance(text, (str, int, float)) else str(text)))


def _argument_error(exc: TypeError, func: Any, args: list, kwargs: dict, name: str) -> Exception:
    """The user's mistake if the arguments do not fit the signature; otherwise the TypeError is a bug, kept."""
    import inspect
    target = getattr(func, "__wrapped__", func)
    try:
        signature = inspect.signature(target)
        signature.bind(*args, **kwargs)
    except TypeError as mismatch:
        return ArgumentError(f"{name}(): {mismatch}", hint=_signature_hint(name, signature))
    except ValueError:
        return exc
    return exc


_SIGNATURES: dict[Any, tuple[inspect.Signature, bool]] = {}


"""Per function: its signature, and whether every parameter has a default (a bare call binds nothing)."""


def _bind(method: Any, name: str, args: list, kwargs: dict) -> dict[str, Any]:
    """The arguments a call gives `method` by parameter name, its signature read once per function."""
    function = getattr(method, "__func__", method)
    known = _SIGNATURES.get(function)
    if known is None:
        signature_ = inspect.signature(method)
        known = _SIGNATURES[function] = (signature_, all(p.default is not p.empty
                                                         for p in signature_.parameters.values()))
    signature_, optional = known
    if optional and not args and not kwargs:
        return {}
    try:
        return signature_.bind(*args, **kwargs).arguments
    except TypeError as mismatch:
        raise ArgumentError(f"{name}(): {mismatch}", hint=_signature_hint(name, signature_)) from None


def _signature_hint(name: str, signature: Any) -> str:
    params = [p for p in signature.parameters.values() if p.name != "self"]
    shown = ", ".join(str(p).split(":")[0].split(" =")[0] + ("=" + repr(p.default) if p.default is not p.empty
                                                              else "") for p in params)
    return f"usage: {name.rsplit('.', 1)[-1]}({shown})"


class Expressions:
    """The `_expressions` half of `Interpreter`: one compiler per expression node type."""

    # -- expressions ----------------------------------------------------------------------------
    def _name(self, node: ast.Name) -> Callable[[], Any]:
        name, lookup, locate = node.id, self._lookup, self._locate

        def read_name() -> Any:
            values = self.scope.values
            if name in values:
                return values[name]
            try:
                return lookup(name)
            except GradcliError as exc:
                raise locate(exc, node) from None
        return read_name


    def _lookup(self, name: str) -> Any:
        """Python's order: the scopes from the innermost out, then gradcli's builtins."""
        scope: Scope | None = self.scope
        while scope is not None:
            if name in scope.values:
                return scope.values[name]
            if name in scope.local_names:
                raise NameLookupError(f"cannot access local variable '{name}' where it is not associated with a "
                                      f"value", hint=f"assign '{name}' before this line in the function, or pass "
                                                     "it in as an argument")
            scope = scope.parent
        for table in (B.PRELUDE, self.own, PYTHON, B.FUNCTIONS):
            if name in table:
                return table[name]
        if name == "print":
            return _PRINT
        if name == "__name__":
            return "__main__"
        known = list(self.env) + list(self.scope.values) + list(B.PRELUDE) + list(PYTHON) + list(B.FUNCTIONS) + \
            ["print"]
        raise NameLookupError(f"name '{name}' is not defined", hint=_suggest(name, known) or
                              f"define it first ({name} = ...); a program given to gradcli eval can also take it "
                              f"as an input after the program: {name}=[1.0, 2.0]")


    def _lambda(self, node: ast.Lambda) -> Callable[[], UserFunction]:
        return self._located(node, self._function_maker("<lambda>", node))


    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.DictComp) -> Callable[[], list]:
        """A list, set or dict comprehension, built eagerly (bounded)."""
        generators = self._comprehension_levels(node)
        if isinstance(node, ast.DictComp):
            key_of, item_of = self._expression(node.key), self._expression(node.value)

            def element_of() -> tuple:
                return key_of(), item_of()
        else:
            element_of = self._expression(node.elt)
        produce = _produced(generators, element_of, self.budget.step)
        made = {ast.SetComp: D.set_, ast.DictComp: D.dict_}.get(type(node))

        def comprehension() -> list:
            result: list = []
            first = iterate(generators[0][0]())
            outer, self.scope = self.scope, Scope({}, frozenset(), self.scope)
            try:
                for item in produce(0, first):
                    check_list(len(result) + 1)
                    result.append(item)
            finally:
                self.scope = outer
            return result if made is None else made(result)
        return self._located(node, comprehension)


    def _comprehension_levels(self, node: ast.comprehension) -> list[tuple[Callable[[], Any], Callable[[Any], None],
                                                                          list[Callable[[], Any]]]]:
        """Each `for` of a comprehension: its iterable, its target's binder, its `if` tests."""
        return [(self._expression(g.iter), self._binder(g.target), [self._expression(t) for t in g.ifs])
                for g in node.generators]


    def _generator_expression(self, node: ast.GeneratorExp) -> Callable[[], G.ProgramGenerator]:
        """`(e for v in xs)`: a lazy generator, as Python's; its first iterable is read where it is written,
        and each item it visits is a step (an endless one meets the step limit wherever it is consumed)."""
        generators, element_of = self._comprehension_levels(node), self._expression(node.elt)
        produce, locate = _produced(generators, element_of, self.budget.step), self._locate

        def generator_expression() -> G.ProgramGenerator:
            first = iterate(generators[0][0]())

            def body() -> Any:
                try:
                    yield from produce(0, first)
                except GradcliError as exc:
                    raise locate(exc, node) from None
            return G.ProgramGenerator(self, "<genexpr>", Scope({}, frozenset(), self.scope), body, None)
        return self._located(node, generator_expression)


    def _f_string(self, node: ast.JoinedStr) -> Callable[[], str]:
        return self._located(node, self._joined(node))


    def _joined(self, node: ast.JoinedStr) -> Callable[[], str]:
        """An f-string's text (a format spec is one too), its errors placed by the caller."""
        parts: list[Any] = []
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                spec_of = self._joined(part.format_spec) if part.format_spec is not None else None
                conversion = chr(part.conversion) if part.conversion > 0 else None
                parts.append((self._expression(part.value), spec_of, conversion))
            else:
                parts.append(part.value)

        def f_string() -> str:
            texts = []
            size = 0
            for part in parts:
                if isinstance(part, str):
                    text = part
                else:
                    value_of, spec_of, conversion = part
                    spec = spec_of() if spec_of is not None else ""
                    text = T.format_value(value_of(), spec, conversion)
                size += len(text)
                check_string(size)
                texts.append(text)
            return "".join(texts)
        return f_string


    def _list(self, node: ast.List) -> Callable[[], list]:
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return self._located(node, self._arguments(node.elts))
        element_ofs = [self._expression(e) for e in node.elts]
        return self._located(node, lambda: [e() for e in element_ofs])


    def _tuple(self, node: ast.Tuple) -> Callable[[], tuple]:
        if any(isinstance(e, ast.Starred) for e in node.elts):
            elements = self._arguments(node.elts)
            return self._located(node, lambda: tuple(elements()))
        element_ofs = [self._expression(e) for e in node.elts]
        return self._located(node, lambda: tuple(e() for e in element_ofs))


    def _set(self, node: ast.Set) -> Callable[[], set]:
        elements = self._arguments(node.elts)
        return self._located(node, lambda: D.set_(elements()))


    def _dict(self, node: ast.Dict) -> Callable[[], dict]:
        parts = [(None if k is None else self._expression(k), self._expression(v)) for k, v in zip(node.keys, node.values)]

        def dict_() -> dict:
            out: dict = {}
            for key_of, value_of in parts:
                if key_of is None:
                    D.update_from(out, value_of())
                else:
                    D.set_item(out, key_of(), value_of())
            return out
        return self._located(node, dict_)


    def _unary(self, node: ast.UnaryOp) -> Callable[[], Any]:
        operand_of, op = self._expression(node.operand), node.op

        def unary() -> Any:
            value = operand_of()
            if isinstance(op, ast.Not):
                return not truth(value)
            if isinstance(op, ast.Invert):
                return ARR.unary("~", value) if isinstance(value, np.ndarray) else invert(value)
            if isinstance(value, Tensor):
                return -value if isinstance(op, ast.USub) else value
            if isinstance(value, NUMBER):
                return -value if isinstance(op, ast.USub) else +value
            if isinstance(value, Instance) and isinstance(op, (ast.USub, ast.UAdd)):
                return dunders.unary("-" if isinstance(op, ast.USub) else "+", value)
            if isinstance(value, np.ndarray):
                return ARR.unary("-" if isinstance(op, ast.USub) else "+", value)
            raise ArgumentError(f"bad operand type for unary {'-' if isinstance(op, ast.USub) else '+'}: "
                                f"{type_name(value)}")
        return self._located(node, unary)


    def _binary(self, node: ast.BinOp) -> Callable[[], Any]:
        (left_of, left_value), (right_of, right_value) = self._operand(node.left), self._operand(node.right)
        op = node.op
        symbol, fn = BINARY[type(op)]
        locate = self._locate
        on_tensors = symbol != "//"
        on_numbers = symbol in EXACT  # two Python numbers: Python's own operator, ints kept to a size

        def binary() -> Any:
            try:
                left = left_value if left_of is None else left_of()
                right = right_value if right_of is None else right_of()
                # tensor with tensor or number: what `_arithmetic` would decide, without its checks
                if on_tensors and (isinstance(left, Tensor) and (isinstance(right, Tensor) or type(right) in PLAIN)
                                   or isinstance(right, Tensor) and type(left) in PLAIN):
                    return fn(left, right)
                if on_numbers and type(left) is type(right) and type(left) in PLAIN:
                    return exact(fn, left, right)
                return arithmetic(op, left, right)
            except GradcliError as exc:
                raise locate(exc, node) from None
        return binary


    def _bool_op(self, node: ast.BoolOp) -> Callable[[], Any]:
        is_and = isinstance(node.op, ast.And)
        operands = [(self._expression(v), v) for v in node.values]

        def bool_op() -> Any:
            value = None
            for value_of, operand in operands:
                value = value_of()
                if truth(value) != is_and:
                    return value
            return value
        return self._located(node, bool_op)


    def _compare(self, node: ast.Compare) -> Callable[[], Any]:
        left_of = self._expression(node.left)
        locate = self._locate
        if len(node.ops) == 1:
            op, (right_of, right_value) = node.ops[0], self._operand(node.comparators[0])
            fn = None if isinstance(op, (ast.Is, ast.IsNot)) else COMPARE[type(op)]

            def compare_one() -> Any:
                try:
                    left = left_of()
                    right = right_value if right_of is None else right_of()
                    if fn is not None and type(left) in COMPARED and type(right) in COMPARED:
                        return fn(left, right)  # numbers and tensors: what `compare` would decide
                    return compare(op, left, right)
                except GradcliError as exc:
                    raise locate(exc, node) from None
            return compare_one

        pairs = [(op, self._expression(c)) for op, c in zip(node.ops, node.comparators)]

        def compare_chain() -> Any:
            left = left_of()
            result: Any = True
            for op, right_of in pairs:
                right = right_of()
                outcome = compare(op, left, right)
                if not truth(outcome):
                    return False
                result, left = outcome, right
            return result
        return self._located(node, compare_chain)


    def _if_exp(self, node: ast.IfExp) -> Callable[[], Any]:
        test_of, body_of, orelse_of = (self._expression(n) for n in (node.test, node.body, node.orelse))
        return self._located(node, lambda: body_of() if truth(test_of()) else orelse_of())


    def _subscript(self, node: ast.Subscript) -> Callable[[], Any]:
        value_of, key_of, locate = self._expression(node.value), self._expression(node.slice), self._locate

        def subscript() -> Any:
            try:
                return index(value_of(), key_of())
            except GradcliError as exc:
                raise locate(exc, node) from None
        return subscript


    def _slice(self, node: ast.Slice) -> Callable[[], slice]:
        part_ofs = [None if part is None else self._expression(part) for part in (node.lower, node.upper, node.step)]

        def slice_() -> slice:
            parts = []
            for part_of in part_ofs:
                v = None if part_of is None else part_of()
                if isinstance(v, Tensor):
                    v = int(v)
                if v is not None and (not isinstance(v, (int, np.integer)) or isinstance(v, bool)):
                    raise ArgumentError(f"slice bounds must be integers, got {v!r}")
                parts.append(v)
            if parts[2] == 0:
                raise ValueDomainError("slice step cannot be zero", hint="step by 1, or -1 to reverse a list")
            return slice(*parts)
        return self._located(node, slice_)


    def _attribute(self, node: ast.Attribute) -> Callable[[], Any]:
        owner_of, attr, get, locate = self._expression(node.value), node.attr, self._get_attribute, self._locate
        plain: set[type] = set()  # the owner types on which this attribute is simply getattr

        def attribute() -> Any:
            try:
                owner = owner_of()
                if type(owner) in plain:
                    return getattr(owner, attr)
                return get(owner, attr, node, plain)
            except GradcliError as exc:
                raise locate(exc, node) from None
        return attribute


    def _get_attribute(self, owner: Any, attr: str, node: ast.AST, plain: set[type] | None = None) -> Any:
        if isinstance(owner, B.Namespace):
            if attr in owner.members:
                return owner.members[attr]
            if attr == "__name__":
                return owner.name  # a module's dotted name, as Python's own modules answer
        elif attr in READABLE_ATTRIBUTES:
            return S.class_view(owner, attr)
        elif isinstance(owner, C.OWNERS):
            return C.attribute(owner, attr)
        elif isinstance(owner, Module) and registered(owner, attr):
            return getattr(owner, attr)  # a built-in module's own names: `net.fc1` of a Sequential, `lstm.weight_hh_l0`
        elif attr in B.attribute_names(owner):
            if type(owner) is Tensor and UNINITIALIZED and UNINITIALIZED.has(owner):
                B.refuse_uninitialized(attr)
            if type(owner) in B.SEQUENCE_METHODS:
                return B.bound_method(owner, attr)
            if isinstance(owner, (np.ndarray, np.generic)):
                return ARR.attribute(owner, attr)
            value = getattr(owner, attr)
            if attr == "shape" and type(owner) is not np.ndarray:
                return Size(value)
            if attr == "name" and isinstance(owner, (Node, AccumulateGrad)):
                return B.NodeName(value)
            if attr in ("grad_fn", "creator") and type(owner) is Tensor:
                return program_node(value)  # a Function's output shows its Function's node, as in PyTorch
            if plain is not None:
                plain.add(type(owner))
            return value
        if (type(owner) is np.ndarray or isinstance(owner, B.Namespace) and owner.name.startswith("numpy")) and \
                numpy_refusal(attr):
            raise NotAllowedError(f"'{attr}' of NumPy is not available: gradcli refuses {numpy_refusal(attr)}",
                                  hint="gradcli's NumPy is its numeric API on arrays of numbers")
        if isinstance(owner, B.Namespace) and owner.refusal:
            raise NotAllowedError(f"'{owner.name}.{attr}' is not available: {owner.refusal}",
                                  hint="docs/library.md lists what gradcli runs of torch.distributed")
        allowed = B.attribute_names(owner)
        what = f"'{owner.name}'" if isinstance(owner, B.Namespace) else f"a {type_name(owner)}"
        hint = _suggest(attr, allowed) or "`gradcli ops` lists what a program can use"
        if not isinstance(owner, (Tensor, B.Namespace)) and callable(owner) and B.TORCH.lookup(attr) is not None:
            hint = f"to use {attr} from torch under a short name, import it first: import torch as " \
                   f"{getattr(owner, '__name__', 't')}"
        if type(owner) is Tensor and not _suggest(attr, allowed) and attr in B.NN_FUNCTIONAL.members:
            hint = f"PyTorch has no Tensor.{attr}: write torch.nn.functional.{attr}(x)"
        if owner is B.TORCH and attr in B.NOT_IN_TORCH:
            home = next((space.name for space in (B.NN_FUNCTIONAL, B.AUTOGRAD, B.AUTOGRAD_FUNCTIONAL)
                         if attr in space.members), None)
            call = "x" if home == B.NN_FUNCTIONAL.name else "..."
            raise NameLookupError(f"module 'torch' has no attribute '{attr}'",
                                  hint=f"write {home}.{attr}({call})" if home else f"it is a Tensor method: write x.{attr}(...)")
        raise NameLookupError(f"attribute '{attr}' is not available on {what}", hint=hint)


    def _call(self, node: ast.Call) -> Callable[[], Any]:
        """A call; `owner.method(...)` without keywords calls a plain method of the owner's class directly.

        Whether a site's method is plain is decided per owner class, the first time the site meets
        it, by the general path: a Python function of the class that every instance binds the same
        way (no instance dict, no custom attribute lookup), that is not `backward` and not a gradient
        function, so `_invoke`'s checks would all pass. The direct call skips the bound method and those
        checks; a call whose arguments do not fit is named exactly as `_apply` names it.
        """
        callee = node.func
        arguments = self._arguments(node.args)
        keywords = [(k.arg, self._expression(k.value)) for k in node.keywords]
        spread = any(word is None for word, _ in keywords)
        invoke, locate, sites = self._invoke, self._locate, self.call_sites
        if isinstance(callee, ast.Attribute) and not keywords:
            owner_of, func_of, attr, get = self._expression(callee.value), None, callee.attr, self._get_attribute
        else:
            owner_of, func_of = None, self._expression(callee)
        plain: set[type] = set()  # owner classes on which `attr` is simply getattr (see `_attribute`)
        methods: dict[type, Callable[..., Any] | None] = {}  # per owner class: its plain method `attr`, or None

        def call() -> Any:
            try:
                if owner_of is not None:
                    owner = owner_of()
                    method = methods.get(type(owner))
                    if method is not None:
                        args = arguments()
                        sites.append(node)
                        try:
                            return method(owner, *args)
                        except TypeError as exc:
                            raise _argument_error(exc, MethodType(method, owner), args, {}, self.text(callee)) from None
                        finally:
                            sites.pop()
                    try:
                        func = getattr(owner, attr) if type(owner) in plain else get(owner, attr, callee, plain)
                    except GradcliError as exc:
                        raise locate(exc, callee) from None
                    if type(owner) in plain and type(owner) not in methods:  # decided once: None is not plain
                        methods[type(owner)] = func.__func__ if _plain_method(owner, attr, func) else None
                else:
                    func = func_of()
                args = arguments()
                kwargs = {word: value_of() for word, value_of in keywords} if keywords and not spread else \
                    S.keywords(keywords) if keywords else {}
                if func is _PRINT:
                    self._print(node, args, kwargs)
                    return None
                sites.append(node)
                try:
                    return invoke(func, args, kwargs, node)
                finally:
                    sites.pop()
            except GradcliError as exc:
                raise locate(exc, node) from None
        return call


    def _arguments(self, nodes: list[ast.expr]) -> Callable[[], list]:
        """A call's positional arguments as a new list each time (no call at all when they are constants)."""
        if all(isinstance(a, ast.Constant) for a in nodes):
            return [a.value for a in nodes].copy
        if len(nodes) == 1 and not isinstance(nodes[0], ast.Starred):
            only = self._expression(nodes[0])
            return lambda: [only()]
        if not any(isinstance(a, ast.Starred) for a in nodes):
            value_ofs = [self._expression(a) for a in nodes]
            return lambda: [value_of() for value_of in value_ofs]
        parts = [(isinstance(a, ast.Starred), self._expression(a.value if isinstance(a, ast.Starred) else a))
                 for a in nodes]

        def arguments() -> list:
            args: list = []
            for starred, value_of in parts:
                if starred:
                    more = items(value_of())
                    check_list(len(args) + len(more))
                    args.extend(more)
                else:
                    args.append(value_of())
            return args
        return arguments


    def _print(self, node: ast.Call, args: list, kwargs: dict) -> None:
        """`print(...)`: the text Python's print writes (a tensor as PyTorch prints it, `sep` and `end`
        honoured), and each argument titled by its source for the JSON view."""
        unknown = set(kwargs) - {"sep", "end", "flush"}
        if unknown:
            raise ArgumentError(f"print() got an unexpected keyword argument '{sorted(unknown)[0]}'",
                                hint="print(a, b, sep=', ', end='\\n')")
        for word in ("sep", "end"):
            if kwargs.get(word) is not None and not isinstance(kwargs[word], str):
                raise ArgumentError(f"{word} must be None or a string, not {type_name(kwargs[word])}")
        sep = " " if kwargs.get("sep") is None else kwargs["sep"]
        end = "\n" if kwargs.get("end") is None else kwargs["end"]
        starred = any(isinstance(a, ast.Starred) for a in node.args)
        titles = [""] * len(args) if starred else [self.text(a) for a in node.args]
        items, parts, length = [], [], len(end) - len(sep)
        for title, value in zip(titles, args):
            shown = _shown(value)
            parts.append(T.to_str(shown))
            length += len(parts[-1]) + len(sep)
            check_string(length)  # as it grows: a million long arguments stop at the first that passes the limit
            items.append((title, shown))
        if self.hooks.on_print is not None:
            self.hooks.on_print(items, node.lineno, sep.join(parts) + end)


    def _show_text(self, text: str) -> None:
        """What a facade prints (pprint, warnings.warn), as a print of the call that asked."""
        site = self.call_sites[-1] if self.call_sites else None
        if self.hooks.on_print is not None:
            self.hooks.on_print([(self.text(site) if site is not None else "", T.Shown(text))],
                                site.lineno if site is not None else 0, text + "\n")

    def _call_line(self) -> int:
        """The line of the call being made (0 at none), for a facade that says where it was called."""
        return self.call_sites[-1].lineno if self.call_sites else 0


    def _invoke(self, func: Any, args: list, kwargs: dict, node: ast.Call) -> Any:
        if not callable(func) or isinstance(func, (Tensor, B.Namespace, type)):
            raise ArgumentError(f"'{self.text(node.func)}' is not a function", hint="call functions and methods only")
        if self.hooks.on_backward is not None and func is B.AUTOGRAD.members["backward"]:
            func, args, kwargs = as_tensor_backward(args, kwargs) or (func, args, kwargs)
        if self.hooks.on_backward is not None and _is_backward(func):
            return self._backward(func, args, kwargs, node)
        if "device" in kwargs and B.takes_device(func):
            B.check_device(kwargs.pop("device"))
        kind = B.gradient_kind(func) if self.hooks.on_gradient is not None else None
        if kind is None:
            return self._apply(func, func, args, kwargs, node)

        def counted(target: Any = func) -> Any:
            with self.budget.counted():
                return self._apply(target, func, args, kwargs, node)
        with self.budget.checking():
            return self.hooks.on_gradient(kind, func, counted, args, kwargs, node.lineno)


    def _apply(self, target: Any, func: Any, args: list, kwargs: dict, node: ast.Call) -> Any:
        """Call `target` (`func`, or a traced variant of it) with a call's arguments; arguments that do not
        fit `func` are the user's mistake, named by the call."""
        try:
            return target(*args, **kwargs)
        except TypeError as exc:
            if isinstance(func, UserFunction):
                raise
            if _takes_numpy_aliases(func, kwargs):  # PyTorch's NumPy-style aliases: x.sum(axis=0, keepdims=True)
                kwargs = {_NUMPY_ALIASES.get(k, k): v for k, v in kwargs.items()}
                return self._apply(target, func, args, kwargs, node)
            error = _argument_error(exc, func, args, kwargs, self.text(node.func))
            if error is not exc:
                raise error from None
            if not builtins_own(exc):
                raise
            raise _pythons_own(exc) from exc
        except (ValueError, OverflowError, ZeroDivisionError, IndexError, KeyError) as exc:
            if not builtins_own(exc):
                raise
            raise _pythons_own(exc) from exc


    def _backward(self, method: Any, args: list, kwargs: dict, node: ast.Call) -> None:
        """Hand `.backward(...)` to the hook as a `run(trace=None)` closure, arguments already bound."""
        tensor = method.__self__
        bound = _bind(method, "backward", args, kwargs)

        def run(trace: Any = None) -> None:
            with self.budget.counted():
                run_backward((tensor,), (bound.get("gradient"),), bound.get("retain_graph"),
                             bound.get("create_graph", False), trace=trace)
        with self.budget.checking():
            self.hooks.on_backward(tensor, run, dict(bound), node.lineno)


    def _is_print(self) -> bool:
        try:
            return self._lookup("print") is _PRINT
        except NameLookupError:
            return False
