"""Training-step benchmark: our compiled Llama step against PyTorch, same run.

For one config (the `tiny` preset by default) it measures, in this order and
on the same machine state:

  * PyTorch 1.13 eager FP32 training of the same model (llama_torch_bench.py:
    AdamW, clipping, the same shapes), in a fresh process;
  * `mxfp4-run train` with each recipe (default `bf16` and `fp4-all-dht16`),
    on the default corpus, without evaluations.

Step time is the median over steps 3..N (the first steps warm caches and the
allocator); tokens/s follows from it. Peak memory is each process's maximum
resident set. It prints one JSON line per measurement and then the ratios to
PyTorch's step time (below 1 means faster than PyTorch).

    /usr/bin/python3 tools/mxfp4-bench/train_bench.py --mxfp4-run build/bin/mxfp4-run
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def bench_ours(tool, preset, recipe, steps, data, workdir):
    out = os.path.join(workdir, recipe)
    shutil.rmtree(out, ignore_errors=True)
    cmd = [tool, "train", f"--preset={preset}", f"--recipe={recipe}",
           f"--steps={steps}", f"--eval-every={10 * steps}", "--eval-batches=1",
           f"--data={data}", f"--out={out}"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{done.stderr}")
    match = re.search(r"compiled in ([0-9.]+) s; .* peak memory ([0-9.]+) MiB",
                      done.stdout)
    records = [json.loads(line) for line in open(os.path.join(out,
                                                              "metrics.jsonl"))
               if '"elapsed_s"' in line]
    times = [b["elapsed_s"] - a["elapsed_s"]
             for a, b in zip(records[2:], records[3:])]
    step_s = statistics.median(times)
    tokens = records[0]["tokens"]
    return {"impl": f"mxfp4 {recipe}", "step_ms": 1e3 * step_s,
            "tokens_per_s": tokens / step_s,
            "compile_s": float(match.group(1)),
            "peak_rss_mib": float(match.group(2)),
            "final_loss": records[-1]["loss"]}


def bench_torch(config, steps):
    cmd = [sys.executable, os.path.join(HERE, "llama_torch_bench.py"),
           f"--steps={steps}"]
    if config:
        cmd.append(f"--config={config}")
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return {"impl": result["peer"], "step_ms": result["step_ms"],
            "tokens_per_s": result["tokens_per_s"],
            "peak_rss_mib": result["peak_rss_mib"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mxfp4-run", default="build/bin/mxfp4-run")
    parser.add_argument("--preset", default="tiny")
    parser.add_argument("--recipes", default="bf16,fp4-all-dht16")
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--data", default="default")
    args = parser.parse_args()
    config = None
    if args.preset != "tiny":
        config = args.preset if args.preset.endswith(".json") else None
        if config is None:
            sys.exit("the PyTorch peer knows the tiny preset or a JSON config")
    rows = [bench_torch(config, args.steps)]
    print(json.dumps(rows[-1]), flush=True)
    with tempfile.TemporaryDirectory() as workdir:
        for recipe in args.recipes.split(","):
            rows.append(bench_ours(args.mxfp4_run, args.preset, recipe,
                                   args.steps, args.data, workdir))
            print(json.dumps(rows[-1]), flush=True)
    peer = rows[0]
    print(f"\n{'implementation':32} {'step ms':>9} {'tokens/s':>9} "
          f"{'vs PyTorch':>11} {'peak MiB':>9}")
    for row in rows:
        print(f"{row['impl']:32} {row['step_ms']:9.1f} "
              f"{row['tokens_per_s']:9.0f} "
              f"{row['step_ms'] / peer['step_ms']:10.2f}x "
              f"{row['peak_rss_mib']:9.0f}")


if __name__ == "__main__":
    main()
