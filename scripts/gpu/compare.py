"""Compares the GPU's results with the CPU's: every result within 1e-5 of
its largest magnitude (summation order and libdevice differ), exit 1 if
not."""
import glob
import sys

import numpy as np

failed = 0
for function in ["loss_and_grads", "train_step"]:
    count = len(glob.glob(f"{function}.cpu*.npy"))
    worst, identical = 0.0, 0
    for i in range(count):
        want, got = np.load(f"{function}.cpu{i}.npy"), np.load(f"{function}.gpu{i}.npy")
        error = float(np.abs(got.astype(np.float64) - want).max()) / max(float(np.abs(want).max()), 1e-30)
        worst = max(worst, error)
        identical += bool((got.view(np.uint32) == want.view(np.uint32)).all())
        failed += error > 1e-5
    print(f"{function}: {count} results, {identical} bit-identical, worst "
          f"relative difference {worst:.2e}, loss cpu {float(np.load(f'{function}.cpu0.npy')):.7f} "
          f"gpu {float(np.load(f'{function}.gpu0.npy')):.7f}")
print(f"gpu check: {'FAILED' if failed else 'passed'}")
sys.exit(1 if failed else 0)
