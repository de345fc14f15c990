"""Compares the GPU's results of every case in CHECK_DIR/cases.txt with the
CPU's, by the case's tolerance:
- exact: the same bits (any NaN equals any NaN);
- a number: within that fraction of the result's largest magnitude
  (summation order and libdevice differ);
- step: an MXFP4 training step. Quantization is discontinuous: a last-bit
  difference upstream (libdevice's exp against the CPU's, a GEMM's
  summation order) moves FP4 codes by whole steps, and on the micro model
  the CPU's own gradients move by up to ~13% norm-wise when the embedding
  gets one ulp of noise. So the loss must agree within 1e-3 and every other
  result norm-wise within twice the CPU's largest own change under the
  GPU's kind of noise (noise<i>-<draw>.npy, several draws made by
  cases.py), and at least 2e-2;
- bf16: a step whose high-precision GEMMs round their operands to bf16
  (tensor cores) while the CPU computes in f32: the loss within 1e-2, every
  other result norm-wise within 2e-2 (and MXFP4 steps' discontinuities).
- curve / curve-fp4: a training run's losses (metrics.jsonl) against the
  CPU trainer's, step by step: within 1e-3 relative in f32, within 2e-2
  under an MXFP4 recipe (whose quantizations flip on last-bit differences
  and then follow their own trajectory) or with bf16 tensor-core GEMMs
  and attention.
- sr: stochastic rounding's statistics over the calls of counters.txt
  (test/Integration/lib/sr_statistics.py: unbiased, independent across
  elements, rows, counters and jobs; bounds from the sample sizes), and two
  counters' results against the CPU's (bit for bit where the quantized
  tensor is exact).
Prints one line a case and exits 1 if any fails."""
import glob
import json
import os
import sys

import numpy as np

# scripts/gpu/run.sh runs this on the GPU machine, not under lit (whose
# PYTHONPATH gives the tests their helpers): test/Integration/lib by path.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "test", "Integration", "lib"))
import sr_statistics  # noqa: E402


def bf16(a):
    return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


check = sys.argv[1]
failed = 0
for line in open(f"{check}/cases.txt"):
    name, function, results, tolerance = line.split()[:4]
    if tolerance == "sr":
        bad = sr_statistics.check_dir(f"{check}/{name}", "gpu")
        failed += bad > 0
        print(f"{'ok  ' if not bad else 'FAIL'} {name} @{function}: stochastic rounding "
              f"statistics{f', {bad} checks failed' if bad else ''}")
        continue
    if function == "train":
        def losses(path):
            records = [json.loads(l) for l in open(path) if l.strip()]
            return [r["loss"] for r in records if "loss" in r]
        cpu = losses(f"{check}/{name}/cpu/metrics.jsonl")
        gpu = losses(f"{check}/{name}/metrics.jsonl")
        limit = 1e-3 if tolerance == "curve" else 2e-2
        diffs = [abs(g - c) / abs(c) for g, c in zip(gpu, cpu)]
        ok = len(gpu) == len(cpu) and max(diffs) <= limit
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {len(gpu)} GPU steps against "
              f"{len(cpu)} CPU steps, loss {cpu[0]:.4f} -> cpu {cpu[-1]:.4f} / gpu "
              f"{gpu[-1]:.4f}, worst relative difference {max(diffs):.2e} "
              f"(step {diffs.index(max(diffs)) + 1})")
        continue
    worst, worst_at, worst_norm, identical, bad = 0.0, -1, 0.0, 0, 0
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
        if error > worst:
            worst, worst_at = error, i
        if tolerance in ("step", "bf16"):
            norm = float(np.linalg.norm(got_finite - want_finite)) / max(
                float(np.linalg.norm(want_finite)), 1e-30)
            worst_norm = max(worst_norm, norm if i else 0.0)
            limit = 2e-2
            for path in glob.glob(f"{check}/{name}/noise{i}-*.npy"):
                noise = np.nan_to_num(np.load(path).astype(np.float64))
                limit = max(limit, 2 * float(np.linalg.norm(noise - want_finite)) /
                            max(float(np.linalg.norm(want_finite)), 1e-30))
            bad += (error > (1e-3 if tolerance == "step" else 1e-2)) if i == 0 \
                else norm > limit
        else:
            bad += error > float(tolerance)
    failed += bad > 0
    detail = (f"worst relative difference {worst:.2e} (result {worst_at})"
              if tolerance != "exact" else "bit-exact required")
    if tolerance in ("step", "bf16"):
        detail += f", worst norm-wise {worst_norm:.2e}"
    print(f"{'ok  ' if not bad else 'FAIL'} {name} @{function}: {results} results, "
          f"{identical} bit-identical, {detail}")
print(f"gpu check: {'FAILED' if failed else 'passed'}")
sys.exit(1 if failed else 0)
