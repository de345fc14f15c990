"""Prepares the NVIDIA GPU check (here, where MLIR is): every case is a
function compiled for sm_90a (plan.txt + kernels.cubin), its inputs, and the
CPU path's results; gpu-check/cases.txt lists them for run.sh and
compare.py on the GPU machine.

Cases:
- the fused Hadamard + quantize kernel, both orientations from one read,
  every rotation kind, scale rule, stochastic rounding, and MX corner cases
  (NaN/Inf/zero/subnormal blocks), returned through the dequantize kernel:
  must be the CPU's bits;
- the tensor-core GEMM fed by quantize kernels (ragged shapes, accumulators,
  bf16 results): within 1e-5 of the result's largest magnitude (summation
  order);
- the micro Llama step (loss_and_grads, train_step) under bf16 and
  fp4-all-dht16.
Usage: cases.py OUT_DIR MXFP4_RUN
"""
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "test",
                                "Integration", "lib"))
import harness  # noqa: E402

out, tool = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(90)
T = harness.tensor_type
manifest = []


def add_case(name, mlir, function, inputs, results, tolerance, recipe=None):
    """Compiles `mlir` for sm_90a into OUT/NAME, saves the inputs and the CPU's
    results, and lists the case."""
    case = os.path.join(out, name)
    os.makedirs(case, exist_ok=True)
    with open(f"{case}/case.mlir", "w") as f:
        f.write(mlir)
    extra = [f"--recipe={recipe}"] if recipe else []
    subprocess.run([tool, "compile", f"{case}/case.mlir", "--target=sm_90a",
                    f"--out-dir={case}"] + extra, check=True,
                   stdout=subprocess.DEVNULL)
    args = []
    for i, value in enumerate(inputs):
        if isinstance(value, np.ndarray):
            np.save(f"{case}/in{i}.npy", value)
            args.append(f"--input=@in{i}.npy")
        else:
            args.append(f"--input={value}")
    cmd = [tool, "exec", f"{case}/case.mlir", f"--function={function}"] + extra
    cmd += [a.replace("@", f"@{case}/") for a in args]
    cmd += [f"--output=@{case}/cpu{i}.npy" for i in range(results)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    manifest.append(f"{name} {function} {results} {tolerance} {' '.join(args)}")


# --- Fused Hadamard + quantize, read back through dequantize. --------------
def quantize_module(rows, cols, row_rot, col_rot, row_rule, col_rule, sr):
    x, xt = T((rows, cols), "f32"), T((cols, rows), "f32")
    v, s = T((rows, cols), "f4E2M1FN"), T((rows, cols // 32), "f8E8M0FNU")
    vt, st = T((cols, rows), "f4E2M1FN"), T((cols, rows // 32), "f8E8M0FNU")

    def rotate(name, src, ty, rot):
        if rot is None:
            return src, ""
        size, kind, inverse = rot
        operands = {"random_fixed": " seed(%seed)",
                    "random_per_step": " seed(%seed) step(%step)"}.get(kind, "")
        inv = "inverse " if inverse else ""
        return f"%{name}", (f"  %{name} = mxfp4.hadamard {inv}{src} axis = 1 size = {size}"
                            f" kind = {kind}{operands} : {ty}\n")

    rounding = " rounding = stochastic seed(%seed) counter(%step)" if sr else ""
    r_src, r_ops = rotate("hr", "%x", x, row_rot)
    t_src, t_ops = rotate("ht", "%t", xt, col_rot)
    return (f"func.func @q(%x: {x}, %seed: i64, %step: i64) -> ({x}, {xt}) {{\n" + r_ops +
            f"  %v, %s = mxfp4.quantize {r_src} axis = 1 scale_rule = {row_rule}{rounding} : {x} -> {v}, {s}\n"
            f"  %e = tensor.empty() : {xt}\n"
            f"  %t = linalg.transpose ins(%x : {x}) outs(%e : {xt}) permutation = [1, 0]\n" + t_ops +
            f"  %vt, %st = mxfp4.quantize {t_src} axis = 1 scale_rule = {col_rule}{rounding} : {xt} -> {vt}, {st}\n"
            f"  %d = mxfp4.dequantize %v scale %s axis = 1 : {v}, {s} -> {x}\n"
            f"  %dt = mxfp4.dequantize %vt scale %st axis = 1 : {vt}, {st} -> {xt}\n"
            f"  return %d, %dt : {x}, {xt}\n}}\n")


QUANTIZE_CASES = [
    (32, 32, None, None, "even", "floor", False),
    (64, 96, (16, "deterministic", False), (32, "deterministic", False), "even", "even", False),
    (96, 64, (32, "deterministic", False), (16, "deterministic", False), "ceil", "rceil", False),
    (64, 128, (16, "random_fixed", False), (16, "random_per_step", False), "floor", "even", False),
    (128, 64, (32, "random_per_step", True), None, "rceil", "ceil", False),
    (160, 96, (16, "deterministic", True), (32, "random_fixed", False), "even", "floor", False),
    (64, 64, None, None, "even", "even", True),
    (96, 128, (16, "deterministic", False), (16, "deterministic", False), "floor", "even", True),
    (1024, 512, (16, "deterministic", False), (16, "deterministic", False), "even", "even", False),
]
for i, (rows, cols, rr, cr, rrule, crule, sr) in enumerate(QUANTIZE_CASES):
    x = harness.mx_stress((rows, cols), 1, rng).astype(np.float32)
    add_case(f"quantize{i}", quantize_module(rows, cols, rr, cr, rrule, crule, sr),
             "q", [x, 12345, 7], 2, "exact")


# --- GEMMs fed by quantize kernels. -----------------------------------------
def gemm_module(m, n, k, result, acc):
    a, b = T((m, k), "f32"), T((n, k), "f32")
    qa, sa = T((m, k), "f4E2M1FN"), T((m, k // 32), "f8E8M0FNU")
    qb, sb = T((n, k), "f4E2M1FN"), T((n, k // 32), "f8E8M0FNU")
    c = T((m, n), result)
    args = f"%a: {a}, %b: {b}"
    acc_text = ""
    if acc:
        args += f", %c0: {T((m, n), acc)}"
        acc_text = " acc(%c0)"
    return (f"func.func @mm({args}) -> {c} {{\n"
            f"  %qa, %sa = mxfp4.quantize %a axis = 1 : {a} -> {qa}, {sa}\n"
            f"  %qb, %sb = mxfp4.quantize %b axis = 1 : {b} -> {qb}, {sb}\n"
            f"  %c = mxfp4.scaled_matmul %qa scale %sa, %qb scale %sb{acc_text} : {qa}, {sa}, {qb}, {sb} -> {c}\n"
            f"  return %c : {c}\n}}\n")


GEMM_CASES = [
    (128, 128, 64, "f32", None),
    (65, 33, 96, "f32", None),
    (130, 70, 288, "bf16", None),
    (1, 17, 32, "f32", "f32"),
    (200, 136, 544, "f32", "f32"),
    (512, 384, 1024, "f32", None),
    (2048, 1408, 512, "f32", None),
]
for i, (m, n, k, result, acc) in enumerate(GEMM_CASES):
    a = rng.standard_normal((m, k)).astype(np.float32)
    a[:, 3] *= 30  # an outlier channel
    inputs = [a, (0.05 * rng.standard_normal((n, k))).astype(np.float32)]
    if acc:
        inputs.append(rng.standard_normal((m, n)).astype(np.float32))
    add_case(f"gemm{i}", gemm_module(m, n, k, result, acc), "mm", inputs, 1, "1e-5")


# --- The micro Llama step. ---------------------------------------------------
micro = os.path.join(os.path.dirname(__file__), "..", "..", "test", "Tools",
                     "mxfp4-run", "Inputs", "micro.json")
subprocess.run([tool, "compile", f"--preset={micro}", "-o", f"{out}/step.mlir"],
               check=True)
step = open(f"{out}/step.mlir").read()
for recipe, tolerance in [("bf16", "1e-5"), ("fp4-all-dht16", "step")]:
    for function in ["loss_and_grads", "train_step"]:
        head = re.search(r"func\.func @" + function + r"\((.*?)\)\s*->\s*\((.*?)\)\s*(attributes|\{)",
                         step, re.S)
        types = re.findall(r"tensor<([0-9x]+)x(f32|i32)>|: (i64)", head.group(1))
        results = len(re.findall(r"tensor<", head.group(2)))
        floats = sum(1 for _, e, s in types if e == "f32")
        inputs = []
        for i, (shape, elem, scalar) in enumerate(types):
            if scalar:
                inputs.append(5)
                continue
            dims = [int(d) for d in shape.split("x")]
            if elem == "i32":
                a = rng.integers(0, 256, dims).astype(np.int32)
            elif function == "train_step" and i >= floats // 3:
                a = 1e-3 * rng.standard_normal(dims)  # AdamW m, and v >= 0
                a = (np.abs(a) * 1e-2 if i >= 2 * floats // 3 else a).astype(np.float32)
            elif len(dims) == 1:
                a = (1 + 0.1 * rng.standard_normal(dims)).astype(np.float32)
            else:
                a = (0.05 * rng.standard_normal(dims)).astype(np.float32)
            inputs.append(a)
        add_case(f"step-{recipe}-{function}", step, function, inputs, results,
                 tolerance, recipe=recipe)

with open(f"{out}/cases.txt", "w") as f:
    f.write("\n".join(manifest) + "\n")
print(f"prepared {len(manifest)} cases in {out}")
