"""Compares the GPU's results of every case in CHECK_DIR/cases.txt with the
CPU's, by the case's tolerance:
- exact: the same bits (any NaN equals any NaN);
- a number: within that fraction of the result's largest magnitude
  (summation order and libdevice differ);
- step: an MXFP4 training step, where a last-bit difference in a GEMM can
  move a later quantization by one FP4 step: the loss within 1e-3, every
  other result within 5e-2 of its largest magnitude.
Prints one line a case and exits 1 if any fails."""
import sys

import numpy as np



def bf16(a):
    return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


check = sys.argv[1]
failed = 0
for line in open(f"{check}/cases.txt"):
    name, function, results, tolerance = line.split()[:4]
    worst, identical, bad = 0.0, 0, 0
    for i in range(int(results)):
        want = np.load(f"{check}/{name}/cpu{i}.npy")
        got = np.load(f"{check}/{name}/gpu{i}.npy")
        same = got.shape == want.shape and got.tobytes() == want.tobytes()
        if want.dtype == np.float32 and not same:
            nan = np.isnan(want)
            same = np.array_equal(np.isnan(got), nan) and \
                got[~nan].tobytes() == want[~nan].tobytes()
        identical += same
        if tolerance == "exact":
            bad += not same
            continue
        want_finite = np.nan_to_num(want.astype(np.float64) if want.dtype != np.uint16 else bf16(want))
        got_finite = np.nan_to_num(got.astype(np.float64) if got.dtype != np.uint16 else bf16(got))
        error = float(np.abs(got_finite - want_finite).max()) / max(float(np.abs(want_finite).max()), 1e-30)
        worst = max(worst, error)
        limit = (1e-3 if i == 0 else 5e-2) if tolerance == "step" else float(tolerance)
        bad += error > limit
    failed += bad > 0
    detail = f"worst relative difference {worst:.2e}" if tolerance != "exact" else "bit-exact required"
    print(f"{'ok  ' if not bad else 'FAIL'} {name} @{function}: {results} results, "
          f"{identical} bit-identical, {detail}")
print(f"gpu check: {'FAILED' if failed else 'passed'}")
sys.exit(1 if failed else 0)
