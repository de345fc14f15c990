//===- EmulatorNumerics.cpp - gfx950 emulator number formats --------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Bit-exact conversions between the element formats the kernels use, the
// E2M1 quantizer of packed_scaled_trunc and the scaled MFMA arithmetic.
// Everything goes through double, which holds every value of these formats
// exactly; a double result is then rounded once to the target format. For
// +, -, *, / of f16/bf16/f32 the double rounding this implies is innocuous
// (53 >= 2p + 2), so results equal a correctly rounded operation.
//
//===----------------------------------------------------------------------===//

#include "EmulatorImpl.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir::mxfp4::gfx950;
using namespace mlir::mxfp4::gfx950::emu;

bool emu::isArithFloat(ElemKind kind) {
  return kind == ElemKind::F16 || kind == ElemKind::BF16 ||
         kind == ElemKind::F32 || kind == ElemKind::F64;
}

uint32_t emu::floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float emu::bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

static double bitsToDouble(uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

static uint64_t doubleBits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

/// Decodes an IEEE-style binary format with `expBits` exponent and
/// `manBits` mantissa bits (f16: 5/10, bf16: 8/7).
static double decodeIeee(uint64_t bits, int expBits, int manBits) {
  bool negative = (bits >> (expBits + manBits)) & 1;
  uint64_t exponent = (bits >> manBits) & ((uint64_t(1) << expBits) - 1);
  uint64_t mantissa = bits & ((uint64_t(1) << manBits) - 1);
  int bias = (1 << (expBits - 1)) - 1;
  double magnitude;
  if (exponent == (uint64_t(1) << expBits) - 1)
    magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  else if (exponent == 0)
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - bias - manBits);
  else
    magnitude =
        std::ldexp(static_cast<double>(mantissa + (uint64_t(1) << manBits)),
                   static_cast<int>(exponent) - bias - manBits);
  return negative ? -magnitude : magnitude;
}

/// Rounds `x` to the IEEE-style format with `expBits`/`manBits`, round to
/// nearest even, overflow to infinity, NaN to a quiet NaN of the same sign.
static uint64_t roundToIeee(double x, int expBits, int manBits) {
  uint64_t signBit = uint64_t(1) << (expBits + manBits);
  uint64_t expMask = ((uint64_t(1) << expBits) - 1) << manBits;
  uint64_t sign = std::signbit(x) ? signBit : 0;
  if (std::isnan(x))
    return sign | expMask | (uint64_t(1) << (manBits - 1));
  double a = std::fabs(x);
  if (std::isinf(a))
    return sign | expMask;
  if (a == 0)
    return sign;
  int bias = (1 << (expBits - 1)) - 1;
  int minExp = 1 - bias;
  int e = std::max(std::ilogb(a), minExp);
  // Scale so that the retained bits are the integer part: exact (power of 2).
  double r = std::nearbyint(std::ldexp(a, manBits - e));
  if (r >= std::ldexp(1.0, manBits + 1)) {
    r = std::ldexp(r, -1);
    ++e;
  }
  if (e > bias)
    return sign | expMask;
  uint64_t mantissa = static_cast<uint64_t>(r);
  uint64_t hidden = uint64_t(1) << manBits;
  if (mantissa < hidden)
    return sign | mantissa; // subnormal
  return sign | (uint64_t(e + bias) << manBits) | (mantissa - hidden);
}

double emu::decodeE2M1(unsigned code) {
  static constexpr double kMagnitudes[8] = {0.0, 0.5, 1.0, 1.5,
                                            2.0, 3.0, 4.0, 6.0};
  double magnitude = kMagnitudes[code & 7];
  return (code & 8) ? -magnitude : magnitude;
}

double emu::scaleFromExponent(unsigned scaleExponent) {
  if (scaleExponent >= 255)
    return std::numeric_limits<double>::quiet_NaN();
  return std::ldexp(1.0, static_cast<int>(scaleExponent) - 127);
}

unsigned emu::quantizeE2M1(double value, unsigned scaleExponent) {
  unsigned sign = std::signbit(value) ? 8 : 0;
  if (std::isnan(value) || scaleExponent >= 255)
    return 7 | sign;
  double a =
      std::fabs(std::ldexp(value, 127 - static_cast<int>(scaleExponent)));
  // Midpoints between 0, 0.5, 1, 1.5, 2, 3, 4, 6; a tie goes to the even
  // code (0, 1.0, 2.0, 4.0), and everything above 5 saturates to 6.
  unsigned code;
  if (a <= 0.25)
    code = 0;
  else if (a < 0.75)
    code = 1;
  else if (a <= 1.25)
    code = 2;
  else if (a < 1.75)
    code = 3;
  else if (a <= 2.5)
    code = 4;
  else if (a < 3.5)
    code = 5;
  else if (a <= 5.0)
    code = 6;
  else
    code = 7;
  return code | sign;
}

double emu::toDouble(ElemKind kind, uint64_t bits) {
  switch (kind) {
  case ElemKind::F16:
    return decodeIeee(bits, 5, 10);
  case ElemKind::BF16:
    return bitsToFloat(static_cast<uint32_t>(bits << 16));
  case ElemKind::F32:
    return bitsToFloat(static_cast<uint32_t>(bits));
  case ElemKind::F64:
    return bitsToDouble(bits);
  case ElemKind::F8E8M0:
    return scaleFromExponent(static_cast<unsigned>(bits & 0xFF));
  case ElemKind::F4E2M1:
    return decodeE2M1(static_cast<unsigned>(bits & 0xF));
  default:
    return 0.0;
  }
}

uint64_t emu::fromDouble(ElemKind kind, double value) {
  switch (kind) {
  case ElemKind::F16:
    return roundToIeee(value, 5, 10);
  case ElemKind::BF16:
    return roundToIeee(value, 8, 7);
  case ElemKind::F32:
    return floatBits(static_cast<float>(value));
  case ElemKind::F64:
    return doubleBits(value);
  case ElemKind::F8E8M0: {
    // The f32 exponent field: floor(log2 |x|), 0 for zero and f32
    // subnormals, 255 for Inf/NaN and values beyond f32.
    double a = std::fabs(value);
    if (std::isnan(a) || std::isinf(a))
      return 255;
    if (a < std::ldexp(1.0, -126))
      return 0;
    int e = std::ilogb(a) + 127;
    return e > 254 ? 255 : static_cast<uint64_t>(e);
  }
  default:
    return 0;
  }
}

void emu::computeScaledMfma(MfmaShape shape, const uint8_t *aCodes,
                            const uint8_t *bCodes, const uint8_t *aScales,
                            const uint8_t *bScales, uint32_t *acc) {
  // E2M1 values times two are the integers below, so a block's 32 products
  // sum exactly in an int: the true sum is that / 4.
  static constexpr int8_t kTwice[16] = {0, 1,  2,  3,  4,  6,  8,  12,
                                        0, -1, -2, -3, -4, -6, -8, -12};
  MfmaGeometry g = getGeometry(shape);
  const int64_t kBlocks = g.kBlocks;
  // [row][kBlock][32] doubled values and [row][kBlock] scale bytes.
  int8_t a[32 * 4 * 32], b[32 * 4 * 32];
  uint8_t sa[32 * 4], sb[32 * 4];
  for (int64_t lane = 0; lane < kWaveSize; ++lane) {
    OperandSlot slot = getOperandSlot(shape, lane);
    int64_t base = (slot.row * kBlocks + slot.kBlock) * kScaleBlockSize;
    for (int64_t e = 0; e < kScaleBlockSize; ++e) {
      a[base + e] = kTwice[aCodes[lane * kScaleBlockSize + e] & 15];
      b[base + e] = kTwice[bCodes[lane * kScaleBlockSize + e] & 15];
    }
    sa[slot.row * kBlocks + slot.kBlock] = aScales[lane];
    sb[slot.row * kBlocks + slot.kBlock] = bScales[lane];
  }
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      AccumulatorLocation loc = getAccumulatorLocation(shape, i, j);
      uint32_t &slot = acc[loc.lane * g.accRegisters + loc.reg];
      float d = bitsToFloat(slot);
      for (int64_t kb = 0; kb < kBlocks; ++kb) {
        const int8_t *x = a + (i * kBlocks + kb) * kScaleBlockSize;
        const int8_t *y = b + (j * kBlocks + kb) * kScaleBlockSize;
        int sum = 0;
        for (int64_t e = 0; e < kScaleBlockSize; ++e)
          sum += x[e] * y[e];
        unsigned ea = sa[i * kBlocks + kb], eb = sb[j * kBlocks + kb];
        float c;
        if (ea == 255 || eb == 255)
          c = std::numeric_limits<float>::quiet_NaN();
        else
          // Exact in double; one rounding to f32 (subnormals included).
          c = static_cast<float>(std::ldexp(static_cast<double>(sum),
                                            static_cast<int>(ea + eb) - 256));
        d = d + c;
      }
      slot = floatBits(d);
    }
  }
}

void emu::computeBf16Mfma(Bf16MfmaShape shape, const uint16_t *a,
                          const uint16_t *b, uint32_t *acc) {
  Bf16MfmaGeometry g = getGeometry(shape);
  // [row][k] values of A (m x k) and B (n x k), exact in f32.
  float x[32 * 32], y[32 * 32];
  for (int64_t lane = 0; lane < kWaveSize; ++lane) {
    for (int64_t e = 0; e < g.elementsPerLane; ++e) {
      Bf16OperandSlot slot = getBf16OperandSlot(shape, lane, e);
      uint16_t av = a[lane * g.elementsPerLane + e];
      uint16_t bv = b[lane * g.elementsPerLane + e];
      x[slot.row * g.k + slot.k] = bitsToFloat(uint32_t(av) << 16);
      y[slot.row * g.k + slot.k] = bitsToFloat(uint32_t(bv) << 16);
    }
  }
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      AccumulatorLocation loc = getBf16AccumulatorLocation(shape, i, j);
      uint32_t &slot = acc[loc.lane * g.accRegisters + loc.reg];
      float d = bitsToFloat(slot);
      // Each product exact, added with one f32 rounding: a fused
      // multiply-add per K step, in increasing K order.
      for (int64_t k = 0; k < g.k; ++k)
        d = std::fma(x[i * g.k + k], y[j * g.k + k], d);
      slot = floatBits(d);
    }
  }
}
