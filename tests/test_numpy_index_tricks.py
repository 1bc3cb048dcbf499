"""NumPy names the census found missing: np.random.RandomState (its own Mersenne Twister stream), np.ndenumerate,
np.c_, np.mgrid and np.finfo. Each program prints what NumPy itself prints for it (`cpython` runs it with NumPy)."""
from __future__ import annotations

import pytest

from gradcli.errors import ArgumentError, LimitError, ValueDomainError
from language_helpers import cpython, fails, run

SOURCE = """import numpy as np
rs = np.random.RandomState(42)
print(rs.rand(3), rs.randint(0, 10, size=4), rs.permutation(5))
r2 = np.random.RandomState(seed=1)
print(r2.normal(0, 1, (2, 2)), r2.choice(5, 3, replace=False))
r3 = np.random.RandomState(7)
a = np.arange(6)
r3.shuffle(a)
print(a, np.random.RandomState(0).uniform(size=2))
b = np.array([[1, 2], [3, 4]])
for index, value in np.ndenumerate(b):
    print(index, value)
print(list(np.ndenumerate(np.array([0.5, 1.5]))))
print(np.c_[np.array([1, 2, 3]), np.array([4, 5, 6])])
print(np.c_[b, b], np.c_[[1, 2], [3, 4]])
xx, yy = np.mgrid[0:3, 0:2]
print(xx, yy)
print(np.mgrid[0:5:2], np.mgrid[3:0:-1])
print(np.finfo(np.float32))
print(np.finfo(np.float64).eps, np.finfo(float).max, np.finfo(np.float32).tiny, np.finfo(np.float32).bits)
print(repr(np.finfo(np.float32)), np.finfo(np.float32).dtype, np.finfo(np.float32).eps * 2)
"""


def test_each_prints_what_numpy_prints() -> None:
    assert "\n".join(run(SOURCE).printed).splitlines() == cpython(SOURCE)


def test_a_random_state_has_a_stream_of_its_own() -> None:
    """Drawing from a RandomState leaves the module-level stream where it was, as in NumPy."""
    source = ("import numpy as np\nnp.random.seed(3)\nnp.random.RandomState(5).rand(4)\nprint(np.random.rand(2))\n")
    assert run(source).printed == cpython(source)


@pytest.mark.parametrize("source, kind, words", [
    ("np.mgrid[0:100000, 0:100000]", LimitError, "np.mgrid would make 20,000,000,000 elements"),
    ("np.mgrid[0:3, 2]", ArgumentError, "np.mgrid takes slices with a stop"),
    ("np.c_[0:3]", ArgumentError, "np.c_ here joins arrays and lists"),
    ("np.random.RandomState(5).bit_generator", Exception, "bit_generator"),
    ("np.random.RandomState(-1)", ArgumentError, "np.random.RandomState"),
    ("np.finfo(np.int64)", ValueDomainError, "not inexact"),
])
def test_misuse_is_named(source: str, kind: type, words: str) -> None:
    assert words in str(fails("import numpy as np\n" + source + "\n", kind))
