"""Compares two trainers' metrics.jsonl record by record.

    compare_metrics.py EXPECTED ACTUAL TOLERANCE

Both logs must have the same training and held-out records at the same
steps; every loss, eval_loss, grad_norm and lr of ACTUAL must be within
TOLERANCE (relative) of EXPECTED's. Prints one line per step and "ok", or
fails naming the first value that differs.
"""
import json
import sys

KEYS = ("loss", "eval_loss", "grad_norm", "lr")


def records(path):
    out = {}
    for line in open(path):
        if not line.strip():
            continue
        r = json.loads(line)
        for key in KEYS:
            if key in r:
                out[(r["step"], key)] = r[key]
    return out


expected, actual = records(sys.argv[1]), records(sys.argv[2])
tolerance = float(sys.argv[3])
assert expected, "no values in " + sys.argv[1]
assert sorted(expected) == sorted(actual), (sorted(expected), sorted(actual))
worst = 0.0
for (step, key), want in sorted(expected.items()):
    got = actual[(step, key)]
    error = abs(got - want) / max(abs(want), 1e-30)
    assert error <= tolerance, f"step {step} {key}: {got} against {want} " \
        f"(relative {error:.3g} > {tolerance})"
    worst = max(worst, error)
steps = sorted({step for step, _ in expected})
print(f"{len(expected)} values over steps {steps[0]}..{steps[-1]} within "
      f"{tolerance} (worst {worst:.2g})")
print("ok")
