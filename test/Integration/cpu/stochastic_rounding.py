# Statistical properties of stochastic rounding in the compiled quantize: the
# mean rounding error goes to zero (within 5 standard errors), results are
# reproducible for a seed and counter, and differ across seeds and counters.
# RUN: %PYTHON %s mxfp4-run %t

import sys

import numpy as np

import harness
import mx_reference as ref

ROWS = 4096


def module():
    t = harness.tensor_type((ROWS, 32), "f32")
    v = harness.tensor_type((ROWS, 32), "f4E2M1FN")
    s = harness.tensor_type((ROWS, 1), "f8E8M0FNU")
    f = harness.tensor_type((ROWS, 32), "f32")
    return f"""func.func @sr(%x: {t}, %seed: i64, %ctr: i64) -> {f} {{
  %v, %s = mxfp4.quantize %x axis = 1 scale_rule = floor rounding = stochastic seed(%seed) counter(%ctr) : {t} -> {v}, {s}
  %d = mxfp4.dequantize %v scale %s axis = 1 : {v}, {s} -> {f}
  return %d : {f}
}}
"""


def main():
    tool, workdir = sys.argv[1], sys.argv[2]
    runner = harness.Runner(tool, workdir)
    check = harness.Checker("stochastic rounding")
    rng = np.random.default_rng(3)
    # Every row has amax 4 (scale 2^0 under floor) and values strictly between
    # grid points, so every element is rounded stochastically.
    x = rng.uniform(-4, 4, (ROWS, 32)).astype(np.float32)
    x[:, 0] = 4.0
    mlir = module()
    (d1,) = runner.run(mlir, "sr", [x, 1, 0], 1)
    (d2,) = runner.run(mlir, "sr", [x, 1, 0], 1)
    (d3,) = runner.run(mlir, "sr", [x, 2, 0], 1)
    (d4,) = runner.run(mlir, "sr", [x, 1, 1], 1)
    check.same_bits("reproducible", d1, d2)
    check.true("seeds differ", np.mean(d1 != d3) > 0.3, "seed does not matter")
    check.true("counters differ", np.mean(d1 != d4) > 0.3,
               "counter does not matter")
    codes, scales = ref.quantize(x, 1, scale_rule="floor",
                                 rounding="stochastic", seed=1, counter=0)
    check.same_bits("matches reference", d1, ref.dequantize(codes, scales, 1))
    # Unbiasedness: the error of each element has mean 0 and variance at most
    # gap^2 / 4 <= 1 (gaps are at most 2 here).
    errors = np.concatenate([(d - x)[:, 1:].ravel() for d in (d1, d3, d4)])
    bound = 5 * 1.0 / np.sqrt(errors.size)
    check.true("unbiased", abs(errors.mean()) < bound,
               f"mean error {errors.mean()} exceeds {bound}")
    # Stochastic rounding trades variance for bias: its errors spread wider
    # than those of nearest rounding on the same data.
    nearest = ref.dequantize(*ref.quantize(x, 1, scale_rule="floor"), 1)
    check.true("per-element error spread", np.std(errors) > np.std(nearest - x),
               "stochastic rounding error is not wider than nearest")
    check.finish()


main()
