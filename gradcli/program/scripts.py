"""Runs `.grad` script files: tutorial code as written, with every backward call optionally proved.

A script is the eval language with its own `.backward(...)` calls, `print`s and `assert`s. Nothing
here prints: what a script shows comes back as events (also streamed to `on_event` as they
happen, so a terminal can show them before a slow check finishes), and each file ends as one
`FileResult` whose status decides the exit code.

With a `checker`, each backward call is checked on its own: the leaves' `.grad` is read before
and after the real backward, and the difference (that call's own contribution) is what the
witness must reproduce. Accumulation over several calls and `x.grad.zero_()` in between therefore
need no special case. Gradient functions (`torch.autograd.grad`, `jacobian`, `hessian`) are handed
to the same checker. Which witness judges which call is the checker's policy (built by the caller
from `gradcli.check`, so running scripts does not depend on the layer that checks them): a
training loop's 2,000 calls are one SymPy proof and 1,999 finite-difference checks. Each call adds
to its site's summary; only the calls the checker shows come back as `BackwardCheck` events.
"""
from __future__ import annotations

import ast
import contextlib
import functools
import inspect
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from gradcli.errors import ArgumentError, GradcliError, ParseError, ProgramAssertionError
from gradcli.engine.budget import limited
from gradcli.program.evaluation import SCRIPT_DTYPE, Settings, engine_settings
from gradcli.program.graph import graph_nodes, leaf_names
from gradcli.source import operand
from gradcli.engine.batched import Fallbacks
from gradcli.engine.function import recording_forwards
from gradcli.lang.builtins import GRADIENT_FUNCTIONS
from gradcli.lang.interpreter import Hooks, Interpreter
from gradcli.lang.limits import MAX_SCRIPT_BYTES, check_file_size
from gradcli.lang.parser import parse_program
from gradcli.engine.autograd import as_list
from gradcli.engine.forward_ad import directions
from gradcli.engine.hooks import ACCUMULATED, CHANGES, accumulated, passes
from gradcli.engine.tensor import AccumulateGrad, Node, Tensor

if TYPE_CHECKING:
    from gradcli.program.recorder import Recorder
    from gradcli.program.notebooks import Notebook

class Verdict(Protocol):
    """One call's check, as a `Checker` returns it."""

    report: Any  # a CheckReport (gradcli.check.report): program/ does not import check/
    call: int  # the call's number at its site, from 1
    shown: bool  # whether its report is worth an event of its own


class Checker(Protocol):
    """Checks one script's gradients, call by call (`gradcli.check.checker(mode)` builds one per file)."""

    policy: str
    """The policy that chooses each call's witness, in words, for the report."""
    where: Callable[[int], str] | None
    """How a check's notes name a program line; the runner sets it for a notebook (`cell 3, line 2`)."""

    def gradients(self, output: Tensor, leaves: dict[str, Tensor], gradient: Any, computed: dict[str, Any], *,
                  line: int, what: str, of: str, progress: Any = None) -> Verdict:
        """A backward call: `computed[name]` is what it added to `leaves[name].grad`."""

    def functional(self, kind: str, arguments: dict[str, Any], value: Any, names: list[str], *,
                   traced: tuple[list[Tensor] | None, Tensor | None], line: int, what: str, of: str,
                   progress: Any = None, jvps: tuple[type, ...] = ()) -> Verdict:
        """A gradient function's call (`B.GRADIENT_FUNCTIONS` kind), its bound arguments and its value (`jvps`:
        the program's Functions whose own jvp a forward-mode Jacobian came through)."""

    def jacobian(self, output: Tensor, leaves: dict[str, Tensor], blocks: dict[str, Any], *, line: int, what: str,
                 of: str, progress: Any = None, jvps: tuple[type, ...] = ()) -> Verdict:
        """Jacobian blocks of `output` by `leaves` (a tangent: by the direction leaf; `jvps`, the program's
        Functions whose own jvp it came through)."""

    def unchecked(self, line: int, what: str, of: str) -> Verdict:
        """A call no witness can judge, counted as such."""

    def summaries(self) -> list[Any]:
        """Every site's summary (line, what, calls, failed, unchecked, `to_json()`), in line order."""


SUFFIX = ".grad"
NOTEBOOK = ".ipynb"
PYTHON = ".py"
RUNS = (PYTHON, SUFFIX, NOTEBOOK)
"""What `gradcli run DIR` runs of a directory: Python files as tutorials write them, scripts, notebooks."""
Status = Literal["ok", "failed", "error"]
ProgressFactory = Callable[[], AbstractContextManager[Callable[[int, int], None]]]


@dataclass
class Output:
    """A `print(...)` ("print") or a bare expression statement's value ("display").

    Tensors are copied when the event happens: a later `x.grad.zero_()` must not change what an
    earlier `print(x.grad)` showed.
    """

    kind: Literal["print", "display"]
    line: int
    items: list[tuple[str, Any]]
    text: str = ""
    """What a print wrote, as Python writes it (PyTorch's text for a tensor, with `sep` and `end`)."""


@dataclass
class BackwardCheck:
    """The proof of one backward call's contribution to each leaf it reached."""

    line: int
    output_name: str | None
    """The source of the tensor backward was called on, e.g. `out` or `(g * v).sum()`."""
    report: Any
    """The checker's CheckReport (gradcli.check.report)."""
    call: int = 1
    """Which call of this site it was (a loop calls one site many times)."""
    what: str = ""
    """A gradient function's call (`grad(y, …)`); empty for `.backward()`."""
    site: str = ""
    """Where the call is, as a reader finds it: `line 12`, or in a notebook `cell 3, line 2`."""

    @property
    def passed(self) -> bool:
        """Not failed: a check that verified nothing (all undefined) is no failure, and counted apart."""
        return self.report.status != "fail"


@dataclass
class Explanation:
    """`--explain`: the steps one backward call took, with the names the script gave its tensors."""

    line: int
    output_name: str | None
    recorder: Recorder
    leaves: dict[str, Tensor]
    variables: dict[str, Any]
    site: str = ""
    """As `BackwardCheck.site`."""


@dataclass
class Figure:
    """A figure the program showed (`plt.show()`, or a notebook's figure after its cells) or saved
    (`savefig(name)`): plain data (`pyplot_module.FigureData`) for a view to draw or a file to write."""

    figure: Any
    name: str | None = None
    """The file name `savefig` asked for; None for `show()`."""
    line: int | None = None
    """The program line of the `show()` or `savefig` call (of the last plot call, for a notebook's figure
    drawn after its cells)."""


Event = Output | BackwardCheck | Explanation | Figure


@dataclass
class FileResult:
    """One script's run: what it showed, how its backward calls and checks went, and why it stopped."""

    path: Path
    status: Status = "ok"
    events: list[Event] = field(default_factory=list)
    backward_calls: int = 0
    seconds: float = 0.0
    error: GradcliError | None = None
    assertion: ProgramAssertionError | None = None
    sites: list[Any] = field(default_factory=list)
    """With a checker: every gradient site's summary (calls, witnesses, worst error; see `Checker`)."""
    policy: str = ""
    places: dict[int, str] = field(default_factory=dict)
    """Each gradient site's line as a reader finds it, where that is not `line N` (a notebook's `cell 3, line 2`)."""
    notebook: Notebook | None = None
    """The notebook the program came from: its events' lines are given by cell in JSON."""
    label: str | None = None
    """What a reader calls a program that is no file of theirs (a Jupyter cell's `Cell In[3]`), shown instead of
    the path it was run from."""

    @property
    def name(self) -> str:
        """The file as output names it: its label, else its path."""
        return self.label or str(self.path)

    @property
    def checks(self) -> list[BackwardCheck]:
        return [e for e in self.events if isinstance(e, BackwardCheck)]

    @property
    def checks_passed(self) -> int:
        return sum(s.calls - s.failed - s.undefined - s.unchecked for s in self.sites)  # unchecked is no pass

    @property
    def checks_undefined(self) -> int:
        """Checks that verified nothing (every element undefined): counted apart from passes."""
        return sum(s.undefined for s in self.sites)

    @property
    def checks_failed(self) -> int:
        return sum(s.failed for s in self.sites)

    @property
    def warnings(self) -> list[str]:
        """What a check could not vouch for: nothing to check at all, or gradients no witness judged."""
        if not self.policy or self.status == "error":
            return []
        if not self.sites:
            return ["--check found no gradient to check: the script calls neither backward nor a gradient function"]
        return [f"{self.place(s.line)}: {s.unchecked} of {s.calls} calls of {s.what} were not checked "
                "(no witness covers such a call)" for s in self.sites if s.unchecked]

    def place(self, line: int) -> str:
        """`line 12`, or in a notebook `cell 3, line 2`."""
        return self.places.get(line, f"line {line}")

    def to_json(self) -> dict:
        """Strict JSON (nan as a string) of everything the terminal view shows."""
        from gradcli.jsonable import json_value
        events: list[dict] = []
        for event in self.events:
            where = self._located(event.line)
            if isinstance(event, BackwardCheck):
                events.append({"kind": "check", **where, "output": event.output_name, "call": event.call,
                               "check": event.report.to_json()})
            elif isinstance(event, Explanation):
                events.append({"kind": "explain", **where, "output": event.output_name,
                               "steps": event.recorder.to_json()})
            elif isinstance(event, Figure):
                events.append({"kind": "figure", **where, "name": event.name,
                               "figure": _figure_json(event.figure, json_value)})
            else:
                events.append({"kind": event.kind, **where,
                               "items": [_item_json(title, value, json_value) for title, value in event.items],
                               **({"text": event.text} if event.kind == "print" else {})})
        out = {"file": self.name, "status": self.status, "backward_calls": self.backward_calls,
               "checks": {"passed": self.checks_passed, "failed": self.checks_failed,
                          "undefined": self.checks_undefined},
               "seconds": round(self.seconds, 4), "events": events, "error": self._error_json()}
        if self.policy:
            out.update(policy=self.policy, sites=[site.to_json() for site in self.sites], warnings=self.warnings)
        return out

    def _located(self, line: int | None) -> dict:
        """`"line"`, and in a notebook `"cell"` with the line counted in it, as errors give them."""
        if line is None or self.notebook is None:
            return {"line": line}
        return self.notebook.located(line)

    def _error_json(self) -> dict | None:
        if self.error is not None:
            return {**self.error.to_dict(), "file": self.name}
        if self.assertion is not None:
            a = self.assertion
            return {**a.to_dict(), "file": self.name, "values": dict(a.values),
                    "assert_message": None if a.message is None else str(a.message)}
        return None


def _figure_json(figure: Any, json_value: Callable[[Any], Any]) -> dict:
    """A figure's panels and what each draws, numbers included (a consumer can redraw it)."""
    def series(s: Any) -> dict:
        return {"kind": s.kind, "label": s.label, "x": None if s.x is None else json_value(s.x), "y": json_value(s.y)}
    return {"number": figure.number, "title": figure.title, "grid": [figure.rows, figure.columns],
            "axes": [{"position": list(a.position), "title": a.title, "xlabel": a.xlabel, "ylabel": a.ylabel,
                      "series": [series(s) for s in a.series]} for a in figure.axes]}


def _item_json(title: str, value: Any, json_value: Callable[[Any], Any]) -> dict:
    if isinstance(value, Tensor):
        return {"source": title, "shape": list(value.shape), "dtype": str(value.dtype), "value": json_value(value)}
    if isinstance(value, (Node, AccumulateGrad)):
        return {"source": title, "value": repr(value)}
    if value is None or isinstance(value, (bool, str, int)):
        return {"source": title, "value": value}
    if isinstance(value, (float, np.number)):
        return {"source": title, "value": json_value(value)}
    return {"source": title, "value": str(value)}


def script_files(paths: Sequence[str | Path]) -> list[Path]:
    """The scripts `paths` name: files as given, directories as their scripts (`RUNS`), sorted.

    A missing path, or a directory without scripts, is a user error before anything runs: a
    batch that silently skipped a typo'd path would report success for tests it never ran.
    """
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in RUNS)
            if not found:
                raise ArgumentError(f"no {_kinds()} files in directory '{raw}'",
                                    hint=f"gradcli run takes scripts ({_kinds()}) or directories of them")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise ArgumentError(f"no such file or directory: '{raw}'",
                                hint=f"give a script ({_kinds()}) or a directory of them")
    return files


def skipped_files(paths: Sequence[str | Path]) -> list[Path]:
    """Files inside the directories of `paths` that `script_files` leaves out, so a run can say so:
    a `data.csv` beside the scripts is fine, a `lesson.txt` someone thought would run is not."""
    return sorted(p for raw in paths if Path(raw).is_dir() for p in Path(raw).iterdir()
                  if p.is_file() and p.suffix not in RUNS and not p.name.startswith("."))


def _kinds() -> str:
    return ", ".join(RUNS[:-1]) + " or " + RUNS[-1]


def run_file(path: str | Path, checker: Checker | None = None, settings: Settings | None = None, *,
             explain: bool = False, on_event: Callable[[Event], None] | None = None,
             progress: ProgressFactory | None = None, label: str | None = None) -> FileResult:
    """Run one script in a fresh namespace and engine state (seed, dtype), checking backward calls with `checker`.

    User errors and failed asserts end the file, not the batch: they are returned in the result.
    `checker` checks every gradient the script computes (see `Checker`; None checks nothing): give
    each file a fresh one. `progress` opens a fresh `progress(done, total)` callback for each
    check, so a bar's clock starts with it.
    `explain` records each backward call's steps as an `Explanation` event. `label` names the program
    in place of its path (`FileResult.label`).
    """
    settings = settings or Settings(dtype=SCRIPT_DTYPE)
    path = Path(path)
    result = FileResult(path, label=label)
    session = _Session(result, checker, on_event, progress, explain)
    start, fallbacks = time.perf_counter(), len(Fallbacks.reasons)
    notebook = None
    with engine_settings(settings, watch=False), recording_forwards(checker is not None), \
            directions(checker is not None):
        try:
            with limited(settings.timeout, settings.max_memory):  # the file's whole budget
                if path.suffix == NOTEBOOK:
                    from gradcli.program.notebooks import read_notebook
                    notebook = result.notebook = read_notebook(path)
                    session.where = notebook.site
                    if checker is not None:
                        checker.where = notebook.site  # its notes name lines as the notebook's errors do
                    source = notebook.source
                    for line, note in notebook.notes:
                        session.note(note, line)
                else:
                    source = _read(path)
                tree = parse_program(source, str(path))
                interpreter = Interpreter(source, hooks=session.hooks(), max_steps=settings.max_steps, filename=str(path),
                                          timeout=settings.timeout,
                                          displayed=_displayed(path, tree, notebook),
                                          cell_ends=notebook.cell_ends(tree) if notebook is not None else None)
                session.env = interpreter.env
                session.receivers, session.subjects = _backward_receivers(tree), _gradient_subjects(tree)
                with _figures_to(session):
                    interpreter.run(tree)
        except GradcliError as exc:
            exc.filename = label or exc.filename or str(path)
            result.error, result.status = exc, "error"
        except ProgramAssertionError as exc:
            result.assertion, result.status = exc, "failed"
    if explain:
        for reason, count in Counter(Fallbacks.reasons[fallbacks:]).items():
            session.note(reason + ("" if count == 1 else f" ({count:,} calls)"), 0)
    failure = result.error or result.assertion
    if notebook is not None and failure is not None:
        notebook.place(failure)
    if checker is not None:
        result.sites, result.policy = checker.summaries(), checker.policy
        if notebook is not None:
            result.places = {site.line: notebook.site(site.line) for site in result.sites}
    if result.status == "ok" and result.checks_failed:
        result.status = "failed"
    result.seconds = time.perf_counter() - start
    return result


def _displayed(path: Path, tree: ast.Module, notebook: Notebook | None) -> set[int] | None:
    """The lines whose bare expression is shown: a notebook's cell ends, as Jupyter shows them; none of a `.py`
    file, which Python runs without showing a value; every top-level one of a `.grad` script (None)."""
    if notebook is not None:
        return notebook.displayed(tree)
    return set() if path.suffix == PYTHON else None


@contextlib.contextmanager
def _figures_to(session: _Session) -> Iterator[None]:
    """Figures the program shows (matplotlib's facade) become the session's events."""
    from gradcli.lang.stdlib import runtime
    runtime.FIGURES.append(session.figure)
    try:
        yield
    finally:
        runtime.FIGURES.pop()


def _read(path: Path) -> str:
    check_file_size(path, MAX_SCRIPT_BYTES, "a script")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"the file is not UTF-8 text (byte {exc.start})", hint="save the script as UTF-8",
                         filename=str(path)) from None
    except OSError as exc:
        raise ArgumentError(f"cannot read '{path}': {exc.strerror}", filename=str(path)) from None


class _Session:
    """The hooks of one file's interpreter, and the state they share with it."""

    def __init__(self, result: FileResult, checker: Checker | None, on_event: Callable[[Event], None] | None,
                 progress: ProgressFactory | None, explain: bool = False) -> None:
        self.result = result
        self.explain = explain
        self.on_event = on_event
        self.progress = progress
        self.env: dict[str, Any] = {}
        self.receivers: dict[int, str] = {}
        self.subjects: dict[int, str] = {}
        self.checker = checker
        self.hooks_before: int | None = None
        """At a gradient function's call other than autograd.grad: how many gradients hooks had replaced."""
        self.passes: list[tuple[dict, dict]] = []
        """At a gradient function's call: each of its backward passes' hook changes (`hooks.passes`)."""
        self.where: Callable[[int], str] = lambda line: f"line {line}"
        """A program line as a reader finds it (a notebook's `cell 3, line 2`)."""

    def hooks(self) -> Hooks:
        return Hooks(on_print=self._print, on_display=self._display, on_backward=self._backward,
                     on_gradient=self._gradient if self.checker is not None else None,
                     on_cell_end=self._unshown_figures)

    def _emit(self, event: Event) -> None:
        self.result.events.append(event)
        if self.on_event is not None:
            self.on_event(event)

    def note(self, text: str, line: int) -> None:
        """Something gradcli skipped (a notebook's magic), shown where the program's prints are."""
        self._emit(Output("print", line, [("note", f"note: {text}")], f"note: {text}\n"))

    def figure(self, shown: Any) -> None:
        self._emit(Figure(shown.figure, shown.name, shown.line))

    def _unshown_figures(self) -> None:
        """A notebook cell's figures that no `show()` drew are drawn after the cell, as Jupyter's inline backend does."""
        from gradcli.lang import stdlib
        if stdlib.loaded("matplotlib.pyplot") or stdlib.loaded("matplotlib"):
            from gradcli.lang.stdlib.pyplot_module import pending
            for figure in pending():
                self._emit(Figure(figure, line=figure.line))

    def _print(self, items: list[tuple[str, Any]], line: int, text: str) -> None:
        self._emit(Output("print", line, [(title, _snapshot(value)) for title, value in items], text))

    def _display(self, text: str, value: Any, line: int) -> None:
        if _in_place_call(text):
            return
        self._emit(Output("display", line, [(text, _snapshot(value))]))

    def _backward(self, tensor: Tensor, run: Callable[..., None], call: dict, line: int) -> None:
        self.result.backward_calls += 1
        recorder = None
        if self.explain:
            from gradcli.program.recorder import Recorder
            recorder = Recorder()
        if self.checker is None:
            run(trace=recorder)
            self._explained(recorder, tensor, line)
            return
        leaves = self._leaves(tensor)
        before = {name: _grad_copy(leaf) for name, leaf in leaves.items()}
        ACCUMULATED.clear()
        run(trace=recorder)
        self._explained(recorder, tensor, line)
        posted = {name: accumulated(leaf) for name, leaf in leaves.items()} if ACCUMULATED else {}
        computed = {name: _contribution(before[name], leaf, posted.get(name)) for name, leaf in leaves.items()}
        from gradcli.engine.backward import initial_gradient
        gradient = call.get("gradient")
        start = None if gradient is None else np.asarray(initial_gradient(tensor, gradient))
        name = self.receivers.get(line)
        with self.progress() if self.progress is not None else contextlib.nullcontext() as progress, \
                _as_accumulated(leaves, posted):
            verdict = self.checker.gradients(tensor, leaves, start, computed, line=line, progress=progress,
                                            what=f"{operand(name)}.backward()" if name else "backward()", of=name or "output")
        if verdict.shown:
            self._emit(BackwardCheck(line, name, verdict.report, verdict.call, site=self.where(line)))

    def _gradient(self, kind: str, func: Any, run: Callable[..., Any], args: list, kwargs: dict, line: int) -> Any:
        """`torch.autograd.grad`, `jacobian`, `hessian`: run, then check the result by the same policy as backward.

        A functional that traces a function of its own runs as its traced variant, so the check
        sees the graph it differentiated.
        """
        if kind == "tangent":  # forward mode: no hook takes part
            return self._tangent(run, args, line)
        if kind != "grad":  # hooks may act in several backward passes here: see `_judge`
            self.hooks_before = CHANGES[0]
        outer = self.passes
        try:
            with passes() as self.passes:
                if kind.startswith("func:"):
                    return self._transformed(kind[len("func:"):], func, run, line)
                return self._functional_call(kind, run, args, kwargs, line)
        finally:
            self.hooks_before, self.passes = None, outer

    def _functional_call(self, kind: str, run: Callable[..., Any], args: list, kwargs: dict, line: int) -> Any:
        from gradcli.engine.autograd import TRACED
        traced = TRACED.get(GRADIENT_FUNCTIONS[kind])
        value, xs, out = run(traced) if traced is not None else (run(), None, None)
        arguments = _signature(kind).bind(*args, **kwargs).arguments
        subject = self.subjects.get(line, "")
        names = self._names(as_list(arguments.get("inputs")))
        self._judge(line, subject, f"{kind}({subject}, …)", lambda what, progress, hooked: self.checker.functional(
            kind, arguments, value, names, traced=(xs, out), line=line, what=what, of=subject, progress=progress,
            hooked=hooked), _one_pass(kind, out) or kind == "jacobian")
        return value

    def _transformed(self, kind: str, func: Any, run: Callable[..., Any], line: int) -> Any:
        """A call of torch.func's: `grad(f)(x)`, `jacrev`/`jacfwd`/`hessian(f)(x)` (the result is the Jacobian or
        the second derivatives of f's output by the differentiated arguments, judged as `jacobian(f, x)`
        and `hessian(f, x)` are), `vjp_fn(v)` (the gradients of Σ v·f), `jvp(f, x, v)` (the directional
        derivative of f along v, as a tangent is) and `vmap` of a transform (each example on its own)."""
        subject = self.subjects.get(line, "")
        if kind == "jvp":
            from gradcli.func.transforms import traced_jvp
            value, tr, outs, tangents = run(traced_jvp)
            for k, (out, tangent) in enumerate(zip(outs, tangents)):
                self._directional(tr.level, out, tangent, line, subject,
                                  f"jvp({subject}, …)" + (f"[{k}]" if len(outs) > 1 else ""))
            return value
        if kind == "vjp_fn":
            grads, tr, outs, cts = run(func.traced)
            if len(outs) == 1:
                self._functional("vjp", {"v": cts[0]}, (None, grads[0] if len(grads) == 1 else grads), tr, outs[0],
                                 line, "f", "vjp_fn(…)")
            else:  # several outputs: no single Σ v·f to judge
                self._unchecked(line, "vjp_fn(…)", "f")
            return grads
        if kind == "vmap":
            value, calls = run(func.traced)
            of = getattr(func.transform.func, "__name__", "f")  # each example's result is a derivative of f's output
            for tr, blocks in calls:
                self._transform_result(func.transform, tr, blocks, line, of, f"{func.__name__}(…)")
            return value
        value, tr, blocks = run(func.traced)
        self._transform_result(func, tr, blocks, line, subject, f"{func.what}({subject})(…)", value)
        return value

    def _transform_result(self, func: Any, tr: Any, blocks: list[Tensor], line: int, subject: str, what: str,
                          value: Any = None) -> None:
        """`value`: the call's result, whose rows of blocks are a Hessian by several arguments (argnums=(0, 1))."""
        if func.judged_as == "hessian":  # its trace is f's own call: judged by the second derivatives of f's output
            several = not blocks and len(tr.flat) > 1 and _rows_of_blocks(value, len(tr.flat))
            if not (several or len(blocks) == 1 and len(tr.flat) == 1) or not isinstance(tr.out, Tensor) \
                    or tr.out.numel() != 1:
                self._unchecked(line, what, subject)  # several outputs: not one Hessian
                return
            self._functional("hessian", {}, value if several else blocks[0], tr, tr.out, line, subject, what)
            return
        if not blocks:  # several outputs: no single Jacobian to judge
            self._unchecked(line, what, subject)
            return
        self._functional("jacobian", {}, blocks[0] if len(blocks) == 1 else tuple(blocks), tr, tr.out, line,
                         subject, what, tuple(tr.level.customs) if tr.level is not None else ())

    def _functional(self, kind: str, arguments: dict, value: Any, tr: Any, out: Tensor, line: int, subject: str,
                    what: str, jvps: tuple[type, ...] = ()) -> None:
        names = self._names(tr.callers)
        self._judge(line, subject, what, lambda what, progress, hooked: self.checker.functional(
            kind, arguments, value, names, traced=(tr.flat, out), line=line, what=what, of=subject,
            progress=progress, hooked=hooked, jvps=jvps), _one_pass(kind, out) or kind == "jacobian")

    def _tangent(self, run: Callable[..., Any], args: list, line: int) -> Any:
        """`forward_ad.unpack_dual(y)`: y's tangent judged as the derivative of y's shadow by the direction s."""
        value = run()
        if value.tangent is not None:
            subject = self.subjects.get(line, "")
            self._directional(None, args[0], value.tangent, line, subject, f"unpack_dual({subject}).tangent")
        return value

    def _directional(self, level: Any, t: Tensor, tangent: Tensor, line: int, subject: str, what: str) -> None:
        """A tangent judged as d(shadow of t)/ds at s = 0: SymPy's directional derivative along the seeds."""
        from gradcli.engine.forward_ad import LEVELS, shadow_of
        followed = shadow_of(t, level)
        if followed is None:  # through a Function's jvp whose forward read values out of the graph: no replay
            self._unchecked(line, what, subject)
            return
        shadow, s = followed
        jvps = tuple((level or LEVELS[-1]).customs)
        self._judge(line, subject, what, lambda what, progress, hooked: self.checker.jacobian(
            shadow, {"direction": s}, {"direction": tangent._data}, line=line, what=what, of=subject,
            progress=progress, jvps=jvps))

    def _unchecked(self, line: int, what: str, subject: str) -> None:
        """A call no witness covers: counted at its site, and its first call shown as `check (not checked)`."""
        verdict = self.checker.unchecked(line, what, subject)
        if verdict.shown:
            self._emit(BackwardCheck(line, subject, verdict.report, verdict.call, what, self.where(line)))

    def _judge(self, line: int, subject: str, what: str, check: Callable[[str, Any, list | None], Verdict],
               by_passes: bool = False) -> None:
        """Run one check under a progress bar and show its report when the checker says it is worth it.

        Where a hook replaced a gradient during a gradient function's call, the check is given the
        call's backward passes, each with its own hook changes (`hooked`), when it can model them
        (`by_passes`): a call of one pass (`_one_pass`) is judged as that pass's gradient, as for a
        plain backward, and a Jacobian row by row, each row with its own pass. Other calls (a
        Hessian's two levels, a jvp's double pass) are counted as not checked, never judged as if no
        hook had acted.
        """
        hooked = self.passes if self.hooks_before is not None and CHANGES[0] != self.hooks_before else None
        if hooked and not by_passes:
            self._unchecked(line, what, subject)
            return
        with self.progress() if self.progress is not None else contextlib.nullcontext() as progress:
            verdict = check(what, progress, hooked)
        if verdict.shown:
            self._emit(BackwardCheck(line, subject, verdict.report, verdict.call, what, self.where(line)))

    def _names(self, tensors: list[Any]) -> list[str]:
        """The script's names for `tensors`, in their order (`leaf0`... for unnamed ones)."""
        by_id = {id(t): name for name, t in leaf_names(tensors, self.env).items()}
        return [by_id[id(t)] for t in tensors]

    def _explained(self, recorder: Recorder | None, tensor: Tensor, line: int) -> None:
        if recorder is not None:
            self._emit(Explanation(line, self.receivers.get(line), recorder, self._leaves(tensor), dict(self.env),
                                   self.where(line)))

    def _leaves(self, tensor: Tensor) -> dict[str, Tensor]:
        """The leaves `tensor`'s graph reaches, by the script's own names (first bound wins)."""
        return leaf_names(graph_nodes(tensor)[1], self.env)


def _one_pass(kind: str, out: Tensor | None) -> bool:
    """Whether a gradient function's result came from one backward pass through its function's graph: a
    vector-Jacobian product (`vjp`, `vjp_fn`), and a Jacobian of a one-element output (`torch.func.grad`,
    `jacrev` or `jacobian` of a function returning one number), one row."""
    return kind == "vjp" or kind == "jacobian" and out is not None and out.numel() == 1


_TRANSFORM_NAMES = frozenset({"unpack_dual", "jacrev", "jacfwd", "grad_and_value", "vmap"})
"""Calls checked besides GRADIENT_FUNCTIONS' (torch.func's grad is among those by name)."""


def _gradient_subjects(tree: ast.Module) -> dict[int, str]:
    """Line → source of the first argument of a gradient function (`y` in `grad(y, x)`), to name a check by."""
    subjects: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name in GRADIENT_FUNCTIONS or name in _TRANSFORM_NAMES:
                subjects.setdefault(node.lineno, ast.unparse(node.args[0]))
    return subjects


def _backward_receivers(tree: ast.Module) -> dict[int, str]:
    """Line → source of the tensor `.backward(...)` is called on (`out`, `(g * v).sum()`), to name a check by."""
    receivers: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "backward":
            receivers.setdefault(node.lineno, ast.unparse(node.func.value))
    return receivers


def _grad_copy(leaf: Tensor) -> np.ndarray | None:
    return None if leaf.grad is None else np.array(leaf.grad._data)


def _contribution(before: np.ndarray | None, leaf: Tensor, posted: tuple | None = None) -> np.ndarray | None:
    """What backward added to `leaf.grad`; with post-accumulate hooks (`posted`), what it added before they ran."""
    after = posted[0] if posted is not None else None if leaf.grad is None else np.array(leaf.grad._data)
    if after is None:
        return None
    return after if before is None else after - before


@contextlib.contextmanager
def _as_accumulated(leaves: dict[str, Tensor], posted: dict[str, tuple | None]) -> Iterator[None]:
    """The leaves at the values backward differentiated at, while the check replays them: a post-accumulate
    hook may have stepped an optimizer since."""
    moved = {name: leaves[name]._data for name, entry in posted.items() if entry is not None}
    for name in moved:
        leaves[name]._data = posted[name][1]
    try:
        yield
    finally:
        for name, data in moved.items():
            leaves[name]._data = data


def _snapshot(value: Any) -> Any:
    return Tensor(value) if isinstance(value, Tensor) else value


@functools.cache
def _signature(kind: str) -> inspect.Signature:
    return inspect.signature(GRADIENT_FUNCTIONS[kind])


_FOR_EFFECT = frozenset({"register_hook", "eval", "train", "apply", "load_state_dict", "set_detect_anomaly",
                         "set_grad_enabled"})
"""Methods a script calls for their effect: a hook's handle, a module's mode switches, `apply` and
`load_state_dict`, which return the module (or the keys report) only so that calls can chain, and
torch's mode switches, which return a context manager a bare call never enters."""


@functools.lru_cache(maxsize=1024)
def _rows_of_blocks(value: Any, n: int) -> bool:
    """Whether `value` is n rows of n tensors: the blocks of a Hessian by n arguments."""
    return isinstance(value, tuple) and len(value) == n and all(
        isinstance(row, tuple) and len(row) == n and all(isinstance(b, Tensor) for b in row) for row in value)


def _in_place_call(text: str) -> bool:
    """`x.grad.data.zero_()`, `x.register_hook(fn)` and `model.eval()` are run for their effect; showing
    what they return (the zeros, a handle, the model) would only be noise.

    `text` is `ast.unparse` of an already checked tree, so parsing it again runs nothing; a loop asks
    about the same few texts again and again, so each is parsed once.
    """
    node = ast.parse(text, mode="eval").body
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
        node.func.attr.endswith("_") or node.func.attr in _FOR_EFFECT)
