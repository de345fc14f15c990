"""Runs mxfp4 functions on the CPU through `mxfp4-run exec` for the numerics
suites, and generates the inputs that stress the MX corner cases.

Generation is kept apart from checking: the suites build inputs here, run the
compiled code, and compare with `mx_reference` (which shares no code with the
compiler).
"""

import os
import subprocess
import sys

import numpy as np

import mx_reference as ref

# MLIR element type of each kind of array the suites exchange.
F32, BF16, I8 = "f32", "bf16", "i8"


def tensor_type(shape, element):
    dims = "x".join(str(d) for d in shape)
    return f"tensor<{dims}x{element}>" if dims else f"tensor<{element}>"


class Runner:
    """Compiles and runs one MLIR module per call with `mxfp4-run exec`."""

    def __init__(self, tool, workdir, extra_args=()):
        self.tool = tool
        self.workdir = workdir
        self.extra_args = list(extra_args)
        self.count = 0
        os.makedirs(workdir, exist_ok=True)

    def run(self, mlir, function, inputs, num_outputs):
        """Runs `function` of the module text `mlir` on `inputs` (NumPy arrays,
        or Python ints/floats for scalar arguments) and returns its results as
        NumPy arrays (bf16 as uint16, f4/e8m0 as uint8)."""
        self.count += 1
        stem = os.path.join(self.workdir, f"case{self.count}")
        with open(stem + ".mlir", "w") as f:
            f.write(mlir)
        args = [self.tool, "exec", stem + ".mlir", f"--function={function}"]
        args += self.extra_args
        for i, value in enumerate(inputs):
            if isinstance(value, np.ndarray):
                path = f"{stem}.in{i}.npy"
                np.save(path, value)
                args.append(f"--input=@{path}")
            else:
                args.append(f"--input={value}")
        outputs = [f"{stem}.out{i}.npy" for i in range(num_outputs)]
        args += [f"--output=@{p}" for p in outputs]
        proc = subprocess.run(args, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.stderr.write(mlir)
            raise RuntimeError(f"{' '.join(args)} failed:\n{proc.stderr}")
        return [np.load(p) for p in outputs]


class Checker:
    """Counts bit-exact comparisons and reports the first mismatches."""

    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failures = []

    def same_bits(self, label, got, want, any_nan=False, bf16=False):
        """Bit-exact comparison; with `any_nan`, every NaN equals every NaN
        (for results whose NaN sign and payload are unspecified). `bf16` says
        that uint16 arrays hold bf16 bit patterns."""
        got = np.ascontiguousarray(got)
        want = np.ascontiguousarray(want)
        if any_nan:
            got, want = _canonical_nan(got, bf16), _canonical_nan(want, bf16)
        if got.shape != want.shape:
            self.failures.append(f"{label}: shape {got.shape} != {want.shape}")
            return
        gb, wb = _bits(got), _bits(want)
        bad = np.nonzero(gb != wb)
        if bad[0].size == 0:
            self.passed += 1
            return
        first = tuple(int(i[0]) for i in bad)
        self.failures.append(
            f"{label}: {bad[0].size} of {gb.size} elements differ; first at "
            f"{first}: got {got[first]!r} (0x{int(gb[first]):x}), want "
            f"{want[first]!r} (0x{int(wb[first]):x})")

    def true(self, label, condition, detail=""):
        if condition:
            self.passed += 1
        else:
            self.failures.append(f"{label}: {detail}")

    def finish(self):
        for f in self.failures[:20]:
            print("FAIL", f)
        print(f"{self.name}: {self.passed} passed, {len(self.failures)} failed")
        sys.exit(1 if self.failures else 0)


def _canonical_nan(a, bf16):
    a = a.copy()
    if a.dtype == np.float32:
        a[np.isnan(a)] = np.float32(np.nan)
    elif bf16 and a.dtype == np.uint16:
        a[((a & 0x7F80) == 0x7F80) & ((a & 0x7F) != 0)] = 0x7FC0
    return a


def _bits(a):
    if a.dtype == np.float32:
        return a.view(np.uint32)
    if a.dtype == np.float64:
        return a.view(np.uint64)
    return a


def as_array(x, element):
    """`x` (float32) in the form the runner takes for `element`."""
    return ref.f32_to_bf16_rne(x) if element == BF16 else x.astype(np.float32)


def mx_stress(shape, axis, rng, special=True):
    """float32 data whose 32-element blocks along `axis` cover the MX corner
    cases: ordinary blocks at magnitudes from 2^-140 to 2^125, ties of the
    E2M1 grid at every scale rule, zero blocks, NaN and +-Inf blocks, blocks
    of FP32 subnormals, signed zeros and saturating values."""
    x = rng.standard_normal(shape).astype(np.float32)
    moved = np.moveaxis(x, axis, -1)
    blocks = moved.reshape(-1, moved.shape[-1] // 32, 32)
    nblocks = blocks.shape[0] * blocks.shape[1]
    flat = blocks.reshape(nblocks, 32)
    exps = rng.integers(-140, 126, size=nblocks)
    flat *= np.ldexp(np.float32(1), exps)[:, None].astype(np.float32)
    if special:
        kind = rng.integers(0, 12, size=nblocks)
        ties = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 4.0], np.float32)
        for b in np.nonzero(kind == 0)[0]:       # zero block with signed zeros
            flat[b] = np.where(rng.random(32) < 0.5, -0.0, 0.0)
        for b in np.nonzero(kind == 1)[0]:       # NaN somewhere
            flat[b, rng.integers(0, 32)] = np.nan
        for b in np.nonzero(kind == 2)[0]:       # +-Inf somewhere
            flat[b, rng.integers(0, 32)] = np.inf if rng.random() < 0.5 else -np.inf
        for b in np.nonzero(kind == 3)[0]:       # FP32 subnormals
            flat[b] = (rng.integers(-2**20, 2**20, 32).astype(np.float32)
                       * np.float32(2.0**-149))
        for b in np.nonzero(kind == 4)[0]:       # exact E2M1 ties at scale 2^k
            k = rng.integers(-20, 20)
            vals = rng.choice(ties, 32) * rng.choice([-1, 1], 32)
            flat[b] = np.ldexp(vals, k).astype(np.float32)
        for b in np.nonzero(kind == 5)[0]:       # amax near the EVEN boundary
            k = rng.integers(-20, 20)
            m = np.float32(1.75) if rng.random() < 0.5 else np.nextafter(
                np.float32(1.75), np.float32(0))
            flat[b] = np.ldexp(rng.uniform(-1, 1, 32), k).astype(np.float32)
            flat[b, rng.integers(0, 32)] = np.ldexp(m, k)
        for b in np.nonzero(kind == 6)[0]:       # values near the f32 maximum
            flat[b] = rng.uniform(-3.4e38, 3.4e38, 32).astype(np.float32)
        for b in np.nonzero(kind == 7)[0]:       # tiny values next to a big one
            flat[b] = np.float32(1e-30) * rng.standard_normal(32).astype(np.float32)
            flat[b, 0] = np.float32(7.9)
    out = flat.reshape(blocks.shape).reshape(moved.shape)
    return np.ascontiguousarray(np.moveaxis(out, -1, axis))
