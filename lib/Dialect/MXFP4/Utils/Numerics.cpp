//===- Numerics.cpp - IR builders for MXFP4 bit-level arithmetic ----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Dialect/MXFP4/Utils/Numerics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::numerics;

Type numerics::withElementType(Type type, Type elementType) {
  if (auto vec = dyn_cast<VectorType>(type))
    return vec.clone(elementType);
  return elementType;
}

static TypedAttr scalarOrSplat(Type type, Attribute scalar) {
  if (auto vec = dyn_cast<VectorType>(type))
    return DenseElementsAttr::get(vec, scalar);
  return cast<TypedAttr>(scalar);
}

Value numerics::constant(OpBuilder &b, Location loc, Type type, int64_t value) {
  Type elem = getElementTypeOrSelf(type);
  // Callers write bit patterns such as 0xD2511F53; reinterpret them as the
  // signed value of the element width so the attribute is well formed.
  unsigned width = elem.getIntOrFloatBitWidth();
  if (width < 64)
    value = llvm::SignExtend64(static_cast<uint64_t>(value), width);
  return arith::ConstantOp::create(
      b, loc, scalarOrSplat(type, b.getIntegerAttr(elem, value)));
}

Value numerics::constantF32(OpBuilder &b, Location loc, Type type,
                            float value) {
  return arith::ConstantOp::create(
      b, loc, scalarOrSplat(type, b.getF32FloatAttr(value)));
}

Value numerics::bitsOf(OpBuilder &b, Location loc, Value f32) {
  return arith::BitcastOp::create(
      b, loc, withElementType(f32.getType(), b.getI32Type()), f32);
}

Value numerics::fromBits(OpBuilder &b, Location loc, Value bits) {
  return arith::BitcastOp::create(
      b, loc, withElementType(bits.getType(), b.getF32Type()), bits);
}

Value numerics::decodeE2M1Magnitude(OpBuilder &b, Location loc, Value code) {
  Type t = code.getType();
  auto c = [&](int64_t v) { return constant(b, loc, t, v); };
  // Code bits e e m: e == 0 is 0 or 0.5; otherwise 2^(e-1) * (1 + m/2),
  // i.e. exponent field e + 126 and mantissa bit 22 = m.
  Value e = arith::ShRUIOp::create(b, loc, code, c(1));
  Value m = arith::AndIOp::create(b, loc, code, c(1));
  Value normal = arith::OrIOp::create(
      b, loc,
      arith::ShLIOp::create(b, loc, arith::AddIOp::create(b, loc, e, c(126)),
                            c(23)),
      arith::ShLIOp::create(b, loc, m, c(22)));
  Value half = arith::MulIOp::create(b, loc, m, c(0x3F000000));
  Value isSub =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, e, c(0));
  return fromBits(b, loc, arith::SelectOp::create(b, loc, isSub, half, normal));
}

Value numerics::decodeE8M0(OpBuilder &b, Location loc, Value byte) {
  Type t = byte.getType();
  Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, byte,
                                       constant(b, loc, t, 0));
  Value normal = arith::ShLIOp::create(b, loc, byte, constant(b, loc, t, 23));
  return fromBits(b, loc,
                  arith::SelectOp::create(
                      b, loc, isZero, constant(b, loc, t, 0x00400000), normal));
}

Value numerics::scaleByte(OpBuilder &b, Location loc, Value amaxBits,
                          ScaleRule rule) {
  Type t = amaxBits.getType();
  auto c = [&](int64_t v) { return constant(b, loc, t, v); };
  auto cmp = [&](arith::CmpIPredicate p, Value l, Value r) {
    return arith::CmpIOp::create(b, loc, p, l, r);
  };
  auto bump = [&](Value s, Value cond) {
    return arith::AddIOp::create(b, loc, s,
                                 arith::ExtUIOp::create(b, loc, t, cond));
  };
  Value mantissa = arith::AndIOp::create(b, loc, amaxBits, c(0x7FFFFF));
  Value exponent = arith::ShRUIOp::create(b, loc, amaxBits, c(23));
  Value s; // unbiased scale exponent, before the clamp
  switch (rule) {
  case ScaleRule::floor:
    s = arith::SubIOp::create(b, loc, exponent, c(129));
    break;
  case ScaleRule::even: {
    // Round amax to one mantissa bit (ties up): the exponent grows iff the
    // mantissa is >= 0x600000.
    Value rounded = arith::ShRUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, amaxBits, c(0x200000)), c(23));
    s = arith::SubIOp::create(b, loc, rounded, c(129));
    break;
  }
  case ScaleRule::ceil:
    s = bump(arith::SubIOp::create(b, loc, exponent, c(129)),
             cmp(arith::CmpIPredicate::ne, mantissa, c(0)));
    break;
  case ScaleRule::rceil:
    s = bump(arith::SubIOp::create(b, loc, exponent, c(129)),
             cmp(arith::CmpIPredicate::ugt, mantissa, c(0x400000)));
    break;
  }
  s = arith::MaxSIOp::create(b, loc, s, c(-127));
  s = arith::MinSIOp::create(b, loc, s, c(127));
  Value byte = arith::AddIOp::create(b, loc, s, c(127));
  Value nonFinite = cmp(arith::CmpIPredicate::uge, amaxBits, c(0x7F800000));
  return arith::SelectOp::create(b, loc, nonFinite, c(255), byte);
}

/// Sum over `thresholds` of (absA > t) or (absA >= t), as i32.
static Value countAbove(OpBuilder &b, Location loc, Value absA,
                        ArrayRef<std::pair<float, bool>> thresholds) {
  Type i32 = withElementType(absA.getType(), b.getI32Type());
  Value sum = constant(b, loc, i32, 0);
  for (auto [t, inclusive] : thresholds) {
    Value above = arith::CmpFOp::create(
        b, loc,
        inclusive ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OGT, absA,
        constantF32(b, loc, absA.getType(), t));
    sum = arith::AddIOp::create(b, loc, sum,
                                arith::ExtUIOp::create(b, loc, i32, above));
  }
  return sum;
}

/// Adds to a binary32 encoding (i32, scalar or vector) what rounds it to the
/// nearest multiple of 2^`bit` with ties to even: the bits below `bit` are
/// then to be dropped. A carry moves into the exponent by itself.
static Value addRoundingBias(OpBuilder &b, Location loc, Value bits,
                             int64_t bit) {
  Type t = bits.getType();
  Value lsb = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, constant(b, loc, t, bit)),
      constant(b, loc, t, 1));
  Value bias = arith::AddIOp::create(
      b, loc, lsb, constant(b, loc, t, (int64_t(1) << (bit - 1)) - 1));
  return arith::AddIOp::create(b, loc, bits, bias);
}

/// The E2M1 magnitude code of |a| with ties to even and saturation at 6,
/// shifted left by 22, in integer arithmetic (i32, scalar or vector).
/// `absA` is a non-negative f32 (a NaN gives 7). The CPU's form: x86 cores
/// slow down on the subnormal results of the floating-point form
/// (measured: the CPU quantize at half speed).
static Value roundNearestEvenShiftedInt(OpBuilder &b, Location loc,
                                        Value absA) {
  Type i32 = withElementType(absA.getType(), b.getI32Type());
  auto c = [&](int64_t v) { return constant(b, loc, i32, v); };
  // |a| >= 1: round the f32 mantissa to one bit with ties to even; a carry
  // moves into the exponent by itself. Then (exponent << 1 | mantissa bit)
  // minus 252 is the code (1.0 -> 2), saturated at 7 (6.0).
  Value rounded = addRoundingBias(b, loc, bitsOf(b, loc, absA), 22);
  Value normal = arith::MinSIOp::create(
      b, loc,
      arith::SubIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, rounded, c(22)), c(252)),
      c(7));
  // |a| < 1: multiples of 0.5. Adding 2^22 (whose ulp is 0.5) rounds to the
  // nearest multiple with ties to even; the encoding difference counts them.
  Value magic = constantF32(b, loc, absA.getType(), 0x1p22f);
  Value small = arith::SubIOp::create(
      b, loc, bitsOf(b, loc, arith::AddFOp::create(b, loc, absA, magic)),
      c(0x4A800000));
  Value isSmall =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, absA,
                            constantF32(b, loc, absA.getType(), 1.0f));
  return arith::ShLIOp::create(
      b, loc, arith::SelectOp::create(b, loc, isSmall, small, normal), c(22));
}

/// roundNearestEvenShiftedInt in floating-point arithmetic, the same bits
/// (checked on every non-negative f32): the GPU kernels' form. Without
/// `saturate` it takes |a| below 7 only (anything else rounds to 8 or
/// beyond): the scale rules but floor scale a block's amax below 7.
static Value roundNearestEvenShifted(OpBuilder &b, Location loc, Value absA,
                                     bool saturate) {
  Type i32 = withElementType(absA.getType(), b.getI32Type());
  Type f32 = absA.getType();
  auto c = [&](int64_t v) { return constant(b, loc, i32, v); };
  auto cf = [&](float v) { return constantF32(b, loc, f32, v); };
  // Mostly floating-point operations, which GPUs issue to a pipe that the
  // bit manipulation around them leaves idle. Saturating, everything above
  // 6 becomes 6: clamp first (an integer min of encodings also sends NaN to
  // 6; without the clamp a NaN block's codes are garbage, then zeroed).
  Value clamped =
      saturate ? fromBits(b, loc,
                          arith::MinSIOp::create(b, loc, bitsOf(b, loc, absA),
                                                 c(0x40C00000)))
               : absA;
  // The grid's spacing is 2^(e-1) in the binade [2^e, 2^(e+1)), e >= 0, and
  // 0.5 below 1: adding M = 2^(e+22), whose ulp is that spacing, rounds to
  // the grid with ties to even in one IEEE addition, and subtracting M
  // again is exact. M is the binade times 2^22, an exact product, so a
  // fused multiply-add gives the addition's bits whether or not the target
  // fuses it, with no multiply of its own. (Not one fused multiply-add on
  // the value times 2^-126: a split product would round in the subnormal
  // range.)
  Value binade = fromBits(
      b, loc,
      arith::AndIOp::create(b, loc,
                            arith::MaxSIOp::create(
                                b, loc, bitsOf(b, loc, clamped), c(0x3F800000)),
                            c(0x7F800000)));
  Value sum = vector::FMAOp::create(b, loc, binade, cf(0x1p22f), clamped);
  Value rounded = vector::FMAOp::create(b, loc, binade, cf(-0x1p22f), sum);
  // The grid value times 2^-126 is exact (0.5 becomes the subnormal 2^-127)
  // and its encoding is the code shifted left by 22.
  return bitsOf(b, loc, arith::MulFOp::create(b, loc, rounded, cf(0x1p-126f)));
}

/// The E2M1 magnitude code (i32 in [0, 7]) of |a| with stochastic rounding
/// driven by the 32-bit random word `random` (i32).
static Value roundStochastic(OpBuilder &b, Location loc, Value absA,
                             Value random) {
  Type i32 = withElementType(absA.getType(), b.getI32Type());
  auto c = [&](int64_t v) { return constant(b, loc, i32, v); };
  Value low = countAbove(b, loc, absA,
                         {{0.5f, true},
                          {1.0f, true},
                          {1.5f, true},
                          {2.0f, true},
                          {3.0f, true},
                          {4.0f, true},
                          {6.0f, true}});
  Value saturated =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, low, c(7));
  // Below 6 the upper neighbour exists; clamp only to keep the decode of the
  // unused lane in range.
  Value high = arith::MinUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, low, c(1)), c(7));
  Value lo = decodeE2M1Magnitude(b, loc, low);
  Value gap =
      arith::SubFOp::create(b, loc, decodeE2M1Magnitude(b, loc, high), lo);
  // Exact: the gap is a power of two and |a| - lo a multiple of ulp(|a|).
  Value frac = arith::DivFOp::create(
      b, loc, arith::SubFOp::create(b, loc, absA, lo), gap);
  Value odd = arith::OrIOp::create(
      b, loc,
      arith::ShLIOp::create(b, loc,
                            arith::ShRUIOp::create(b, loc, random, c(9)), c(1)),
      c(1));
  Value threshold = arith::MulFOp::create(
      b, loc, arith::UIToFPOp::create(b, loc, absA.getType(), odd),
      constantF32(b, loc, absA.getType(), 0x1p-24f));
  Value up =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, frac, threshold);
  Value rounded = arith::AddIOp::create(
      b, loc, low, arith::ExtUIOp::create(b, loc, i32, up));
  return arith::SelectOp::create(b, loc, saturated, c(7), rounded);
}

namespace {
/// A block's rounding before its codes are assembled.
struct RoundedBlock {
  Value bits;       // the inputs' encodings (vector<32xi32>)
  Value magnitudes; // the magnitude codes shifted left by 22
  Value byte;       // the scale byte (i32)
  Value nanBlock;   // i1: the codes are all 0
};
} // namespace

/// `floatRounding` picks the floating-point form of ties to even. The block
/// is `block` times 2^`blockExponent`.
static RoundedBlock roundBlock(OpBuilder &b, Location loc, Value block,
                               ScaleRule rule, Value random, bool floatRounding,
                               int64_t blockExponent) {
  auto vecI32 = VectorType::get({32}, b.getI32Type());
  Type i32 = b.getI32Type();
  auto cv = [&](int64_t v) { return constant(b, loc, vecI32, v); };
  auto c = [&](int64_t v) { return constant(b, loc, i32, v); };
  Value bits = bitsOf(b, loc, block);
  Value magnitudeBits = arith::AndIOp::create(b, loc, bits, cv(0x7FFFFFFF));
  // An integer max of sign-cleared encodings orders magnitudes and puts Inf
  // and NaN above every finite value.
  Value amax = vector::ReductionOp::create(b, loc, vector::CombiningKind::MAXSI,
                                           magnitudeBits);
  // 2^blockExponent (f32), if the block is scaled. Rounding is monotonic:
  // the largest scaled magnitude is the largest magnitude scaled (a NaN
  // stays a NaN).
  Type f32 = b.getF32Type();
  Value blockScale;
  if (blockExponent) {
    Value amaxValue = fromBits(b, loc, amax);
    blockScale = constantF32(b, loc, f32, std::ldexp(1.0f, blockExponent));
    amax = bitsOf(b, loc, arith::MulFOp::create(b, loc, amaxValue, blockScale));
  }
  Value byte = scaleByte(b, loc, amax, rule);
  // 2^(exponent - s) has exponent field 254 + exponent - byte: for exponent
  // 0 a normal f32 for every finite block.
  auto powerOfTwo = [&](int64_t exponent) {
    return fromBits(b, loc,
                    arith::ShLIOp::create(
                        b, loc,
                        arith::SubIOp::create(b, loc, c(254 + exponent), byte),
                        c(23)));
  };
  // |x| * 2^-s is |x * 2^-s|: scale the magnitudes.
  Value absX = fromBits(b, loc, magnitudeBits);
  auto times = [&](Value v, Value factor) -> Value {
    return arith::MulFOp::create(
        b, loc, v,
        vector::BroadcastOp::create(b, loc, block.getType(), factor));
  };
  Value absA;
  if (!blockExponent) {
    absA = times(absX, powerOfTwo(0));
  } else {
    // Multiplying by 2^(blockExponent - s) gives the same bits as by
    // 2^blockExponent, then by 2^-s, wherever |x| * 2^blockExponent is
    // exact. It is inexact only below 2^-126, and such elements scale to
    // below 2^-31 (code 0 both ways, stochastic rounding included) where
    // the scale byte is at least 32; 2^(blockExponent - s) must also be a
    // normal f32. So the factors, chosen per block, are 2^(blockExponent -
    // s) and 1 there, else 2^blockExponent and 2^-s: still two
    // multiplications an element, but the amax no longer waits for the
    // rotation's normalization (one multiplication where the block allows,
    // as a branch, came out slower: LLVM turns a branch over vector
    // operations into both sides and a select).
    Value fast = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, byte, c(32)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, byte,
                              c(253 + blockExponent)));
    Value first = arith::SelectOp::create(
        b, loc, fast, powerOfTwo(blockExponent), blockScale);
    Value second = arith::SelectOp::create(
        b, loc, fast, constantF32(b, loc, f32, 1.0f), powerOfTwo(0));
    absA = times(times(absX, first), second);
  }
  Value codes =
      random ? arith::ShLIOp::create(
                   b, loc, roundStochastic(b, loc, absA, random), cv(22))
      : floatRounding
          ? roundNearestEvenShifted(b, loc, absA, rule == ScaleRule::floor)
          : roundNearestEvenShiftedInt(b, loc, absA);
  Value nanBlock =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, byte, c(255));
  return {bits, codes, byte, nanBlock};
}

std::pair<Value, Value> numerics::quantizeBlock(OpBuilder &b, Location loc,
                                                Value block, ScaleRule rule,
                                                Value random) {
  auto vecI32 = VectorType::get({32}, b.getI32Type());
  auto cv = [&](int64_t v) { return constant(b, loc, vecI32, v); };
  RoundedBlock r = roundBlock(b, loc, block, rule, random,
                              /*floatRounding=*/false, /*blockExponent=*/0);
  Value sign = arith::ShLIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, r.bits, cv(31)), cv(3));
  Value code = arith::OrIOp::create(
      b, loc, sign, arith::ShRUIOp::create(b, loc, r.magnitudes, cv(22)));
  code = arith::SelectOp::create(b, loc, r.nanBlock, cv(0), code);
  return {code, r.byte};
}

std::pair<Value, Value> numerics::quantizeBlockPacked(OpBuilder &b,
                                                      Location loc, Value block,
                                                      ScaleRule rule,
                                                      Value random,
                                                      int64_t blockExponent) {
  auto vecI32 = VectorType::get({32}, b.getI32Type());
  auto cv = [&](int64_t v) { return constant(b, loc, vecI32, v); };
  RoundedBlock r = roundBlock(b, loc, block, rule, random,
                              /*floatRounding=*/true, blockExponent);
  // The sign joins the magnitude as bit 25: element i's nibble is at bits
  // 22..25, and one shift moves it to bits 4(i % 8).. of its word.
  Value nibbles = arith::OrIOp::create(
      b, loc, r.magnitudes,
      arith::AndIOp::create(b, loc,
                            arith::ShRUIOp::create(b, loc, r.bits, cv(6)),
                            cv(0x02000000)));
  SmallVector<int32_t> right, left;
  for (int64_t i = 0; i < 32; ++i) {
    int64_t shift = 4 * (i % 8) - 22;
    right.push_back(shift < 0 ? -shift : 0);
    left.push_back(shift > 0 ? shift : 0);
  }
  auto shifts = [&](ArrayRef<int32_t> amounts) {
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(vecI32, amounts));
  };
  Value placed = arith::ShLIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, nibbles, shifts(right)),
      shifts(left));
  // OR each word's eight nibbles together, halving the lanes each round
  // (1-D shuffles: GPU targets do not lower n-D vectors).
  Value words = placed;
  for (int64_t width = 8; width > 1; width /= 2) {
    int64_t lanes = cast<VectorType>(words.getType()).getDimSize(0);
    SmallVector<int64_t> low, high;
    for (int64_t i = 0; i < lanes; ++i)
      (i % width < width / 2 ? low : high).push_back(i);
    words = arith::OrIOp::create(
        b, loc, vector::ShuffleOp::create(b, loc, words, words, low),
        vector::ShuffleOp::create(b, loc, words, words, high));
  }
  auto wordsType = cast<VectorType>(words.getType());
  words = arith::SelectOp::create(b, loc, r.nanBlock,
                                  constant(b, loc, wordsType, 0), words);
  return {vector::BitCastOp::create(
              b, loc, VectorType::get({16}, b.getI8Type()), words),
          r.byte};
}

Value numerics::truncToBF16(OpBuilder &b, Location loc, Value f32) {
  Type i32 = withElementType(f32.getType(), b.getI32Type());
  auto c = [&](int64_t v) { return constant(b, loc, i32, v); };
  Value bits = bitsOf(b, loc, f32);
  Value rounded =
      arith::ShRUIOp::create(b, loc, addRoundingBias(b, loc, bits, 16), c(16));
  Value quietNaN = arith::OrIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, bits, c(16)), c(0x40));
  Value isNaN =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, f32, f32);
  Value result = arith::SelectOp::create(b, loc, isNaN, quietNaN, rounded);
  Value narrow = arith::TruncIOp::create(
      b, loc, withElementType(f32.getType(), b.getI16Type()), result);
  return arith::BitcastOp::create(
      b, loc, withElementType(f32.getType(), b.getBF16Type()), narrow);
}

Value numerics::roundToBF16InF32(OpBuilder &b, Location loc, Value f32) {
  Type i32 = withElementType(f32.getType(), b.getI32Type());
  auto c = [&](int64_t v) { return constant(b, loc, i32, v); };
  Value rounded = addRoundingBias(b, loc, bitsOf(b, loc, f32), 16);
  return fromBits(b, loc,
                  arith::AndIOp::create(b, loc, rounded, c(0xFFFF0000)));
}

std::array<Value, 4> numerics::philox4x32x10(OpBuilder &b, Location loc,
                                             std::array<Value, 4> ctr,
                                             std::array<Value, 2> key) {
  Type t = ctr[0].getType();
  auto c = [&](int64_t v) { return constant(b, loc, t, v); };
  Value m0 = c(0xD2511F53), m1 = c(0xCD9E8D57);
  Value w0 = c(0x9E3779B9), w1 = c(0xBB67AE85);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] = arith::AddIOp::create(b, loc, key[0], w0);
      key[1] = arith::AddIOp::create(b, loc, key[1], w1);
    }
    auto p0 = arith::MulUIExtendedOp::create(b, loc, m0, ctr[0]);
    auto p1 = arith::MulUIExtendedOp::create(b, loc, m1, ctr[2]);
    Value hi1 = p1.getHigh(), lo1 = p1.getLow();
    Value hi0 = p0.getHigh(), lo0 = p0.getLow();
    ctr = {arith::XOrIOp::create(
               b, loc, arith::XOrIOp::create(b, loc, hi1, ctr[1]), key[0]),
           lo1,
           arith::XOrIOp::create(
               b, loc, arith::XOrIOp::create(b, loc, hi0, ctr[3]), key[1]),
           lo0};
  }
  return ctr;
}

std::array<Value, 2> numerics::splitI64(OpBuilder &b, Location loc, Value v) {
  Type i32 = withElementType(v.getType(), b.getI32Type());
  Value lo = arith::TruncIOp::create(b, loc, i32, v);
  Value hi = arith::TruncIOp::create(
      b, loc, i32,
      arith::ShRUIOp::create(b, loc, v, constant(b, loc, v.getType(), 32)));
  return {lo, hi};
}

Value numerics::stochasticRoundingWords(OpBuilder &b, Location loc,
                                        Value linear, Value seed,
                                        Value counter) {
  Type vecI64 = linear.getType();
  auto vecI32 = cast<VectorType>(vecI64).clone(b.getI32Type());
  Value group =
      arith::ShRUIOp::create(b, loc, linear, constant(b, loc, vecI64, 2));
  auto [g0, g1] = splitI64(b, loc, group);
  auto broadcast = [&](Value scalar) -> Value {
    return vector::BroadcastOp::create(b, loc, vecI32, scalar);
  };
  auto [n0, n1] = splitI64(b, loc, counter);
  auto [k0, k1] = splitI64(b, loc, seed);
  std::array<Value, 4> words =
      philox4x32x10(b, loc, {g0, g1, broadcast(n0), broadcast(n1)},
                    {broadcast(k0), broadcast(k1)});
  Value lane = arith::TruncIOp::create(
      b, loc, vecI32,
      arith::AndIOp::create(b, loc, linear, constant(b, loc, vecI64, 3)));
  Value word = words[3];
  for (int64_t i = 2; i >= 0; --i) {
    Value isLane = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                         constant(b, loc, vecI32, i));
    word = arith::SelectOp::create(b, loc, isLane, words[i], word);
  }
  return word;
}
