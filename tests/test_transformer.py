"""Attention and transformers (F.scaled_dot_product_attention, nn.MultiheadAttention, the encoder and decoder layers
and stacks, nn.Transformer) against torch itself: the same seeded program run by both, values, gradients, dropout
draws in training, masks, printed text; and PyTorch's errors."""
from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import GradcliError
from language_helpers import oracle, run, torch_printed

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def _same(mine, theirs, dtype="float32"):
    tol = 2e-5 if dtype == "float32" else 1e-12
    a, b = np.asarray(mine, dtype=float), np.asarray(theirs, dtype=float)
    assert a.shape == b.shape
    assert np.allclose(a, b, atol=tol, rtol=tol, equal_nan=True)


def _compare(source: str, dtype: str = "float32") -> dict:
    mine, torch_ = run(source), oracle(source)
    for a, b in zip(mine["values"], torch_["values"]):
        _same(a, b, dtype)
    return mine


ATTENTION = HEAD + """
torch.set_default_dtype(torch.{dtype})
torch.manual_seed(0)
mha = nn.MultiheadAttention(4, 2, dropout=0.25, batch_first=True)
x = torch.randn(2, 3, 4, requires_grad=True)
pad = torch.tensor([[False, False, True], [False, False, False]])
causal = nn.Transformer.generate_square_subsequent_mask(3)
o, w = mha(x, x, x, key_padding_mask=pad, attn_mask=causal)
cross = nn.MultiheadAttention(4, 2, kdim=3, vdim=2, add_bias_kv=True, add_zero_attn=True, bias=False)
q, k, v = torch.randn(3, 1, 4, requires_grad=True), torch.randn(5, 1, 3), torch.randn(5, 1, 2)
o2, w2 = cross(q, k, v, attn_mask=torch.zeros(3, 5, dtype=torch.bool), average_attn_weights=False)
o3, none = mha(x[0], x[0], x[0], need_weights=False)
a = torch.randn(2, 2, 3, 4, requires_grad=True)
s1 = F.scaled_dot_product_attention(a, a, a, is_causal=True)
s2 = F.scaled_dot_product_attention(a, a, a, attn_mask=torch.tensor([[True, False, True]] * 3), scale=0.3)
(o.sum() + w.pow(2).sum() + o2.sum() + o3.sum() + s1.pow(2).sum() + s2.sum()).backward()
values = [o.tolist(), w.tolist(), o2.tolist(), w2.tolist(), o3.tolist(), s1.tolist(), s2.tolist(), x.grad.tolist(),
          q.grad.tolist(), a.grad.tolist(), mha.in_proj_weight.grad.tolist(), cross.bias_k.grad.tolist()]
names = [[n for n, _ in m.named_parameters()] for m in (mha, cross)]
texts = [str(mha), str(cross)]
missing = none is None
torch.set_default_dtype(torch.float32)
"""


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_attention_matches_torch(dtype):
    """Padding, causal, boolean and float masks, separate key/value sizes, bias_kv, zero attention, unbatched input,
    dropout on the weights while training (PyTorch's draws), and both scaled_dot_product_attention masks."""
    source = ATTENTION.format(dtype=dtype)
    mine = _compare(source, dtype)
    torch_ = oracle(source)
    assert mine["names"] == torch_["names"]
    assert mine["texts"] == torch_["texts"]
    assert mine["texts"][0] == ("MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear(in_features=4, "
                                "out_features=4, bias=True)\n)")
    assert mine["missing"]


TRANSFORMER = HEAD + """
torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.3, batch_first=True, norm_first=True,
                                   activation="gelu")
src = torch.randn(2, 3, 4, requires_grad=True)
y = layer(src, src_key_padding_mask=torch.tensor([[False, False, True], [False, False, False]]))
enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, 0.0), 2, norm=nn.LayerNorm(4))
e = enc(src.transpose(0, 1))
model = nn.Transformer(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=2, dim_feedforward=6,
                       dropout=0.1)
tgt = torch.randn(2, 2, 4, requires_grad=True)
t = model(src.transpose(0, 1), tgt, tgt_mask=model.generate_square_subsequent_mask(2))
dec = nn.TransformerDecoderLayer(4, 2, 8, 0.0, activation=F.relu)
d = dec(torch.randn(2, 4), torch.randn(3, 4), memory_mask=torch.zeros(2, 3))
(y.pow(2).sum() + e.sum() + t.pow(3).sum() + d.sum()).backward()
values = [y.tolist(), e.tolist(), t.tolist(), d.tolist(), src.grad.tolist(), tgt.grad.tolist(),
          enc.layers[1].linear1.weight.grad.tolist(), model.decoder.layers[0].multihead_attn.in_proj_weight.tolist()]
texts = [str(layer), str(enc), str(model)]
count = sum(p.numel() for p in model.parameters())
node = t.grad_fn.name()
"""


def test_transformer_layers_and_stacks_match_torch():
    """Layer copies hold the layer's numbers, nn.Transformer redraws its matrices; training dropout draws too."""
    mine = _compare(TRANSFORMER)
    torch_ = oracle(TRANSFORMER)
    assert mine["texts"] == torch_["texts"]
    assert "(0-1): 2 x TransformerEncoderLayer(" in mine["texts"][1]
    assert (mine["count"], mine["node"]) == (torch_["count"], torch_["t"].grad_fn.name())


def test_a_printed_mask_reads_as_pytorch():
    source = HEAD + "print(nn.Transformer.generate_square_subsequent_mask(3))\n"
    assert "\n".join(run(source).printed).splitlines() == torch_printed(source)


@pytest.mark.parametrize("source, words", [
    ("nn.MultiheadAttention(5, 2)", "embed_dim must be divisible by num_heads"),
    ("nn.MultiheadAttention(4, 2)(torch.ones(3, 2, 4), torch.ones(3, 2, 4), torch.ones(3, 2, 4), "
     "attn_mask=torch.ones(2, 2))", "The shape of the 2D attn_mask is torch.Size([2, 2]), but should be (3, 3)."),
    ("nn.MultiheadAttention(4, 2)(torch.ones(3, 2, 4), torch.ones(3, 2, 4), torch.ones(3, 2, 4), is_causal=True)",
     "Need attn_mask if specifying the is_causal hint"),
    ("nn.MultiheadAttention(4, 2)(torch.ones(3, 2, 4), torch.ones(3, 2, 4), torch.ones(3, 2, 4), "
     "key_padding_mask=torch.ones(2, 3, dtype=torch.int64))", "only bool and floating types of key_padding_mask"),
    ("nn.MultiheadAttention(4, 2)(torch.ones(3, 2, 5), torch.ones(3, 2, 5), torch.ones(3, 2, 5))",
     "was expecting embedding dimension of 4, but got 5"),
    ("F.scaled_dot_product_attention(torch.ones(2, 3), torch.ones(2, 3), torch.ones(2, 3), "
     "attn_mask=torch.ones(2, 2), is_causal=True)", "Explicit attn_mask should not be set when is_causal=True"),
    ("nn.TransformerEncoderLayer(4, 2, activation='tanh')", "activation should be relu/gelu, not tanh"),
    ("nn.Transformer(4, 2, 1, 1, 8)(torch.ones(3, 2, 4), torch.ones(3, 1, 4))",
     "the batch number of src and tgt must be equal"),
    ("nn.TransformerEncoder(nn.Linear(2, 2), 2)", "takes a TransformerEncoderLayer to copy"),
])
def test_bad_attention_calls_are_pytorch_errors(source, words):
    with pytest.raises(GradcliError) as info:
        run(HEAD + f"y = {source}\n")
    assert words in info.value.message
