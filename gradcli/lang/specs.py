"""Input specs: `x=ones(2,2)`, `x=[0.5, -1.2]`, `x=@data.npy`, and the `--grad` spec.

A spec is an expression of the language itself (parsed, never evaluated as Python) run with no
variables, or `@path` to a .npy/.npz/.csv file. `.npy` files holding Python objects are refused:
loading them would unpickle, i.e. run code.
"""
from __future__ import annotations

import keyword
from pathlib import Path
from typing import Any

import numpy as np

from gradcli.engine.creation import Defaults, as_array
from gradcli.errors import GradcliError, InputSpecError, NameLookupError
from gradcli.engine.tensor import Limits, Tensor, _wrap, check_elements
from gradcli.lang.limits import check_file_size


def split_assignment(text: str) -> tuple[str, str]:
    """`NAME=SPEC` into its parts, with a clear error for a missing `=` or a bad name."""
    if "=" not in text:
        raise InputSpecError(f"input {text!r} has no '='", hint="write inputs as NAME=SPEC, e.g. x=ones(2,2)")
    name, spec = text.split("=", 1)
    name = name.strip()
    check_name(name)
    if not spec.strip():
        raise InputSpecError(f"input '{name}' has an empty spec", hint=f"e.g. {name}=ones(2,2) or {name}=[1.0, 2.0]")
    return name, spec.strip()


def check_name(name: str) -> None:
    """An input name must be an identifier a program can use (and not a dunder)."""
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("__"):
        raise InputSpecError(f"input name {name!r} is not a valid identifier",
                             hint="use letters, digits and _, not starting with a digit, e.g. x or w1")


def read_spec(spec: Any, dtype: Any, what: str, like: tuple[int, ...] | None = None) -> np.ndarray:
    """An array for a spec string, number, nested list, ndarray or Tensor, in `dtype`.

    `like` is the shape a bare `ones`/`zeros` takes (the --grad spec: `ones` means ones of the
    output's shape).
    """
    if isinstance(spec, Tensor):
        return spec._data.astype(dtype)
    if not isinstance(spec, str):
        return _as_float(as_array(spec), dtype, what)
    text = spec.strip()
    if text.startswith("@"):
        return _as_float(_load_file(text[1:], what), dtype, what)
    if like is not None and text in ("ones", "zeros"):
        check_elements(like, what)
        return np.full(like, 1.0 if text == "ones" else 0.0, dtype=dtype)
    value = _evaluate_expression(text, what)
    if isinstance(value, Tensor):
        return _as_float(value._data, dtype, what)
    if isinstance(value, (int, float, list, tuple)) and not isinstance(value, bool):
        return _as_float(as_array(value), dtype, what)
    raise InputSpecError(f"{what}: {text!r} is not a number, list or tensor", hint=SPEC_EXAMPLES)


SPEC_EXAMPLES = "a spec is a number, a list, a constructor or a .npy file: 2.5, [1, 2, 3], ones(2,2), randn(3), @data.npy"


def _evaluate_expression(text: str, what: str) -> Any:
    from gradcli.lang.interpreter import Interpreter
    from gradcli.lang.parser import parse_program
    try:
        tree = parse_program(text, filename=what)
        if len(tree.body) != 1 or type(tree.body[0]).__name__ != "Expr":
            raise InputSpecError(f"{what}: a spec is one expression, not statements",
                                 hint="e.g. ones(2,2) or [0.1, 1.0, 0.0001]")
        interpreter = Interpreter(text, max_steps=0)
        return interpreter.eval(tree.body[0].value)
    except InputSpecError:
        raise
    except GradcliError as exc:
        hint = exc.hint
        if hint is None or isinstance(exc, NameLookupError) and "(" not in text:
            hint = SPEC_EXAMPLES  # `x=abc` is no misspelt function to suggest ('abs'), but a spec to write
        error = InputSpecError(f"{what}: {exc.message}", hint=hint)
        error.at(exc.line, exc.column, exc.length, text)
        raise error from None


def _as_float(arr: np.ndarray, dtype: Any, what: str) -> np.ndarray:
    if arr.dtype.kind not in "biuf":
        raise InputSpecError(f"{what}: the data is {arr.dtype}, not numbers")
    check_elements(arr.shape, what)
    return np.array(arr, dtype=dtype, order="C")


def _load_file(ref: str, what: str) -> np.ndarray:
    path_text, key = ref, None
    if ".npz:" in ref:
        path_text, key = ref.split(".npz:", 1)
        path_text += ".npz"
    path = Path(path_text).expanduser()
    if not path.is_file():
        raise InputSpecError(f"{what}: file not found: {path_text}", hint="check the path (relative to the current "
                                                                         "directory); write @path/to/file.npy")
    suffix = path.suffix.lower()
    check_file_size(path, 16 * Limits.max_elements + 2 ** 20, "a data file")  # a CSV's text: 16 bytes a number
    try:
        if suffix == ".npy":
            return _load_npy(path, what)
        if suffix == ".npz":
            return _load_npz(path, key, what)
        if suffix == ".csv":
            return np.loadtxt(path, delimiter=",", dtype=np.float64, ndmin=1)
    except ValueError as exc:
        raise InputSpecError(f"{what}: cannot read {path_text}: {exc}",
                             hint="a .csv must hold numbers only, separated by commas") from None
    except OSError as exc:
        raise InputSpecError(f"{what}: cannot read {path_text}: {exc}") from None
    raise InputSpecError(f"{what}: unsupported file type {suffix or '(none)'}", hint="use .npy, .npz or .csv")


def _load_npy(path: Path, what: str) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except ValueError as exc:
        if "pickle" in str(exc).lower() or "object" in str(exc).lower():
            raise InputSpecError(f"{what}: {path} holds Python objects, which gradcli refuses to load "
                                 "(loading them would run code)", hint="save plain numeric arrays: "
                                 "np.save(path, arr.astype(float))") from None
        raise


def _load_npz(path: Path, key: str | None, what: str) -> np.ndarray:
    try:
        with np.load(path, allow_pickle=False) as archive:
            names = list(archive.files)
            if key is None:
                if len(names) != 1:
                    raise InputSpecError(f"{what}: {path} holds {len(names)} arrays; say which",
                                         hint=f"write @{path}:KEY with KEY one of {', '.join(names)}")
                key = names[0]
            if key not in names:
                raise InputSpecError(f"{what}: {path} has no array '{key}'",
                                     hint=f"the arrays are: {', '.join(names)}")
            return archive[key]
    except ValueError as exc:
        if "pickle" in str(exc).lower() or "object" in str(exc).lower():
            raise InputSpecError(f"{what}: {path} holds Python objects, which gradcli refuses to load "
                                 "(loading them would run code)") from None
        raise


def make_leaf(name: str, spec: Any) -> Tensor:
    """An input leaf: float data in the session's dtype, requiring grad."""
    arr = read_spec(spec, Defaults.dtype, f"input '{name}'")
    leaf = _wrap(arr)
    leaf.requires_grad_(True)
    return leaf
