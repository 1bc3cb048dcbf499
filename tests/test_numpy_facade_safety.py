"""The NumPy facade's hostile cases (issue 32), written before it was trusted: object dtypes, file I/O,
ctypes and buffers refused by name; NumPy never calls back into the program; every size a call can
grow is checked before NumPy allocates it, within seconds, and no program catches the refusal."""
from __future__ import annotations

import time

import pytest

from gradcli.errors import ArgumentError, LimitError, NameLookupError, NotAllowedError
from language_helpers import fails, run

PRE = "import numpy as np\nimport torch\na = np.arange(6.0)\n"


@pytest.mark.parametrize("source, words", [
    ("b = np.array([1, 'x'], dtype=object)", "array of object"),
    ("b = np.array(['a', 'b'])", "<U1"),
    ("b = a.astype('object')", "array of object"),
    ("b = np.asarray([[1], [1, 2]], dtype=object)", "array of object"),
    ("b = np.zeros(2, dtype='U3')", "<U3"),
    ("b = np.array([1.5, 'x'])", "<U32"),
])
def test_arrays_of_anything_but_numbers_are_refused(source, words):
    caught = fails(PRE + source, NotAllowedError)
    assert words in caught.message and caught.hint


@pytest.mark.parametrize("source, reason", [
    ("np.load('x.npy')", "file I/O"), ("np.save('x.npy', a)", "file I/O"), ("np.loadtxt('x.txt')", "file I/O"),
    ("np.fromfile('x')", "file I/O"), ("a.tofile('x')", "file I/O"), ("a.dump('x')", "file I/O"),
    ("a.ctypes", "ctypes"), ("a.data", "raw buffers"), ("a.tobytes()", "raw buffers"),
    ("np.frombuffer(a)", "raw buffers"), ("a.view('int64')", "memory views"), ("a.base", "memory views"),
    ("np.vectorize(abs)", "calling back into the program"),
    ("np.apply_along_axis(sum, 0, a)", "calling back into the program"),
    ("np.fromfunction(lambda i: i, (3,))", "calling back into the program"),
    ("np.ctypeslib", "ctypes"), ("np.lib", "NumPy's internals"), ("np.object_", "object arrays"),
])
def test_io_buffers_and_callbacks_are_refused_by_name(source, reason):
    caught = fails(PRE + f"b = {source}", NotAllowedError)
    assert reason in caught.message


@pytest.mark.parametrize("source", ["np.seterr(all='raise')", "np.info(a)", "a.setflags(write=False)",
                                    "a.strides", "a.flags", "np.memmap", "a.__array_interface__"])
def test_anything_off_the_list_is_not_available(source):
    with pytest.raises((NameLookupError, NotAllowedError)) as caught:
        run(PRE + f"b = {source}")
    assert "not available" in caught.value.message


@pytest.mark.parametrize("source", [
    "np.sort(a, kind=print)", "np.array([f])", "np.sum(a, axis=f)", "np.clip(a, f, 1)", "np.concatenate([a, [f]])",
    "np.array(C())", "np.add(a, C())", "np.random.choice([C()])",
])
def test_numpy_never_holds_or_calls_a_program_value(source):
    caught = fails(PRE + f"def f(x):\n    return x\nclass C:\n    pass\nb = {source}", NotAllowedError)
    assert "does not take" in caught.message


@pytest.mark.parametrize("source", [
    "np.ones(10**10)", "np.zeros((10**5, 10**5))", "np.empty((2**31, 2**31), 'int8')", "np.full((10**9,), 1.0)",
    "np.arange(1e12)", "np.arange(0, 1, 1e-12)", "np.linspace(0, 1, 10**11)", "np.eye(10**6)", "np.identity(10**6)",
    "np.tile(a, 10**9)", "np.tile(a, (10**5, 10**5))", "np.repeat(a, 10**10)", "a.repeat(10**10)",
    "np.outer(np.ones(10**5), np.ones(10**5))", "np.kron(np.ones(10**5), np.ones(10**5))",
    "np.ones(10**5)[:, None] + np.ones(10**5)[None, :]", "np.ones(10**5)[:, None] < np.ones(10**5)",
    "np.add.outer if False else np.add(np.ones((10**5, 1)), np.ones(10**5))", "np.meshgrid(np.ones(10**5), np.ones(10**5))",
    "np.pad(a, 10**10)", "np.bincount([10**12])", "np.broadcast_to(a, (10**9, 6))", "np.resize(a, 10**11)",
    "np.tri(10**6)", "np.tril_indices(10**6)", "np.vander(np.ones(10**5))", "np.diag(np.ones(10**5))",
    "np.einsum('i,j->ij', np.ones(10**5), np.ones(10**5))", "np.dot(np.ones((10**5, 1)), np.ones((1, 10**5)))",
    "np.ones((10**5, 1)) @ np.ones((1, 10**5))", "np.random.rand(10**5, 10**5)", "np.random.randn(10**10)",
    "np.random.normal(size=(10**5, 10**5))", "np.random.default_rng(0).random((10**5, 10**5))",
    "np.random.default_rng(0).integers(0, 9, size=10**11)", "np.random.permutation(10**11)",
    "np.indices((10**4, 10**4, 10**4))", "np.histogram2d([1], [1], bins=10**6)",
    "np.ones(10**5)[np.arange(10**5)[:, None], np.arange(10**5)[None, :]]",
])
def test_every_size_a_call_can_grow_is_checked_before_numpy_allocates(source):
    started = time.monotonic()
    caught = fails(PRE + f"try:\n    b = {source}\nexcept BaseException:\n    pass\n", LimitError)
    assert "over the limit of 50,000,000" in caught.message and "elements" in caught.message
    assert time.monotonic() - started < 5


def test_a_tensor_that_requires_grad_meets_pytorchs_error():
    caught = fails(PRE + "t = torch.ones(2, requires_grad=True)\nb = np.exp(t)", ArgumentError)
    assert caught.message == "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
    ran = run(PRE + "t = torch.ones(2, requires_grad=True)\nb = np.exp(t.detach())\nc = np.sum(t.detach().numpy())")
    assert ran["b"].tolist() == pytest.approx([2.718281828, 2.718281828]) and ran["c"] == 2.0


@pytest.mark.parametrize("source, words", [
    ("np.set_printoptions(formatter={'float': str})", "formatter=...) is not supported"),
    ("np.add(a, a, out=torch.zeros(2, 3))", "'out=' takes a NumPy array"),
    ("np.ndarray((2, 2))", "uninitialised memory"),
])
def test_the_rest_of_numpys_reach_is_refused_with_the_way_that_works(source, words):
    caught = fails(PRE + f"b = {source}", NotAllowedError)
    assert words in caught.message and caught.hint


@pytest.mark.parametrize("source, kind, words", [
    ("b = np.ones(3) + np.ones(4)", Exception, "operands could not be broadcast together"),
    ("b = a.reshape(4)", Exception, "cannot reshape array of size 6 into shape (4,)"),
    ("b = a[10]", Exception, "index 10 is out of bounds"),
    ("b = np.linalg.inv(np.zeros((2, 2)))", ArgumentError, "Singular matrix"),
    ("b = len(np.array(1.0))", ArgumentError, "len() of unsized object"),
    ("b = float(a)", ArgumentError, "only 0-dimensional arrays can be converted to Python scalars"),
    ("b = a + torch.ones(6)", ArgumentError, "unsupported operand type(s) for +: 'numpy.ndarray' and 'Tensor'"),
    ("if a:\n    pass", ArgumentError, "The truth value of an array with more than one element is ambiguous"),
])
def test_numpys_own_errors_are_the_users(source, kind, words):
    caught = fails(PRE + source, kind)
    assert words in caught.message


def test_a_numpy_index_error_is_catchable_as_in_python():
    ran = run(PRE + "try:\n    b = a[10]\nexcept IndexError as e:\n    b = str(e)\n")
    assert ran["b"] == "index 10 is out of bounds for axis 0 with size 6"


def test_the_cli_refuses_with_exit_2_and_no_traceback(cli, tmp_path):
    path = tmp_path / "evil.py"
    path.write_text("import numpy as np\nb = np.load('/etc/passwd', allow_pickle=True)\n")
    result = cli("run", str(path))
    assert result.exit_code == 2 and "Traceback" not in result.stdout + result.stderr
    assert "file I/O" in result.stdout + result.stderr
