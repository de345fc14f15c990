//===- Rotation.cpp - in-register Walsh-Hadamard rotations ----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Dialect/MXFP4/Utils/Rotation.h"

#include "mxfp4/Dialect/MXFP4/Utils/Numerics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mxfp4;
namespace num = mlir::mxfp4::numerics;

/// The normalization 1/sqrt(n) rounded to f32 (exact for n = 16 and 64).
static float normalization(int64_t n) {
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(n)));
}

std::optional<int64_t> mxfp4::normalizationExponent(int64_t n) {
  int64_t e = llvm::Log2_64(n);
  if (n <= 1 || (int64_t(1) << e) != n || e % 2)
    return std::nullopt;
  return -e / 2;
}

SmallVector<int64_t> mxfp4::evenOddLanes(int64_t lanes) {
  SmallVector<int64_t> elements;
  for (int64_t parity = 0; parity < 2; ++parity)
    for (int64_t i = parity; i < lanes; i += 2)
      elements.push_back(i);
  return elements;
}

Value mxfp4::buildRotationSigns(OpBuilder &b, Location loc, int64_t n,
                                int64_t lanes, Value seed, Value step,
                                ArrayRef<int64_t> laneElements) {
  Type i32 = b.getI32Type();
  Value all = num::constant(b, loc, i32, 0xFFFFFFFF);
  Value t = step ? step : num::constant(b, loc, b.getI64Type(), 0);
  auto [t0, t1] = num::splitI64(b, loc, t);
  auto [k0, k1] = num::splitI64(b, loc, seed);
  std::array<Value, 4> words =
      num::philox4x32x10(b, loc, {all, all, t0, t1}, {k0, k1});
  auto vecI32 = VectorType::get({lanes}, i32);
  SmallVector<Value> perLane;
  SmallVector<int32_t> shifts;
  for (int64_t lane = 0; lane < lanes; ++lane) {
    int64_t j = (laneElements.empty() ? lane : laneElements[lane]) % n;
    perLane.push_back(words[j / 32]);
    shifts.push_back(j % 32);
  }
  Value packed = vector::FromElementsOp::create(b, loc, vecI32, perLane);
  Value shifted = arith::ShRUIOp::create(
      b, loc, packed,
      arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(vecI32, ArrayRef(shifts))));
  Value bit =
      arith::AndIOp::create(b, loc, shifted, num::constant(b, loc, vecI32, 1));
  Value signBits = arith::OrIOp::create(
      b, loc,
      arith::ShLIOp::create(b, loc, bit, num::constant(b, loc, vecI32, 31)),
      num::constant(b, loc, vecI32, 0x3F800000));
  return num::fromBits(b, loc, signBits);
}

Value mxfp4::rotateTiles(OpBuilder &b, Location loc, Value v, int64_t n,
                         Value signs, bool inverse,
                         ArrayRef<int64_t> laneElements, bool normalize) {
  int64_t lanes = cast<VectorType>(v.getType()).getDimSize(0);
  SmallVector<int64_t> elementOf(lanes), laneOf(lanes);
  for (int64_t i = 0; i < lanes; ++i) {
    elementOf[i] = laneElements.empty() ? i : laneElements[i];
    laneOf[elementOf[i]] = i;
  }
  if (signs && !inverse)
    v = arith::MulFOp::create(b, loc, v, signs);
  // Stage h pairs element i with element i ^ h inside aligned groups of
  // 2h <= n, so running the stages below n over the whole vector rotates
  // each tile. The lower element gets v[i] + v[i+h] and the upper one
  // v[i-h] - v[i], written as
  // fma(v[i], +-1, v[i^h]): the product is exact, so the fused operation
  // rounds once like the reference's add or subtract and gives the same bits,
  // with one permutation per stage.
  for (int64_t h = 1; h < n; h *= 2) {
    SmallVector<int64_t> partner;
    SmallVector<float> sign;
    for (int64_t i = 0; i < lanes; ++i) {
      partner.push_back(laneOf[elementOf[i] ^ h]);
      sign.push_back((elementOf[i] & h) ? -1.0f : 1.0f);
    }
    Value swapped = vector::ShuffleOp::create(b, loc, v, v, partner);
    Value signs = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(cast<VectorType>(v.getType()), ArrayRef(sign)));
    v = vector::FMAOp::create(b, loc, v, signs, swapped);
  }
  if (normalize)
    v = arith::MulFOp::create(
        b, loc, v, num::constantF32(b, loc, v.getType(), normalization(n)));
  if (signs && inverse)
    v = arith::MulFOp::create(b, loc, v, signs);
  return v;
}
