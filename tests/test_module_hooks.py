"""`register_full_backward_hook` / `register_full_backward_pre_hook`: PyTorch's grad_input (the module's tensor
inputs), grad_output, call order, replacement, handles and errors; against PyTorch where it is installed, and
by hand; and `run --check` never fails a correct program whose module hook changes a gradient."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import BackwardError, ShapeError
from tests.language_helpers import fails, oracle, run

ORDER = '''
import torch
import torch.nn as nn

class Scale(nn.Module):
    def forward(self, x, k, y):
        seen.append(x.grad_fn.name() if x.grad_fn is not None else "leaf")
        return x * k * y, x + 1

seen = []
m = Scale()
def full(module, grad_input, grad_output):
    seen.append("full")
    seen.append([None if g is None else g.tolist() for g in grad_input])
    seen.append([None if g is None else g.tolist() for g in grad_output])
    return tuple(None if g is None else g * 2 for g in grad_input)
def pre(module, grad_output):
    seen.append("pre")
handle = m.register_full_backward_hook(full)
m.register_full_backward_pre_hook(pre)
x = torch.tensor([1., 2.], requires_grad=True)
y = torch.tensor([3., 4.])
x.register_hook(lambda g: seen.append("x hook"))
a, b = m(x, 3, y)
a.register_hook(lambda g: seen.append("a hook"))
(a.sum() + b.sum()).backward()
first = x.grad.tolist()
handle.remove()
x.grad = None
a, b = m(x, 3, y)
a.sum().backward()
second = x.grad.tolist()
'''


def test_grad_input_is_the_inputs_gradient_and_hooks_run_in_pytorchs_order():
    ran = run(ORDER)
    # a = 3·x·y, b = x + 1: ∂/∂x = 3y + 1 = [10, 13], doubled by the hook; k is no tensor, y needs no grad (zeros)
    assert ran["seen"] == ["BackwardHookFunctionBackward", "a hook", "pre", "full", [[10.0, 13.0], None, [0.0, 0.0]],
                           [[1.0, 1.0], [1.0, 1.0]], "x hook", "BackwardHookFunctionBackward", "pre", "x hook"]
    assert ran["first"] == [20.0, 26.0]
    assert ran["second"] == [9.0, 12.0]  # the removed hook no longer doubles


def test_the_order_and_values_are_pytorchs():
    torch = pytest.importorskip("torch")  # noqa: F841  (an oracle test)
    namespace = oracle(ORDER)
    ran = run(ORDER)
    for name in ("seen", "first", "second"):
        assert ran[name] == namespace[name], name


PARTS = '''
import torch
import torch.nn as nn

class Two(nn.Module):
    def forward(self, x, unused):
        return x * 2, torch.ones(2), 7

log = []
m = Two()
m.register_full_backward_pre_hook(lambda mod, go: log.append(["pre", [None if g is None else g.tolist() for g in go]]))
m.register_full_backward_hook(lambda mod, gi, go: log.append([[None if g is None else g.tolist() for g in gi],
                                                              [None if g is None else g.tolist() for g in go]]))
x = torch.tensor([1., 2.], requires_grad=True)
u = torch.tensor([1.], requires_grad=True)
a, b, c = m(x, u)
a.sum().backward()
u_grad = u.grad.tolist()
b_plain = b.grad_fn is None and not b.requires_grad

torch.manual_seed(0)
lin = nn.Linear(2, 2)
lin.register_full_backward_hook(lambda mod, gi, go: log.append(["lin", gi[0].tolist(), go[0].tolist()]))
z = lin(lin(torch.ones(1, 2, requires_grad=True)))
z.sum().backward()

outputs_only = nn.Linear(2, 1)
outputs_only.register_full_backward_hook(lambda mod, gi, go: log.append(["no input grad", gi, go[0].tolist()]))
outputs_only(torch.ones(1, 2)).sum().backward()

pre = nn.Linear(2, 1)
pre.register_full_backward_pre_hook(lambda mod, go: (go[0] * 10,))
xx = torch.ones(1, 2, requires_grad=True)
pre(xx).sum().backward()
pre_grads = [xx.grad.tolist(), pre.weight.grad.tolist()]
'''


def test_unused_inputs_outputs_that_need_no_grad_repeated_calls_and_no_input_grad_as_pytorch():
    torch = pytest.importorskip("torch")  # noqa: F841  (an oracle test)
    namespace = oracle(PARTS)
    ran = run(PARTS)
    for name in ("log", "u_grad", "b_plain", "pre_grads"):
        assert _same(ran[name], namespace[name]), name


def _same(a, b) -> bool:
    """Equal structure (lists, tuples, None, strings) with numbers equal to float32 precision."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return bool(np.isclose(a, b, rtol=1e-6, atol=1e-7))
    return a == b


def test_unused_input_gets_zeros_and_outputs_only_hook_sees_none_by_hand():
    ran = run(PARTS)
    assert ran["log"][0] == ["pre", [[1.0, 1.0], None, None]]
    assert ran["log"][1] == [[[2.0, 2.0], [0.0]], [[1.0, 1.0], None, None]]
    assert ran["u_grad"] == [0.0]  # PyTorch materializes the unused input's gradient
    assert ran["log"][4] == ["no input grad", (None,), [[1.0]]]
    w = ran["pre"].weight._data
    assert np.allclose(ran["pre_grads"][0], 10 * w)


def test_no_hooks_fire_under_no_grad_and_the_graph_names_pytorchs_node():
    ran = run('''
import torch
import torch.nn as nn
calls = []
lin = nn.Linear(2, 1)
lin.register_full_backward_hook(lambda *a: calls.append(1))
x = torch.ones(1, 2, requires_grad=True)
with torch.no_grad():
    y0 = lin(x)
y = lin(x)
name = y.grad_fn.name()
below = y.grad_fn.next_functions[0][0].name()
y.sum().backward()
''')
    assert ran["calls"] == [1]
    assert (ran["name"], ran["below"]) == ("BackwardHookFunctionBackward", "AddmmBackward0")
    assert ran["y0"].grad_fn is None


@pytest.mark.parametrize("hook, kind, message", [
    ("lambda m, gi, go: (gi[0], gi[0])", BackwardError,
     "Backward hook returned an invalid number of grad_input, got 2, but expected 1"),
    ("lambda m, gi, go: (torch.ones(3),)", ShapeError, "hook 'hook' has changed the size of value"),
    ("lambda m, gi, go: 5", BackwardError, "object of type 'int' has no len()"),
    ("lambda m, gi, go: ('g',)", BackwardError, "a backward hook returned a str where a gradient belongs"),
])
def test_a_hook_returning_the_wrong_thing_is_pytorchs_error(hook, kind, message):
    error = fails(f'''
import torch
import torch.nn as nn
lin = nn.Linear(2, 1)
lin.register_full_backward_hook({hook})
lin(torch.ones(1, 2, requires_grad=True)).sum().backward()
''', kind)
    assert error.message == message


def test_pre_hook_length_and_no_input_grad_replacement_are_pytorchs_errors():
    error = fails('''
import torch
lin = torch.nn.Linear(2, 1)
lin.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
lin(torch.ones(1, 2, requires_grad=True)).sum().backward()
''', BackwardError)
    assert error.message == "Backward pre hook returned an invalid number of grad_output, got 2, but expected 1"
    error = fails('''
import torch
lin = torch.nn.Linear(2, 1)
lin.register_full_backward_hook(lambda m, gi, go: (torch.ones(1, 2),))
lin(torch.ones(1, 2)).sum().backward()
''', BackwardError)
    assert error.message.startswith("Backward hook for Modules where no input requires gradient should always")


def test_a_runaway_hook_stops_at_the_step_limit_inside_the_hook():
    from gradcli.errors import LimitError
    error = fails('''
import torch
lin = torch.nn.Linear(2, 1)
def hook(m, gi, go):
    while True:
        pass
lin.register_full_backward_hook(hook)
lin(torch.ones(1, 2, requires_grad=True)).sum().backward()
''', LimitError, max_steps=10_000)
    assert error.line in (5, 6)


def test_prepend_puts_a_hook_first_and_a_non_function_is_refused():
    ran = run('''
import torch
order = []
lin = torch.nn.Linear(2, 1)
lin.register_full_backward_hook(lambda *a: order.append("second"))
lin.register_full_backward_hook(lambda *a: order.append("first"), prepend=True)
lin(torch.ones(1, 2, requires_grad=True)).sum().backward()
''')
    assert ran["order"] == ["first", "second"]
    error = fails("import torch\ntorch.nn.Linear(2, 1).register_full_backward_hook(3)\n", BackwardError)
    assert "takes a function" in error.message


DOUBLED = '''import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return torch.tanh(self.fc(x))

torch.manual_seed(0)
net = Net()
{hook}
x = torch.randn(4, 3, requires_grad=True)
loss = (net(x) ** 2).sum()
loss.backward()
'''


@pytest.mark.parametrize("hook", [
    "net.register_full_backward_hook(lambda m, gi, go: (gi[0] * 2,))",
    "net.register_full_backward_pre_hook(lambda m, go: (go[0] * 3,))",
    "",
])
def test_run_check_passes_a_correct_program_with_a_gradient_changing_module_hook(cli, tmp_path, hook):
    script = tmp_path / "net.py"
    script.write_text(DOUBLED.format(hook=hook))
    result = cli("run", str(script), "--check")
    assert result.exit_code == 0, result.stdout
    assert "1 ok, 0 failed" in result.stdout
    if hook:
        assert "below the hook at line 14" in " ".join(result.stdout.split())


def test_the_doubling_hook_doubles_x_grad_exactly():
    base = run(DOUBLED.format(hook=""))
    doubled = run(DOUBLED.format(hook="net.register_full_backward_hook(lambda m, gi, go: (gi[0] * 2,))"))
    assert np.allclose(doubled["x"].grad._data, 2 * base["x"].grad._data)
    assert np.allclose(doubled["net"].fc.weight.grad._data, base["net"].fc.weight.grad._data)
