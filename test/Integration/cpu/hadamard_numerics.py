# Bit-exact comparison of the compiled mxfp4.hadamard with the NumPy reference
# for every size, kind and direction, f32 and bf16, along each axis; plus the
# algebra: H * H^T = I to f32 rounding and forward-then-inverse round trips.
# RUN: %PYTHON %s mxfp4-run %t

import sys

import numpy as np

import harness
import mx_reference as ref

SIZES = (16, 32, 64, 128)
KINDS = ("deterministic", "random_fixed", "random_per_step")
SHAPES = [((4, 128), 1), ((256, 3), 0), ((2, 3, 256), 2), ((5, 128, 2), 1)]
SEED, STEP = -42, 1234567


def operands(kind):
    if kind == "deterministic":
        return ""
    if kind == "random_fixed":
        return " kind = random_fixed seed(%seed)"
    return " kind = random_per_step seed(%seed) step(%step)"


def module(shape, axis, element):
    t = harness.tensor_type(shape, element)
    body, results = [], []
    for size in SIZES:
        for kind in KINDS:
            for inverse in (False, True):
                name = f"%h{size}_{kind}_{int(inverse)}"
                inv = "inverse " if inverse else ""
                body.append(f"  {name} = mxfp4.hadamard {inv}%x axis = {axis} "
                            f"size = {size}{operands(kind)} : {t}")
                results.append(name)
    types = ", ".join([t] * len(results))
    return (f"func.func @h(%x: {t}, %seed: i64, %step: i64) -> ({types}) {{\n"
            + "\n".join(body)
            + f"\n  return {', '.join(results)} : {types}\n}}\n")


def roundtrip_module(n):
    t = harness.tensor_type((n, n), "f32")
    return f"""func.func @rt(%x: {t}, %seed: i64) -> ({t}, {t}, {t}) {{
  %h = mxfp4.hadamard %x axis = 1 size = {n} : {t}
  %hh = mxfp4.hadamard %h axis = 1 size = {n} : {t}
  %r = mxfp4.hadamard %x axis = 1 size = {n} kind = random_fixed seed(%seed) : {t}
  %ri = mxfp4.hadamard inverse %r axis = 1 size = {n} kind = random_fixed seed(%seed) : {t}
  return %h, %hh, %ri : {t}, {t}, {t}
}}
"""


def main():
    tool, workdir = sys.argv[1], sys.argv[2]
    runner = harness.Runner(tool, workdir)
    check = harness.Checker("hadamard")
    rng = np.random.default_rng(11)
    for shape, axis in SHAPES:
        for element in (harness.F32, harness.BF16):
            x = rng.standard_normal(shape).astype(np.float32) * np.float32(3)
            x.flat[::97] = np.float32(-0.0)
            arg = harness.as_array(x, element)
            outs = runner.run(module(shape, axis, element), "h",
                              [arg, SEED, STEP], len(SIZES) * len(KINDS) * 2)
            i = 0
            for size in SIZES:
                for kind in KINDS:
                    for inverse in (False, True):
                        want = ref.hadamard(
                            arg, axis, size, kind=kind,
                            seed=None if kind == "deterministic" else SEED,
                            step=STEP if kind == "random_per_step" else None,
                            inverse=inverse, bf16=element == harness.BF16)
                        check.same_bits(f"{shape} axis {axis} {element} H{size} "
                                        f"{kind} inverse={inverse}", outs[i], want)
                        i += 1
    # Algebra: rows of the identity give H/sqrt(n); applying H twice gives the
    # identity to f32 rounding; a random rotation and its inverse round-trip.
    for n in SIZES:
        eye = np.eye(n, dtype=np.float32)
        h, hh, ri = runner.run(roundtrip_module(n), "rt", [eye, 99], 3)
        signs = np.array([[(-1) ** bin(i & j).count("1") for j in range(n)]
                          for i in range(n)], dtype=np.float64)
        check.true(f"H{n} rows", np.allclose(h, signs / np.sqrt(n),
                                             rtol=0, atol=2**-24),
                   "identity rows are not H/sqrt(n)")
        check.true(f"H{n} H^T = I", np.abs(h.astype(np.float64) @ h.T - np.eye(n)).max()
                   <= n * 2**-24, "H H^T differs from I")
        check.true(f"H{n} twice", np.abs(hh - eye).max() <= 4 * 2**-24,
                   f"max error {np.abs(hh - eye).max()}")
        check.true(f"H{n} random round trip", np.abs(ri - eye).max() <= 4 * 2**-24,
                   f"max error {np.abs(ri - eye).max()}")
    check.finish()


main()
