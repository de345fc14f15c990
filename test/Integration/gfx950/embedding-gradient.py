# The embedding gradient at a vocabulary too large for chunked copies
# (16,384 x 64 rows, 384 tokens), run by the emulator against the CPU: the
# tokens are sorted by (row, token) and each touched row's work-items add
# its tokens in ascending order, so the sums are the sequential loop's,
# bit for bit, and rows without tokens keep their initial zeros. Repeated
# ids make rows longer than the work-items' 32-token blocks, single
# tokens and ids at both ends of the vocabulary exercise the edges.
# RUN: %PYTHON %s mxfp4-run %t | FileCheck %s
# CHECK: embedding gradient on gfx950 (emulated): 4 passed, 0 failed

import os
import sys

import numpy as np

import harness

tool, workdir = sys.argv[1:3]
cpu = harness.Runner(tool, os.path.join(workdir, "cpu"))
emu = harness.Runner(tool, os.path.join(workdir, "emu"),
                     ["--target=gfx950-emulator"])
check = harness.Checker("embedding gradient on gfx950 (emulated)")
rng = np.random.default_rng(29)
TOKENS, VOCAB, DIM = 384, 16384, 64

MODULE = f"""
func.func @scatter(%ids: tensor<{TOKENS}xi32>, %dx: tensor<{TOKENS}x{DIM}xf32>) -> tensor<{VOCAB}x{DIM}xf32> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cT = arith.constant {TOKENS} : index
  %cD = arith.constant {DIM} : index
  %zero = arith.constant 0.0 : f32
  %lo = arith.constant 0 : i32
  %hi = arith.constant {VOCAB - 1} : i32
  %empty = tensor.empty() : tensor<{VOCAB}x{DIM}xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<{VOCAB}x{DIM}xf32>) -> tensor<{VOCAB}x{DIM}xf32>
  %r = scf.for %t = %c0 to %cT step %c1 iter_args(%acc = %init) -> tensor<{VOCAB}x{DIM}xf32> {{
    %id = tensor.extract %ids[%t] : tensor<{TOKENS}xi32>
    %clamped = arith.minsi %hi, %id : i32
    %nonneg = arith.maxsi %lo, %clamped : i32
    %row = arith.index_cast %nonneg : i32 to index
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
"""

# A few frequent ids (segments of dozens of tokens), many rare ones, the
# first and last rows, and ids outside the vocabulary (clamped onto them).
ids = np.where(rng.random(TOKENS) < 0.5, rng.integers(0, 4, TOKENS),
               rng.integers(0, VOCAB, TOKENS)).astype(np.int32)
ids[:4] = [VOCAB - 1, 0, -7, VOCAB + 5]
rng.shuffle(ids)
# Magnitudes over several decades, so a different summation order shows.
dx = (rng.standard_normal((TOKENS, DIM)) *
      10.0 ** rng.integers(-3, 4, (TOKENS, DIM))).astype(np.float32)

# The sequential loop in f32, token by token.
sequential = np.zeros((VOCAB, DIM), np.float32)
for t, i in enumerate(np.clip(ids, 0, VOCAB - 1)):
    sequential[i] += dx[t]

want = cpu.run(MODULE, "scatter", [ids, dx], 1)[0]
got = emu.run(MODULE, "scatter", [ids, dx], 1)[0]
check.same_bits("CPU against the sequential sum", want, sequential)
check.same_bits("sorted rows against the CPU", got, want)
check.same_bits("rerun", emu.run(MODULE, "scatter", [ids, dx], 1)[0], got)
touched = np.zeros(VOCAB, bool)
touched[np.clip(ids, 0, VOCAB - 1)] = True
check.true("rows without tokens stay zero",
           not got[~touched].view(np.uint32).any(), "an untouched row changed")
check.finish()
