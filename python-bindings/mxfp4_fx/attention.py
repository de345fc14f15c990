"""Causal attention as two ops the importer maps onto the compiler's
attention composites (mxfp4/Models/Attention.h), so that the fused GPU
kernels apply to a traced model:

  mxfp4::causal_attention(q, k, v) -> (o, lse)
  mxfp4::causal_attention_backward(q, k, v, o, lse, dO) -> (dq, dk, dv)

in the composites' token-major layout: q, o, dO [B, S, H, D], k, v
[B, S, KVH, D], lse [B, H, S]; query head h reads KV head h / (H / KVH);
scores q k^T / sqrt(D), causal. Their PyTorch kernels are the same math in
f32.

While `sdpa_as_composites()` is active (trace_training_step turns it on),
`torch.nn.functional.scaled_dot_product_attention` calls that the ops
express (causal, no mask, no dropout, scale 1 / sqrt(D) or none, q/k/v
[B, H, S, D] with H a multiple of KVH, grouped as `enable_gqa` or by equal
head counts) go through them, with an autograd.Function whose backward is
the second op; every other call goes to PyTorch's own function. Where
PyTorch has no scaled_dot_product_attention (1.13), the context provides
one with its semantics, so a model written against it traces there too.
"""

import contextlib
import math

import torch

_LIBRARY = None


def _group(x, groups):
    """KV heads [B, KVH, S, D] repeated for their query heads."""
    return x.repeat_interleave(groups, dim=1) if groups > 1 else x


def _scores(q, k):
    """Masked scores [B, H, S, S] of head-major q [B, H, S, D], k."""
    s = q.shape[2]
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    visible = torch.ones(s, s, dtype=torch.bool, device=q.device).tril()
    return scores.masked_fill(~visible, float("-inf"))


def _forward(q, k, v):
    groups = q.shape[2] // k.shape[2]
    qh = q.transpose(1, 2).float()
    kh = _group(k.transpose(1, 2).float(), groups)
    vh = _group(v.transpose(1, 2).float(), groups)
    scores = _scores(qh, kh)
    lse = torch.logsumexp(scores, dim=-1)
    o = torch.matmul(torch.exp(scores - lse.unsqueeze(-1)), vh)
    return o.transpose(1, 2).contiguous(), lse


def _backward(q, k, v, o, lse, d_o):
    b, s, heads, d = q.shape
    kv_heads = k.shape[2]
    groups = heads // kv_heads
    qh = q.transpose(1, 2).float()
    kh = _group(k.transpose(1, 2).float(), groups)
    vh = _group(v.transpose(1, 2).float(), groups)
    oh, dh = o.transpose(1, 2).float(), d_o.transpose(1, 2).float()
    p = torch.exp(_scores(qh, kh) - lse.unsqueeze(-1))
    dv = torch.matmul(p.transpose(-1, -2), dh)
    dp = torch.matmul(dh, vh.transpose(-1, -2))
    delta = (dh * oh).sum(-1, keepdim=True)
    ds = p * (dp - delta) / math.sqrt(d)
    dq = torch.matmul(ds, kh)
    dk = torch.matmul(ds.transpose(-1, -2), qh)

    def ungroup(x):  # [B, H, S, D] summed over each KV head's group
        return x.view(b, kv_heads, groups, s, d).sum(2).transpose(1, 2)
    return dq.transpose(1, 2).contiguous(), ungroup(dk).contiguous(), \
        ungroup(dv).contiguous()


def _library():
    """Defines the two ops once (torch.library, 1.13 and 2.x)."""
    global _LIBRARY
    if _LIBRARY is None:
        lib = torch.library.Library("mxfp4", "DEF")
        lib.define("causal_attention(Tensor q, Tensor k, Tensor v) "
                   "-> (Tensor, Tensor)")
        lib.define("causal_attention_backward(Tensor q, Tensor k, Tensor v, "
                   "Tensor o, Tensor lse, Tensor dO) -> (Tensor, Tensor, Tensor)")
        lib.impl("causal_attention", _forward, "CompositeExplicitAutograd")
        lib.impl("causal_attention_backward", _backward,
                 "CompositeExplicitAutograd")
        _LIBRARY = lib
    return torch.ops.mxfp4


class _CausalAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v):
        o, lse = _library().causal_attention(q, k, v)
        ctx.save_for_backward(q, k, v, o, lse)
        return o, lse

    @staticmethod
    def backward(ctx, d_o, d_lse):
        del d_lse  # the log-sum-exp is for the backward, not the loss
        return tuple(_library().causal_attention_backward(*ctx.saved_tensors,
                                                          d_o))


def causal_attention(q, k, v):
    """Causal attention of token-major q [B, S, H, D], k, v [B, S, KVH, D]
    through the mxfp4 ops: o [B, S, H, D]."""
    return _CausalAttention.apply(q, k, v)[0]


def _math_sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False,
               scale=None, enable_gqa=False):
    """scaled_dot_product_attention's semantics without dropout, for
    PyTorch versions without it."""
    if dropout_p:
        raise NotImplementedError("scaled_dot_product_attention: dropout")
    groups = q.shape[-3] // k.shape[-3]
    if groups > 1:
        k = k.repeat_interleave(groups, dim=-3)
        v = v.repeat_interleave(groups, dim=-3)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = torch.matmul(q, k.transpose(-1, -2)) * scale
    s, t = q.shape[-2], k.shape[-2]
    if is_causal:
        visible = torch.ones(s, t, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~visible, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    return torch.matmul(torch.softmax(scores, dim=-1), v)


def _expressible(q, k, v, attn_mask, dropout_p, is_causal, scale,
                 enable_gqa):
    if attn_mask is not None or dropout_p or not is_causal:
        return False
    if q.dim() != 4 or k.dim() != 4 or v.shape != k.shape:
        return False
    b, heads, s, d = q.shape
    if k.shape[0] != b or k.shape[2] != s or k.shape[3] != d:
        return False
    if heads % k.shape[1] or (k.shape[1] != heads and not enable_gqa):
        return False
    return scale is None or math.isclose(scale, 1 / math.sqrt(d),
                                         rel_tol=1e-6)


@contextlib.contextmanager
def sdpa_as_composites():
    """Routes the scaled_dot_product_attention calls the composites express
    through mxfp4::causal_attention while active."""
    functional = torch.nn.functional
    original = getattr(functional, "scaled_dot_product_attention", None)
    fallback = original or _math_sdpa

    def sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False,
             scale=None, enable_gqa=False):
        if not _expressible(q, k, v, attn_mask, dropout_p, is_causal, scale,
                            enable_gqa):
            kwargs = {"scale": scale}
            if enable_gqa:
                kwargs["enable_gqa"] = True
            return fallback(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p,
                            is_causal=is_causal, **kwargs)
        o = causal_attention(q.transpose(1, 2), k.transpose(1, 2),
                             v.transpose(1, 2))
        return o.transpose(1, 2)

    functional.scaled_dot_product_attention = sdpa
    try:
        yield
    finally:
        if original is None:
            del functional.scaled_dot_product_attention
        else:
            functional.scaled_dot_product_attention = original
