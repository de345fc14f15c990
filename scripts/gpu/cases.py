"""Prepares the NVIDIA GPU check (here, where MLIR is): every case is a
function compiled for sm_90a (plan.txt + kernels.cubin), its inputs, and the
CPU path's results; gpu-check/cases.txt lists them for run.sh and
compare.py on the GPU machine.

Cases:
- the fused Hadamard + quantize kernel, both orientations from one read,
  every rotation kind, scale rule, stochastic rounding, and MX corner cases
  (NaN/Inf/zero/subnormal blocks), returned through the dequantize kernel:
  must be the CPU's bits;
- the tensor-core GEMM fed by quantize kernels (ragged shapes, accumulators,
  bf16 results): within 1e-5 of the result's largest magnitude (summation
  order);
- high-precision linalg contractions on bf16 tensor cores (every
  transposition, batches, ragged K, C added to): within 1e-5 of the product
  of the bf16-rounded operands (plus C's prior values);
- fused causal attention (the composites' FlashAttention kernels, bf16
  tensor cores, heads of 64 and 128) against their f32 decomposition on
  the CPU: forward (o,
  lse) and backward (dq, dk, dv), within 2e-2 of each result's largest
  magnitude; and an attention-sized step and 40 training steps with them;
- the micro Llama step (loss_and_grads, train_step) under bf16 and
  fp4-all-dht16, with the high-precision GEMMs in f32 (the CPU's numerics)
  and on bf16 tensor cores (PyTorch autocast's);
- 40 training steps of the micro model on the GPU (the runtime's --train
  loop) against the CPU trainer's run with the same seed;
- stochastic rounding's statistics through the quantize groups of the
  training step (test/Integration/lib/sr_statistics.py): run.sh calls the
  program once for each of 256 counters, compare.py runs the checker on the
  results and compares two counters' with the CPU's.
Usage: [CASES=GROUP,...] cases.py OUT_DIR MXFP4_RUN
GROUP is one of quantize, gemm, contraction, step, attention, train, sr (all
by default): a subset keeps a check's inputs small.
"""
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import zlib

import numpy as np

# scripts/gpu/prepare.sh runs this, not lit (whose PYTHONPATH gives the
# tests their helpers): test/Integration/lib by path.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "test", "Integration", "lib"))
import harness  # noqa: E402
import sr_statistics  # noqa: E402
from composites import composite_module  # noqa: E402

out, tool = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(90)
T = harness.tensor_type
manifest = []
# `frontend` is prepared by frontend_cases.py (prepare.sh).
GROUPS = {"quantize", "gemm", "contraction", "step", "attention", "train", "sr",
          "frontend"}
groups = set(os.environ.get("CASES", ",".join(GROUPS)).split(","))
if not groups <= GROUPS:
    sys.exit(f"cases.py: unknown CASES group(s) {sorted(groups - GROUPS)}; "
             f"known: {sorted(GROUPS)}")


def wanted(group, cases):
    return cases if group in groups else []


# Noisy CPU runs per MXFP4 step case (see add_case).
NOISE_DRAWS = 4


def add_case(name, mlir, function, inputs, results, tolerance, recipe=None,
             gemm="bf16"):
    """Compiles `mlir` for sm_90a into OUT/NAME, saves the inputs and the CPU's
    results, and lists the case."""
    case = os.path.join(out, name)
    os.makedirs(case, exist_ok=True)
    with open(f"{case}/case.mlir", "w") as f:
        f.write(mlir)
    extra = [f"--recipe={recipe}"] if recipe else []
    subprocess.run([tool, "compile", f"{case}/case.mlir", "--target=sm_90a",
                    f"--out-dir={case}", f"--gemm-precision={gemm}"] + extra,
                   check=True, stdout=subprocess.DEVNULL)
    for listing in ("kernels.mlir", "kernels.ptx"):  # not needed to run
        os.remove(f"{case}/{listing}")
    args = []
    for i, value in enumerate(inputs):
        if isinstance(value, np.ndarray):
            np.save(f"{case}/in{i}.npy", value)
            args.append(f"--input=@in{i}.npy")
        else:
            args.append(f"--input={value}")
    cmd = [tool, "exec", f"{case}/case.mlir", f"--function={function}"] + extra
    cmd += [a.replace("@", f"@{case}/") for a in args]
    cmd += [f"--output=@{case}/cpu{i}.npy" for i in range(results)]
    runs = [cmd]
    if recipe and recipe.startswith("fp4"):
        # How far the CPU moves from itself when the embedding (input 0)
        # carries the GPU's kind of noise: one ulp in f32, bf16 rounding
        # with bf16 GEMMs. MXFP4 steps are judged against that; which codes
        # flip depends on where the noise lands, so several draws estimate
        # the spread (noise<i>-<draw>.npy).
        x = inputs[0]
        # Its own generator: the draws do not move later cases' inputs.
        noise_rng = np.random.default_rng(zlib.crc32(name.encode()))
        for draw in range(NOISE_DRAWS):
            if gemm == "f32":
                noisy = np.nextafter(x, np.where(noise_rng.random(x.shape) < 0.5, -np.inf, np.inf)
                                     .astype(np.float32)).astype(np.float32)
            else:
                noisy = (x * (1 + noise_rng.uniform(-2**-9, 2**-9, x.shape))).astype(np.float32)
            np.save(f"{case}/noisy{draw}.npy", noisy)
            noise = [tool, "exec", f"{case}/case.mlir", f"--function={function}"] + extra
            noise += [f"--input=@{case}/noisy{draw}.npy"] + [a.replace("@", f"@{case}/") for a in args[1:]]
            noise += [f"--output=@{case}/noise{i}-{draw}.npy" for i in range(results)]
            runs.append(noise)
    # The CPU runs are independent and single-threaded: one a core.
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        for done in pool.map(lambda c: subprocess.run(c, stdout=subprocess.DEVNULL), runs):
            if done.returncode:
                sys.exit(f"cases.py: '{' '.join(done.args)}' failed")
    for draw in range(len(runs) - 1):
        os.remove(f"{case}/noisy{draw}.npy")
    manifest.append(f"{name} {function} {results} {tolerance} {' '.join(args)}")


# --- Fused Hadamard + quantize, read back through dequantize. --------------
def quantize_module(rows, cols, row_rot, col_rot, row_rule, col_rule, sr):
    x, xt = T((rows, cols), "f32"), T((cols, rows), "f32")
    v, s = T((rows, cols), "f4E2M1FN"), T((rows, cols // 32), "f8E8M0FNU")
    vt, st = T((cols, rows), "f4E2M1FN"), T((cols, rows // 32), "f8E8M0FNU")

    def rotate(name, src, ty, rot):
        if rot is None:
            return src, ""
        size, kind, inverse = rot
        operands = {"random_fixed": " seed(%seed)",
                    "random_per_step": " seed(%seed) step(%step)"}.get(kind, "")
        inv = "inverse " if inverse else ""
        return f"%{name}", (f"  %{name} = mxfp4.hadamard {inv}{src} axis = 1 size = {size}"
                            f" kind = {kind}{operands} : {ty}\n")

    rounding = " rounding = stochastic seed(%seed) counter(%step)" if sr else ""
    r_src, r_ops = rotate("hr", "%x", x, row_rot)
    t_src, t_ops = rotate("ht", "%t", xt, col_rot)
    return (f"func.func @q(%x: {x}, %seed: i64, %step: i64) -> ({x}, {xt}) {{\n" + r_ops +
            f"  %v, %s = mxfp4.quantize {r_src} axis = 1 scale_rule = {row_rule}{rounding} : {x} -> {v}, {s}\n"
            f"  %e = tensor.empty() : {xt}\n"
            f"  %t = linalg.transpose ins(%x : {x}) outs(%e : {xt}) permutation = [1, 0]\n" + t_ops +
            f"  %vt, %st = mxfp4.quantize {t_src} axis = 1 scale_rule = {col_rule}{rounding} : {xt} -> {vt}, {st}\n"
            f"  %d = mxfp4.dequantize %v scale %s axis = 1 : {v}, {s} -> {x}\n"
            f"  %dt = mxfp4.dequantize %vt scale %st axis = 1 : {vt}, {st} -> {xt}\n"
            f"  return %d, %dt : {x}, {xt}\n}}\n")


QUANTIZE_CASES = [
    (32, 32, None, None, "even", "floor", False),
    (64, 96, (16, "deterministic", False), (32, "deterministic", False), "even", "even", False),
    (96, 64, (32, "deterministic", False), (16, "deterministic", False), "ceil", "rceil", False),
    (64, 128, (16, "random_fixed", False), (16, "random_per_step", False), "floor", "even", False),
    (128, 64, (32, "random_per_step", True), None, "rceil", "ceil", False),
    (160, 96, (16, "deterministic", True), (32, "random_fixed", False), "even", "floor", False),
    (64, 64, None, None, "even", "even", True),
    (96, 128, (16, "deterministic", False), (16, "deterministic", False), "floor", "even", True),
    (1024, 512, (16, "deterministic", False), (16, "deterministic", False), "even", "even", False),
]
for i, (rows, cols, rr, cr, rrule, crule, sr) in enumerate(wanted("quantize", QUANTIZE_CASES)):
    x = harness.mx_stress((rows, cols), 1, rng).astype(np.float32)
    add_case(f"quantize{i}", quantize_module(rows, cols, rr, cr, rrule, crule, sr),
             "q", [x, 12345, 7], 2, "exact")


# --- GEMMs fed by quantize kernels. -----------------------------------------
def gemm_module(m, n, k, result, acc):
    a, b = T((m, k), "f32"), T((n, k), "f32")
    qa, sa = T((m, k), "f4E2M1FN"), T((m, k // 32), "f8E8M0FNU")
    qb, sb = T((n, k), "f4E2M1FN"), T((n, k // 32), "f8E8M0FNU")
    c = T((m, n), result)
    args = f"%a: {a}, %b: {b}"
    acc_text = ""
    if acc:
        args += f", %c0: {T((m, n), acc)}"
        acc_text = " acc(%c0)"
    return (f"func.func @mm({args}) -> {c} {{\n"
            f"  %qa, %sa = mxfp4.quantize %a axis = 1 : {a} -> {qa}, {sa}\n"
            f"  %qb, %sb = mxfp4.quantize %b axis = 1 : {b} -> {qb}, {sb}\n"
            f"  %c = mxfp4.scaled_matmul %qa scale %sa, %qb scale %sb{acc_text} : {qa}, {sa}, {qb}, {sb} -> {c}\n"
            f"  return %c : {c}\n}}\n")


GEMM_CASES = [
    (128, 128, 64, "f32", None),
    (65, 33, 96, "f32", None),
    (130, 70, 288, "bf16", None),
    (1, 17, 32, "f32", "f32"),
    (200, 136, 544, "f32", "f32"),
    (512, 384, 1024, "f32", None),
    (1024, 1408, 512, "f32", None),
    (256, 512, 4096, "f32", "f32"),  # a weight gradient: K split 8 ways
    (512, 256, 512, "bf16", None),  # whole tiles: unguarded loads
    (300, 200, 320, "bf16", None),  # 16-byte chunks of C, ragged tiles
    # K split, run transposed (512 x 1408: 22 whole tiles in 6 splits, not
    # 24 in 5): B's operands first, partials written to C's places.
    (1408, 512, 6144, "f32", "f32"),
    # 9 and 8 row tiles: B expanded once, bulk-copied by the GEMM; ragged
    # M, N and K (byte scales), then whole tiles with a bf16 C.
    (2100, 200, 352, "f32", "f32"),
    (2048, 384, 1024, "bf16", None),
]
for i, (m, n, k, result, acc) in enumerate(wanted("gemm", GEMM_CASES)):
    a = rng.standard_normal((m, k)).astype(np.float32)
    a[:, 3] *= 30  # an outlier channel
    inputs = [a, (0.05 * rng.standard_normal((n, k))).astype(np.float32)]
    if acc:
        inputs.append(rng.standard_normal((m, n)).astype(np.float32))
    add_case(f"gemm{i}", gemm_module(m, n, k, result, acc), "mm", inputs, 1, "1e-5")


# --- Stochastic rounding's statistics: the quantize groups of the training
# step (fused producers, nearest_even row jobs with stochastic column jobs,
# both stochastic, rotated; ragged, whole and gathered shapes) for 256
# counters, one call each (run.sh reads counters.txt). The checker
# (sr_statistics.py, NumPy) runs on the GPU machine; the CPU's bits of the
# first counter of each half travel along. ---------------------------------
if "sr" in groups:
    suite = sr_statistics.Suite("gpu")
    case = os.path.join(out, "sr")
    os.makedirs(case, exist_ok=True)
    with open(f"{case}/case.mlir", "w") as f:
        f.write(suite.mlir)
    subprocess.run([tool, "compile", f"{case}/case.mlir", "--target=sm_90a",
                    f"--out-dir={case}"], check=True, stdout=subprocess.DEVNULL)
    for listing in ("kernels.mlir", "kernels.ptx"):
        os.remove(f"{case}/{listing}")
    args = []
    for i, a in enumerate(suite.inputs):
        np.save(f"{case}/in{i}.npy", a)
        args.append(f"--input=@in{i}.npy")
    calls = suite.counters + [suite.counters[0]]
    with open(f"{case}/counters.txt", "w") as f:
        f.write("".join(f"{c}\n" for c in calls))
    cpu = [0, len(suite.counters) // 2]
    json.dump({"profile": "gpu", "cpu": cpu}, open(f"{case}/sr.json", "w"))
    for k in cpu:
        subprocess.run([tool, "exec", f"{case}/case.mlir", "--function=sr"]
                       + [a.replace("@", f"@{case}/") for a in args] + [f"--input={calls[k]}"]
                       + [f"--output=@{case}/cpu-{k}-{i}.npy" for i in range(len(suite.jobs))],
                       check=True, stdout=subprocess.DEVNULL)
    manifest.append(f"sr sr {len(suite.jobs)} sr {' '.join(args)}")


# --- High-precision contractions on bf16 tensor cores: every transposition,
# batches, a ragged K, and one the kernel leaves to the generic lowering (odd
# N), which multiplies the same bf16-rounded operands in f32. The reference
# is the product of the operands rounded to bf16 (ties to even), in
# float64. ------------------------------------------------------------------
def bf16_round(x):
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


MAPS = {"mk": "(d0, d2)", "km": "(d2, d0)", "nk": "(d1, d2)", "kn": "(d2, d1)"}
CONTRACTIONS = [
    # batch, m, n, k, A layout, B layout
    (0, 300, 200, 96, "mk", "nk"),
    (0, 128, 192, 64, "mk", "kn"),
    (0, 256, 96, 100, "km", "kn"),
    (0, 96, 64, 128, "km", "nk"),
    (4, 96, 160, 64, "mk", "kn"),
    (0, 33, 17, 40, "mk", "nk"),
    (0, 256, 128, 4096, "km", "kn"),  # a weight gradient: K split 8 ways
    (0, 200, 144, 4096, "mk", "nk"),  # K-contiguous, ragged M and N, K split
]
# Contractions that add to C (a residual sum: C = X + A B, the kernel loads
# X's boxes by TMA): ragged M and N, and batched.
ADDING = [(0, 300, 200, 96, "mk", "nk"), (4, 96, 160, 64, "mk", "kn")]
for i, (batch, m, n, k, la, lb) in enumerate(
        wanted("contraction", CONTRACTIONS + ADDING)):
    adds = i >= len(CONTRACTIONS)
    dims = {"m": m, "n": n, "k": k}
    lead = (batch,) if batch else ()
    a_shape = lead + tuple(dims[d] for d in la)
    b_shape = lead + tuple(dims[d] for d in lb)
    c_shape = lead + (m, n)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    at, bt, ct = T(a_shape, "f32"), T(b_shape, "f32"), T(c_shape, "f32")
    if batch:
        op = f"linalg.batch_matmul ins(%a, %b : {at}, {bt}) outs(%z : {ct}) -> {ct}"
        assert (la, lb) == ("mk", "kn")
    else:
        maps = ", ".join(f"affine_map<(d0, d1, d2) -> {x}>" for x in
                         (MAPS[la], MAPS[lb], "(d0, d1)"))
        op = f"linalg.matmul indexing_maps = [{maps}] ins(%a, %b : {at}, {bt}) outs(%z : {ct}) -> {ct}"
    if adds:
        x = rng.standard_normal(c_shape).astype(np.float32)
        mlir = (f"func.func @mm(%a: {at}, %b: {bt}, %z: {ct}) -> {ct} {{\n"
                f"  %c = {op}\n"
                f"  return %c : {ct}\n}}\n")
    else:
        mlir = (f"func.func @mm(%a: {at}, %b: {bt}) -> {ct} {{\n"
                f"  %zero = arith.constant 0.0 : f32\n"
                f"  %e = tensor.empty() : {ct}\n"
                f"  %z = linalg.fill ins(%zero : f32) outs(%e : {ct}) -> {ct}\n"
                f"  %c = {op}\n"
                f"  return %c : {ct}\n}}\n")
    add_case(f"contraction{i}", mlir, "mm", [a, b] + ([x] if adds else []), 1,
             "1e-5")
    ea = "bmk" if batch else la
    eb = ("b" if batch else "") + lb
    want = np.einsum(f"{ea},{eb}->{'b' if batch else ''}mn",
                     bf16_round(a).astype(np.float64),
                     bf16_round(b).astype(np.float64))
    # The kernel adds X to the finished f32 sum.
    want = want.astype(np.float32) + x if adds else want.astype(np.float32)
    np.save(os.path.join(out, f"contraction{i}", "cpu0.npy"), want)


# --- The micro Llama step. ---------------------------------------------------
micro = os.path.join(os.path.dirname(__file__), "..", "..", "test", "Tools",
                     "mxfp4-run", "Inputs", "micro.json")
subprocess.run([tool, "compile", f"--preset={micro}", "-o", f"{out}/step.mlir"],
               check=True)
step = open(f"{out}/step.mlir").read()


def step_cases(step, label, combos):
    """loss_and_grads and train_step of `step` on random weights, per
    (recipe, GEMM precision, tolerance)."""
    for recipe, gemm, tolerance in combos:
        for function in ["loss_and_grads", "train_step"]:
            head = re.search(r"func\.func @" + function + r"\((.*?)\)\s*->\s*\((.*?)\)\s*(attributes|\{)",
                             step, re.S)
            types = re.findall(r"tensor<([0-9x]+)x(f32|i32)>|: (i64)", head.group(1))
            results = len(re.findall(r"tensor<", head.group(2)))
            floats = sum(1 for _, e, s in types if e == "f32")
            inputs = []
            for i, (shape, elem, scalar) in enumerate(types):
                if scalar:
                    inputs.append(5)
                    continue
                dims = [int(d) for d in shape.split("x")]
                if elem == "i32":
                    a = rng.integers(0, 256, dims).astype(np.int32)
                elif function == "train_step" and i >= floats // 3:
                    a = 1e-3 * rng.standard_normal(dims)  # AdamW m, and v >= 0
                    a = (np.abs(a) * 1e-2 if i >= 2 * floats // 3 else a).astype(np.float32)
                elif len(dims) == 1:
                    a = (1 + 0.1 * rng.standard_normal(dims)).astype(np.float32)
                else:
                    a = (0.05 * rng.standard_normal(dims)).astype(np.float32)
                inputs.append(a)
            add_case(f"step{label}-{recipe}-{gemm}-{function}", step, function, inputs,
                     results, tolerance, recipe=recipe, gemm=gemm)


step_cases(step, "", wanted("step", [
    ("bf16", "f32", "1e-5"), ("bf16", "bf16", "bf16"),
    ("fp4-all-dht16", "f32", "step"), ("fp4-all-dht16", "bf16", "bf16")]))

# --- Fused attention: the composites of a step whose heads the kernels
# cover (seq 128 at head dims 64 and 128, seq 384 at 64; two query heads a
# KV head), called alone. ----------------------------------------------------
attn = dict(json.load(open(micro)), name="attn", dim=128, num_heads=2,
            num_kv_heads=1, ffn_dim=192, seq_len=128, batch_size=4)
attn_config = os.path.join(out, "attn.json")
json.dump(attn, open(attn_config, "w"))
subprocess.run([tool, "compile", f"--preset={attn_config}", "-o", f"{out}/attn-step.mlir"],
               check=True)
attn_step = open(f"{out}/attn-step.mlir").read()
# Heads of 128 (Llama's): the same with dim 256.
attn128_config = os.path.join(out, "attn128.json")
json.dump(dict(attn, name="attn128", dim=256, ffn_dim=384), open(attn128_config, "w"))
subprocess.run([tool, "compile", f"--preset={attn128_config}", "-o",
                f"{out}/attn128-step.mlir"], check=True)
attn128_step = open(f"{out}/attn128-step.mlir").read()
# Longer rows (seq 384, not a multiple of the forward's 128 keys a step):
# the warpgroup kernels walk several stages of their pipelines, and the
# forward's last key block reaches past the sequence's end.
attn384_config = os.path.join(out, "attn384.json")
json.dump(dict(attn, name="attn384", seq_len=384, batch_size=1),
          open(attn384_config, "w"))
subprocess.run([tool, "compile", f"--preset={attn384_config}", "-o",
                f"{out}/attn384-step.mlir"], check=True)
attn384_step = open(f"{out}/attn384-step.mlir").read()


def composite_case(kind, inputs, step_text=attn_step, suffix=""):
    """A public @f calling the step's `kind` composite on `inputs`."""
    mlir, _, outs = composite_module(step_text, kind)
    add_case(kind.replace("_", "-") + suffix, mlir, "f", inputs, len(outs), "2e-2")


if "attention" in groups:
    # Token-major, as the projections produce them: q [B, S, heads, D],
    # k and v [B, S, KV heads, D].
    q = rng.standard_normal((4, 128, 2, 64)).astype(np.float32)
    k, v = (rng.standard_normal((4, 128, 1, 64)).astype(np.float32) for _ in range(2))
    composite_case("causal_attention", [q, k, v])
    o, lse = (np.load(f"{out}/causal-attention/cpu{i}.npy") for i in range(2))
    composite_case("causal_attention_backward",
                   [q, k, v, o, lse, rng.standard_normal(q.shape).astype(np.float32)])
    q = rng.standard_normal((4, 128, 2, 128)).astype(np.float32)
    k, v = (rng.standard_normal((4, 128, 1, 128)).astype(np.float32) for _ in range(2))
    composite_case("causal_attention", [q, k, v], attn128_step, "-d128")
    o, lse = (np.load(f"{out}/causal-attention-d128/cpu{i}.npy") for i in range(2))
    composite_case("causal_attention_backward",
                   [q, k, v, o, lse, rng.standard_normal(q.shape).astype(np.float32)],
                   attn128_step, "-d128")
    q = rng.standard_normal((1, 384, 2, 64)).astype(np.float32)
    k, v = (rng.standard_normal((1, 384, 1, 64)).astype(np.float32) for _ in range(2))
    composite_case("causal_attention", [q, k, v], attn384_step, "-s384")
    o, lse = (np.load(f"{out}/causal-attention-s384/cpu{i}.npy") for i in range(2))
    composite_case("causal_attention_backward",
                   [q, k, v, o, lse, rng.standard_normal(q.shape).astype(np.float32)],
                   attn384_step, "-s384")
    # The step with fused attention, against the CPU's f32.
    step_cases(attn_step, "-attn", [("bf16", "bf16", "bf16")])
os.remove(f"{out}/attn-step.mlir")
os.remove(f"{out}/attn128-step.mlir")
os.remove(f"{out}/attn384-step.mlir")

# --- Training on the GPU: the CPU trainer's run (same seed, weights and
# batches, exported by `train --export-gpu-run`) against the CUDA runtime's
# train loop, step by step. -------------------------------------------------
config = json.load(open(micro))
config.update({"name": "micro-train", "total_steps": 40, "warmup_steps": 4})
train_config = os.path.join(out, "train-micro.json")
json.dump(config, open(train_config, "w"))
corpus = os.path.join(out, "corpus.txt")
subprocess.run([sys.executable, os.path.join(os.path.dirname(micro), "make_corpus.py"),
                corpus], check=True)
attn_train = dict(attn, name="attn-train", total_steps=40, warmup_steps=4)
attn_train_config = os.path.join(out, "train-attn.json")
json.dump(attn_train, open(attn_train_config, "w"))
for recipe, gemm, config in wanted("train", [
        ("bf16", "f32", train_config), ("fp4-all-dht16", "f32", train_config),
        ("fp4-all-dht16", "bf16", train_config), ("bf16", "bf16", attn_train_config)]):
    label = "" if config == train_config else "-attn"
    case = os.path.join(out, f"train{label}-{recipe}-{gemm}")
    common = [f"--preset={config}", f"--recipe={recipe}", f"--data={corpus}",
              "--tokenizer=byte", "--seed=3"]
    subprocess.run([tool, "train"] + common + [f"--out={case}/cpu", "--eval-every=0"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run([tool, "train"] + common + [f"--export-gpu-run={case}/run"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([tool, "compile", f"--preset={config}", f"--recipe={recipe}",
                    "--target=sm_90a", f"--gemm-precision={gemm}", f"--out-dir={case}"],
                   check=True, stdout=subprocess.DEVNULL)
    for listing in ("kernels.mlir", "kernels.ptx"):
        os.remove(f"{case}/{listing}")
    tolerance = "curve" if gemm == "f32" and recipe == "bf16" else "curve-fp4"
    manifest.append(f"train{label}-{recipe}-{gemm} train 0 {tolerance}")

with open(f"{out}/cases.txt", "w") as f:
    f.write("\n".join(manifest) + "\n")
print(f"prepared {len(manifest)} cases in {out}")
