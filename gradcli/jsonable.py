"""Numbers as gradcli writes them in JSON and text: nan and inf spelled out, never bare floats JSON lacks.

NumPy only (no rich), so the runner and the checker can serialise results without loading the
terminal renderer.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine.tensor import Tensor
from gradcli.engine.tensor_str import nonfinite_text


def number(v: Any) -> str:
    """A cell: shortest faithful form up to 6 significant digits; nan/inf spelled out."""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    text = nonfinite_text(v) or f"{float(v):.6g}"
    return "0" if text == "-0" else text


def json_float(v: float) -> float | str:
    text = nonfinite_text(v)
    return float(v) if text is None else text


def json_value(value: Any) -> Any:
    """Nested lists of numbers, with nan/inf as strings so the output is strict JSON."""
    arr = np.asarray(value._data if isinstance(value, Tensor) else value)
    if arr.dtype.kind == "f":
        obj = arr.astype(object)
        flat = obj.reshape(-1)
        for i, v in enumerate(arr.reshape(-1)):
            flat[i] = json_float(v)
        return obj.tolist() if arr.ndim else flat[0]
    return arr.tolist()


def output_json(name: str, value: Any) -> dict:
    """The `"output"` entry every command's JSON starts with."""
    return {"name": name, "shape": list(value.shape), "dtype": str(value.dtype), "value": json_value(value)}


def block_json(block: Any) -> dict:
    """A gradient, Jacobian or Hessian block: its shape and nested values."""
    return {"shape": list(np.shape(block)), "value": json_value(block)}


def result_json(result: Any, wrt: list[str] | None = None) -> dict:
    """`gradcli eval --json` without the check: the output, each wanted input's gradient, the seed, and
    for an output of several elements the gradient backward started from (`summed`: eval chose ones)."""
    payload = {
        "output": output_json(result.output_name, result.output),
        "grads": {name: (None if g is None else block_json(g))
                  for name, g in result.grads.items() if not wrt or name in wrt},
        "seed": result.seed,
    }
    if result.output._data.size != 1 and result.gradient is not None:
        payload["gradient"] = {**block_json(result.gradient), "summed": result.summed}
    if result.made:
        payload["made_leaves"] = list(result.made)
    if result.own_backward:
        payload["own_backward"] = list(result.own_backward)
    return payload
