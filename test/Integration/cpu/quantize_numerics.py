# Bit-exact comparison of the compiled mxfp4.quantize with the NumPy reference
# for every scale rule and rounding, f32 and bf16, blocked along axis 0, 1 and
# inner axes, ragged leading dimensions and a large tensor.
# RUN: %PYTHON %s mxfp4-run %t

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import harness  # noqa: E402
import mx_reference as ref  # noqa: E402

RULES = ("floor", "even", "ceil", "rceil")
SHAPES = [  # (shape, axis)
    ((32,), 0),
    ((4, 64), 1),
    ((64, 3), 0),
    ((3, 5, 64), 2),
    ((2, 96, 3), 1),
    ((7, 32), 1),
    ((1000, 32), 1),
    ((96, 17), 0),
    ((512, 1024), 1),
]
SEED, COUNTER = 0x0123456789ABCDEF, 7


def module(shape, axis, element):
    """One function quantizing its input under all rules and roundings."""
    t = harness.tensor_type(shape, element)
    sshape = list(shape)
    sshape[axis] //= 32
    v = harness.tensor_type(shape, "f4E2M1FN")
    s = harness.tensor_type(sshape, "f8E8M0FNU")
    body, results = [], []
    for rule in RULES:
        for rounding in ("nearest_even", "stochastic"):
            name = f"{rule}_{rounding}"
            rng = " seed(%seed) counter(%ctr)" if rounding == "stochastic" else ""
            body.append(
                f"  %v_{name}, %s_{name} = mxfp4.quantize %x axis = {axis} "
                f"scale_rule = {rule} rounding = {rounding}{rng} : {t} -> {v}, {s}")
            results += [(f"%v_{name}", v), (f"%s_{name}", s)]
    ret_vals = ", ".join(r for r, _ in results)
    ret_types = ", ".join(ty for _, ty in results)
    return (f"func.func @q(%x: {t}, %seed: i64, %ctr: i64) -> ({ret_types}) {{\n"
            + "\n".join(body) + f"\n  return {ret_vals} : {ret_types}\n}}\n")


def main():
    tool, workdir = sys.argv[1], sys.argv[2]
    runner = harness.Runner(tool, workdir)
    check = harness.Checker("quantize")
    rng = np.random.default_rng(2026)
    for shape, axis in SHAPES:
        for element in (harness.F32, harness.BF16):
            x = harness.mx_stress(shape, axis, rng)
            arg = harness.as_array(x, element)
            bf16 = element == harness.BF16
            outs = runner.run(module(shape, axis, element), "q",
                              [arg, SEED, COUNTER], 16)
            i = 0
            for rule in RULES:
                for rounding in ("nearest_even", "stochastic"):
                    codes, scales = ref.quantize(
                        arg, axis, scale_rule=rule, rounding=rounding,
                        seed=SEED if rounding == "stochastic" else None,
                        counter=COUNTER if rounding == "stochastic" else None,
                        bf16=bf16)
                    label = f"{shape} axis {axis} {element} {rule} {rounding}"
                    check.same_bits(label + " codes", outs[i], codes)
                    check.same_bits(label + " scales", outs[i + 1], scales)
                    i += 2
    check.finish()


main()
