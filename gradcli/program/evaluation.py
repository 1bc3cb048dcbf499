"""`evaluate`: one program, its inputs, one backward; the path `gradcli eval`, jacobian/hessian and tests share.

The batch runner shares `Settings` and `engine_settings`, so a script runs under the same bounds.

Settings that the engine keeps globally (default dtype, random generator, element cap, anomaly
watch) are set for the duration of one call and restored afterwards, so library callers are not
surprised by a CLI option.
"""
from __future__ import annotations

import contextlib
import dataclasses
import sys
import warnings
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

import numpy as np

from gradcli.engine.tensor_str import PrintOptions
from gradcli.engine.backward import Trace, run_backward
from gradcli.engine.budget import DEFAULT_MAX_MEMORY
from gradcli.engine.creation import Defaults, manual_seed, resolve_dtype
from gradcli.errors import ArgumentError, BackwardError, InputSpecError
from gradcli.lang.operators import type_name
from gradcli.lang.interpreter import Hooks, Interpreter
from gradcli.lang.limits import DEFAULT_MAX_ELEMENTS, DEFAULT_MAX_STEPS, DEFAULT_TIMEOUT
from gradcli.lang.parser import parse_program
from gradcli.lang.specs import check_name, make_leaf, read_spec, split_assignment
from gradcli.engine import cuda
from gradcli.engine.anomaly import AnomalyMode
from gradcli.engine.tensor import Anomaly, Limits, Node, Observe, Tensor

DTYPES = ("float64", "float32")
# Scripts run in PyTorch's default dtype, so what they print is what PyTorch prints; `gradcli eval`,
# a calculator, keeps float64.
SCRIPT_DTYPE = "float32"


@dataclass
class Settings:
    """What a run may use: its seed, dtype and bounds (`timeout` None: no time limit)."""

    seed: int = 0
    dtype: str = "float64"
    max_elements: int = DEFAULT_MAX_ELEMENTS
    max_steps: int = DEFAULT_MAX_STEPS
    timeout: float | None = DEFAULT_TIMEOUT
    max_memory: int | None = DEFAULT_MAX_MEMORY
    """Bytes a script may take beyond what gradcli held when it began (`gradcli run` holds each file to it)."""

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise ArgumentError(f"unknown dtype {self.dtype!r}", hint="use --dtype float64 or --dtype float32")
        if self.timeout is not None and not self.timeout > 0:
            raise ArgumentError(f"--timeout {self.timeout}: the time limit must be a positive number of seconds",
                                hint="e.g. --timeout 60")


_WORLD = "gradcli.distributed.process_group"
"""torch.distributed's process group, which each program starts outside of: reset around a run once some program
has loaded it (a one-line eval loads no library package)."""


@contextlib.contextmanager
def engine_settings(settings: Settings, watch: bool = True) -> Iterator[None]:
    """Apply `settings` to the engine's globals for one run, and put the previous ones back.

    `watch` keeps the first op that made a nan or inf, for eval's warning; scripts, which show no
    such warning, skip the per-op test (about 8% of a training loop)."""
    saved = (Defaults.dtype, Defaults.generator, Limits.max_elements, Anomaly.watching, Anomaly.first)
    printing, detecting = PrintOptions.saved(), (AnomalyMode.enabled, AnomalyMode.check_nan)
    switches = cuda.saved()
    world = sys.modules[_WORLD].fresh() if _WORLD in sys.modules else None
    AnomalyMode.enabled, AnomalyMode.check_nan = False, True  # a program starts without anomaly detection
    Defaults.dtype = resolve_dtype(settings.dtype)
    manual_seed(settings.seed)
    Limits.max_elements = settings.max_elements
    Anomaly.watching, Anomaly.first = watch, None
    Observe.refresh()
    try:
        # NumPy's own warnings (divide by zero, mean of an empty slice) would reach the terminal raw;
        # gradcli reports non-finite results itself, naming the op that made them.
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            yield
    finally:
        Defaults.dtype, Defaults.generator, Limits.max_elements, Anomaly.watching, Anomaly.first = saved
        AnomalyMode.enabled, AnomalyMode.check_nan = detecting
        Observe.refresh()
        PrintOptions.restore(printing)
        cuda.restore(switches)
        if _WORLD in sys.modules:  # a program may have loaded torch.distributed: its world ends with it
            sys.modules[_WORLD].restore(world)


@dataclass
class Program:
    """A program after it ran forward: its output and the input leaves it was given."""

    output: Tensor
    output_name: str
    leaves: dict[str, Tensor]
    env: dict[str, Any]
    source: str
    first_nonfinite: Node | None = None
    made: dict[str, Tensor] = field(default_factory=dict)
    """Leaves the program made itself (`w = torch.tensor(..., requires_grad=True)`), by name."""

    def require_grad(self) -> None:
        """Differentiating an output that no input reaches is a mistake worth naming."""
        if not self.output.requires_grad:
            raise BackwardError(f"the output '{self.output_name}' does not depend on any input",
                                hint="compute it from the inputs you pass as NAME=SPEC (they require grad)")


@dataclass
class Result:
    """Everything a caller shows about one evaluation."""

    output: Tensor
    output_name: str
    leaves: dict[str, Tensor]
    grads: dict[str, np.ndarray | None]
    gradient: np.ndarray
    seed: int
    dtype: str
    source: str
    first_nonfinite: Node | None = None
    env: dict[str, Any] = field(default_factory=dict)
    summed: bool = False
    """The output is not one number and no gradient was given: `grads` are those of its sum."""
    made: tuple[str, ...] = ()
    """The leaves of `leaves` the program made itself, not given as inputs."""
    own_backward: tuple[int, ...] = ()
    """The lines where the program called backward itself: `grads` are what those calls left in
    `.grad`, and gradcli ran no backward of its own (`gradient` is None unless there was exactly
    one call, on the output)."""


def parse_inputs(inputs: Mapping[str, Any] | None) -> dict[str, Tensor]:
    """Leaves for `{name: spec}`; specs as on the command line or array-likes."""
    leaves: dict[str, Tensor] = {}
    for name, spec in (inputs or {}).items():
        check_name(name)
        leaves[name] = make_leaf(name, spec)
    return leaves


def parse_input_args(items: list[str]) -> dict[str, str]:
    """`["x=ones(2,2)", ...]` from the command line into `{name: spec}`, refusing duplicates."""
    out: dict[str, str] = {}
    for item in items:
        name, spec = split_assignment(item)
        if name in out:
            raise InputSpecError(f"input '{name}' is given twice", hint="give each input once")
        out[name] = spec
    return out


def run_program(program: str, inputs: Mapping[str, Any] | None = None, of: str | None = None,
                hooks: Hooks | None = None, settings: Settings | None = None) -> Program:
    """Parse and run the program forward (within `engine_settings`), and pick its output."""
    settings = settings or Settings()
    tree = parse_program(program)
    leaves = parse_inputs(inputs)
    interpreter = Interpreter(program, env=dict(leaves), hooks=hooks, max_steps=settings.max_steps,
                              timeout=settings.timeout)
    outcome = interpreter.run(tree)
    if of is not None:
        if of not in interpreter.env:
            names = ", ".join(k for k, v in interpreter.env.items() if isinstance(v, Tensor)) or "none"
            raise ArgumentError(f"--of {of}: the program defines no variable '{of}'",
                                hint=f"tensors the program defines: {names}")
        value, name = interpreter.env[of], of
    else:
        value, name = outcome.value, outcome.name
    if not isinstance(value, Tensor):
        what = "nothing" if value is None else f"a {type_name(value)}"
        named = f" '{name}'" if name else ""
        raise ArgumentError(f"the program's output{named} is {what}, not a tensor",
                            hint="end the program with the tensor to differentiate (out = ...), or name it with --of")
    return Program(value, name or "output", leaves, interpreter.env, program, Anomaly.first,
                   _made_leaves(interpreter.env, leaves))


def _made_leaves(env: dict[str, Any], inputs: dict[str, Tensor]) -> dict[str, Tensor]:
    given = {id(t) for t in inputs.values()}
    return {name: value for name, value in env.items() if isinstance(value, Tensor) and value.requires_grad
            and value.is_leaf and id(value) not in given and not name.startswith("_")}


def evaluate(program: str, inputs: Mapping[str, Any] | None = None, grad: Any = None, of: str | None = None,
             seed: int = 0, dtype: str = "float64", *, max_elements: int = DEFAULT_MAX_ELEMENTS,
             max_steps: int = DEFAULT_MAX_STEPS, timeout: float | None = DEFAULT_TIMEOUT, hooks: Hooks | None = None,
             trace: Trace | None = None) -> Result:
    """Run `program` on `inputs`, backpropagate from its output, return values and gradients.

    `inputs` maps names to spec strings (`"ones(2,2)"`, `"@x.npy"`) or array-likes; `grad` is the
    gradient backward starts from (a spec string, `"ones"`, or an array-like). Without it, an
    output of more than one element is differentiated through the sum of its elements (the
    convention of TensorFlow's `GradientTape.gradient`; PyTorch would need
    `out.backward(torch.ones_like(out))`) and `Result.summed` says so. Every user error is a
    `GradcliError`.
    """
    settings = Settings(seed, dtype, max_elements, max_steps, timeout)
    calls: list[tuple[Tensor, dict, int]] = []
    with engine_settings(settings):
        prog = run_program(program, inputs, of, _watching_backward(hooks, calls), settings)
        out = prog.output
        prog.require_grad()
        leaves = {**prog.leaves, **prog.made}
        if calls:
            gradient = _own_gradient(calls, out, grad)
            summed = False
        else:
            summed = grad is None and out._data.size != 1
            if grad is None:
                gradient = np.ones(out.shape, dtype=out.dtype)
            else:
                gradient = read_spec(grad, out.dtype, "--grad", like=tuple(out.shape))
            run_backward((out,), (gradient,), trace=trace)
        grads = {name: (leaf.grad._data if leaf.grad is not None else None) for name, leaf in leaves.items()}
        return Result(out, prog.output_name, leaves, grads, gradient, seed, dtype, program,
                      prog.first_nonfinite, prog.env, summed, tuple(prog.made), tuple(line for *_, line in calls))


def _watching_backward(hooks: Hooks | None, calls: list) -> Hooks:
    """The caller's hooks, with each `.backward(...)` the program calls noted (and run) on the way."""
    hooks = hooks or Hooks()
    inner = hooks.on_backward

    def on_backward(tensor: Tensor, run: Any, call: dict, line: int) -> None:
        calls.append((tensor, call, line))
        if inner is not None:
            inner(tensor, run, call, line)
        else:
            run()
    return dataclasses.replace(hooks, on_backward=on_backward)


def _own_gradient(calls: list[tuple[Tensor, dict, int]], out: Tensor, grad: Any) -> np.ndarray | None:
    """The gradient the program's own backward started from, when it was one call on the output; a
    second backward by gradcli would fail (the graph is freed) or double every gradient."""
    if grad is not None:
        raise ArgumentError(f"--grad: the program calls backward itself (line {calls[0][2]}), so gradcli runs "
                            "no backward of its own", hint="pass the gradient in the program's call, "
                                                           "y.backward(gradient), or remove the call and use --grad")
    (tensor, call, _), *more = calls
    if more or tensor is not out:
        return None
    given = call.get("gradient")
    if given is None:
        return np.ones(out.shape, dtype=out.dtype)
    return np.asarray(given._data if isinstance(given, Tensor) else given, dtype=out.dtype)
