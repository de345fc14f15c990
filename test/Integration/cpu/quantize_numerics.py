# Bit-exact comparison of the compiled mxfp4.quantize with the NumPy reference
# for every scale rule and rounding, f32 and bf16, blocked along axis 0, 1 and
# inner axes, ragged leading dimensions and a large tensor; and of quantize
# fed by a rotation along its axis (lowered as one fused pass) against the
# reference rotation followed by the reference quantization.
# RUN: %PYTHON %s mxfp4-run %t

import sys

import numpy as np

import harness
import mx_reference as ref

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


ROTATED_SHAPES = [((4, 256), 1), ((256, 3), 0), ((2, 128, 3), 1)]
KINDS = ("deterministic", "random_fixed", "random_per_step")


def rotated_module(shape, axis, element):
    """hadamard (every size, kind, direction) then quantize, along `axis`."""
    t = harness.tensor_type(shape, element)
    sshape = list(shape)
    sshape[axis] //= 32
    v = harness.tensor_type(shape, "f4E2M1FN")
    s = harness.tensor_type(sshape, "f8E8M0FNU")
    body, results = [], []
    for size in (16, 32, 64, 128):
        for kind in KINDS:
            for inverse in (False, True):
                name = f"{size}_{kind}_{int(inverse)}"
                operands = {"deterministic": "",
                            "random_fixed": " kind = random_fixed seed(%seed)",
                            "random_per_step": " kind = random_per_step "
                                               "seed(%seed) step(%ctr)"}[kind]
                inv = "inverse " if inverse else ""
                rounding = ("rounding = stochastic seed(%seed) counter(%ctr)"
                            if kind == "random_per_step" else "")
                body.append(f"  %h{name} = mxfp4.hadamard {inv}%x axis = {axis} "
                            f"size = {size}{operands} : {t}")
                body.append(f"  %v{name}, %s{name} = mxfp4.quantize %h{name} "
                            f"axis = {axis} {rounding} : {t} -> {v}, {s}")
                results += [(f"%v{name}", v), (f"%s{name}", s)]
    ret_vals = ", ".join(r for r, _ in results)
    ret_types = ", ".join(ty for _, ty in results)
    return (f"func.func @hq(%x: {t}, %seed: i64, %ctr: i64) -> ({ret_types}) {{\n"
            + "\n".join(body) + f"\n  return {ret_vals} : {ret_types}\n}}\n")


def check_rotated(runner, check, rng):
    for shape, axis in ROTATED_SHAPES:
        for element in (harness.F32, harness.BF16):
            x = harness.mx_stress(shape, axis, rng)
            # Keep rotations finite: Inf - Inf inside a tile makes NaNs whose
            # sign the reference and the compiled code need not agree on.
            x[~np.isfinite(x)] = 0
            x = np.clip(x, -1e30, 1e30)
            arg = harness.as_array(x, element)
            bf16 = element == harness.BF16
            outs = runner.run(rotated_module(shape, axis, element), "hq",
                              [arg, SEED, COUNTER], 48)
            i = 0
            for size in (16, 32, 64, 128):
                for kind in KINDS:
                    for inverse in (False, True):
                        rand = kind != "deterministic"
                        h = ref.hadamard(arg, axis, size, kind=kind,
                                         seed=SEED if rand else None,
                                         step=COUNTER if kind == "random_per_step"
                                         else None, inverse=inverse, bf16=bf16)
                        sr = kind == "random_per_step"
                        codes, scales = ref.quantize(
                            h, axis, rounding="stochastic" if sr else
                            "nearest_even", seed=SEED if sr else None,
                            counter=COUNTER if sr else None, bf16=bf16)
                        label = (f"{shape} axis {axis} {element} H{size} {kind} "
                                 f"inverse={inverse} then quantize")
                        check.same_bits(label + " codes", outs[i], codes)
                        check.same_bits(label + " scales", outs[i + 1], scales)
                        i += 2


def neighbourhoods():
    """Blocks of amax 6 (scale 2^0 under every rule) whose other 31 values
    are every f32 within 2^12 ulps of each E2M1 grid point and tie, both
    signs, the subnormals near zero and the values just above 6."""
    points = np.array([0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0,
                       3.5, 4.0, 5.0, 6.0], np.float32)
    bits = points.view(np.int32)[:, None] + np.arange(-4096, 4097)[None, :]
    values = np.concatenate([bits.ravel().view(np.float32),
                             np.arange(0, 8192, dtype=np.int32).view(np.float32)])
    values = np.concatenate([values, -values])
    values = np.clip(values, -6.0, 6.0)  # keep the block's amax at 6
    pad = -len(values) % 31
    values = np.concatenate([values, np.zeros(pad, np.float32)]).reshape(-1, 31)
    return np.concatenate([np.full((len(values), 1), 6.0, np.float32), values],
                          axis=1)


def check_neighbourhoods(runner, check):
    x = neighbourhoods()
    outs = runner.run(module(x.shape, 1, harness.F32), "q",
                      [x, SEED, COUNTER], 16)
    for i, rule in enumerate(RULES):
        codes, scales = ref.quantize(x, 1, scale_rule=rule,
                                     rounding="nearest_even")
        label = f"grid and tie neighbourhoods {rule}"
        check.same_bits(label + " codes", outs[4 * i], codes)
        check.same_bits(label + " scales", outs[4 * i + 1], scales)


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
    check_rotated(runner, check, rng)
    check_neighbourhoods(runner, check)
    check.finish()


main()
