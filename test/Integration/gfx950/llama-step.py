# A whole Llama training step compiled for gfx950 — the tuned mxfp4 kernels,
# a generic kernel for every other op (attention, norms, RoPE, SwiGLU, loss,
# AdamW), device scalars, the host plan of allocations and launches — run by
# the emulator against the CPU path on the same weights and batch: the loss,
# every gradient and every AdamW update agree to f32 rounding (differences
# come from summation order in reductions, and from the emulator's libm).
# The gfx950 side runs with exec's default --gemm-precision=f32 (generic f32
# contraction kernels, the CPU's numerics); the bf16 MFMA GEMMs of
# --gemm-precision=bf16 are checked against NumPy on their bf16-rounded
# operands in bf16-gemm-emulation.py.
# RUN: mxfp4-run compile --preset=%S/../../Tools/mxfp4-run/Inputs/micro.json -o %t.bf16.mlir
# RUN: mxfp4-run compile --preset=%S/../../Tools/mxfp4-run/Inputs/micro.json --recipe=fp4-all-dht16 -o %t.fp4.mlir
# RUN: %PYTHON %s mxfp4-run %t %t.bf16.mlir %t.fp4.mlir %mxfp4_obj_root/unittests/lib/libfakeamdhip64.so | FileCheck %s
# CHECK: bf16 loss_and_grads: 22 results
# CHECK: bf16 train_step: 66 results
# CHECK: fp4-all-dht16 loss_and_grads: 22 results
# CHECK: fp4-all-dht16 train_step: 66 results
# CHECK: llama step on gfx950 (emulated): {{[0-9]+}} passed, 0 failed

import os
import re
import subprocess
import sys

import numpy as np

import harness

tool, workdir, bf16_step, fp4_step = sys.argv[1:5]
fake_hip = sys.argv[5] if len(sys.argv) > 5 and os.path.exists(sys.argv[5]) else None
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


def run(mlir, function, target, inputs, results, env=None):
    stem = os.path.join(workdir, f"{os.path.basename(mlir)}.{function}.{target}")
    args = [tool, "exec", mlir, f"--function={function}", f"--target={target}"]
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


rng = np.random.default_rng(950)
for name, mlir in [("bf16", bf16_step), ("fp4-all-dht16", fp4_step)]:
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
        got = run(mlir, function, "gfx950-emulator", inputs, len(results))
        identical = 0
        for i, (g, w) in enumerate(zip(got, want)):
            scale = max(float(np.abs(w).max()), 1e-30)
            if not np.isfinite(w).all():
                check.true(f"{name} {function} result {i}", False,
                           "the CPU result is not finite: bad test inputs")
                continue
            error = float(np.abs(g.astype(np.float64) - w).max()) / scale
            identical += bool((g.view(np.uint32) == w.view(np.uint32)).all())
            check.true(f"{name} {function} result {i}", error <= 1e-5,
                       f"max |difference| / max |value| = {error:.3g}")
        print(f"{name} {function}: {len(results)} results, {identical} "
              f"bit-identical, loss {float(want[0]):.6f}")
        # The HIP path on a stand-in runtime that runs no kernel but checks
        # every launch's arguments against the code object's metadata.
        if fake_hip:
            run(mlir, function, "gfx950", inputs, len(results),
                {"MXFP4_HIP_LIBRARY": fake_hip})
            check.true(f"{name} {function} launches through HIP", True)
check.finish()
