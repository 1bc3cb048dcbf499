"""Standard modules as facades: each module here builds a `Namespace` of named members only.

A program never holds a real standard module: `import random` binds the facade `random_module`
builds, whose members are chosen one by one (CPython's own generator behind `random`, bounded
wrappers around `itertools`, ...). Facades load when a program first imports them, so a program
that imports none pays nothing. Modules that reach the machine (files, processes, the interpreter
itself) are refused with the reason (`REFUSED`).

Facades that keep state (a seeded generator) register a reset here, run when a program starts, so
one file's seed never leaks into the next.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from gradcli.lang.builtins import Namespace

NAMES = frozenset({"random", "math", "functools", "itertools", "collections", "operator", "copy", "pprint", "time",
                   "typing", "dataclasses", "argparse", "warnings", "string", "numbers", "unicodedata",
                   "__future__", "numpy.random"})
"""Every module a program may import besides torch and numpy."""

REFUSED = {
    "os": "it reaches files, processes and the environment",
    "sys": "it reaches the Python interpreter running gradcli",
    "subprocess": "it runs other programs",
    "pickle": "unpickling runs arbitrary code",
    "importlib": "it imports any Python module",
    "shutil": "it copies and deletes files",
    "socket": "it opens network connections",
    "builtins": "it holds Python's own builtins (gradcli's are already there)",
    "ctypes": "it calls machine code directly",
    "io": "it reads and writes files",
    "pathlib": "it reads and writes files",
    "inspect": "it reaches the interpreter's frames and code",
    "threading": "gradcli programs run in one thread",
    "multiprocessing": "it starts processes",
    "gc": "it reaches every object of the interpreter",
    "marshal": "loading marshalled code runs it",
    "shelve": "it unpickles files",
}
"""Modules refused on purpose, with the reason a refusal gives."""

RESETS: list[Callable[[], None]] = []

PRINTERS: list[Callable[[str], None]] = []
"""How a facade shows text (pprint, warnings): the running program's print, innermost last."""


def show(text: str) -> None:
    if PRINTERS:
        PRINTERS[-1](text)

_LOADED: dict[str, "Namespace"] = {}


def facade(name: str) -> "Namespace":
    """The facade of module `name` (one of NAMES), built once."""
    module = _LOADED.get(name)
    if module is None:
        module = _LOADED[name] = _build(name)
    return module


_FACADES = {"random": ("random_module", "RANDOM"), "math": ("math_module", "MATH"),
            "functools": ("functools_module", "FUNCTOOLS"), "itertools": ("itertools_module", "ITERTOOLS"),
            "collections": ("collections_module", "COLLECTIONS"), "operator": ("operator_module", "OPERATOR"),
            "copy": ("copy_module", "COPY"), "numpy.random": ("numpy_random", "NUMPY_RANDOM")}
"""Module name -> (the facade's module in this package, its Namespace); the rest are in small_modules."""


def _build(name: str) -> "Namespace":
    from importlib import import_module
    if name in _FACADES:
        module, member = _FACADES[name]
        return getattr(import_module(f"{__name__}.{module}"), member)
    from gradcli.lang.stdlib.small_modules import SMALL
    return SMALL[name]()


def reset_all() -> None:
    """A program starts: every stateful facade loaded so far starts afresh."""
    for reset in RESETS:
        reset()
