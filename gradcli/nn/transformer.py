"""Attention and the transformer: `F.scaled_dot_product_attention`, `nn.MultiheadAttention`, the encoder and
decoder layers and stacks, and `nn.Transformer`, composed of the differentiable ops (so `--check` covers them).

Each follows PyTorch's arithmetic and order: the attention weights are softmax(q·kᵀ/√d + mask), a
boolean mask in `MultiheadAttention` marks what may NOT be attended (True → −∞) while one in
`scaled_dot_product_attention` marks what may; parameters are created and drawn in PyTorch's order
(a `MultiheadAttention`'s output projection is drawn when it is made, before `in_proj_weight` gets
xavier_uniform_; a stack's layers are copies of the one layer given; `nn.Transformer` redraws every
matrix with xavier_uniform_), so a seeded model holds PyTorch's numbers and prints PyTorch's text.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from gradcli.engine import functions as F
from gradcli.engine.ops.op import functional
from gradcli.engine.tensor import Tensor, _wrap
from gradcli.engine.tensor_str import PARAMETERS
from gradcli.errors import ArgumentError, DtypeError, ShapeError
from gradcli.nn import functional as NF
from gradcli.nn import init as I
from gradcli.nn.layers import ModuleList
from gradcli.nn.modules import Dropout, LayerNorm, Linear, Module, _default_dtype, _empty


def _tensor(x: Any, fn: str) -> Tensor:
    return F._tensor_arg(x, fn)


def _additive(mask: Any, name: str, dtype: Any, allowed: str) -> Tensor | None:
    """A mask as what is added to the attention scores: a boolean mask's `allowed` value (True or False) keeps
    a score (0), the other hides it (−∞); a float mask is added as it is."""
    if mask is None:
        return None
    m = _tensor(mask, name)
    if m.dtype == np.bool_:
        keep = m._data if allowed == "True" else ~m._data
        return _wrap(np.where(keep, 0.0, -np.inf).astype(dtype))
    if m.dtype.kind != "f":
        raise DtypeError(f"only bool and floating types of {name} are supported",
                         hint=f"pass {name} as a bool tensor or as a float tensor of values to add")
    return m


def scaled_dot_product_attention(query: Any, key: Any, value: Any, attn_mask: Any = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: Any = None, enable_gqa: bool = False) -> Tensor:
    """softmax(q·kᵀ·scale + mask)·v over the last two dimensions; `attn_mask` True (or 0.0) lets a query see a key."""
    q, k, v = (_tensor(t, "scaled_dot_product_attention") for t in (query, key, value))
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise ShapeError("scaled_dot_product_attention: query, key and value need at least 2 dimensions",
                         hint="(..., sequence, features)")
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ShapeError(f"scaled_dot_product_attention: query {tuple(q.shape)}, key {tuple(k.shape)} and value "
                         f"{tuple(v.shape)} do not fit", hint="query and key share the feature size; key and value "
                                                               "the sequence length")
    if enable_gqa:
        raise ArgumentError("scaled_dot_product_attention(): enable_gqa=True is not supported by gradcli",
                            hint="repeat the key and value heads yourself (repeat_interleave) and leave enable_gqa off")
    if is_causal and attn_mask is not None:
        raise ArgumentError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True",
                            hint="pass either is_causal=True or an attn_mask")
    length, source = q.shape[-2], k.shape[-2]
    factor = 1 / math.sqrt(q.shape[-1]) if scale is None else F.number_arg(scale, "scaled_dot_product_attention",
                                                                              "scale")
    scores = F.matmul(q, F.transpose(k, -2, -1)) * factor
    if is_causal:
        attn_mask = _wrap(np.tril(np.ones((length, source), dtype=bool)))
    bias = _additive(attn_mask, "attn_mask", q.dtype, allowed="True")
    if bias is not None:
        scores = scores + bias
    weights = F.softmax(scores, -1)
    if dropout_p:
        weights = NF.dropout(weights, dropout_p, True)
    return F.matmul(weights, v)


class MultiheadAttention(Module):
    """Attention with `num_heads` heads over projections of query, key and value, then an output projection."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: Any = None, vdim: Any = None,
                 batch_first: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        for what, n in (("embed_dim", embed_dim), ("num_heads", num_heads)):
            if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n <= 0:
                raise ArgumentError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                                    f"num_heads={num_heads} instead", hint="e.g. nn.MultiheadAttention(8, 2)")
        self.embed_dim, self.num_heads = int(embed_dim), int(num_heads)
        self.kdim = self.embed_dim if kdim is None else int(kdim)
        self.vdim = self.embed_dim if vdim is None else int(vdim)
        self._qkv_same_embed_dim = self.kdim == self.embed_dim and self.vdim == self.embed_dim
        if not isinstance(dropout, (int, float, np.integer, np.floating)):
            raise ArgumentError(f"dropout must be a number, not {type(dropout).__name__}", hint="e.g. dropout=0.1")
        self.dropout, self.batch_first = float(dropout), bool(batch_first)
        self.head_dim = self.embed_dim // self.num_heads
        if self.head_dim * self.num_heads != self.embed_dim:
            raise ArgumentError("embed_dim must be divisible by num_heads",
                                hint=f"embed_dim={self.embed_dim} splits into num_heads={self.num_heads} equal heads")
        from gradcli.engine.creation import resolve_dtype
        dt = resolve_dtype(dtype) or _default_dtype()
        E = self.embed_dim
        if self._qkv_same_embed_dim:
            self._parameters["in_proj_weight"] = _empty((3 * E, E), dt)
            self._parameters.update(q_proj_weight=None, k_proj_weight=None, v_proj_weight=None)
        else:
            self._parameters.update(q_proj_weight=_empty((E, E), dt), k_proj_weight=_empty((E, self.kdim), dt),
                                    v_proj_weight=_empty((E, self.vdim), dt), in_proj_weight=None)
        self._parameters["in_proj_bias"] = _empty((3 * E,), dt) if bias else None
        self.out_proj = NonDynamicallyQuantizableLinear(E, E, bias=bias, dtype=dt)
        self._parameters["bias_k"] = _empty((1, 1, E), dt) if add_bias_kv else None
        self._parameters["bias_v"] = _empty((1, 1, E), dt) if add_bias_kv else None
        self.add_zero_attn = bool(add_zero_attn)
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        p = self._parameters
        if self._qkv_same_embed_dim:
            I.xavier_uniform_(p["in_proj_weight"])
        else:
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                I.xavier_uniform_(p[name])
        if p["in_proj_bias"] is not None:
            I.constant_(p["in_proj_bias"], 0.0)
            I.constant_(self.out_proj.bias, 0.0)
        for name in ("bias_k", "bias_v"):
            if p[name] is not None:
                I.xavier_normal_(p[name])

    def forward(self, query: Any, key: Any, value: Any, key_padding_mask: Any = None, need_weights: bool = True,
                attn_mask: Any = None, average_attn_weights: bool = True, is_causal: bool = False) -> Any:
        q, k, v = (_tensor(t, "MultiheadAttention") for t in (query, key, value))
        if is_causal and attn_mask is None:
            raise ArgumentError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                                "method `generate_square_subsequent_mask` to create this mask.",
                                hint="attn_mask=nn.Transformer.generate_square_subsequent_mask(L)")
        batched = q.ndim == 3
        if q.ndim not in (2, 3) or k.ndim != q.ndim or v.ndim != q.ndim:
            raise ShapeError(f"query should be unbatched 2D or batched 3D tensor but received {q.ndim}-D query "
                             f"tensor" if q.ndim not in (2, 3) else
                             f"For {'batched (3-D)' if batched else 'unbatched (2-D)'} `query`, expected `key` and "
                             f"`value` to be {q.ndim}-D but found {k.ndim}-D and {v.ndim}-D tensors respectively",
                             hint="(L, N, E), (N, L, E) with batch_first=True, or (L, E) for one sequence")
        if not batched:
            q, k, v = F.unsqueeze(q, 1), F.unsqueeze(k, 1), F.unsqueeze(v, 1)
            if key_padding_mask is not None:
                key_padding_mask = F.unsqueeze(_tensor(key_padding_mask, "key_padding_mask"), 0)
        elif self.batch_first:
            q, k, v = F.transpose(q, 1, 0), F.transpose(k, 1, 0), F.transpose(v, 1, 0)
        out, weights = self._attend(q, k, v, key_padding_mask, attn_mask, need_weights, average_attn_weights)
        if not batched:
            out = F.squeeze(out, 1)
            weights = None if weights is None else F.squeeze(weights, 0)
        elif self.batch_first:
            out = F.transpose(out, 1, 0)
        return out, weights

    def _attend(self, q: Tensor, k: Tensor, v: Tensor, key_padding_mask: Any, attn_mask: Any, need_weights: bool,
                average: bool) -> tuple[Tensor, Tensor | None]:
        L, N, E = q.shape
        H, hd = self.num_heads, self.head_dim
        if E != self.embed_dim:
            raise ShapeError(f"was expecting embedding dimension of {self.embed_dim}, but got {E}",
                             hint="the query's last dimension is embed_dim")
        if k.shape[:2] != v.shape[:2]:
            raise ShapeError(f"key shape {list(k.shape)} does not match value shape {list(v.shape)}",
                             hint="key and value have the same sequence length and batch")
        p = self._parameters
        if self._qkv_same_embed_dim:
            w_q, w_k, w_v = F.chunk(p["in_proj_weight"], 3)
        else:
            w_q, w_k, w_v = p["q_proj_weight"], p["k_proj_weight"], p["v_proj_weight"]
        b_q, b_k, b_v = (None, None, None) if p["in_proj_bias"] is None else F.chunk(p["in_proj_bias"], 3)
        q, k, v = NF.linear(q, w_q, b_q), NF.linear(k, w_k, b_k), NF.linear(v, w_v, b_v)
        mask = _additive(attn_mask, "attn_mask", q.dtype, allowed="False")
        padding = _additive(key_padding_mask, "key_padding_mask", q.dtype, allowed="False")
        S = k.shape[0]
        if mask is not None:
            if mask.ndim == 2 and tuple(mask.shape) != (L, S):
                raise ShapeError(f"The shape of the 2D attn_mask is {_size(mask)}, but should be {(L, S)}.",
                                 hint="attn_mask is (target length, source length)")
            if mask.ndim == 3 and tuple(mask.shape) != (N * H, L, S):
                raise ShapeError(f"The shape of the 3D attn_mask is {_size(mask)}, but should be {(N * H, L, S)}.",
                                 hint="a 3-D attn_mask is (batch * num_heads, target length, source length)")
            if mask.ndim not in (2, 3):
                raise ShapeError(f"attn_mask's dimension {mask.ndim} is not supported",
                                 hint="a 2-D (L, S) or 3-D (N * num_heads, L, S) mask")
            mask = F.unsqueeze(mask, 0) if mask.ndim == 2 else mask
        if padding is not None and tuple(padding.shape) != (N, S):
            raise ShapeError(f"expecting key_padding_mask shape of {(N, S)}, but got {_size(padding)}",
                             hint="key_padding_mask is (batch, source length): True marks padding")
        if p["bias_k"] is not None:
            k = F.cat([k, F.expand(p["bias_k"], 1, N, E)])
            v = F.cat([v, F.expand(p["bias_v"], 1, N, E)])
            mask = None if mask is None else NF.pad(mask, (0, 1))
            padding = None if padding is None else NF.pad(padding, (0, 1))
        q = F.transpose(F.reshape(q, (L, N * H, hd)), 0, 1)
        k = F.transpose(F.reshape(k, (k.shape[0], N * H, hd)), 0, 1)
        v = F.transpose(F.reshape(v, (v.shape[0], N * H, hd)), 0, 1)
        if self.add_zero_attn:
            zeros = _wrap(np.zeros((N * H, 1, hd), q.dtype))
            k, v = F.cat([k, zeros], 1), F.cat([v, zeros], 1)
            mask = None if mask is None else NF.pad(mask, (0, 1))
            padding = None if padding is None else NF.pad(padding, (0, 1))
        S = k.shape[1]
        if padding is not None:
            padding = F.reshape(F.expand(F.reshape(padding, (N, 1, 1, S)), N, H, 1, S), (N * H, 1, S))
            mask = padding if mask is None else mask + padding
        scores = F.bmm(q * math.sqrt(1.0 / hd), F.transpose(k, -2, -1))
        weights = F.softmax(scores if mask is None else scores + mask, -1)
        if self.dropout and self.training:
            weights = NF.dropout(weights, self.dropout, True)
        out = F.reshape(F.transpose(F.bmm(weights, v), 0, 1), (L * N, E))
        out = F.reshape(NF.linear(out, self.out_proj.weight, self.out_proj.bias), (L, N, E))
        if not need_weights:
            return out, None
        weights = F.reshape(weights, (N, H, L, S))
        return out, (F.mean(weights, 1) if average else weights)


def _size(t: Tensor) -> str:
    return f"torch.Size({list(t.shape)})"


class NonDynamicallyQuantizableLinear(Linear):
    """A `Linear`, under the name PyTorch gives a MultiheadAttention's output projection (and prints)."""


def _activation(activation: Any) -> Callable[..., Any]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return NF.gelu
    if isinstance(activation, str) or not callable(activation):
        raise ArgumentError(f"activation should be relu/gelu, not {activation}",
                            hint='activation="relu", "gelu", or a function such as F.gelu')
    return activation


def _clone(module: Module) -> Module:
    """A deep copy with fresh parameters holding the same numbers, as PyTorch's `_get_clones` makes a stack."""
    out = object.__new__(type(module))
    for name, item in vars(module).items():
        out.__dict__[name] = _copied(item)
    return out


def _copied(item: Any) -> Any:
    if isinstance(item, Module):
        return _clone(item)
    if isinstance(item, Tensor):
        copy = _wrap(item._data.copy())
        if PARAMETERS.has(item):
            PARAMETERS.add(copy)
        return copy.requires_grad_(item.requires_grad) if item.is_leaf else copy
    if isinstance(item, dict):
        return type(item)((k, _copied(v)) for k, v in item.items())
    if isinstance(item, list):
        return [_copied(v) for v in item]
    return item


class _Layer(Module):
    """What the encoder and decoder layers share: attention blocks, the feed-forward block, norms and dropouts."""

    attentions: tuple[str, ...] = ("self_attn",)

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: Any = "relu", layer_norm_eps: float = 1e-05, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        for name in self.attentions:
            setattr(self, name, MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                   batch_first=batch_first, dtype=dtype))
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = bool(norm_first)
        for k in range(1, len(self.attentions) + 2):
            setattr(self, f"norm{k}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        for k in range(1, len(self.attentions) + 2):
            setattr(self, f"dropout{k}", Dropout(dropout))
        self.activation = _activation(activation)

    def _attention(self, k: int, x: Tensor, memory: Tensor, mask: Any, padding: Any) -> Tensor:
        attention = getattr(self, self.attentions[k])
        out = attention(x, memory, memory, attn_mask=mask, key_padding_mask=padding, need_weights=False)[0]
        return getattr(self, f"dropout{k + 1}")(out)

    def _feed_forward(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return getattr(self, f"dropout{len(self.attentions) + 1}")(x)

    def _blocks(self, x: Tensor, memories: list[Tensor], masks: list[Any], paddings: list[Any]) -> Tensor:
        """Each attention block, then the feed-forward block: residual around each, the norm before it
        (norm_first) or after the sum."""
        blocks = [(lambda y, k=k: self._attention(k, y, y if memories[k] is None else memories[k], masks[k],
                                                  paddings[k])) for k in range(len(self.attentions))]
        blocks.append(self._feed_forward)
        for k, block in enumerate(blocks):
            norm = getattr(self, f"norm{k + 1}")
            x = x + block(norm(x)) if self.norm_first else norm(x + block(x))
        return x


class TransformerEncoderLayer(_Layer):
    def forward(self, src: Any, src_mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool = False) -> Tensor:
        return self._blocks(_tensor(src, "TransformerEncoderLayer"), [None], [src_mask], [src_key_padding_mask])


class TransformerDecoderLayer(_Layer):
    attentions = ("self_attn", "multihead_attn")

    def forward(self, tgt: Any, memory: Any, tgt_mask: Any = None, memory_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        return self._blocks(_tensor(tgt, "TransformerDecoderLayer"), [None, _tensor(memory, "TransformerDecoderLayer")],
                            [tgt_mask, memory_mask], [tgt_key_padding_mask, memory_key_padding_mask])


class _Stack(Module):
    """`num_layers` copies of one layer, then an optional norm."""

    layer_type: type = TransformerEncoderLayer

    def __init__(self, layer: Any, num_layers: int, norm: Any = None, **options: Any) -> None:
        super().__init__()
        name = type(self).__name__
        if not isinstance(layer, self.layer_type):
            raise ArgumentError(f"{name}() takes a {self.layer_type.__name__} to copy, not {type(layer).__name__}",
                                hint=f"e.g. nn.{name}(nn.{self.layer_type.__name__}(d_model=8, nhead=2), "
                                     "num_layers=2)")
        if not isinstance(num_layers, (int, np.integer)) or isinstance(num_layers, bool) or num_layers < 0:
            raise ArgumentError(f"{name}(): num_layers must be a non-negative integer, got {num_layers!r}",
                                hint="the number of copies of the layer")
        self.layers = ModuleList([_clone(layer) for _ in range(int(num_layers))])
        self.num_layers = int(num_layers)
        self.norm = norm


class TransformerEncoder(_Stack):
    def __init__(self, encoder_layer: Any, num_layers: int, norm: Any = None, enable_nested_tensor: bool = True,
                 mask_check: bool = True) -> None:
        super().__init__(encoder_layer, num_layers, norm)

    def forward(self, src: Any, mask: Any = None, src_key_padding_mask: Any = None, is_causal: Any = None) -> Tensor:
        output = _tensor(src, "TransformerEncoder")
        for layer in self.layers:
            output = layer(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask)
        return output if self.norm is None else self.norm(output)


class TransformerDecoder(_Stack):
    layer_type = TransformerDecoderLayer

    def __init__(self, decoder_layer: Any, num_layers: int, norm: Any = None) -> None:
        super().__init__(decoder_layer, num_layers, norm)

    def forward(self, tgt: Any, memory: Any, tgt_mask: Any = None, memory_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None, tgt_is_causal: Any = None,
                memory_is_causal: bool = False) -> Tensor:
        output = _tensor(tgt, "TransformerDecoder")
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask)
        return output if self.norm is None else self.norm(output)


def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
    """The causal mask: −∞ above the diagonal (a position may not see later ones), 0.0 elsewhere."""
    from gradcli.engine.creation import resolve_dtype
    n = F.number_arg(sz, "generate_square_subsequent_mask", "sz", integer=True)
    return _wrap(np.triu(np.full((n, n), -np.inf), 1).astype(resolve_dtype(dtype) or _default_dtype()))


class Transformer(Module):
    """An encoder stack and a decoder stack, each with a final LayerNorm; every matrix redrawn by xavier_uniform_."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1, activation: Any = "relu",
                 custom_encoder: Any = None, custom_decoder: Any = None, layer_norm_eps: float = 1e-05,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        options = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                       layer_norm_eps=layer_norm_eps, batch_first=batch_first, norm_first=norm_first, bias=bias,
                       dtype=dtype)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, **options)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, LayerNorm(d_model, eps=layer_norm_eps,
                                                                                   bias=bias))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, **options)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, LayerNorm(d_model, eps=layer_norm_eps,
                                                                                   bias=bias))
        for p in self.parameters():
            if p.dim() > 1:
                I.xavier_uniform_(p)
        self.d_model, self.nhead, self.batch_first = int(d_model), int(nhead), bool(batch_first)

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)

    def forward(self, src: Any, tgt: Any, src_mask: Any = None, tgt_mask: Any = None, memory_mask: Any = None,
                src_key_padding_mask: Any = None, tgt_key_padding_mask: Any = None,
                memory_key_padding_mask: Any = None, src_is_causal: Any = None, tgt_is_causal: Any = None,
                memory_is_causal: bool = False) -> Tensor:
        s, t = _tensor(src, "Transformer"), _tensor(tgt, "Transformer")
        batch = 0 if self.batch_first else 1
        if s.ndim == 3 and t.ndim == 3 and s.shape[batch] != t.shape[batch]:
            raise ShapeError("the batch number of src and tgt must be equal",
                             hint="(S, N, E) and (T, N, E), or (N, S, E) and (N, T, E) with batch_first=True")
        if s.shape[-1] != self.d_model or t.shape[-1] != self.d_model:
            raise ShapeError("the feature number of src and tgt must be equal to d_model",
                             hint=f"the last dimension of both is d_model={self.d_model}")
        memory = self.encoder(s, mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(t, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)


LAYERS: dict[str, type] = {cls.__name__: cls for cls in (
    MultiheadAttention, TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer, TransformerDecoder,
    Transformer)}
"""The module classes of this file, by their `torch.nn` name."""

_LAYER = frozenset({"self_attn", "linear1", "linear2", "dropout", "norm1", "norm2", "dropout1", "dropout2",
                    "norm_first", "activation"})
MEMBERS: dict[type, frozenset] = {
    MultiheadAttention: frozenset({"embed_dim", "num_heads", "head_dim", "kdim", "vdim", "dropout", "batch_first",
                                   "in_proj_weight", "in_proj_bias", "out_proj", "bias_k", "bias_v", "add_zero_attn",
                                   "q_proj_weight", "k_proj_weight", "v_proj_weight"}),
    NonDynamicallyQuantizableLinear: frozenset({"weight", "bias", "in_features", "out_features"}),
    TransformerEncoderLayer: _LAYER,
    TransformerDecoderLayer: _LAYER | {"multihead_attn", "norm3", "dropout3"},
    TransformerEncoder: frozenset({"layers", "num_layers", "norm"}),
    TransformerDecoder: frozenset({"layers", "num_layers", "norm"}),
    Transformer: frozenset({"encoder", "decoder", "d_model", "nhead", "batch_first",
                            "generate_square_subsequent_mask"}),
}
"""The attributes a program may read on each, beside the module API."""

COMPOSITES = (functional(scaled_dot_product_attention),)
"""The functions of `torch.nn.functional` this file adds."""
