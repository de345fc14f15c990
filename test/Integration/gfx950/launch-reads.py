# A tensor that kernel launches read at two distant points, with an op
# between them that bufferization could write into its buffer in place: the
# later launch must still read the tensor. The shape of the defect that
# stalled fp4-all-sr on the H200: the normed activation x of a layer is
# quantized for the Fprop (nearest) and the first Wgrad (stochastic) at one
# point, the q/k/v Dgrad sum is computed (into a buffer of x's shape, from
# the same tensor.empty), then x is quantized again for the other Wgrads,
# each with its own stochastic-rounding counter. Merging the later launch's
# to_buffer into the earlier one (a cached buffer, or CSE before
# bufferization) hid that read, and the sum overwrote x.
# Checked on the gfx950 emulator against the CPU bit for bit (stochastic and
# nearest rounding of the later quantization), and in the sm_90a plan: no
# launch between the first and the last quantization of x writes x's buffer.
# RUN: %PYTHON %s mxfp4-run %t | FileCheck %s
# CHECK: launch reads: 7 passed, 0 failed

import os
import re
import subprocess
import sys

import numpy as np

import harness

tool, workdir = sys.argv[1:3]
cpu = harness.Runner(tool, os.path.join(workdir, "cpu"))
emu = harness.Runner(tool, os.path.join(workdir, "emu"),
                     ["--target=gfx950-emulator"])
check = harness.Checker("launch reads")
rng = np.random.default_rng(27)

F = "tensor<128x128xf32>"
Q = "tensor<128x128xf4E2M1FN>, tensor<128x4xf8E8M0FNU>"
W = "tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>"
R = "tensor<128x64xf32>"


def module(later_rounding):
    return f"""
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%x: {F}, %w: tensor<64x128xf32>, %a: {F}, %b: {F}, %seed: i64, %c1: i64, %c2: i64) -> ({R}, {R}, {R}, {F}) {{
  %e = tensor.empty() : {F}
  %n = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}} ins(%x : {F}) outs(%e : {F}) {{
  ^bb0(%v: f32, %o: f32):
    %t = arith.mulf %v, %v : f32
    linalg.yield %t : f32
  }} -> {F}
  %wv, %ws = mxfp4.quantize %w axis = 1 : tensor<64x128xf32> -> {W}
  %rv, %rs = mxfp4.quantize %n axis = 1 : {F} -> {Q}
  %t1 = tensor.empty() : {F}
  %n1 = linalg.transpose ins(%n : {F}) outs(%t1 : {F}) permutation = [1, 0]
  %q1v, %q1s = mxfp4.quantize %n1 axis = 1 rounding = stochastic seed(%seed) counter(%c1) : {F} -> {Q}
  %g0 = mxfp4.scaled_matmul %rv scale %rs, %wv scale %ws : {Q}, {W} -> {R}
  %g1 = mxfp4.scaled_matmul %q1v scale %q1s, %wv scale %ws : {Q}, {W} -> {R}
  %s = linalg.generic {{indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}} ins(%a, %b : {F}, {F}) outs(%e : {F}) {{
  ^bb0(%l: f32, %r: f32, %o: f32):
    %t = arith.addf %l, %r : f32
    linalg.yield %t : f32
  }} -> {F}
  %t2 = tensor.empty() : {F}
  %n2 = linalg.transpose ins(%n : {F}) outs(%t2 : {F}) permutation = [1, 0]
  %q2v, %q2s = mxfp4.quantize %n2 axis = 1{later_rounding} : {F} -> {Q}
  %g2 = mxfp4.scaled_matmul %q2v scale %q2s, %wv scale %ws : {Q}, {W} -> {R}
  return %g0, %g1, %g2, %s : {R}, {R}, {R}, {F}
}}
"""


SR = " rounding = stochastic seed(%seed) counter(%c2)"
inputs = [rng.standard_normal((128, 128)).astype(np.float32),
          rng.standard_normal((64, 128)).astype(np.float32),
          rng.standard_normal((128, 128)).astype(np.float32),
          rng.standard_normal((128, 128)).astype(np.float32), 7, 1, 2]

# The emulator against the CPU: the later quantization (result 2) reads x,
# not the sum.
for label, rounding in (("stochastic", SR), ("nearest", "")):
    mlir = module(rounding)
    want = cpu.run(mlir, "f", inputs, 4)
    got = emu.run(mlir, "f", inputs, 4)
    check.same_bits(f"{label}: the later quantization's GEMM", got[2], want[2])
    if label == "stochastic":
        check.same_bits(f"{label}: the sum", got[3], want[3])
        check.true(f"{label}: independent draws",
                   not np.array_equal(want[1], want[2]),
                   "the two stochastic quantizations of x drew the same bits")

# The sm_90a plan: nothing between the first and the last quantize launch
# reading x's buffer touches that buffer.
out = os.path.join(workdir, "sm90a")
os.makedirs(out, exist_ok=True)
path = os.path.join(out, "f.mlir")
with open(path, "w") as f:
    f.write(module(SR))
subprocess.run([tool, "compile", path, "--target=sm_90a",
                f"--out-dir={out}/plan"], check=True, capture_output=True)
root, launches = {}, []
for line in open(os.path.join(out, "plan", "plan.txt")):
    t = line.split()
    if t and t[0] == "alloc":
        root[int(t[1])] = int(t[1])
    elif t and t[0] == "view":
        root[int(t[1])] = root.get(int(t[2]), int(t[2]))
    elif t and t[0] == "launch":
        args = [root.get(int(a[1:]), int(a[1:])) for a in t[8:]
                if re.fullmatch(r"b\d+", a)]
        launches.append((t[1], args))
quantizes = [i for i, (name, _) in enumerate(launches)
             if name.startswith("quantize_128x128")]
check.true("sm_90a: x quantized at two points", len(quantizes) == 2,
           f"{len(quantizes)} quantize launches of x")
if len(quantizes) == 2:
    first, last = quantizes
    source = launches[last][1][0]
    check.true("sm_90a: both read one buffer",
               launches[first][1][0] == source, "the quantizations of x "
               "read different buffers (x was copied?)")
    between = [name for name, args in launches[first + 1:last]
               if source in args]
    check.true("sm_90a: x's buffer untouched between them", not between,
               f"{between} use x's buffer before its last quantization")
check.finish()
