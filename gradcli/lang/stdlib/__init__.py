"""Standard modules as facades: each module here builds a `Namespace` of named members only.

A program never holds a real standard module: `import random` binds the facade `random_module`
builds, whose members are chosen one by one (CPython's own generator behind `random`, bounded
wrappers around `itertools`, ...). Facades load when a program first imports them, so a program
that imports none pays nothing. Modules that reach the machine (files, processes, the interpreter
itself) are refused with the reason (`REFUSED`).

Facades that keep state (a seeded generator) register a reset (`runtime.RESETS`), run when a program
starts, so one file's seed never leaks into the next. Facades load by name (`import_module`), so this
package never imports what imports it.
"""
from __future__ import annotations

from importlib import import_module
from typing import Any

from gradcli.lang.stdlib.runtime import RESETS

NAMES = frozenset({"random", "math", "functools", "itertools", "collections", "operator", "copy", "pprint", "time",
                   "typing", "dataclasses", "argparse", "warnings", "string", "numbers", "unicodedata",
                   "enum", "__future__", "numpy.random", "tqdm", "tqdm.auto", "tqdm.notebook", "matplotlib",
                   "matplotlib.pyplot"})
"""Every module a program may import besides torch and numpy (tqdm's progress bars draw nothing;
matplotlib's figures are drawn by gradcli)."""
OTHERS = frozenset({"numpy.random", "tqdm", "tqdm.auto", "tqdm.notebook", "matplotlib", "matplotlib.pyplot"})
"""The facades of NAMES that are not Python's standard modules."""

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

_LOADED: dict[str, Any] = {}


def facade(name: str) -> Any:
    """The facade of module `name` (one of NAMES), built once."""
    module = _LOADED.get(name)
    if module is None:
        module = _LOADED[name] = _build(name)
    return module


_FACADES = {"random": ("random_module", "RANDOM"), "math": ("math_module", "MATH"),
            "functools": ("functools_module", "FUNCTOOLS"), "itertools": ("itertools_module", "ITERTOOLS"),
            "collections": ("collections_module", "COLLECTIONS"), "operator": ("operator_module", "OPERATOR"),
            "copy": ("copy_module", "COPY"), "enum": ("enum_module", "ENUM"), "numpy.random": ("numpy_random", "NUMPY_RANDOM"),
            "tqdm": ("tqdm_module", "TQDM"), "tqdm.auto": ("tqdm_module", "TQDM_AUTO"),
            "tqdm.notebook": ("tqdm_module", "TQDM_NOTEBOOK"), "matplotlib": ("pyplot_module", "MATPLOTLIB"),
            "matplotlib.pyplot": ("pyplot_module", "PYPLOT")}
"""Module name -> (the facade's module in this package, its Namespace); the rest are in small_modules."""


def loaded(name: str) -> bool:
    """Whether some program imported module `name` (its facade's state may hold something)."""
    return name in _LOADED


def _build(name: str) -> Any:
    if name in _FACADES:
        module, member = _FACADES[name]
        return getattr(import_module(f"{__name__}.{module}"), member)
    return import_module(f"{__name__}.small_modules").SMALL[name]()


def reset_all() -> None:
    """A program starts: every stateful facade loaded so far starts afresh."""
    for reset in RESETS:
        reset()
