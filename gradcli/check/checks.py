"""The three checks (a backward call's gradients, Jacobian blocks, Hessian blocks) by the witnesses of a mode.

Each check traces the graph, selects the elements to judge (all, or a seeded sample), sets the
tolerances (see `rounding` for the allowance of gradcli's own rounding) and runs the witnesses
`mode` asks for: SymPy (`symbolic`), finite differences (`numeric`), or both (`all`); past SymPy's
limits, finite differences instead, with a note.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from gradcli.check.derived import derived, note as derived_note
from gradcli.check.graph import Progress, Trace, as_float64, select, terms_estimate, trace
from gradcli.check.numeric import (directional_check, hooked, kinked_in_float64, numeric_check, numeric_hessian_check,
                                   numeric_jacobian_check, term_magnitudes)
from gradcli.check.report import (FAIL, NOT_FINITE, PASS, UNDEFINED, CheckReport, InputCheck, overall, place, tolerance,
                                  with_direction, with_numeric)
from gradcli.check.rounding import growth
from gradcli.engine.tensor import Tensor
from gradcli.program.graph import graph_nodes
from gradcli.source import operand

MODES = ("symbolic", "numeric", "all")
BUDGET = 256
"""Inputs with more elements than this are checked on a seeded sample."""
SECONDS = 10.0
"""How much CPU time SymPy may take before a check falls back to finite differences."""


def _of(of: str, weights: np.ndarray) -> str:
    """What is differentiated: the output itself, or the weighted sum backward started from."""
    of = operand(of)
    if weights.size == 1 and weights.reshape(-1)[0] == 1:
        return of
    return f"Σ{of}" if np.all(weights == 1) else f"(v·{of})"


def _selection(tr: Trace, names: list[str], budget: int, sample: int, seed: int) -> dict[str, np.ndarray]:
    return {name: select(tr.leaves[name]._data.size, budget, sample, seed + n) for n, name in enumerate(names)}


def _tolerances(tr: Trace, names: list[str], numeric: bool, rtol: float | None,
                atol: float | None) -> dict[str, tuple[float, float]]:
    return {name: tolerance(tr.leaves[name].dtype, numeric, rtol, atol) for name in names}


def _halves(progress: Progress | None, size: int) -> tuple[Progress | None, Progress | None]:
    """`--check all` runs two witnesses over the same elements: one bar across both."""
    if progress is None:
        return None, None
    return (lambda done, _: progress(done, 2 * size)), (lambda done, _: progress(size + done, 2 * size))


def _reason(exc: Exception) -> str:
    return "nested too deeply for SymPy" if isinstance(exc, RecursionError) else str(exc)


def _witnessed(mode: str, symbolic: Callable[[Progress | None], dict[str, InputCheck]],
               numeric: Callable[[Progress | None], dict[str, InputCheck]], progress: Progress | None,
               size: int) -> dict[str, InputCheck]:
    """Run the witnesses `mode` asks for, over `size` steps; past SymPy's limits, finite differences instead.

    `symbolic` runs first, so the magnitudes it measures are there for `numeric`'s allowance.
    """
    if mode not in MODES:
        raise ValueError(f"unknown check mode {mode!r}: use one of {', '.join(MODES)}")
    first, second = _halves(progress, size) if mode == "all" else (progress, progress)
    results: dict[str, InputCheck] = {}
    note = ""
    if mode != "numeric":
        from gradcli.check.meaning import TooLarge
        try:
            results = symbolic(first)
        except (TooLarge, RecursionError) as exc:
            note = f"{_reason(exc)}: checked by finite differences instead"
    if mode != "symbolic" or note:
        found = numeric(second)
        if results:
            results = {name: with_numeric(results[name], found[name]) for name in results}
        else:
            results = {name: dataclasses.replace(check, note=note) for name, check in found.items()}
    return results


def _rounding(gamma: float, magnitudes: dict[str, np.ndarray], sizes: dict[str, int]) -> dict[str, np.ndarray]:
    """γ·M by input, for the inputs whose magnitudes were measured over the same selection."""
    return {name: gamma * m for name, m in magnitudes.items() if len(m) == sizes.get(name)}


def check_gradients(output: Tensor, leaves: dict[str, Tensor], gradient: Any = None,
                    computed: dict[str, Any] | None = None, mode: str = "symbolic", *, rtol: float | None = None,
                    atol: float | None = None, exact: bool = False, sample: int = 64, budget: int = BUDGET,
                    seed: int = 0, progress: Progress | None = None, of: str = "out",
                    seconds: float = SECONDS, magnitudes: dict[str, np.ndarray] | None = None,
                    verified: bool = False, call: int = 0, steps: dict[str, int] | None = None) -> CheckReport:
    """Check one backward call: `computed[name]` is what it added to `leaves[name].grad`.

    `gradient` is the tensor backward started from (None: ones, for a one-element output).
    Inputs above `budget` elements are checked on `sample` elements drawn with `seed`.
    A program too large, too deeply nested or too slow (past `seconds`) for SymPy is checked by
    finite differences instead, and each input's `note` says so.

    Each element may differ from the witness by `atol + rtol·|expected|` plus its rounding
    allowance γ·M (`rounding`); `rtol`/`atol` replace that whole model with the plain rule.
    M, the magnitude of the terms, comes from SymPy; `magnitudes` (by input, per selected
    element) receives it from a SymPy witness and lends it to finite differences, so a caller
    that proved a graph structure once can pass the same dict to later checks of it.

    `verified`: an earlier call of this graph structure was verified element by element. Then a
    graph whose element-wise differences would replay more than `DIRECTIONAL_WORK` terms is
    checked along random directions instead (`numeric.directional_check`, drawn with `seed` and
    `call`), and element by element again only where that fails or cannot judge; `steps` is the
    structure's memory of which step judged each input's direction last (see `directional_check`).
    """
    tr = hooked(trace(output, leaves), hook_line)
    computed, changed = _before_leaf_hooks(tr, dict(computed or {}))
    names = list(leaves)
    weights = as_float64(gradient, output.shape, 1.0)
    of = _of(of, weights)
    sel = _selection(tr, names, budget, sample, seed)
    gamma = growth(tr) if rtol is None and atol is None else 0.0
    magnitudes = {} if magnitudes is None else magnitudes

    size = sum(len(v) for v in sel.values())
    directional: dict[str, InputCheck] = {}
    rest = sel
    if verified and mode == "numeric" and 2 * size * terms_estimate(tr) > DIRECTIONAL_WORK:
        directional = directional_check(tr, weights, computed, names, _tolerances(tr, names, True, rtol, atol),
                                        gamma, [seed, call], steps) or {}
        rest = {name: select(tr.leaves[name]._data.size, budget, LATER_SAMPLE, seed + call + n)
                for n, name in enumerate(names) if name not in directional or directional[name].status == FAIL}
    judged = {name: dataclasses.replace(check, note=DIRECTIONAL_NOTE) for name, check in directional.items()
              if check.status != FAIL}

    def symbolic(bar: Progress | None) -> dict[str, InputCheck]:
        from gradcli.check.symbolic import symbolic_check
        terms = (lambda: term_magnitudes(tr, weights, rest)) if gamma else None
        return symbolic_check(tr, weights, computed, rest, _tolerances(tr, list(rest), False, rtol, atol), of, exact,
                              bar, seconds, gamma, magnitudes, terms)

    def numeric(bar: Progress | None) -> dict[str, InputCheck]:
        return numeric_check(tr, weights, computed, rest, _tolerances(tr, list(rest), True, rtol, atol), bar,
                             _rounding(gamma, magnitudes, {name: len(v) for name, v in rest.items()}), gamma)
    witnessed = _witnessed(mode, symbolic, numeric, progress, sum(len(v) for v in rest.values())) if rest else {}
    witnessed = {name: _direction_or(directional.get(name), check, tr, weights, computed, rtol, atol, gamma,
                                     [seed, call, 2]) for name, check in witnessed.items()}
    results = {name: judged[name] if name in judged else witnessed[name] for name in names}
    results = _through_all(tr, weights, computed, results, set(directional), rtol, atol, gamma, [seed, call, 1])
    results = {name: _second_opinion(tr, weights, computed, name, check, rtol, atol, gamma)
               for name, check in results.items()}
    results = {name: _noted(check, name, changed, tr) for name, check in results.items()}
    results = {name: _with_note(check, derived_note(tr.nodes, check.method == "symbolic"))
               for name, check in results.items()}
    results = {name: _through_backward(check, tr) for name, check in results.items()}
    return CheckReport(overall(results), mode, of, results)


def _with_note(check: InputCheck, text: str) -> InputCheck:
    return dataclasses.replace(check, note="; ".join(filter(None, (check.note, text)))) if text else check


def _direction_or(direction: InputCheck | None, check: InputCheck, tr: Trace, weights: np.ndarray,
                  computed: dict[str, Any], rtol: float | None, atol: float | None, gamma: float,
                  seed: list[int]) -> InputCheck:
    """An input whose direction failed, after its elements were checked one by one: a direction's failure is a
    witness too, and stands unless those elements passed and a second direction, drawn anew, passes as well.

    A ReLU net near its fit has units whose kink lies within a direction's step (it moves every weight at
    once), and a quotient across one strays from the slope; a wrong VJP moves v·∇L off for almost every v,
    so it fails the second direction too."""
    if direction is None or direction.status != FAIL or check.status == FAIL:
        return check
    again = (directional_check(tr, weights, computed, [check.name], _tolerances(tr, [check.name], True, rtol, atol),
                               gamma, seed) or {}).get(check.name)
    if again is None or again.status == FAIL:
        return direction
    note = (f"a first direction failed ({direction.worst.label if direction.worst else 'v'}: expected "
            f"{direction.worst.expected if direction.worst else float('nan'):.6g}, got "
            f"{direction.worst.got if direction.worst else float('nan'):.6g}), taken for a kink within its step: "
            "the elements checked one by one and a second direction agree")
    return dataclasses.replace(check, note="; ".join(filter(None, (check.note, note))), through=again)


def _second_opinion(tr: Trace, weights: np.ndarray, computed: dict[str, Any], name: str, check: InputCheck,
                    rtol: float | None, atol: float | None, gamma: float) -> InputCheck:
    """Elements SymPy left undefined, asked again of finite differences where they can answer.

    At a kink that a float64 replay has too (float32's own ties are no kinks to a float64 replay, which would
    judge a different function there; `numeric.kinked_in_float64`): a C¹ point (`relu(x)**2` at 0, a squared
    hinge at its margin) has one-sided slopes that agree, in float32 as in float64, and there the derivative
    exists; finite differences judge such an element only
    where its one-sided quotients agree and do not grow as the step shrinks (`numeric_check`), and
    never fail one at a kink. Where SymPy's float evaluation overflowed (softmax or logsumexp of
    logits near 1000: exp(1000)/exp(1000)) and autograd's value is finite: the float64 forward is
    computed stably, so its difference quotients judge the element, and can fail it.
    The elements they judged join the verified ones, beside a `numeric` entry, and the note says so.
    """
    if check.method != "symbolic" or not check.undefined_count or check.numeric is not None:
        return check
    shape = tr.leaves[name].shape
    claimed = as_float64(computed.get(name), shape, 0.0)
    wide = all(np.dtype(node.dtype) == np.float64 for node in tr.nodes if np.dtype(node.dtype).kind == "f")
    def flat(index: tuple[int, ...]) -> int:
        return int(np.ravel_multi_index(index, shape)) if shape else 0
    kinked = {index for index, reason in check.undefined_indices if "kink" in reason}
    if kinked:  # a float32-only tie is no kink in float64, and a replayed pick shows no kink at all
        real = kinked_in_float64(tr, name, np.array(sorted(map(flat, kinked))))
        kinked = {index for index in kinked if flat(index) in real}
    asked = {index: reason for index, reason in check.undefined_indices
             if index in kinked or reason == NOT_FINITE and np.isfinite(claimed[index])}
    if not asked:
        return check
    opinions = []
    for kinks in (True, False):
        group = [index for index, reason in asked.items() if ("kink" in reason) == kinks]
        if group:
            opinions.append(numeric_check(tr, weights, computed, {name: np.array(sorted(map(flat, group)))},
                                          _tolerances(tr, [name], True, rtol, atol), None, None,
                                          0.0 if kinks and wide else gamma)[name])
    still = {index for found in opinions for index, _ in found.undefined_indices}
    found = next((found for found in opinions if found.status == FAIL), opinions[-1])
    judged = [index for index in asked if index not in still]
    if not judged:
        return check
    count = check.undefined_count - len(judged)
    status = FAIL if FAIL in (check.status, found.status) else (UNDEFINED if count else PASS)
    kinds = {"a kink whose one-sided slopes agree (differentiable there)" if "kink" in asked[index] else
             "SymPy's float64 value overflowed (the forward is finite)" for index in judged}
    note = f"{len(judged):,} element{'s' if len(judged) != 1 else ''} where " + " or ".join(sorted(kinds)) + \
        " judged by finite differences"
    return dataclasses.replace(check, status=status, undefined=tuple(e for e in check.undefined if e.index not in judged),
                               undefined_count=count,
                               undefined_indices=tuple(u for u in check.undefined_indices if u[0] not in judged),
                               numeric=found, note="; ".join(filter(None, (check.note, note))))


def _through_all(tr: Trace, weights: np.ndarray, computed: dict[str, Any], results: dict[str, InputCheck],
                 tried: set[str], rtol: float | None, atol: float | None, gamma: float,
                 seed: list[int]) -> dict[str, InputCheck]:
    """Each sampled input also gets one random direction through all its elements, so a wrong element the
    sample missed still moves a witness. Not for inputs directions already tried this call (`tried`)."""
    names = [name for name, check in results.items() if check.sampled and name not in tried]
    if not names:
        return results
    found = directional_check(tr, weights, computed, names, _tolerances(tr, names, True, rtol, atol), gamma,
                              seed) or {}
    return {name: with_direction(check, found.get(name)) for name, check in results.items()}


def _through_backward(check: InputCheck, tr: Trace) -> InputCheck:
    """A failing gradient that passed through a program's own `backward`: name it and its line, the likeliest culprit."""
    from gradcli.engine.function import runs_program
    if check.status != FAIL:
        return check
    nodes = list(tr.nodes)
    for node in tr.nodes:  # a create_graph result's meaning runs through its output's graph, Functions and all
        made = derived(node)
        if made is not None:
            nodes += graph_nodes(made.output)[0]
    return _through_program(check, [node.params["state"].cls for node in nodes if runs_program(node.op)], "backward")


def _through_program(check: InputCheck, classes: list[type], method: str) -> InputCheck:
    """A failing check noted with the program's own Function methods its value came through (`Cube.jvp at line 21`)."""
    if check.status != FAIL or not classes:
        return check
    found = []
    for cls in classes:
        line = hook_line(getattr(cls, method, None))
        found.append(f"{cls.__name__}.{method}" + ("" if line is None else f" at {place(line)}"))
    text = "through the program's own " + ", ".join(dict.fromkeys(found))
    return dataclasses.replace(check, note="; ".join(filter(None, (check.note, text))))


DIRECTIONAL_WORK = 10_000_000
"""Terms (by `graph.terms_estimate`) that a later call's element-wise finite differences may replay in all
before random directions check it instead: about a tenth of a second of NumPy. The polynomial fit's
calls (a few scalars over 2,000 points) stay element-wise; a two-layer net's (64 sampled weights per
layer, 6.5 million terms a replay) go by directions."""
LATER_SAMPLE = 8
"""Elements drawn (anew each call) for an input of such a later call that directions could not judge, as
where every direction moves a kink: the structure's first call checked `sample` of them, and a replay
of the whole graph per nudge is what directions spare."""
DIRECTIONAL_NOTE = ("checked along random directions by finite differences of the forward (v·∇ against the "
                    "quotient along v): an earlier call of this graph structure was verified element by element")


def hook_line(hook: Any) -> int | None:
    """The line a program's hook was written at (a user function knows its own `ast` node)."""
    return getattr(getattr(hook, "node", None), "lineno", None)


def _at(line: int | None) -> str:
    return "the hook" if line is None else f"the hook at {place(line)}"


def _before_leaf_hooks(tr: Trace, computed: dict[str, Any]) -> tuple[dict[str, Any], dict[str, int | None]]:
    """What reached each leaf before its hooks changed it: autograd's own gradient, the one to verify.

    `.grad` holds what a hook returned, on purpose (PyTorch's semantics); that is the program's
    choice, not a derivative, so the check verifies the gradient the hook was given.
    """
    from gradcli.engine.hooks import ACCUMULATED, CHANGED, accumulated, changed_by_hook
    changed: dict[str, int | None] = {}
    for name, leaf in tr.leaves.items() if ACCUMULATED else ():
        posted = accumulated(leaf)
        if posted is not None and computed.get(name) is not None:
            changed[f"{name} after"] = hook_line(posted[2])
    if not CHANGED:
        return computed, changed
    for name, leaf in tr.leaves.items():
        change = changed_by_hook(leaf)
        if change is not None and computed.get(name) is not None:
            computed[name] = change[0]
            changed[name] = hook_line(change[2])
    return computed, changed


def _noted(check: InputCheck, name: str, changed: dict[str, int | None], tr: Trace) -> InputCheck:
    """Say where a hook changed a gradient, and what was verified instead of the plain derivative."""
    notes = [check.note] if check.note else []
    if name in changed:
        notes.append(f"changed by {_at(changed[name])}: verified the gradient autograd gave it; "
                     f".grad holds what the hook returned")
    if f"{name} after" in changed:
        notes.append(f"changed by {_at(changed[f'{name} after'])} after it was accumulated: verified the "
                     f"gradient accumulated, at the values backward differentiated at")
    lines = sorted({cut.line for cut in tr.cuts.values()}, key=lambda n: -1 if n is None else n)
    if lines:
        notes.append("below " + ", ".join(_at(n) for n in lines) + ": the chain rule is verified from the "
                     "gradient the hook returned")
    return dataclasses.replace(check, note="; ".join(notes)) if notes != ([check.note] if check.note else []) \
        else check


def jacobian_check(output: Tensor, leaves: dict[str, Tensor], computed_jacobians: dict[str, Any],
                   mode: str = "symbolic", *, rtol: float | None = None, atol: float | None = None,
                   exact: bool = False, sample: int = 64, budget: int = BUDGET, seed: int = 0,
                   progress: Progress | None = None, of: str = "y", seconds: float = SECONDS,
                   magnitudes: dict[str, np.ndarray] | None = None, jvps: tuple[type, ...] = ()) -> CheckReport:
    """Check Jacobian blocks (shape output.shape + leaf.shape, PyTorch's layout) by the witnesses of `mode`.

    Outputs and inputs above `budget` elements are each sampled, so a check stays bounded.
    Tolerances and `magnitudes` work as in `check_gradients`, per checked entry. `jvps`: the program's
    Functions whose own `jvp` made the values checked (a tangent), named beside a failure.
    """
    of = operand(of)
    tr = trace(output, leaves)
    names = list(leaves)
    rows = select(output._data.size, budget, sample, seed + len(names))
    sel = _selection(tr, names, budget, sample, seed)
    gamma = growth(tr) if rtol is None and atol is None else 0.0
    magnitudes = {} if magnitudes is None else magnitudes

    def symbolic(bar: Progress | None) -> dict[str, InputCheck]:
        from gradcli.check.symbolic import jacobian_check as check
        return check(tr, computed_jacobians, rows, sel, _tolerances(tr, names, False, rtol, atol), of, exact, bar,
                     seconds, gamma, magnitudes)

    def numeric(bar: Progress | None) -> dict[str, InputCheck]:
        return numeric_jacobian_check(tr, computed_jacobians, rows, sel, _tolerances(tr, names, True, rtol, atol),
                                      of, bar, _rounding(gamma, magnitudes,
                                                         {name: len(v) * len(rows) for name, v in sel.items()}))
    results = _witnessed(mode, symbolic, numeric, progress, sum(len(v) for v in sel.values()))
    results = {name: _through_program(check, list(jvps), "jvp") for name, check in results.items()}
    return CheckReport(overall(results), "jacobian", of, results)


def hessian_check(output: Tensor, leaves: dict[str, Tensor], computed_hessian_blocks: dict[str, dict[str, Any]],
                  mode: str = "symbolic", *, rtol: float | None = None, atol: float | None = None,
                  exact: bool = False, sample: int = 64, budget: int = BUDGET, seed: int = 0,
                  progress: Progress | None = None, of: str = "out", seconds: float = SECONDS,
                  magnitudes: dict[str, np.ndarray] | None = None) -> CheckReport:
    """Check Hessian blocks `computed[a][b]` (shape a.shape + b.shape) of a one-element output.

    The report has one entry per block, keyed `a` on the diagonal and `a,b` off it.
    """
    if output._data.size != 1:
        raise ValueError(f"the Hessian needs a one-element output, got shape {tuple(output.shape)}")
    of = operand(of)
    tr = trace(output, leaves)
    names = list(leaves)
    sel = _selection(tr, names, budget, sample, seed)
    gamma = growth(tr) if rtol is None and atol is None else 0.0
    magnitudes = {} if magnitudes is None else magnitudes

    def symbolic(bar: Progress | None) -> dict[str, InputCheck]:
        from gradcli.check.symbolic import hessian_check as check
        return check(tr, computed_hessian_blocks, sel, _tolerances(tr, names, False, rtol, atol), of, exact, bar,
                     seconds, gamma, magnitudes)

    def numeric(bar: Progress | None) -> dict[str, InputCheck]:
        sizes = {(a if a == b else f"{a},{b}"): len(sel[a]) * len(sel[b]) for a in names for b in names}
        return numeric_hessian_check(tr, computed_hessian_blocks, sel, _tolerances(tr, names, True, rtol, atol), of,
                                     bar, _rounding(gamma, magnitudes, sizes))
    results = _witnessed(mode, symbolic, numeric, progress, sum(len(sel[a]) for a in names) * len(names))
    return CheckReport(overall(results), "hessian", of, results)

