# mxfp4.scaled_matmul against the reference: bit-identical to the documented
# accumulation order (f32 and bf16 results, with and without an accumulator,
# NaN scales), bit-identical to the exact product rounded once where the order
# cannot matter (one K block), and within the documented bound of the exact
# float64 result everywhere.
# Both CPU kernels: the portable reference loops and, where the host has
# AVX512_BF16, the vdpbf16ps micro-kernel (its fast path on moderate scales and
# its exact path on wide or NaN scales).
# RUN: %PYTHON %s mxfp4-run %t.ref reference
# RUN: %if avx512bf16 %{ %PYTHON %s mxfp4-run %t.bf16 avx512-bf16 %}

import sys

import numpy as np

import harness
import mx_reference as ref

SHAPES = [(1, 1, 32), (16, 8, 64), (7, 13, 96), (64, 48, 256), (33, 17, 1024),
          (128, 64, 32)]


def module(m, n, k):
    a = harness.tensor_type((m, k), "f4E2M1FN")
    sa = harness.tensor_type((m, k // 32), "f8E8M0FNU")
    b = harness.tensor_type((n, k), "f4E2M1FN")
    sb = harness.tensor_type((n, k // 32), "f8E8M0FNU")
    f = harness.tensor_type((m, n), "f32")
    h = harness.tensor_type((m, n), "bf16")
    ops = f"{a}, {sa}, {b}, {sb}"
    return f"""func.func @mm(%a: {a}, %sa: {sa}, %b: {b}, %sb: {sb}, %acc: {f}, %hacc: {h}) -> ({f}, {f}, {h}, {h}) {{
  %c = mxfp4.scaled_matmul %a scale %sa, %b scale %sb : {ops} -> {f}
  %d = mxfp4.scaled_matmul %a scale %sa, %b scale %sb acc(%acc) : {ops} -> {f}
  %e = mxfp4.scaled_matmul %a scale %sa, %b scale %sb : {ops} -> {h}
  %g = mxfp4.scaled_matmul %a scale %sa, %b scale %sb acc(%hacc) : {ops} -> {h}
  return %c, %d, %e, %g : {f}, {f}, {h}, {h}
}}
"""


def main():
    tool, workdir, kernel = sys.argv[1:4]
    runner = harness.Runner(tool, workdir, [f"--cpu-matmul={kernel}"])
    check = harness.Checker(f"scaled_matmul ({kernel})")
    rng = np.random.default_rng(5)
    for m, n, k in SHAPES:
        for variant in ("moderate", "wide", "nan"):
            a = rng.integers(0, 16, (m, k)).astype(np.uint8)
            b = rng.integers(0, 16, (n, k)).astype(np.uint8)
            lo, hi = (117, 138) if variant == "moderate" else (0, 255)
            sa = rng.integers(lo, hi, (m, k // 32)).astype(np.uint8)
            sb = rng.integers(lo, hi, (n, k // 32)).astype(np.uint8)
            if variant == "nan":
                sa.flat[::5] = 255
            acc = rng.standard_normal((m, n)).astype(np.float32)
            hacc = ref.f32_to_bf16_rne(acc)
            c, d, e, g = runner.run(module(m, n, k), "mm",
                                    [a, sa, b, sb, acc, hacc], 4)
            label = f"{m}x{n}x{k} {variant}"
            # Inf - Inf makes NaNs whose sign depends on the host's default
            # NaN (NumPy's own SIMD loops are not consistent about it), and
            # docs/Semantics.md leaves a NaN result's sign unspecified.
            check.same_bits(label + " f32", c, ref.scaled_matmul(a, sa, b, sb),
                            any_nan=True)
            check.same_bits(label + " f32 acc", d,
                            ref.scaled_matmul(a, sa, b, sb, acc=acc),
                            any_nan=True)
            check.same_bits(label + " bf16", e,
                            ref.scaled_matmul(a, sa, b, sb, out="bf16"),
                            any_nan=True, bf16=True)
            check.same_bits(label + " bf16 acc", g,
                            ref.scaled_matmul(a, sa, b, sb, acc=hacc, out="bf16",
                                              acc_bf16=True),
                            any_nan=True, bf16=True)
            if variant == "moderate":
                exact = ref.scaled_matmul_exact(a, sa, b, sb)
                tol = ref.scaled_matmul_tolerance(a, sa, b, sb)
                err = np.abs(c.astype(np.float64) - exact)
                check.true(label + " bound", bool(np.all(err <= tol)),
                           f"max error {err.max()} above bound")
                if k == 32:
                    check.same_bits(label + " rounded once", c,
                                    exact.astype(np.float32))
    check.finish()


main()
