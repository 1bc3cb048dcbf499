"""`gradcli plot`'s numbers: a program's output and its derivatives over a range of one or two inputs.

A program built only of elementwise ops (`Op.elementwise`) is swept in one batch: the swept input
becomes a vector of every sample point and one backward gives every point's derivative. Any other
program (it reduces, indexes, loops over elements, or reads its input's shape) runs once per point.
A batch is kept only when it agrees with single runs at its first, middle and last points, which
catches what the graph cannot show (`x.numel()`, a value computed under `no_grad`).

Undefined points are the ones `--check` reports: an op evaluated on a kink (`check.numeric`'s
`kink_sites`) that moving the swept input moves, and values or derivatives that are not finite.
That is why the sweep lives with the checker rather than with `program/`: it reads the checker's
kink rules and, with `--check`, its SymPy formulas.
"""
from __future__ import annotations

import ast
import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

import numpy as np

from gradcli.engine.autograd import grad
from gradcli.engine.creation import Defaults, manual_seed
from gradcli.errors import ArgumentError, GradcliError, InputSpecError, LimitError, ProgramAssertionError, ShapeError
from gradcli.jsonable import json_float
from gradcli.lang import builtins as B
from gradcli.lang.parser import parse_program
from gradcli.lang.specs import check_name, read_spec
from gradcli.program.evaluation import Settings, engine_settings, run_program

if TYPE_CHECKING:
    from gradcli.check.graph import Trace
    from gradcli.check.numeric import Site
    from gradcli.check.report import CheckReport
    from gradcli.engine.tensor import Tensor

MAX_POINTS = 10_000
"""Most samples one plot evaluates (both axes together)."""
SECONDS = 30.0
"""How long a sweep that runs once per point may take."""
ROLES = ("x", "y")


@dataclass(frozen=True)
class Axis:
    """One `--range`: the input it sweeps (None: the program's one free input) and its ends."""

    name: str | None
    low: float
    high: float


def parse_range(text: str) -> Axis:
    """`a:b` or `NAME=a:b`, with a < b, both finite."""
    name, _, span = text.rpartition("=") if "=" in text else (None, "", text)
    if name is not None:
        check_name(name.strip())
        name = name.strip()
    ends = span.split(":")
    example = f"--range {name + '=' if name else ''}-3:3"
    try:
        if len(ends) != 2:
            raise ValueError
        low, high = float(ends[0]), float(ends[1])
    except ValueError:
        raise ArgumentError(f"--range {text}: {span!r} is not a:b", hint=f"give two numbers, e.g. {example}") from None
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ArgumentError(f"--range {text}: both ends must be finite numbers", hint=f"e.g. {example}")
    if low >= high:
        raise ArgumentError(f"--range {text}: the start {ends[0]} is not below the end {ends[1]}",
                            hint=f"write the smaller end first, e.g. --range {name + '=' if name else ''}"
                                 f"{ends[1]}:{ends[0]}" if low > high else "give a range that is not empty")
    return Axis(name, low, high)


def read_names(program: str) -> tuple[list[str], list[str]]:
    """The names the program reads (builtins aside), in order, and those of them it never binds: its free inputs."""
    tree = parse_program(program)
    from gradcli.lang.python_builtins import PYTHON
    builtin = set(B.PRELUDE) | set(B.FUNCTIONS) | set(PYTHON) | \
        {"print", "True", "False", "None", "getattr", "hasattr", "setattr", "__name__"}
    bound = set(builtin)
    read: dict[str, None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            read[node.id] = None
        elif isinstance(node, ast.Name):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add(node.asname or node.name.split(".")[0])
    return [n for n in read if n not in builtin], [n for n in read if n not in bound]


def swept_names(program: str, inputs: Mapping[str, str], axes: list[Axis]) -> list[str]:
    """The input each `--range` sweeps: its NAME, else the program's one free input not given a spec."""
    read, free = read_names(program)
    known = list(dict.fromkeys(free + list(inputs)))
    names: list[str] = []
    for axis in axes:
        if axis.name is None:
            left = [n for n in free if n not in inputs]
            if len(axes) == 1 and len(left) == 1:
                names.append(left[0])
                continue
            if len(axes) == 1 and not left and len(inputs) == 1:
                names.append(next(iter(inputs)))
                continue
            raise ArgumentError("--range: which input does it sweep?",
                                hint=f"name it, e.g. --range {(left or known or ['x'])[0]}=-3:3"
                                     + (f" (the program reads: {', '.join(known)})" if known else ""))
        if axis.name not in known and axis.name not in read:
            raise ArgumentError(f"--range {axis.name}=...: the program has no input named '{axis.name}'",
                                hint=f"the program reads: {', '.join(known)}" if known else
                                "the program reads no input: use its name in it, e.g. out = sin(x)")
        if axis.name in names:
            raise ArgumentError(f"--range {axis.name}=... is given twice", hint="sweep two different inputs")
        names.append(axis.name)
    return names


def _shape(name: str, spec: str | None) -> tuple[int, ...]:
    """The swept input's shape: its spec's, which must hold one number (a bare name is 0-d)."""
    if spec is None:
        return ()
    value = read_spec(spec, Defaults.dtype, f"input '{name}'")
    if value.size != 1:
        raise InputSpecError(f"input '{name}' has shape {tuple(value.shape)}, but --range sweeps one number",
                             hint=f"leave {name}=SPEC out (or give one number, {name}=0.0); to plot a tensor "
                                  f"program, build the tensor from the swept number in the program")
    return value.shape


@dataclass(frozen=True)
class Undefined:
    """A sample (flat index) where the derivative is undefined, and why."""

    index: int
    reason: str


@dataclass(frozen=True)
class Sweep:
    """The samples of one plot: coordinates per axis, values, derivatives and the undefined points.

    One axis: `value` and each derivative have shape (n,). Two axes: shape (ny, nx), row k at
    `grid[1][k]`, column j at `grid[0][j]`; flat sample indices run along rows.
    """

    output_name: str
    names: tuple[str, ...]
    grid: tuple[np.ndarray, ...]
    value: np.ndarray
    derivative: dict[str, np.ndarray]
    second: np.ndarray | None
    undefined: tuple[Undefined, ...]
    batched: bool
    formulas: dict[str, str] = field(default_factory=dict)
    check: CheckReport | None = None

    def coordinates(self) -> tuple[np.ndarray, ...]:
        """Each axis' coordinate of every sample, in flat order."""
        if len(self.grid) == 1:
            return self.grid
        xs, ys = np.meshgrid(*self.grid)
        return xs.reshape(-1), ys.reshape(-1)

    def to_json(self) -> dict[str, Any]:
        coords = self.coordinates()
        out: dict[str, Any] = {"output": self.output_name, "inputs": dict(zip(ROLES, self.names)),
                               "range": {r: [float(g[0]), float(g[-1])] for r, g in zip(ROLES, self.grid)},
                               "points": int(self.value.size), "batched": self.batched}
        out.update({r: _floats(c) for r, c in zip(ROLES, coords)})
        out["value"] = _floats(self.value)
        firsts = [_floats(self.derivative[n]) for n in self.names]
        out["derivative"] = firsts[0] if len(firsts) == 1 else dict(zip(ROLES, firsts))
        if self.second is not None:
            out["second_derivative"] = _floats(self.second)
        out["undefined"] = [{"index": u.index, **{r: float(c[u.index]) for r, c in zip(ROLES, coords)},
                             "reason": u.reason} for u in self.undefined]
        if self.check is not None:
            out["formulas"] = {r: self.formulas[n] for r, n in zip(ROLES, self.names)}
            out["check"] = self.check.to_json()
        return out


def _floats(values: np.ndarray) -> list[float | str]:
    return [json_float(v) for v in np.asarray(values, dtype=np.float64).reshape(-1)]


@dataclass
class _Run:
    """One evaluation at one or many points: flat values, derivatives, undefined reasons by sample."""

    value: np.ndarray
    derivative: list[np.ndarray]
    second: np.ndarray | None
    reasons: dict[int, str]
    elementwise: bool
    output_name: str


class _NotBatchable(Exception):
    """The batched run cannot be mapped back to its samples: sweep point by point."""


def _evaluate(program: str, fixed: Mapping[str, str], swept: dict[str, np.ndarray], of: str | None,
              settings: Settings, order: int, size: int) -> _Run:
    """Run the program on these swept values (each holding `size` samples) and differentiate it."""
    from gradcli.check.graph import trace
    from gradcli.check.numeric import forward, kink_sites, leaf_values
    manual_seed(settings.seed)
    prog = run_program(program, {**fixed, **swept}, of, settings=settings)
    out = prog.output
    if out.numel() != size:
        if size == 1:
            raise ShapeError(f"the output '{prog.output_name}' has shape {tuple(out.shape)}, but a plot draws "
                             "one number per point", hint=f"reduce it (out = {prog.output_name}.sum()), pick one "
                                                          f"element (out = {prog.output_name}[0]) or name another with --of")
        raise _NotBatchable
    prog.require_grad()
    leaves = [prog.leaves[n] for n in swept]
    tr = trace(out, prog.leaves)
    kinked = any(node.op.kink for node in tr.nodes)
    values = forward(tr, leaf_values(tr)) if kinked else {}
    reasons = _kinks(tr, leaves, kink_sites(tr, values), size) if kinked else {}
    found = grad(out.sum(), leaves, create_graph=order == 2, allow_unused=True)
    firsts = [np.zeros(size) if g is None else g._data.reshape(-1).astype(np.float64) for g in found]
    second = None
    if order == 2:
        d1 = found[0]
        d2 = grad(d1.sum(), leaves[:1], allow_unused=True)[0] if d1 is not None and d1.requires_grad else None
        second = np.zeros(size) if d2 is None else d2._data.reshape(-1).astype(np.float64)
    value = out._data.reshape(-1).astype(np.float64)
    for k in np.flatnonzero(~np.isfinite(value) | ~np.all(np.isfinite(firsts), axis=0)):
        if int(k) not in reasons:
            values = values or forward(tr, leaf_values(tr))
            reasons[int(k)] = _nonfinite(tr, values, int(k), size, value[k], [d[k] for d in firsts])
    return _Run(value, firsts, second, reasons, all(node.op.elementwise for node in tr.nodes), prog.output_name)


def _kinks(tr: Trace, leaves: list[Tensor], sites: list[Site], size: int) -> dict[int, str]:
    """Samples whose swept inputs reach an op on a kink: nudging them moves the kinked inputs."""
    from gradcli.check.numeric import forward, leaf_values
    reasons: dict[int, str] = {}
    if not sites:
        return reasons
    base = leaf_values(tr)
    for leaf in leaves:
        start = base[id(leaf)]
        for sign in (1.0, -1.0):
            step = sign * 1e-6 * np.maximum(1.0, np.abs(start))
            nudged = forward(tr, {**base, id(leaf): np.array(start + step, dtype=np.float64)})
            for site in sites:
                moved = site.moved(tr, nudged)
                if not moved.any():
                    continue
                if size == 1:
                    reasons.setdefault(0, site.reason)
                    continue
                if site.mask.size != size:
                    raise _NotBatchable
                for k in np.flatnonzero(site.mask.reshape(-1))[moved]:
                    reasons.setdefault(int(k), site.reason)
    return reasons


def _nonfinite(tr: Trace, values: dict[Any, Any], k: int, size: int, value: float, derivatives: list[float]) -> str:
    """Why sample `k` has no finite value or derivative, naming the op where a nan or inf was born."""
    if math.isfinite(value):
        return f"the derivative is {next(d for d in derivatives if not math.isfinite(d))} here"
    for node in tr.nodes:
        v = np.asarray(values[node], dtype=np.float64).reshape(-1)
        if not np.isfinite(v[k] if size > 1 and v.size == size else v).all():
            return f"the output is {value} here, first produced by {node.name}"
    return f"the output is {value} here"


def _points(axes: list[Axis], points: int) -> tuple[np.ndarray, ...]:
    if not 2 <= points <= MAX_POINTS:
        raise ArgumentError(f"--points {points}: a plot takes 2 to {MAX_POINTS:,} points",
                            hint=f"e.g. --points 400 (two inputs share them: {MAX_POINTS:,} is a 100×100 grid)")
    n = points if len(axes) == 1 else max(2, math.isqrt(points))
    return tuple(_samples(a, n) for a in axes)


def _samples(axis: Axis, n: int) -> np.ndarray:
    """`n` evenly spaced points, and 0 when the range holds it: relu, abs, sign and clamp kink there."""
    xs = np.linspace(axis.low, axis.high, n)
    if axis.low < 0 < axis.high and not (xs == 0).any():
        xs = np.insert(xs, int(np.searchsorted(xs, 0.0)), 0.0)
    return xs


def sweep(program: str, inputs: Mapping[str, str], axes: list[Axis], points: int = 400, order: int = 1,
          of: str | None = None, settings: Settings | None = None, check: bool = False,
          progress: Callable[[int, int], None] | None = None) -> Sweep:
    """Sample `program`'s output and derivative(s) over `axes` (one or two) with the other inputs fixed.

    `inputs` maps names to specs; a swept input's spec, if given, only sets its shape (one number).
    `order` 2 adds the second derivative (one axis only). `check` asks SymPy for each derivative's
    formula, checked at the defined sample nearest the middle (SymPy is imported only then).
    `progress(done, total)` hears of each point of a program run once per point (one that cannot
    be run on all points at once).
    """
    settings = settings or Settings()
    if not 1 <= len(axes) <= 2:
        raise ArgumentError(f"{len(axes)} --range options: a plot sweeps one input or two",
                            hint="e.g. --range -3:3, or --range x=-1:1 --range y=-1:1")
    if order not in (1, 2):
        raise ArgumentError(f"--order {order}: use 1 (the derivative) or 2 (and the second derivative)",
                            hint="e.g. --order 2")
    if order == 2 and len(axes) == 2:
        raise ArgumentError("--order 2 draws the second derivative of one input",
                            hint="drop --order 2, or sweep one input (the Hessian: gradcli hessian)")
    grid = _points(axes, points)
    names = swept_names(program, inputs, axes)
    fixed = {n: s for n, s in inputs.items() if n not in names}
    with engine_settings(settings):
        shapes = {n: _shape(n, inputs.get(n)) for n in names}
        coords = [c.reshape(-1) for c in (np.meshgrid(*grid) if len(grid) == 2 else grid)]
        size = coords[0].size

        def at(k: int) -> _Run:
            swept = {n: np.full(shapes[n], c[k]) for n, c in zip(names, coords)}
            return _evaluate(program, fixed, swept, of, settings, order, 1)

        first = at(0)
        run = _batched(program, fixed, names, coords, of, settings, order, first, at)
        batched = run is not None
        if run is None:
            run = _one_by_one(size, first, at, progress)
        report = _check(program, fixed, names, shapes, coords, run, of, settings) if check else None
    shape = (size,) if len(grid) == 1 else (grid[1].size, grid[0].size)
    undefined = tuple(Undefined(k, r) for k, r in sorted(run.reasons.items()))
    return Sweep(run.output_name, tuple(names), grid, run.value.reshape(shape),
                 {n: d.reshape(shape) for n, d in zip(names, run.derivative)},
                 run.second, undefined, batched, _formulas(report, names), report)


def _check(program: str, fixed: Mapping[str, str], names: list[str], shapes: dict[str, tuple[int, ...]],
           coords: list[np.ndarray], run: _Run, of: str | None, settings: Settings) -> CheckReport:
    """`--check` at one sample: the defined one nearest the middle of the sweep."""
    from gradcli.check import check_gradients
    size = coords[0].size
    k = min((k for k in range(size) if k not in run.reasons), key=lambda k: abs(k - size // 2), default=size // 2)
    manual_seed(settings.seed)
    prog = run_program(program, {**fixed, **{n: np.full(shapes[n], c[k]) for n, c in zip(names, coords)}}, of,
                       settings=settings)
    leaves = {n: prog.leaves[n] for n in names}
    found = grad(prog.output.sum(), list(leaves.values()), allow_unused=True)
    computed = {n: None if g is None else g._data for n, g in zip(names, found)}
    return check_gradients(prog.output, leaves, None, computed, of=prog.output_name)


def _formulas(report: CheckReport | None, names: list[str]) -> dict[str, str]:
    """Each input's derivative as SymPy wrote it (`∂out/∂x = x*cos(x) + sin(x)`), without its value at the point."""
    if report is None:
        return {}
    out = {}
    for name in names:
        parts = report.inputs[name].derivative.split(" = ")
        out[name] = " = ".join(parts[:2]) if len(parts) == 3 else report.inputs[name].derivative
    return out


def _batched(program: str, fixed: Mapping[str, str], names: list[str], coords: list[np.ndarray], of: str | None,
             settings: Settings, order: int, first: _Run, at: Any) -> _Run | None:
    """Every point in one run, if the program is elementwise and agrees with single runs; else None."""
    if not first.elementwise:
        return None
    size = coords[0].size
    try:
        run = _evaluate(program, fixed, {n: c.copy() for n, c in zip(names, coords)}, of, settings, order, size)
    except (GradcliError, ProgramAssertionError, _NotBatchable):
        return None
    if not run.elementwise:
        return None
    for k in dict.fromkeys((0, size // 2, size - 1)):
        single = first if k == 0 else at(k)
        if not _agree(run, single, k):
            return None
    return run


def _agree(run: _Run, single: _Run, k: int) -> bool:
    pairs = [(run.value[k], single.value[0])] + [(a[k], b[0]) for a, b in zip(run.derivative, single.derivative)]
    if run.second is not None and single.second is not None:
        pairs.append((run.second[k], single.second[0]))
    a, b = np.array(pairs, dtype=np.float64).T
    return bool(np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True)) and (k in run.reasons) == (0 in single.reasons)


def _one_by_one(size: int, first: _Run, at: Any, progress: Callable[[int, int], None] | None) -> _Run:
    """Run the program once per point, within `SECONDS`."""
    runs = [first]
    deadline = time.monotonic() + SECONDS
    for k in range(1, size):
        if progress is not None:
            progress(k, size)
        if time.monotonic() > deadline:
            raise LimitError(f"the plot took longer than {SECONDS:g} s ({k:,} of {size:,} points, one run each)",
                             hint="use fewer --points, e.g. --points 100")
        runs.append(at(k))
    reasons = {k: r.reasons[0] for k, r in enumerate(runs) if r.reasons}
    second = np.array([r.second[0] for r in runs]) if first.second is not None else None
    return _Run(np.array([r.value[0] for r in runs]),
                [np.array([r.derivative[i][0] for r in runs]) for i in range(len(first.derivative))],
                second, reasons, False, first.output_name)
