"""`torch.autograd.gradcheck` and `gradgradcheck`: autograd's Jacobian against central differences.

As PyTorch's: each output's Jacobian with respect to each input that requires grad, built row by
row from backward passes (so a program's `Function.backward` is what is tested), compared element
by element with `|analytical - numerical| <= atol + rtol * |numerical|`; the numerical one perturbs
each input element by ±eps in place and runs the function again.
`gradgradcheck` applies the same test to the function's gradient (built with `create_graph`).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from gradcli.engine.autograd import grad
from gradcli.engine.tensor import Tensor, _wrap
from gradcli.errors import ArgumentError, BackwardError


def _refuse_unbuilt(**checks: Any) -> None:
    """PyTorch's optional extra checks gradcli does not make: asked for, they are an error, never a silent pass."""
    for name, wanted in checks.items():
        if wanted:
            raise ArgumentError(f"gradcheck: {name}=True is not supported by gradcli",
                                hint=f"drop {name}; gradcli checks reverse-mode gradients against finite differences")


def gradcheck(func: Callable[..., Any], inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: bool | None = None) -> bool:
    """PyTorch's signature; each analytical Jacobian (one backward per output element) against central
    differences of the forward, within atol + rtol·|numerical|."""
    _refuse_unbuilt(check_batched_grad=check_batched_grad, check_batched_forward_grad=check_batched_forward_grad,
                    check_forward_ad=check_forward_ad, masked=masked)
    if not check_backward_ad:
        return True
    xs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    if not any(isinstance(x, Tensor) and x.requires_grad for x in xs):
        raise ArgumentError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                            "have requires_grad=True.", hint="create the inputs with requires_grad=True")
    outputs = _outputs(func(*xs))
    for j, out in enumerate(outputs):
        for i, x in enumerate(xs):
            if not (isinstance(x, Tensor) and x.requires_grad):
                continue
            analytical = _analytical(out, x)
            numerical = _numerical(func, xs, i, j, eps)
            if not np.all(np.abs(analytical - numerical) <= atol + rtol * np.abs(numerical)):
                if not raise_exception:
                    return False
                raise BackwardError(f"Jacobian mismatch for output {j} with respect to input {i},\n"
                                    f"numerical:{_shown(numerical)}\nanalytical:{_shown(analytical)}\n",
                                    hint="the backward (or a VJP) disagrees with finite differences of the forward")
    return True


def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Any = None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False) -> bool:
    """PyTorch's signature; gradcheck of the first derivative (made with create_graph=True) against its
    finite differences."""
    _refuse_unbuilt(check_batched_grad=check_batched_grad, check_fwd_over_rev=check_fwd_over_rev, masked=masked)
    if not check_rev_over_rev:
        return True
    xs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    outputs = _outputs(func(*xs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(_wrap(rng.standard_normal(o.shape).astype(o.dtype)).requires_grad_(True)
                             for o in outputs)
    gos = (grad_outputs,) if isinstance(grad_outputs, Tensor) else tuple(grad_outputs)
    differentiable = [k for k, x in enumerate(xs) if isinstance(x, Tensor) and x.requires_grad]

    def first_derivative(*args: Any) -> tuple:
        ins, g = args[:len(xs)], args[len(xs):]
        outs = _outputs(func(*ins))
        found = grad(list(outs), [ins[k] for k in differentiable], list(g), create_graph=True, allow_unused=True)
        return tuple(f if f is not None else _wrap(np.zeros(ins[k].shape, ins[k].dtype))
                     for f, k in zip(found, differentiable))
    return gradcheck(first_derivative, (*xs, *gos), eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception)


def _outputs(value: Any) -> tuple[Tensor, ...]:
    outs = value if isinstance(value, (tuple, list)) else (value,)
    return tuple(o for o in outs if isinstance(o, Tensor) and o.dtype.kind in "fc")


def _analytical(out: Tensor, x: Tensor) -> np.ndarray:
    rows = np.zeros((out._data.size, x._data.size))
    if not out.requires_grad:
        return rows.T
    for k in range(out._data.size):
        seed = np.zeros(out.shape, out.dtype)
        seed.flat[k] = 1
        g, = grad([out], [x], [_wrap(seed)], retain_graph=True, allow_unused=True)
        if g is not None:
            rows[k] = np.asarray(g._data, dtype=np.float64).ravel()
    return rows.T


def _numerical(func: Callable[..., Any], xs: tuple, i: int, j: int, eps: float) -> np.ndarray:
    x = xs[i]
    flat = x._data.reshape(-1)
    columns = []
    for k in range(flat.size):
        kept = flat[k]
        flat[k] = kept + eps
        plus = np.array(_outputs(func(*xs))[j]._data, dtype=np.float64)
        flat[k] = kept - eps
        minus = np.array(_outputs(func(*xs))[j]._data, dtype=np.float64)
        flat[k] = kept
        columns.append(((plus - minus) / (2 * eps)).ravel())
    return np.array(columns)


def _shown(matrix: np.ndarray) -> str:
    return "tensor(" + np.array2string(matrix, precision=4, separator=", ") + ", dtype=torch.float64)"
