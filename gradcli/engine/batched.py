"""vmap's batched tensors: a program sees one example while the engine computes every example at once.

A `BatchedTensor` stands for one example of a vmap level. It holds a plain tensor (its physical value,
on the graph) whose leading dimension runs over the level's examples; its shape, ndim, size and numel
are one example's. An op that reaches `apply` with a batched input is sent to the level's batching
rule for the op (`RULES`, filled by `gradcli.func.batching`: the engine imports no transform), which runs
the op once on the physical values. Nested vmaps nest: a level's physical value may itself be batched
at an outer level, and a rule's own ops are then batched again by the outer level's rules.

Anything that has no rule, or reads a batched tensor's numbers directly (`.item()`, printing, an engine
path that takes `_data`), raises `NoRule`: vmap catches it and runs the function once per example
instead, as it did before rules existed. `NoRule` is not a `GradcliError`, so no program's `except`
ever sees it. Backward runs on the physical graph: the examples never mix, so its gradients are every
example's at once.
"""
from __future__ import annotations

from typing import Any, Callable

from gradcli.engine.tensor import VMAP_LEVELS, Tensor


class NoRule(Exception):
    """A batched tensor met an op or a path without a batching rule: vmap falls back to one call per example."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


RANDOM_DRAW = "a random draw"
"""What NoRule names when a program draws random numbers inside a vmap (its randomness mode decides)."""


class Fallbacks:
    """Why vmaps (and jacrev's batched backward) ran once per example or row: `--explain` shows them. Kept up
    to `CAP` entries (a loop that falls back every step repeats one reason)."""

    reasons: list[str] = []
    CAP = 1000

    @classmethod
    def add(cls, reason: str) -> None:
        if len(cls.reasons) < cls.CAP:
            cls.reasons.append(reason)


class Level:
    """One running vmap: its batch size, its randomness mode ("same": a draw is every example's, so it may
    run batched) and its depth among the open levels (the innermost is deepest)."""

    def __init__(self, size: int, randomness: str = "error") -> None:
        self.size = size
        self.randomness = randomness
        self.depth = len(VMAP_LEVELS)

    def __enter__(self) -> "Level":
        VMAP_LEVELS.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        VMAP_LEVELS.remove(self)


Rule = Callable[..., Tensor]
"""`rule(op, name, inputs, batched, params, size)`: the op run once on physical values (`inputs`, where
`batched[i]` says whether input i carries the level's examples along its first dimension), giving the
physical result, examples first."""

RULES: dict[str, Rule] = {}
"""Batching rules by op name (`gradcli.func.batching` fills it)."""

GENERIC: list[Callable[[Any], Rule | None]] = []
"""Rules derived from what the op table says of an op (elementwise, a `dim`), tried when RULES has none."""


def _refuse(what: str) -> Callable[..., Any]:
    def refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise NoRule(what)
    return refuse


def _refused(what: str) -> property:
    return property(_refuse(what), _refuse(what))


class BatchedTensor(Tensor):
    """One example of a vmap level; `_phys` holds every example (first dimension), `_level` the level."""

    __slots__ = ("_phys", "_level")

    _data = _refused("reading a batched tensor's numbers")
    _node = _refused("a batched tensor's graph node")
    grad = _refused("a batched tensor's .grad")
    _untracked = _refused("a batched tensor's data alias")

    def __init__(self, phys: Tensor, level: Level) -> None:  # noqa: D107  (no Tensor.__init__: nothing to convert)
        self._phys = phys
        self._level = level

    @property
    def requires_grad(self) -> bool:  # type: ignore[override]
        return self._phys.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        raise NoRule("setting requires_grad on a batched tensor")

    @property
    def shape(self) -> tuple[int, ...]:
        return self._phys.shape[1:]

    @property
    def dtype(self) -> Any:
        return self._phys.dtype

    @property
    def ndim(self) -> int:
        return self._phys.ndim - 1

    def dim(self) -> int:
        return self._phys.ndim - 1

    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    nelement = numel

    def size(self, dim: int | None = None) -> Any:
        from gradcli.engine.functions import size
        from gradcli.engine.tensor_str import Size
        return Size(self.shape) if dim is None else size(self, dim)

    def __len__(self) -> int:
        if not self.shape:
            raise NoRule("len() of a batched 0-d tensor")
        return self.shape[0]

    @property
    def grad_fn(self) -> Any:
        return self._phys.grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._phys.is_leaf

    def detach(self) -> "BatchedTensor":
        return BatchedTensor(self._phys.detach(), self._level)

    def requires_grad_(self, requires_grad: bool = True) -> "BatchedTensor":
        self._phys.requires_grad_(requires_grad)
        return self

    __repr__ = _refuse("printing a batched tensor")
    backward = _refuse("backward() inside vmap")
    retain_grad = _refuse("retain_grad() inside vmap")
    register_hook = _refuse("a hook inside vmap")


def batched_at(x: Any, level: Level) -> bool:
    return type(x) is BatchedTensor and x._level is level


def innermost(values: Any) -> Level | None:
    """The deepest open level any of `values` is batched at (None: none is batched)."""
    found = None
    for x in values:
        if type(x) is BatchedTensor and (found is None or x._level.depth > found.depth):
            found = x._level
    return found


def dispatch(op: Any, inputs: tuple, name: str | None, params: dict) -> Tensor | None:
    """`apply` of an op with batched inputs: its rule at the innermost level among them (None: none is batched)."""
    level = innermost(inputs)
    if level is None:
        return None
    rule = rule_for(op)
    batched = [batched_at(x, level) for x in inputs]
    phys = [x._phys if b else x for x, b in zip(inputs, batched)]
    return BatchedTensor(rule(op, name, phys, batched, params, level.size), level)


def rule_for(op: Any) -> Rule:
    """The op's batching rule: its own by name, else the one the op table implies; `NoRule` when it has none."""
    rule = RULES.get(op.name)
    if rule is not None:
        return rule
    for derive in GENERIC:
        rule = derive(op)
        if rule is not None:
            return rule
    raise NoRule(f"the op '{op.name}'")


def wrap(phys: Tensor, level: Level) -> BatchedTensor:
    return BatchedTensor(phys, level)


def unwrap(x: Any, level: Level) -> Any:
    """The physical value of `x` at `level` (examples first), or `x` itself when it is not batched there."""
    return x._phys if batched_at(x, level) else x


def levels_of(x: Any) -> list[Level]:
    """The levels `x` is batched at, outermost first (its physical dims run in that order, then one example's)."""
    found = []
    while type(x) is BatchedTensor:
        found.append(x._level)
        x = x._phys
    return found[::-1]


def physical(x: Any) -> Any:
    """`x` with every level's examples as plain leading dimensions."""
    while type(x) is BatchedTensor:
        x = x._phys
    return x


def rewrap(x: Any, levels: list[Level]) -> Any:
    """A physical value as one example of `levels` (outermost first), as `levels_of` reads it."""
    for level in levels:
        x = BatchedTensor(x, level)
    return x


def for_backward(outputs: list, inputs: list, cotangents: list) -> tuple[list, list, list, list[tuple[list, int]]]:
    """A backward inside vmap, run on the physical graph: outputs, inputs and cotangents made physical, and
    the levels each gradient is batched at, with how many of the deepest are the cotangents' own (`restacked`
    reads both; such cotangents stay batched there, and the backward runs through the batching rules). Every example's output reaches only that example's inputs, so
    one physical backward gives every example's gradient, provided each input is batched wherever an output
    is (a shared input would sum its examples' gradients: that case runs per example instead)."""
    out_levels = [levels_of(o) for o in outputs]
    in_levels = [levels_of(x) for x in inputs]
    for levels in out_levels:
        if any(any(lv not in mine for lv in levels) for mine in in_levels):
            raise NoRule("a gradient by a tensor shared by every example")
    extra = _extra_levels(out_levels, in_levels, cotangents)
    if extra:
        cts = [_batched_cotangent(g, levels, extra) for g, levels in zip(cotangents, out_levels)]
        return [physical(o) for o in outputs], [physical(x) for x in inputs], cts, \
            [(levels + extra, len(extra)) for levels in in_levels]
    phys_cts = []
    for o, levels, g in zip(outputs, out_levels, cotangents):
        if g is not None and levels_of(g) not in ([], levels):
            raise NoRule("a cotangent batched differently from its output")
        if levels and g is None and o.numel() == 1:  # the implicit cotangent of each example's one number
            from gradcli.engine.creation import ones_like
            g = ones_like(physical(o))
        elif levels and g is not None and not levels_of(g):
            from gradcli.engine.functions import expand
            g = expand(g, tuple(physical(o).shape))
        phys_cts.append(None if g is None else physical(g))
    return [physical(o) for o in outputs], [physical(x) for x in inputs], phys_cts, [(lv, 0) for lv in in_levels]


def _extra_levels(out_levels: list, in_levels: list, cotangents: list) -> list[Level]:
    """The levels cotangents are batched at beyond their outputs' (a vjp_fn called inside a vmap of its own,
    `vmap(vjp_fn)(basis)`): [] when there are none. Such a backward runs once, batched at those levels by the
    rules, when the outputs and inputs are not batched themselves; inside the vmaps of its outputs (the NTK
    tutorial's vmap over basis vectors within vmaps over inputs) it runs once per example, whose memory is one
    example's rather than every example's times every cotangent's."""
    extra: list[Level] | None = None
    for levels, g in zip(out_levels, cotangents):
        mine = levels_of(g) if g is not None else []
        if mine[:len(levels)] != levels or len(mine) == len(levels):
            if mine and mine[:len(levels)] != levels:
                raise NoRule("a cotangent batched differently from its output")
            continue
        if extra is not None and mine[len(levels):] != extra:
            raise NoRule("cotangents batched at different levels")
        extra = mine[len(levels):]
    if not extra:
        return []
    if any(out_levels + in_levels):  # every example of the outer vmaps times every cotangent: memory PyTorch's
        raise NoRule("a cotangent batched inside the vmap of its output")  # own batching would take too
    return extra


def _batched_cotangent(g: Any, levels: list[Level], extra: list[Level]) -> Any:
    """A cotangent batched at an output's levels and `extra` ones, as a tensor batched at the extra levels only
    whose examples are the output's physical value (the output's levels as leading dims)."""
    from gradcli.engine.functions import movedim
    if g is None:
        return None
    lead, k = len(levels), len(extra)
    phys, mine = physical(g), len(levels_of(g))
    if mine == lead:  # the same for every extra example
        return phys
    if mine != lead + k:
        raise NoRule("a cotangent batched differently from its output")
    return rewrap(movedim(phys, tuple(range(lead, lead + k)), tuple(range(k))), extra)


def restacked(g: Any, levels: list[Level], k: int = 0) -> Any:
    """A gradient as one example of `levels` (outermost first), the last `k` of them a batched cotangent's (see
    `_extra_levels`): the backward gave it batched at those (their examples are moved behind the others'), or
    unbatched there (it is then every such example's)."""
    from gradcli.engine.functions import expand, movedim, reshape
    if k == 0:
        return rewrap(g, levels)
    lead = len(levels) - k
    if type(g) is BatchedTensor:
        return rewrap(movedim(physical(g), tuple(range(k)), tuple(range(lead, lead + k))), levels)
    shape = tuple(g.shape)
    sizes = tuple(level.size for level in levels[lead:])
    spread = expand(reshape(g, shape[:lead] + (1,) * k + shape[lead:]), shape[:lead] + sizes + shape[lead:])
    return rewrap(spread, levels)


def folded(x: "BatchedTensor", fn: Callable[[Tensor], Tensor]) -> "BatchedTensor":
    """fn, which treats the samples along its input's first dim independently (a pooling), run once on
    every example's samples side by side: the level's examples folded into that dim and back."""
    from gradcli.engine.functions import reshape
    phys = x._phys
    lead = tuple(phys.shape[:2])
    out = fn(reshape(phys, (-1,) + tuple(phys.shape[2:])))
    return BatchedTensor(reshape(out, lead + tuple(out.shape[1:])), x._level)
