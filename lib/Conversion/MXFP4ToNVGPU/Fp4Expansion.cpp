//===- Fp4Expansion.cpp - FP4 codes to bf16 pairs, exactly ----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Fp4Expansion.h"

#include "mxfp4/Dialect/MXFP4/Utils/Numerics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::sm90;
namespace num = mlir::mxfp4::numerics;

Value sm90::codeWords(KernelBuilder &kb, Value bytes) {
  OpBuilder &b = kb.builder();
  auto bytesType = cast<MemRefType>(bytes.getType());
  auto type =
      MemRefType::get({bytesType.getNumElements() / 4}, b.getI32Type(),
                      MemRefLayoutAttrInterface(), bytesType.getMemorySpace());
  return memref::ViewOp::create(b, kb.location(), type, bytes, kb.idx(0),
                                ValueRange{});
}

Value sm90::scalePair(OpBuilder &b, Location loc, Value s) {
  auto i32 = [&](int64_t v) {
    return num::constant(b, loc, b.getI32Type(), v);
  };
  Value bits = arith::SelectOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, s, i32(0)),
      i32(0x40),
      arith::SelectOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, s, i32(255)),
          i32(0x7FC0), arith::ShLIOp::create(b, loc, s, i32(7))));
  Value packed = arith::OrIOp::create(
      b, loc, bits, arith::ShLIOp::create(b, loc, bits, i32(16)));
  return vector::BitCastOp::create(
      b, loc, VectorType::get({2}, b.getBF16Type()),
      vector::BroadcastOp::create(b, loc, VectorType::get({1}, b.getI32Type()),
                                  packed));
}

SmallVector<Value, 4> sm90::expandPairs(OpBuilder &b, Location loc, Value word,
                                        Value scale) {
  Type i32Type = b.getI32Type();
  auto i32 = [&](int64_t v) { return num::constant(b, loc, i32Type, v); };
  auto pairType = VectorType::get({2}, b.getBF16Type());
  auto asPair = [&](Value bits) {
    return vector::BitCastOp::create(
        b, loc, pairType,
        vector::BroadcastOp::create(b, loc, VectorType::get({1}, i32Type),
                                    bits));
  };
  Value twoTo126 = asPair(i32(0x7E807E80));
  // Codes 2, 3, 6, 7 at the places of 0, 1, 4, 5.
  Value rotated =
      arith::OrIOp::create(b, loc, arith::ShRUIOp::create(b, loc, word, i32(8)),
                           arith::ShLIOp::create(b, loc, word, i32(24)));
  SmallVector<Value, 4> pairs;
  for (int64_t q = 0; q < 4; ++q) {
    // Pair q holds codes q and q + 4 (nibbles 4q and 4q + 16, 16 bits
    // apart): one mask, one multiply (two shifts that do not overlap, so
    // they add without carries) and one mask move both codes' sign to bits
    // 15 and 31 and their e1 e0 m to bits 8..6 and 24..22. The multiply
    // goes to the FMA pipe, the masks to the integer pipe, which bounds the
    // expansion otherwise.
    bool odd = q % 2;
    Value codes = arith::AndIOp::create(b, loc, q < 2 ? word : rotated,
                                        i32(odd ? 0x00F000F0 : 0x000F000F));
    Value spread = arith::MulIOp::create(
        b, loc, codes, i32(odd ? (1 << 2) + (1 << 8) : (1 << 6) + (1 << 12)));
    Value pair = asPair(arith::AndIOp::create(b, loc, spread, i32(0x81C081C0)));
    pair = arith::MulFOp::create(b, loc, pair, twoTo126);
    pair = arith::MulFOp::create(b, loc, pair, scale);
    pairs.push_back(vector::ExtractOp::create(
        b, loc,
        vector::BitCastOp::create(b, loc, VectorType::get({1}, i32Type), pair),
        0));
  }
  return pairs;
}

void sm90::storePair(OpBuilder &b, Location loc, Value pair, Value buffer,
                     Value element) {
  vector::StoreOp::create(
      b, loc,
      vector::BitCastOp::create(
          b, loc, VectorType::get({2}, b.getBF16Type()),
          vector::BroadcastOp::create(
              b, loc, VectorType::get({1}, b.getI32Type()), pair)),
      buffer, ValueRange{element}, /*nontemporal=*/false, llvm::MaybeAlign(4));
}
