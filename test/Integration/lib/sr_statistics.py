"""Statistics of stochastic rounding through the quantize kernels that the
training step runs (docs/Semantics.md §2.4 and §5).

`Suite(profile)` makes one program of the quantize groups the Llama step's
kernels are made of, each a source quantized row-wise (blocks along its rows:
Fprop's operand) and/or transposed (blocks along its columns: the Dgrad and
Wgrad operands), the two jobs of one GPU kernel:

- swiglu: silu(a) * b of bf16 inputs (a GEMM's bf16 results), computed inside
  the quantize kernel; the row job nearest_even, the column job stochastic
  (X of the down projection: Fprop, then Wgrad with SR);
- norm: x * r[row] * g[col] (an RMSNorm's output) computed inside the kernel,
  row job nearest_even, column job stochastic, on a shape whose regions form
  bands of four (sm_90a gathers the outputs in shared memory);
- weight: a weight argument, row job nearest_even (Fprop), column job
  stochastic (Dgrad), on a shape that is not a multiple of the 32 x 64 region;
- grad: dy * b * silu'(a) (SwiGLU's gate gradient) computed inside the kernel,
  both jobs stochastic with their own seeds (Dgrad and Wgrad of the gate
  projection), the column job first in the program;
- rotated: the column job alone behind a deterministic 16-point Hadamard
  (Wgrad under fp4-all-dht16 with SR).

Seeds are 64-bit constants as the recipe passes derive them; the counter is
the function's last argument. The program is run for counters 0 .. N/2-1 and
2^32 .. 2^32 + N/2 - 1 (pairs 2^32 apart: the counter's high word must
matter) and once more for the first counter. `check` then tests, from the
decoded values (dequantize: the codes times 2^scale) and the quantized tensor
computed here independently from the inputs (the producer in float64, or bit
for bit where it is exact), for every job:

- every value is one of the two grid neighbours of its element (scale from
  the even rule on the block's amax), saturating to 6 from 6 on;
- unbiased: the mean signed error over all elements and counters, and over
  each grid interval, within 5 standard errors; the number of elements whose
  own mean deviates by |z| > 4 within what exact binomials with each
  element's probability allow; the dispersion of the elements' z (sum of
  z^2 - 1 over well-conditioned elements) within 5 of its standard deviations;
- independent: correlations of the standardized rounding residuals
  u = (up - p) / sqrt(p (1 - p)) between elements 1, 2, 3, 4 and 32 apart in a
  row, between adjacent rows, between adjacent rows' sums, between
  consecutive counters, between counters 2^32 apart, and between the two
  stochastic jobs of one source element, each |r| < 5 / sqrt(n) for its n
  pairs; the largest correlation between any two rows, any two columns and
  any two counters below the bound that many independent ones exceed with
  probability 1e-6 (duplicated random words anywhere: a kernel indexing its
  draws by its region's rows, say); the number of roundings that change
  between counters 2j and 2j+1 within 5 standard deviations of its
  expectation; the same counter gives the same bits;
- nearest_even jobs: the same bits for every counter, the nearest grid value
  (ties to even).

Thresholds follow from the sample sizes (5 standard deviations, about 6e-7
per test under the null): nothing is tuned to the data. Planted defects in
the random words (the counter or its high word ignored, one word a block,
the same words in every block, a biased threshold) and in the GPU kernel
(column jobs indexing their draws within a region) each fail several checks.

`run_target` runs the suite with `mxfp4-run exec`: on the CPU the same
program in an scf.for over the counters (@sr_steps: one JIT compile, not
one a counter), elsewhere @sr once a counter; a non-CPU target's bits are
also compared with the CPU's.

Command line (the sm_90a check on the GPU machine, scripts/gpu/compare.py):
  python3 sr_statistics.py CASE_DIR PREFIX
reads CASE_DIR/sr.json, in<i>.npy and PREFIX-<k>-<i>.npy (counter k of
counters.txt, result i) and exits 1 if a check fails.
"""

import concurrent.futures
import json
import math
import os
import subprocess
import sys

import numpy as np

import mx_reference as ref

GRID = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
# Bounds in standard deviations.
Z = 5.0
Z_ELEMENT = 4.0
# Elements whose probability is this well conditioned enter the dispersion
# test (p(1-p) >= 0.05) and the correlations (p(1-p) >= 0.01: |u| <= 10).
PQ_DISPERSION = 0.05
PQ_CORRELATION = 0.01
# The tests of all pairs of rows, columns or counters take the maximum of
# many correlations (elements with p(1-p) >= 0.05: |u| <= 4.4, close to
# normal sums) against a Bonferroni bound: at most ALPHA to exceed.
PQ_PAIRS = 0.05
ALPHA = 1e-6
# A producer computed with its own exp (libm, libdevice, the emulator's) is
# not bit-exact here: its elements may differ by a few ulps. Elements within
# MARGIN (in units of the block scale) of a grid point or midpoint and
# blocks whose amax lies within MARGIN relative of the even rule's boundary
# are left out; p is known to within about 1e-5, which EPSILON adds to the
# variance of an element's own mean.
MARGIN = 1e-4
EPSILON = 1e-5

PROFILES = {
    # CI (CPU, gfx950 emulator): 64 counters, small shapes.
    "ci": dict(counters=64, swiglu=(160, 96), norm=(256, 192),
               weight=(96, 224), grad=(192, 128), rotated=(64, 96)),
    # sm_90a: 256 counters, shapes of several bands and region columns.
    "gpu": dict(counters=256, swiglu=(544, 352), norm=(512, 384),
                weight=(352, 480), grad=(384, 256), rotated=(192, 128)),
}

SEEDS = {
    "swiglu.t": 0x78540DE0A5700B3F,
    "norm.t": 0xD17E4F0B6C2A9135,
    "weight.t": 0x3C6EF372FE94F82B,
    "grad.r": 0xA54FF53A5F1D36F1,
    "grad.t": 0x510E527FADE682D1,
    "rotated.t": 0x9B05688C2B3E6C1F,
}


def tensor(shape, element):
    return f"tensor<{'x'.join(str(d) for d in shape)}x{element}>"


def signed64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


class Job:
    def __init__(self, group, orient, stochastic, hadamard=0):
        self.group, self.orient = group, orient
        self.stochastic, self.hadamard = stochastic, hadamard
        self.name = f"{group.name}.{orient}"
        self.seed = SEEDS[self.name] if stochastic else None


class Group:
    """A source [rows, cols] (an input, or a producer of the inputs) and its
    quantize jobs. `body` is the producer's linalg.generic body (its block
    arguments are %<name>_a<i>), `reference` its value in float64 from the
    inputs, `exact` whether that is bit for bit the f32 the kernel rounds."""

    def __init__(self, name, shape, inputs, jobs, body=None, reference=None,
                 exact=True):
        self.name, self.shape, self.inputs = name, shape, inputs
        self.body, self.reference, self.exact = body, reference, exact
        self.jobs = [Job(self, *j) for j in jobs]


def _normal(scale=1.0, outlier=None):
    """A generator of N(0, scale^2) f32 inputs; `outlier` = (axis, index):
    that column (axis 1) or row (axis 0) 30 times larger, as activations'
    channels and gradients' tokens are."""
    def make(rng, shape):
        x = (scale * rng.standard_normal(shape)).astype(np.float32)
        if outlier:
            axis, index = outlier
            x[(slice(None),) * axis + (index,)] *= 30
        return x
    return make


def _bf16(make):
    return lambda rng, shape: ref.f32_to_bf16_rne(make(rng, shape))


def _f64(a):
    return (ref.bf16_to_f32(a) if a.dtype == np.uint16 else a).astype(np.float64)


def _swiglu(a, b):
    a = _f64(a)
    return a / (1.0 + np.exp(-a)) * _f64(b)


def _swiglu_gate_grad(a, b, dy):
    a, b, dy = (_f64(v) for v in (a, b, dy))
    sig = 1.0 / (1.0 + np.exp(-a))
    return dy * b * (sig * (1.0 + a * (1.0 - sig)))


def groups(profile):
    p = PROFILES[profile]
    full = "affine_map<(d0, d1) -> (d0, d1)>"
    per_row = "affine_map<(d0, d1) -> (d0)>"
    per_col = "affine_map<(d0, d1) -> (d1)>"
    swiglu, norm, weight = p["swiglu"], p["norm"], p["weight"]
    grad, rotated = p["grad"], p["rotated"]
    uniform = lambda rng, shape: rng.uniform(0.5, 2.0, shape).astype(np.float32)
    gain = lambda rng, shape: (1 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
    return [
        Group("swiglu", swiglu,
              [("a", swiglu, "bf16", full, _bf16(_normal(2.0))),
               ("b", swiglu, "bf16", full, _bf16(_normal()))],
              [("r", False), ("t", True)],
              body=["%swiglu_af = arith.extf %swiglu_a0 : bf16 to f32",
                    "%swiglu_bf = arith.extf %swiglu_a1 : bf16 to f32",
                    "%swiglu_one = arith.constant 1.0 : f32",
                    "%swiglu_n = arith.negf %swiglu_af : f32",
                    "%swiglu_e = math.exp %swiglu_n : f32",
                    "%swiglu_d = arith.addf %swiglu_e, %swiglu_one : f32",
                    "%swiglu_s = arith.divf %swiglu_af, %swiglu_d : f32",
                    "%swiglu_y = arith.mulf %swiglu_s, %swiglu_bf : f32"],
              reference=_swiglu, exact=False),
        Group("norm", norm,
              [("x", norm, "f32", full, _normal(outlier=(1, 3))),
               ("rms", norm[:1], "f32", per_row, uniform),
               ("gain", norm[1:], "f32", per_col, gain)],
              [("r", False), ("t", True)],
              body=["%norm_t = arith.mulf %norm_a0, %norm_a1 : f32",
                    "%norm_y = arith.mulf %norm_t, %norm_a2 : f32"],
              # Two f32 products: the kernels' bits.
              reference=lambda x, rms, g: ((x * rms[:, None]) * g[None, :]).astype(np.float64)),
        Group("weight", weight,
              [("w", weight, "f32", full, _normal(0.05))],
              [("r", False), ("t", True)],
              reference=_f64),
        Group("grad", grad,
              [("a", grad, "f32", full, _normal(2.0)),
               ("b", grad, "f32", full, _normal()),
               ("dy", grad, "f32", full, _normal(1e-3, outlier=(0, 5)))],
              [("t", True), ("r", True)],
              body=["%grad_one = arith.constant 1.0 : f32",
                    "%grad_n = arith.negf %grad_a0 : f32",
                    "%grad_e = math.exp %grad_n : f32",
                    "%grad_d = arith.addf %grad_e, %grad_one : f32",
                    "%grad_sig = arith.divf %grad_one, %grad_d : f32",
                    "%grad_q = arith.subf %grad_one, %grad_sig : f32",
                    "%grad_aq = arith.mulf %grad_a0, %grad_q : f32",
                    "%grad_p = arith.addf %grad_one, %grad_aq : f32",
                    "%grad_ds = arith.mulf %grad_sig, %grad_p : f32",
                    "%grad_db = arith.mulf %grad_a2, %grad_a1 : f32",
                    "%grad_y = arith.mulf %grad_db, %grad_ds : f32"],
              reference=_swiglu_gate_grad, exact=False),
        Group("rotated", rotated,
              [("x", rotated, "f32", full, _normal(outlier=(0, 1)))],
              [("t", True, 16)],
              reference=_f64),
    ]


class Suite:
    """The program of `profile`, its inputs and its jobs in result order."""

    def __init__(self, profile, seed=2024):
        self.profile = profile
        self.groups = groups(profile)
        rng = np.random.default_rng(seed)
        self.inputs = []
        for g in self.groups:
            g.arrays = [gen(rng, shape) for _, shape, _, _, gen in g.inputs]
            self.inputs.extend(g.arrays)
        self.jobs = [j for g in self.groups for j in g.jobs]
        n = PROFILES[profile]["counters"]
        self.counters = list(range(n // 2)) + [(1 << 32) + k for k in range(n // 2)]
        self.mlir = self.program()

    def program(self, steps=0):
        """@sr(inputs..., %counter), or with `steps` @sr_steps(inputs...,
        %base): the same for counters base .. base + steps - 1 in an scf.for,
        each result stacked [steps, rows, cols] (one compile for every
        counter: the CPU's JIT takes seconds, a run milliseconds)."""
        args, lines, results = [], [], []
        for g in self.groups:
            for i, (name, shape, element, _, _) in enumerate(g.inputs):
                args.append(f"%{g.name}_{name}: {tensor(shape, element)}")
        args.append("%base: i64" if steps else "%counter: i64")
        head = []
        for j in self.jobs:
            if j.stochastic:
                head.append(f"%seed_{j.group.name}_{j.orient} = arith.constant "
                            f"{signed64(j.seed)} : i64")
        for g in self.groups:
            rows, cols = g.shape
            st = tensor(g.shape, "f32")
            src = f"%{g.name}_{g.inputs[0][0]}"
            if g.body:
                ins = ", ".join(f"%{g.name}_{name}" for name, *_ in g.inputs)
                types = ", ".join(tensor(s, e) for _, s, e, _, _ in g.inputs)
                maps = ", ".join([m for *_, m, _ in g.inputs] +
                                 ["affine_map<(d0, d1) -> (d0, d1)>"])
                bargs = ", ".join(f"%{g.name}_a{i}: {e}" for i, (_, _, e, _, _) in enumerate(g.inputs))
                lines.append(f"%{g.name}_init = tensor.empty() : {st}")
                lines.append(
                    f"%{g.name}_src = linalg.generic {{indexing_maps = [{maps}], "
                    f"iterator_types = [\"parallel\", \"parallel\"]}} ins({ins} : {types}) "
                    f"outs(%{g.name}_init : {st}) {{")
                lines.append(f"^bb0({bargs}, %{g.name}_out: f32):")
                lines.extend("  " + b for b in g.body)
                lines.append(f"  linalg.yield %{g.name}_y : f32")
                lines.append(f"}} -> {st}")
                src = f"%{g.name}_src"
            for j in g.jobs:
                shape = (rows, cols) if j.orient == "r" else (cols, rows)
                t = tensor(shape, "f32")
                v = tensor(shape, "f4E2M1FN")
                s = tensor((shape[0], shape[1] // 32), "f8E8M0FNU")
                name = f"{g.name}_{j.orient}"
                operand = src
                if j.orient == "t":
                    lines.append(f"%{name}_e = tensor.empty() : {t}")
                    lines.append(f"%{name}_x = linalg.transpose ins({src} : {st}) "
                                 f"outs(%{name}_e : {t}) permutation = [1, 0]")
                    operand = f"%{name}_x"
                if j.hadamard:
                    lines.append(f"%{name}_h = mxfp4.hadamard {operand} axis = 1 size = "
                                 f"{j.hadamard} kind = deterministic : {t}")
                    operand = f"%{name}_h"
                rounding = (f" rounding = stochastic seed(%seed_{name}) counter(%counter)"
                            if j.stochastic else "")
                lines.append(f"%{name}_v, %{name}_s = mxfp4.quantize {operand} axis = 1"
                             f"{rounding} : {t} -> {v}, {s}")
                lines.append(f"%{name}_d = mxfp4.dequantize %{name}_v scale %{name}_s "
                             f"axis = 1 : {v}, {s} -> {t}")
                results.append((f"%{name}_d", t, shape))
        if not steps:
            types = ", ".join(t for _, t, _ in results)
            return (f"func.func @sr({', '.join(args)}) -> ({types}) {{\n"
                    + "".join(f"  {l}\n" for l in head + lines)
                    + f"  return {', '.join(n for n, _, _ in results)} : {types}\n}}\n")
        stacked = [tensor((steps,) + shape, "f32") for _, _, shape in results]
        types = ", ".join(stacked)
        body = [f"%k64 = arith.index_cast %k : index to i64",
                f"%counter = arith.addi %base, %k64 : i64"] + lines
        for i, ((name, t, shape), st) in enumerate(zip(results, stacked)):
            body.append(f"%next{i} = tensor.insert_slice {name} into %acc{i}[%k, 0, 0] "
                        f"[1, {shape[0]}, {shape[1]}] [1, 1, 1] : {t} into {st}")
        body.append(f"scf.yield {', '.join(f'%next{i}' for i in range(len(results)))} : {types}")
        head += ["%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index",
                 f"%steps = arith.constant {steps} : index"]
        head += [f"%empty{i} = tensor.empty() : {st}" for i, st in enumerate(stacked)]
        accs = ", ".join(f"%acc{i} = %empty{i}" for i in range(len(results)))
        head.append(f"%all:{len(results)} = scf.for %k = %c0 to %steps step %c1 "
                    f"iter_args({accs}) -> ({types}) {{")
        tail = ["}", f"return {', '.join(f'%all#{i}' for i in range(len(results)))} : {types}"]
        return (f"func.func @sr_steps({', '.join(args)}) -> ({types}) {{\n"
                + "".join(f"  {l}\n" for l in head)
                + "".join(f"    {l}\n" for l in body)
                + "".join(f"  {l}\n" for l in tail) + "}\n")

    def source(self, job, arrays):
        """The tensor `job` rounds, in its orientation, as float64."""
        g = job.group
        x = g.reference(*arrays)
        if job.orient == "t":
            x = np.ascontiguousarray(x.T)
        if job.hadamard:
            x = ref.hadamard(x.astype(np.float32), 1, job.hadamard).astype(np.float64)
        return x

    def arrays_of(self, inputs):
        out, i = {}, 0
        for g in self.groups:
            out[g.name] = inputs[i:i + len(g.inputs)]
            i += len(g.inputs)
        return out


# --- The statistics. --------------------------------------------------------
class Report:
    def __init__(self, out=print):
        self.out, self.checks, self.failed = out, 0, 0

    def verdict(self, ok, label, detail):
        self.checks += 1
        self.failed += not ok
        self.out(f"{'ok  ' if ok else 'FAIL'} {label}: {detail}")


class Rounding:
    """What rounding `x` (float64 [rows, cols], blocks along axis 1) must
    give: the block scales of the even rule, each element's neighbours, its
    probability of rounding up, and which elements are left out."""

    def __init__(self, x, exact):
        rows, cols = x.shape
        xb = x.reshape(rows, cols // 32, 32)
        amax = np.abs(xb).max(axis=2)
        bits = amax.astype(np.float32).view(np.uint32).astype(np.int64)
        s = np.clip((((bits + 0x200000) & 0x7F800000) >> 23) - 127 - 2, -127, 127)
        scale = np.ldexp(1.0, s)[:, :, None]
        a = np.abs(xb) / scale
        k = np.searchsorted(GRID, a, side="right") - 1
        sat = k >= 7
        kk = np.minimum(k, 6)
        lo = np.where(sat, 6.0, GRID[kk])
        hi = np.where(sat, 6.0, GRID[kk + 1])
        gap = hi - lo
        p = np.where(sat, 0.0, (a - lo) / np.where(gap > 0, gap, 1.0))
        sign = np.where(np.signbit(xb), -1.0, 1.0)
        excluded = np.zeros(xb.shape, bool)
        if not exact:
            # The even rule's boundary: amax mantissa 1.75.
            mant = amax / np.ldexp(1.0, np.floor(np.log2(np.where(amax > 0, amax, 1.0))).astype(int))
            excluded |= (np.abs(mant - 1.75) < MARGIN)[:, :, None]
            near = np.min(np.abs(a[..., None] - GRID), axis=-1) < MARGIN
            mids = (GRID[1:] + GRID[:-1]) / 2
            near |= np.min(np.abs(a[..., None] - mids), axis=-1) < MARGIN
            excluded |= near
        flat = lambda v: np.broadcast_to(v, xb.shape).reshape(rows, cols)
        self.lo, self.hi = flat(sign * lo * scale), flat(sign * hi * scale)
        self.gap = flat(gap)              # in units of the block scale
        self.interval = flat(np.where(sat, 7, kk))
        self.p = flat(p)
        self.excluded = flat(excluded)
        # Nearest, ties to the even code (an even index into GRID).
        tie = p == 0.5
        up = (p > 0.5) | (tie & (kk % 2 == 1))
        self.nearest = flat(np.where(sat | ~up, sign * lo * scale, sign * hi * scale))
        self.exact = exact


def _tail(p, n, t):
    """P(|C - n p| > t) for C ~ Binomial(n, p), elementwise (0 < p < 1)."""
    lf = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, n + 1)))])
    c = np.arange(n + 1)
    out = np.empty(p.size)
    for i in range(0, p.size, 4096):
        pp, tt = p[i:i + 4096, None], t[i:i + 4096, None]
        logpmf = lf[n] - lf[c] - lf[n - c] + c * np.log(pp) + (n - c) * np.log1p(-pp)
        out[i:i + 4096] = np.where(np.abs(c - n * pp) > tt, np.exp(logpmf), 0.0).sum(1)
    return out


def _correlation(report, label, products, counts):
    """One verdict on the mean of products of standardized residuals."""
    n = float(counts)
    r = float(products) / n if n else 0.0
    bound = Z / np.sqrt(n) if n else 0.0
    report.verdict(n > 0 and abs(r) < bound, label,
                   f"r = {r:+.5f}, |r| < 5/sqrt(n) = {bound:.5f} (n = {int(n)})")


def _bonferroni(pairs, alpha=ALPHA):
    """The |z| that one of `pairs` standard normals exceeds with probability
    at most `alpha`."""
    lo, hi = 0.0, 40.0
    for _ in range(100):
        t = (lo + hi) / 2
        lo, hi = (t, hi) if pairs * math.erfc(t / math.sqrt(2)) > alpha else (lo, t)
    return hi


def _all_pairs(report, label, u, mask, what, names=None):
    """The largest correlation between any two of the m slices u[i] (u: [m,
    L] residuals, 0 where `mask` is not), against the bound that m(m-1)/2
    standard normals exceed with probability ALPHA: duplicated random words
    anywhere along that axis."""
    m = u.shape[0]
    g = u @ u.T
    counts = mask @ mask.T
    iu = np.triu_indices(m, 1)
    n = counts[iu]
    z = np.where(n > 0, g[iu] / np.sqrt(np.maximum(n, 1)), 0.0)
    worst = int(np.argmax(np.abs(z)))
    bound = _bonferroni(len(z))
    name = (lambda i: names[i]) if names else (lambda i: i)
    report.verdict(abs(z[worst]) < bound, label,
                   f"largest of {len(z)} correlations between two {what} is "
                   f"r = {z[worst] / np.sqrt(max(n[worst], 1)):+.4f} ({what} {name(iu[0][worst])} and "
                   f"{name(iu[1][worst])}, {z[worst]:+.2f} standard deviations; bound {bound:.2f})")


def check_stochastic(report, name, want, d, repeat):
    """The checks of one stochastic job: d[k] is its result for counter k
    (counters 0..N/2-1, then 2^32 + 0..N/2-1), `repeat` the first counter's
    again. Returns (u, mask) for a cross-job check."""
    n = d.shape[0]
    half = n // 2
    finite = np.isfinite(d).all()
    up = d == want.hi
    down = d == want.lo
    use = ~want.excluded
    bad = ~(up | down) & use
    report.verdict(finite and not bad.any(), f"{name} support",
                   f"{int(bad.sum())} of {bad.size} values are not one of the "
                   f"element's two grid neighbours (block scale from its amax)"
                   f"{'' if want.exact else f'; {int(want.excluded.sum())} elements near a grid point or scale boundary left out'}")
    p = want.p
    rand = use & (p > 0) & (p < 1)
    b = (up & (want.hi != want.lo)).astype(np.float64)
    q = 1 - p
    pq = p * q
    # (a) unbiased.
    gap = want.gap
    err = (gap * (b - p))[:, rand].sum()
    var = n * (gap[rand] ** 2 * pq[rand]).sum()
    z = err / np.sqrt(var)
    mean = err / (n * rand.sum())
    report.verdict(abs(z) < Z, f"{name} mean signed error",
                   f"{mean:+.2e} block-scale units over {rand.sum()} elements x {n} "
                   f"counters, {z:+.2f} standard errors (|z| < {Z:g})")
    zs = []
    for k in range(7):
        m = rand & (want.interval == k)
        if m.sum() == 0:
            continue
        zs.append((f"[{GRID[k]:g},{GRID[k + 1]:g})",
                   (b - p)[:, m].sum() / np.sqrt(n * pq[m].sum())))
    report.verdict(all(abs(v) < Z for _, v in zs), f"{name} mean error per grid interval",
                   ", ".join(f"{k} {v:+.1f}" for k, v in zs) + f" standard errors (|z| < {Z:g})")
    eps = 0.0 if want.exact else EPSILON
    count = b.sum(axis=0)
    pr = p[rand]
    spread = np.sqrt(n * (pr * (1 - pr) + eps))
    ze = (count[rand] - n * pr) / spread
    flagged = int((np.abs(ze) > Z_ELEMENT).sum())
    lam = float(_tail(pr, n, Z_ELEMENT * spread).sum())
    limit = lam + Z * np.sqrt(lam) + Z
    report.verdict(flagged <= limit, f"{name} per-element means",
                   f"{flagged} of {pr.size} elements with |z| > {Z_ELEMENT:g} "
                   f"({flagged / pr.size:.2e}; binomials expect {lam:.1f}, at most {limit:.1f})")
    well = rand & (pq >= PQ_DISPERSION)
    zw = (count[well] - n * p[well]) / np.sqrt(n * pq[well])
    t = (zw ** 2 - 1).sum() / np.sqrt((2 - 6 / n + 1 / (n * pq[well])).sum())
    report.verdict(abs(t) < Z, f"{name} dispersion of the element means",
                   f"mean z^2 over {well.sum()} elements {(zw ** 2).mean():.4f} "
                   f"(1 expected), {t:+.2f} standard deviations (|t| < {Z:g})")
    # (b) independent.
    mask = rand & (pq >= PQ_CORRELATION)
    u = np.where(mask, (b - p) / np.sqrt(np.where(mask, pq, 1.0)), 0.0)
    results = []
    for lag in (1, 2, 3, 4, 32):
        mm = mask[:, :-lag] & mask[:, lag:]
        results.append((lag, (u[:, :, :-lag] * u[:, :, lag:]).sum(), n * mm.sum()))
    bounds = [(lag, s / c, Z / np.sqrt(c)) for lag, s, c in results]
    report.verdict(all(abs(r) < bd for _, r, bd in bounds),
                   f"{name} correlation along rows",
                   "; ".join(f"lag {lag}: r = {r:+.5f} (bound {bd:.5f})" for lag, r, bd in bounds))
    mm = mask[:-1] & mask[1:]
    _correlation(report, f"{name} correlation between adjacent rows",
                 (u[:, :-1] * u[:, 1:]).sum(), n * mm.sum())
    per_row = mask.sum(axis=1)
    rows = per_row > 0
    sums = u.sum(axis=2)[:, rows] / np.sqrt(per_row[rows])
    _correlation(report, f"{name} correlation of adjacent rows' sums",
                 (sums[:, :-1] * sums[:, 1:]).sum(), n * (rows.sum() - 1))
    steps = (u[:half - 1] * u[1:half]).sum() + (u[half:-1] * u[half + 1:]).sum()
    _correlation(report, f"{name} correlation between consecutive counters",
                 steps, (n - 2) * mask.sum())
    _correlation(report, f"{name} correlation between counters 2^32 apart",
                 (u[:half] * u[half:]).sum(), half * mask.sum())
    # Any two rows (same column), columns (same row) or counters (same
    # element) drawing the same words.
    well = rand & (pq >= PQ_PAIRS)
    w = np.where(well, u, 0.0)
    wm = np.broadcast_to(well, u.shape).astype(np.float64)
    rows_of = lambda a: np.moveaxis(a, 1, 0).reshape(a.shape[1], -1)
    cols_of = lambda a: np.moveaxis(a, 2, 0).reshape(a.shape[2], -1)
    _all_pairs(report, f"{name} pairs of rows", rows_of(w), rows_of(wm), "rows")
    _all_pairs(report, f"{name} pairs of columns", cols_of(w), cols_of(wm), "columns")
    _all_pairs(report, f"{name} pairs of counters", w.reshape(n, -1), wm.reshape(n, -1),
               "counters", [k if k < half else f"2^32+{k - half}" for k in range(n)])
    changes = (b[0::2, rand] != b[1::2, rand]).sum()
    qc = 2 * pq[rand]
    expected = (n // 2) * qc.sum()
    sd = np.sqrt((n // 2) * (qc * (1 - qc)).sum())
    zc = (changes - expected) / sd
    report.verdict(abs(zc) < Z, f"{name} draws change with the counter",
                   f"{changes} changes between counters 2j and 2j+1, {expected:.0f} "
                   f"expected, {zc:+.2f} standard deviations (|z| < {Z:g})")
    if repeat is not None:
        same = repeat.tobytes() == d[0].tobytes()
        report.verdict(same, f"{name} reproducible", "the first counter again gives "
                       + ("the same bits" if same else "other bits"))
    return u, mask


def check_nearest(report, name, want, d, repeat):
    same = all(d[k].tobytes() == d[0].tobytes() for k in range(1, d.shape[0]))
    if repeat is not None:
        same = same and repeat.tobytes() == d[0].tobytes()
    report.verdict(same, f"{name} (nearest_even) the same for every counter",
                   f"{d.shape[0] + (repeat is not None)} results")
    use = ~want.excluded
    bad = (d[0] != want.nearest) & use
    report.verdict(not bad.any(), f"{name} (nearest_even) nearest values",
                   f"{int(bad.sum())} of {int(use.sum())} differ from round to nearest, "
                   f"ties to even")


def check(suite, inputs, results, repeat=None, out=print):
    """`results[k][i]`: result i (job i) for suite.counters[k]; `repeat[i]`:
    the first counter's results again. Returns the Report."""
    report = Report(out)
    arrays = suite.arrays_of(inputs)
    residuals = {}
    for i, job in enumerate(suite.jobs):
        x = suite.source(job, arrays[job.group.name])
        want = Rounding(x, job.group.exact)
        d = np.stack([r[i] for r in results]).astype(np.float64)
        rep = None if repeat is None else repeat[i].astype(np.float64)
        label = f"{job.name}{' h16' if job.hadamard else ''}"
        if job.stochastic:
            residuals[job.name] = check_stochastic(report, label, want, d, rep)
        else:
            check_nearest(report, label, want, d, rep)
    for g in suite.groups:
        r, t = residuals.get(f"{g.name}.r"), residuals.get(f"{g.name}.t")
        if r is None or t is None:
            continue
        ut, mt = np.swapaxes(t[0], 1, 2), t[1].T
        m = r[1] & mt
        _correlation(report, f"{g.name} correlation between its row and column jobs",
                     (r[0] * ut).sum(), r[0].shape[0] * m.sum())
    out(f"sr statistics: {report.checks} checks, {report.failed} failed")
    return report


def compare_bits(report, suite, results, reference, counters):
    """Results of `counters` from two targets (lists of result lists): bit
    for bit where the source is exact, else all but a few elements (a
    producer's exp may differ by an ulp, which moves a rounding rarely)."""
    for i, job in enumerate(suite.jobs):
        differ = sum(int((a[i].view(np.uint32) != b[i].view(np.uint32)).sum())
                     for a, b in zip(results, reference))
        total = sum(a[i].size for a in results)
        limit = 0 if job.group.exact else 1e-3 * total
        report.verdict(differ <= limit, f"{job.name} against the CPU",
                       f"{differ} of {total} values of {counters} differ ("
                       + ("bit-exact required)" if job.group.exact else
                          "at most 0.1% allowed: the producer's exp is the target's)"))


# --- Running it. --------------------------------------------------------------
def run_target(tool, workdir, target, profile="ci"):
    """Runs the suite with `mxfp4-run exec --target=TARGET` and checks it:
    on the CPU @sr_steps for each half of the counters (one compile each)
    and @sr for the first counter again; elsewhere @sr for every counter
    and the first again. Returns the Report."""
    suite = Suite(profile)
    os.makedirs(workdir, exist_ok=True)
    half = len(suite.counters) // 2
    modules = {"sr": suite.mlir, "sr_steps": suite.program(steps=half)}
    for function, text in modules.items():
        with open(os.path.join(workdir, f"{function}.mlir"), "w") as f:
            f.write(text)
    args = []
    for i, a in enumerate(suite.inputs):
        np.save(os.path.join(workdir, f"in{i}.npy"), a)
        args.append(f"--input=@{workdir}/in{i}.npy")
    if target == "cpu":
        calls = [("sr_steps", 0), ("sr_steps", suite.counters[half]), ("sr", suite.counters[0])]
    else:
        calls = [("sr", c) for c in suite.counters + [suite.counters[0]]]
        # The CPU's bits for the first half of the counters.
        calls.append(("sr_steps", 0, "cpu"))

    def call(k):
        function, counter, where = (calls[k] + (target,))[:3]
        stem = os.path.join(workdir, f"out{k}")
        outs = [f"{stem}-{i}.npy" for i in range(len(suite.jobs))]
        cmd = [tool, "exec", os.path.join(workdir, f"{function}.mlir"),
               f"--function={function}", f"--target={where}"] + args
        cmd += [f"--input={counter}"] + [f"--output=@{o}" for o in outs]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stderr}")
        got = [np.load(o) for o in outs]
        for o in outs:
            os.remove(o)
        # One result list per counter.
        return [list(r) for r in zip(*got)] if function == "sr_steps" else [got]

    workers = max(1, min(4, os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        results = [r for rs in pool.map(call, range(len(calls))) for r in rs]
    print(f"{target}: {len(suite.jobs)} jobs, counters 0..{half - 1} and "
          f"2^32 + 0..{half - 1}, {len(calls)} calls")
    cpu = None
    if target != "cpu":
        results, cpu = results[:-half], results[-half:]
    report = check(suite, suite.inputs, results[:-1], results[-1])
    if cpu:
        compare_bits(report, suite, results[:half], cpu, f"counters 0..{half - 1}")
        print(f"against the CPU: {report.failed} of {report.checks} checks failed in all")
    return report


def check_dir(case, prefix):
    """Checks the results a run left in CASE (sr.json, in<i>.npy,
    counters.txt, PREFIX-<k>-<i>.npy for call k of counters.txt), and
    compares them bit for bit with the CPU's cpu-<k>-<i>.npy where sr.json
    lists k. Returns the number of failures."""
    meta = json.load(open(os.path.join(case, "sr.json")))
    suite = Suite(meta["profile"])
    inputs = [np.load(os.path.join(case, f"in{i}.npy")) for i in range(len(suite.inputs))]
    counters = [int(l) for l in open(os.path.join(case, "counters.txt")) if l.strip()]
    if counters != suite.counters + [suite.counters[0]]:
        sys.exit(f"{case}/counters.txt is not the suite's")
    load = lambda tag, k: [np.load(os.path.join(case, f"{tag}-{k}-{i}.npy"))
                           for i in range(len(suite.jobs))]
    results = [load(prefix, k) for k in range(len(counters))]
    print(f"{prefix}: {len(suite.jobs)} jobs, {len(counters)} calls")
    report = check(suite, inputs, results[:-1], results[-1])
    cpu = meta.get("cpu", [])
    if cpu:
        compare_bits(report, suite, [results[k] for k in cpu], [load("cpu", k) for k in cpu],
                     f"counters {', '.join(str(counters[k]) for k in cpu)}")
        print(f"against the CPU: {report.failed} of {report.checks} checks failed in all")
    return report.failed


if __name__ == "__main__":
    sys.exit(1 if check_dir(sys.argv[1], sys.argv[2]) else 0)
