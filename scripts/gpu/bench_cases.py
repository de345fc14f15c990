"""Prepares the NVIDIA kernel benchmarks (here, where MLIR is): the MXFP4
GEMM, the fused Hadamard + quantize kernel (both orientations), the
quantize kernel alone (one orientation) and the fused causal attention
(forward and backward: head dims 64 and 128 on the pilot study's shapes, and
llama3.2-1b's seq 8192), compiled for sm_90a, listed in OUT/bench.txt with the random inputs to make
(too large to ship: scripts/gpu/bench.py makes them on the GPU machine). The peers (cuBLAS bf16 on the same GEMM shape, a
device-to-device copy of the same bytes) are measured by
scripts/gpu/torch_reference.py in the same run.
Usage: [BENCH=NAME_PREFIX,...] bench_cases.py OUT_DIR MXFP4_RUN
"""
import json
import os
import subprocess
import sys

from composites import composite_module

out, tool = sys.argv[1], sys.argv[2]
lines = []
prefixes = os.environ.get("BENCH", "").split(",")


def wanted(name):
    return any(name.startswith(p) for p in prefixes)


def prepare(name, mlir, inputs, kind, work):
    if not wanted(name):
        return
    case = os.path.join(out, name)
    os.makedirs(case, exist_ok=True)
    with open(f"{case}/case.mlir", "w") as f:
        f.write(mlir)
    subprocess.run([tool, "compile", f"{case}/case.mlir", "--target=sm_90a",
                    f"--out-dir={case}"], check=True, stdout=subprocess.DEVNULL)
    for listing in ("kernels.mlir", "kernels.ptx"):  # not needed to run
        os.remove(f"{case}/{listing}")
    lines.append(f"{name} {kind} {work} {' '.join(inputs)}")


# GEMMs of the pilot step (32768 tokens): Fprop shapes (tokens x out x in)
# and the Wgrad shape of the FFN (out x in x tokens), plus 8192^3.
for m, n, k in [(32768, 512, 512), (32768, 1408, 512), (32768, 512, 1408),
                (1408, 512, 32768), (8192, 8192, 8192)]:
    a, sa = f"tensor<{m}x{k}xf4E2M1FN>", f"tensor<{m}x{k // 32}xf8E8M0FNU>"
    b, sb = f"tensor<{n}x{k}xf4E2M1FN>", f"tensor<{n}x{k // 32}xf8E8M0FNU>"
    c = f"tensor<{m}x{n}xbf16>"
    mlir = (f"func.func @f(%a: {a}, %sa: {sa}, %b: {b}, %sb: {sb}) -> {c} {{\n"
            f"  %c = mxfp4.scaled_matmul %a scale %sa, %b scale %sb : {a}, {sa}, {b}, {sb} -> {c}\n"
            f"  return %c : {c}\n}}\n")
    # Input specs: u8:COUNT:LOW:HIGH (uniform bytes), f32:ROWS:COLS (normal),
    # plan (a training step's arguments, read from its plan).
    inputs = [f"u8:{m * k // 2}:0:256", f"u8:{m * k // 32}:120:134",
              f"u8:{n * k // 2}:0:256", f"u8:{n * k // 32}:120:134"]
    prepare(f"gemm_{m}x{n}x{k}", mlir, inputs, "gemm", 2 * m * n * k)

# The high-precision GEMMs of the step (linalg.matmul on bf16 tensor cores,
# f32 results) in its three layouts: Fprop (A[M, K], B[N, K]), Dgrad
# (B[K, N]) and Wgrad (A[K, M], B[K, N]): the pilot's FFN shapes, 8192^3,
# llama3.2-1b's FFN Fprop, and the LM head's three GEMMs (8192 tokens,
# vocabulary 128,256) at llama3.2-1b (dim 2048) and llama3.2-3b (dim 3072).
MM_MAPS = {"nt": ("(m, k)", "(n, k)"), "nn": ("(m, k)", "(k, n)"),
           "tn": ("(k, m)", "(k, n)")}
MM_SHAPES = [("nt", 32768, 1408, 512), ("nn", 32768, 512, 1408),
             ("tn", 1408, 512, 32768), ("nt", 8192, 8192, 8192),
             ("nt", 8192, 8192, 2048)]
for dim in (2048, 3072):
    MM_SHAPES += [("nt", 8192, 128256, dim), ("nn", 8192, dim, 128256),
                  ("tn", 128256, dim, 8192)]
for layout, m, n, k in MM_SHAPES:
    shape = {"m": m, "n": n, "k": k}
    dims = [[shape[d] for d in x.strip("()").split(", ")] for x in MM_MAPS[layout]]
    a, b = (f"tensor<{d[0]}x{d[1]}xbf16>" for d in dims)
    c = f"tensor<{m}x{n}xf32>"
    maps = ", ".join(f"affine_map<(m, n, k) -> {x}>" for x in MM_MAPS[layout] + ("(m, n)",))
    mlir = (f"func.func @f(%a: {a}, %b: {b}) -> {c} {{\n"
            f"  %zero = arith.constant 0.0 : f32\n"
            f"  %e = tensor.empty() : {c}\n"
            f"  %z = linalg.fill ins(%zero : f32) outs(%e : {c}) -> {c}\n"
            f"  %r = linalg.matmul indexing_maps = [{maps}] ins(%a, %b : {a}, {b}) outs(%z : {c}) -> {c}\n"
            f"  return %r : {c}\n}}\n")
    prepare(f"mm_{layout}_{m}x{n}x{k}", mlir, [f"bf16:{d[0]}:{d[1]}" for d in dims],
            "gemm", 2 * m * n * k)

# Fused Hadamard (16) + quantize of an activation, both orientations from one
# read (the Fprop and the Wgrad operand), f32 as the step holds it.
for rows, cols in [(32768, 1408), (32768, 2816)]:
    x, xt = f"tensor<{rows}x{cols}xf32>", f"tensor<{cols}x{rows}xf32>"
    v, s = f"tensor<{rows}x{cols}xf4E2M1FN>", f"tensor<{rows}x{cols // 32}xf8E8M0FNU>"
    vt, st = f"tensor<{cols}x{rows}xf4E2M1FN>", f"tensor<{cols}x{rows // 32}xf8E8M0FNU>"
    mlir = (f"func.func @f(%x: {x}) -> ({v}, {s}, {vt}, {st}) {{\n"
            f"  %h = mxfp4.hadamard %x axis = 1 size = 16 : {x}\n"
            f"  %v, %s = mxfp4.quantize %h axis = 1 : {x} -> {v}, {s}\n"
            f"  %e = tensor.empty() : {xt}\n"
            f"  %t = linalg.transpose ins(%x : {x}) outs(%e : {xt}) permutation = [1, 0]\n"
            f"  %ht = mxfp4.hadamard %t axis = 1 size = 16 : {xt}\n"
            f"  %vt, %st = mxfp4.quantize %ht axis = 1 : {xt} -> {vt}, {st}\n"
            f"  return %v, %s, %vt, %st : {v}, {s}, {vt}, {st}\n}}\n")
    n = rows * cols
    moved = 4 * n + 2 * (n // 2 + n // 32)  # read f32, write both outputs
    prepare(f"quantize_{rows}x{cols}", mlir,
            [f"f32:{rows}:{cols}"], "quantize", moved)

# The quantize kernel alone: one orientation, no rotation (an Fprop
# operand), f32 in.
for rows, cols in [(32768, 2816)]:
    x = f"tensor<{rows}x{cols}xf32>"
    v, s = f"tensor<{rows}x{cols}xf4E2M1FN>", f"tensor<{rows}x{cols // 32}xf8E8M0FNU>"
    mlir = (f"func.func @f(%x: {x}) -> ({v}, {s}) {{\n"
            f"  %v, %s = mxfp4.quantize %x axis = 1 : {x} -> {v}, {s}\n"
            f"  return %v, %s : {v}, {s}\n}}\n")
    n = rows * cols
    prepare(f"quantize-rows_{rows}x{cols}", mlir, [f"f32:{rows}:{cols}"],
            "quantize", 4 * n + n // 2 + n // 32)

# Fused causal attention, forward and backward: the composites of the
# pilot's step (8 heads / 4 KV heads of 64, seq 512, batch 64), of the
# same with heads of 128 (dim 1024, batch 32) and of llama3.2-1b's step
# (32 heads / 8 KV heads of 64, seq 8192, batch 1: the long rows where the
# step spends its attention time). Work: the forward's two
# causal GEMMs, 2 * B * H * S^2 * D flops, the backward's 2.5 times that
# (FlashAttention's count). Peer: PyTorch's scaled_dot_product_attention
# on bf16 tensors of the same shape (scripts/gpu/torch_reference.py).
for label, overrides in [("d64", {}), ("d128", {"dim": 1024, "batch_size": 32}),
                         ("1b", {"preset": "llama3.2-1b"})]:
    if not (wanted(f"attn-fwd_{label}") or wanted(f"attn-bwd_{label}")):
        continue
    config = dict({"preset": "pilot", "name": f"pilot-{label}"}, **overrides)
    config_path = os.path.join(out, f"pilot-{label}.json")
    os.makedirs(out, exist_ok=True)
    json.dump(config, open(config_path, "w"))
    step_path = os.path.join(out, f"pilot-{label}.mlir")
    subprocess.run([tool, "compile", f"--preset={config_path}", "-o", step_path],
                   check=True, stdout=subprocess.DEVNULL)
    step_text = open(step_path).read()
    os.remove(step_path)
    os.remove(config_path)
    for direction, kind in [("fwd", "causal_attention"),
                            ("bwd", "causal_attention_backward")]:
        # bf16 tensors in and out, as SDPA's (the log-sum-exp f32): the
        # attention kernels alone, as a bf16 model runs them.
        mlir, types, _ = composite_module(step_text, kind, bf16=True)
        dims = [t[len("tensor<"):t.rindex("x")] for t in types]
        # q is [batch, seq, heads, head dim], k [batch, seq, kv heads, head
        # dim] (the projections' rows, read in place).
        q, k = ([int(d) for d in shape.split("x")] for shape in dims[:2])
        batch, seq, heads, head_dim = q
        kv_heads = k[2]
        flops = 2 * batch * heads * seq * seq * head_dim
        work = flops if direction == "fwd" else flops * 5 // 2
        inputs = [("bf16n:" if "bf16" in t else "f32n:") + shape
                  for t, shape in zip(types, dims)]
        prepare(f"attn-{direction}_{label}", mlir, inputs,
                f"attention:{direction}:{batch}:{heads}:{kv_heads}:{seq}:{head_dim}", work)

# The whole training step (forward, backward, AdamW) under bf16 and
# fp4-all-dht16 at each preset of STEP_PRESETS (default: the pilot's);
# inputs from the plan's argument list, generated by the runner.
TOKENS = {"pilot": 64 * 512, "llama3.2-1b": 8192, "llama3.2-3b": 8192}
for preset in os.environ.get("STEP_PRESETS", "pilot").split(","):
    if preset not in TOKENS:
        sys.exit(f"STEP_PRESETS: no step benchmark for '{preset}' "
                 f"(known: {', '.join(TOKENS)})")
    for recipe in ["bf16", "fp4-all-dht16"]:
        name = f"step-{recipe}" if preset == "pilot" else f"step-{preset}-{recipe}"
        if not wanted(name):
            continue
        case = os.path.join(out, name)
        subprocess.run([tool, "compile", f"--preset={preset}", f"--recipe={recipe}",
                        "--target=sm_90a", f"--out-dir={case}"], check=True,
                       stdout=subprocess.DEVNULL)
        # exec replays the plan: no host library; the plan compressed (a
        # 3B step's is 25 MB, mostly the RoPE tables), bench.py expands it.
        for unused in ("kernels.mlir", "kernels.ptx", "host.so"):
            os.remove(f"{case}/{unused}")
        subprocess.run(["gzip", "-f", f"{case}/plan.txt"], check=True)
        lines.append(f"{name} step:train_step:{preset} {TOKENS[preset]} plan")

os.makedirs(out, exist_ok=True)  # also where BENCH selects nothing
with open(f"{out}/bench.txt", "w") as f:
    f.write("\n".join(lines) + "\n")
print(f"prepared {len(lines)} benchmarks in {out}")
