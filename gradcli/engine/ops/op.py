"""What every primitive is: `Op` (forward, VJPs, JVP, SymPy meaning, kink, node name), the public
`Names` and `Element` meaning a declaration gives it, the forward-mode rules the families pick from,
`unbroadcast`, and `_unary`, the one-call declaration of an elementwise function."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from gradcli.engine import ops  # the package, for NUMPY: read at call time, since every family builds it


@dataclass(frozen=True, eq=False, kw_only=True)
class Op:
    """One primitive. `vjps[i]` is called as `vjps[i](ns, g, out, *inputs, **params)`.

    `saves[i]` names the values `vjps[i]` reads: its input names (`args`, by default `x` for one
    input and `ab` for two) and `o` for the output. A node keeps only what the VJPs of inputs that
    require grad read, as PyTorch does: anything else is passed to the VJP as the input's graph
    node (shape, ndim and dtype, no data), so a long chain does not hold every intermediate.

    `nests` is False when the SymPy meaning only adds, multiplies or rearranges its operands'
    expressions (SymPy flattens those into one Add or Mul) and True when it wraps them in a
    function (exp, Max, a power): `--check` bounds how deep such functions nest, because SymPy's
    derivatives and printing recurse through every level.

    `elementwise` is True when each output element depends only on the input elements at its own
    (broadcast) position: `gradcli plot` sweeps a program built only of such ops in one batch.

    `names` are the names a program calls the primitive by (`torch.X`, `Tensor.X`, `X_`, aliases);
    `element` its meaning at one element for `--check` and `domain` where its real value does not
    exist (each a test of the first input and the words for a learner). The namespaces, the language's
    tables and the checker's are derived from these, so a function is declared here and nowhere else.

    `batching` names the kind of vmap rule that maps the op over a batch (`func/batching.py`'s `KINDS`, which the
    engine does not import): `broadcast` (implied by `elementwise`), `along_dim` (the `dim` param moves past the
    batch), `along_given_dim` (the same, with no rule for the whole-tensor form). "" when the op has none or a
    rule of its own, registered by op name in `engine/batched.py`'s `RULES`.

    `cost` estimates the seconds the forward takes, from its input arrays and params (`engine/costs.py`), for an
    op that can run for minutes within the element cap: `apply` refuses it when that is more than the time left.

    `approximate`, when set, says why `--check` cannot judge the derivative through the op (an approximation
    with no closed form, as a gamma draw's implicit gradient); its `kink` then covers every element
    (`K.everywhere`), so what reaches the op through an input is reported undefined in these words, never
    compared with the op's own meaning.

    `jvp` is forward mode's rule, `jvp(op, tangents, out, *inputs, **params)` on arrays (a tangent
    per input, None where an input has none), giving the output's tangent: one of the rules below
    (`diagonal_jvp`, `linear_jvp`, `sum_linear_jvp`, `product_jvp`, `transposed_jvp`) or the op's own.
    None: forward AD refuses the op, as PyTorch refuses an op with no forward derivative.
    """

    name: str
    node: str
    forward: Callable[..., Any]
    vjps: tuple[Callable[..., Any] | None, ...]
    rule: str
    saves: tuple[str, ...] = ()
    sym: Callable[..., Any] | None = None
    kink: Callable[..., Any] | None = None
    args: str = ""
    nests: bool = True
    elementwise: bool = False
    plans: tuple = field(default=(), repr=False)
    jvp: Callable[..., Any] | None = None
    cost: Callable[..., float] | None = None
    names: "Names | None" = None
    element: "Element | None" = None
    domain: tuple[tuple[Callable[[np.ndarray], np.ndarray], str], ...] = ()
    approximate: str = ""
    batching: str = ""

    def __post_init__(self) -> None:
        if self.sym is None and self.element is not None:
            object.__setattr__(self, "sym", (_sym_map if len(self.vjps) == 1 else _sym_pair)(self.name))
        if len(self.vjps) <= 3:
            names = self.args or ("x" if len(self.vjps) == 1 else "ab")
            plans = []
            for mask in range(1 << len(self.vjps)):
                read = "".join(s for i, s in enumerate(self.saves) if mask >> i & 1)
                plans.append((_kept(tuple(n in read for n in names)), "o" in read) if read else None)
            object.__setattr__(self, "plans", tuple(plans))

    def plan(self, mask: int) -> tuple[Any, bool] | None:
        """Which inputs (and whether the output) a node keeps when the inputs in bit `mask` require grad.

        None when nothing is read: such a node can run backward again after its graph is freed, as
        in PyTorch (`(x + x).sum()` twice works, `(x * 2).sum()` twice does not). `plans` holds the
        answers by mask, precomputed for up to three inputs (cat and stack read nothing). The
        inputs part is in `_kept`'s shorthand, which `Node` reads without looping.
        """
        return self.plans[mask] if self.plans else None


REQUIRED: Any = type("Required", (), {"__repr__": lambda self: "<required>"})()
"""The default of an `Arg` a call must give."""


@dataclass(frozen=True)
class Arg:
    """One argument of a declared function, as PyTorch names it. `kind` says how a value is read (the
    readers are `engine/functions/declared.py`'s: `tensor`, `operand` (a tensor or a number), `dims`,
    `dim`, `implicit_dim` (a dim, or None for a tensor of at most one dimension), `flag`, `dtype`, `norm_p` (a
    nonzero number or 'fro'), `count` (an integer or None), `any`); a keyword argument comes after `*`."""

    name: str
    kind: str
    default: Any = REQUIRED
    keyword: bool = False


@dataclass(frozen=True)
class Signature:
    """How `torch.X(...)` reads its arguments and applies the op, for a primitive with arguments of its own.

    `form` is how the read arguments reach the op (the forms are `engine/functions/declared.py`'s:
    `reduction` and `scan` over one input, `binary` of two operands, `extremum` for max and min's three
    overloads; `written` when `torch.X` is the
    function of that name its family of `engine/functions/` writes by hand, whose names, Tensor method and
    tables are still derived from the declaration). `checks` are what the input must be (`float`,
    `nonempty`); `numbered` names the node X0 over the whole tensor and X1 over dims (sum, mean, prod);
    `scalar_node` is a binary op's node when `other` is a number; `prepare` turns the read arguments into
    the op's params where they are not the same (var's `unbiased` and `correction`). An `extremum` (max, min)
    names the binary op its two-tensor overload is (`pair`: max(x, y) is maximum(x, y)) and how it finds the
    index along a dim (`indices`, np.argmax)."""

    form: str
    args: tuple[Arg, ...] = ()
    checks: tuple[str, ...] = ()
    numbered: bool = False
    scalar_node: str | None = None
    prepare: Callable[[dict], dict] | None = None
    pair: "Op | None" = None
    indices: Callable[..., Any] | None = None


@dataclass(frozen=True)
class Names:
    """The names a program reaches a primitive by: `functions` are `torch.X` (the first is the op's
    own name), `methods` are `Tensor.X`, `functional` are `torch.nn.functional.X` (the torch function itself
    where it is one of `functions`, else the function of that name `nn/functional.py` writes, with its `inplace`
    and PyTorch's checks), and `in_place` adds `Tensor.X_` for each method (where PyTorch has
    it: `tests/test_in_place_declared.py` holds the list to torch's).
    `signature` declares the arguments of a function that has more than its one input (None: an
    elementwise function of one input, `torch.X(input)`)."""

    functions: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    in_place: bool = False
    signature: Signature | None = None
    functional: tuple[str, ...] = ()

    @property
    def in_place_methods(self) -> tuple[str, ...]:
        """`Tensor.X_`: the method's result written back into the tensor (`engine/tensor.py`'s `_in_place`)."""
        return tuple(name + "_" for name in self.methods) if self.in_place else ()


@dataclass(frozen=True)
class Composite:
    """A public function built from primitives rather than one of them (`engine/rearranging.py`): declared
    whole, as a primitive's names are, by the function, its names (`torch.X`, `Tensor.X`) and the primitive it
    records for `gradcli ops` (None: it records none).

    The Tensor method is the function itself (Python binds the tensor as its input) unless PyTorch's method
    takes its arguments otherwise, which the declaration says (`engine/functions/declared.py` makes the method):
    `input_at`, the tensor's place among the function's arguments (`x.where(c, y)` is `torch.where(c, x, y)`,
    `x.polygamma(n)` is `torch.polygamma(n, x)`); `packs`, the method's arguments after the tensor are the
    function's one sequence (`x.flip(0, 1)` is `torch.flip(x, (0, 1))`); `renamed`, the method's keywords that
    the function calls otherwise (`x.split(split_size=2)`); `method`, a method written by hand. `in_place` adds
    `Tensor.X_` for each method, as `Names.in_place` does. `functional` are its `torch.nn.functional.X` names: a
    library family of `gradcli/nn/` declares its functions so (`functional(conv2d, O.CONVOLUTION)`), and the
    language's `F` namespace and `OP_OF` are derived from its `COMPOSITES`. `linalg` are its `torch.linalg.X`
    names (`inverse` is `torch.linalg.inv`)."""

    function: Callable[..., Any]
    functions: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    op: "Op | None" = None
    method: Callable[..., Any] | None = None
    input_at: int = 0
    packs: bool = False
    renamed: tuple[tuple[str, str], ...] = ()
    in_place: bool = False
    functional: tuple[str, ...] = ()
    linalg: tuple[str, ...] = ()

    in_place_methods = Names.in_place_methods


def functional(function: Callable[..., Any], op: "Op | None" = None) -> Composite:
    """`torch.nn.functional.<its name>`, declared with the primitive it records (its top node; None: none)."""
    return Composite(function, op=op, functional=(function.__name__,))


@dataclass(frozen=True)
class Element:
    """An elementwise function at one element (of one input, or of two for a binary op), as `--check` replays
    it: `numeric` on known floats (its math domain errors become nan or inf) and `symbolic(sp)`, the SymPy
    function; or, for a meaning made of the checker's others, `of(S, *elements)` (hypot is √(a² + b²)), which
    walks floats and symbols alike. SymPy is handed in, never imported, so `gradcli eval` without `--check`
    stays free of it. `S.<name>` is derived from it (`check/meaning.py`), and the op's SymPy meaning maps it
    over the elements (broadcasting two inputs) unless the op says otherwise."""

    numeric: Callable[..., float] | None = None
    symbolic: Callable[[Any], Any] | None = None
    of: Callable[..., Any] | None = None


def _kept(keep: tuple[bool, ...]) -> Any:
    """Which inputs a node keeps, in the shorthand that costs `Node` the fewest steps per op: None
    for none of them, True for all, the position of the one kept input of two, else one flag per input."""
    if not any(keep):
        return None
    if all(keep):
        return True
    return keep.index(True) if len(keep) == 2 else keep


def unbroadcast(ns: Any, g: Any, shape: tuple[int, ...]) -> Any:
    """Sum a gradient back to the shape its input had before broadcasting."""
    if g.shape == shape:
        return g
    axes = broadcast_axes(g.shape, shape)
    if axes:
        g = ns.sum(g, dim=axes, keepdim=True)
    return ns.reshape(g, shape)


def diagonal_jvp(op: "Op", tangents: tuple, out: Any, *args: Any, **params: Any) -> Any:
    """An elementwise op's Jacobian is diagonal, so it is its own transpose: the VJP applied to the tangent
    (broadcast to the output) is the JVP."""
    total = None
    for vjp, t in zip(op.vjps, tangents):
        if t is not None and vjp is not None:
            term = vjp(ops.NUMPY, np.broadcast_to(t, out.shape), out, *args, **params)
            total = term if total is None else total + term
    return np.zeros(out.shape, out.dtype) if total is None else np.broadcast_to(total, out.shape)


def linear_jvp(op: "Op", tangents: tuple, out: Any, *args: Any, **params: Any) -> Any:
    """An op linear in its one tensor input (a view, a sum): the forward of the tangent."""
    return op.forward(tangents[0], *args[1:], **params)


def sum_linear_jvp(op: "Op", tangents: tuple, out: Any, *args: Any, **params: Any) -> Any:
    """An op linear in all its tensor inputs together (cat, stack, scatter): the forward of the tangents,
    zeros standing in for an input without one."""
    parts = [t if t is not None else np.zeros_like(a) if type(a) is np.ndarray and (i < len(op.vjps) or not op.vjps)
             else a for i, (a, t) in enumerate(zip(args, tangents))]
    return op.forward(*parts, **params)


def product_jvp(op: "Op", tangents: tuple, out: Any, *args: Any, **params: Any) -> Any:
    """An op linear in each input separately (matmul, cross, einsum): the product rule, one term per tangent."""
    total = None
    for i, t in enumerate(tangents):
        if t is not None:
            term = op.forward(*args[:i], t, *args[i + 1:], **params)
            total = term if total is None else total + term
    return np.zeros(out.shape, out.dtype) if total is None else total


def transposed_jvp(op: "Op", tangents: tuple, out: Any, *args: Any, **params: Any) -> Any:
    """Any op whose VJPs are written against `ns`: a VJP is linear in the gradient g, so J·t is the gradient
    by g of ⟨VJP(g), t⟩, taken through the VJPs' own recorded ops (double backward)."""
    from gradcli.engine import functions as F
    from gradcli.engine.autograd import grad
    from gradcli.engine.tensor import GradMode, Tensor, _wrap
    g = _wrap(np.zeros(out.shape, out.dtype)).requires_grad_(True)
    inputs = tuple(_wrap(a) if type(a) is np.ndarray else a for a in args)
    previous, GradMode.enabled = GradMode.enabled, True
    try:
        total = None
        for i, t in enumerate(tangents):
            if t is None or op.vjps[i] is None:
                continue
            v = unbroadcast(F, op.vjps[i](F, g, _wrap(out), *inputs, **params), np.shape(args[i]))
            term = (v * _wrap(np.asarray(t, dtype=out.dtype))).sum()
            total = term if total is None else total + term
        found = None if total is None or not isinstance(total, Tensor) or not total.requires_grad else \
            grad(total, g, allow_unused=True)[0]
    finally:
        GradMode.enabled = previous
    return np.zeros(out.shape, out.dtype) if found is None else found._data


def broadcast_axes(gshape: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """The axes of a gradient that `unbroadcast` sums away (`--explain` shows them too)."""
    lead = len(gshape) - len(shape)
    if not shape:  # a scalar parameter's gradient: every axis (each training step, per parameter)
        return tuple(range(lead))
    return tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1)


def reduced_shape(shape: tuple[int, ...], dim: tuple[int, ...] | None) -> tuple[int, ...]:
    """The keepdim shape of a reduction, so a reduced gradient can broadcast back."""
    if dim is None:
        return (1,) * len(shape)
    return tuple(1 if i in dim else n for i, n in enumerate(shape))


def _unary(name: str, node: str, forward: Callable, vjp: Callable, rule: str, saves: str = "x",
           sym: Callable | None = None, kink: Callable | None = None, nests: bool = True,
           element: Element | None = None, domain: tuple = (), aliases: tuple[str, ...] = (),
           function: bool = True, method: bool = True, in_place: bool = False, functional: bool = False) -> Op:
    """An elementwise function of one input, declared whole: its primitive (whose JVP is therefore
    `diagonal_jvp`, and whose SymPy meaning is `element` mapped over the elements unless `sym` says
    otherwise) and its public names: `torch.<name>` unless not `function`, `Tensor.<name>` unless not
    `method`, `F.<name>` when `functional`, and `Tensor.<name>_` when `in_place`, each under every alias too."""
    public = (name,) + aliases
    return Op(name=name, node=node, forward=forward, vjps=(vjp,), rule=rule, saves=(saves,) if saves else (),
              sym=sym, kink=kink, nests=nests, elementwise=True,
              jvp=diagonal_jvp, element=element, domain=domain,
              names=Names(functions=public if function else (), methods=public if method else (), in_place=in_place,
                         functional=(name,) if functional else ()))


def _sym_map(fn_name: str) -> Callable:
    """The SymPy meaning of an elementwise function: apply `S.<fn_name>` to every element."""
    return lambda S, x: S.map(getattr(S, fn_name), x)


def _sym_pair(fn_name: str) -> Callable:
    """The SymPy meaning of an elementwise function of two inputs: `S.<fn_name>` of each broadcast pair."""
    return lambda S, a, b: S.broadcast(getattr(S, fn_name), a, b)


def _binary_sym(S: Any, fn: Callable, a: Any, b: Any) -> Any:
    return S.broadcast(fn, a, b)


def _public(name: str, form: str, *args: Arg, aliases: tuple[str, ...] = (), function: bool = True,
            method: bool = True, in_place: bool = False, functional: tuple[str, ...] = (), **options: Any) -> Names:
    """The public names of a function with arguments of its own, declared whole: `torch.<name>` unless not
    `function`, `Tensor.<name>` unless not `method`, both under each alias, `F.X` for each of `functional`, and
    `Tensor.<name>_` when `in_place`, read by `Signature(form, args)`."""
    public = (name,) + aliases
    return Names(functions=public if function else (), methods=public if method else (), in_place=in_place,
                 signature=Signature(form, args, **options), functional=functional)
