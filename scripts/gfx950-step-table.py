#!/usr/bin/env python3
"""Regenerates docs/gfx950.md's table "The Llama steps (fp4-all-dht16),
MODELED": runs the gfx950 step model (`mxfp4-run compile --target=gfx950
--step-model`) for each preset and prints the table in Markdown, the commit
that produced it first. Every figure is the issue model's, not a
measurement.

Usage: scripts/gfx950-step-table.py [--build DIR] [--recipe R] [PRESET...]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def commit():
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=True)
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain",
                            "--untracked-files=no", "--", "lib", "include",
                            "tools"], capture_output=True, text=True,
                           check=True).stdout.strip()
    return head.stdout.strip() + (" (with uncommitted changes)" if dirty else "")


def model(tool, preset, recipe, workdir):
    out = os.path.join(workdir, preset + ".json")
    run = subprocess.run([tool, "compile", f"--preset={preset}",
                          f"--recipe={recipe}", "--target=gfx950",
                          f"--step-model={out}"], capture_output=True,
                         text=True)
    if run.returncode:
        sys.exit(f"{preset}: mxfp4-run compile failed:\n{run.stderr}")
    with open(out) as f:
        return json.load(f)


def row(preset, m):
    kernels = m["kernels"]
    good = sum(1 for k in kernels if k["efficiency"] >= 0.7)
    top = sorted(kernels, key=lambda k: -k["microseconds"])[:5]
    mem = m["memory"]
    gb = lambda b: f"{b / 1e9:.1f}"
    dominant = "; ".join(
        f"`{k['name']}` {k['microseconds'] / 1e3:.1f} ms, {k['bound']}, "
        f"{100 * k['efficiency']:.0f} %" for k in top)
    return (f"| `{preset}` ({m['tokens_per_step']:,}) | {m['launches']:,} | "
            f"{m['step_microseconds'] / 1e3:.1f} / "
            f"{m['sustained_step_microseconds'] / 1e3:.1f} ms | "
            f"{m['tokens_per_second']:,.0f} / "
            f"{m['sustained_tokens_per_second']:,.0f} | "
            f"{gb(mem['peak_bytes'])} GB ({gb(mem['arguments_bytes'])} + "
            f"{gb(mem['peak_temporaries_bytes'])}) | {good} of {len(kernels)} "
            f"| {dominant} |")


def below(preset, m):
    """The kernels under 70 % of their roofline, largest first."""
    slow = sorted((k for k in m["kernels"] if k["efficiency"] < 0.7),
                  key=lambda k: -k["microseconds"])
    total = m["kernel_microseconds"]
    share = sum(k["microseconds"] for k in slow) / total if total else 0
    names = ", ".join(f"`{k['name']}` ({k['bound']}-bound, "
                      f"{100 * k['efficiency']:.0f} %, "
                      f"{k['microseconds'] / 1e3:.2f} ms)" for k in slow[:6])
    more = f", and {len(slow) - 6} more" if len(slow) > 6 else ""
    return (f"* `{preset}`: {len(slow)} of {len(m['kernels'])} kernels below "
            f"70 % ({100 * share:.1f} % of its kernel time){': ' if slow else ''}"
            f"{names}{more}.")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--recipe", default="fp4-all-dht16")
    parser.add_argument("presets", nargs="*",
                        default=["pilot", "llama3.2-1b", "llama3.1-8b"])
    args = parser.parse_args()
    tool = os.path.join(args.build, "bin", "mxfp4-run")
    with tempfile.TemporaryDirectory() as workdir:
        models = [(p, model(tool, p, args.recipe, workdir))
                  for p in args.presets]
    print(f"Generated at commit {commit()} by `scripts/gfx950-step-table.py` "
          f"(recipe {args.recipe}).\n")
    print("| preset (tokens a step) | launches | modeled step: 2.4 GHz / "
          "1.47 GHz sustained | modeled tokens/s per MI355X (same clocks) | "
          "peak device memory (arguments + temporaries) | kernels at ≥ 70 % "
          "of their roofline | the 5 kernels that dominate: modeled time, "
          "bound, efficiency |")
    print("|---|---|---|---|---|---|---|")
    for preset, m in models:
        print(row(preset, m))
    print("\nKernels below 70 % of their roofline:\n")
    for preset, m in models:
        print(below(preset, m))


if __name__ == "__main__":
    main()
