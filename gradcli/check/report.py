"""What a check found, per input: plain data that the CLI renders and `--json` serialises.

Comparison lives here too, so that the SymPy witness and the finite-difference witness judge
their numbers by one rule (`|got - expected| <= atol + rtol·|expected|`, as `numpy.isclose`).
"""
from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcli.jsonable import json_float

PASS, FAIL, UNDEFINED = "pass", "fail", "undefined"
NOT_FINITE = "the derivative has no finite value here"
"""The reason for an element whose expected value is not finite (a pole, or SymPy's float64 overflowing)."""

_SYMBOLIC_TOLERANCE = {np.dtype(np.float32): (1e-4, 1e-5)}
_FLOAT64_TOLERANCE = (1e-7, 1e-9)
NUMERIC_TOLERANCE = (1e-3, 1e-5)
_SHOWN_UNDEFINED = 8
_PLACES: list[Callable[[int], str]] = []


def place(line: int) -> str:
    """A program line as the check's notes name it: `line 12`, or as the script being checked places it (a
    notebook's `cell 3, line 2`, the words its errors use), see `placed`."""
    return _PLACES[-1](line) if _PLACES else f"line {line}"


@contextlib.contextmanager
def placed(where: Callable[[int], str] | None) -> Iterator[None]:
    """Notes written inside name lines by `where` (None: `line N`)."""
    if where is None:
        yield
        return
    _PLACES.append(where)
    try:
        yield
    finally:
        _PLACES.pop()


class Scaled(float):
    """A default atol: relative to the gradient's own size, so it never covers a whole gradient.

    A fixed atol of 1e-5 passes every gradient below 1e-5, however wrong (`1e-6 * f(w)` with a
    backward 2x too big). `compare` multiplies it by the largest expected element (at most 1) of
    the input it judges; a user's `--atol` stays absolute. Elsewhere it is the plain number.
    """


def scaled_atol(atol: float, gradient: np.ndarray) -> float:
    """A `Scaled` atol times the largest element of `gradient` (at most 1); any other atol as it is.

    A gradient that is exactly zero has no size to be relative to (a bias before a batch norm, which
    SymPy proves 0 term by term, leaving no magnitude for the rounding allowance): the plain atol."""
    if not isinstance(atol, Scaled):
        return atol
    scale = float(np.max(np.abs(gradient[np.isfinite(gradient)]), initial=0.0))
    return float(atol) * min(1.0, scale) if scale > 0 else float(atol)


def tolerance(dtype: np.dtype, numeric: bool, rtol: float | None, atol: float | None) -> tuple[float, float]:
    """(rtol, atol): finite differences get gradcheck's; SymPy gets the leaf dtype's; overrides win.

    SymPy's default atol is `Scaled`: relative to each gradient's magnitude when compared. Finite differences
    keep a plain atol: their own noise comes from the size of the whole function, not of the block judged (a
    Hessian block that is exactly zero reads as 1e-7 of noise), so scaling it down would fail correct programs."""
    r, a = NUMERIC_TOLERANCE if numeric else _SYMBOLIC_TOLERANCE.get(np.dtype(dtype), _FLOAT64_TOLERANCE)
    if atol is not None:
        return (r if rtol is None else rtol), atol
    return (r if rtol is None else rtol), (a if numeric else Scaled(a))


@dataclass(frozen=True)
class Element:
    """One element worth naming: the worst mismatch, or a point where the derivative is undefined."""

    label: str
    index: tuple[int, ...]
    expected: float
    got: float
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        out = {"element": self.label, "index": list(self.index), "expected": _number(self.expected),
               "got": _number(self.got)}
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class InputCheck:
    """The verdict on one input's gradient, by one witness (`method`), optionally with the other."""

    name: str
    status: str
    method: str
    max_abs_err: float
    max_rel_err: float
    checked: int
    total: int
    rtol: float
    atol: float
    derivative: str = ""
    formulas: tuple[str, ...] = ()
    worst: Element | None = None
    undefined: tuple[Element, ...] = ()
    undefined_count: int = 0
    note: str = ""
    numeric: InputCheck | None = None
    margin: float = 0.0
    """The worst element's error as a fraction of what its tolerance allows (above 1: it failed)."""
    undefined_indices: tuple[tuple[tuple[int, ...], str], ...] = ()
    """Every undefined element's index with its reason (`undefined` shows the first few)."""
    through: InputCheck | None = None
    """For a sampled input: one random direction through all its elements (`numeric.directional_check`),
    so that a wrong element the sample missed still moves a witness."""

    @property
    def verified(self) -> int:
        """Elements a witness judged: checked ones where the derivative is defined."""
        return self.checked - self.undefined_count

    @property
    def sampled(self) -> bool:
        """Whether some elements went unjudged; a direction (`method` "directional") runs through them all."""
        return self.checked < self.total and self.method != "directional"

    @property
    def coverage(self) -> str:
        """`checked 64 of 20,000 elements` when sampled, else `all 4 elements`."""
        unit = "element" if self.total == 1 else "elements"
        if self.method == "directional":
            plural = "s" if self.checked != 1 else ""
            return f"{self.checked} random direction{plural} through all {self.total:,} {unit}"
        if self.sampled:
            direction = " + 1 direction through all" if self.through is not None else ""
            return f"checked {self.checked:,} of {self.total:,} {unit}{direction}"
        return f"all {self.total:,} {unit}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": self.status, "max_abs_err": _number(self.max_abs_err), "max_rel_err": _number(self.max_rel_err),
            "checked": self.checked, "total": self.total, "derivative": self.derivative, "method": self.method,
            "rtol": self.rtol, "atol": self.atol}
        if self.worst is not None:
            out["worst"] = self.worst.to_json()
        if self.undefined_count:
            out["undefined"] = [e.to_json() for e in self.undefined]
            out["undefined_count"] = self.undefined_count
        if self.note:
            out["note"] = self.note
        if self.numeric is not None:
            out["numeric"] = self.numeric.to_json()
        if self.through is not None:
            out["direction"] = self.through.to_json()
        return out


@dataclass(frozen=True)
class CheckReport:
    """All inputs' verdicts; `status` is "fail" when any input fails (an undefined point is no failure),
    "undefined" when nothing could be verified, as `overall` decides."""

    status: str
    mode: str
    of: str
    inputs: dict[str, InputCheck]
    why: str = ""
    """For a call no witness covers (no inputs): why not, said in the headline and the warning."""

    @property
    def witness(self) -> str:
        """Which witnesses judged, and how much when sampled: `symbolic`, or `numeric: 64 of 250,000 elements
        + 1 direction through all`. The mode's own name where its witnesses are the ones that judged
        (never "symbolic" for a check finite differences answered); "not checked" when nothing was."""
        if not self.inputs:
            return "not checked"
        used = set()
        for c in self.inputs.values():
            used.add("symbolic" if c.method == "symbolic" else "numeric")
            used.update("numeric" for extra in (c.numeric, c.through) if extra is not None)
        promised = {"symbolic": {"symbolic"}, "numeric": {"numeric"}, "all": {"symbolic", "numeric"},
                    "jacobian": {"symbolic"}, "hessian": {"symbolic"}}.get(self.mode)
        text = self.mode if used == promised else " + ".join(sorted(used, reverse=True))
        if self.mode in ("jacobian", "hessian") and used != promised:
            text = f"{self.mode}, {text}"
        sampled = [c for c in self.inputs.values() if c.sampled]
        if not sampled:
            return text
        checked = sum(c.checked for c in self.inputs.values() if c.method != "directional")
        total = sum(c.total for c in self.inputs.values() if c.method != "directional")
        through = " + 1 direction through all" if all(c.through is not None for c in sampled) else ""
        return f"{text}: {checked:,} of {total:,} elements{through}"

    @property
    def headline(self) -> str:
        """What was verified, in a phrase: never "agree" about elements no witness judged."""
        checked = sum(c.checked for c in self.inputs.values())
        undefined = sum(c.undefined_count for c in self.inputs.values())
        if self.status == FAIL:
            return "MISMATCH"
        if not self.inputs:
            return f"{self.why}: nothing verified" if self.why else "nothing verified"
        if self.status == UNDEFINED:
            reasons = {e.reason.split(":")[0].split(",")[0] for c in self.inputs.values() for e in c.undefined}
            why = f" ({reasons.pop()})" if len(reasons) == 1 else ""
            return f"all {checked:,} element{'s' if checked != 1 else ''} undefined{why}: nothing verified"
        if undefined:
            return f"{checked - undefined:,} of {checked:,} elements agree, {undefined:,} undefined"
        if any(c.sampled and c.through is None for c in self.inputs.values()):
            return f"the {checked:,} sampled elements agree"
        return "all gradients agree"

    def to_json(self) -> dict[str, Any]:
        out = {"status": self.status, "mode": self.mode, "witness": self.witness, "of": self.of,
               "inputs": {name: c.to_json() for name, c in self.inputs.items()}}
        if self.why:
            out["why"] = self.why
        return out


def overall(inputs: dict[str, InputCheck]) -> str:
    """"fail" when any input fails; "undefined" when no element of any input could be verified."""
    if any(c.status == FAIL for c in inputs.values()):
        return FAIL
    if inputs and all(c.verified == 0 for c in inputs.values()):
        return UNDEFINED
    return PASS


def with_numeric(symbolic: InputCheck, numeric: InputCheck) -> InputCheck:
    """`--check all`: the SymPy verdict with the finite-difference one beside it; either can fail it."""
    statuses = {symbolic.status, numeric.status}
    status = FAIL if FAIL in statuses else (UNDEFINED if UNDEFINED in statuses else PASS)
    return dataclasses.replace(symbolic, status=status, numeric=numeric)


def with_direction(check: InputCheck, direction: InputCheck | None) -> InputCheck:
    """A sampled input's verdict with its direction through all elements beside it; a failing direction fails it."""
    if direction is None:
        return check
    status = FAIL if direction.status == FAIL else check.status
    return dataclasses.replace(check, status=status, through=direction)


def compare(name: str, method: str, elements: list[tuple[str, tuple[int, ...]]], expected: np.ndarray,
            got: np.ndarray, reasons: dict[int, str], total: int, tol: tuple[float, float],
            rounding: np.ndarray | float = 0.0, **details: Any) -> InputCheck:
    """Judge `got` against `expected` element by element; `elements` names each by (label, index).

    `reasons` names the elements (by position) where the derivative is not defined; there, and
    wherever the expected value is not finite, gradcli's number is shown but not judged.
    `rounding` is each element's allowance for the rounding of gradcli's own arithmetic (see
    `tolerance.rounding`), added to `atol + rtol·|expected|`. A `Scaled` atol is relative to the
    gradient's size (`scaled_atol`).
    """
    rtol, atol = tol
    expected = np.asarray(expected, dtype=np.float64)
    got = np.asarray(got, dtype=np.float64)
    reasons = dict(reasons)
    for k in np.flatnonzero(~np.isfinite(expected)):
        reasons.setdefault(int(k), NOT_FINITE)
    undefined = np.zeros(expected.shape, dtype=bool)
    undefined[list(reasons)] = True
    defined = ~undefined
    atol = scaled_atol(atol, expected[defined])
    with np.errstate(invalid="ignore", divide="ignore"):
        err = np.abs(got - expected)
        allowed = atol + rtol * np.abs(expected) + rounding
        bad = defined & ~(err <= allowed)
        ratio = np.where(err == 0, 0.0, np.where(np.isnan(err), np.inf, err / allowed))
        rel = np.where(expected != 0, err / np.abs(expected), 0.0)
    max_abs = float(np.max(err[defined], initial=0.0))
    max_rel = float(np.max(rel[defined], initial=0.0))
    worst = None
    margin = 0.0
    if defined.any():
        k = int(np.flatnonzero(defined)[np.argmax(ratio[defined])])
        worst = Element(*elements[k], float(expected[k]), float(got[k]))
        margin = float(ratio[k])
    status = FAIL if bad.any() else (UNDEFINED if undefined.any() else PASS)
    shown = tuple(Element(*elements[k], float(expected[k]), float(got[k]), reasons[k])
                  for k in sorted(reasons)[:_SHOWN_UNDEFINED])
    return InputCheck(name, status, method, max_abs, max_rel, len(elements), total, rtol, atol, worst=worst,
                      undefined=shown, undefined_count=len(reasons), margin=margin,
                      undefined_indices=tuple((elements[k][1], reasons[k]) for k in sorted(reasons)), **details)


def _number(v: float | None) -> float | str | None:
    """JSON has no NaN or infinity: say them as strings, as every gradcli JSON does."""
    return None if v is None else json_float(v)
