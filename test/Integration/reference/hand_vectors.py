# RUN: %PYTHON %s
# The same literals against the compiled CPU code (quantize, dequantize,
# hadamard, scaled_matmul run through the mxfp4 Python package):
# RUN: %if python-bindings %{ %PYTHON %s --compiled %}
#
# Hand-checked vectors for the NumPy reference (test/Integration/lib/mx_reference.py).
# Every expected value below is a literal worked out by hand from docs/Semantics.md
# (the derivation is in the comment next to it); none is produced by the reference.
# Any failure raises, so the script exits non-zero.

import sys

import numpy as np

import mx_reference as R

BACKEND = "reference"
if "--compiled" in sys.argv:
    import compiled_backend  # noqa: E402

    compiled_backend.install(R)
    BACKEND = "compiled"

RULES = ("floor", "even", "ceil", "rceil")
N_CHECKS = 0


def check(cond, what):
    global N_CHECKS
    if not bool(cond):
        raise AssertionError("FAILED: " + what)
    N_CHECKS += 1


def f32(bits):
    """float32 from a bit pattern."""
    return np.array([bits], dtype=np.uint32).view(np.float32)[0]


def bits_of(x):
    return [int(b) for b in np.asarray(x, dtype=np.float32).reshape(-1).view(np.uint32)]


def block(vals):
    """One block of 32 f32 values (zero padded) as a [1, 32] tensor."""
    v = np.zeros((1, 32), dtype=np.float32)
    v[0, :len(vals)] = np.array(vals, dtype=np.float32)
    return v


def q1(vals, rule, **kw):
    c, s = R.quantize(block(vals) if not isinstance(vals, np.ndarray) else vals, 1, rule, **kw)
    return [int(v) for v in c.reshape(-1)], int(s.reshape(-1)[0])


def check_block(vals, rule, want_scale, want_codes, what, **kw):
    codes, scale = q1(vals, rule, **kw)
    check(scale == want_scale, "%s [%s]: scale %d, want %d" % (what, rule, scale, want_scale))
    want = list(want_codes) + [0] * (32 - len(want_codes))
    check(codes == want, "%s [%s]: codes %s, want %s"
          % (what, rule, [hex(c) for c in codes], [hex(c) for c in want]))


# ---------------------------------------------------------------------------
# §1: decoding
# ---------------------------------------------------------------------------
got = R.e2m1_decode(np.arange(16, dtype=np.uint8))
check(bits_of(got) == bits_of([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
                               -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]),
      "E2M1 table (with -0.0 for 0x8)")
check(bits_of(R.e2m1_decode(np.array([8], np.uint8))) == [0x80000000], "0x8 is -0.0")
got = R.e8m0_decode(np.array([0, 1, 126, 127, 128, 254, 255], dtype=np.uint8))
check(bits_of(got[:6]) == [0x00400000, 0x00800000, 0x3F000000, 0x3F800000, 0x40000000,
                           0x7F000000], "E8M0 decode 0, 1, 126, 127, 128, 254")
check(np.isnan(got[6]), "E8M0 0xFF is NaN")

# ---------------------------------------------------------------------------
# §5: Philox4x32-10 known answers (Random123 kat_vectors)
# ---------------------------------------------------------------------------
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]
for ctr, key, want in KAT:
    got = tuple(int(w) for w in R.philox4x32_10(*ctr, *key))
    check(got == want, "Philox KAT ctr=%s key=%s: %s" % (ctr, key, [hex(g) for g in got]))
# vectorized: the three KAT counters at once
cols = [np.array([k[0][i] for k in KAT], dtype=np.uint32) for i in range(4)]
keys = [np.array([k[1][i] for k in KAT], dtype=np.uint32) for i in range(2)]
ws = R.philox4x32_10(*cols, *keys)
check([[int(ws[w][i]) for w in range(4)] for i in range(3)] == [list(k[2]) for k in KAT],
      "Philox KAT, vectorized")

# ---------------------------------------------------------------------------
# §2.4 RNE ties, §2.2 scales. Each block's amax makes s = 0 (byte 127) for the rule.
# ---------------------------------------------------------------------------
# floor: s = u - 2 = 0 for amax in [4, 8): amax 7.9.
TIES_FLOOR = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 5.0001, 6.5, 7.9, 4.0,
              -0.25, -0.75, -1.25, -1.75, -2.5, -3.5, -5.0, -6.5,
              0.5, 1.0, 1.5, 2.0, 3.0, 6.0, 0.0, -0.0, 0.2, 0.3, 0.7, 0.8, 2.6]
TIES_FLOOR_CODES = [0x0, 0x2, 0x2, 0x4, 0x4, 0x6, 0x6, 0x7, 0x7, 0x7, 0x6,
                    0x8, 0xA, 0xA, 0xC, 0xC, 0xE, 0xE, 0xF,
                    0x1, 0x2, 0x3, 0x4, 0x5, 0x7, 0x0, 0x8, 0x0, 0x1, 0x1, 0x2, 0x5]
check_block(TIES_FLOOR, "floor", 127, TIES_FLOOR_CODES, "ties, amax 7.9")
# 7.9 = 1.975 * 2^2: even rounds the mantissa up (>= 1.75) -> s = 1; ceil (m != 0)
# -> 1; rceil (7.9 > 6) -> 1.
for rule in ("even", "ceil", "rceil"):
    check(q1(TIES_FLOOR, rule)[1] == 128, "amax 7.9 gives s = 1 under %s" % rule)
# even: s = 0 for amax in [3.5, 7): amax 6.9 (1.725 * 4, mantissa < 1.75); 6.9 -> 6.
TIES_EVEN = list(TIES_FLOOR)
TIES_EVEN[9] = 6.9
check_block(TIES_EVEN, "even", 127, TIES_FLOOR_CODES, "ties, amax 6.9")
check_block(TIES_EVEN, "floor", 127, TIES_FLOOR_CODES, "ties, amax 6.9")

# ceil: s = 0 for amax in (2, 4]: amax 4.0 (which also gives s = 0 under the other
# three rules: u = 2, m = 0). Also the neighbours of the ties (bit patterns).
TIES_CEIL = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 4.0,
             -0.25, -0.75, -1.25, -1.75, -2.5, -3.5, -4.0,
             0.5, 1.0, 1.5, 2.0, 3.0, 0.0, -0.0, 0.2, 0.3, 0.7, 0.8, 2.6,
             f32(0x405FFFFF),   # 3.4999998 -> 3
             f32(0x40600001),   # 3.5000002 -> 4
             f32(0x3FA00001),   # 1.2500001 -> 1.5
             f32(0x3E800001),   # 0.25000003 -> 0.5
             f32(0x401FFFFF),   # 2.4999998 -> 2
             f32(0x40200001)]   # 2.5000002 -> 3
TIES_CEIL_CODES = [0x0, 0x2, 0x2, 0x4, 0x4, 0x6, 0x6,
                   0x8, 0xA, 0xA, 0xC, 0xC, 0xE, 0xE,
                   0x1, 0x2, 0x3, 0x4, 0x5, 0x0, 0x8, 0x0, 0x1, 0x1, 0x2, 0x5,
                   0x5, 0x6, 0x3, 0x1, 0x4, 0x5]
for rule in RULES:
    check_block(TIES_CEIL, rule, 127, TIES_CEIL_CODES, "ties, amax 4.0")

# rceil: s = 0 for amax in (3, 6]: amax 6.0 (floor: u = 2 -> 0; even: m = 0x400000
# < 0x600000 -> 0; ceil: m != 0 -> s = 1).
TIES_RCEIL = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 5.0001, 6.0, -5.0, -6.0, 4.0,
              f32(0x409FFFFF),  # 4.9999995 -> 4
              f32(0x40A00001),  # 5.0000005 -> 6
              f32(0x3F3FFFFF),  # 0.74999994 -> 0.5
              f32(0x3FDFFFFF),  # 1.7499999 -> 1.5
              f32(0x3FE00001),  # 1.7500001 -> 2
              f32(0x3F400001),  # 0.75000006 -> 1
              f32(0x3F9FFFFF)]  # 1.2499999 -> 1
TIES_RCEIL_CODES = [0x0, 0x2, 0x2, 0x4, 0x4, 0x6, 0x6, 0x7, 0x7, 0xE, 0xF, 0x6,
                    0x6, 0x7, 0x1, 0x3, 0x4, 0x2, 0x2]
for rule in ("rceil", "floor", "even"):
    check_block(TIES_RCEIL, rule, 127, TIES_RCEIL_CODES, "ties, amax 6.0")
check(q1(TIES_RCEIL, "ceil")[1] == 128, "amax 6.0 under ceil: s = 1")

# Saturation far above 6: 100 = 1.5625 * 2^6 (bits 0x42C80000, u = 6, m = 0x480000).
# floor: s = 4 (byte 131): 100/16 = 6.25 -> 6, 1/16 -> 0, 90/16 = 5.625 -> 6.
# even: 0x42C80000 + 0x200000 keeps E = 133 -> s = 4 too.
# ceil and rceil (m = 0x480000 > 0x400000): s = 5 (byte 132): 3.125 -> 3, 2.8125 -> 3.
SAT = [100.0, 1.0, -100.0, 90.0]
check_block(SAT, "floor", 131, [0x7, 0x0, 0xF, 0x7], "saturation, amax 100")
check_block(SAT, "even", 131, [0x7, 0x0, 0xF, 0x7], "saturation, amax 100")
check_block(SAT, "ceil", 132, [0x5, 0x0, 0xD, 0x5], "amax 100")
check_block(SAT, "rceil", 132, [0x5, 0x0, 0xD, 0x5], "amax 100")

# ---------------------------------------------------------------------------
# signed zero, zero block, NaN / Inf blocks (§2.1, §2.4)
# ---------------------------------------------------------------------------
# amax 4: s = 0 under every rule; -0.0, -0.1, -1e-30 -> 0x8; 0.1 -> 0x0.
for rule in RULES:
    check_block([4.0, -0.0, -0.1, 0.1, -1e-30], rule, 127, [0x6, 0x8, 0x8, 0x0, 0x8],
                "signed zero")
ZERO = [0.0, -0.0] * 16
for rule in RULES:
    check_block(ZERO, rule, 0x00, [0x0, 0x8] * 16, "zero block")
NAN_NEG = f32(0xFFC00000)
for rule in RULES:
    check_block([1.0, np.nan, -2.0, -0.0, 4.0], rule, 0xFF, [], "NaN block")
    check_block([np.inf, 1.0, -3.0], rule, 0xFF, [], "+Inf block")
    check_block([-1.0, -np.inf, -0.0], rule, 0xFF, [], "-Inf block")
    check_block([-5.0, NAN_NEG], rule, 0xFF, [], "negative NaN block")
# The next block of the same row is untouched: [NaN, ...] [4, -1, ...]
x = np.zeros((1, 64), dtype=np.float32)
x[0, 3] = np.nan
x[0, 32] = 4.0
x[0, 33] = -1.0
c, s = R.quantize(x, 1, "even")
check([int(v) for v in s[0]] == [0xFF, 127], "NaN block next to a normal block: scales")
check(int(c[0, 32]) == 0x6 and int(c[0, 33]) == 0xA and not c[0, :32].any(),
      "NaN block next to a normal block: codes")

# ---------------------------------------------------------------------------
# FP32 subnormals (§2.3): amax 1.5*2^-127 = 0x00600000, E = 0, u = -127.
# floor -129, even E(0x00800000) - 129 = -128, ceil -128, rceil -128 -> all clamp to
# -127 (byte 0); a = x * 2^127.
# ---------------------------------------------------------------------------
SUB = [f32(0x00400000),  # 2^-127 -> 1.0 -> 0x2
       f32(0x00200000),  # 2^-128 -> 0.5 -> 0x1
       f32(0x00080000),  # 2^-130 -> 0.125 -> 0
       f32(0x00040000),  # 2^-131 -> 0.0625 -> 0
       f32(0x80400000),  # -2^-127 -> 0xA
       f32(0x00600000),  # 3 * 2^-128 -> 1.5 -> 0x3
       f32(0x00000001),  # 2^-149 -> 2^-22 -> 0
       f32(0x80000001),  # -2^-149 -> 0x8
       f32(0x00100000),  # 2^-129 -> 0.25 (tie) -> 0
       f32(0x00100001),  # just above 0.25 -> 0.5 -> 0x1
       f32(0x00300000)]  # 3 * 2^-129 -> 0.75 (tie) -> 1 -> 0x2
SUB_CODES = [0x2, 0x1, 0x0, 0x0, 0xA, 0x3, 0x0, 0x8, 0x0, 0x1, 0x2]
for rule in RULES:
    check_block(SUB, rule, 0x00, SUB_CODES, "subnormal block")
# amax exactly 2^-127 (rceil: m = 0x400000 is not > 0x400000: s = -129 -> -127)
for rule in RULES:
    check_block([f32(0x00400000), f32(0x00200000), f32(0x00080000), f32(0x00040000)],
                rule, 0x00, [0x2, 0x1, 0x0, 0x0], "2^-127 block")

# Bottom clamp with normal amax: 2^-126 -> s = -128 -> -127, a = 2 (0x4), 2^-127 -> 1;
# 2^-125 -> s = -127 (byte 0), a = 4; 2^-124 -> s = -126 (byte 1), a = 4, and
# 2^-126 in that block -> a = 1 (0x2).
for rule in RULES:
    check_block([f32(0x00800000), f32(0x00400000)], rule, 0, [0x4, 0x2], "amax 2^-126")
    check_block([f32(0x01000000)], rule, 0, [0x6], "amax 2^-125")
    check_block([f32(0x01800000), f32(0x00800000)], rule, 1, [0x6, 0x2], "amax 2^-124")

# Top clamp: amax = largest finite 0x7F7FFFFF (u = 127, m = 0x7FFFFF).
# floor: s = 125 (byte 252); even: (0x7F7FFFFF + 0x200000) & 0x7F800000 = 0x7F800000,
# E = 255, s = 255 - 129 = 126 (byte 253); ceil: 126; rceil: 126.
TOP = [f32(0x7F7FFFFF),  # floor: 8 - 2^-21 -> 6; others: 4 - 2^-22 -> 4
       f32(0x7F000000),  # 2^127: floor 4 (0x6); others 2 (0x4)
       1.0,              # 2^-125 / 2^-126 -> 0
       f32(0x00000001),  # 2^-149 * 2^-125: underflows to +0 -> 0x0
       f32(0x80000001),  # -> -0 -> 0x8
       f32(0xFF7FFFFF),  # -max -> 0xF / 0xE
       f32(0x7EC00000)]  # 3 * 2^125: floor 3 (0x5); others 1.5 (0x3)
check_block(TOP, "floor", 252, [0x7, 0x6, 0x0, 0x0, 0x8, 0xF, 0x5], "largest finite")
for rule in ("even", "ceil", "rceil"):
    check_block(TOP, rule, 253, [0x6, 0x4, 0x0, 0x0, 0x8, 0xE, 0x3], "largest finite")

# ---------------------------------------------------------------------------
# Rule boundaries (§2.2)
# ---------------------------------------------------------------------------
# even at 1.75 = 0x3FE00000: + 0x200000 = 0x40000000, E = 128 -> s = -1 (byte 126);
# a = 3.5 -> 4 (0x6). floor: u = 0 -> s = -2 (125); a = 7 -> 6 (0x7).
check_block([1.75], "even", 126, [0x6], "even boundary 1.75")
check_block([1.75], "floor", 125, [0x7], "even boundary 1.75")
check_block([1.75], "ceil", 126, [0x6], "1.75 (m != 0)")
check_block([1.75], "rceil", 126, [0x6], "1.75 (m = 0x600000 > 0x400000)")
# 1.7499999 = 0x3FDFFFFF: + 0x200000 = 0x3FFFFFFF, E = 127 -> s = -2 (125);
# a = 6.9999995 -> 6.
check_block([f32(0x3FDFFFFF)], "even", 125, [0x7], "even boundary 1.7499999")
check_block([f32(0x3FDFFFFF)], "floor", 125, [0x7], "even boundary 1.7499999")
# rceil at 6: m = 0x400000 -> s = 0; 6 * (1 + 2^-23) = 0x40C00001 -> s = 1,
# a = 3.0000002 -> 3.
check_block([6.0], "rceil", 127, [0x7], "rceil boundary 6")
check_block([f32(0x40C00001)], "rceil", 128, [0x5], "rceil boundary 6(1+2^-23)")
check_block([f32(0x40C00001)], "floor", 127, [0x7], "6(1+2^-23) under floor")
check_block([f32(0x40C00001)], "even", 127, [0x7], "6(1+2^-23) under even")
# ceil at 4: s = 0; 4.0000005 = 0x40800001 -> s = 1, a = 2.0000002 -> 2.
check_block([4.0], "ceil", 127, [0x6], "ceil boundary 4")
check_block([f32(0x40800001)], "ceil", 128, [0x4], "ceil boundary 4.0000005")
check_block([f32(0x40800001)], "floor", 127, [0x6], "4.0000005 under floor")

# bf16 input (bit patterns): 4.0 = 0x4080, -0.25 = 0xBE80, 1.5 = 0x3FC0, 0.875 = 0x3F60
xb = np.zeros((1, 32), dtype=np.uint16)
xb[0, :4] = [0x4080, 0xBE80, 0x3FC0, 0x3F60]
c, s = R.quantize(xb, 1, "even", bf16=True)
check(int(s[0, 0]) == 127 and [int(v) for v in c[0, :4]] == [0x6, 0x8, 0x3, 0x2]
      and not c[0, 4:].any(), "bf16 input")

# axis 0: x[32, 2]; column 0 amax 4 (s = 0), column 1 amax 1 (floor: s = -2 -> 125;
# 1 * 4 = 4 -> 0x6, 0.5 * 4 = 2 -> 0x4)
x = np.zeros((32, 2), dtype=np.float32)
x[0, 0], x[1, 0] = 4.0, 1.0
x[0, 1], x[5, 1] = 1.0, -0.5
c, s = R.quantize(x, 0, "floor")
check(s.shape == (1, 2) and [int(v) for v in s[0]] == [127, 125], "axis 0: scales")
check(c.shape == (32, 2) and [int(c[0, 0]), int(c[1, 0]), int(c[0, 1]), int(c[5, 1])]
      == [0x6, 0x2, 0x6, 0xC], "axis 0: codes")

# ---------------------------------------------------------------------------
# §3 dequantize
# ---------------------------------------------------------------------------
codes = np.array([list(range(16)) * 2], dtype=np.uint8)
y = R.dequantize(codes, np.array([[127]], np.uint8), 1)
check(bits_of(y) == bits_of([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
                             -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0] * 2),
      "dequantize, scale 127")
yb = R.dequantize(codes, np.array([[127]], np.uint8), 1, out="bf16")
check([int(v) for v in yb[0, :16]] ==
      [0x0000, 0x3F00, 0x3F80, 0x3FC0, 0x4000, 0x4040, 0x4080, 0x40C0,
       0x8000, 0xBF00, 0xBF80, 0xBFC0, 0xC000, 0xC040, 0xC080, 0xC0C0],
      "dequantize bf16, scale 127")
codes = np.zeros((1, 32), np.uint8)
codes[0, :5] = [0x2, 0x1, 0xB, 0x7, 0x8]
y = R.dequantize(codes, np.array([[0]], np.uint8), 1)
# 2^-127, 2^-128, -1.5 * 2^-127 = -3 * 2^-128, 6 * 2^-127 = 1.5 * 2^-125, -0
check(bits_of(y[0, :5]) == [0x00400000, 0x00200000, 0x80600000, 0x01400000, 0x80000000],
      "dequantize, scale 0")
yb = R.dequantize(codes, np.array([[0]], np.uint8), 1, out="bf16")
check([int(v) for v in yb[0, :5]] == [0x0040, 0x0020, 0x8060, 0x0140, 0x8000],
      "dequantize bf16, scale 0")
y = R.dequantize(codes, np.array([[0xFF]], np.uint8), 1)
check(bits_of(y) == [0x7FC00000] * 32, "dequantize, scale 0xFF -> 0x7FC00000")
yb = R.dequantize(codes, np.array([[0xFF]], np.uint8), 1, out="bf16")
check([int(v) for v in yb[0]] == [0x7FC0] * 32, "dequantize bf16, scale 0xFF -> 0x7FC0")
# top of the range: S = 254: 1 -> 2^127, 1.5 -> 0x7F400000, 2 -> 2^128 = +Inf,
# -2 -> -Inf, 6 -> +Inf; S = 253: 3 -> 1.5 * 2^127, 4 -> 2^128 = Inf, 6 -> Inf.
codes = np.zeros((2, 32), np.uint8)
codes[0, :5] = [0x2, 0x3, 0x4, 0xC, 0x7]
codes[1, :3] = [0x5, 0x6, 0x7]
y = R.dequantize(codes, np.array([[254], [253]], np.uint8), 1)
check(bits_of(y[0, :5]) == [0x7F000000, 0x7F400000, 0x7F800000, 0xFF800000, 0x7F800000],
      "dequantize, scale 254")
check(bits_of(y[1, :3]) == [0x7F400000, 0x7F800000, 0x7F800000], "dequantize, scale 253")
yb = R.dequantize(codes, np.array([[254], [253]], np.uint8), 1, out="bf16")
check([int(v) for v in yb[0, :5]] == [0x7F00, 0x7F40, 0x7F80, 0xFF80, 0x7F80],
      "dequantize bf16, scale 254")
# axis 0, two blocks: codes [64, 1], scales [2, 1]
codes = np.full((64, 1), 0x3, np.uint8)
y = R.dequantize(codes, np.array([[128], [126]], np.uint8), 0)
check(bits_of(y[:32, 0]) == [0x40400000] * 32 and bits_of(y[32:, 0]) == [0x3F400000] * 32,
      "dequantize along axis 0 (1.5*2 = 3, 1.5/2 = 0.75)")

# ---------------------------------------------------------------------------
# f32 <-> bf16
# ---------------------------------------------------------------------------
src = np.array([0x3F800000, 0x3F808000, 0x3F818000, 0x3F808001, 0x3F80FFFF,
                0x7F800001, 0xFF800001, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000,
                0x80000000, 0x00000001, 0x00008000, 0x00018000], dtype=np.uint32)
want = [0x3F80,  # 1.0
        0x3F80,  # tie, lower is even
        0x3F82,  # tie, lower 0x3F81 is odd -> up
        0x3F81,  # above the tie
        0x3F81,  # round up
        0x7FC0,  # signalling NaN made quiet
        0xFFC0,  # negative NaN stays NaN
        0x7F80,  # largest finite rounds to +Inf
        0xFF80,
        0x7F80,  # +Inf
        0x8000,  # -0
        0x0000,  # tiny subnormal -> +0
        0x0000,  # tie at the smallest scale -> even (0)
        0x0002]  # tie -> even (2)
check([int(v) for v in R.f32_to_bf16_rne(src.view(np.float32))] == want, "f32 -> bf16 RNE")
check(bits_of(R.bf16_to_f32(np.array([0x3F80, 0xC0C0, 0x0001], np.uint16)))
      == [0x3F800000, 0xC0C00000, 0x00010000], "bf16 -> f32")

# ---------------------------------------------------------------------------
# §4 hadamard
# ---------------------------------------------------------------------------
C32, C128 = 0x3E3504F3, 0x3DB504F3
# the doc's constants really are RNE(1/sqrt(n)) (f64 -> f32 cast is one RNE)
check(bits_of([np.float32(1.0 / np.sqrt(32.0))]) == [C32], "c(32) = RNE(1/sqrt 32)")
check(bits_of([np.float32(1.0 / np.sqrt(128.0))]) == [C128], "c(128) = RNE(1/sqrt 128)")

e0 = np.zeros((1, 16), np.float32)
e0[0, 0] = 1.0
check(bits_of(R.hadamard(e0, 1, 16)) == [0x3E800000] * 16, "H16 e_0 = 0.25")
e5 = np.zeros((1, 16), np.float32)
e5[0, 5] = 1.0
# (-1)^popcount(j & 5): bits 0 and 2 of j
SIGN5 = [1, -1, 1, -1, -1, 1, -1, 1, 1, -1, 1, -1, -1, 1, -1, 1]
check(bits_of(R.hadamard(e5, 1, 16)) == bits_of([0.25 * s for s in SIGN5]), "H16 e_5")
for n, cbits in ((32, C32), (64, 0x3E000000), (128, C128)):
    e = np.zeros((1, n), np.float32)
    e[0, 0] = 1.0
    check(bits_of(R.hadamard(e, 1, n)) == [cbits] * n, "H%d e_0 = c(%d)" % (n, n))
    e[0, 0] = -2.0  # all -2c: exact
    y = R.hadamard(e, 1, n)
    check(bits_of(y) == bits_of([np.float32(-2.0) * f32(cbits)] * n), "H%d (-2 e_0)" % n)
# all ones: y_0 = n * c, the rest exactly 0 (H16: 16 * 0.25 = 4)
check(bits_of(R.hadamard(np.ones((1, 16), np.float32), 1, 16)) == [0x40800000] + [0] * 15,
      "H16 of ones")

for n in (16, 32, 64, 128):
    eye = np.eye(n, dtype=np.float32)
    Y = R.hadamard(eye, 1, n)
    check(Y.dtype == np.float32, "hadamard returns f32")
    check(np.array_equal(Y, Y.T), "H%d symmetric" % n)
    G = Y.astype(np.float64) @ Y.astype(np.float64).T
    err = np.abs(G - np.eye(n)).max()
    if n in (16, 64):
        check(err == 0.0, "H%d H^T = I exactly" % n)
    else:
        check(err < 4 * 2.0 ** -24, "H%d H^T = I to f32 rounding (err %g)" % (n, err))
    # the transform acts on axis 0 too (tiles along a column)
    check(np.array_equal(R.hadamard(eye, 0, n), Y.T), "H%d along axis 0" % n)

# round trips: integer data with n = 16, 64 is exact (sums of small integers, then
# powers of two); general data within 4 ulp of the tile's largest |x|.
rng = np.random.default_rng(12345)
for n in (16, 64):
    xi = rng.integers(-100, 101, size=(64, n)).astype(np.float32)
    for kind, seed in (("deterministic", None), ("random_fixed", 99)):
        y = R.hadamard(R.hadamard(xi, 1, n, kind, seed), 1, n, kind, seed, inverse=True)
        check(np.array_equal(y, xi), "H%d %s round trip exact on integers" % (n, kind))
for n in (16, 32, 64, 128):
    x = rng.standard_normal((256, n)).astype(np.float32)
    ulp = np.spacing(np.abs(x).max(axis=1, keepdims=True))
    for kind, seed in (("deterministic", None), ("random_fixed", 7),
                       ("random_per_step", -3)):
        kw = {"step": 11} if kind == "random_per_step" else {}
        y = R.hadamard(x, 1, n, kind, seed, **kw)
        z = R.hadamard(y, 1, n, kind, seed, inverse=True, **kw)
        check(np.all(np.abs(z.astype(np.float64) - x) <= 4 * ulp),
              "H%d %s forward then inverse within 4 ulp of tile max" % (n, kind))
        z = R.hadamard(R.hadamard(x, 1, n, kind, seed, inverse=True, **kw), 1, n, kind,
                       seed, **kw)
        check(np.all(np.abs(z.astype(np.float64) - x) <= 4 * ulp),
              "H%d %s inverse then forward within 4 ulp of tile max" % (n, kind))
        if kind != "deterministic":
            check(not np.array_equal(y, R.hadamard(x, 1, n)),
                  "H%d %s differs from deterministic" % (n, kind))

# Hand-derived signs: seed = -1 and step = -1 give key (ffffffff, ffffffff) and counter
# (ffffffff, ffffffff, ffffffff, ffffffff): Random123's second KAT,
# w = 408f276d 41c83b0e a20bc7c6 6d5451fd. For n = 16 the low 16 bits of w0 are
# 0x276d = 0010 0111 0110 1101, read from bit 0 up: 1,0,1,1,0,1,1,0, 1,1,1,0,0,1,0,0
# (bit 1 -> d = -1).
D16 = [-1, 1, -1, -1, 1, -1, -1, 1, -1, -1, -1, 1, 1, -1, 1, 1]
eye = np.eye(16, dtype=np.float32)
Y = R.hadamard(eye, 1, 16, "random_per_step", seed=-1, step=-1)
check(bits_of(Y[:, 0]) == bits_of([0.25 * d for d in D16]), "signs d_j (n=16, KAT)")
check(bits_of(Y) == bits_of([[0.25 * D16[i] * (-1) ** bin(i & j).count("1")
                              for j in range(16)] for i in range(16)]),
      "random H16 = D H / 4 (rows of identity)")
# the same with the unsigned spellings of -1
Y2 = R.hadamard(eye, 1, 16, "random_per_step", seed=0xFFFFFFFFFFFFFFFF,
                step=0xFFFFFFFFFFFFFFFF)
check(np.array_equal(Y, Y2), "seed/step -1 == 2^64-1")
# inverse: row 0 of the result for e_0 is c * d_j
Yi = R.hadamard(eye, 1, 16, "random_per_step", seed=-1, step=-1, inverse=True)
check(bits_of(Yi[0]) == bits_of([0.25 * d for d in D16]), "inverse applies d after H")
check(np.array_equal(Yi, Y.T), "inverse matrix is the transpose")
# n = 128 uses all four words: d_j = -1 iff bit j % 32 of w_(j / 32)
W = (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)
D128 = [-1 if (W[j // 32] >> (j % 32)) & 1 else 1 for j in range(128)]
e = np.zeros((1, 128), np.float32)
e[0, 0] = 1.0
y = R.hadamard(e, 1, 128, "random_per_step", seed=-1, step=-1, inverse=True)
check(bits_of(y) == bits_of([np.float32(d) * f32(C128) for d in D128]),
      "signs d_j (n=128, KAT words)")
check(sum(1 for d in D128 if d < 0) == sum(bin(w).count("1") for w in W), "popcount")
# random_fixed = random_per_step at step 0; different seeds differ
x = rng.standard_normal((8, 64)).astype(np.float32)
check(np.array_equal(R.hadamard(x, 1, 64, "random_fixed", seed=5),
                     R.hadamard(x, 1, 64, "random_per_step", seed=5, step=0)),
      "random_fixed is t = 0")
check(not np.array_equal(R.hadamard(x, 1, 64, "random_fixed", seed=5),
                         R.hadamard(x, 1, 64, "random_fixed", seed=6)), "seeds differ")
check(not np.array_equal(R.hadamard(x, 1, 64, "random_per_step", seed=5, step=1),
                         R.hadamard(x, 1, 64, "random_per_step", seed=5, step=2)),
      "steps differ")

# The stage order matters for rounding. n = 16, x0 = 1 + 2^-23 (0x3F800001),
# x1 = 2^-24, x8 = -2^-24, the rest 0; u = 2^-24, ulp(1) = 2u.
# Stages h = 1, 2, 4, 8: t0 = x0 + x1 = 1 + 3u -> tie -> 1 + 4u (even); stages 2, 4
# add zeros; stage 8 adds t8 = -u: 1 + 3u -> tie -> 1 + 4u. y0 = (1 + 2^-22)/4
# = 0x3E800002. (Stages 8, 4, 2, 1 would give x0 + x8 = 1 + u -> 1, then + x1 -> 1,
# y0 = 0x3E800000.)
x = np.zeros((1, 16), np.float32)
x[0, 0], x[0, 1], x[0, 8] = f32(0x3F800001), f32(0x33800000), f32(0xB3800000)
check(bits_of(R.hadamard(x, 1, 16)[0, :1]) == [0x3E800002], "FWHT stage order h = 1, 2, ...")

# bf16 in/out. e_0 -> 0.25 = 0x3E80; c(32) = 0x3E3504F3 -> 0x3E35; c(128) -> 0x3DB5.
for n, want in ((16, 0x3E80), (32, 0x3E35), (128, 0x3DB5)):
    e = np.zeros((1, n), np.uint16)
    e[0, 0] = 0x3F80
    y = R.hadamard(e, 1, n, bf16=True)
    check(y.dtype == np.uint16 and [int(v) for v in y[0]] == [want] * n,
          "bf16 H%d e_0" % n)
# ties: x0 = 1, x1 = 2^-8 (0x3B80): (1 + 2^-8)/4 = 0x3E808000 -> tie -> 0x3E80 (even);
# (1 - 2^-8)/4 = 0x3E7F0000 -> 0x3E7F. x1 = 3 * 2^-8 (0x3C40): 0x3E818000 -> 0x3E82;
# (1 - 3 * 2^-8)/4 = 0x3E7D0000 -> 0x3E7D. y_j = c (x0 + (-1)^(j & 1) x1).
for x1, even_j, odd_j in ((0x3B80, 0x3E80, 0x3E7F), (0x3C40, 0x3E82, 0x3E7D)):
    e = np.zeros((1, 16), np.uint16)
    e[0, 0], e[0, 1] = 0x3F80, x1
    y = R.hadamard(e, 1, 16, bf16=True)
    check([int(v) for v in y[0]] == [even_j, odd_j] * 8, "bf16 RNE ties in hadamard")
# NaN / Inf propagate to the whole tile (every output sums every input)
x = np.ones((2, 32), np.float32)
x[0, 7] = np.nan
x[1, 3] = np.inf
y = R.hadamard(x, 1, 32)
check(np.isnan(y[0]).all(), "NaN propagates through the tile")
check(np.isinf(y[1]).all() and not np.isnan(y[1]).any(), "Inf propagates")
e = np.zeros((1, 16), np.uint16)
e[0, 2] = 0x7F81  # signalling bf16 NaN
y = R.hadamard(e, 1, 16, bf16=True)
check(all((int(v) & 0x7FC0) == 0x7FC0 for v in y[0]), "bf16 NaN output is quiet NaN")

# ---------------------------------------------------------------------------
# §6 scaled_matmul
# ---------------------------------------------------------------------------
def mat(rows):
    return np.array(rows, dtype=np.uint8)


A = mat([[0x2] * 32])            # 1.0
B = mat([[0x7] * 32])            # 6.0
# p = 32 * 6 = 192, scale 2^(127 + 128 - 254) = 2 -> 384
r = R.scaled_matmul(A, mat([[127]]), B, mat([[128]]))
check(bits_of(r) == bits_of([[384.0]]), "one block: 384")
# two blocks: block 0 as above; block 1: 0.5 * -6 * 32 = -96, 2^(126 + 127 - 254) = 1/2
# -> -48; total 336; with acc 1.0 -> 337; bf16(336) = 0x43A8; bf16(337) ties -> 0x43A8
A2 = mat([[0x2] * 32 + [0x1] * 32])
B2 = mat([[0x7] * 32 + [0xF] * 32])
SA2, SB2 = mat([[127, 126]]), mat([[128, 127]])
check(bits_of(R.scaled_matmul(A2, SA2, B2, SB2)) == bits_of([[336.0]]), "two blocks: 336")
acc = np.array([[1.0]], np.float32)
check(bits_of(R.scaled_matmul(A2, SA2, B2, SB2, acc=acc)) == bits_of([[337.0]]),
      "acc 1.0: 337")
check(int(R.scaled_matmul(A2, SA2, B2, SB2, out="bf16")[0, 0]) == 0x43A8, "bf16 336")
# The dialect's accumulator has the result's type; mixed forms are
# reference-only.
if BACKEND == "reference":
    check(int(R.scaled_matmul(A2, SA2, B2, SB2, acc=acc, out="bf16")[0, 0]) == 0x43A8,
          "bf16 337 ties to even 336")
    check(bits_of(R.scaled_matmul(A2, SA2, B2, SB2, acc=np.array([[0x3F80]], np.uint16),
                                  acc_bf16=True)) == bits_of([[337.0]]), "bf16 acc")
check(int(R.scaled_matmul(A2, SA2, B2, SB2, acc=np.array([[0x3F80]], np.uint16),
                          out="bf16", acc_bf16=True)[0, 0]) == 0x43A8,
      "bf16 acc 1.0: bf16(337) ties to even 336")
# acc 256 + 1 = 257 -> bf16 tie -> 256 (0x4380); acc 256 + 3 = 259 -> tie -> 260 (0x4382)
one = mat([[0x2] + [0] * 31])     # single 1.0
three = mat([[0x5] + [0] * 31])   # single 3.0
S127 = mat([[127]])
acc256 = np.array([[256.0]], np.float32)
acc256 = acc256 if BACKEND == "reference" else np.array([[0x4380]], np.uint16)
bf16_acc = BACKEND != "reference"
check(int(R.scaled_matmul(one, S127, one, S127, acc=acc256, out="bf16",
                          acc_bf16=bf16_acc)[0, 0]) == 0x4380, "bf16(257) = 256")
check(int(R.scaled_matmul(one, S127, three, S127, acc=acc256, out="bf16",
                          acc_bf16=bf16_acc)[0, 0]) == 0x4382, "bf16(259) = 260")
# the reference order: acc = 2^24, c_0 = c_1 = 1: (2^24 + 1) ties to 2^24, again -> 2^24;
# the exact value is 2^24 + 2.
one2 = mat([[0x2] + [0] * 31 + [0x2] + [0] * 31])
S2 = mat([[127, 127]])
acc24 = np.array([[16777216.0]], np.float32)
check(bits_of(R.scaled_matmul(one2, S2, one2, S2, acc=acc24)) == [0x4B800000],
      "reference order: 2^24 + 1 + 1 = 2^24 in f32")
check(float(R.scaled_matmul_exact(one2, S2, one2, S2, acc=acc24)[0, 0]) == 16777218.0,
      "exact value 2^24 + 2")
# blocks in increasing order: acc = 2^24, c = 1, 1, 2: (2^24 + 1) -> 2^24, again 2^24,
# + 2 -> 2^24 + 2 (0x4B800001). (In decreasing order: 2^24 + 2, + 1 -> tie -> 2^24 + 4,
# + 1 -> tie -> 2^24 + 4.)
A4 = mat([[0x2] + [0] * 31 + [0x2] + [0] * 31 + [0x2] + [0] * 31])
B4 = mat([[0x2] + [0] * 31 + [0x2] + [0] * 31 + [0x4] + [0] * 31])
S3 = mat([[127, 127, 127]])
check(bits_of(R.scaled_matmul(A4, S3, B4, S3, acc=acc24)) == [0x4B800001],
      "blocks added in increasing order")
# 2x2: rows of A: all 1, all 2; rows of B: all 0.5, (1 x 16, -1 x 16) -> [[16, 0], [32, 0]]
A3 = mat([[0x2] * 32, [0x4] * 32])
B3 = mat([[0x1] * 32, [0x2] * 16 + [0xA] * 16])
r = R.scaled_matmul(A3, mat([[127], [127]]), B3, mat([[127], [127]]))
check(bits_of(r) == [0x41800000, 0x00000000, 0x42000000, 0x00000000], "2x2 product")
# subnormal and underflowing c_j: 0.5 * 0.5 = 0.25 at 2^(0 + 127 - 254) = 2^-129
# (0x00100000); 0.5 * 1.5 = 0.75 at 2^-148 = 1.5 * 2^-149 -> ties to 2 * 2^-149;
# 0.75 at 2^-149 -> 2^-149; -0.25 at 2^-254 -> -0 and +0 + -0 = +0.
half = mat([[0x1] + [0] * 31])
onehalf = mat([[0x3] + [0] * 31])
nhalf = mat([[0x9] + [0] * 31])
check(bits_of(R.scaled_matmul(half, mat([[0]]), half, mat([[127]]))) == [0x00100000],
      "subnormal c_j 2^-129")
check(bits_of(R.scaled_matmul(half, mat([[0]]), onehalf, mat([[106]]))) == [0x00000002],
      "subnormal c_j rounds to even")
check(bits_of(R.scaled_matmul(half, mat([[0]]), onehalf, mat([[105]]))) == [0x00000001],
      "subnormal c_j rounds up")
check(bits_of(R.scaled_matmul(nhalf, mat([[0]]), half, mat([[0]]))) == [0x00000000],
      "underflow to -0, +0 + -0 = +0")
# overflow and NaN
A7 = mat([[0x7] * 32])
check(bits_of(R.scaled_matmul(A7, mat([[254]]), A7, mat([[254]]))) == [0x7F800000],
      "1152 * 2^254 -> +Inf")
check(np.isnan(R.scaled_matmul(A, mat([[0xFF]]), B, mat([[127]]))).all(), "NaN scale (A)")
check(np.isnan(R.scaled_matmul(A, mat([[127]]), B, mat([[0xFF]]))).all(), "NaN scale (B)")
check(int(R.scaled_matmul(A, mat([[0xFF]]), B, mat([[127]]), out="bf16")[0, 0]) & 0x7FC0
      == 0x7FC0, "NaN scale, bf16 result")
Ainf = mat([[0x7] * 32 + [0x7] * 32])
Binf = mat([[0x7] * 32 + [0xF] * 32])
check(np.isnan(R.scaled_matmul(Ainf, mat([[254, 254]]), Binf, mat([[254, 254]]))).all(),
      "+Inf + -Inf = NaN")

# ---------------------------------------------------------------------------
# §2.4 + §5 stochastic rounding
# ---------------------------------------------------------------------------
# seed 0, counter 0: elements i = 0..3 use the first KAT's words
#   w0 = 0x6627e8d5: r >> 9 = 3347444, v = 6694889 / 2^24 = 0.39905;
#        0.2 -> frac 0.4 > v -> 0.5 (0x1)
#   w1 = 0xe169c58d: r >> 9 = 7386338, v = 0.88052; 1.44 -> frac 0.88 < v -> 1 (0x2)
#   w2 = 0xbc57ac4c: r >> 9 = 6171606, v = 0.73571; -5.48 -> frac 0.74 > v -> -6 (0xF)
#   w3 = 0x9b00dbd8: r >> 9 = 5079149, v = 0.60548; -2.6 -> frac 0.6 < v -> -2 (0xC)
# the other elements are on the grid and never move; amax 5.48 -> s = 0 (floor, even).
# frac exactly equal to v does not round up: 6694889 * 2^-25 has frac = v of w0 (the
# next f32 up, 13389779 * 2^-26, rounds up)
check_block([6694889 * 2.0 ** -25, 0.0, 0.0, 0.0, 4.0], "even", 127, [0x0, 0, 0, 0, 0x6],
            "stochastic, frac == v stays down", rounding="stochastic", seed=0, counter=0)
check_block([13389779 * 2.0 ** -26, 0.0, 0.0, 0.0, 4.0], "even", 127, [0x1, 0, 0, 0, 0x6],
            "stochastic, frac just above v goes up", rounding="stochastic", seed=0, counter=0)
SRV = [0.2, 1.44, -5.48, -2.6, 4.0, 0.5, -1.0, 1.5, -2.0, 3.0, 0.0, -0.0]
SR_CODES = [0x1, 0x2, 0xF, 0xC, 0x6, 0x1, 0xA, 0x3, 0xC, 0x5, 0x0, 0x8]
for rule in ("floor", "even"):
    check_block(SRV, rule, 127, SR_CODES, "stochastic, KAT words",
                rounding="stochastic", seed=0, counter=0)
# the linear index runs over the whole tensor, not per block: x[32, 4] blocked along
# axis 0 puts elements i = 0..3 (row 0) in four different blocks.
x = np.zeros((32, 4), np.float32)
x[0] = [0.2, 1.44, -5.48, -2.6]
x[1] = 4.0
c, s = R.quantize(x, 0, "even", rounding="stochastic", seed=0, counter=0)
check([int(v) for v in c[0]] == [0x1, 0x2, 0xF, 0xC] and [int(v) for v in s[0]] ==
      [127, 127, 127, 127], "stochastic, row-major linear index across blocks")
# grid values never move, |a| >= 6 gives 6, tiny values never round up, NaN blocks
GRID = [7.0, -6.5, 6.0, 4.0, -3.0, 2.0, 1.5, -1.0, 0.5, 0.0, -0.0, f32(0x00000001),
        f32(0x80000001)]
GRID_CODES = [0x7, 0xF, 0x7, 0x6, 0xD, 0x4, 0x3, 0xA, 0x1, 0x0, 0x8, 0x0, 0x8]
for seed in range(8):
    check_block(GRID, "floor", 127, GRID_CODES, "stochastic, grid values (seed %d)" % seed,
                rounding="stochastic", seed=seed, counter=seed * 7 - 20)
    check_block([1.0, np.nan, 0.3], "even", 0xFF, [], "stochastic NaN block",
                rounding="stochastic", seed=seed, counter=0)
# 0.3 scaled (each block [4.0, 0.3 x 31], s = 0): rounds to 0 or 0.5, up with
# probability frac = 0.6, so the mean is 0.3; sigma = 0.5 * sqrt(0.6 * 0.4).
nblk = 646
x = np.full((nblk, 32), 0.3, np.float32)
x[:, 0] = 4.0
c, s = R.quantize(x, 1, "even", rounding="stochastic", seed=1234, counter=5)
vals = c[:, 1:].reshape(-1)
n = vals.size
check(n >= 20000, "enough samples")
check(set(int(v) for v in np.unique(vals)) == {0x0, 0x1}, "0.3 rounds to 0 or 0.5")
check((c[:, 0] == 0x6).all() and (s == 127).all(), "4.0 stays, scale 127")
mean = 0.5 * np.count_nonzero(vals == 0x1) / n
sigma = 0.5 * np.sqrt(0.6 * 0.4)
check(abs(mean - 0.3) < 5 * sigma / np.sqrt(n), "SR mean %.5f close to 0.3" % mean)
c2, _ = R.quantize(x, 1, "even", rounding="stochastic", seed=1234, counter=5)
check(np.array_equal(c, c2), "SR reproducible")
c3, _ = R.quantize(x, 1, "even", rounding="stochastic", seed=1235, counter=5)
check(not np.array_equal(c, c3), "SR differs for another seed")
c4, _ = R.quantize(x, 1, "even", rounding="stochastic", seed=1234, counter=6)
check(not np.array_equal(c, c4), "SR differs for another counter")
c5, _ = R.quantize(x, 1, "even", rounding="stochastic", seed=-5, counter=-7)
c6, _ = R.quantize(x, 1, "even", rounding="stochastic", seed=2 ** 64 - 5, counter=2 ** 64 - 7)
check(np.array_equal(c5, c6), "i64 seed/counter: -5 is 2^64 - 5")
# same seed and counter, element i always sees the same word: the transpose (blocked
# along axis 0) rounds element (r, k) of x like element (r, k) of x itself only if
# their linear indices agree -- they do not, so the patterns differ
ct, _ = R.quantize(np.ascontiguousarray(x.T), 0, "even", rounding="stochastic",
                   seed=1234, counter=5)
check(not np.array_equal(ct.T, c), "SR bits follow the linear index of the tensor")

print("hand vectors (%s): %d checks passed" % (BACKEND, N_CHECKS))
