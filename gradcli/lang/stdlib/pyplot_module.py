"""`matplotlib.pyplot` as a facade: a program's plots become figures gradcli draws, never files it writes.

Most tutorials plot their loss (`plt.plot(losses); plt.show()`), so refusing the import would
refuse the whole notebook. The facade records what each call draws (lines, points, histograms,
bars, images, labels) into plain data; `show()` and `savefig()` hand a copy of a figure to
whoever runs the program (`runtime.FIGURES`): `gradcli run` draws it in the terminal, and with
`--plots DIR` writes it as a PNG named after `savefig`'s file (its name only, never its folder).
Without a runner (`gradcli eval`), figures are recorded and dropped. Appearance options gradcli
has no use for (`linewidth=`, `figsize=`) are accepted and ignored: they change no number.

Values are read as matplotlib reads them: a tensor that requires grad is PyTorch's error
(`Can't call numpy() on Tensor that requires grad`), as `np.asarray(t)` is under matplotlib.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any, Iterator

import numpy as np

from gradcli.engine.tensor import Tensor
from gradcli.errors import ArgumentError
from gradcli.lang.limits import check_list
from gradcli.lang.namespace import Namespace
from gradcli.lang.stdlib import runtime
from gradcli.lang.stdlib.runtime import FIGURES, RESETS

MARKERS = frozenset("o.,x+*sd^v<>ph|_1234DH8P")
"""Marker characters of a format string (`'ro'`, `'x--'`): points are drawn at the data."""
COLOURS = {"b": "blue", "g": "green", "r": "red", "c": "cyan", "m": "magenta", "y": "yellow", "k": "black",
           "w": "white"}
LINE_STYLES = ("--", "-.", "-", ":")
_CHANGES = itertools.count(1)
MAX_FIGURES = 100
"""Open figures at once: a loop that opens one per step without closing them is stopped here."""


@dataclass
class Series:
    """One thing drawn on an axes: `kind` is line, scatter, hist, bar, image, hline or vline."""

    kind: str
    x: np.ndarray | None
    y: np.ndarray
    label: str | None = None
    colour: str | None = None
    line: bool = True
    marker: str | None = None
    options: dict = field(default_factory=dict)
    """What the picture needs beyond the data: `cmap` of an image, `bins` edges of a histogram."""


@dataclass
class AxesData:
    """One panel, at `position` (row, column) of its figure's grid."""

    position: tuple[int, int]
    series: list[Series] = field(default_factory=list)
    title: str = ""
    xlabel: str = ""
    ylabel: str = ""
    legend: bool = False
    xlim: tuple[float, float] | None = None
    ylim: tuple[float, float] | None = None
    xscale: str = "linear"
    yscale: str = "linear"


@dataclass
class FigureData:
    """A figure as drawn so far: its number (`plt.figure(1)`), its grid of panels and its title."""

    number: int
    rows: int = 1
    columns: int = 1
    axes: list[AxesData] = field(default_factory=list)
    title: str = ""
    version: int = 0
    """Its last change, numbered across all figures (numbers are reused after `show()`), so a figure
    `savefig` drew is not drawn again, unchanged, by `show()`."""
    line: int | None = None
    """The program line of the call that last changed it (a notebook's figure never shown is found there)."""


@dataclass
class Shown:
    """What `show()` or `savefig(name)` hands to the runner: a snapshot, and the file name asked for."""

    figure: FigureData
    name: str | None = None
    line: int | None = None
    """The line of the `show()` or `savefig` call."""


def _snapshot(data: FigureData) -> FigureData:
    return replace(data, axes=[replace(a, series=list(a.series)) for a in data.axes])


# -- reading values as matplotlib does ---------------------------------------------------------------
def numbers(value: Any, what: str) -> np.ndarray:
    """A float array of `value` (a tensor, an array, a number, a list of them), or a user error."""
    if isinstance(value, Tensor):
        return np.asarray(value.numpy(), dtype=float)
    if isinstance(value, range):
        return np.arange(value.start, value.stop, value.step, dtype=float)
    if isinstance(value, (list, tuple)):
        check_list(len(value))
        parts = [numbers(v, what) for v in value]
        try:
            return np.asarray(parts, dtype=float)
        except ValueError:
            raise ArgumentError(f"{what}: the rows have different lengths",
                                hint="give a list of numbers, or a tensor") from None
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return value.astype(float)
    if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        return np.asarray(float(value))
    raise ArgumentError(f"{what} takes numbers, lists of numbers, arrays or tensors, not {type(value).__name__}",
                        hint="plot values: plt.plot(losses), with losses a list of loss.item()")


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ArgumentError(f"{what} takes a string, not {type(value).__name__}", hint=f"e.g. {what}('loss')")
    return value


def _style(fmt: str) -> tuple[str | None, bool, str | None]:
    """A format string (`'r--'`, `'o'`, `'k.-'`) into colour, whether a line joins the points, marker."""
    colour = next((COLOURS[c] for c in fmt if c in COLOURS), None)
    marker = next((c for c in fmt if c in MARKERS and c not in "-"), None)
    line = any(style in fmt for style in LINE_STYLES) or marker is None
    if any(c not in COLOURS and c not in MARKERS and c not in "-.:" for c in fmt):
        raise ArgumentError(f"'{fmt}' is not a format string", hint="e.g. 'r--' (red, dashed), 'o' (points), "
                                                                    "'k.-' (black, points joined)")
    return colour, line, marker


# -- the objects a program holds ---------------------------------------------------------------------
class Line:
    """What `plot` returns one of per curve (`line, = ax.plot(...)`)."""

    program_attributes = frozenset({"set_label", "set_data", "set_color", "get_label"})

    def __init__(self, axes: Axes, index: int) -> None:
        self.axes, self.index = axes, index

    def _change(self, **changes: Any) -> None:
        series = self.axes.data.series
        series[self.index] = replace(series[self.index], **changes)
        self.axes.figure.changed()

    def set_label(self, label: Any) -> None:
        self._change(label=_text(label, "set_label"))

    def get_label(self) -> str:
        return self.axes.data.series[self.index].label or f"_child{self.index}"

    def set_color(self, color: Any) -> None:
        self._change(colour=_text(color, "set_color"))

    def set_data(self, x: Any, y: Any) -> None:
        self._change(x=numbers(x, "set_data"), y=numbers(y, "set_data"))

    def __repr__(self) -> str:
        return f"Line2D({self.get_label()})"


class Axes:
    """One panel (`ax` of `fig, ax = plt.subplots()`): what it draws, and its labels."""

    program_attributes = frozenset({
        "plot", "scatter", "hist", "bar", "imshow", "axhline", "axvline", "semilogy", "semilogx", "loglog", "set",
        "text", "annotate", "set_title", "set_xlabel",
        "set_ylabel", "legend", "grid", "set_xlim", "set_ylim", "set_xscale", "set_yscale", "get_title",
        "get_xlabel", "get_ylabel", "figure", "set_xticks", "set_yticks", "axis", "tick_params", "set_aspect"})

    def __init__(self, figure: Figure, position: tuple[int, int]) -> None:
        self.figure = figure
        self.data = AxesData(position)

    def _add(self, series: Series) -> None:
        check_list(len(self.data.series) + 1)
        self.data.series.append(series)
        self.figure.changed()

    def plot(self, *args: Any, **kwargs: Any) -> list[Line]:
        """`plot(y)`, `plot(x, y)`, `plot(x, y, 'r--')`, several groups in one call, as matplotlib reads them."""
        lines = []
        for x, y, fmt in _groups(args):
            colour, line, marker = _style(fmt)
            if y.ndim > 2:
                raise ArgumentError(f"plot takes 1-D or 2-D data, not {y.ndim}-D", hint="flatten it first")
            columns = y.T if y.ndim == 2 else [y]
            for column in columns:
                xs = np.arange(len(column), dtype=float) if x is None else x
                if xs.shape != column.shape:
                    raise ArgumentError(f"x and y must have same first dimension, but have shapes {xs.shape} and "
                                        f"{column.shape}", hint="give as many x values as y values")
                self._add(Series("line", xs, column, _label(kwargs), kwargs.get("color", colour),
                                 line and kwargs.get("linestyle", "-") not in ("", "None", "none"),
                                 kwargs.get("marker", marker)))
                lines.append(Line(self, len(self.data.series) - 1))
        return lines

    def semilogy(self, *args: Any, **kwargs: Any) -> list[Line]:
        self.data.yscale = "log"
        return self.plot(*args, **kwargs)

    def semilogx(self, *args: Any, **kwargs: Any) -> list[Line]:
        self.data.xscale = "log"
        return self.plot(*args, **kwargs)

    def loglog(self, *args: Any, **kwargs: Any) -> list[Line]:
        self.data.xscale = "log"
        return self.semilogy(*args, **kwargs)

    def set(self, **properties: Any) -> None:
        """`ax.set(title=..., xlabel=..., ylim=(0, 1))`: each property by its setter."""
        setters = {"title": self.set_title, "xlabel": self.set_xlabel, "ylabel": self.set_ylabel,
                   "xlim": self.set_xlim, "ylim": self.set_ylim, "xscale": self.set_xscale, "yscale": self.set_yscale}
        for name, value in properties.items():
            if name not in setters:
                raise ArgumentError(f"Axes.set() got an unexpected keyword argument '{name}'",
                                    hint="gradcli's axes set " + ", ".join(setters))
            setters[name](value)

    def scatter(self, x: Any, y: Any, s: Any = None, c: Any = None, **kwargs: Any) -> None:
        xs, ys = numbers(x, "scatter").ravel(), numbers(y, "scatter").ravel()
        if xs.shape != ys.shape:
            raise ArgumentError("x and y must be the same size", hint="give as many x values as y values")
        self._add(Series("scatter", xs, ys, _label(kwargs), c if isinstance(c, str) else kwargs.get("color"), False,
                         kwargs.get("marker", "o")))

    def hist(self, x: Any, bins: Any = 10, range: Any = None, density: bool = False, **kwargs: Any) -> tuple:
        data = numbers(x, "hist").ravel()
        counts, edges = np.histogram(data[np.isfinite(data)], bins=bins if isinstance(bins, int) else
                                     numbers(bins, "hist bins"), range=range, density=density)
        self._add(Series("hist", edges, counts.astype(float), _label(kwargs), kwargs.get("color")))
        return counts.astype(float), edges, None

    def bar(self, x: Any, height: Any, **kwargs: Any) -> None:
        labels = [str(v) for v in x] if isinstance(x, (list, tuple)) and x and isinstance(x[0], str) else None
        xs = np.arange(len(x), dtype=float) if labels else numbers(x, "bar").ravel()
        heights = np.broadcast_to(numbers(height, "bar"), xs.shape).astype(float)
        self._add(Series("bar", xs, heights, _label(kwargs), kwargs.get("color"),
                         options={"ticks": labels} if labels else {}))

    def imshow(self, image: Any, cmap: Any = None, **kwargs: Any) -> None:
        data = numbers(image, "imshow")
        if data.ndim == 3 and data.shape[0] in (1, 3) and data.shape[-1] not in (1, 3, 4):
            raise ArgumentError(f"Invalid shape {data.shape} for image data",
                                hint="matplotlib takes (H, W) or (H, W, 3): use img.permute(1, 2, 0) or img[0]")
        if data.ndim == 3 and data.shape[-1] == 1:
            data = data[..., 0]
        if data.ndim not in (2, 3):
            raise ArgumentError(f"Invalid shape {data.shape} for image data", hint="give an (H, W) or (H, W, 3) image")
        self._add(Series("image", None, data, None, options={"cmap": cmap if isinstance(cmap, str) else None}))

    def axhline(self, y: Any = 0, **kwargs: Any) -> None:
        self._add(Series("hline", None, numbers(y, "axhline"), _label(kwargs), kwargs.get("color")))

    def axvline(self, x: Any = 0, **kwargs: Any) -> None:
        self._add(Series("vline", numbers(x, "axvline"), np.asarray(0.0), _label(kwargs), kwargs.get("color")))

    def set_title(self, label: Any, **kwargs: Any) -> None:
        self.data.title = _text(label, "set_title")
        self.figure.changed()

    def set_xlabel(self, label: Any, **kwargs: Any) -> None:
        self.data.xlabel = _text(label, "set_xlabel")
        self.figure.changed()

    def set_ylabel(self, label: Any, **kwargs: Any) -> None:
        self.data.ylabel = _text(label, "set_ylabel")
        self.figure.changed()

    def get_title(self) -> str:
        return self.data.title

    def get_xlabel(self) -> str:
        return self.data.xlabel

    def get_ylabel(self) -> str:
        return self.data.ylabel

    def legend(self, labels: Any = None, **kwargs: Any) -> None:
        """`legend()` names each series by its label=; `legend(['a', 'b'])` names them in order."""
        if labels is not None:
            for k, label in enumerate(labels if isinstance(labels, (list, tuple)) else [labels]):
                if k < len(self.data.series):
                    self.data.series[k] = replace(self.data.series[k], label=_text(label, "legend"))
        self.data.legend = True
        self.figure.changed()

    def set_xlim(self, left: Any = None, right: Any = None, **kwargs: Any) -> None:
        self.data.xlim = _limits(left, right, "set_xlim")
        self.figure.changed()

    def set_ylim(self, bottom: Any = None, top: Any = None, **kwargs: Any) -> None:
        self.data.ylim = _limits(bottom, top, "set_ylim")
        self.figure.changed()

    def set_xscale(self, value: Any, **kwargs: Any) -> None:
        self.data.xscale = _scale(value)
        self.figure.changed()

    def set_yscale(self, value: Any, **kwargs: Any) -> None:
        self.data.yscale = _scale(value)
        self.figure.changed()

    def grid(self, *args: Any, **kwargs: Any) -> None:
        """Grid lines, ticks and text on the plot change no number drawn: accepted, not drawn."""

    set_xticks = set_yticks = axis = tick_params = set_aspect = text = annotate = grid

    def __repr__(self) -> str:
        parts = [f"title={{'center': {self.data.title!r}}}"] if self.data.title else []
        parts += [f"{k}={v!r}" for k, v in (("xlabel", self.data.xlabel), ("ylabel", self.data.ylabel)) if v]
        return f"<Axes: {', '.join(parts)}>"


class AxesGrid:
    """The axes `plt.subplots(rows, cols)` returns: indexed `axes[0, 1]` or `axes[1]`, iterated, `.flat`."""

    program_attributes = frozenset({"flat", "flatten", "ravel", "shape", "ndim"})

    def __init__(self, cells: list, shape: tuple[int, ...]) -> None:
        self.cells, self.shape, self.ndim = cells, shape, len(shape)

    @property
    def flat(self) -> list[Axes]:
        return [ax for row in self.cells for ax in (row.cells if isinstance(row, AxesGrid) else [row])]

    def flatten(self) -> list[Axes]:
        return self.flat

    ravel = flatten

    def program_index(self, key: Any) -> Any:
        keys = key if isinstance(key, tuple) else (key,)
        value: Any = self
        for k in keys:
            if not isinstance(value, AxesGrid) or not isinstance(k, int) or isinstance(k, bool):
                raise ArgumentError(f"too many indices, or not integers: axes[{key}]",
                                    hint=f"the axes are a grid of shape {self.shape}: axes[0] or axes[0, 1]")
            if not -len(value.cells) <= k < len(value.cells):
                raise ArgumentError(f"index {k} is out of bounds for the axes of shape {value.shape}")
            value = value.cells[k]
        return value

    def __iter__(self) -> Iterator[Any]:
        return iter(self.cells)

    def __len__(self) -> int:
        return len(self.cells)

    def __repr__(self) -> str:
        return "[" + " ".join(repr(cell) for cell in self.cells) + "]"


class Figure:
    """A figure a program holds (`fig` of `fig, ax = plt.subplots()`)."""

    program_attributes = frozenset({"add_subplot", "savefig", "suptitle", "tight_layout", "show", "axes",
                                    "set_size_inches", "colorbar", "subplots_adjust", "number", "gca"})

    def __init__(self, number: int) -> None:
        self.number = number
        self.data = FigureData(number)
        self.panels: dict[tuple[int, int], Axes] = {}
        self.current: Axes | None = None

    def changed(self) -> None:
        self.data.version = next(_CHANGES)
        self.data.line = runtime.line()

    @property
    def axes(self) -> list[Axes]:
        return list(self.panels.values())

    def panel(self, rows: int, columns: int, index: int) -> Axes:
        """The axes at `index` (1-based, row by row) of a rows × columns grid, made on first use."""
        if not all(isinstance(n, int) and n > 0 for n in (rows, columns)) or not 1 <= index <= rows * columns:
            raise ArgumentError(f"num must be an integer with 1 <= num <= {rows * columns}, not {index!r}",
                                hint="subplot(rows, columns, index) counts index from 1")
        self.data.rows, self.data.columns = max(self.data.rows, rows), max(self.data.columns, columns)
        position = divmod(index - 1, columns)
        if position not in self.panels:
            check_list(len(self.panels) + 1)
            self.panels[position] = Axes(self, position)
            self.data.axes.append(self.panels[position].data)
        self.current = self.panels[position]
        self.changed()
        return self.current

    def gca(self) -> Axes:
        return self.current or self.panel(1, 1, 1)

    def add_subplot(self, *args: Any, **kwargs: Any) -> Axes:
        return self.panel(*_grid_spec(args))

    def suptitle(self, text: Any, **kwargs: Any) -> None:
        self.data.title = _text(text, "suptitle")
        self.changed()

    def savefig(self, fname: Any, **kwargs: Any) -> None:
        name = _text(fname, "savefig") if isinstance(fname, str) else None
        if name is None:
            raise ArgumentError("savefig takes a file name", hint="e.g. fig.savefig('loss.png')")
        _hand_over(self, name)

    def show(self, *args: Any, **kwargs: Any) -> None:
        _hand_over(self, None)

    def tight_layout(self, *args: Any, **kwargs: Any) -> None:
        """Layout is the drawing's business."""

    set_size_inches = colorbar = subplots_adjust = tight_layout

    def __repr__(self) -> str:
        return f"<Figure size 640x480 with {len(self.panels)} Axes>"

    def __str__(self) -> str:
        return "Figure(640x480)"


# -- pyplot's state: the open figures and the current one --------------------------------------------
class _State:
    def __init__(self) -> None:
        self.figures: dict[int, Figure] = {}
        self.current: Figure | None = None

    def reset(self) -> None:
        self.figures.clear()
        self.current = None


_STATE = _State()
RESETS.append(_STATE.reset)


def figure(num: Any = None, figsize: Any = None, **kwargs: Any) -> Figure:
    if isinstance(num, Figure):
        _STATE.current = num
        return num
    number = num if isinstance(num, int) and not isinstance(num, bool) else max(_STATE.figures, default=0) + 1
    if number not in _STATE.figures:
        if len(_STATE.figures) >= MAX_FIGURES:
            raise ArgumentError(f"more than {MAX_FIGURES} figures are open",
                                hint="plt.close(fig) (or plt.close('all')) after showing each one")
        _STATE.figures[number] = Figure(number)
    _STATE.current = _STATE.figures[number]
    return _STATE.current


def gcf() -> Figure:
    return _STATE.current or figure()


def gca() -> Axes:
    return gcf().gca()


def subplot(*args: Any, **kwargs: Any) -> Axes:
    return gcf().panel(*_grid_spec(args))


def subplots(nrows: int = 1, ncols: int = 1, *, squeeze: bool = True, figsize: Any = None, **kwargs: Any) -> tuple:
    fig = figure()
    rows = [[fig.panel(nrows, ncols, r * ncols + c + 1) for c in range(ncols)] for r in range(nrows)]
    fig.current = rows[0][0]
    if squeeze and nrows == ncols == 1:
        return fig, rows[0][0]
    if squeeze and (nrows == 1 or ncols == 1):
        flat = [ax for row in rows for ax in row]
        return fig, AxesGrid(flat, (len(flat),))
    return fig, AxesGrid([AxesGrid(row, (ncols,)) for row in rows], (nrows, ncols))


def show(*args: Any, **kwargs: Any) -> None:
    """Every open figure is drawn, then closed, as a script's `plt.show()` does."""
    for fig in list(_STATE.figures.values()):
        _hand_over(fig, None)
    _STATE.reset()


def suptitle(text: Any, **kwargs: Any) -> None:
    gcf().suptitle(text)


def clf() -> None:
    """The current figure, emptied (its number kept)."""
    fig = gcf()
    _STATE.figures[fig.number] = _STATE.current = Figure(fig.number)


def savefig(fname: Any, **kwargs: Any) -> None:
    gcf().savefig(fname, **kwargs)


def close(fig: Any = None) -> None:
    if fig == "all":
        _STATE.reset()
        return
    target = fig if isinstance(fig, Figure) else _STATE.figures.get(fig) if isinstance(fig, int) else _STATE.current
    if target is not None:
        _STATE.figures.pop(target.number, None)
        if _STATE.current is target:
            _STATE.current = None


def pending() -> list[FigureData]:
    """The figures open and never shown (a notebook draws them after its cells, as Jupyter does), closed."""
    out = [_snapshot(f.data) for f in _STATE.figures.values() if f.data.axes]
    _STATE.reset()
    return out


def _hand_over(fig: Figure, name: str | None) -> None:
    if FIGURES and fig.data.axes:
        FIGURES[-1](Shown(_snapshot(fig.data), name, runtime.line()))


def _groups(args: tuple) -> Iterator[tuple[np.ndarray | None, np.ndarray, str]]:
    """`plot`'s positional arguments as (x, y, fmt) groups: `y`, `x, y`, `x, y, fmt`, repeated."""
    rest = list(args)
    if not rest:
        raise ArgumentError("plot needs data", hint="plt.plot(y) or plt.plot(x, y)")
    while rest:
        data = []
        while rest and not isinstance(rest[0], str) and len(data) < 2:
            data.append(rest.pop(0))
        fmt = rest.pop(0) if rest and isinstance(rest[0], str) else ""
        if not data:
            raise ArgumentError(f"plot: the format string '{fmt}' follows no data", hint="plt.plot(x, y, 'r--')")
        arrays = [np.atleast_1d(numbers(d, "plot")) for d in data]
        yield (None, arrays[0], fmt) if len(arrays) == 1 else (arrays[0].ravel(), arrays[1], fmt)


def _label(kwargs: dict) -> str | None:
    label = kwargs.get("label")
    return None if label is None else str(label)


def _limits(low: Any, high: Any, what: str) -> tuple[float, float]:
    if isinstance(low, (list, tuple)) and high is None:
        low, high = low
    return float(numbers(low, what)), float(numbers(high, what))


def _scale(value: Any) -> str:
    if value not in ("linear", "log", "symlog", "logit"):
        raise ArgumentError(f"{value!r} is not a valid value for scale", hint="use 'linear' or 'log'")
    return "log" if value != "linear" else "linear"


def _grid_spec(args: tuple) -> tuple[int, int, int]:
    """`(2, 2, 1)`, or `221` (three digits), or nothing (one panel)."""
    if not args:
        return 1, 1, 1
    if len(args) == 1 and isinstance(args[0], int) and 111 <= args[0] <= 999:
        return args[0] // 100, args[0] // 10 % 10, args[0] % 10
    if len(args) == 3 and all(isinstance(a, int) for a in args):
        return args
    raise ArgumentError(f"subplot takes (rows, columns, index) or a three-digit number, not {args!r}",
                        hint="e.g. plt.subplot(1, 2, 1) or plt.subplot(121)")


def _on_current(name: str) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(gca(), name)(*args, **kwargs)
    call.__name__ = name
    return call


_AXES_CALLS = {"plot": "plot", "scatter": "scatter", "hist": "hist", "bar": "bar", "imshow": "imshow",
               "axhline": "axhline", "axvline": "axvline", "semilogy": "semilogy", "semilogx": "semilogx",
               "loglog": "loglog", "text": "text", "annotate": "annotate", "title": "set_title",
               "xlabel": "set_xlabel", "ylabel": "set_ylabel", "legend": "legend", "grid": "grid",
               "xlim": "set_xlim", "ylim": "set_ylim", "xscale": "set_xscale", "yscale": "set_yscale",
               "xticks": "set_xticks", "yticks": "set_yticks", "axis": "axis"}


def _nothing(*args: Any, **kwargs: Any) -> None:
    """Interactive switches and layout: nothing to do when gradcli draws."""


PYPLOT = Namespace("matplotlib.pyplot", {
    **{name: _on_current(method) for name, method in _AXES_CALLS.items()},
    "figure": figure, "gcf": gcf, "gca": gca, "subplot": subplot, "subplots": subplots, "show": show,
    "savefig": savefig, "close": close, "suptitle": suptitle, "clf": clf,
    "tight_layout": _nothing, "ion": _nothing, "ioff": _nothing, "pause": _nothing, "colorbar": _nothing})
MATPLOTLIB = Namespace("matplotlib", {"pyplot": PYPLOT, "use": _nothing})
