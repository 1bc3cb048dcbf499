"""`itertools`, bounded: CPython's own iterators inside, every item they produce a step of the budget.

Inputs are read through the program's iteration (`iterate`), so an endless `count()` fed to
`product` or `cycle` stops at the step limit too; an iterator that drops items (`islice`, `dropwhile`,
`filterfalse`, `compress`, `groupby`) counts each item it reads, kept or not (`visited`, `Sifted`); what
an iterator would hold in memory (`product`'s pools, `combinations`' pool) is checked against the list
limit before it is built.
"""
from __future__ import annotations

import itertools
from typing import Any

from gradcli.errors import ArgumentError
from gradcli.lang.namespace import Namespace
from gradcli.lang.limits import Lazy, Sifted, check_list
from gradcli.lang.iteration import items, iterate, visited


def count(start: Any = 0, step: Any = 1) -> Lazy:
    return Lazy(itertools.count(start, step))


def repeat(value: Any, times: int | None = None) -> Lazy:
    return Lazy(itertools.repeat(value) if times is None else itertools.repeat(value, times))


def cycle(iterable: Any) -> Lazy:
    return Lazy(itertools.cycle(iterate(iterable)))


class _Chain:
    """`chain(*its)` and `chain.from_iterable(its)`."""

    program_attributes = frozenset({"from_iterable"})
    __name__ = "chain"

    def __call__(self, *iterables: Any) -> Lazy:
        return Lazy(itertools.chain.from_iterable(iterate(v) for v in iterables))

    def from_iterable(self, iterables: Any) -> Lazy:
        return Lazy(itertools.chain.from_iterable(iterate(v) for v in iterate(iterables)))


chain = _Chain()


def islice(iterable: Any, *bounds: Any) -> Lazy:
    return Sifted(itertools.islice(visited(iterable), *bounds))


def product(*iterables: Any, repeat: int = 1) -> Lazy:
    if not isinstance(repeat, int) or repeat < 0:
        raise ArgumentError("repeat argument cannot be negative")
    pools = [items(v) for v in iterables]
    check_list(sum(len(p) for p in pools) * repeat)
    return Lazy(itertools.product(*pools, repeat=repeat))


def combinations(iterable: Any, r: int) -> Lazy:
    return Lazy(itertools.combinations(items(iterable), r))


def combinations_with_replacement(iterable: Any, r: int) -> Lazy:
    return Lazy(itertools.combinations_with_replacement(items(iterable), r))


def permutations(iterable: Any, r: int | None = None) -> Lazy:
    return Lazy(itertools.permutations(items(iterable), r))


def accumulate(iterable: Any, func: Any = None, *, initial: Any = None) -> Lazy:
    from gradcli.lang.operators import arithmetic
    import ast
    add = ast.Add()
    return Lazy(itertools.accumulate(iterate(iterable), func or (lambda a, b: arithmetic(add, a, b)),
                                     initial=initial))


def zip_longest(*iterables: Any, fillvalue: Any = None) -> Lazy:
    return Lazy(itertools.zip_longest(*(iterate(v) for v in iterables), fillvalue=fillvalue))


def starmap(func: Any, iterable: Any) -> Lazy:
    return Lazy(itertools.starmap(func, iterate(iterable)))


def takewhile(predicate: Any, iterable: Any) -> Lazy:
    return Lazy(itertools.takewhile(predicate, iterate(iterable)))


def dropwhile(predicate: Any, iterable: Any) -> Lazy:
    return Sifted(itertools.dropwhile(predicate, visited(iterable)))


def filterfalse(predicate: Any, iterable: Any) -> Lazy:
    return Sifted(itertools.filterfalse(predicate, visited(iterable)))


def compress(data: Any, selectors: Any) -> Lazy:
    return Sifted(itertools.compress(visited(data), iterate(selectors)))


def pairwise(iterable: Any) -> Lazy:
    return Lazy(itertools.pairwise(iterate(iterable)))


def groupby(iterable: Any, key: Any = None) -> Lazy:
    return Sifted((k, Sifted(group)) for k, group in itertools.groupby(visited(iterable), key))


ITERTOOLS = Namespace("itertools", {fn.__name__: fn for fn in (
    count, repeat, cycle, chain, islice, product, combinations, combinations_with_replacement, permutations,
    accumulate, zip_longest, starmap, takewhile, dropwhile, filterfalse, compress, pairwise, groupby)})
