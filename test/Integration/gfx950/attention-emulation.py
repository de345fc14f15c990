# The FlashAttention kernels of convert-attention-to-amdgpu (forward, and
# the backward's bwd_delta, bwd_dq and bwd_dkdv, on v_mfma_f32_16x16x32_bf16),
# executed lane by lane by the emulator under --gemm-precision=bf16 (so
# mxfp4-round-attention-io gives the composites bf16 operands and results),
# against NumPy's float64 causal attention of the same bf16 values. The
# composites' bodies here are stand-ins that read their operands and return
# a constant: only the fused kernels give results within the bounds. Causal (tiles below the diagonal, the diagonal
# masked), GQA groups 1 to 3 (the stacked query rows of a KV head share its
# tiles; dk and dv sum over them), head dims 64 and 128, seq 64 to 256,
# batch 1 and 2, forward blocks of 64 and 128 stacked rows.
#
# Forward tolerance: o within 2^-8 |want| (its bf16 rounding) + 2^-8 M,
# M = sum_j p_j |v_j| (the probabilities' magnitude-weighted values): P is
# rounded to bf16 (2^-9 relative) where it becomes an MFMA operand, against
# the running maximum, which float64 cannot reproduce; the f32 sums and
# exp2 add ~2^-16 M. lse (f32) within 2^-14 (1 + |lse|). A wrong lane
# layout, row permutation or mask is O(M).
#
# Backward tolerance: each gradient element within 2^-8 |want| (the
# result's bf16 rounding) + 2^-12 M + 1e-30, the reference rounding P and
# P (dP - delta) to bf16 where the kernels do (dq and dk are those sums
# times 1 / sqrt(d) in f32; delta = rowsum(dO * o) of the bf16 values), M
# the same product on magnitudes (|P| |dO| for dv; |dS|' |q| for dk and
# |dS|' |k| for dq, |dS|' = |P| (|dO| |v|^T + rowsum |dO o|) / sqrt(d), the
# magnitude dP - delta cancels from). The kernels' f32 sums over at most
# 256 terms and exp2 contribute ~2^-16 M; the rest allows a few of the bf16
# roundings of P or dS to land on the other side of a rounding boundary
# than float64's.
# RUN: %PYTHON %s mxfp4-run %t

import os
import sys

import numpy as np

import harness
import mx_reference as ref

tool, workdir = sys.argv[1], sys.argv[2]
emu = harness.Runner(tool, os.path.join(workdir, "emu"),
                     ["--target=gfx950-emulator", "--gemm-precision=bf16"])
check = harness.Checker("gfx950 attention emulation")
rng = np.random.default_rng(29)
T = harness.tensor_type


def stand_in(operands, results):
    """A composite body that reads each operand (as the real decomposition
    does, so that bufferization keeps them apart) and fills its results
    with the sum of their first elements: a value no kernel result can be
    within the bounds of."""
    text = "  %i0 = arith.constant 0 : index\n  %s0 = arith.constant 0.0 : f32\n"
    for i, (name, t) in enumerate(operands):
        zeros = ", ".join(["%i0"] * (len(t.split("x")) - 1))
        text += (f"  %x{i} = tensor.extract %{name}[{zeros}] : {t}\n"
                 f"  %s{i + 1} = arith.addf %s{i}, %x{i} : f32\n")
    last = f"%s{len(operands)}"
    for name, t in results:
        text += (f"  %{name}e = tensor.empty() : {t}\n"
                 f"  %{name} = linalg.fill ins({last} : f32) outs(%{name}e : {t})"
                 f" -> {t}\n")
    return text


def forward_module(batch, seq, kv_heads, groups, d):
    """@attn calls a causal_attention composite (stand-in body)."""
    h = kv_heads * groups
    q, k = T((batch, seq, h, d), "f32"), T((batch, seq, kv_heads, d), "f32")
    lse = T((batch, h, seq), "f32")
    args, results = f"{q}, {k}, {k}", f"{q}, {lse}"
    return (f"func.func @attn(%q: {q}, %k: {k}, %v: {k}) -> ({results}) {{\n"
            f"  %o, %lse = call @attn_fwd(%q, %k, %v) : ({args}) -> ({results})\n"
            f"  return %o, %lse : {results}\n}}\n"
            f"func.func private @attn_fwd(%q: {q}, %k: {k}, %v: {k}) -> ({results})\n"
            f"    attributes {{mxfp4.composite = \"causal_attention\"}} {{\n"
            f"{stand_in((('q', q), ('k', k), ('v', k)), (('zo', q), ('zl', lse)))}"
            f"  return %zo, %zl : {results}\n}}\n")


def backward_module(batch, seq, kv_heads, groups, d):
    """@grad calls a causal_attention_backward composite (stand-in body)."""
    h = kv_heads * groups
    q, k = T((batch, seq, h, d), "f32"), T((batch, seq, kv_heads, d), "f32")
    lse = T((batch, h, seq), "f32")
    args = f"{q}, {k}, {k}, {q}, {lse}, {q}"
    results = f"{q}, {k}, {k}"
    return (f"func.func @grad(%q: {q}, %k: {k}, %v: {k}, %o: {q}, %lse: {lse}, %do: {q}) -> ({results}) {{\n"
            f"  %dq, %dk, %dv = call @attn_bwd(%q, %k, %v, %o, %lse, %do) : ({args}) -> ({results})\n"
            f"  return %dq, %dk, %dv : {results}\n}}\n"
            f"func.func private @attn_bwd(%q: {q}, %k: {k}, %v: {k}, %o: {q}, %lse: {lse}, %do: {q}) -> ({results})\n"
            f"    attributes {{mxfp4.composite = \"causal_attention_backward\"}} {{\n"
            f"{stand_in((('q', q), ('k', k), ('v', k), ('o', q), ('lse', lse), ('do', q)), (('zq', q), ('zk', k), ('zv', k)))}"
            f"  return %zq, %zk, %zv : {results}\n}}\n")


def reference_forward(q, k, v, d):
    """float64 o, lse and M = P |v| of causal attention for one head."""
    seq = q.shape[0]
    s = q @ k.T / np.sqrt(d)
    s[np.triu_indices(seq, 1)] = -np.inf
    m = s.max(axis=1, keepdims=True)
    e = np.exp(s - m)
    total = e.sum(axis=1, keepdims=True)
    p = e / total
    return p @ v, (m + np.log(total))[:, 0], p @ np.abs(v)


def inputs(batch, seq, kv_heads, groups, d):
    h = kv_heads * groups
    q = rng.standard_normal((batch, seq, h, d)).astype(np.float32)
    k = rng.standard_normal((batch, seq, kv_heads, d)).astype(np.float32)
    v = rng.standard_normal((batch, seq, kv_heads, d)).astype(np.float32)
    return q, k, v


def within(label, got, want, bound):
    err = np.abs(got.astype(np.float64) - want)
    worst = float((err / bound).max())
    check.true(f"{label}: within the bound", worst <= 1.0,
               f"worst error {float(err.max()):.3g}, {worst:.3g} x the bound")
    print(f"{label}: max |err| {float(err.max()):.3g}, {worst:.3f} of the "
          "bound")


def forward_case(batch, seq, kv_heads, groups, d):
    label = f"forward b{batch} s{seq} kv{kv_heads}x{groups} d{d}"
    h = kv_heads * groups
    q, k, v = inputs(batch, seq, kv_heads, groups, d)
    qr, kr, vr = (ref.bf16_round(x) for x in (q, k, v))
    want_o = np.zeros(qr.shape)
    want_lse = np.zeros((batch, h, seq))
    mag = np.zeros(qr.shape)
    for b in range(batch):
        for hq in range(h):
            kv = hq // groups
            o, lse, m = reference_forward(qr[b, :, hq], kr[b, :, kv],
                                          vr[b, :, kv], d)
            want_o[b, :, hq], want_lse[b, hq], mag[b, :, hq] = o, lse, m
    o, lse = emu.run(forward_module(batch, seq, kv_heads, groups, d), "attn",
                     [q, k, v], 2)
    within(f"{label} o", o, want_o,
           2.0 ** -8 * np.abs(want_o) + 2.0 ** -8 * mag + 1e-30)
    within(f"{label} lse", lse, want_lse,
           2.0 ** -14 * (1 + np.abs(want_lse)))


def backward_case(batch, seq, kv_heads, groups, d):
    label = f"backward b{batch} s{seq} kv{kv_heads}x{groups} d{d}"
    h = kv_heads * groups
    q, k, v = inputs(batch, seq, kv_heads, groups, d)
    do = rng.standard_normal((batch, seq, h, d)).astype(np.float32)
    qr, kr, vr, dor = (ref.bf16_round(x) for x in (q, k, v, do))
    o = np.zeros((batch, seq, h, d), np.float32)
    lse = np.zeros((batch, h, seq), np.float32)
    for b in range(batch):
        for hq in range(h):
            kv = hq // groups
            ob, lb, _ = reference_forward(qr[b, :, hq], kr[b, :, kv],
                                          vr[b, :, kv], d)
            o[b, :, hq], lse[b, hq] = ob, lb
    orr = ref.bf16_round(o)
    lse64 = lse.astype(np.float64)

    want = [np.zeros(qr.shape), np.zeros(kr.shape), np.zeros(vr.shape)]
    mag = [np.zeros(qr.shape), np.zeros(kr.shape), np.zeros(vr.shape)]
    scale = float(np.float32(1 / np.sqrt(d)))
    hidden = np.triu(np.ones((seq, seq), bool), 1)
    for b in range(batch):
        for hq in range(h):
            kv = hq // groups
            qh, kh, vh = qr[b, :, hq], kr[b, :, kv], vr[b, :, kv]
            doh, oh = dor[b, :, hq], orr[b, :, hq]
            s = qh @ kh.T / np.sqrt(d)
            p = np.exp(s - lse64[b, hq][:, None])
            p[hidden] = 0
            dp = doh @ vh.T
            delta = (doh * oh).sum(axis=1)
            ds = p * (dp - delta[:, None])
            ds_mag = p * (np.abs(doh) @ np.abs(vh).T +
                          np.abs(doh * oh).sum(axis=1)[:, None]) / np.sqrt(d)
            pb, dsb = ref.bf16_round(p), ref.bf16_round(ds)
            want[0][b, :, hq] = dsb @ kh * scale
            mag[0][b, :, hq] = ds_mag @ np.abs(kh)
            want[1][b, :, kv] += dsb.T @ qh * scale
            mag[1][b, :, kv] += ds_mag.T @ np.abs(qh)
            want[2][b, :, kv] += pb.T @ doh
            mag[2][b, :, kv] += p.T @ np.abs(doh)

    got = emu.run(backward_module(batch, seq, kv_heads, groups, d), "grad",
                  [q, k, v, o, lse, do], 3)
    for name, g, w, m in zip(("dq", "dk", "dv"), got, want, mag):
        within(f"{label} {name}", g, w,
               2.0 ** -8 * np.abs(w) + 2.0 ** -12 * m + 1e-30)


forward_case(1, 128, 2, 1, 64)
forward_case(2, 64, 1, 2, 128)
forward_case(1, 192, 1, 3, 64)
forward_case(1, 256, 1, 2, 128)
backward_case(1, 128, 2, 1, 64)
backward_case(2, 64, 1, 2, 128)
backward_case(1, 192, 1, 3, 64)
backward_case(1, 256, 1, 2, 128)
check.finish()
