"""nn.RNN, nn.LSTM, nn.GRU, their cells and torch.nn.utils.rnn's packing, against torch itself (the same program
run by both: seeded parameters, outputs, gradients, printed text) and against PyTorch's errors."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import GradcliError
from language_helpers import oracle, run, torch_printed

HEAD = "import torch\nimport torch.nn as nn\nfrom torch.nn.utils.rnn import pack_padded_sequence, " \
       "pad_packed_sequence, pad_sequence, pack_sequence\n"

STACKED = HEAD + """
torch.set_default_dtype(torch.{dtype})
torch.manual_seed(0)
m = nn.{cls}(3, 4, num_layers=2, dropout=0.5, bidirectional=True, batch_first=True)
x = torch.randn(2, 5, 3, requires_grad=True)
h0 = torch.randn(4, 2, 4)
state = (h0, torch.randn(4, 2, 4)) if "{cls}" == "LSTM" else h0
out, hn = m(x, state)
hn = hn[0] if "{cls}" == "LSTM" else hn
(out.pow(2).sum() + hn.sum()).backward()
values = [out.tolist(), hn.tolist()]
grads = [x.grad.tolist()] + [p.grad.tolist() for p in m.parameters()]
names = [n for n, _ in m.named_parameters()]
text = str(m)
nodes = [out.grad_fn.name(), hn.grad_fn.name()]
torch.set_default_dtype(torch.float32)
"""


def _same(mine, theirs, dtype):
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert np.allclose(np.asarray(mine, dtype=float), np.asarray(theirs, dtype=float), atol=tol, rtol=tol)


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_stacked_bidirectional_layers_match_torch(cls, dtype):
    """Two layers, both directions, batch_first, dropout between the layers (training) and initial states:
    PyTorch's parameters, draws, values and gradients."""
    source = STACKED.format(cls=cls, dtype=dtype)
    mine, torch_ = run(source), oracle(source)
    assert mine["names"] == torch_["names"]
    assert mine["text"] == torch_["text"]
    assert mine["nodes"] == [type(torch_["out"].grad_fn).__name__, type(torch_["hn"].grad_fn).__name__]
    for a, b in zip(mine["values"] + mine["grads"], torch_["values"] + torch_["grads"]):
        _same(a, b, dtype)


def test_the_first_lstm_layer_names_its_parameters_as_pytorch():
    ran = run(HEAD + "torch.manual_seed(0)\nlstm = nn.LSTM(3, 5, batch_first=True)\n"
                     "out, (h, c) = lstm(torch.zeros(2, 4, 3))\nout.sum().backward()\n"
                     "shapes = (tuple(out.shape), tuple(h.shape), tuple(lstm.weight_ih_l0.grad.shape))\n"
                     "w = lstm.weight_hh_l0[0, :3].tolist()\n")
    assert ran["shapes"] == ((2, 4, 5), (1, 2, 5), (20, 3))
    # recorded from torch 2.13: U(±1/√5) drawn weight_ih_l0 first, then weight_hh_l0
    assert np.allclose(ran["w"], [0.20235209167003632, 0.17985159158706665, -0.264908105134964], atol=1e-7)


PROJ_AND_CELLS = HEAD + """
torch.manual_seed(1)
p = nn.LSTM(3, 4, proj_size=2, num_layers=2)
x = torch.randn(5, 3, requires_grad=True)
o, (h, c) = p(x)
shapes = [tuple(t.shape) for t in p.parameters()] + [tuple(o.shape), tuple(h.shape), tuple(c.shape)]
cells = [nn.GRUCell(3, 2), nn.LSTMCell(3, 2, bias=False), nn.RNNCell(3, 2, nonlinearity='relu')]
h1 = cells[0](x[0])
h2, c2 = cells[1](x[:2], (torch.ones(2, 2), torch.zeros(2, 2)))
h3 = cells[2](x[:2])
(o.sum() + h1.sum() + h2.sum() * c2.sum() + h3.sum()).backward()
values = [o.tolist(), h1.tolist(), h2.tolist(), c2.tolist(), h3.tolist(), x.grad.tolist()]
texts = [str(p)] + [str(c) for c in cells]
nodes = [h1.grad_fn.name(), h2.grad_fn.name(), c2.grad_fn.name(), h3.grad_fn.name(), o.grad_fn.name()]
"""


def test_projections_unbatched_input_and_cells_match_torch():
    mine, torch_ = run(PROJ_AND_CELLS), oracle(PROJ_AND_CELLS)
    assert mine["shapes"] == torch_["shapes"]
    assert mine["texts"] == torch_["texts"] == ["LSTM(3, 4, proj_size=2, num_layers=2)", "GRUCell(3, 2)",
                                                "LSTMCell(3, 2, bias=False)", "RNNCell(3, 2, nonlinearity=relu)"]
    assert mine["nodes"] == [n.name() for n in (torch_["h1"].grad_fn, torch_["h2"].grad_fn, torch_["c2"].grad_fn,
                                                 torch_["h3"].grad_fn, torch_["o"].grad_fn)]
    for a, b in zip(mine["values"], torch_["values"]):
        _same(a, b, "float32")


PACKED = HEAD + """
torch.manual_seed(2)
g = nn.GRU(3, 3, batch_first=True, bidirectional=True)
parts = [torch.randn(2, 3, requires_grad=True), torch.randn(4, 3, requires_grad=True), torch.randn(1, 3, requires_grad=True)]
padded = pad_sequence(parts, batch_first=True, padding_value=-1.0)
packed = pack_padded_sequence(padded, torch.tensor([2, 4, 1]), batch_first=True, enforce_sorted=False)
po, ph = g(packed)
out, lengths = pad_packed_sequence(po, batch_first=True, total_length=5)
(out.sum() + ph.pow(2).sum()).backward()
values = [padded.tolist(), packed.data.tolist(), packed.batch_sizes.tolist(), packed.sorted_indices.tolist(),
          out.tolist(), lengths.tolist(), ph.tolist()] + [p.grad.tolist() for p in parts]
lstm = nn.LSTM(3, 2)
o2, (h2, c2) = lstm(pack_sequence([parts[1], parts[0]]))
again = [o2.data.tolist(), o2.batch_sizes.tolist(), h2.tolist(), c2.tolist()]
"""


def test_packed_batches_match_torch():
    mine, torch_ = run(PACKED), oracle(PACKED)
    for a, b in zip(mine["values"] + mine["again"], torch_["values"] + torch_["again"]):
        _same(a, b, "float32")
    assert mine["lengths"].dtype == np.int64


def test_printed_packed_sequence_reads_as_pytorch():
    source = HEAD + "p = pack_padded_sequence(torch.tensor([[1.0, 2.0], [3.0, 0.0]]), [2, 1], batch_first=True)\n" \
                    "print(p)\n"
    assert "\n".join(run(source).printed).splitlines() == torch_printed(source)


@pytest.mark.parametrize("source, words", [
    ("nn.LSTM(3, 4)(torch.ones(2, 2, 5))", "input.size(-1) must be equal to input_size. Expected 3, got 5"),
    ("nn.LSTM(3, 4)(torch.ones(2, 3))[0].sum()", None),
    ("nn.GRU(3, 4)(torch.ones(2, 2, 2, 3))", "GRU: Expected input to be 2D or 3D, got 4D instead"),
    ("nn.GRU(3, 4)(torch.ones(2, 2, 3), torch.ones(1, 3, 4))", "Expected hidden size (1, 2, 4), got [1, 3, 4]"),
    ("nn.LSTM(3, 4)(torch.ones(2, 2, 3), (torch.ones(1, 2, 4), torch.ones(1, 2, 5)))",
     "Expected hidden[1] size (1, 2, 4), got [1, 2, 5]"),
    ("nn.RNN(3, 4)(torch.ones(2, 2, 3), torch.ones(2, 4))", "For batched 3-D input, hx should also be 3-D but got 2-D"),
    ("nn.LSTM(3, 4, dropout=1.5)", "dropout should be a number in range [0, 1]"),
    ("nn.RNN(3, 4, nonlinearity='sigmoid')", "Unknown nonlinearity 'sigmoid'. Select from 'tanh' or 'relu'."),
    ("nn.GRU(3, 4, proj_size=2)", "proj_size"),
    ("nn.LSTM(3, 4, proj_size=4)", "proj_size has to be smaller than hidden_size"),
    ("nn.LSTM(3, 0)", "hidden_size must be greater than zero"),
    ("nn.LSTMCell(3, 4)(torch.ones(2, 5))", "input has inconsistent input_size: got 5 expected 3"),
    ("nn.LSTM(3, 4)(torch.ones(2, 2, 3, dtype=torch.float64))", "input must have the type float32"),
    ("pack_padded_sequence(torch.ones(3, 2, 1), [1, 3])", "`lengths` array must be sorted in decreasing order"),
    ("pack_padded_sequence(torch.ones(3, 2, 1), [3, 0])", "Length of all samples has to be greater than 0"),
    ("pad_packed_sequence(pack_sequence([torch.ones(3)]), total_length=2)", "Expected total_length to be at least"),
])
def test_bad_recurrent_calls_are_pytorch_errors(source, words):
    program = HEAD + f"y = {source}\n"
    if words is None:
        assert run(program)["y"].shape == ()
        return
    with pytest.raises(GradcliError) as info:
        run(program)
    assert words in info.value.message
