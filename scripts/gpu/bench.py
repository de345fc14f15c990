"""The NVIDIA kernel benchmarks (on the GPU machine, after
scripts/gpu/prepare.sh here): times each kernel of gpu-check/bench/bench.txt
with the plan runner (the best of 10 back-to-back batches of ~2 ms, as the
peers are timed; the steps: the mean of 5 calls), then its peer in the
same run through scripts/gpu/torch_reference.py (cuBLAS bf16 on the same
GEMM shape; a device-to-device copy of the source tensor; PyTorch's
scaled_dot_product_attention in bf16 on the same attention shape; PyTorch's
training step), and prints the ratios. Writes gpu-check/bench/results.json. Names after RUNNER select
cases by prefix (e.g. `step` for the training steps and their peer only).
SUSTAIN=S (seconds) times the kernels and their peers (not the steps) as
the mean of S seconds of back-to-back calls each instead: at the clocks the
device's power limit allows for that work, as in a training run, where a
short burst runs at boost clocks (docs/performance.md).
Usage: [SUSTAIN=S] bench.py RUNNER [NAME_PREFIX...]"""
import json
import math
import os
import subprocess
import sys

import numpy as np

runner, selected = sys.argv[1], sys.argv[2:]
sustain = float(os.environ.get("SUSTAIN", "0"))
root = os.path.join(os.path.dirname(__file__), "..", "..", "gpu-check", "bench")
rng = np.random.default_rng(1)


def step_inputs(case, function):
    """Arguments of a training step from its plan: weights (normal * 0.02,
    norm gains 1), zero AdamW moments, byte tokens, step 5."""
    lines = open(f"{case}/plan.txt").read().split("\nfunction ")
    plan = next(p for p in lines if p.startswith(function + " "))
    args = [l.split() for l in plan.splitlines() if l.startswith("arg ")]
    floats = sum(1 for a in args if a[2] == "buffer" and a[5] == "f32")
    inputs = []
    for a in args:
        if a[2] == "scalar":
            inputs.append(f"--input=5")
            continue
        dims = [int(d) for d in a[6:]]
        i = int(a[1])
        if a[5] == "i32":
            x = rng.integers(0, 256, dims, dtype=np.int32)
        elif i >= floats // 3:
            x = np.zeros(dims, np.float32)
        elif len(dims) == 1:
            x = np.ones(dims, np.float32)
        else:
            x = (0.02 * rng.standard_normal(dims)).astype(np.float32)
        np.save(f"{case}/in{i}.npy", x)
        inputs.append(f"--input=@in{i}.npy")
    return inputs


ours = []
for line in open(f"{root}/bench.txt"):
    name, kind, work, *specs = line.split()
    if selected and not any(name.startswith(p) for p in selected):
        continue
    case = f"{root}/{name}"
    function = kind.split(":")[1] if kind.startswith("step:") else "f"
    args = step_inputs(case, function) if specs == ["plan"] else []
    for i, spec in enumerate(specs if specs != ["plan"] else []):
        fields = spec.split(":")
        if fields[0] == "u8":
            count, low, high = map(int, fields[1:])
            a = rng.integers(low, high, count, dtype=np.uint8)
        elif fields[0] in ("f32n", "bf16n"):  # f32n:D0xD1x... (normal)
            shape = [int(d) for d in fields[1].split("x")]
            a = rng.standard_normal(shape, dtype=np.float32)
            if fields[0] == "bf16n":  # bf16 bits as uint16
                a = (a.view(np.uint32) >> 16).astype(np.uint16)
        else:  # f32:ROWS:COLS or bf16:ROWS:COLS (bf16 bits as uint16)
            a = rng.standard_normal((int(fields[1]), int(fields[2])), dtype=np.float32)
            if fields[0] == "bf16":
                a = (a.view(np.uint32) >> 16).astype(np.uint16)
        np.save(f"{case}/in{i}.npy", a)
        args.append(f"--input=@in{i}.npy")
    step = specs == ["plan"]

    def time_ms(flags, key="mean_ms"):
        """Our time over `flags`' calls (the step prints its profile)."""
        subprocess.run([runner, "exec", "plan.txt", "kernels.cubin", f"--function={function}",
                        "--time-json=time.json"] + flags + args,
                       cwd=case, check=True, stdout=None if step else subprocess.DEVNULL)
        return json.load(open(f"{case}/time.json"))[key]

    ms = time_ms(["--repeat=5", "--profile"] if step else ["--repeat=20"])
    per_call = ms
    if sustain > 0 and not step:
        ms = time_ms([f"--repeat={max(20, int(sustain * 1e3 / ms))}", "--back-to-back"])
    elif not step:
        # As the peers' bursts: the best of 10 back-to-back batches of ~2 ms
        # (call by call, each call's events also time its launch latency).
        ms = time_ms([f"--repeat={max(1, math.ceil(2.0 / ms))}", "--back-to-back",
                      "--batches=10"], key="min_ms")
    ours.append((name, kind, int(work), specs, ms, per_call))
    for a in args:
        if a.startswith("--input=@"):
            os.remove(f"{case}/{a[9:]}")

gemms = sorted({n.split("_")[-1] for n, k, *_ in ours if k == "gemm"})
copies = [f"{s[0].split(':')[1]}x{s[0].split(':')[2]}:f32" for _, k, _, s, *_ in ours
          if k == "quantize"]
steps = any(k.startswith("step") for _, k, *_ in ours)
attention = sorted({k.split(":", 1)[1] for _, k, *_ in ours if k.startswith("attention:")})
peer_json = f"{root}/torch.json"
reference = os.path.join(os.path.dirname(__file__), "torch_reference.py")
peers = {}
for bench, option, wanted in [("gemm", ["--shapes", ",".join(gemms)], gemms),
                              ("copy", ["--copies", ",".join(copies)], copies),
                              ("step", ["--preset", "pilot", "--iters", "10"], steps),
                              ("attention", ["--attention", ",".join(attention)], attention)]:
    if not wanted:
        continue
    subprocess.run([sys.executable, reference, bench] + option +
                   (["--sustain", str(sustain)] if sustain > 0 and bench != "step" else []) +
                   ["--json", f"{peer_json}.{bench}"], check=True)
    peers.update(json.load(open(f"{peer_json}.{bench}")))
results = []
print(f"\n{'kernel':<28} {'ours':>10} {'peer':>10} {'ratio':>6}"
      + (f"  (sustained {sustain:g} s each)" if sustain > 0 else ""))
for name, kind, work, specs, ms, per_call in ours:
    if kind.startswith("step"):
        eager = next(v for v in peers["step"] if v["variant"] == "bf16-autocast-eager")
        value, against = work / (ms * 1e-3), work / (eager["mean_ms"] * 1e-3)
        unit = "tokens/s (peer: PyTorch bf16 autocast eager step)"
    elif kind.startswith("attention:"):
        peer = next(p for p in peers["attention"] if p["case"] == kind.split(":", 1)[1])
        value, against = work / (ms * 1e-3) / 1e12, peer["tflops"]
        unit = "TFLOP/s (peer: PyTorch scaled_dot_product_attention, bf16)"
    elif kind == "gemm":
        m, n, k = map(int, name.split("_")[-1].split("x"))
        peer = next(p for p in peers["gemm"] if [p["m"], p["n"], p["k"]] == [m, n, k])
        value, against = work / (ms * 1e-3) / 1e12, peer["tflops"]
        unit = "TFLOP/s (peer: cuBLAS bf16)"
    else:
        rows, cols = int(specs[0].split(":")[1]), int(specs[0].split(":")[2])
        peer = next(p for p in peers["copy"] if p["shape"] == [rows, cols])
        value, against = work / (ms * 1e-3) / 1e9, peer["gb_per_s"]
        unit = "GB/s (peer: device-to-device copy of the source)"
    print(f"{name:<28} {value:>10.1f} {against:>10.1f} {value / against:>6.2f}  {unit}, ours {ms:.3f} ms"
          + (f" ({per_call:.3f} call by call)" if per_call != ms else ""))
    results.append({"kernel": name, "ms": ms, "ms_call_by_call": per_call, "value": value,
                    "peer": against, "ratio": value / against, "unit": unit})
json.dump({"device": peers.get("device"), "sustain_s": sustain, "results": results},
          open(f"{root}/results.json", "w"), indent=2)
