"""Connectionist temporal classification (`F.ctc_loss`, `nn.CTCLoss`), composed of differentiable ops.

The loss is −log of the summed probability of every alignment of the target to the input frames: the
forward (alpha) recursion of Graves et al. over the target with a blank before, between and after its
labels, each step a logsumexp of the three predecessors plus the frame's log-probability. All samples
step together over a padded extended target; a sample past its own input length keeps its alphas.
Unreachable states hold a finite stand-in for log 0 (−1e30, whose exp is exactly 0 in float32 and
float64) so no logsumexp sees only −inf; a target no alignment fits is decided in advance (its loss is
inf, with PyTorch's nan gradient over its frames, or 0 with `zero_infinity`), so the stand-in never
reaches a printed number. Built from gather,
logsumexp and where, `--check` proves it with no new primitive; the per-sample losses carry PyTorch's
node name `CtcLossBackward0`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine import ops as O
from gradcli.engine.tensor import Tensor, _wrap, apply
from gradcli.errors import ArgumentError, ShapeError
from gradcli.nn import functional as NF

_LOG_ZERO = -1e30


def _lengths(value: Any, count: int, name: str) -> np.ndarray:
    if not isinstance(value, (Tensor, list, tuple)):
        raise ArgumentError(f"ctc_loss: {name} must be a tensor or a sequence of ints, got {type(value).__name__}",
                            hint=f"e.g. torch.tensor([6]) or [6], one per sample")
    data = value._data if isinstance(value, Tensor) else np.asarray(value)
    if data.dtype.kind not in "iu" and not (data.dtype.kind == "O" or data.size == 0):
        raise ArgumentError(f"ctc_loss: {name} must be integers, got {data.dtype}",
                            hint=f"e.g. {name}=torch.tensor([5, 5]) or a list of ints")
    data = data.astype(np.int64).reshape(-1)
    if data.shape != (count,):
        raise ShapeError(f"ctc_loss: expected {name} to have {count} entries (one per sample), got {data.size}",
                         hint=f"one {name[:-1]} per batch element")
    return data


def _labels(targets: Tensor, lengths: np.ndarray) -> list[np.ndarray]:
    """Each sample's target labels, from padded (N, S) targets or their 1-D concatenation."""
    data = targets._data.astype(np.int64)
    if data.ndim == 1:
        if int(lengths.sum()) > data.size:
            raise ShapeError(f"Expected tensor to have size at least {int(lengths.sum())} at dimension 1, but got "
                             f"size {data.size} for argument #2 'targets'",
                             hint="concatenated targets hold sum(target_lengths) labels")
        ends = np.cumsum(lengths)
        return [data[e - n:e] for e, n in zip(ends, lengths)]
    if data.ndim != 2 or data.shape[0] != lengths.size or (lengths.size and lengths.max() > data.shape[1]):
        raise ShapeError(f"ctc_loss: targets of size {list(data.shape)} do not hold target_lengths "
                         f"{lengths.tolist()}", hint="targets are (N, S) padded, with S ≥ max(target_lengths)")
    return [data[i, :n] for i, n in enumerate(lengths)]


def ctc_loss(log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    fn = "ctc_loss"
    lp, tg = NF._tensor(log_probs, fn), NF._tensor(targets, fn)
    reduction = NF._reduction(reduction, fn)
    unbatched = lp.ndim == 2
    if unbatched:
        lp, tg = F.unsqueeze(lp, 1), (F.unsqueeze(tg, 0) if tg.ndim == 1 else tg)
    if lp.ndim != 3:
        raise ShapeError(f"ctc_loss: expected log_probs of size (T, N, C) or (T, C), got {list(lp.shape)}",
                         hint="log_probs = logits.log_softmax(2), time first")
    frames, batch, classes = lp.shape
    blank = int(F.number_arg(blank, fn, "blank", integer=True))
    if not 0 <= blank < classes:
        raise ArgumentError("blank must be in label range", hint=f"0 ≤ blank < {classes} (the classes)")
    if isinstance(input_lengths, Tensor) != isinstance(target_lengths, Tensor):
        raise ArgumentError("ctc_loss: input_lengths and target_lengths must be both tensors or both sequences of "
                            "ints", hint="e.g. torch.tensor([6, 5]) for both, or [6, 5] and [3, 2]")
    in_lens, tg_lens = _lengths(input_lengths, batch, "input_lengths"), _lengths(target_lengths, batch,
                                                                                 "target_lengths")
    if (in_lens > frames).any() or (in_lens < 0).any():
        raise ShapeError(f"Expected input_lengths to have value at most {frames}, but got value "
                         f"{int(in_lens.max())}", hint="input_lengths count frames of log_probs' first dimension")
    labels = _labels(tg, tg_lens)
    if any(((lab < 0) | (lab >= classes) | (lab == blank)).any() for lab in labels):
        raise ArgumentError("ctc_loss: a target label is out of range or is the blank",
                            hint=f"labels are in 0..{classes - 1}, never the blank ({blank})")
    width = 2 * int(tg_lens.max(initial=0)) + 1
    ext = np.full((batch, width), blank, np.int64)
    skip = np.zeros((batch, width), bool)
    for i, lab in enumerate(labels):
        ext[i, 1:2 * lab.size:2] = lab
        skip[i, 3:2 * lab.size:2] = lab[1:] != lab[:-1]
    needed = tg_lens + np.array([int((lab[1:] == lab[:-1]).sum()) for lab in labels], np.int64)
    feasible = in_lens >= needed
    emit = F.gather(lp, 2, _wrap(np.broadcast_to(ext, (frames, batch, width)).copy()))
    floor = _wrap(np.full((batch, width), _LOG_ZERO, lp.dtype))
    start = np.zeros((batch, width), bool)
    start[:, :2] = True
    alpha = F.where(_wrap(start), emit[0], floor)
    for t in range(1, frames):
        one = F.cat([floor[:, :1], alpha[:, :-1]], 1)
        two = F.where(_wrap(skip), F.cat([floor[:, :2], alpha[:, :-2]], 1), floor)
        stepped = F.logsumexp(F.stack([alpha, one, two]), 0) + emit[t]
        alpha = F.where(_wrap((t < in_lens)[:, None]), stepped, alpha)
    rows = np.arange(batch)
    last = alpha[_wrap(rows), _wrap(2 * tg_lens)]
    before = F.where(_wrap(tg_lens > 0), alpha[_wrap(rows), _wrap(np.maximum(2 * tg_lens - 1, 0))], floor[:, 0])
    total = F.logsumexp(F.stack([last, before]), 0)
    if not feasible.all() and zero_infinity:
        total = F.where(_wrap(feasible), total, _wrap(np.zeros((), lp.dtype)))
    elif not feasible.all():
        total = F.where(_wrap(feasible), total, _wrap(np.array(-np.inf, lp.dtype))) - _nan_gradient(lp, feasible, in_lens)
    loss = apply(O.NEG, total, name="CtcLossBackward0")
    if reduction == "mean":
        return F.mean(loss / _wrap(np.maximum(tg_lens, 1).astype(lp.dtype)))
    if reduction == "sum":
        return F.sum(loss)
    return F.squeeze(loss, 0) if unbatched else loss



def _nan_gradient(lp: Tensor, feasible: np.ndarray, in_lens: np.ndarray) -> Tensor:
    """Zeros, one per sample, whose gradient is PyTorch's for an infinite loss: nan over every class of the
    impossible samples' frames (√ of an exact 0 has an infinite slope, times the 0 that made it), 0 elsewhere."""
    frames = np.arange(lp.shape[0])[:, None] < np.where(feasible, 0, in_lens)[None, :]
    zeros = F.where(_wrap(frames[:, :, None]), lp * 0, _wrap(np.zeros((), lp.dtype)))
    return F.sqrt(F.sum(zeros, (0, 2)))
