"""Data-parallel scaling on the GPU machine: trains each prepared preset
(gpu-check/scaling/<preset>/, by `CASES=scaling scripts/gpu/prepare.sh`)
with `mxfp4-cuda-run train --gpus=N` for every N it was compiled for that
the machine has GPUs for, and prints tokens/s, the speedup over one GPU and
the scaling efficiency (speedup / N), with rank 0's device memory. One GPU
runs the same ZeRO-1 path (--gpus=1), so the ratios measure the collectives
and the split batch alone. tokens/s is the mean over the steps after the
first WARMUP (the first steps load kernels and fill the caching allocator).

    python3 scripts/gpu/scaling.py RUNNER [WARMUP]

Writes gpu-check/scaling/results.json and prints a Markdown table.
"""
import json
import os
import re
import subprocess
import sys

runner = sys.argv[1]
warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 5
root = "gpu-check/scaling"
gpus = int(subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                          text=True).stdout.count("GPU "))
env = dict(os.environ, NCCL_NVLS_ENABLE="0")
results = []
for preset in sorted(os.listdir(root)):
    folder = os.path.join(root, preset)
    if not os.path.isdir(folder):
        continue
    ranks = sorted(int(d[len("gpus"):]) for d in os.listdir(folder)
                   if re.fullmatch(r"gpus\d+", d))
    base = None
    for n in ranks:
        if n > gpus:
            print(f"{preset}: --gpus={n} skipped ({gpus} GPUs here)")
            continue
        out = f"/tmp/mxfp4-scaling/{preset}-{n}"
        subprocess.run(["rm", "-rf", out], check=True)
        c = os.path.join(folder, f"gpus{n}")
        run = subprocess.run(
            [runner, "train", f"{c}/plan.txt", f"{c}/kernels.cubin",
             f"--run={folder}/run", f"--out={out}", f"--gpus={n}"],
            capture_output=True, text=True, env=env)
        if run.returncode != 0:
            print(run.stdout[-2000:], run.stderr[-2000:])
            sys.exit(f"{preset}: --gpus={n} failed")
        memory = re.search(r"device memory: (\d+) bytes", run.stdout)
        steps = [json.loads(line) for line in open(f"{out}/metrics.jsonl")]
        steps = [r for r in steps if "loss" in r and r["step"] > warmup]
        # tokens_per_s is cumulative from the first step: take the rate of
        # the steps after the warm-up from elapsed_s.
        first, last = steps[0], steps[-1]
        tokens = last["tokens"] - first["tokens"]
        rate = tokens / (last["elapsed_s"] - first["elapsed_s"])
        if n == 1:
            base = rate
        row = dict(preset=preset, gpus=n, tokens_per_s=rate,
                   loss=last["loss"], step=last["step"],
                   device_bytes_rank0=int(memory.group(1)) if memory else None)
        if base:
            row["speedup"] = rate / base
            row["efficiency"] = rate / base / n
        results.append(row)
        print(json.dumps(row), flush=True)
json.dump(results, open(os.path.join(root, "results.json"), "w"), indent=1)
print("\n| preset | GPUs | tokens/s | speedup | efficiency | device memory, rank 0 |")
print("|---|---|---|---|---|---|")
for r in results:
    print(f"| {r['preset']} | {r['gpus']} | {r['tokens_per_s']:,.0f} | "
          f"{r.get('speedup', float('nan')):.2f}x | "
          f"{r.get('efficiency', float('nan')):.2f} | "
          f"{(r['device_bytes_rank0'] or 0) / 1e9:.1f} GB |")
