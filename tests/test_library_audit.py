"""An audit of issue 33's families against PyTorch with arguments the other tests do not use.

Each program in fixtures/library_audit runs a family with its less common arguments: a bidirectional
two-layer GRU with dropout in eval mode and an initial state, an LSTMCell without bias;
MultiheadAttention with kdim/vdim, key_padding_mask and attn_mask together, per-head weights and
need_weights=False; scaled_dot_product_attention with is_causal and scale, and a float mask; a pre-norm
(norm_first) gelu TransformerEncoder with a causal mask and a padding mask, and a decoder layer with
tgt_is_causal; a grouped ConvTranspose2d with output_padding, a dilated ConvTranspose1d, GroupNorm without
affine, InstanceNorm1d tracking running statistics; checkpoint and checkpoint_sequential with
use_reentrant=False, gradcheck's and gradgradcheck's keyword arguments; pack_padded_sequence with
enforce_sorted=False, pad_packed_sequence's total_length, pad_sequence and pack_sequence. gradcli must print
what torch prints (the transformer in float64: in float32 one element of its output differs from PyTorch's
in the fourth significant digit of a value near zero, the rounding of a long chain of sums).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from language_helpers import run, torch_printed

PROGRAMS = sorted((Path(__file__).parent / "fixtures" / "library_audit").glob("*.py"))


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_the_family_prints_what_torch_prints(path: Path) -> None:
    source = path.read_text()
    dtype = "float64" if "set_default_dtype(torch.float64)" in source else "float32"
    assert "\n".join(run(source, dtype=dtype).printed).splitlines() == torch_printed(source)
