"""Figures a program drew with matplotlib's facade: in the terminal (plotext, as `gradcli plot`
draws) and as image files (real matplotlib, when installed).

Pure: a figure's data in, text or a matplotlib figure out. plotext is imported only when a figure
is drawn, matplotlib only when one is written. Each panel is drawn full width, one under the
other, so a 2 × 2 grid stays readable at 80 columns; without colour the series differ by their
markers, named in a legend line under the panel, where it hides no data.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gradcli.jsonable import number
from gradcli.views.plot import SHADES

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MatplotlibFigure

MARKERS = (("braille", "⢕"), ("hd", "▚"), ("•", "•"), ("x", "x"), ("+", "+"), ("o", "o"))
"""plotext's markers for the series of a panel, in turn, and how each looks in the legend line."""
FILE_TYPES = (".png", ".svg", ".pdf")
PANEL_HEIGHT = (10, 20)
"""Rows of one panel: a third of the width, within these bounds."""


def figure_text(figure: Any, width: int, colour: bool) -> str:
    """Every panel of `figure`, with the figure's title above them."""
    parts = [figure.title] if figure.title else []
    height = min(max(width // 3, PANEL_HEIGHT[0]), PANEL_HEIGHT[1])
    for axes in sorted(figure.axes, key=lambda a: a.position):
        if len(figure.axes) > 1 and not axes.title:
            parts.append(f"panel {axes.position[0] + 1},{axes.position[1] + 1}")
        parts.append(_panel(axes, width, height, colour))
    return "\n".join(parts)


def _panel(axes: Any, width: int, height: int, colour: bool) -> str:
    images = [s for s in axes.series if s.kind == "image"]
    if images:
        return "\n".join(([axes.title] if axes.title else []) + [image_text(images[-1].y, width)])
    import plotext as plt
    plt.terminal.limit(False, False)
    fig = plt.figure
    fig.clear()
    fig.plot_size(width, height)
    fig.theme("default" if colour else "clear")
    legend = []
    span = _x_span(axes.series)
    for k, series in enumerate(axes.series):
        marker, shown = MARKERS[k % len(MARKERS)]
        signal = _signal(fig, series, marker, span)
        if signal is None:
            continue
        fig.draw(signal)
        if series.label and not series.label.startswith("_"):
            legend.append(f"{shown} {series.label}")
    if axes.title:
        fig.title(axes.title)
    if axes.xlabel:
        fig.label(axes.xlabel, axis="x")
    if axes.ylabel:
        fig.label(axes.ylabel, axis="y")
    for axis, scale, limits in (("x", axes.xscale, axes.xlim), ("y", axes.yscale, axes.ylim)):
        if scale == "log":
            fig.ruler(axis=axis).scale("log")
        if limits is not None:
            fig.ruler(axis=axis).lim(*limits)
    text = fig.build().string(colorless=not colour)
    return text + ("\n" + "    ".join(legend) if legend else "")


def _x_span(series: list) -> tuple[float, float]:
    xs = [s.x for s in series if s.x is not None and s.kind not in ("vline",)]
    finite = np.concatenate([x.ravel()[np.isfinite(x.ravel())] for x in xs]) if xs else np.zeros(0)
    return (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)


def _signal(fig: Any, series: Any, marker: str, span: tuple[float, float]) -> Any:
    """The plotext signal of one series (None when nothing of it is finite)."""
    if series.kind == "hist":
        edges, counts = series.x, series.y
        return fig.bar(((edges[:-1] + edges[1:]) / 2).tolist(), counts.tolist(),
                       width=float(edges[1] - edges[0]) if len(edges) > 1 else 1.0)
    if series.kind == "bar":
        return fig.bar(series.x.tolist(), series.y.tolist())
    if series.kind == "hline":
        xs, ys = list(span), [float(series.y)] * 2
    elif series.kind == "vline":
        xs, ys = [float(series.x)] * 2, [0.0, 1.0]
    else:
        keep = np.isfinite(series.x) & np.isfinite(series.y)
        if not keep.any():
            return None
        xs, ys = series.x[keep].tolist(), series.y[keep].tolist()
    signal = fig.signal(xs, ys, marker=marker)
    if series.line:
        signal.lines()
    return signal


def image_text(data: np.ndarray, width: int) -> str:
    """An image in shades of characters, darkest to lightest (colour images by their luminance),
    shrunk to fit `width` by taking every n-th pixel, with its value range under it."""
    values = data @ np.array([0.299, 0.587, 0.114])[:data.shape[-1]] if data.ndim == 3 else data
    step = max(1, -(-values.shape[1] // max(1, width // 2)))
    values = values[::step, ::step]
    finite = values[np.isfinite(values)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
    scale = (high - low) or 1.0
    rows = []
    for row in values:
        rows.append("".join(2 * ("?" if not np.isfinite(v) else SHADES[min(len(SHADES) - 1,
                                                                          int((v - low) / scale * len(SHADES)))])
                            for v in row).rstrip())
    every = f", every {step}th pixel" if step > 1 else ""
    rows.append(f"image {data.shape[0]}×{data.shape[1]}{every}: '{SHADES}' from {number(low)} to {number(high)}")
    return "\n".join(rows)


def file_name(figure: Any, name: str | None, script: Path, taken: set[str]) -> str:
    """The file a figure is written to in `--plots DIR`: savefig's own name (never its folder), or
    the script's name and the figure's number; a second figure of one name gets a counter."""
    if name is not None:
        stem, suffix = Path(name).stem or "figure", Path(name).suffix.lower()
        suffix = suffix if suffix in FILE_TYPES else ".png"
    else:
        stem, suffix = f"{script.stem}-figure{figure.number}", ".png"
    candidate, k = f"{stem}{suffix}", 1
    while candidate in taken:
        k += 1
        candidate = f"{stem}-{k}{suffix}"
    taken.add(candidate)
    return candidate


def matplotlib_figure(figure: Any) -> MatplotlibFigure:
    """The same figure in real matplotlib (its object API: no pyplot state, no window)."""
    from matplotlib.figure import Figure
    out = Figure(figsize=(6.4 * max(1, figure.columns) ** 0.5, 4.8 * max(1, figure.rows) ** 0.5),
                 layout="constrained")
    for axes in figure.axes:
        ax = out.add_subplot(figure.rows, figure.columns, axes.position[0] * figure.columns + axes.position[1] + 1)
        for series in axes.series:
            _draw(ax, series)
        ax.set_title(axes.title)
        ax.set_xlabel(axes.xlabel)
        ax.set_ylabel(axes.ylabel)
        ax.set_xscale(axes.xscale)
        ax.set_yscale(axes.yscale)
        if axes.xlim is not None:
            ax.set_xlim(*axes.xlim)
        if axes.ylim is not None:
            ax.set_ylim(*axes.ylim)
        if axes.legend:
            ax.legend()
    if figure.title:
        out.suptitle(figure.title)
    return out


def _draw(ax: Any, series: Any) -> None:
    import matplotlib
    style = {"label": series.label, "color": series.colour if _is_colour(series.colour) else None}
    if series.kind == "line":
        ax.plot(series.x, series.y, linestyle="-" if series.line else "none", marker=series.marker, **style)
    elif series.kind == "scatter":
        ax.scatter(series.x, series.y, **style)
    elif series.kind == "hist":
        ax.stairs(series.y, series.x, fill=True, **style)
    elif series.kind == "bar":
        ax.bar(series.x, series.y, tick_label=series.options.get("ticks"), **style)
    elif series.kind == "hline":
        ax.axhline(float(series.y), **style)
    elif series.kind == "vline":
        ax.axvline(float(series.x), **style)
    else:
        cmap = series.options.get("cmap")
        ax.imshow(series.y, cmap=cmap if cmap in matplotlib.colormaps else None)


def _is_colour(name: str | None) -> bool:
    from matplotlib.colors import is_color_like
    return name is not None and is_color_like(name)
