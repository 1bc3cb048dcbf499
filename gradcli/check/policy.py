"""The loop policy: which witness verifies each gradient a script computes, and one summary per site.

A training loop computes the same graph thousands of times, and a SymPy proof takes seconds.
So SymPy proves each distinct graph *structure* (ops, their parameters, shapes, dtypes and
wiring; not the values flowing through it, nor the contents of index arrays, data too) once, at
the first call that builds it, with the witness the user asked for; a structure SymPy gave up on
is not tried again. Every later call of a proven structure is verified by finite
differences on a float64 replay of its own forward at its own values (the leaves' new values
and the new data: element by element, or, for a large graph whose first call passed, along
random directions, see `checks.DIRECTIONAL_WORK`), judged with the proof's term magnitudes for the rounding allowance (see
`rounding`). Every call has at least one witness, so a VJP that goes wrong only at some values
is still caught at the call where it does. Calls add up per site (the line that computes the
gradient): calls, witnesses, the worst error and where it was.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcli.check.checks import check_gradients, hessian_check, jacobian_check
from gradcli.check.derived import register
from gradcli.check.graph import Trace, rooted_at, trace
from gradcli.check.report import FAIL, PASS, UNDEFINED, CheckReport, Element, placed
from gradcli.engine.autograd import as_list, jacobian_of
from gradcli.engine.backward import initial_gradient
from gradcli.engine.tensor import Node, Tensor
from gradcli.program.graph import graph_nodes

HOOKED_ROWS = 64
"""Rows of a Jacobian that hooks changed checked one by one (`Checker._rows`); a larger one is not checked."""
PROOF_SECONDS = 30.0
"""A proof is paid once for all the calls of its structure: it may take longer than one `eval --check`."""
RUN_PROOF_SECONDS = 30.0
"""CPU time SymPy may take over all of one script's proofs. A script that builds new structure after new
structure (say, a graph that grows each step) would otherwise pay up to `PROOF_SECONDS` for each; past
this, new structures are checked by finite differences (every call still has a witness) and say why."""
SPENT_NOTE = "SymPy's time for this script (over {:g} s of CPU time in proofs) is spent: checked by finite differences"
POLICY = ("SymPy proves each distinct graph structure at its first call; later calls of a proven structure "
          "are checked by finite differences at their own values (a large graph's along random directions)")


def _traced_leaves(xs: list[Tensor], out: Tensor) -> list[Tensor] | None:
    """The leaves a check differentiates by for the inputs a functional traced its function at.

    Under create_graph an input that requires grad is traced through a view of itself, so the
    result stays on the graph; a derivative by that view is the leaf's own when the output reaches
    the leaf through the view alone. An input computed from other tensors, or a function that also
    reads the leaf directly (a closure), leaves no leaf to name the derivative by: None.
    """
    leaves = []
    readers: dict[int, set[int]] | None = None  # leaf id -> ids of the nodes that read it
    for x in xs:
        node = x.grad_fn
        if node is None:
            leaves.append(x)
            continue
        base = node.inputs[0]
        if node.op.name != "reshape" or type(base) is not Tensor or base.shape != x.shape:
            return None
        if readers is None:
            readers = {}
            for n in graph_nodes(out)[0]:
                for i in n.inputs:
                    if type(i) is Tensor:
                        readers.setdefault(id(i), set()).add(id(n))
        if not readers.get(id(base), set()) <= {id(node)}:
            return None
        leaves.append(base)
    return leaves


def _frozen(value: Any) -> Hashable:
    """A parameter as part of a structure key: index arrays by shape and dtype, containers element by element.

    An index array is data (cross-entropy's targets, max-pool's argmax, a batch's indices): its
    contents change with every example, as a constant's values do. Keyed by them, each example of
    a per-sample gradient was a new structure and paid a fresh SymPy attempt.
    """
    if isinstance(value, np.ndarray):
        return "array", value.shape, value.dtype.str
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, slice):
        return "slice", value.start, value.stop, value.step
    if hasattr(value, "structure_key"):  # a program's autograd.Function application (`engine.function`)
        return value.structure_key()
    return repr(value)


def structure(tr: Trace) -> Hashable:
    """What a proof depends on: each node's op, parameters, shape, dtype, and where its inputs come from.

    Constants and index arrays enter by shape and dtype only: a loop over batches of data (and their
    targets) keeps its structure.
    """
    position = {node: k for k, node in enumerate(tr.nodes)}
    leaves = {id(t): name for name, t in tr.leaves.items()}

    def source(x: Any) -> Hashable:
        if type(x) is Node:
            return "node", position[x]
        if type(x) is Tensor:
            return ("leaf", leaves[id(x)]) if id(x) in leaves else ("constant", x.shape, x.dtype.str)
        return "number", type(x).__name__
    nodes = tuple((n.op.name, _frozen(n.params), tuple(n.shape), np.dtype(n.dtype).str,
                   tuple(source(x) for x in n.inputs)) for n in tr.nodes)
    return nodes, tuple((name, tuple(t.shape), t.dtype.str) for name, t in tr.leaves.items())


def witnesses(report: CheckReport) -> set[str]:
    """The witnesses that judged a call: "symbolic", "numeric" or both."""
    methods = {c.method for c in report.inputs.values()}
    return methods | {"numeric" for c in report.inputs.values() if c.numeric is not None or c.through is not None}


@dataclass(frozen=True)
class Worst:
    """The call and element that came closest to (or went furthest past) its tolerance at a site."""

    margin: float
    call: int
    input: str
    method: str
    element: Element | None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"margin": round(self.margin, 6), "call": self.call, "input": self.input,
                               "method": self.method}
        if self.element is not None:
            out.update(self.element.to_json())
        return out


@dataclass
class SiteSummary:
    """Every call of one gradient site (a line of the script), summed up."""

    line: int
    what: str
    calls: int = 0
    failed: int = 0
    undefined: int = 0
    """Calls where no element could be verified (every one undefined): neither passed nor failed."""
    unchecked: int = 0
    structures: int = 0
    witnesses: dict[str, int] = field(default_factory=dict)
    worst: Worst | None = None
    first_failure: int | None = None

    def add(self, report: CheckReport, new_structure: bool) -> None:
        self.calls += 1
        self.structures += new_structure
        if report.status == FAIL:
            self.failed += 1
            self.first_failure = self.first_failure or self.calls
        self.undefined += report.status == UNDEFINED
        used = witnesses(report)
        self.unchecked += not used
        for method in sorted(used):
            self.witnesses[method] = self.witnesses.get(method, 0) + 1
        for name, c in report.inputs.items():
            for entry in (c, c.numeric, c.through):
                if entry is not None and (self.worst is None or entry.margin > self.worst.margin):
                    self.worst = Worst(entry.margin, self.calls, name, entry.method, entry.worst)

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "site": self.what, "calls": self.calls, "failed": self.failed,
                "undefined": self.undefined, "unchecked": self.unchecked, "structures": self.structures, "witnesses": dict(self.witnesses),
                "first_failure": self.first_failure, "worst": None if self.worst is None else self.worst.to_json()}


@dataclass(frozen=True)
class Verdict:
    """One call's check: its report, its number at its site (from 1), and whether it proved a new structure.

    `shown`: whether the report is worth showing in full, as a site's first call, a new
    structure's proof or the site's first failure are; the others are in the summary only.
    """

    report: CheckReport
    call: int
    proof: bool
    shown: bool


class LoopPolicy:
    """One script run's checks: proofs by structure, summaries by site. `mode` is the witness for proofs."""

    def __init__(self, mode: str = "symbolic", *, rtol: float | None = None, atol: float | None = None,
                 seed: int = 0) -> None:
        self.mode = mode
        self.policy = POLICY
        self.rtol, self.atol = rtol, atol
        self.seed = seed
        self._proofs: dict[Hashable, dict[str, np.ndarray]] = {}
        self._calls: dict[Hashable, int] = {}
        self._proving = 0.0
        """CPU seconds spent in proofs so far (see `RUN_PROOF_SECONDS`)."""
        self._verified: set[Hashable] = set()
        """Backward structures whose first call passed element by element: later calls may go by directions."""
        self._steps: dict[Hashable, dict[str, int]] = {}
        """By verified structure: which step judged each input's direction last (`numeric.directional_check`)."""
        self.sites: dict[tuple[int, str], SiteSummary] = {}
        self.where: Callable[[int], str] | None = None
        """How the notes name a program line (a notebook's `cell 3, line 2`); None: `line N`."""

    def gradients(self, output: Tensor, leaves: dict[str, Tensor], gradient: Any, computed: dict[str, Any], *,
                  line: int, what: str, of: str, progress: Any = None) -> Verdict:
        """Check one call's gradients of Σ gradient·output (see `check_gradients`) by the policy.

        A `.grad` that this call made on the graph (create_graph) is registered with its meaning
        (`derived.register`), so a later backward through it is judged against the forward's derivative."""
        verdict = self._checked("gradients", output, leaves, line, what, progress,
                                lambda mode, **options: check_gradients(output, leaves, gradient, computed, mode=mode,
                                                                        of=of, **options))
        weights = np.ones(output.shape) if gradient is None else gradient
        for name, leaf in leaves.items():
            made = leaf.grad
            if made is not None and computed.get(name) is not None and np.array_equal(made._data, computed[name]):
                register(made, output, leaf, weights, line, what)
        return verdict

    def jacobian(self, output: Tensor, leaves: dict[str, Tensor], blocks: dict[str, Any], *, line: int, what: str,
                 of: str, progress: Any = None, jvps: tuple[type, ...] = ()) -> Verdict:
        """Check one call's Jacobian blocks (see `jacobian_check`) by the policy."""
        return self._checked("jacobian", output, leaves, line, what, progress, lambda mode, **options: jacobian_check(
            output, leaves, blocks, mode, of=of, jvps=jvps, **options))

    def hessian(self, output: Tensor, leaves: dict[str, Tensor], blocks: dict[str, dict[str, Any]], *, line: int,
                what: str, of: str, progress: Any = None) -> Verdict:
        """Check one call's Hessian blocks (see `hessian_check`) by the policy."""
        return self._checked("hessian", output, leaves, line, what, progress, lambda mode, **options: hessian_check(
            output, leaves, blocks, mode, of=of, **options))

    def functional(self, kind: str, arguments: dict[str, Any], value: Any, names: list[str], *,
                   traced: tuple[list[Tensor] | None, Tensor | None], line: int, what: str, of: str,
                   progress: Any = None, hooked: list[tuple[dict, dict]] | None = None,
                   jvps: tuple[type, ...] = ()) -> Verdict:
        """Check a gradient function's result by kind: `grad`, `jacobian`, `hessian`, `vjp`, `jvp`, `hvp`, `vhp`.

        jvp is judged by the Jacobian it contracts (its graph is retained); hvp and vhp as the gradient of
        (grad f)·v, as `grad` of a create_graph result is.

        `arguments` are the call's, bound to the function's parameters; `names` name its `inputs`
        in order; `traced` is (fresh leaves, output) for a functional that traced a function of its
        own. A kind with no rule here is counted as unchecked, never passed silently.

        `jvps`: the program's Functions whose own jvp a forward-mode Jacobian (`jacfwd`) came through, named
        beside a failure.

        `hooked`: a hook replaced a gradient during the call, whose backward passes these are, each with
        its own hook changes (`hooks.passes`). A Jacobian of a one-element output is then judged as its
        one pass's gradient (`check_gradients`, which verifies the chain rule from what each hook
        returned), since the Jacobian check replays no hooks; a Jacobian of several, row by row
        (`_rows`), each row as the gradient its own pass computed.
        """
        options = {"line": line, "what": what, "of": of, "progress": progress}
        xs, out = traced
        if xs is not None and out is not None:
            xs = _traced_leaves(xs, out)
            if xs is None:
                return self.unchecked(line, what, of)
        if kind == "grad":
            return self._grad(arguments, value, names, **options)
        if kind == "jacobian":
            blocks = [value] if len(names) == 1 else list(value)
            if hooked and out._data.size == 1:
                return self.gradients(out, dict(zip(names, xs)), None, {n: b._data.reshape(x.shape) for n, b, x in
                                                                         zip(names, blocks, xs)}, **options)
            if hooked:
                return self._rows(out, dict(zip(names, xs)), [b._data for b in blocks], hooked, **options)
            return self.jacobian(out, dict(zip(names, xs)), {n: b._data for n, b in zip(names, blocks)}, jvps=jvps,
                                 **options)
        if kind == "vjp":
            v = arguments.get("v")
            start = None if v is None else np.asarray(v._data if isinstance(v, Tensor) else v, dtype=out.dtype)
            grads = [value[1]] if len(names) == 1 else list(value[1])
            return self.gradients(out, dict(zip(names, xs)), start, {n: g._data for n, g in zip(names, grads)},
                                  **options)
        if kind == "jvp":
            return self.jacobian(out, dict(zip(names, xs)), dict(zip(names, jacobian_of(out, xs))), **options)
        if kind in ("hvp", "vhp") and out is not None:
            grads = [value[1]] if len(names) == 1 else list(value[1])
            return self.gradients(out, dict(zip(names, xs)), None, {n: g._data for n, g in zip(names, grads)},
                                  **options)
        if kind == "hessian":
            rows = [[value]] if len(names) == 1 else value
            return self.hessian(out, dict(zip(names, xs)), {a: {b: h._data for b, h in zip(names, row)}
                                                            for a, row in zip(names, rows)}, **options)
        return self.unchecked(line, what, of)

    def _rows(self, out: Tensor, leaves: dict[str, Tensor], blocks: list[np.ndarray], passes: list[tuple[dict, dict]],
              **options: Any) -> Verdict:
        """A Jacobian whose rows hooks changed: row k is the gradient of out[k], computed by the call's k-th
        backward pass with the hooks' changes of that pass. Up to `HOOKED_ROWS` rows, one pass each
        (else not checked); the site counts each row as a call. The verdict shown is the first failing
        row's, else the first row's."""
        from gradcli.engine.hooks import as_in_pass
        n = out._data.size
        if n > HOOKED_ROWS or len(passes) != n:
            return self.unchecked(options["line"], options["what"], options["of"])
        verdicts = []
        for k in range(n):
            start = np.zeros(n, dtype=out._data.dtype)
            start[k] = 1
            rows = {name: b.reshape((n,) + tuple(x.shape))[k] for (name, x), b in zip(leaves.items(), blocks)}
            with as_in_pass(passes[k]):
                verdicts.append(self.gradients(out, leaves, start.reshape(out.shape), rows, **options))
        return next((v for v in verdicts if v.report.status == FAIL), verdicts[0])

    def _grad(self, arguments: dict[str, Any], value: tuple, names: list[str], **options: Any) -> Verdict:
        """`grad(outputs, inputs, grad_outputs)`: checkable for one output and inputs that are leaves."""
        outs, ins = as_list(arguments["outputs"]), as_list(arguments["inputs"])
        if len(outs) != 1 or arguments.get("is_grads_batched"):
            return self.unchecked(options["line"], options["what"], options["of"])
        computed = {name: None if g is None else g._data for name, g in zip(names, value)}
        start = (as_list(arguments.get("grad_outputs")) or [None])[0]
        gradient = None if start is None else np.asarray(initial_gradient(outs[0], start))
        if any(x.grad_fn is not None for x in ins):  # by an intermediate tensor: the graph from it, as leaf
            rooted = rooted_at(outs[0], ins)
            if rooted is None:
                return self.unchecked(options["line"], options["what"], options["of"])
            return self.gradients(rooted[0], dict(zip(names, rooted[1])), gradient, computed, **options)
        verdict = self.gradients(outs[0], dict(zip(names, ins)), gradient, computed, **options)
        for g, x in zip(value, ins):
            register(g, outs[0], x, np.ones(outs[0].shape) if gradient is None else gradient, options["line"],
                     options["what"])
        return verdict

    def unchecked(self, line: int, what: str, of: str) -> Verdict:
        """A call no witness can judge (say, a gradient by a tensor that is not a leaf): counted as such."""
        return self._record(CheckReport("pass", self.mode, of, {}), line, what, False)

    def _checked(self, kind: str, output: Tensor, leaves: dict[str, Tensor], line: int, what: str, progress: Any,
                 check: Callable[..., CheckReport]) -> Verdict:
        key = kind, structure(trace(output, leaves))
        known = self._proofs.get(key)
        magnitudes: dict[str, np.ndarray] = {} if known is None else known
        later = {"verified": True, "call": self._calls[key], "steps": self._steps.setdefault(key, {})} \
            if key in self._verified else {}
        spent = known is None and self.mode != "numeric" and self._proving >= RUN_PROOF_SECONDS
        proving = known is None and not spent
        start = time.process_time()
        with placed(self.where):
            report = check(self.mode if proving else "numeric", rtol=self.rtol, atol=self.atol, seed=self.seed,
                           magnitudes=magnitudes, progress=progress if known is None else None,
                           seconds=min(PROOF_SECONDS, RUN_PROOF_SECONDS - self._proving), **later)
        if proving and self.mode != "numeric":
            self._proving += time.process_time() - start
        if spent:
            note = SPENT_NOTE.format(RUN_PROOF_SECONDS)
            report = dataclasses.replace(report, inputs={name: dataclasses.replace(c, note="; ".join(
                filter(None, (note, c.note)))) for name, c in report.inputs.items()})
        self._calls[key] = self._calls.get(key, 0) + 1
        if known is None:
            self._proofs[key] = magnitudes
            if kind == "gradients" and report.status == PASS:
                self._verified.add(key)
        return self._record(report, line, what, known is None)

    def _record(self, report: CheckReport, line: int, what: str, proof: bool) -> Verdict:
        site = self.sites.setdefault((line, what), SiteSummary(line, what))
        site.add(report, proof)
        return Verdict(report, site.calls, proof, proof or site.calls == 1 or site.first_failure == site.calls)

    def summaries(self) -> list[SiteSummary]:
        return sorted(self.sites.values(), key=lambda s: (s.line, s.what))
