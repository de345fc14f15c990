#!/usr/bin/env python3
"""Writes the training-step graphs the GEMM recipe passes are tested on.

Each graph is one func.func on f32 tensors in upstream dialects only (func,
arith, math, tensor, linalg), with the forward pass and a hand-written
backward pass:

  linear_fwd_bwd     one linear layer: Fprop, Dgrad and Wgrad
  mlp_block          SwiGLU MLP with a mean-squared loss
  transformer_block  Llama-style decoder block (RMSNorm, causal attention,
                     SwiGLU MLP, residuals) with a mean-squared loss

Every linear-layer GEMM is a linalg.matmul tagged
{mxfp4.gemm = #mxfp4.gemm<ROLE, "LAYER">}; attention contractions are
untagged linalg.batch_matmul ops.  Each graph is written twice: NAME.mlir
(tagged) and NAME.untagged.mlir (the same text without the mxfp4.gemm
attributes).  See README.md next to this file for the argument and result
orders.

Standard library only; the output is a deterministic function of the sizes.

  gen_graphs.py [--out DIR] [--linear-t 64 --linear-k 64 --linear-n 32]
                [--mlp-t 32 --mlp-dim 64 --mlp-ffn 96]
                [--block-batch 2 --block-seq 16 --block-heads 2
                 --block-head-dim 32 --block-ffn 96]
"""

import argparse
import os
import sys

GEMM_ROLES = ("fprop", "dgrad", "wgrad")
MX_BLOCK = 32


def ttype(shape):
    if not shape:
        return "tensor<f32>"
    return "tensor<" + "x".join(str(s) for s in shape) + "xf32>"


def amap(rank, results, names=None):
    dims = names or ["d%d" % i for i in range(rank)]
    return "affine_map<(%s) -> (%s)>" % (
        ", ".join(dims), ", ".join(dims[r] for r in results))


def fconst(value):
    if value == float("-inf"):
        return "0xFF800000"
    return "%.9e" % value


class V:
    """An SSA value of type tensor<...xf32>."""

    def __init__(self, name, shape):
        self.name = name
        self.shape = tuple(shape)

    @property
    def type(self):
        return ttype(self.shape)


class Body:
    """Emits the scalar ops of one linalg.generic region."""

    def __init__(self, fn, indent):
        self.fn = fn
        self.indent = indent
        self.lines = []

    def _op(self, hint, text):
        name = self.fn.fresh(hint)
        self.lines.append(self.indent + "%s = %s" % (name, text))
        return name

    def const(self, value):
        return self._op("cst", "arith.constant %s : f32" % fconst(value))

    def bin(self, op, a, b):
        return self._op(op.split(".")[-1][:-1] if op.endswith("f") else "v",
                        "%s %s, %s : f32" % (op, a, b))

    def add(self, a, b):
        return self.bin("arith.addf", a, b)

    def sub(self, a, b):
        return self.bin("arith.subf", a, b)

    def mul(self, a, b):
        return self.bin("arith.mulf", a, b)

    def div(self, a, b):
        return self.bin("arith.divf", a, b)

    def max(self, a, b):
        return self._op("max", "arith.maximumf %s, %s : f32" % (a, b))

    def neg(self, a):
        return self._op("neg", "arith.negf %s : f32" % a)

    def exp(self, a):
        return self._op("exp", "math.exp %s : f32" % a)

    def rsqrt(self, a):
        return self._op("rsqrt", "math.rsqrt %s : f32" % a)

    def index(self, dim):
        return self._op("i", "linalg.index %d : index" % dim)

    def cmpi(self, pred, a, b):
        return self._op("cond", "arith.cmpi %s, %s, %s : index" % (pred, a, b))

    def select(self, c, a, b):
        return self._op("sel", "arith.select %s, %s, %s : f32" % (c, a, b))

    def sigmoid(self, a):
        one = self.const(1.0)
        return self.div(one, self.add(one, self.exp(self.neg(a))))


class Fn:
    """Builds the text of one func.func."""

    def __init__(self, name, tagged):
        self.name = name
        self.tagged = tagged
        self.args = []      # (V or None, name, mlir type, attribute text)
        self.arg_specs = []
        self.lines = []
        self.used = set()
        self.zero = None

    def fresh(self, hint):
        base = "%" + hint
        name, n = base, 0
        while name in self.used:
            n += 1
            name = "%s_%d" % (base, n)
        self.used.add(name)
        return name

    # --- arguments --------------------------------------------------------

    def arg(self, hint, shape, parameter=None, role="input"):
        v = V(self.fresh(hint), shape)
        attr = ' {mxfp4.parameter = "%s"}' % parameter if parameter else ""
        self.args.append("%s: %s%s" % (v.name, v.type, attr))
        self.arg_specs.append({"name": parameter or hint, "shape": tuple(shape),
                               "dtype": "f32", "role": "parameter"
                               if parameter else role})
        return v

    def step_arg(self):
        name = self.fresh("step")
        self.args.append("%s: i64 {mxfp4.step}" % name)
        self.arg_specs.append({"name": "step", "shape": (), "dtype": "i64",
                               "role": "step"})

    # --- ops --------------------------------------------------------------

    def emit(self, line):
        self.lines.append("  " + line)

    def comment(self, text):
        self.lines.append("  // " + text)

    def zero_const(self):
        if self.zero is None:
            self.zero = self.fresh("zero_f32")
            self.emit("%s = arith.constant 0.000000e+00 : f32" % self.zero)
        return self.zero

    def full(self, shape, value, hint="init"):
        if value == 0.0:
            c = self.zero_const()
        else:
            c = self.fresh("cst")
            self.emit("%s = arith.constant %s : f32" % (c, fconst(value)))
        e = self.fresh("empty")
        self.emit("%s = tensor.empty() : %s" % (e, ttype(shape)))
        v = V(self.fresh(hint), shape)
        self.emit("%s = linalg.fill ins(%s : f32) outs(%s : %s) -> %s"
                  % (v.name, c, e, v.type, v.type))
        return v

    def zeros(self, shape):
        return self.full(shape, 0.0, "zeros")

    def matmul(self, a, b, kind, role=None, layer=None, hint="mm"):
        """2-D GEMM.  kind "nt": a[M,K]·b[N,K]^T (Fprop); "nn": a[M,K]·b[K,N]
        (Dgrad); "tn": a[K,M]^T·b[K,N] (Wgrad)."""
        (m, n, k) = self._mnk(a.shape, b.shape, kind)
        assert (role is None) == (layer is None)
        if role is not None:
            assert role == {"nt": "fprop", "nn": "dgrad", "tn": "wgrad"}[kind]
        init = self.zeros((m, n))
        out = V(self.fresh(hint), (m, n))
        dims = ["m", "n", "k"]
        maps = {"nt": [(0, 2), (1, 2), (0, 1)],
                "nn": None,
                "tn": [(2, 0), (2, 1), (0, 1)]}[kind]
        text = "%s = linalg.matmul" % out.name
        if maps is not None:
            text += " indexing_maps = [%s]" % ", ".join(
                amap(3, r, dims) for r in maps)
        if role is not None and self.tagged:
            text += ' {mxfp4.gemm = #mxfp4.gemm<%s, "%s">}' % (role, layer)
        text += " ins(%s, %s : %s, %s) outs(%s : %s) -> %s" % (
            a.name, b.name, a.type, b.type, init.name, init.type, out.type)
        self.emit(text)
        return out

    def batch_matmul(self, a, b, kind, hint="bmm"):
        """Batched GEMM over the leading dimension, kinds as in matmul."""
        assert a.shape[0] == b.shape[0]
        (m, n, k) = self._mnk(a.shape[1:], b.shape[1:], kind)
        init = self.zeros((a.shape[0], m, n))
        out = V(self.fresh(hint), (a.shape[0], m, n))
        dims = ["b", "m", "n", "k"]
        maps = {"nt": [(0, 1, 3), (0, 2, 3), (0, 1, 2)],
                "nn": None,
                "tn": [(0, 3, 1), (0, 3, 2), (0, 1, 2)]}[kind]
        text = "%s = linalg.batch_matmul" % out.name
        if maps is not None:
            text += " indexing_maps = [%s]" % ", ".join(
                amap(4, r, dims) for r in maps)
        text += " ins(%s, %s : %s, %s) outs(%s : %s) -> %s" % (
            a.name, b.name, a.type, b.type, init.name, init.type, out.type)
        self.emit(text)
        return out

    @staticmethod
    def _mnk(sa, sb, kind):
        if kind == "nt":
            (m, k), (n, k2) = sa, sb
        elif kind == "nn":
            (m, k), (k2, n) = sa, sb
        elif kind == "tn":
            (k, m), (k2, n) = sa, sb
        else:
            raise ValueError(kind)
        assert k == k2, (sa, sb, kind)
        return m, n, k

    def generic(self, dims, ins, out, body, init=None, hint="t"):
        """linalg.generic over loops of sizes `dims`.  `ins` is a list of
        (V, loop indices), `out` the loop indices of the result; loops not in
        `out` are reductions (then `init` is required).  `body(b, *args)`
        gets a Body and the block arguments (ins..., out) and returns the
        value to yield."""
        rank = len(dims)
        for v, idx in ins:
            assert tuple(dims[i] for i in idx) == v.shape, (v.shape, idx, dims)
        out_shape = tuple(dims[i] for i in out)
        reduces = any(i not in out for i in range(rank))
        if init is None:
            assert not reduces
            e = V(self.fresh("empty"), out_shape)
            self.emit("%s = tensor.empty() : %s" % (e.name, e.type))
            init = e
        assert init.shape == out_shape
        res = V(self.fresh(hint), out_shape)
        maps = [amap(rank, idx) for _, idx in ins] + [amap(rank, out)]
        iters = ", ".join('"parallel"' if i in out else '"reduction"'
                          for i in range(rank))
        ins_text = ""
        if ins:
            ins_text = " ins(%s : %s)" % (
                ", ".join(v.name for v, _ in ins),
                ", ".join(v.type for v, _ in ins))
        self.emit("%s = linalg.generic {indexing_maps = [%s], "
                  "iterator_types = [%s]}%s outs(%s : %s) {"
                  % (res.name, ", ".join(maps), iters, ins_text, init.name,
                     init.type))
        bargs = [self.fresh("in") for _ in ins] + [self.fresh("acc")]
        self.lines.append("  ^bb0(%s):" % ", ".join(a + ": f32" for a in bargs))
        b = Body(self, "    ")
        y = body(b, *bargs)
        self.lines.extend(b.lines)
        self.lines.append("    linalg.yield %s : f32" % y)
        self.emit("} -> %s" % res.type)
        return res

    def ew(self, fn, *vals, hint="t"):
        """Elementwise over operands of one shape."""
        shape = vals[0].shape
        assert all(v.shape == shape for v in vals)
        idx = tuple(range(len(shape)))
        return self.generic(shape, [(v, idx) for v in vals], idx,
                            lambda b, *a: fn(b, *a[:-1]), hint=hint)

    def expand(self, v, reassoc, shape, hint="exp"):
        out = V(self.fresh(hint), shape)
        self.emit("%s = tensor.expand_shape %s %s output_shape [%s] : %s into %s"
                  % (out.name, v.name, self._reassoc(reassoc),
                     ", ".join(map(str, shape)), v.type, out.type))
        return out

    def collapse(self, v, reassoc, hint="col"):
        shape = tuple(_prod(v.shape[i] for i in g) for g in reassoc)
        out = V(self.fresh(hint), shape)
        self.emit("%s = tensor.collapse_shape %s %s : %s into %s"
                  % (out.name, v.name, self._reassoc(reassoc), v.type,
                     out.type))
        return out

    def transpose(self, v, perm, hint="tr"):
        shape = tuple(v.shape[p] for p in perm)
        e = self.fresh("empty")
        self.emit("%s = tensor.empty() : %s" % (e, ttype(shape)))
        out = V(self.fresh(hint), shape)
        self.emit("%s = linalg.transpose ins(%s : %s) outs(%s : %s) "
                  "permutation = [%s]" % (out.name, v.name, v.type, e,
                                          ttype(shape),
                                          ", ".join(map(str, perm))))
        return out

    @staticmethod
    def _reassoc(groups):
        return "[" + ", ".join("[" + ", ".join(map(str, g)) + "]"
                               for g in groups) + "]"

    def text(self, results, header):
        out = ["// " + l if l else "//" for l in header]
        out.append("func.func @%s(\n    %s)\n    -> (%s) {" % (
            self.name, ",\n    ".join(self.args),
            ", ".join(v.type for v in results)))
        out.extend(self.lines)
        out.append("  return %s : %s" % (", ".join(v.name for v in results),
                                         ", ".join(v.type for v in results)))
        out.append("}")
        return "\n".join(out) + "\n"


def _prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


# --- shared pieces ---------------------------------------------------------

def mse_loss(f, y, target):
    """loss = mean((y - target)^2) as tensor<f32>; also returns dL/dy."""
    n = _prod(y.shape)
    f.comment("loss = mean((y - target)^2); dL/dy = 2 (y - target) / %d" % n)
    diff = f.ew(lambda b, a, t: b.sub(a, t), y, target, hint="diff")
    idx = tuple(range(len(y.shape)))
    sq = f.generic(y.shape, [(diff, idx)], (),
                   lambda b, d, acc: b.add(b.mul(d, d), acc),
                   init=f.zeros(()), hint="sumsq")
    loss = f.ew(lambda b, s: b.mul(s, b.const(1.0 / n)), sq, hint="loss")
    dy = f.ew(lambda b, d: b.mul(d, b.const(2.0 / n)), diff, hint="dloss")
    return loss, dy


def swiglu_fwd(f, x, wg, wu, wd, layer):
    f.comment("SwiGLU MLP forward: y = (silu(x Wg^T) * (x Wu^T)) Wd^T")
    g = f.matmul(x, wg, "nt", "fprop", layer + ".gate_proj", hint="gate")
    u = f.matmul(x, wu, "nt", "fprop", layer + ".up_proj", hint="up")
    sig = f.ew(lambda b, a: b.sigmoid(a), g, hint="sig")
    silu = f.ew(lambda b, a, s: b.mul(a, s), g, sig, hint="silu")
    act = f.ew(lambda b, s, v: b.mul(s, v), silu, u, hint="act")
    y = f.matmul(act, wd, "nt", "fprop", layer + ".down_proj", hint="down")
    return y, (x, g, u, sig, silu, act)


def swiglu_bwd(f, dy, saved, wg, wu, wd, layer):
    x, g, u, sig, silu, act = saved
    f.comment("SwiGLU MLP backward")
    dwd = f.matmul(dy, act, "tn", "wgrad", layer + ".down_proj", hint="dw_down")
    dact = f.matmul(dy, wd, "nn", "dgrad", layer + ".down_proj", hint="dact")
    du = f.ew(lambda b, d, s: b.mul(d, s), dact, silu, hint="dup")
    f.comment("silu'(g) = sig(g) (1 + g (1 - sig(g)))")

    def dgate(b, d, uu, gg, s):
        one = b.const(1.0)
        dsilu = b.mul(s, b.add(one, b.mul(gg, b.sub(one, s))))
        return b.mul(b.mul(d, uu), dsilu)
    dg = f.ew(dgate, dact, u, g, sig, hint="dgate")
    dwg = f.matmul(dg, x, "tn", "wgrad", layer + ".gate_proj", hint="dw_gate")
    dwu = f.matmul(du, x, "tn", "wgrad", layer + ".up_proj", hint="dw_up")
    dxg = f.matmul(dg, wg, "nn", "dgrad", layer + ".gate_proj", hint="dx_gate")
    dxu = f.matmul(du, wu, "nn", "dgrad", layer + ".up_proj", hint="dx_up")
    dx = f.ew(lambda b, p, q: b.add(p, q), dxg, dxu, hint="dx_mlp")
    return dx, dwg, dwu, dwd


def rmsnorm_fwd(f, x, w, eps, hint):
    t, d = x.shape
    f.comment("RMSNorm: y = w * x * rsqrt(mean(x^2) + %g)" % eps)
    ss = f.generic((t, d), [(x, (0, 1))], (0,),
                   lambda b, a, acc: b.add(b.mul(a, a), acc),
                   init=f.zeros((t,)), hint=hint + "_ss")
    r = f.ew(lambda b, s: b.rsqrt(b.add(b.mul(s, b.const(1.0 / d)),
                                        b.const(eps))), ss, hint=hint + "_r")
    xn = f.generic((t, d), [(x, (0, 1)), (r, (0,))], (0, 1),
                   lambda b, a, rr, _: b.mul(a, rr), hint=hint + "_xn")
    y = f.generic((t, d), [(xn, (0, 1)), (w, (1,))], (0, 1),
                  lambda b, a, ww, _: b.mul(a, ww), hint=hint)
    return y, (xn, r)


def rmsnorm_bwd(f, dy, saved, w, hint):
    xn, r = saved
    t, d = dy.shape
    f.comment("RMSNorm backward: dw = sum_t dy xn; "
              "dx = r (dxn - xn mean(dxn xn)), dxn = dy w")
    dw = f.generic((t, d), [(dy, (0, 1)), (xn, (0, 1))], (1,),
                   lambda b, a, c, acc: b.add(b.mul(a, c), acc),
                   init=f.zeros((d,)), hint="d" + hint + "_w")
    dxn = f.generic((t, d), [(dy, (0, 1)), (w, (1,))], (0, 1),
                    lambda b, a, ww, _: b.mul(a, ww), hint="d" + hint + "_xn")
    dot = f.generic((t, d), [(dxn, (0, 1)), (xn, (0, 1))], (0,),
                    lambda b, a, c, acc: b.add(b.mul(a, c), acc),
                    init=f.zeros((t,)), hint="d" + hint + "_dot")

    def body(b, g, n, rr, c, _):
        mean = b.mul(c, b.const(1.0 / d))
        return b.mul(rr, b.sub(g, b.mul(n, mean)))
    dx = f.generic((t, d), [(dxn, (0, 1)), (xn, (0, 1)), (r, (0,)),
                            (dot, (0,))], (0, 1), body, hint="d" + hint + "_x")
    return dx, dw


# --- the graphs ------------------------------------------------------------

def require_mx(**dims):
    for k, v in dims.items():
        if v % MX_BLOCK:
            raise ValueError("%s = %d is not a multiple of %d" % (k, v, MX_BLOCK))


class Graph:
    """Texts of both variants and the signature: args is a list of dicts
    (name, shape, dtype, role), results a list of (name, shape), sizes the
    keyword arguments the graph was built with."""

    def __init__(self, name, tagged, untagged, args, results, doc, sizes):
        self.name = name
        self.sizes = sizes
        self.tagged = tagged
        self.untagged = untagged
        self.args = args
        self.results = results
        self.doc = doc


def _build(name, builder, doc_lines, sizes):
    texts = {}
    specs = None
    for tagged in (True, False):
        f = Fn(name, tagged)
        results = builder(f)
        header = [l for l in doc_lines]
        if not tagged:
            header += ["", "Untagged variant: identical to %s.mlir without the "
                       "mxfp4.gemm attributes." % name]
        header = ["Generated by gen_graphs.py; do not edit."] + [""] + header
        texts[tagged] = f.text([v for _, v in results], header)
        if specs is None:
            specs = (f.arg_specs, [(n, v.shape) for n, v in results])
    return Graph(name, texts[True], texts[False], specs[0], specs[1],
                 doc_lines, sizes)


def linear_fwd_bwd(t=64, k=64, n=32, layer="layers.0.mlp.up_proj"):
    require_mx(T=t, K=k, N=n)

    def build(f):
        x = f.arg("x", (t, k))
        w = f.arg("w", (n, k), parameter=layer + ".weight")
        dy = f.arg("dy", (t, n))
        f.step_arg()
        y = f.matmul(x, w, "nt", "fprop", layer, hint="y")
        dx = f.matmul(dy, w, "nn", "dgrad", layer, hint="dx")
        dw = f.matmul(dy, x, "tn", "wgrad", layer, hint="dw")
        return [("y", y), ("dx", dx), ("dw", dw)]
    doc = ["linear_fwd_bwd: one linear layer %r, T=%d K=%d N=%d." % (layer, t, k, n),
           "Arguments: x[T,K], w[N,K] (parameter), dy[T,N], step (i64).",
           "Results: y = x w^T (fprop), dx = dy w (dgrad), dw = dy^T x (wgrad)."]
    return _build("linear_fwd_bwd", build, doc,
                  dict(t=t, k=k, n=n, layer=layer))


def mlp_block(t=32, dim=64, ffn=96, layer="layers.0.mlp"):
    require_mx(T=t, dim=dim, ffn=ffn)

    def build(f):
        x = f.arg("x", (t, dim))
        target = f.arg("target", (t, dim))
        wg = f.arg("w_gate", (ffn, dim), parameter=layer + ".gate_proj.weight")
        wu = f.arg("w_up", (ffn, dim), parameter=layer + ".up_proj.weight")
        wd = f.arg("w_down", (dim, ffn), parameter=layer + ".down_proj.weight")
        f.step_arg()
        y, saved = swiglu_fwd(f, x, wg, wu, wd, layer)
        loss, dy = mse_loss(f, y, target)
        dx, dwg, dwu, dwd = swiglu_bwd(f, dy, saved, wg, wu, wd, layer)
        return [("loss", loss), ("d_gate_proj.weight", dwg),
                ("d_up_proj.weight", dwu), ("d_down_proj.weight", dwd),
                ("dx", dx)]
    doc = ["mlp_block: SwiGLU MLP %r, T=%d dim=%d ffn=%d." % (layer, t, dim, ffn),
           "y = (silu(x Wg^T) * (x Wu^T)) Wd^T; loss = mean((y - target)^2).",
           "Arguments: x[T,dim], target[T,dim], w_gate[ffn,dim], w_up[ffn,dim],",
           "  w_down[dim,ffn] (parameters), step (i64).",
           "Results: loss (tensor<f32>), dw_gate, dw_up, dw_down, dx."]
    return _build("mlp_block", build, doc,
                  dict(t=t, dim=dim, ffn=ffn, layer=layer))


def transformer_block(batch=2, seq=16, heads=2, head_dim=32, ffn=96,
                      eps=1e-5, layer="layers.0"):
    t = batch * seq
    dim = heads * head_dim
    require_mx(T=t, dim=dim, ffn=ffn)
    bh = batch * heads
    scale = 1.0 / head_dim ** 0.5

    def build(f):
        x = f.arg("x", (t, dim))
        target = f.arg("target", (t, dim))
        wn1 = f.arg("w_attn_norm", (dim,),
                    parameter=layer + ".input_layernorm.weight")
        wq = f.arg("w_q", (dim, dim), parameter=layer + ".self_attn.q_proj.weight")
        wk = f.arg("w_k", (dim, dim), parameter=layer + ".self_attn.k_proj.weight")
        wv = f.arg("w_v", (dim, dim), parameter=layer + ".self_attn.v_proj.weight")
        wo = f.arg("w_o", (dim, dim), parameter=layer + ".self_attn.o_proj.weight")
        wn2 = f.arg("w_mlp_norm", (dim,),
                    parameter=layer + ".post_attention_layernorm.weight")
        wg = f.arg("w_gate", (ffn, dim), parameter=layer + ".mlp.gate_proj.weight")
        wu = f.arg("w_up", (ffn, dim), parameter=layer + ".mlp.up_proj.weight")
        wd = f.arg("w_down", (dim, ffn), parameter=layer + ".mlp.down_proj.weight")
        f.step_arg()
        attn = layer + ".self_attn"

        def split_heads(v, hint):
            # [T, dim] -> [B, S, H, Dh] -> [B, H, S, Dh] -> [B*H, S, Dh]
            e = f.expand(v, [[0, 1], [2, 3]], (batch, seq, heads, head_dim))
            tr = f.transpose(e, (0, 2, 1, 3))
            return f.collapse(tr, [[0, 1], [2], [3]], hint=hint)

        def merge_heads(v, hint):
            # [B*H, S, Dh] -> [B, H, S, Dh] -> [B, S, H, Dh] -> [T, dim]
            e = f.expand(v, [[0, 1], [2], [3]], (batch, heads, seq, head_dim))
            tr = f.transpose(e, (0, 2, 1, 3))
            return f.collapse(tr, [[0, 1], [2, 3]], hint=hint)

        # ---------------- forward
        h1, n1 = rmsnorm_fwd(f, x, wn1, eps, "norm1")
        f.comment("Q/K/V projections (rotary embedding omitted: it is an "
                  "elementwise rotation that does not touch the GEMMs)")
        q = f.matmul(h1, wq, "nt", "fprop", attn + ".q_proj", hint="q")
        k = f.matmul(h1, wk, "nt", "fprop", attn + ".k_proj", hint="k")
        v = f.matmul(h1, wv, "nt", "fprop", attn + ".v_proj", hint="v")
        qh = split_heads(q, "qh")
        kh = split_heads(k, "kh")
        vh = split_heads(v, "vh")
        f.comment("causal softmax attention, %d heads of %d, scale 1/sqrt(%d); "
                  "untagged batch_matmuls (high precision)" % (heads, head_dim,
                                                               head_dim))
        sc = f.batch_matmul(qh, kh, "nt", hint="scores")

        def mask(b, s, _):
            i = b.index(1)
            j = b.index(2)
            c = b.cmpi("ugt", j, i)
            return b.select(c, b.const(float("-inf")), b.mul(s, b.const(scale)))
        sm = f.generic((bh, seq, seq), [(sc, (0, 1, 2))], (0, 1, 2), mask,
                       hint="masked")
        mx = f.generic((bh, seq, seq), [(sm, (0, 1, 2))], (0, 1),
                       lambda b, s, acc: b.max(s, acc),
                       init=f.full((bh, seq), float("-inf"), "ninf"),
                       hint="rowmax")
        ex = f.generic((bh, seq, seq), [(sm, (0, 1, 2)), (mx, (0, 1))],
                       (0, 1, 2), lambda b, s, m, _: b.exp(b.sub(s, m)),
                       hint="expo")
        z = f.generic((bh, seq, seq), [(ex, (0, 1, 2))], (0, 1),
                      lambda b, e, acc: b.add(e, acc), init=f.zeros((bh, seq)),
                      hint="rowsum")
        p = f.generic((bh, seq, seq), [(ex, (0, 1, 2)), (z, (0, 1))],
                      (0, 1, 2), lambda b, e, zz, _: b.div(e, zz), hint="probs")
        oh = f.batch_matmul(p, vh, "nn", hint="ctx")
        o = merge_heads(oh, "ctx_flat")
        ao = f.matmul(o, wo, "nt", "fprop", attn + ".o_proj", hint="attn_out")
        f.comment("residual")
        hres = f.ew(lambda b, a, c: b.add(a, c), x, ao, hint="resid1")
        h2, n2 = rmsnorm_fwd(f, hres, wn2, eps, "norm2")
        m, saved = swiglu_fwd(f, h2, wg, wu, wd, layer + ".mlp")
        f.comment("residual")
        out = f.ew(lambda b, a, c: b.add(a, c), hres, m, hint="out")
        loss, dout = mse_loss(f, out, target)

        # ---------------- backward
        dh2, dwg, dwu, dwd = swiglu_bwd(f, dout, saved, wg, wu, wd,
                                        layer + ".mlp")
        dhres_n, dwn2 = rmsnorm_bwd(f, dh2, n2, wn2, "norm2")
        f.comment("residual: both paths into resid1")
        dhres = f.ew(lambda b, a, c: b.add(a, c), dout, dhres_n, hint="dresid1")
        f.comment("attention backward")
        dwo = f.matmul(dhres, o, "tn", "wgrad", attn + ".o_proj", hint="dw_o")
        do = f.matmul(dhres, wo, "nn", "dgrad", attn + ".o_proj", hint="dctx_flat")
        doh = split_heads(do, "dctx")
        dp = f.batch_matmul(doh, vh, "nt", hint="dprobs")
        dvh = f.batch_matmul(p, doh, "tn", hint="dvh")
        rd = f.generic((bh, seq, seq), [(dp, (0, 1, 2)), (p, (0, 1, 2))],
                       (0, 1), lambda b, a, c, acc: b.add(b.mul(a, c), acc),
                       init=f.zeros((bh, seq)), hint="rowdot")
        f.comment("softmax backward, times the 1/sqrt(Dh) scale "
                  "(masked entries have p = 0)")

        def dsm(b, g, pp, r, _):
            return b.mul(b.mul(pp, b.sub(g, r)), b.const(scale))
        ds = f.generic((bh, seq, seq), [(dp, (0, 1, 2)), (p, (0, 1, 2)),
                                        (rd, (0, 1))], (0, 1, 2), dsm,
                       hint="dscores")
        dqh = f.batch_matmul(ds, kh, "nn", hint="dqh")
        dkh = f.batch_matmul(ds, qh, "tn", hint="dkh")
        dq = merge_heads(dqh, "dq")
        dk = merge_heads(dkh, "dk")
        dv = merge_heads(dvh, "dv")
        dwq = f.matmul(dq, h1, "tn", "wgrad", attn + ".q_proj", hint="dw_q")
        dwk = f.matmul(dk, h1, "tn", "wgrad", attn + ".k_proj", hint="dw_k")
        dwv = f.matmul(dv, h1, "tn", "wgrad", attn + ".v_proj", hint="dw_v")
        dh1q = f.matmul(dq, wq, "nn", "dgrad", attn + ".q_proj", hint="dh1_q")
        dh1k = f.matmul(dk, wk, "nn", "dgrad", attn + ".k_proj", hint="dh1_k")
        dh1v = f.matmul(dv, wv, "nn", "dgrad", attn + ".v_proj", hint="dh1_v")
        dh1 = f.ew(lambda b, a, c, e: b.add(b.add(a, c), e), dh1q, dh1k, dh1v,
                   hint="dh1")
        dx_n, dwn1 = rmsnorm_bwd(f, dh1, n1, wn1, "norm1")
        f.comment("residual: dx = dresid1 + RMSNorm-1 backward")
        dx = f.ew(lambda b, a, c: b.add(a, c), dhres, dx_n, hint="dx")
        return [("loss", loss),
                ("d_input_layernorm.weight", dwn1),
                ("d_q_proj.weight", dwq), ("d_k_proj.weight", dwk),
                ("d_v_proj.weight", dwv), ("d_o_proj.weight", dwo),
                ("d_post_attention_layernorm.weight", dwn2),
                ("d_gate_proj.weight", dwg), ("d_up_proj.weight", dwu),
                ("d_down_proj.weight", dwd), ("dx", dx)]
    doc = ["transformer_block: Llama-style decoder block %r, batch=%d seq=%d"
           % (layer, batch, seq),
           "(T=%d rows), dim=%d, heads=%d of %d, ffn=%d, RMSNorm eps=%g."
           % (t, dim, heads, head_dim, ffn, eps),
           "h = x + o_proj(attn(rmsnorm1(x))); out = h + mlp(rmsnorm2(h));",
           "loss = mean((out - target)^2). No rotary embedding.",
           "Arguments: x[T,dim], target[T,dim], input_layernorm.weight[dim],",
           "  q/k/v/o_proj.weight[dim,dim], post_attention_layernorm.weight[dim],",
           "  gate/up_proj.weight[ffn,dim], down_proj.weight[dim,ffn], step (i64).",
           "Results: loss (tensor<f32>), the 9 parameter gradients in argument",
           "  order, dx."]
    return _build("transformer_block", build, doc,
                  dict(batch=batch, seq=seq, heads=heads, head_dim=head_dim,
                       ffn=ffn, eps=eps, layer=layer))


def build_all(args=None):
    a = args or parse_args([])
    return [
        linear_fwd_bwd(a.linear_t, a.linear_k, a.linear_n),
        mlp_block(a.mlp_t, a.mlp_dim, a.mlp_ffn),
        transformer_block(a.block_batch, a.block_seq, a.block_heads,
                          a.block_head_dim, a.block_ffn),
    ]


def write_all(out_dir, graphs):
    paths = []
    for g in graphs:
        for suffix, text in ((".mlir", g.tagged), (".untagged.mlir", g.untagged)):
            path = os.path.join(out_dir, g.name + suffix)
            with open(path, "w") as fh:
                fh.write(text)
            paths.append(path)
    return paths


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    p.add_argument("--linear-t", type=int, default=64)
    p.add_argument("--linear-k", type=int, default=64)
    p.add_argument("--linear-n", type=int, default=32)
    p.add_argument("--mlp-t", type=int, default=32)
    p.add_argument("--mlp-dim", type=int, default=64)
    p.add_argument("--mlp-ffn", type=int, default=96)
    p.add_argument("--block-batch", type=int, default=2)
    p.add_argument("--block-seq", type=int, default=16)
    p.add_argument("--block-heads", type=int, default=2)
    p.add_argument("--block-head-dim", type=int, default=32)
    p.add_argument("--block-ffn", type=int, default=96)
    return p.parse_args(argv)


def main(argv):
    a = parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    for path in write_all(a.out, build_all(a)):
        print(path)


if __name__ == "__main__":
    main(sys.argv[1:])
