"""`tqdm` (also `tqdm.auto`, `tqdm.notebook`): progress bars that show nothing, so the loop runs as written.

Notebooks and training scripts wrap their loaders in `tqdm(...)` and label the bar with
`set_description` / `set_postfix`. tqdm draws on stderr, never in what the program prints, so
the facade iterates what it wraps and keeps the counts a program may read (`n`, `total`);
`tqdm.write(text)` is a print, as tqdm's is on stdout.
"""
from __future__ import annotations

from typing import Any, Iterator

from gradcli.errors import ArgumentError
from gradcli.lang.dunders import length
from gradcli.lang.iteration import iterate
from gradcli.lang.namespace import Namespace
from gradcli.lang.objects import Instance
from gradcli.lang.stdlib.runtime import show


class Bar:
    """One progress bar: an iterable over what it wraps (or a counter a program updates)."""

    program_attributes = frozenset({"update", "set_description", "set_description_str", "set_postfix",
                                    "set_postfix_str", "close", "refresh", "reset", "clear", "write", "n", "total",
                                    "desc"})

    def __init__(self, iterable: Any = None, desc: Any = None, total: Any = None, **options: Any) -> None:
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = length(iterable) if isinstance(iterable, Instance) else len(iterable)
        self.iterable, self.desc, self.total, self.n = iterable, desc or "", total, 0

    def __iter__(self) -> Iterator[Any]:
        if self.iterable is None:
            raise ArgumentError("'tqdm' object is not iterable without an iterable",
                                hint="wrap what the loop visits: for batch in tqdm(loader)")
        for value in iterate(self.iterable):
            yield value
            self.n += 1

    def __len__(self) -> int:
        if self.total is None:
            raise ArgumentError("object of type 'tqdm' has no len()", hint="give tqdm a total= or a sized iterable")
        return int(self.total)

    def update(self, n: Any = 1) -> None:
        self.n += n

    def set_description(self, desc: Any = None, refresh: bool = True) -> None:
        self.desc = "" if desc is None else str(desc)

    set_description_str = set_description

    def set_postfix(self, ordered_dict: Any = None, refresh: bool = True, **kwargs: Any) -> None:
        """The postfix is drawn on the bar only."""

    def set_postfix_str(self, s: Any = "", refresh: bool = True) -> None:
        """The postfix is drawn on the bar only."""

    def close(self) -> None:
        """Nothing was drawn, so nothing is cleared."""

    refresh = clear = close

    def reset(self, total: Any = None) -> None:
        self.n = 0
        if total is not None:
            self.total = total

    @staticmethod
    def write(s: Any, file: Any = None, end: str = "\n", nolock: bool = False) -> None:
        show(f"{s}{end}".removesuffix("\n"))

    def __repr__(self) -> str:
        return f"{self.desc}: {self.n}/{self.total}" if self.desc else f"{self.n}/{self.total}"


class _Maker:
    """`tqdm(...)` makes a bar, and `tqdm.write(text)` prints above the bars, as tqdm's class does."""

    program_attributes = frozenset({"write"})
    write = staticmethod(Bar.write)

    def __init__(self, name: str, over_range: bool) -> None:
        self.__name__, self.over_range = name, over_range

    def __call__(self, *args: Any, **kwargs: Any) -> Bar:
        if self.over_range:
            numbers = [a for a in args if not isinstance(a, str)]
            return Bar(range(*numbers), **kwargs)
        return Bar(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<class 'tqdm.std.{self.__name__}'>" if self.__name__ == "tqdm" else f"<function {self.__name__}>"


def _namespace(name: str) -> Namespace:
    return Namespace(name, {"tqdm": _Maker("tqdm", False), "trange": _Maker("trange", True)})


TQDM = _namespace("tqdm")
TQDM_AUTO = _namespace("tqdm.auto")
TQDM_NOTEBOOK = _namespace("tqdm.notebook")
TQDM.members.update(auto=TQDM_AUTO, notebook=TQDM_NOTEBOOK)
