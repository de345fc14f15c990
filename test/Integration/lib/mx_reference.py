"""Independent NumPy reference of the `mxfp4` dialect's semantics.

This module follows docs/Semantics.md literally (section numbers below refer to
it). It shares no code with the compiler: every function is written from the
text of the contract, with the bit manipulations spelled out, so that it can be
used as the oracle of the integration tests.

Conventions
-----------
* f32 tensors are ``numpy.float32`` arrays.
* bf16 tensors are ``numpy.uint16`` arrays holding the bf16 bit patterns
  (flag ``bf16=True`` on input, ``out='bf16'`` on output).
* E2M1 codes travel one per ``uint8`` (0..15, sign in bit 3); E8M0 scales as
  ``uint8`` bytes (§2.5, tool boundary).
* Seeds, counters and steps are Python ints read as i64 (two's complement), so
  ``-1`` and ``0xFFFFFFFFFFFFFFFF`` are the same value.

Importing the module has no side effects. ``python3 mx_reference.py`` runs a
small self-test (the Random123 known-answer vectors of Philox4x32-10 and a few
consistency checks).
"""

import numpy as np

__all__ = [
    "BLOCK_SIZE",
    "E2M1_VALUES",
    "SCALE_RULES",
    "bf16_to_f32",
    "dequantize",
    "e2m1_decode",
    "e8m0_decode",
    "f32_to_bf16_rne",
    "hadamard",
    "hadamard_signs",
    "philox4x32_10",
    "quantize",
    "scaled_matmul",
    "scaled_matmul_exact",
    "scaled_matmul_tolerance",
    "stochastic_words",
]

BLOCK_SIZE = 32
SCALE_RULES = ("floor", "even", "ceil", "rceil")

_U32 = np.uint32
_U64 = np.uint64
_MASK32 = _U64(0xFFFFFFFF)
_SHIFT32 = _U64(32)

# §1.1: code c = s*8 + e*2 + m.  e = 0 -> 0.5*m; e >= 1 -> 2^(e-1)*(1 + m/2).
def _e2m1_table():
    vals = []
    for c in range(16):
        s, e, m = c >> 3, (c >> 1) & 3, c & 1
        mag = 0.5 * m if e == 0 else 2.0 ** (e - 1) * (1.0 + m / 2.0)
        vals.append(-mag if s else mag)
    return np.array(vals, dtype=np.float32)  # -0.0 for code 0x8


E2M1_VALUES = _e2m1_table()
E2M1_VALUES.setflags(write=False)
_E2M1_F64 = E2M1_VALUES.astype(np.float64)


# ---------------------------------------------------------------------------
# bit helpers
# ---------------------------------------------------------------------------

def _as_f32(x, bf16=False):
    """Return a float32 array; bf16 (uint16 bit patterns) is extended exactly."""
    if bf16:
        x = np.asarray(x)
        if x.dtype != np.uint16:
            raise TypeError("bf16=True expects uint16 bit patterns, got %s" % x.dtype)
        return bf16_to_f32(x)
    x = np.asarray(x)
    if x.dtype != np.float32:
        raise TypeError("expected a float32 array (or uint16 with bf16=True), got %s"
                        % x.dtype)
    return x


def bf16_to_f32(u16):
    """bf16 bit patterns (uint16) -> float32, exact (shift left by 16)."""
    u16 = np.asarray(u16)
    if u16.dtype != np.uint16:
        raise TypeError("expected uint16 bf16 bit patterns, got %s" % u16.dtype)
    return (u16.astype(_U32) << _U32(16)).view(np.float32)


def bf16_round(x):
    """x rounded to bf16 (ties to even), as float64: the value a bf16 operand
    holds."""
    return bf16_to_f32(f32_to_bf16_rne(np.asarray(x, np.float32))).astype(
        np.float64)


def f32_to_bf16_rne(x):
    """float32 -> bf16 bit patterns (uint16), IEEE round to nearest, ties to even.

    Overflow rounds to +-Inf as RNE says. A NaN keeps its sign and the top bits
    of its payload and is made quiet (bit 6 of the bf16 pattern set), so a NaN
    can never turn into an infinity.
    """
    x = np.asarray(x, dtype=np.float32)
    u = x.view(_U32)
    is_nan = (u & _U32(0x7FFFFFFF)) > _U32(0x7F800000)
    # For non-NaN u the sum stays below 2^32 (max 0xFF7FFFFF + 0x8000).
    lsb = (u >> _U32(16)) & _U32(1)
    rounded = ((u + _U32(0x7FFF) + lsb) >> _U32(16)).astype(np.uint16)
    nan = ((u >> _U32(16)) | _U32(0x0040)).astype(np.uint16)
    return np.where(is_nan, nan, rounded)


def _pow2_f32(k):
    """2^k as float32 for integer k in [-126, 127] (normal range), via the bits."""
    k = np.asarray(k, dtype=np.int64)
    if np.any((k < -126) | (k > 127)):
        raise ValueError("2^k outside the normal f32 range")
    return ((k + 127).astype(_U32) << _U32(23)).view(np.float32)


def _i64_lo_hi(v):
    """(lo, hi) 32-bit halves of a Python int read as i64 (two's complement)."""
    v = int(v)
    if not (-(1 << 63) <= v < (1 << 64)):
        raise ValueError("value %d does not fit in 64 bits" % v)
    v &= (1 << 64) - 1
    return v & 0xFFFFFFFF, v >> 32


# ---------------------------------------------------------------------------
# §1 element and scale types
# ---------------------------------------------------------------------------

def e2m1_decode(codes):
    """E2M1 codes (uint8, 0..15, sign in bit 3) -> float32 values (§1.1)."""
    codes = np.asarray(codes)
    if codes.dtype.kind not in "ui":
        raise TypeError("codes must be integers")
    if codes.size and (codes.min() < 0 or codes.max() > 15):
        raise ValueError("E2M1 codes must lie in 0..15")
    return E2M1_VALUES[codes.astype(np.intp)]


def e8m0_decode(scales):
    """E8M0 bytes -> float32 2^(S-127) (§1.2); 0x00 -> 2^-127 (0x00400000),
    0xFF -> quiet NaN 0x7FC00000."""
    s = np.asarray(scales)
    if s.dtype != np.uint8:
        raise TypeError("E8M0 scales must be uint8")
    s32 = s.astype(_U32)
    bits = np.where(s32 == 0, _U32(0x00400000), s32 << _U32(23))
    bits = np.where(s32 == 0xFF, _U32(0x7FC00000), bits)
    return bits.astype(_U32).view(np.float32)


# ---------------------------------------------------------------------------
# §5 Philox4x32-10
# ---------------------------------------------------------------------------

PHILOX_M0 = 0xD2511F53
PHILOX_M1 = 0xCD9E8D57
PHILOX_W0 = 0x9E3779B9
PHILOX_W1 = 0xBB67AE85


def philox4x32_10(c0, c1, c2, c3, k0, k1):
    """Philox4x32 with 10 rounds (§5), vectorized over broadcastable inputs.

    c0..c3 is the counter, (k0, k1) the key; each may be a Python int or an
    integer array (values are taken modulo 2^32). Returns the four output
    words (w0, w1, w2, w3) as uint32 arrays of the broadcast shape.

    One round: (hi(M1*c2) ^ c1 ^ k0, lo(M1*c2), hi(M0*c0) ^ c3 ^ k1, lo(M0*c0));
    the key is bumped by (W0, W1) between rounds (mod 2^32).
    """
    def u32(v):
        if isinstance(v, (int, np.integer)):
            return _U32(int(v) & 0xFFFFFFFF)
        a = np.asarray(v)
        if a.dtype.kind not in "ui":
            raise TypeError("Philox inputs must be integers")
        return (a.astype(np.int64) & 0xFFFFFFFF).astype(_U32) if a.dtype.kind == "i" \
            else (a & 0xFFFFFFFF).astype(_U32)

    c0, c1, c2, c3, k0, k1 = (u32(v) for v in (c0, c1, c2, c3, k0, k1))
    shape = np.broadcast_shapes(*(np.shape(v) for v in (c0, c1, c2, c3, k0, k1)))
    c0, c1, c2, c3 = (np.broadcast_to(v, shape) for v in (c0, c1, c2, c3))
    # keys stay small (scalars or key-shaped arrays); bump them in uint64
    k0 = np.asarray(k0, dtype=_U64)
    k1 = np.asarray(k1, dtype=_U64)
    m0, m1 = _U64(PHILOX_M0), _U64(PHILOX_M1)
    for r in range(10):
        if r:
            k0 = (k0 + _U64(PHILOX_W0)) & _MASK32
            k1 = (k1 + _U64(PHILOX_W1)) & _MASK32
        p0 = np.multiply(c0, m0, dtype=_U64)   # < 2^64: exact in uint64
        p1 = np.multiply(c2, m1, dtype=_U64)
        n0 = (p1 >> _SHIFT32).astype(_U32)
        n0 ^= c1
        n0 ^= k0.astype(_U32)
        n2 = (p0 >> _SHIFT32).astype(_U32)
        n2 ^= c3
        n2 ^= k1.astype(_U32)
        c1 = p1.astype(_U32)                  # lo(M1*c2), truncation mod 2^32
        c3 = p0.astype(_U32)                  # lo(M0*c0)
        c0, c2 = n0, n2
    return tuple(np.array(v, dtype=_U32) for v in (c0, c1, c2, c3))


def stochastic_words(n, seed, counter):
    """Random words r_i, i = 0..n-1, for stochastic rounding (§5):
    word w_(i mod 4) of Philox at counter (lo(i/4), hi(i/4), lo(counter),
    hi(counter)) with key (lo(seed), hi(seed)). Returns uint32 [n]."""
    k0, k1 = _i64_lo_hi(seed)
    c2, c3 = _i64_lo_hi(counter)
    nq = (n + 3) // 4
    q = np.arange(nq, dtype=_U64)
    lo = q & _MASK32
    hi = q >> _SHIFT32
    w = philox4x32_10(lo, hi, c2, c3, k0, k1)
    # interleave: element 4*q + j takes w_j of counter q
    return np.stack(w, axis=-1).reshape(-1)[:n]


# ---------------------------------------------------------------------------
# §2 quantize
# ---------------------------------------------------------------------------

def _scale_exponent(A, rule):
    """Unbiased scale exponent s (int64, before the clamp) from amax bits A (§2.2)."""
    A = A.astype(np.int64)
    e = (A >> 23) & 0xFF
    m = A & 0x7FFFFF
    u = e - 127
    if rule == "floor":
        return u - 2
    if rule == "even":
        return (((A + 0x200000) & 0x7F800000) >> 23) - 127 - 2
    if rule == "ceil":
        return u - 2 + (m != 0)
    if rule == "rceil":
        return u - 2 + (m > 0x400000)
    raise ValueError("unknown scale rule %r (expected one of %s)" % (rule, SCALE_RULES))


# Grid of E2M1 magnitudes, index = code & 7.
_GRID = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], dtype=np.float32)
# hi - lo for lo = _GRID[k], k = 0..6 (powers of two).
_STEP = np.array([0.5, 0.5, 0.5, 0.5, 1.0, 1.0, 2.0], dtype=np.float32)


def _round_rne(aa):
    """Magnitude code (0..7) of |a| under round-to-nearest-even with saturation
    (the table of §2.4). aa is a float32 array of |a|."""
    q = (aa > np.float32(0.25)).astype(np.uint8)   # (0.25, 0.75)  -> 0.5
    q += aa >= np.float32(0.75)                      # [0.75, 1.25]  -> 1
    q += aa > np.float32(1.25)                       # (1.25, 1.75)  -> 1.5
    q += aa >= np.float32(1.75)                      # [1.75, 2.5]   -> 2
    q += aa > np.float32(2.5)                        # (2.5, 3.5)    -> 3
    q += aa >= np.float32(3.5)                       # [3.5, 5]      -> 4
    q += aa > np.float32(5.0)                        # (5, inf)      -> 6
    return q


def _round_stochastic(aa, r):
    """Magnitude code of |a| under stochastic rounding (§2.4) with words r."""
    # index of lo: largest grid point <= aa (7 means aa >= 6: saturate)
    k = (aa >= np.float32(0.5)).astype(np.uint8)
    for g in (1.0, 1.5, 2.0, 3.0, 4.0, 6.0):
        k += aa >= np.float32(g)
    sat = k == 7
    kk = np.where(sat, 0, k).astype(np.intp)
    lo = _GRID[kk]
    frac = (aa - lo) / _STEP[kk]                     # exact in f32
    # v = (2*(r >> 9) + 1) * 2^-24, exact in f32 (at most 24 significant bits)
    v = ((r >> _U32(9)).astype(np.float32) * np.float32(2.0) + np.float32(1.0)) \
        * np.float32(2.0 ** -24)
    up = frac > v
    q = k + up.astype(np.uint8)
    return np.where(sat, np.uint8(7), q).astype(np.uint8)


def quantize(x, axis, scale_rule="even", rounding="nearest_even", seed=None,
             counter=None, block_size=32, bf16=False):
    """mxfp4.quantize (§2).

    x: float32 array, or uint16 bf16 bit patterns with bf16=True.
    axis: the blocked axis (its size must be a multiple of 32).
    scale_rule: 'floor' | 'even' (default) | 'ceil' | 'rceil'.
    rounding: 'nearest_even' | 'stochastic' (needs seed; counter defaults to 0).
    Returns (codes uint8 of x's shape, scales uint8 with x.shape[axis] / 32).
    """
    if block_size != BLOCK_SIZE:
        raise ValueError("block_size must be 32 (the only MX block size)")
    if scale_rule not in SCALE_RULES:
        raise ValueError("unknown scale rule %r" % (scale_rule,))
    if rounding not in ("nearest_even", "stochastic"):
        raise ValueError("unknown rounding %r" % (rounding,))
    if rounding == "stochastic":
        if seed is None:
            raise ValueError("stochastic rounding needs a seed")
        if counter is None:
            counter = 0
    x = _as_f32(x, bf16)
    if x.ndim == 0:
        raise ValueError("quantize needs at least one dimension")
    axis = axis % x.ndim
    if x.shape[axis] % BLOCK_SIZE:
        raise ValueError("axis %d has size %d, not a multiple of 32" % (axis, x.shape[axis]))

    xm = np.moveaxis(x, axis, -1)
    moved_shape = xm.shape
    nb = moved_shape[-1] // BLOCK_SIZE
    xb = np.ascontiguousarray(xm).reshape(moved_shape[:-1] + (nb, BLOCK_SIZE))
    bits = xb.view(_U32)
    absbits = bits & _U32(0x7FFFFFFF)
    sign = (bits >> _U32(31)).astype(np.uint8)

    # §2.1: a block with a NaN or an infinity
    special = np.any(absbits >= _U32(0x7F800000), axis=-1)
    # §2.2: amax exactly; for finite values the order of |x| is the order of the bits
    A = absbits.max(axis=-1)
    s = _scale_exponent(A, scale_rule)
    s = np.clip(s, -127, 127)
    s = np.where(special, 0, s)          # placeholder, overwritten below
    S = (s + 127).astype(np.uint8)
    S[special] = 0xFF

    # §2.3: a = x * 2^(-s) in f32 (2^(-s) normal for s in [-127, 126])
    with np.errstate(invalid="ignore", under="ignore"):   # NaN blocks are overwritten
        a = xb * _pow2_f32(-s)[..., None]
    aa = np.abs(a)

    # §2.4
    if rounding == "nearest_even":
        q = _round_rne(aa)
    else:
        r = stochastic_words(x.size, seed, counter).reshape(x.shape)
        r = np.ascontiguousarray(np.moveaxis(r, axis, -1)).reshape(xb.shape)
        q = _round_stochastic(aa, r)
    codes = q | (sign << np.uint8(3))
    codes[special] = 0

    codes = np.moveaxis(codes.reshape(moved_shape), -1, axis)
    scales = np.moveaxis(S, -1, axis)
    return np.ascontiguousarray(codes), np.ascontiguousarray(scales)


# ---------------------------------------------------------------------------
# §3 dequantize
# ---------------------------------------------------------------------------

def _expand_scales(scales, axis, n):
    scales = np.asarray(scales)
    if scales.shape[axis] * BLOCK_SIZE != n:
        raise ValueError("scales do not match the codes along axis %d" % axis)
    return np.repeat(scales, BLOCK_SIZE, axis=axis)


def dequantize(codes, scales, axis, out="f32"):
    """mxfp4.dequantize (§3): value(code) * 2^(S-127), exact, rounded to the result.

    out='f32' returns float32; out='bf16' returns uint16 bf16 bit patterns.
    A block with S = 0xFF gives the quiet NaN 0x7FC00000 / 0x7FC0.
    """
    codes = np.asarray(codes)
    scales = np.asarray(scales)
    if scales.dtype != np.uint8:
        raise TypeError("scales must be uint8 E8M0 bytes")
    if codes.ndim == 0 or codes.ndim != scales.ndim:
        raise ValueError("codes and scales must have the same rank")
    axis = axis % codes.ndim
    S = _expand_scales(scales, axis, codes.shape[axis]).astype(np.int64)
    v = e2m1_decode(codes).astype(np.float64)
    # exact in f64 (|v * 2^k| <= 6 * 2^127, >= 2^-128); one RNE rounding to f32
    with np.errstate(over="ignore"):
        exact = np.ldexp(v, (S - 127).astype(np.int32))
        f = exact.astype(np.float32)
    nan = S == 0xFF
    f = np.where(nan, np.uint32(0x7FC00000).view(np.float32), f).astype(np.float32)
    if out == "f32":
        return f
    if out == "bf16":
        # every finite value is exact in f32 and in bf16, so rounding through
        # f32 is a single rounding of the exact value (overflow already +-Inf)
        b = f32_to_bf16_rne(f)
        return np.where(nan, np.uint16(0x7FC0), b).astype(np.uint16)
    raise ValueError("out must be 'f32' or 'bf16'")


# ---------------------------------------------------------------------------
# §4 hadamard
# ---------------------------------------------------------------------------

_HADAMARD_C = {
    16: np.float32(0.25),
    32: np.array([0x3E3504F3], dtype=_U32).view(np.float32)[0],
    64: np.float32(0.125),
    128: np.array([0x3DB504F3], dtype=_U32).view(np.float32)[0],
}


def hadamard_signs(size, kind="deterministic", seed=None, step=None):
    """Sign vector d_j (float32 +-1, length size) of §4/§5.

    kind: 'deterministic' (all +1), 'random_fixed' (t = 0) or
    'random_per_step' (t = step). d_j = -1 iff bit j mod 32 of word w_(j/32)
    of Philox at counter (0xFFFFFFFF, 0xFFFFFFFF, lo(t), hi(t)),
    key (lo(seed), hi(seed))."""
    if size not in _HADAMARD_C:
        raise ValueError("hadamard size must be 16, 32, 64 or 128")
    if kind == "deterministic":
        return np.ones(size, dtype=np.float32)
    if kind == "random_fixed":
        t = 0
    elif kind == "random_per_step":
        if step is None:
            raise ValueError("random_per_step needs a step")
        t = step
    else:
        raise ValueError("unknown hadamard kind %r" % (kind,))
    if seed is None:
        raise ValueError("random hadamard kinds need a seed")
    k0, k1 = _i64_lo_hi(seed)
    t0, t1 = _i64_lo_hi(t)
    w = np.array([int(v) for v in philox4x32_10(0xFFFFFFFF, 0xFFFFFFFF, t0, t1, k0, k1)],
                 dtype=np.uint64)
    j = np.arange(size)
    bit = (w[j // 32] >> (j % 32).astype(np.uint64)) & np.uint64(1)
    return np.where(bit == 1, np.float32(-1.0), np.float32(1.0)).astype(np.float32)


def _negate_where(t, neg):
    """Exact d_j * t_j: flip the sign bit where neg (also for NaN, no arithmetic)."""
    flip = np.where(neg, _U32(0x80000000), _U32(0)).astype(_U32)
    return (t.view(_U32) ^ flip).view(np.float32)


def _fwht_f32(t):
    """In-place-order FWHT over the last axis (length n), f32 adds with RNE,
    stages h = 1, 2, 4, ..., n/2 in that order (§4 step 2)."""
    n = t.shape[-1]
    lead = t.shape[:-1]
    h = 1
    while h < n:
        v = t.reshape(lead + (n // (2 * h), 2, h))
        lo = v[..., 0, :]     # indices i with i & h == 0
        hi = v[..., 1, :]     # indices i + h
        s = lo + hi           # float32 + float32 -> float32
        d = lo - hi
        t = np.stack((s, d), axis=-2).reshape(lead + (n,))
        h *= 2
    return t


def hadamard(x, axis, size, kind="deterministic", seed=None, step=None,
             inverse=False, bf16=False):
    """mxfp4.hadamard (§4) on tiles of `size` consecutive elements along axis.

    x: float32, or uint16 bf16 bit patterns with bf16=True (then the result is
    uint16 bf16, RNE from the f32 result)."""
    xf = _as_f32(x, bf16)
    if xf.ndim == 0:
        raise ValueError("hadamard needs at least one dimension")
    n = int(size)
    if n not in _HADAMARD_C:
        raise ValueError("hadamard size must be 16, 32, 64 or 128")
    axis = axis % xf.ndim
    if xf.shape[axis] % n:
        raise ValueError("axis size %d is not a multiple of %d" % (xf.shape[axis], n))
    d = hadamard_signs(n, kind, seed, step)
    neg = d < 0
    c = _HADAMARD_C[n]

    xm = np.moveaxis(xf, axis, -1)
    moved_shape = xm.shape
    t = np.ascontiguousarray(xm).reshape(moved_shape[:-1] + (moved_shape[-1] // n, n))
    # NaNs and infinities propagate as IEEE arithmetic says: no warnings
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        if not inverse:
            t = _negate_where(t, neg)      # step 1
            t = _fwht_f32(t)               # step 2
            y = t * c                      # step 3 (float32 * float32)
        else:
            t = _fwht_f32(t)
            t = t * c
            y = _negate_where(t, neg)
    assert y.dtype == np.float32
    y = np.moveaxis(y.reshape(moved_shape), -1, axis)
    y = np.ascontiguousarray(y)
    return f32_to_bf16_rne(y) if bf16 else y


# ---------------------------------------------------------------------------
# §6 scaled_matmul
# ---------------------------------------------------------------------------

def _block_terms(a_codes, a_scales, b_codes, b_scales):
    """Yield c_j as exact float64 [M, N] (NaN for a NaN scale), j = 0 .. K/32-1."""
    a_codes = np.asarray(a_codes)
    b_codes = np.asarray(b_codes)
    a_scales = np.asarray(a_scales)
    b_scales = np.asarray(b_scales)
    if a_codes.ndim != 2 or b_codes.ndim != 2:
        raise ValueError("codes must be [M, K] and [N, K]")
    M, K = a_codes.shape
    N, K2 = b_codes.shape
    if K != K2 or K % BLOCK_SIZE:
        raise ValueError("K must agree and be a multiple of 32")
    nb = K // BLOCK_SIZE
    if a_scales.shape != (M, nb) or b_scales.shape != (N, nb):
        raise ValueError("scales must be [M, K/32] and [N, K/32]")
    if a_scales.dtype != np.uint8 or b_scales.dtype != np.uint8:
        raise TypeError("scales must be uint8 E8M0 bytes")
    va = _E2M1_F64[a_codes.astype(np.intp)].reshape(M, nb, BLOCK_SIZE)
    vb = _E2M1_F64[b_codes.astype(np.intp)].reshape(N, nb, BLOCK_SIZE)
    if a_codes.size and (a_codes.max() > 15 or b_codes.max() > 15):
        raise ValueError("E2M1 codes must lie in 0..15")
    sa = a_scales.astype(np.int64)
    sb = b_scales.astype(np.int64)
    for j in range(nb):
        # multiples of 1/4 below 2^11 in magnitude: exact in f64 in any order
        p = va[:, j, :] @ vb[:, j, :].T
        p = p + 0.0               # an exact zero sum is +0.0
        e = sa[:, j][:, None] + sb[:, j][None, :] - 254
        c = np.ldexp(p, e.astype(np.int32))   # exact in f64
        nan = (sa[:, j][:, None] == 0xFF) | (sb[:, j][None, :] == 0xFF)
        yield np.where(nan, np.nan, c)


def _acc_f32(acc, M, N, acc_bf16):
    if acc is None:
        return np.zeros((M, N), dtype=np.float32)
    a = _as_f32(acc, acc_bf16)
    if a.shape != (M, N):
        raise ValueError("acc must be [M, N]")
    return np.array(a, dtype=np.float32)


def scaled_matmul(a_codes, a_scales, b_codes, b_scales, acc=None, out="f32",
                  acc_bf16=False):
    """mxfp4.scaled_matmul (§6) in the reference order.

    A = a_codes [M, K] with a_scales [M, K/32]; B = b_codes [N, K] with
    b_scales [N, K/32] (both K-major, one code per byte). acc: optional [M, N]
    float32 (or uint16 bf16 with acc_bf16=True). r = acc (or +0.0); then
    r = r + c_j in f32 for j = 0, 1, ... with c_j = RNE_f32(p_j * 2^(sA+sB-254)).
    Returns float32 [M, N], or uint16 bf16 patterns for out='bf16'."""
    M = np.asarray(a_codes).shape[0]
    N = np.asarray(b_codes).shape[0]
    r = _acc_f32(acc, M, N, acc_bf16)
    with np.errstate(over="ignore", invalid="ignore"):
        for c in _block_terms(a_codes, a_scales, b_codes, b_scales):
            r = r + c.astype(np.float32)          # f32 add, RNE
    assert r.dtype == np.float32
    if out == "f32":
        return r
    if out == "bf16":
        return f32_to_bf16_rne(r)
    raise ValueError("out must be 'f32' or 'bf16'")


def scaled_matmul_exact(a_codes, a_scales, b_codes, b_scales, acc=None,
                        acc_bf16=False):
    """acc + sum_j c_j in float64 (c_j exact, not rounded to f32): the value the
    f32 result approximates. Float64 accumulation (relative error ~K/32 * 2^-53)."""
    M = np.asarray(a_codes).shape[0]
    N = np.asarray(b_codes).shape[0]
    r = _acc_f32(acc, M, N, acc_bf16).astype(np.float64)
    with np.errstate(invalid="ignore"):
        for c in _block_terms(a_codes, a_scales, b_codes, b_scales):
            r = r + c
    return r


def scaled_matmul_tolerance(a_codes, a_scales, b_codes, b_scales):
    """The §6 bound for other orders: (K/32) * 2^-24 * sum_j |c_j| (float64 [M, N]).
    (For a bf16 result add one bf16 ulp of the result.)"""
    K = np.asarray(a_codes).shape[1]
    tot = 0.0
    with np.errstate(invalid="ignore"):
        for c in _block_terms(a_codes, a_scales, b_codes, b_scales):
            tot = tot + np.abs(c)
    return (K // BLOCK_SIZE) * 2.0 ** -24 * tot


# ---------------------------------------------------------------------------
# self-test
# ---------------------------------------------------------------------------

_PHILOX_KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


def _self_test():
    for ctr, key, want in _PHILOX_KAT:
        got = tuple(int(w) for w in philox4x32_10(*ctr, *key))
        assert got == want, (ctr, key, [hex(g) for g in got])
    # vectorized path agrees with the scalar KAT
    ws = philox4x32_10(np.array([0, 0xFFFFFFFF], _U32), np.array([0, 0xFFFFFFFF], _U32),
                       np.array([0, 0xFFFFFFFF], _U32), np.array([0, 0xFFFFFFFF], _U32),
                       np.array([0, 0xFFFFFFFF], _U32), np.array([0, 0xFFFFFFFF], _U32))
    assert [int(w[1]) for w in ws] == list(_PHILOX_KAT[1][2])
    assert [int(w[0]) for w in ws] == list(_PHILOX_KAT[0][2])
    assert list(stochastic_words(4, 0, 0)) == list(_PHILOX_KAT[0][2])
    assert e8m0_decode(np.uint8(0)).view(_U32) == 0x00400000
    assert e8m0_decode(np.uint8(127)) == 1.0
    assert np.isnan(e8m0_decode(np.uint8(255)))
    x = np.linspace(-9, 9, 64 * 32, dtype=np.float32).reshape(64, 32)
    for rule in SCALE_RULES:
        c, s = quantize(x, 1, rule)
        y = dequantize(c, s, 1)
        assert y.shape == x.shape and s.shape == (64, 1)
    print("mx_reference self-test passed")


if __name__ == "__main__":
    _self_test()
