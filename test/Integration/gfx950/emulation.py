# The gfx950 kernels, executed lane by lane by the emulator (their own index
# math, LDS staging, lane layouts and scale selection), against the CPU path
# bit for bit: the fused Hadamard + quantize kernel (both orientations, every
# rotation kind, scale rule and source type, MX corner cases), the GEMM
# (ragged shapes, every tile, f32/bf16 results, accumulators, NaN scales),
# dequantize, and a whole linear layer under fp4-all-dht16. Then bugs planted
# in the GEMM's lane mapping, LDS swizzle and scale selection must be caught.
# RUN: %PYTHON %s mxfp4-run %t gfx950-emulator
# The same comparisons on a real MI350X/MI355X run in hardware.test.

import os
import sys

import numpy as np

import harness

tool, workdir, target = sys.argv[1], sys.argv[2], sys.argv[3]
TARGET = f"--target={target}"
cpu = harness.Runner(tool, os.path.join(workdir, "cpu"))
emu = harness.Runner(tool, os.path.join(workdir, "emu"), [TARGET])
check = harness.Checker("gfx950 emulation")
rng = np.random.default_rng(950)
T = harness.tensor_type


def both(mlir, function, inputs, outputs, label, runner_args=(), **kw):
    want = cpu.run(mlir, function, inputs, outputs)
    extra = list(runner_args)
    runner = emu if not extra else harness.Runner(
        tool, os.path.join(workdir, "emu-" + "-".join(a.strip("-").replace("=", "_") for a in extra)),
        [TARGET] + extra)
    got = runner.run(mlir, function, inputs, outputs)
    for i, (g, w) in enumerate(zip(got, want)):
        check.same_bits(f"{label} result {i}", g, w, **kw)
    return got, want


# --- Fused Hadamard + quantize: row-wise and transposed from one read. ------
def quantize_module(rows, cols, element, row_rot, col_rot, row_rule, col_rule,
                    stochastic=False):
    x = T((rows, cols), element)
    xt = T((cols, rows), element)
    args = [f"%x: {x}", "%seed: i64", "%step: i64"]

    def rotate(name, src, ty, rot):
        if rot is None:
            return src, ""
        size, kind, inverse = rot
        operands = ""
        if kind == "random_fixed":
            operands = " seed(%seed)"
        elif kind == "random_per_step":
            operands = " seed(%seed) step(%step)"
        inv = "inverse " if inverse else ""
        return f"%{name}", (f"  %{name} = mxfp4.hadamard {inv}{src} axis = 1 size = {size}"
                            f" kind = {kind}{operands} : {ty}\n")

    sr = " rounding = stochastic seed(%seed) counter(%step)" if stochastic else ""
    r_src, r_ops = rotate("hr", "%x", x, row_rot)
    t_src, t_ops = rotate("ht", "%t", xt, col_rot)
    v, s = T((rows, cols), "f4E2M1FN"), T((rows, cols // 32), "f8E8M0FNU")
    vt, st = T((cols, rows), "f4E2M1FN"), T((cols, rows // 32), "f8E8M0FNU")
    return (f"func.func @q({', '.join(args)}) -> ({v}, {s}, {vt}, {st}) {{\n"
            + r_ops +
            f"  %v, %s = mxfp4.quantize {r_src} axis = 1 scale_rule = {row_rule}{sr} : {x} -> {v}, {s}\n"
            f"  %e = tensor.empty() : {xt}\n"
            f"  %t = linalg.transpose ins(%x : {x}) outs(%e : {xt}) permutation = [1, 0]\n"
            + t_ops +
            f"  %vt, %st = mxfp4.quantize {t_src} axis = 1 scale_rule = {col_rule}{sr} : {xt} -> {vt}, {st}\n"
            f"  return %v, %s, %vt, %st : {v}, {s}, {vt}, {st}\n}}\n")


QUANTIZE_CASES = [
    # rows, cols, element, row rotation, column rotation, rules
    (32, 32, "f32", None, None, "even", "floor"),
    (64, 96, "f32", (16, "deterministic", False), (32, "deterministic", False), "even", "even"),
    (96, 64, "bf16", (32, "deterministic", False), (16, "deterministic", False), "ceil", "rceil"),
    (64, 128, "f32", (16, "random_fixed", False), (16, "random_per_step", False), "floor", "even"),
    (128, 64, "bf16", (32, "random_per_step", True), None, "rceil", "ceil"),
    (160, 96, "f32", (16, "deterministic", True), (32, "random_fixed", False), "even", "floor"),
    # Stochastic rounding: the same Philox words as the CPU.
    (64, 64, "f32", None, None, "even", "even", True),
    (96, 128, "bf16", (16, "deterministic", False), (16, "deterministic", False), "floor", "even", True),
]
for case in QUANTIZE_CASES:
    rows, cols, element, rr, cr, rrule, crule = case[:7]
    stochastic = len(case) > 7 and case[7]
    x = harness.as_array(harness.mx_stress((rows, cols), 1, rng), element)
    label = f"quantize {rows}x{cols} {element} {rr} {cr} {rrule}/{crule} sr={stochastic}"
    both(quantize_module(rows, cols, element, rr, cr, rrule, crule, stochastic),
         "q", [x, 12345, 7], 4, label)


# --- GEMM: ragged shapes, every tile, accumulators, bf16 results. ----------
def gemm_module(m, n, k, result, acc):
    a, sa = T((m, k), "f4E2M1FN"), T((m, k // 32), "f8E8M0FNU")
    b, sb = T((n, k), "f4E2M1FN"), T((n, k // 32), "f8E8M0FNU")
    c = T((m, n), result)
    args = f"%a: {a}, %sa: {sa}, %b: {b}, %sb: {sb}"
    acc_text = ""
    if acc:
        args += f", %c0: {T((m, n), acc)}"
        acc_text = " acc(%c0)"
    return (f"func.func @mm({args}) -> {c} {{\n"
            f"  %c = mxfp4.scaled_matmul %a scale %sa, %b scale %sb{acc_text} : {a}, {sa}, {b}, {sb} -> {c}\n"
            f"  return %c : {c}\n}}\n")


def gemm_inputs(m, n, k, acc, nan=False):
    a = rng.integers(0, 16, (m, k), dtype=np.uint8)
    b = rng.integers(0, 16, (n, k), dtype=np.uint8)
    sa = rng.integers(112, 142, (m, k // 32), dtype=np.uint8)
    sb = rng.integers(112, 142, (n, k // 32), dtype=np.uint8)
    if nan:
        sa[m // 2, 0] = 255
    inputs = [a, sa, b, sb]
    if acc:
        c0 = rng.standard_normal((m, n)).astype(np.float32) * 100
        inputs.append(harness.as_array(c0, acc))
    return inputs


GEMM_CASES = [
    # m, n, k, tile, result, acc
    (64, 64, 256, 64, "f32", None),
    (65, 33, 96, 64, "f32", None),
    (130, 70, 288, 64, "bf16", None),
    (1, 17, 32, 64, "f32", "f32"),
    (200, 136, 544, 128, "bf16", "bf16"),
    (128, 128, 1024, 128, "bf16", None),
    (256, 256, 512, 256, "f32", None),
    (300, 260, 320, 256, "f32", "f32"),
]
for m, n, k, tile, result, acc in GEMM_CASES:
    label = f"gemm {m}x{n}x{k} tile {tile} {result} acc {acc}"
    both(gemm_module(m, n, k, result, acc), "mm", gemm_inputs(m, n, k, acc),
         1, label, [f"--tile={tile}"], any_nan=True, bf16=result == "bf16")
both(gemm_module(96, 64, 256, "f32", None), "mm",
     gemm_inputs(96, 64, 256, None, nan=True), 1, "gemm with a NaN scale",
     ["--tile=64"], any_nan=True)


# --- Split K (the weight gradients' shape: few tiles, long K): the splits'
# f32 partial sums are added in split order by a second kernel, so the
# rounding differs from the CPU's one sum over K. Each result must be within
# the f32 summation bound (K / 32 + splits + 2) 2^-24 sum |terms| of the
# float64 value (terms: the block products and the accumulator), and the
# split order must be fixed (a second run gives the same bits).
FP4 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6] * 2) * np.repeat([1, -1], 8)


def gemm_exact(inputs, k):
    """float64 C and sum |terms| of the GEMM's products (+ acc)."""
    a, sa, b, sb = inputs[:4]
    av = FP4[a] * np.repeat(2.0 ** (sa.astype(np.float64) - 127), 32, axis=1)
    bv = FP4[b] * np.repeat(2.0 ** (sb.astype(np.float64) - 127), 32, axis=1)
    exact, magnitude = av @ bv.T, np.abs(av) @ np.abs(bv).T
    if len(inputs) > 4:
        acc = inputs[4].astype(np.float64)  # f32
        exact, magnitude = exact + acc, magnitude + np.abs(acc)
    return exact, magnitude


SPLIT_CASES = [
    # m, n, k, splits the chooser picks (tile 128), acc: 4 steps a split
    (128, 128, 4096, 4, None),
    (100, 72, 3008, 3, "f32"),  # ragged M, N and a short last split
]
for m, n, k, splits, acc in SPLIT_CASES:
    label = f"split-K gemm {m}x{n}x{k} acc {acc}"
    inputs = gemm_inputs(m, n, k, acc)
    mlir = gemm_module(m, n, k, "f32", acc)
    got = emu.run(mlir, "mm", inputs, 1)[0]
    again = emu.run(mlir, "mm", inputs, 1)[0]
    check.same_bits(f"{label}: deterministic", again, got)
    exact, magnitude = gemm_exact(inputs, k)
    bound = (k // 32 + splits + 2) * 2.0 ** -24 * magnitude + 1e-30
    worst = float((np.abs(got - exact) / bound).max())
    check.true(f"{label}: within the f32 summation bound", worst <= 1.0,
               f"{worst:.3g} x the bound")
    print(f"{label}: worst error {worst:.3f} of the bound")


# --- dequantize, including scale bytes 0, 254 and 255. ----------------------
for rows, cols, result in [(8, 64, "f32"), (33, 96, "bf16"), (300, 32, "f32")]:
    v = rng.integers(0, 16, (rows, cols), dtype=np.uint8)
    s = rng.integers(0, 255, (rows, cols // 32), dtype=np.uint8)
    s.flat[:3] = [0, 254, 255]
    mlir = (f"func.func @dq(%v: {T((rows, cols), 'f4E2M1FN')}, %s: {T((rows, cols // 32), 'f8E8M0FNU')}) -> {T((rows, cols), result)} {{\n"
            f"  %x = mxfp4.dequantize %v scale %s axis = 1 : {T((rows, cols), 'f4E2M1FN')}, {T((rows, cols // 32), 'f8E8M0FNU')} -> {T((rows, cols), result)}\n"
            f"  return %x : {T((rows, cols), result)}\n}}\n")
    both(mlir, "dq", [v, s], 1, f"dequantize {rows}x{cols} {result}",
         any_nan=True, bf16=result == "bf16")


# --- A linear layer's Fprop, Dgrad and Wgrad under fp4-all-dht16: fused
# quantize kernels writing pre-shuffled scales straight into the GEMMs. ------
layer = open(os.path.join(os.path.dirname(__file__), "..", "..", "Recipes",
                          "Inputs", "linear_fwd_bwd.mlir")).read()
x = rng.standard_normal((64, 64)).astype(np.float32)
x[:, 5] *= 40  # an outlier channel
w = (rng.standard_normal((32, 64)) * 0.1).astype(np.float32)
dy = (rng.standard_normal((64, 32)) * 0.01).astype(np.float32)
for recipe in ["fp4-all-dht16", "fp4-all", "fp4-all-sr", "fp4-all-rht16"]:
    want = harness.Runner(tool, os.path.join(workdir, "cpu-" + recipe),
                          [f"--recipe={recipe}"]).run(
        layer, "linear_fwd_bwd", [x, w, dy, 3], 3)
    got = harness.Runner(tool, os.path.join(workdir, "emu-" + recipe),
                         [TARGET, f"--recipe={recipe}"]).run(
        layer, "linear_fwd_bwd", [x, w, dy, 3], 3)
    for name, g, wv in zip(["y", "dx", "dw"], got, want):
        check.same_bits(f"linear layer {recipe} {name}", g, wv)


# --- Planted bugs must be caught. --------------------------------------------
if target != "gfx950-emulator":
    check.finish()
inputs = gemm_inputs(128, 128, 512, None)
want = cpu.run(gemm_module(128, 128, 512, "f32", None), "mm", inputs, 1)[0]
for mutation in ["lds-swizzle", "scale-byte", "fragment-row"]:
    got = harness.Runner(tool, os.path.join(workdir, "mutant-" + mutation),
                         ["--target=gfx950-emulator", "--tile=64",
                          f"--gfx950-test-mutation={mutation}"]).run(
        gemm_module(128, 128, 512, "f32", None), "mm", inputs, 1)[0]
    differ = int((got.view(np.uint32) != want.view(np.uint32)).sum())
    check.true(f"mutation {mutation} is caught", differ > 0,
               "the emulator's result matches the CPU although the kernel is wrong")
    print(f"mutation {mutation}: {differ} of {want.size} results differ")

check.finish()
