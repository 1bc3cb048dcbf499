"""A program's autograd.Function as PyTorch records it: a backward returning None leaves `.grad` None (not
zeros) where no other path adds, and a Function with several outputs is one node (`y1.grad_fn is y2.grad_fn`,
edges numbered by output); by hand and against PyTorch (the same text run by torch)."""
from __future__ import annotations

import pytest

from tests.language_helpers import oracle, run

NONE = '''
import torch

class MulNone(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y, k):
        ctx.save_for_backward(x, y)
        ctx.k = k
        return x * y * k

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        seen.append(list(ctx.needs_input_grad))
        gx = g * y * ctx.k if ctx.needs_input_grad[0] else None
        return gx, None, None

seen = []
x = torch.tensor([1., 2.], requires_grad=True)
y = torch.tensor([3., 4.], requires_grad=True)
MulNone.apply(x, y, 2.0).sum().backward()
first = [x.grad.tolist(), y.grad]
x.grad = None
(MulNone.apply(x, y, 2.0).sum() + (y * 5).sum()).backward()
second = [x.grad.tolist(), y.grad.tolist()]
w = MulNone.apply(torch.tensor([1., 1.]), y, 1.0)
w.sum().backward()
third = y.grad.tolist()
y2 = torch.tensor([1., 2.], requires_grad=True)
MulNone.apply(y2, y2, 1.0).sum().backward()
fourth = y2.grad.tolist()
a = torch.tensor([1., 2.], requires_grad=True)
unused = torch.autograd.grad(MulNone.apply(torch.ones(2, requires_grad=True), a, 1.0).sum(), a, allow_unused=True)
result = [first, second, third, fourth, seen, unused]
'''


def test_a_backward_returning_none_leaves_grad_none_by_hand():
    ran = run(NONE)
    first, second, third, fourth, seen, unused = ran["result"]
    assert first == [[6.0, 8.0], None]  # y's gradient: None, not zeros
    assert second == [[6.0, 8.0], [5.0, 5.0]]  # another path still adds
    assert third == [5.0, 5.0]  # nothing new reached y
    assert fourth == [1.0, 2.0]  # the same tensor twice: only the first position's gradient (y·k)
    assert seen == [[True, True, False], [True, True, False], [False, True, False], [True, True, False],
                    [True, True, False]]
    assert unused == (None,)


def test_a_backward_returning_none_is_pytorchs():
    torch = pytest.importorskip("torch")  # noqa: F841  (an oracle test)
    namespace = oracle(NONE)
    assert repr(run(NONE)["result"]) == repr(namespace["result"])


TWO = '''
import torch

class Two(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2, x ** 2

    @staticmethod
    def backward(ctx, g1, g2):
        x, = ctx.saved_tensors
        got.append([g1.tolist(), g2.tolist()])
        return g1 * 2 + g2 * 2 * x

got = []
x = torch.tensor([1., 3.], requires_grad=True)
a, b = Two.apply(x)
shared = a.grad_fn is b.grad_fn
names = [a.grad_fn.name(), [f.name() for f, _ in b.grad_fn.next_functions]]
s = a + b
edges = [(f.name(), k) for f, k in s.grad_fn.next_functions]
same = s.grad_fn.next_functions[0][0] is s.grad_fn.next_functions[1][0] is a.grad_fn
s.sum().backward()
both = x.grad.tolist()
x.grad = None
a, b = Two.apply(x)
a.sum().backward()
one = x.grad.tolist()
result = [shared, names, edges, same, both, one, got]
'''


def test_a_function_with_two_outputs_is_one_node_with_numbered_edges_by_hand():
    shared, names, edges, same, both, one, got = run(TWO)["result"]
    assert shared and same
    assert names == ["TwoBackward", ["torch::autograd::AccumulateGrad"]]
    assert edges == [("TwoBackward", 0), ("TwoBackward", 1)]
    assert both == [2 + 2 * 1.0, 2 + 2 * 3.0]  # d(2x + x²)/dx
    assert one == [2.0, 2.0]
    assert got == [[[1.0, 1.0], [1.0, 1.0]], [[1.0, 1.0], [0.0, 0.0]]]  # the unused output's gradient: zeros


def test_a_function_with_two_outputs_is_pytorchs():
    torch = pytest.importorskip("torch")  # noqa: F841  (an oracle test)
    namespace = oracle(TWO)
    assert repr(run(TWO)["result"]) == repr(namespace["result"])


MARKS = """import torch
log = []
class Sort(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        sorted_x, idx = x.sort()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(x, idx)
        return sorted_x, idx

    @staticmethod
    def backward(ctx, g1, g2):
        x, idx = ctx.saved_tensors
        grad_input = torch.zeros_like(x)
        grad_input[idx] = g1
        return grad_input

x = torch.tensor([3., 1., 2.], requires_grad=True)
a, b = Sort.apply(x)
log.append([b.requires_grad, a.requires_grad])
(a * torch.tensor([1., 2., 3.])).sum().backward()
log.append([x.grad.tolist()])

class SimpleFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        return x.clone(), x.clone()

    @staticmethod
    def backward(ctx, g1, g2):
        x, = ctx.saved_tensors
        grad_input = torch.zeros_like(x)
        if g1 is not None:
            grad_input += g1
        if g2 is not None:
            grad_input += g2
        log.append(g2 is None)
        return grad_input

a = torch.tensor(1., requires_grad=True)
b, _ = SimpleFunc.apply(a)
b.backward()
log.append([a.grad.item()])

class Inplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x
    @staticmethod
    def backward(ctx, g):
        return g * 2
w = torch.tensor([1., 2.], requires_grad=True)
z = w * 1
out = Inplace.apply(z)
log.append([out is z, out.tolist()])
out.sum().backward()
log.append([w.grad.tolist()])
try:
    Inplace.apply(w)
except RuntimeError as e:
    log.append(str(e))
class Wrong(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return g, g
try:
    Wrong.apply(torch.ones(2, requires_grad=True)).sum().backward()
except RuntimeError as e:
    log.append(str(e))
class WrongShape(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return torch.ones(3)
try:
    WrongShape.apply(torch.ones(2, requires_grad=True)).sum().backward()
except RuntimeError as e:
    log.append(str(e))
"""


def test_marks_materialize_and_pytorchs_error_texts_for_a_function_are_pytorchs():
    torch = pytest.importorskip("torch")  # noqa: F841  (an oracle test)
    namespace = oracle(MARKS)
    ran = run(MARKS)["log"]
    assert ran == namespace["log"]
    assert ran[-3] == "a leaf Variable that requires grad has been used in an in-place operation."
