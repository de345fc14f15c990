//===- Numerics.h - IR builders for MXFP4 bit-level arithmetic --*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Builders for the integer formulations of docs/Semantics.md. Every function
// works on scalars and, where noted, on vectors of the same element types.
// They emit only arith ops, so every target lowers them identically.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_DIALECT_MXFP4_UTILS_NUMERICS_H
#define MXFP4_DIALECT_MXFP4_UTILS_NUMERICS_H

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Dialect.h"

#include "mlir/IR/Builders.h"
#include <array>

namespace mlir::mxfp4::numerics {

/// An integer or float constant of `type`, splatted if `type` is a vector.
Value constant(OpBuilder &b, Location loc, Type type, int64_t value);
Value constantF32(OpBuilder &b, Location loc, Type type, float value);

/// Returns `type`'s shape with element type `elementType` (scalar or vector).
Type withElementType(Type type, Type elementType);

/// The binary32 encoding of an f32 (scalar or vector) as i32.
Value bitsOf(OpBuilder &b, Location loc, Value f32);
/// The f32 whose encoding is the i32 `bits` (scalar or vector).
Value fromBits(OpBuilder &b, Location loc, Value bits);

/// The magnitude of the E2M1 code `code` in [0, 7] (i32) as an exact f32.
Value decodeE2M1Magnitude(OpBuilder &b, Location loc, Value code);

/// 2^(byte - 127) as f32 for an E8M0 byte in [0, 254] given as i32; byte 0
/// gives the subnormal 2^-127. Byte 255 (NaN) is the caller's business.
Value decodeE8M0(OpBuilder &b, Location loc, Value byte);

/// The E8M0 scale byte (as i32) of a block whose largest magnitude has the
/// encoding `amaxBits` (sign bit clear; >= 0x7F800000 means Inf/NaN).
Value scaleByte(OpBuilder &b, Location loc, Value amaxBits, ScaleRule rule);

/// Quantizes one block (vector<32xf32>) as docs/Semantics.md says: the E2M1
/// codes (vector<32xi32>, sign in bit 3; all 0 in a NaN block) and the scale
/// byte (i32). `random` (vector<32xi32>) asks for stochastic rounding driven
/// by those words; null for ties to even.
std::pair<Value, Value> quantizeBlock(OpBuilder &b, Location loc, Value block,
                                      ScaleRule rule, Value random);

/// quantizeBlock with the codes packed two to a byte, element 2j in the low
/// nibble of byte j (vector<16xi8>), as FP4 tensors are stored. The block
/// quantized is `block` times 2^`blockExponent` (a rotation's normalization
/// left to this function, which folds it into the scaling of the block's
/// values: the same bits, and the amax does not wait for it).
std::pair<Value, Value> quantizeBlockPacked(OpBuilder &b, Location loc,
                                            Value block, ScaleRule rule,
                                            Value random,
                                            int64_t blockExponent = 0);

/// Rounds f32 to bf16 with ties to even using integer arithmetic (NaNs stay
/// quiet NaNs with their sign), so no host conversion instruction (which may
/// flush subnormals) is involved. Scalar or vector.
Value truncToBF16(OpBuilder &b, Location loc, Value f32);

/// Rounds f32 to the nearest bf16 value (ties to even) and keeps it in f32.
/// Cheaper than truncToBF16 + extf, but a NaN may come out as an infinity:
/// use it only where NaN and Inf are treated alike (a quantized block).
Value roundToBF16InF32(OpBuilder &b, Location loc, Value f32);

/// Philox4x32-10 of counter (c0..c3) under key (k0, k1), all i32.
std::array<Value, 4> philox4x32x10(OpBuilder &b, Location loc,
                                   std::array<Value, 4> counter,
                                   std::array<Value, 2> key);

/// The Philox words that stochastic rounding draws for the elements whose
/// row-major linear indices are `linear` (vector<N x i64>) under `seed` and
/// `counter` (i64), as vector<N x i32> (docs/Semantics.md section 5).
Value stochasticRoundingWords(OpBuilder &b, Location loc, Value linear,
                              Value seed, Value counter);

/// The low and high 32 bits of an i64 (scalar or vector).
std::array<Value, 2> splitI64(OpBuilder &b, Location loc, Value v);

} // namespace mlir::mxfp4::numerics

#endif // MXFP4_DIALECT_MXFP4_UTILS_NUMERICS_H
