# Recipes executed on the CPU.
# 1. Rotations without quantization cancel: with every GEMM rotated (H16 or a
#    random H32) but kept in f32, every graph gives the original results to
#    f32 rounding.
# 2. With quantization on, the linear layer's three results under every
#    preset equal a reference built op by op from the NumPy semantics
#    (canonical transposes, rotation, quantize, scaled_matmul), bit for bit,
#    including the seeds the recipe derives for stochastic rounding and
#    random rotations.
# 3. Telemetry rows equal statistics computed from the reference
#    quantization of the same operands.
# RUN: %PYTHON %s mxfp4-run %S/Inputs %t

import os
import subprocess
import sys

import numpy as np

import mx_reference as ref

TOOL, INPUTS, WORK = sys.argv[1:4]
os.makedirs(WORK, exist_ok=True)
FAILURES = []
CHECKS = 0
STEP = 7


def run(graph, inputs, n_out, recipe=None, tag="base"):
    args = [TOOL, "exec", os.path.join(INPUTS, graph + ".mlir")]
    if recipe:
        args.append(f"--recipe={recipe}")
    for i, v in enumerate(inputs):
        if isinstance(v, np.ndarray):
            path = os.path.join(WORK, f"{graph}.{tag}.in{i}.npy")
            np.save(path, v)
            args.append(f"--input=@{path}")
        else:
            args.append(f"--input={v}")
    outs = [os.path.join(WORK, f"{graph}.{tag}.out{i}.npy") for i in range(n_out)]
    args += [f"--output=@{p}" for p in outs]
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)}\n{proc.stderr}")
    return [np.load(p) for p in outs]


def check(cond, what):
    global CHECKS
    CHECKS += 1
    if not cond:
        FAILURES.append(what)


rng = np.random.default_rng(4)
GRAPHS = {
    "linear_fwd_bwd": ([(64, 64), (32, 64), (64, 32)], 3),
    "mlp_block": ([(32, 64), (32, 64), (96, 64), (96, 64), (64, 96)], 5),
    "transformer_block": ([(32, 64), (32, 64), (64,), (64, 64), (64, 64),
                           (64, 64), (64, 64), (64,), (96, 64), (96, 64),
                           (64, 96)], 11),
}

# 1. Rotations alone cancel.
for graph, (shapes, n_out) in GRAPHS.items():
    inputs = [(rng.standard_normal(s) * 0.5).astype(np.float32) for s in shapes]
    inputs = [np.abs(a) + 0.5 if a.ndim == 1 else a for a in inputs] + [STEP]
    base = run(graph, inputs, n_out)
    for recipe in ("all.hadamard=deterministic,all.hadamard_size=16",
                   "all.hadamard=random_per_step,all.hadamard_size=32"):
        rotated = run(graph, inputs, n_out, recipe, tag="rot")
        for i, (a, b) in enumerate(zip(base, rotated)):
            err = float(np.max(np.abs(a.astype(np.float64) - b)))
            scale = float(np.max(np.abs(a))) or 1.0
            check(err <= 1e-5 * scale,
                  f"{graph} [{recipe}] result {i}: rotated differs by {err} "
                  f"(scale {scale})")
    print(f"rotations cancel: {graph}")


# 2. Quantized linear layer against the op-by-op reference.
def fnv1a(text, h=0xCBF29CE484222325):
    for c in text.encode():
        h ^= c
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


LAYER = "layers.0.mlp.up_proj"


def seed(what):
    return fnv1a(what, fnv1a(LAYER))


PRESETS = {  # role -> (fp4, hadamard kind, size, stochastic operands)
    "fp4-fprop": {"fprop": (True, None, 0, ())},
    "fp4-fprop-dgrad": {"fprop": (True, None, 0, ()),
                        "dgrad": (True, None, 0, ())},
    "fp4-all": {r: (True, None, 0, ()) for r in ("fprop", "dgrad", "wgrad")},
    "fp4-all-sr": {"fprop": (True, None, 0, ()),
                   "dgrad": (True, None, 0, ("lhs", "rhs")),
                   "wgrad": (True, None, 0, ("lhs", "rhs"))},
    "fp4-all-rht16": {r: (True, "random_per_step", 16, ())
                      for r in ("fprop", "dgrad", "wgrad")},
    "fp4-all-rht16-fixed": {r: (True, "random_fixed", 16, ())
                            for r in ("fprop", "dgrad", "wgrad")},
    "fp4-all-dht16": {r: (True, "deterministic", 16, ())
                      for r in ("fprop", "dgrad", "wgrad")},
    "fp4-all-dht32": {r: (True, "deterministic", 32, ())
                      for r in ("fprop", "dgrad", "wgrad")},
    "fp4-all-dht16-wgrad-only": {"fprop": (True, None, 0, ()),
                                 "dgrad": (True, None, 0, ()),
                                 "wgrad": (True, "deterministic", 16, ())},
}
MEANING = {("fprop", "lhs"): "input", ("fprop", "rhs"): "weight",
           ("dgrad", "lhs"): "grad_output", ("dgrad", "rhs"): "weight",
           ("wgrad", "lhs"): "grad_output", ("wgrad", "rhs"): "input"}

x = rng.standard_normal((64, 64)).astype(np.float32)
w = (rng.standard_normal((32, 64)) * 0.1).astype(np.float32)
dy = rng.standard_normal((64, 32)).astype(np.float32)
canonical = {"fprop": (x, w), "dgrad": (dy, np.ascontiguousarray(w.T)),
             "wgrad": (np.ascontiguousarray(dy.T), np.ascontiguousarray(x.T))}
exact = {"fprop": x @ w.T, "dgrad": dy @ w, "wgrad": dy.T @ x}

for preset, roles in PRESETS.items():
    got = run("linear_fwd_bwd", [x, w, dy, STEP], 3, preset, tag=preset)
    for i, role in enumerate(("fprop", "dgrad", "wgrad")):
        if role not in roles:
            err = np.max(np.abs(got[i] - exact[role]))
            check(err <= 1e-4 * np.max(np.abs(exact[role])),
                  f"{preset} {role}: high-precision GEMM off by {err}")
            continue
        _, kind, size, stochastic = roles[role]
        operands = []
        for side, value in zip(("lhs", "rhs"), canonical[role]):
            v = value
            if kind:
                v = ref.hadamard(v, 1, size, kind=kind,
                                 seed=seed(role + "/rotation")
                                 if kind != "deterministic" else None,
                                 step=STEP if kind == "random_per_step" else None)
            sr = side in stochastic
            operands += list(ref.quantize(
                v, 1, "even", "stochastic" if sr else "nearest_even",
                seed=seed(f"{role}/{MEANING[(role, side)]}"
                          + ("" if MEANING[(role, side)] == "weight" else "/0"))
                if sr else None,
                counter=STEP if sr else None))
        want = ref.scaled_matmul(*operands)
        same = np.array_equal(got[i].view(np.uint32), want.view(np.uint32))
        check(same, f"{preset} {role}: differs from the op-by-op reference "
                    f"(max |diff| {np.max(np.abs(got[i] - want))})")
    print(f"matches the reference: {preset}")


# 3. Telemetry against statistics of the reference quantization.
def stats(v):
    codes, scales = ref.quantize(v, 1)
    d = ref.dequantize(codes, scales, 1).astype(np.float64)
    top = ref.dequantize(np.full_like(codes, 7), scales, 1).astype(np.float64)
    v = v.astype(np.float64)
    ok = ~np.isnan(top)
    s = (np.asarray(top, np.float32).view(np.uint32) >> 23 & 0xFF).astype(np.int64) - 129
    return np.array([v.size, np.mean(ok & (np.abs(v) > top)),
                     np.mean(ok & (v != 0) & (d == 0)),
                     10 * np.log10(np.sum(v[ok] ** 2) / np.sum((v - d)[ok] ** 2)),
                     s[ok].min(), s[ok].max(), s[ok].mean(), np.mean(~ok)])


xo = x.copy()
xo[:, 3] *= 50  # an outlier channel
got = run("linear_fwd_bwd", [xo, w, dy, STEP], 4, "fp4-all,telemetry=true",
          tag="telemetry")[3]
canon = {"fprop": (xo, w), "dgrad": canonical["dgrad"],
         "wgrad": (np.ascontiguousarray(dy.T), np.ascontiguousarray(xo.T))}
row = 0
for role in ("fprop", "dgrad", "wgrad"):
    for v in canon[role]:
        want = stats(v)
        check(got.shape == (6, 8) and np.allclose(got[row], want, rtol=1e-5,
                                                  atol=1e-6),
              f"telemetry {role} operand {row % 2}: {got[row]} != {want}")
        row += 1
print("telemetry matches the reference statistics")

for f in FAILURES:
    print("FAIL", f)
print(f"recipe execution: {CHECKS} checks, {len(FAILURES)} failed")
sys.exit(1 if FAILURES else 0)
