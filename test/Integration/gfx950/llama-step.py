# A whole Llama training step compiled for gfx950 — the tuned mxfp4 kernels,
# a generic kernel for every other op (attention, norms, RoPE, SwiGLU, loss,
# AdamW), device scalars, the host plan of allocations and launches — run by
# the emulator against the CPU path on the same weights and batch.
#
# With exec's default --gemm-precision=f32 (generic f32 contraction kernels
# and attention as its decomposition, the CPU's numerics; the micro preset)
# the loss, every gradient and every AdamW update agree to f32 rounding
# (differences come from summation order in reductions, and from the
# emulator's libm).
#
# With --gemm-precision=bf16 (the bf16 MFMA GEMMs, and the fused
# FlashAttention forward and backward kernels: a preset whose sequence of 64
# and head dim 64 they cover), the bf16 recipe's step against the CPU's f32
# step: the loss within 1e-3 relative, each gradient within 2e-2 of its
# largest magnitude (about 1e-2 is what rounding the GEMM and attention
# operands and the stored activations to bf16 costs, as PyTorch's autocast
# does), the AdamW step's weights and moments within 1e-2 norm-wise (Adam
# turns a small gradient's flipped sign into a full step). A wrong attention
# gradient is off by O(1). The fused kernels alone are checked against
# float64 in attention-emulation.py, the GEMMs in bf16-gemm-emulation.py.
# RUN: mxfp4-run compile --preset=%S/../../Tools/mxfp4-run/Inputs/micro.json -o %t.bf16.mlir
# RUN: mxfp4-run compile --preset=%S/../../Tools/mxfp4-run/Inputs/micro.json --recipe=fp4-all-dht16 -o %t.fp4.mlir
# RUN: mxfp4-run compile --preset=%S/../../Tools/mxfp4-run/Inputs/attention-step.json -o %t.attention.mlir
# RUN: %PYTHON %s mxfp4-run %t %t.bf16.mlir %t.fp4.mlir %t.attention.mlir %mxfp4_obj_root/unittests/lib/libfakeamdhip64.so | FileCheck %s
# CHECK: bf16 loss_and_grads: 22 results
# CHECK: bf16 train_step: 66 results
# CHECK: fp4-all-dht16 loss_and_grads: 22 results
# CHECK: fp4-all-dht16 train_step: 66 results
# CHECK: bf16 GEMMs and fused attention loss_and_grads: 13 results
# CHECK: bf16 GEMMs and fused attention train_step: 39 results
# CHECK: llama step on gfx950 (emulated): {{[0-9]+}} passed, 0 failed

import os
import re
import subprocess
import sys

import numpy as np

import harness

tool, workdir, bf16_step, fp4_step, attention_step = sys.argv[1:6]
fake_hip = sys.argv[6] if len(sys.argv) > 6 and os.path.exists(sys.argv[6]) else None
check = harness.Checker("llama step on gfx950 (emulated)")
os.makedirs(workdir, exist_ok=True)


def signature(text, function):
    """Argument and result types of `function`: (shape, element) or None for
    the i64 step."""
    head = re.search(r"func\.func @" + function + r"\((.*?)\)\s*->\s*\((.*?)\)\s*(attributes|\{)",
                     text, re.S)
    def parse(part):
        return [None if scalar else ([int(d) for d in shape.split("x")] if shape else [], elem)
                for shape, elem, scalar in
                re.findall(r"tensor<(?:([0-9x]+)x)?(f32|i32)>|: (i64)", part)]
    return parse(head.group(1)), parse(head.group(2))


def run(mlir, function, target, inputs, results, env=None, precision="f32"):
    stem = os.path.join(workdir, f"{os.path.basename(mlir)}.{function}.{target}")
    args = [tool, "exec", mlir, f"--function={function}", f"--target={target}"]
    if target != "cpu":
        args.append(f"--gemm-precision={precision}")
    for i, value in enumerate(inputs):
        if isinstance(value, np.ndarray):
            np.save(f"{stem}.in{i}.npy", value)
            args.append(f"--input=@{stem}.in{i}.npy")
        else:
            args.append(f"--input={value}")
    args += [f"--output=@{stem}.out{i}.npy" for i in range(results)]
    proc = subprocess.run(args, capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})))
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:5])} failed:\n{proc.stderr[-3000:]}")
    return [np.load(f"{stem}.out{i}.npy") for i in range(results)]


def tolerance(precision, function, index):
    """(bound, norm-wise?) on |got - want| / max |want| of a result."""
    if precision == "f32":
        return 1e-5, False
    if index == 0 or function == "loss_and_grads":
        return (1e-3 if index == 0 else 2e-2), False
    return 1e-2, True


rng = np.random.default_rng(950)
cases = [("bf16", bf16_step, "f32"), ("fp4-all-dht16", fp4_step, "f32"),
         ("bf16 GEMMs and fused attention", attention_step, "bf16")]
for name, mlir, precision in cases:
    text = open(mlir).read()
    for function in ["loss_and_grads", "train_step"]:
        arguments, results = signature(text, function)
        inputs = []
        floats = sum(1 for a in arguments if a is not None and a[1] == "f32")
        for index, arg in enumerate(arguments):
            if arg is None:
                inputs.append(5)  # the step: inside the warm-up
                continue
            shape, elem = arg
            if elem == "i32":
                inputs.append(rng.integers(0, 256, shape).astype(np.int32))
            elif function == "train_step" and index >= floats // 3:
                # AdamW's moments: m any sign, v (the last third) >= 0.
                moment = 1e-3 * rng.standard_normal(shape)
                if index >= 2 * floats // 3:
                    moment = np.abs(moment) * 1e-2
                inputs.append(moment.astype(np.float32))
            elif len(shape) == 1:
                inputs.append((1 + 0.1 * rng.standard_normal(shape)).astype(np.float32))
            else:
                inputs.append((0.05 * rng.standard_normal(shape)).astype(np.float32))
        want = run(mlir, function, "cpu", inputs, len(results))
        got = run(mlir, function, "gfx950-emulator", inputs, len(results),
                  precision=precision)
        identical = 0
        for i, (g, w) in enumerate(zip(got, want)):
            if not np.isfinite(w).all():
                check.true(f"{name} {function} result {i}", False,
                           "the CPU result is not finite: bad test inputs")
                continue
            bound, normwise = tolerance(precision, function, i)
            diff = g.astype(np.float64) - w
            if normwise:
                error = float(np.linalg.norm(diff)) / max(
                    float(np.linalg.norm(w)), 1e-30)
            else:
                error = float(np.abs(diff).max()) / max(
                    float(np.abs(w).max()), 1e-30)
            identical += bool((g.view(np.uint32) == w.view(np.uint32)).all())
            check.true(f"{name} {function} result {i}", error <= bound,
                       f"{'norm-wise ' if normwise else ''}|difference| / "
                       f"|value| = {error:.3g} (bound {bound:g})")
        print(f"{name} {function}: {len(results)} results, {identical} "
              f"bit-identical, loss {float(want[0]):.6f}")
        # The HIP path on a stand-in runtime that runs no kernel but checks
        # every launch's arguments against the code object's metadata.
        if fake_hip:
            run(mlir, function, "gfx950", inputs, len(results),
                {"MXFP4_HIP_LIBRARY": fake_hip}, precision=precision)
            check.true(f"{name} {function} launches through HIP", True)
check.finish()
