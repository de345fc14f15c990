# The generic kernels' parallel forms of long reductions, run by the emulator
# against the CPU path: an embedding-gradient scatter-add over enough tokens
# to run in chunks (a workspace slice each, added in chunk order), a sum of
# squares into one scalar (workgroups striding slices, a workgroup tree, a
# second launch over the partials) and a sum into a few points (one
# launch); a row max on a 64-lane wave a row (a shuffle tree), and a
# normalization's backward as one row group (the gain gradient's column
# sums, the row dot products and the input gradient in one pass over the
# rows, then the column partials). Their summation orders differ from the
# CPU's, so sums agree to f32 rounding (the max is exact); a second
# emulated run gives the same bits.
# RUN: %PYTHON %s mxfp4-run %t | FileCheck %s
# CHECK: generic reductions on gfx950 (emulated): 13 passed, 0 failed

import os
import sys

import numpy as np

import harness

tool, workdir = sys.argv[1:3]
cpu = harness.Runner(tool, os.path.join(workdir, "cpu"))
emu = harness.Runner(tool, os.path.join(workdir, "emu"),
                     ["--target=gfx950-emulator"])
check = harness.Checker("generic reductions on gfx950 (emulated)")
rng = np.random.default_rng(950)
TOKENS, VOCAB, DIM = 4096, 256, 64
ROWS, COLS = 512, 128

MODULE = f"""
func.func @scatter(%ids: tensor<{TOKENS}xi32>, %dx: tensor<{TOKENS}x{DIM}xf32>) -> tensor<{VOCAB}x{DIM}xf32> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cT = arith.constant {TOKENS} : index
  %cD = arith.constant {DIM} : index
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<{VOCAB}x{DIM}xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<{VOCAB}x{DIM}xf32>) -> tensor<{VOCAB}x{DIM}xf32>
  %r = scf.for %t = %c0 to %cT step %c1 iter_args(%acc = %init) -> tensor<{VOCAB}x{DIM}xf32> {{
    %id = tensor.extract %ids[%t] : tensor<{TOKENS}xi32>
    %row = arith.index_cast %id : i32 to index
    %next = scf.for %d = %c0 to %cD step %c1 iter_args(%a = %acc) -> tensor<{VOCAB}x{DIM}xf32> {{
      %old = tensor.extract %a[%row, %d] : tensor<{VOCAB}x{DIM}xf32>
      %x = tensor.extract %dx[%t, %d] : tensor<{TOKENS}x{DIM}xf32>
      %s = arith.addf %old, %x : f32
      %u = tensor.insert %s into %a[%row, %d] : tensor<{VOCAB}x{DIM}xf32>
      scf.yield %u : tensor<{VOCAB}x{DIM}xf32>
    }}
    scf.yield %next : tensor<{VOCAB}x{DIM}xf32>
  }}
  return %r : tensor<{VOCAB}x{DIM}xf32>
}}

func.func @norms(%x: tensor<512x1000xf32>, %y: tensor<3x4096xf32>) -> (tensor<f32>, tensor<3xf32>) {{
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %i0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %squares = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}}
      ins(%x : tensor<512x1000xf32>) outs(%i0 : tensor<f32>) {{
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }} -> tensor<f32>
  %e1 = tensor.empty() : tensor<3xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<3xf32>) -> tensor<3xf32>
  %rows = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}}
      ins(%y : tensor<3x4096xf32>) outs(%i1 : tensor<3xf32>) {{
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }} -> tensor<3xf32>
  return %squares, %rows : tensor<f32>, tensor<3xf32>
}}

func.func @row_max(%z: tensor<300x1000xf32>) -> tensor<300xf32> {{
  %low = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<300xf32>
  %i = linalg.fill ins(%low : f32) outs(%e : tensor<300xf32>) -> tensor<300xf32>
  %m = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}}
      ins(%z : tensor<300x1000xf32>) outs(%i : tensor<300xf32>) {{
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %o, %a : f32
    linalg.yield %s : f32
  }} -> tensor<300xf32>
  return %m : tensor<300xf32>
}}

func.func @norm_backward(%dy: tensor<{ROWS}x{COLS}xf32>, %x: tensor<{ROWS}x{COLS}xf32>, %gain: tensor<{COLS}xf32>, %rstd: tensor<{ROWS}xf32>) -> (tensor<{COLS}xf32>, tensor<{ROWS}x{COLS}xf32>) {{
  %zero = arith.constant 0.0 : f32
  %n = arith.constant {COLS}.0 : f32
  %ec = tensor.empty() : tensor<{COLS}xf32>
  %ic = linalg.fill ins(%zero : f32) outs(%ec : tensor<{COLS}xf32>) -> tensor<{COLS}xf32>
  %dgain = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]}}
      ins(%dy, %x, %rstd : tensor<{ROWS}x{COLS}xf32>, tensor<{ROWS}x{COLS}xf32>, tensor<{ROWS}xf32>) outs(%ic : tensor<{COLS}xf32>) {{
  ^bb0(%a: f32, %b: f32, %r: f32, %o: f32):
    %0 = arith.mulf %b, %r : f32
    %1 = arith.mulf %a, %0 : f32
    %2 = arith.addf %o, %1 : f32
    linalg.yield %2 : f32
  }} -> tensor<{COLS}xf32>
  %er = tensor.empty() : tensor<{ROWS}xf32>
  %ir = linalg.fill ins(%zero : f32) outs(%er : tensor<{ROWS}xf32>) -> tensor<{ROWS}xf32>
  %dot = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}}
      ins(%dy, %gain, %x : tensor<{ROWS}x{COLS}xf32>, tensor<{COLS}xf32>, tensor<{ROWS}x{COLS}xf32>) outs(%ir : tensor<{ROWS}xf32>) {{
  ^bb0(%a: f32, %g: f32, %b: f32, %o: f32):
    %0 = arith.mulf %a, %g : f32
    %1 = arith.mulf %0, %b : f32
    %2 = arith.addf %o, %1 : f32
    linalg.yield %2 : f32
  }} -> tensor<{ROWS}xf32>
  %ee = tensor.empty() : tensor<{ROWS}x{COLS}xf32>
  %dx = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}}
      ins(%dy, %gain, %x, %rstd, %dot : tensor<{ROWS}x{COLS}xf32>, tensor<{COLS}xf32>, tensor<{ROWS}x{COLS}xf32>, tensor<{ROWS}xf32>, tensor<{ROWS}xf32>) outs(%ee : tensor<{ROWS}x{COLS}xf32>) {{
  ^bb0(%a: f32, %g: f32, %b: f32, %r: f32, %d: f32, %o: f32):
    %0 = arith.mulf %a, %g : f32
    %1 = arith.mulf %0, %r : f32
    %2 = arith.mulf %r, %r : f32
    %3 = arith.mulf %2, %r : f32
    %4 = arith.divf %d, %n : f32
    %5 = arith.mulf %3, %4 : f32
    %6 = arith.mulf %b, %5 : f32
    %7 = arith.subf %1, %6 : f32
    linalg.yield %7 : f32
  }} -> tensor<{ROWS}x{COLS}xf32>
  return %dgain, %dx : tensor<{COLS}xf32>, tensor<{ROWS}x{COLS}xf32>
}}
"""


def compare(label, got, want, exact):
    error = float(np.abs(got.astype(np.float64) - exact).max())
    scale = max(float(np.abs(exact).max()), 1e-30)
    check.true(f"{label} against float64", error <= 1e-5 * scale,
               f"max |difference| / max |value| = {error / scale:.3g}")
    cpu_error = float(np.abs(want.astype(np.float64) - exact).max())
    print(f"{label}: error {error / scale:.3g} (CPU {cpu_error / scale:.3g})")


# Few distinct ids, so rows collect hundreds of tokens each.
ids = rng.integers(0, 16, TOKENS).astype(np.int32)
dx = rng.standard_normal((TOKENS, DIM)).astype(np.float32)
x = rng.standard_normal((512, 1000)).astype(np.float32)
y = rng.standard_normal((3, 4096)).astype(np.float32)

exact = np.zeros((VOCAB, DIM))
np.add.at(exact, ids, dx.astype(np.float64))
want = cpu.run(MODULE, "scatter", [ids, dx], 1)
got = emu.run(MODULE, "scatter", [ids, dx], 1)
compare("scatter", got[0], want[0], exact)
check.same_bits("scatter rerun", emu.run(MODULE, "scatter", [ids, dx], 1)[0],
                got[0])
check.true("scatter leaves rows without tokens zero",
           not got[0][16:].view(np.uint32).any(), "a workspace was not zeroed")

want = cpu.run(MODULE, "norms", [x, y], 2)
got = emu.run(MODULE, "norms", [x, y], 2)
compare("sum of squares", got[0], want[0], np.square(x.astype(np.float64)).sum())
compare("row sums", got[1], want[1], y.astype(np.float64).sum(axis=1))
again = emu.run(MODULE, "norms", [x, y], 2)
check.same_bits("sum of squares rerun", again[0], got[0])
check.same_bits("row sums rerun", again[1], got[1])

z = rng.standard_normal((300, 1000)).astype(np.float32)
want = cpu.run(MODULE, "row_max", [z], 1)
got = emu.run(MODULE, "row_max", [z], 1)
check.same_bits("row max (a wave a row) against the CPU", got[0], want[0])
check.same_bits("row max against numpy", got[0], z.max(axis=1))

dy = rng.standard_normal((ROWS, COLS)).astype(np.float32)
xn = rng.standard_normal((ROWS, COLS)).astype(np.float32)
gain = rng.standard_normal(COLS).astype(np.float32)
rstd = rng.uniform(0.5, 2.0, ROWS).astype(np.float32)
args = [dy, xn, gain, rstd]
want = cpu.run(MODULE, "norm_backward", args, 2)
got = emu.run(MODULE, "norm_backward", args, 2)
d64, x64, g64, r64 = (a.astype(np.float64) for a in args)
dot64 = (d64 * g64 * x64).sum(axis=1)
compare("gain gradient (row group column sums)", got[0], want[0],
        (d64 * x64 * r64[:, None]).sum(axis=0))
compare("input gradient (row group)", got[1], want[1],
        d64 * g64 * r64[:, None] -
        x64 * (r64 ** 3 * dot64 / COLS)[:, None])
again = emu.run(MODULE, "norm_backward", args, 2)
check.same_bits("row group rerun", again[0], got[0])
check.same_bits("row group input gradient rerun", again[1], got[1])
check.finish()
