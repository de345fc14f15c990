# The bf16 MFMA GEMM of convert-linalg-matmul-to-amdgpu (high-precision
# contractions under --gemm-precision=bf16), executed lane by lane by the
# emulator (its packing launches, direct-to-LDS copies, swizzle, MFMA lane
# layouts, ragged edges and split-K reduction), against NumPy: the float64
# product of the same bf16-rounded (ties to even) operands. Every matched
# form: matmul with B transposed (Fprop), plain (Dgrad), A and B transposed
# (Wgrad, split K), batch_matmul (attention), a generic contraction, an
# accumulating C, ragged M, N and K (K = 20 is padded to 24), and the pilot
# step's shapes with the token dimension reduced.
#
# Tolerance: the kernel sums bf16 x bf16 products (exact in f32) in f32 in
# K order per 16x16x32 MFMA, then the splits in order; NumPy sums in
# float64. Each result must be within (K + 2) * 2^-24 * sum_k |a b| (the
# f32 summation bound) of the float64 value, plus 1e-30.
# RUN: %PYTHON %s mxfp4-run %t

import os
import sys

import numpy as np

import harness
import mx_reference as ref

tool, workdir = sys.argv[1], sys.argv[2]
emu = harness.Runner(tool, os.path.join(workdir, "emu"),
                     ["--target=gfx950-emulator", "--gemm-precision=bf16"])
check = harness.Checker("gfx950 bf16 GEMM emulation")
rng = np.random.default_rng(1950)
T = harness.tensor_type
rounding = False


def contraction(name, a_shape, b_shape, c_shape, maps, iterators, element,
                accumulate):
    """A function of one contraction, written as linalg.generic; C starts as
    zeros unless `accumulate` (then it is an argument)."""
    a, b, c = T(a_shape, element), T(b_shape, element), T(c_shape, "f32")
    args = f"%a: {a}, %b: {b}"
    if accumulate:
        args += f", %c0: {c}"
        init = "%c0"
        prologue = ""
    else:
        init = "%z"
        prologue = (f"  %e = tensor.empty() : {c}\n"
                    f"  %zero = arith.constant 0.0 : f32\n"
                    f"  %z = linalg.fill ins(%zero : f32) outs(%e : {c}) -> {c}\n")
    ext = ""
    av, bv = "%x", "%y"
    if element == "bf16":
        ext = ("    %xe = arith.extf %x : bf16 to f32\n"
               "    %ye = arith.extf %y : bf16 to f32\n")
        av, bv = "%xe", "%ye"
    its = ", ".join(f'"{i}"' for i in iterators)
    return (f"func.func @{name}({args}) -> {c} {{\n{prologue}"
            f"  %r = linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = [{its}]}}\n"
            f"      ins(%a, %b : {a}, {b}) outs({init} : {c}) {{\n"
            f"  ^bb0(%x: {element}, %y: {element}, %acc: f32):\n{ext}"
            f"    %p = arith.mulf {av}, {bv} : f32\n"
            f"    %s = arith.addf %acc, %p : f32\n"
            f"    linalg.yield %s : f32\n"
            f"  }} -> {c}\n"
            f"  return %r : {c}\n}}\n")


def named(name, op, a_shape, b_shape, c_shape, element, attrs=""):
    """A function of one named matmul op on a zero-filled C."""
    a, b, c = T(a_shape, element), T(b_shape, element), T(c_shape, "f32")
    return (f"func.func @{name}(%a: {a}, %b: {b}) -> {c} {{\n"
            f"  %e = tensor.empty() : {c}\n"
            f"  %zero = arith.constant 0.0 : f32\n"
            f"  %z = linalg.fill ins(%zero : f32) outs(%e : {c}) -> {c}\n"
            f"  %r = {op} {attrs}ins(%a, %b : {a}, {b}) outs(%z : {c}) -> {c}\n"
            f"  return %r : {c}\n}}\n")


def operand(shape, element):
    x = rng.standard_normal(shape).astype(np.float32)
    return harness.as_array(x, element)


def as_f32(x, element):
    return ref.bf16_to_f32(x) if element == "bf16" else x


def run(label, mlir, function, inputs, want_fn, k):
    """Runs `function` on the emulator; `want_fn(a64, b64)` gives the
    float64 result and sum |a b| from the bf16-rounded operands."""
    got = emu.run(mlir, function, inputs, 1)[0]
    want, magnitude = want_fn(*inputs)
    bound = (k + 2) * 2.0 ** -24 * magnitude + 1e-30
    err = np.abs(got.astype(np.float64) - want)
    worst = float((err / bound).max())
    check.true(f"{label}: within the f32 summation bound", worst <= 1.0,
               f"worst error {float(err.max()):.3g}, {worst:.3g} x the bound")
    if all(x.dtype == np.float32 for x in inputs[:2]):
        # f32 operands: the same bound around the unrounded product must
        # fail, or the GEMM did not run on bf16 operands.
        global rounding
        rounding = True
        exact = want_fn(*[bf16_exact(x) for x in inputs[:2]], *inputs[2:])[0]
        check.true(f"{label}: the operands were rounded to bf16",
                   bool((np.abs(got - exact) > bound).any()),
                   "the result is the f32 product: no bf16 MFMA GEMM ran")
    print(f"{label}: max |err| {float(err.max()):.3g}, "
          f"{worst:.3f} of the bound, {got.size} results")


class bf16_exact(np.ndarray):
    """An f32 operand that `rounded` leaves unrounded (the f32 reference)."""

    def __new__(cls, x):
        return np.asarray(x).view(cls)


def rounded(x, element):
    if isinstance(x, bf16_exact):
        return np.asarray(x).astype(np.float64)
    return ref.bf16_round(as_f32(x, element))


MK, NK, MN = ("affine_map<(m, n, k) -> (m, k)>",
              "affine_map<(m, n, k) -> (n, k)>",
              "affine_map<(m, n, k) -> (m, n)>")
KM, KN = "affine_map<(m, n, k) -> (k, m)>", "affine_map<(m, n, k) -> (k, n)>"
PAR2 = ["parallel", "parallel", "reduction"]

# Fprop (x W^T, W [out, in]): both K-contiguous, read in place once rounded.
for m, n, k, element in [(130, 72, 200, "f32"), (256, 256, 512, "bf16"),
                         (33, 200, 64, "f32")]:
    mlir = named("fprop", "linalg.matmul", (m, k), (n, k), (m, n), element,
                 f"indexing_maps = [{MK}, {NK}, {MN}] ")
    a, b = operand((m, k), element), operand((n, k), element)

    def want(a, b, element=element):
        ra, rb = rounded(a, element), rounded(b, element)
        return ra @ rb.T, np.abs(ra) @ np.abs(rb).T
    run(f"fprop {m}x{n}x{k} {element}", mlir, "fprop", [a, b], want, k)

# Dgrad (dY W, W [out, in]): B packed K-major.
for m, n, k in [(100, 136, 96), (128, 512, 256)]:
    mlir = named("dgrad", "linalg.matmul", (m, k), (k, n), (m, n), "f32")
    a, b = operand((m, k), "f32"), operand((k, n), "f32")

    def want(a, b):
        ra, rb = rounded(a, "f32"), rounded(b, "f32")
        return ra @ rb, np.abs(ra) @ np.abs(rb)
    run(f"dgrad {m}x{n}x{k}", mlir, "dgrad", [a, b], want, k)

# Wgrad (dY^T X): both packed; one or few tiles, long K: split K.
for m, n, k in [(96, 64, 1024), (256, 512, 2048), (72, 40, 520)]:
    mlir = contraction("wgrad", (k, m), (k, n), (m, n), [KM, KN, MN], PAR2,
                       "f32", False)
    a, b = operand((k, m), "f32"), operand((k, n), "f32")

    def want(a, b):
        ra, rb = rounded(a, "f32"), rounded(b, "f32")
        return ra.T @ rb, np.abs(ra).T @ np.abs(rb)
    run(f"wgrad {m}x{n}x{k} (split K)", mlir, "wgrad", [a, b], want, k)

# An accumulating C (C + A B^T), ragged.
m, n, k = 70, 52, 136
mlir = contraction("accumulate", (m, k), (n, k), (m, n), [MK, NK, MN], PAR2,
                   "f32", True)
a, b = operand((m, k), "f32"), operand((n, k), "f32")
c0 = rng.standard_normal((m, n)).astype(np.float32)


def want_acc(a, b, c0):
    ra, rb = rounded(a, "f32"), rounded(b, "f32")
    return c0.astype(np.float64) + ra @ rb.T, np.abs(c0) + np.abs(ra) @ np.abs(rb).T


run("accumulate 70x52x136", mlir, "accumulate", [a, b, c0], want_acc, k + 1)

# Attention: batched Q K^T (generic, B K-contiguous) and P V (batch_matmul,
# V packed), a ragged K that is not a multiple of 8, and the pilot's head
# shapes (seq 512 reduced to 128 queries, head dim 64).
BMK, BNK, BMN = ("affine_map<(b, m, n, k) -> (b, m, k)>",
                 "affine_map<(b, m, n, k) -> (b, n, k)>",
                 "affine_map<(b, m, n, k) -> (b, m, n)>")
PAR3 = ["parallel", "parallel", "parallel", "reduction"]
for batch, m, n, k, element in [(4, 70, 50, 40, "bf16"), (3, 33, 17, 20, "f32"),
                                (2, 128, 512, 64, "bf16")]:
    mlir = contraction("qk", (batch, m, k), (batch, n, k), (batch, m, n),
                       [BMK, BNK, BMN], PAR3, element, False)
    a, b = operand((batch, m, k), element), operand((batch, n, k), element)

    def want(a, b, element=element):
        ra, rb = rounded(a, element), rounded(b, element)
        return (np.einsum("bmk,bnk->bmn", ra, rb),
                np.einsum("bmk,bnk->bmn", np.abs(ra), np.abs(rb)))
    run(f"attention q k^T {batch}x{m}x{n}x{k} {element}", mlir, "qk", [a, b],
        want, k)
for batch, m, n, k in [(4, 70, 50, 40), (2, 128, 64, 512)]:
    mlir = named("pv", "linalg.batch_matmul", (batch, m, k), (batch, k, n),
                 (batch, m, n), "bf16")
    a, b = operand((batch, m, k), "bf16"), operand((batch, k, n), "bf16")

    def want(a, b):
        ra, rb = rounded(a, "bf16"), rounded(b, "bf16")
        return ra @ rb, np.abs(ra) @ np.abs(rb)
    run(f"attention p v {batch}x{m}x{n}x{k}", mlir, "pv", [a, b], want, k)

check.true("some cases have f32 operands", rounding)
check.finish()
