"""Pictures of a sweep: the terminal plot (plotext), a two-input heat map in characters, and the
matplotlib figure `--out` writes. Pure: each returns text, a renderable or a figure; nothing is
computed here but where marks go (shades, arrows, where to cut the y axis).

plotext is imported only here, and only when a plot is drawn, so no other command pays for it;
matplotlib only for `--out`. Without colour, the curves differ by their marker characters.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from rich.console import Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from gradcli.jsonable import number
from gradcli.check.sweep import Sweep
from gradcli.source import operand

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MARKERS = (("hd", "▚"), ("braille", "⢕"), ("•", "•"))
"""plotext's markers for the value, the derivative and the second derivative, and how each looks:
told apart without colour, and named in a legend under the plot, where it hides no curve."""
SHADES = " .:-=+*#%@"
ARROWS = "→↗↑↖←↙↓↘"
_SHOWN = 4


def labels(sw: Sweep) -> list[str]:
    """Legend entries: the output, its derivative (SymPy's formula with --check), the second derivative."""
    of, name = operand(sw.output_name), sw.names[0]
    out = [sw.output_name, sw.formulas.get(name) or f"∂{of}/∂{name}"]
    if sw.second is not None:
        out.append(f"∂²{of}/∂{name}²")
    return out


def _curves(sw: Sweep) -> list[np.ndarray]:
    return [sw.value, sw.derivative[sw.names[0]]] + ([sw.second] if sw.second is not None else [])


def y_limits(sw: Sweep) -> tuple[float, float] | None:
    """Where to cut the y axis when a few samples near a pole would flatten every curve (1/x near 0).

    None (no cut) unless the finite values span over four times what their middle 96% spans.
    """
    values = np.concatenate([c[np.isfinite(c)] for c in _curves(sw)])
    if values.size == 0:
        return None
    low, high = np.percentile(values, [2, 98])
    spread = (high - low) or 1.0
    if values.max() - values.min() <= 4 * spread:
        return None
    return float(low - spread / 4), float(high + spread / 4)


def line_plot(sw: Sweep, width: int, height: int, colour: bool) -> str:
    """The output and its derivative(s) over one input: `width` × `height` cells, then a legend line."""
    import plotext as plt
    plt.terminal.limit(False, False)
    fig = plt.figure
    fig.clear()
    fig.plot_size(width, height)
    fig.theme("default" if colour else "clear")
    xs = sw.grid[0]
    legend = []
    limits = y_limits(sw)
    for label, ys, (marker, shown) in zip(labels(sw), _curves(sw), MARKERS):
        ys = _clipped(ys, limits)
        keep = np.isfinite(ys)
        legend.append(f"{shown} {label}")
        if not keep.any():
            continue
        signal = fig.signal(xs[keep].tolist(), ys[keep].tolist(), marker=marker)
        signal.lines()
        for k in np.flatnonzero(np.diff(np.flatnonzero(keep)) > 1) + 1:
            signal.line(int(k), False)
        fig.draw(signal)
    points = [u.index for u in sw.undefined if np.isfinite(sw.value[u.index])]
    if points:
        fig.draw(fig.signal(xs[points].tolist(), _clipped(sw.value[points], limits).tolist(), marker="x"))
        legend.append("x undefined derivative")
    if limits is not None:
        fig.ruler(axis="y").lim(*limits)
        legend.append(f"(y cut to {number(limits[0])}…{number(limits[1])})")
    return fig.build().string(colorless=not colour) + "\n" + "    ".join(legend)


def _clipped(ys: np.ndarray, limits: tuple[float, float] | None) -> np.ndarray:
    """Values past the cut brought to one span beyond it: plotext rasterizes a line all the way to a point 1e30 rows
    away (and aborts the process trying)."""
    if limits is None:
        return ys
    span = limits[1] - limits[0]
    return np.clip(ys, limits[0] - span, limits[1] + span)


def heat_map(sw: Sweep, width: int) -> Text:
    """The output over two inputs in shades, with arrows along the gradient at a coarse grid of points.

    One character per sample (two when the console is wide enough); y grows upwards.
    """
    xs, ys = sw.grid
    value = sw.value
    dx, dy = (sw.derivative[n] for n in sw.names)
    finite = value[np.isfinite(value)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
    scale = (high - low) or 1.0
    ticks = [number(ys[-1]), number(ys[0])]
    margin = max(len(t) for t in ticks) + 1
    cell = 2 if margin + 2 * len(xs) <= width else 1
    every = max(1, len(xs) // 6)
    undefined = {u.index for u in sw.undefined}
    lines = []
    for row in range(len(ys) - 1, -1, -1):
        chars = []
        for col in range(len(xs)):
            v = value[row, col]
            if not np.isfinite(v):
                ch = "?"
            elif row * len(xs) + col in undefined:
                ch = "×"
            elif row % every == every // 2 and col % every == every // 2:
                ch = _arrow(dx[row, col], dy[row, col])
            else:
                ch = SHADES[min(len(SHADES) - 1, int((v - low) / scale * len(SHADES)))]
            chars.append(ch * cell if ch in SHADES else ch + " " * (cell - 1))
        tick = {len(ys) - 1: ticks[0], 0: ticks[1]}.get(row, "")
        lines.append(f"{tick:>{margin - 1}}│{''.join(chars)}")
    span = cell * len(xs)
    left, right = number(xs[0]), number(xs[-1])
    lines.append(" " * (margin - 1) + "└" + "─" * span)
    lines.append(" " * margin + left + right.rjust(max(1, span - len(left))))
    lines.append(" " * margin + f"{sw.names[0]} →, {sw.names[1]} ↑".center(span).rstrip())
    lines.append(f"{sw.output_name}: '{SHADES}' from {number(low)} to {number(high)}; arrows point along the "
                 f"gradient ({_grad_name(sw)})")
    return Text("\n".join(lines))


def _grad_name(sw: Sweep) -> str:
    return ", ".join(sw.formulas.get(n) or f"∂{operand(sw.output_name)}/∂{n}" for n in sw.names)


def _arrow(gx: float, gy: float) -> str:
    if not (np.isfinite(gx) and np.isfinite(gy)):
        return "?"
    if gx == 0 and gy == 0:
        return "·"
    return ARROWS[int(np.round(np.arctan2(gy, gx) / (np.pi / 4))) % 8]


def gradient_table(sw: Sweep) -> Table:
    """The gradient at the corners and the centre of a two-input sweep, in numbers."""
    xs, ys = sw.grid
    table = Table(title=f"{escape(sw.output_name)} and its gradient at five points", title_justify="left")
    for heading in (*sw.names, sw.output_name, *(f"∂{operand(sw.output_name)}/∂{n}" for n in sw.names)):
        table.add_column(escape(heading), justify="right")
    picks = [(0, 0), (0, len(xs) - 1), (len(ys) // 2, len(xs) // 2), (len(ys) - 1, 0), (len(ys) - 1, len(xs) - 1)]
    for row, col in dict.fromkeys(picks):
        table.add_row(number(xs[col]), number(ys[row]), number(sw.value[row, col]),
                      *(number(sw.derivative[n][row, col]) for n in sw.names))
    return table


def undefined_view(sw: Sweep) -> Group:
    """Where the derivative is undefined, grouped by reason; autograd's number there is PyTorch's convention."""
    coords = sw.coordinates()
    by_reason: dict[str, list[int]] = {}
    for u in sw.undefined:
        by_reason.setdefault(u.reason, []).append(u.index)
    count = len(sw.undefined)
    lines = [Text(f"undefined derivative at {count} point{'s' if count != 1 else ''} (gradcli shows PyTorch's "
                  "value there):", style="bold")]
    for reason, indices in by_reason.items():
        if len(indices) > _SHOWN:
            where = f"{len(indices)} points from {_point(sw, coords, indices[0])} to {_point(sw, coords, indices[-1])}"
        else:
            where = ", ".join(_point(sw, coords, k) for k in indices)
        lines.append(Text(f"  {where}: {reason}"))
    return Group(*lines)


def _point(sw: Sweep, coords: tuple[np.ndarray, ...], k: int) -> str:
    parts = [f"{name}={number(c[k])}" for name, c in zip(sw.names, coords)]
    return parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ")"


def figure(sw: Sweep) -> Figure:
    """The same picture for a file: curves (one input), or filled contours with a quiver (two)."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.add_subplot()
    if len(sw.names) == 1:
        xs = sw.grid[0]
        for label, ys in zip(labels(sw), _curves(sw)):
            ax.plot(xs, np.where(np.isfinite(ys), ys, np.nan), label=label)
        points = [u.index for u in sw.undefined if np.isfinite(sw.value[u.index])]
        if points:
            ax.plot(xs[points], sw.value[points], "x", color="red", label="undefined derivative")
        ax.axhline(0, color="grey", linewidth=0.5)
        limits = y_limits(sw)
        if limits is not None:
            ax.set_ylim(*limits)
        ax.set_xlabel(sw.names[0])
        ax.legend()
    else:
        xs, ys = sw.grid
        filled = ax.contourf(xs, ys, np.ma.masked_invalid(sw.value), levels=20)
        fig.colorbar(filled, ax=ax, label=sw.output_name)
        step = max(1, len(xs) // 10)
        gx, gy = np.meshgrid(xs[::step], ys[::step])
        ax.quiver(gx, gy, *(sw.derivative[n][::step, ::step] for n in sw.names), color="white")
        ax.set_xlabel(sw.names[0])
        ax.set_ylabel(sw.names[1])
        ax.set_title(f"{sw.output_name} and its gradient ({_grad_name(sw)})")
    return fig
