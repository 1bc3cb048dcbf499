"""`torch.optim.LBFGS`: limited-memory BFGS over all parameters as one flat vector, with a closure
that recomputes the loss, and the optional strong-Wolfe line search.

The steps follow PyTorch's `torch/optim/lbfgs.py` one operation at a time: its 0-d tensors are
NumPy scalars of the parameters' dtype here (a Python float meeting one keeps that dtype in both),
its `p.add_(d, alpha=t)` is a fused multiply-add as its CPU kernel computes it, and the history,
the step `t` and the counters live in the state of the first parameter, as PyTorch keeps them.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from gradcli.engine.inplace import assign
from gradcli.optim.optimizers import Optimizer, _invalid, _options
from gradcli.engine.random import fma
from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError, ValueDomainError


def _cubic_interpolate(x1: Any, f1: Any, g1: Any, x2: Any, f2: Any, g2: Any, bounds: Any = None) -> Any:
    """The minimum of the cubic through two points with their slopes, kept inside `bounds`."""
    xmin_bound, xmax_bound = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func: Callable[[Any, np.ndarray], tuple[float, np.ndarray]], t: Any, d: np.ndarray, f: float,
                  g: np.ndarray, gtd: Any, c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
                  max_ls: int = 25) -> tuple[float, np.ndarray, Any, int]:
    """Bracket a step satisfying the strong Wolfe conditions, then zoom in on it (PyTorch's port of lswolfe.lua)."""
    d_norm = np.abs(d).max()
    f_new, g_new = obj_func(t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f, bracket_g, bracket_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], [gtd_prev,
                                                                                                       gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f, bracket_g, bracket_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], [gtd_prev,
                                                                                                       gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new, gtd_new
        f_new, g_new = obj_func(t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos], bracket_g[high_pos] = t, f_new, g_new
            bracket_gtd[high_pos] = gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos], bracket_g[low_pos] = t, f_new, g_new
            bracket_gtd[low_pos] = gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


class LBFGS(Optimizer):
    def __init__(self, params: Any, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-07, tolerance_change: float = 1e-09, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        options = _options("LBFGS", lr=lr, tolerance_grad=tolerance_grad, tolerance_change=tolerance_change)
        counts = {name: int(_options("LBFGS", **{name: value})[name]) for name, value in
                  (("max_iter", max_iter), ("history_size", history_size))}
        _invalid(not options["lr"] >= 0, f"Invalid learning rate: {lr}", "the learning rate must be >= 0, e.g. lr=1")
        evals = counts["max_iter"] * 5 // 4 if max_eval is None else int(_options("LBFGS", max_eval=max_eval)[
            "max_eval"])
        super().__init__(params, {"lr": options["lr"], "max_iter": counts["max_iter"], "max_eval": evals,
                                  "tolerance_grad": options["tolerance_grad"],
                                  "tolerance_change": options["tolerance_change"],
                                  "history_size": counts["history_size"], "line_search_fn": line_search_fn})
        if len(self.param_groups) != 1:
            raise ValueDomainError("LBFGS doesn't support per-parameter options (parameter groups)",
                                   hint="pass one list of parameters: optim.LBFGS(model.parameters())")

    def add_param_group(self, param_group: Any) -> None:
        if self.param_groups:
            raise ValueDomainError("LBFGS doesn't support per-parameter options (parameter groups)",
                                   hint="LBFGS optimizes one group of parameters")
        super().add_param_group(param_group)

    # -- the parameters as one flat vector ------------------------------------------------------
    def _flat_grad(self) -> np.ndarray:
        return np.concatenate([np.zeros(p.numel(), p.dtype) if p.grad is None else p.grad._data.reshape(-1)
                               for p in self.params])

    def _add_grad(self, step_size: Any, update: np.ndarray) -> None:
        offset = 0
        for p in self.params:
            n = p.numel()
            piece = update[offset:offset + n].reshape(p.shape)
            assign(p, fma(piece, np.asarray(step_size, p.dtype), p._data))
            offset += n

    def _evaluate(self, closure: Callable[[], Any]) -> tuple[float, Any]:
        """The closure's loss as a number (and as it returned it), computed with gradients on."""
        from gradcli.engine.modes import enable_grad
        with enable_grad():
            loss = closure()
        if isinstance(loss, Tensor):
            if loss.numel() != 1:
                raise ValueDomainError("only one element tensors can be converted to Python scalars",
                                       hint="the closure returns the loss, one number (e.g. a .mean() or .sum())")
            return float(loss.item()), loss
        if isinstance(loss, (int, float, np.integer, np.floating)) and not isinstance(loss, bool):
            return float(loss), loss
        raise ArgumentError(f"float() argument must be a string or a real number, not '{type(loss).__name__}'",
                            hint="the closure must end with `return loss` (after loss.backward())")

    def step(self, closure: Any = None) -> Any:
        """Up to max_iter L-BFGS iterations, each calling the closure for the loss and gradients."""
        if closure is None:
            raise ArgumentError("LBFGS requires a closure",
                                hint="def closure(): optimizer.zero_grad(); loss = ...; loss.backward(); return loss")
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        state = self.state[self.params[0]]  # PyTorch keeps L-BFGS state in the first parameter's slot
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        loss, orig_loss = self._evaluate(closure)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag, prev_flat_grad, prev_loss = state.get("H_diag"), state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)
                al = state.setdefault("al", [None] * history_size)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q = fma(old_dirs[i], -al[i], q)
                d = r = q * h_diag
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    d = r = fma(old_stps[i], al[i] - be_i, r)
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break
            ls_func_evals = 0
            if group["line_search_fn"] is not None:
                if group["line_search_fn"] != "strong_wolfe":  # refused where PyTorch refuses it: at its first use
                    raise ArgumentError("only 'strong_wolfe' is supported",
                                        hint="line_search_fn='strong_wolfe', or None for fixed steps of lr")
                x_init = [p._data.copy() for p in self.params]

                def obj_func(step: Any, direction: np.ndarray) -> tuple[float, np.ndarray]:
                    self._add_grad(step, direction)
                    value = self._evaluate(closure)[0]
                    grad = self._flat_grad()
                    for p, data in zip(self.params, x_init):
                        assign(p, data)
                    return value, grad

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(obj_func, t, d, loss, flat_grad, gtd)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    loss = self._evaluate(closure)[0]
                    flat_grad = self._flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss
