"""Standard-module facades (issue 25, item 5): values against CPython's and NumPy's own modules, the
hostile cases refused by name or stopped by a cap."""
from __future__ import annotations

import collections
import itertools
import math
import random

import numpy as np
import pytest

from gradcli.errors import ArgumentError, LimitError, NameLookupError, NotAllowedError
from gradcli.lang.parser import parse_program
from tests.language_helpers import fails, run


def test_random_is_cpythons_generator():
    ran = run("import random\nrandom.seed(0)\na = random.random()\nb = [random.randint(1, 6) for _ in range(5)]\n"
              "c = random.uniform(-1, 1)\nd = random.gauss(0, 1)\nxs = list(range(10))\nrandom.shuffle(xs)\n"
              "s = random.sample(range(100), 3)\nch = random.choice('abc')\nk = random.choices([1, 2], k=4)\n"
              "r = random.Random(42)\ne = r.random()\ng = random.getrandbits(64)")
    ref = random.Random(0)
    assert ran["a"] == ref.random() == 0.8444218515250481
    assert ran["b"] == [ref.randint(1, 6) for _ in range(5)]
    assert ran["c"] == ref.uniform(-1, 1) and ran["d"] == ref.gauss(0, 1)
    xs = list(range(10))
    ref.shuffle(xs)
    assert ran["xs"] == xs and ran["s"] == ref.sample(range(100), 3) and ran["ch"] == ref.choice("abc")
    assert ran["k"] == ref.choices([1, 2], k=4)
    assert ran["e"] == random.Random(42).random() and ran["g"] == ref.getrandbits(64)


def test_each_program_starts_with_an_unseeded_generator():
    first = run("import random\nrandom.seed(5)\nv = random.random()")["v"]
    again = run("import random\nv = random.random()")["v"]
    assert first == random.Random(5).random() and again != first


@pytest.mark.parametrize("source, words", [
    ("import random\nx = random._os", "attribute '_os'"),
    ("import random\nx = random._inst", "attribute '_inst'"),
    ("import collections\nx = collections.__loader__", "attribute '__loader__'"),
    ("import copy\nx = copy.copy.__globals__", "attribute '__globals__'"),
    ("import math\nx = math.__dict__", "attribute '__dict__'"),
    ("from random import _inst", "attribute '_inst'"),
    ("import functools\nx = functools.partial(max).__wrapped__", "attribute '__wrapped__'"),
])
def test_private_paths_through_facades_are_refused_by_name(source, words):
    with pytest.raises(NotAllowedError) as caught:
        parse_program(source)
    assert words in caught.value.message


def test_members_not_listed_do_not_exist():
    assert "attribute 'SystemRandom' is not available on 'random'" in fails(
        "import random\nx = random.SystemRandom", NameLookupError).message
    assert "cannot import name 'Formatter'" in fails("from string import Formatter", NameLookupError).message
    assert "attribute 'setstate' is not available" not in run("import random\nr = random.Random(1)\n"
                                                              "s = r.getstate()\nr.setstate(s)").printed


@pytest.mark.parametrize("module", ["os", "sys", "subprocess", "pickle", "importlib", "shutil", "socket", "builtins",
                                    "ctypes"])
def test_machine_modules_stay_refused_with_the_reason(module):
    for source in (f"import {module}", f"from {module} import x", f"import {module} as m"):
        with pytest.raises(NotAllowedError) as caught:
            parse_program(source)
        assert f"import of '{module}' is refused: " in caught.value.message


@pytest.mark.parametrize("source, words", [
    ("import random\nx = random.getrandbits(10**10)", "past 4096 bits"),
    ("import math\nx = math.factorial(10**8)", "past 4096 bits"),
    ("import math\nx = math.comb(10**6, 5000)", "past 4096 bits"),
    ("import math\nx = math.prod(range(1, 10**5))", "past 4096 bits"),
    ("import itertools\nxs = list(itertools.count())", "loop iterations"),
    ("import itertools\nfor v in itertools.count():\n    pass", "loop iterations"),
    ("import itertools\nn = sum(1 for _ in itertools.product(range(10), repeat=10))", "loop iterations"),
    ("import itertools\nxs = list(itertools.product(range(10), repeat=10))", "loop iterations"),
    ("import itertools\nxs = itertools.product([1], repeat=10**9)", "list would have"),
    ("import itertools\nxs = list(itertools.cycle([1, 2]))", "loop iterations"),
    ("import itertools\nxs = list(itertools.repeat(0))", "loop iterations"),
    ("import itertools\nxs = list(itertools.permutations(range(12)))", "loop iterations"),
    ("import functools\ns = functools.reduce(max, range(10**12))", "loop iterations"),
    ("import random\nk = random.choices([1], k=10**9)", "list would have"),
    ("import collections\nc = collections.Counter(range(10**10))", "list would have"),
    ("import numpy as np\nx = np.random.rand(10**5, 10**5)", "over the limit"),
    ("import time\ntime.sleep(10**6)", "default time limit"),
])
def test_facades_are_bounded(source, words):
    caught = fails(source, LimitError, max_steps=100_000)
    assert words in caught.message


def test_sleep_counts_against_the_timeout():
    from gradcli.lang.interpreter import Interpreter
    source = "import time\ntry:\n    time.sleep(5)\nexcept BaseException:\n    pass"
    with pytest.raises(LimitError) as caught:
        Interpreter(source, timeout=1.0).run(parse_program(source))
    assert caught.value.message.startswith("time.sleep(5) would wait past the time limit: ")
    assert caught.value.line == 3


def test_no_except_catches_a_facade_limit():
    source = "import itertools\ntry:\n    xs = list(itertools.count())\nexcept BaseException:\n    xs = []"
    assert "loop iterations" in fails(source, LimitError, max_steps=1000).message


def test_math_is_complete_and_pythons():
    names = [n for n in dir(math) if not n.startswith("_") and callable(getattr(math, n))]
    ran = run("import math\nfrom math import *\n" if False else "import math\nr = [math.sqrt(2), math.factorial(20), "
              "math.comb(10, 3), math.perm(5, 2), math.gcd(12, 18), math.lcm(4, 6), math.isqrt(99), math.log(8, 2),"
              " math.fsum([0.1] * 10), math.prod([1, 2, 3, 4]), math.dist([0, 0], [3, 4]), math.erfc(0.5),"
              " math.isclose(1.0, 1.0 + 1e-12), math.copysign(1, -0.0), math.ldexp(1, 4), math.frexp(8.0)]")
    assert ran["r"] == [math.sqrt(2), math.factorial(20), math.comb(10, 3), math.perm(5, 2), 6, 12, 9, math.log(8, 2),
                        math.fsum([0.1] * 10), 24, 5.0, math.erfc(0.5), True, -1.0, 16.0, (0.5, 4)]
    from gradcli.lang.stdlib.math_module import MATH
    assert set(names) <= set(MATH.members)
    assert "math domain error" in fails("import math\nx = math.sqrt(-1)").message


def test_itertools_match_cpython():
    ran = run("import itertools as it\na = list(it.islice(it.count(5, 2), 4))\nb = list(it.product('ab', [0, 1]))\n"
              "c = list(it.combinations(range(4), 2))\nd = list(it.permutations('abc', 2))\n"
              "e = list(it.accumulate([1, 2, 3, 4]))\nf = list(it.zip_longest([1, 2], 'abc', fillvalue=0))\n"
              "g = list(it.chain([1], (2, 3), 'x'))\nh = list(it.islice(it.cycle('ab'), 5))\n"
              "i = list(it.repeat(7, 3))\nj = list(it.chain.from_iterable([[1], [2, 3]]))\n"
              "k = list(it.accumulate([1, 2, 3], lambda a, b: a * b))\nl = list(it.pairwise([1, 2, 3]))")
    assert ran["a"] == list(itertools.islice(itertools.count(5, 2), 4))
    assert ran["b"] == list(itertools.product("ab", [0, 1]))
    assert ran["c"] == list(itertools.combinations(range(4), 2))
    assert ran["d"] == list(itertools.permutations("abc", 2))
    assert ran["e"] == list(itertools.accumulate([1, 2, 3, 4]))
    assert ran["f"] == list(itertools.zip_longest([1, 2], "abc", fillvalue=0))
    assert ran["g"] == [1, 2, 3, "x"] and ran["h"] == list("ababa") and ran["i"] == [7, 7, 7]
    assert ran["j"] == [1, 2, 3] and ran["k"] == [1, 2, 6] and ran["l"] == [(1, 2), (2, 3)]


def test_functools_and_operator():
    ran = run("import functools, operator\nr = functools.reduce(operator.mul, [1, 2, 3, 4])\n"
              "p = functools.partial(pow, 2)\nv = p(10)\ncalls = []\n@functools.lru_cache(maxsize=None)\n"
              "def fib(n):\n    calls.append(n)\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nf = fib(30)\n"
              "def deco(fn):\n    @functools.wraps(fn)\n    def inner(*a):\n        return fn(*a)\n    return inner\n"
              "@deco\ndef named():\n    return 1\nn = named.__name__\nget = operator.itemgetter(1)\ng = get([5, 6])")
    assert ran["r"] == 24 and ran["v"] == 1024 and ran["f"] == 832040 and len(ran["calls"]) == 31
    assert ran["n"] == "named" and ran["g"] == 6


def test_collections_match_cpython():
    ran = run("from collections import Counter, defaultdict, deque, namedtuple, OrderedDict\n"
              "c = Counter('mississippi')\nmc = c.most_common(2)\nmissing = c['z']\ndd = defaultdict(int)\n"
              "for w in 'a b a'.split():\n    dd[w] += 1\nq = deque([1, 2, 3], maxlen=3)\nq.append(4)\nq.appendleft(0)\n"
              "ql = list(q)\nP = namedtuple('P', 'x y')\np = P(1, 2)\ns = p.x + p.y\nod = OrderedDict([('a', 1), ('b', 2)])\n"
              "od.move_to_end('a')\nks = list(od)\nshown = [repr(c), repr(p), repr(q)]")
    ref = collections.Counter("mississippi")
    assert ran["mc"] == ref.most_common(2) and ran["missing"] == 0
    assert dict(ran["dd"]) == {"a": 2, "b": 1}
    q = collections.deque([1, 2, 3], maxlen=3)
    q.append(4)
    q.appendleft(0)
    assert ran["ql"] == list(q) and ran["s"] == 3 and ran["ks"] == ["b", "a"]
    assert ran["shown"] == [repr(ref), "P(x=1, y=2)", repr(q)]


def test_copy_deepcopies_tensors_as_pytorch():
    ran = run("import torch, copy\nw = torch.tensor([1.0, 2.0], requires_grad=True)\n(w * 3).sum().backward()\n"
              "v = copy.deepcopy(w)\nsame = v is w\nrg = v.requires_grad\ng = v.grad.tolist()\nv.data[0] = 5\n"
              "w0 = w[0].item()\nd = copy.deepcopy({'a': [w, w]})\nshared = d['a'][0] is d['a'][1]\n"
              "model = torch.nn.Linear(2, 1)\nm2 = copy.deepcopy(model)\nwith torch.no_grad():\n"
              "    m2.weight.fill_(0.0)\ndiffer = model.weight.sum().item() != 0.0")
    assert ran["same"] is False and ran["rg"] is True and ran["g"] == [3.0, 3.0] and ran["w0"] == 1.0
    assert ran["shared"] is True and ran["differ"] is True
    caught = fails("import torch, copy\nw = torch.ones(2, requires_grad=True)\ny = copy.deepcopy(w * 2)")
    assert caught.message.startswith("Only Tensors created explicitly by the user (graph leaves) support the deepcopy")


def test_copy_deepcopy_message_is_pytorchs():
    torch = pytest.importorskip("torch")
    import copy
    with pytest.raises(RuntimeError) as caught:
        copy.deepcopy(torch.ones(2, requires_grad=True) * 2)
    assert str(caught.value).startswith("Only Tensors created explicitly by the user (graph leaves) support the "
                                        "deepcopy protocol at the moment.")


def test_numpy_random_gives_numpys_numbers():
    ran = run("import numpy as np\nnp.random.seed(0)\na = np.random.rand(3)\nb = np.random.randn(2, 2)\n"
              "c = np.random.randint(0, 10, size=4)\nd = np.random.uniform(-1, 1, 2)\ne = np.random.normal(0, 1, 2)\n"
              "f = np.random.choice([1, 2, 3], 2)\ng = np.random.permutation(5)\nxs = [1, 2, 3, 4]\nnp.random.shuffle(xs)\n"
              "rng = np.random.default_rng(42)\nh = rng.random(2)\ni = rng.integers(0, 100, 3)\nj = rng.normal(size=2)\n"
              "k = rng.choice(10, 3, replace=False)\nl = rng.permutation(4)\nm = rng.uniform(0, 1, 2)")
    ref = np.random.RandomState(0)
    for name, expected in (("a", ref.rand(3)), ("b", ref.randn(2, 2)), ("c", ref.randint(0, 10, size=4)),
                           ("d", ref.uniform(-1, 1, 2)), ("e", ref.normal(0, 1, 2)), ("f", ref.choice([1, 2, 3], 2)),
                           ("g", ref.permutation(5))):
        assert np.array_equal(ran[name], expected), name
    xs = [1, 2, 3, 4]
    ref.shuffle(xs)
    assert ran["xs"] == xs
    rng = np.random.default_rng(42)
    for name, expected in (("h", rng.random(2)), ("i", rng.integers(0, 100, 3)), ("j", rng.normal(size=2)),
                           ("k", rng.choice(10, 3, replace=False)), ("l", rng.permutation(4)),
                           ("m", rng.uniform(0, 1, 2))):
        assert np.array_equal(ran[name], expected), name
    assert "np.random.randint" in fails("import numpy as np\nx = np.random.randint(5, 2)", ArgumentError).message


def test_small_modules():
    ran = run("from __future__ import annotations\nimport pprint, string, numbers, typing, unicodedata, warnings, time\n"
              "pprint.pprint({'b': 1, 'a': list(range(30))})\nd = string.ascii_lowercase[:3]\n"
              "n = [isinstance(1, numbers.Number), isinstance(1.5, numbers.Integral), isinstance('x', numbers.Real)]\n"
              "Vec = typing.List[float]\ndef f(x: typing.Optional[int] = None) -> Vec:\n    return [1.0]\n"
              "u = unicodedata.normalize('NFKC', 'ﬁ')\ncat = unicodedata.category('A')\n"
              "warnings.filterwarnings('ignore')\nwarnings.warn('slow', UserWarning)\nt = time.time() > 0")
    import pprint
    assert ran.printed[0] == pprint.pformat({'b': 1, 'a': list(range(30))})
    assert ran.printed[1] == "UserWarning: slow"
    assert ran["d"] == "abc" and ran["n"] == [True, False, False] and ran["u"] == "fi" and ran["cat"] == "Lu"


def test_argparse_gives_the_defaults_and_refuses_help():
    source = ("import argparse\np = argparse.ArgumentParser(description='train')\np.add_argument('--lr', type=float, "
              "default=0.01)\np.add_argument('--epochs', type=int, default=3)\np.add_argument('--verbose', "
              "action='store_true')\nargs = p.parse_args()\nr = (args.lr, args.epochs, args.verbose)\n"
              "other = p.parse_args(['--lr', '0.5'])\nlr = other.lr")
    ran = run(source)
    assert ran["r"] == (0.01, 3, False) and ran["lr"] == 0.5
    assert "argparse" in fails(source + "\np.parse_args(['--help'])", ArgumentError).message
    assert "could not convert 'x' to float" in fails(source + "\np.parse_args(['--lr', 'x'])", ArgumentError).message
    assert "attribute '_parser'" in str(pytest.raises(NotAllowedError, parse_program, "p._parser").value)


def test_tqdm_bars_iterate_what_they_wrap_and_draw_nothing():
    ran = run("from tqdm import tqdm, trange\nfrom tqdm.auto import tqdm as auto\nimport tqdm as T\ntotal = 0\n"
              "bar = tqdm(range(5), desc='train')\nfor i in bar:\n    total += i\n    bar.set_description(f'step {i}')\n"
              "    bar.set_postfix(loss=0.1 * i)\nfor j in trange(3):\n    total += j\n"
              "for k in auto([1, 2], leave=False):\n    total += k\ncounter = T.tqdm(total=10)\ncounter.update(4)\n"
              "counter.close()\ntqdm.write(f'done {total} {counter.n} {bar.n} {len(bar)}')\n")
    assert ran.printed == ["done 16 4 5 5"] and ran.shown == []


def test_a_tqdm_loop_is_bounded_and_its_insides_refused():
    with pytest.raises(LimitError):
        run("import itertools\nfrom tqdm import tqdm\nfor i in tqdm(itertools.count()):\n    pass\n", max_steps=200)
    assert "attribute 'iterable'" in fails("from tqdm import tqdm\nb = tqdm([1])\nx = b.iterable\n").message


def test_deepcopy_of_a_state_dict_keeps_the_best_weights_apart():
    """`best = copy.deepcopy(model.state_dict())`, PyTorch's transfer-learning tutorial's idiom: an
    OrderedDict of new tensors, so training on does not change it."""
    ran = run("import copy\nimport torch\nimport torch.nn as nn\nm = nn.Linear(2, 1)\n"
              "best = copy.deepcopy(m.state_dict())\nwith torch.no_grad():\n    m.weight.add_(1.0)\n"
              "kind = type(best).__name__\nkeys = list(best)\nmoved = (m.weight - best['weight']).tolist()\n")
    assert (ran["kind"], ran["keys"], ran["moved"]) == ("OrderedDict", ["weight", "bias"], [[1.0, 1.0]])


def test_the_collections_types_are_pythons():
    printed = run("import collections\nimport torch.nn as nn\nprint(type(nn.Linear(1, 1).state_dict()))\n"
                  "print(type(collections.defaultdict(int)), type(collections.Counter()), type(collections.deque()))\n"
                  "print(isinstance(collections.OrderedDict(), dict), isinstance({}, collections.OrderedDict))\n").printed
    assert printed == ["<class 'collections.OrderedDict'>",
                       "<class 'collections.defaultdict'> <class 'collections.Counter'> <class 'collections.deque'>",
                       "True False"]
