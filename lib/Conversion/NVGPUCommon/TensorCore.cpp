//===- TensorCore.cpp - warp-level bf16 MMAs on Hopper --------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Fragment layouts of mma.m16n8k16 (PTX ISA, "Matrix Fragments for
// mma.m16n8k16 with floating point type"): A's four registers hold the 8 x 8
// matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15),
// (rows 8-15, k 8-15); an `ldmatrix.x4` over two n8 tiles of B gives (n 0-7,
// k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15). Lane 8q + r
// addresses row r of matrix q; a transposed tile ([k][rows]) is read with
// `ldmatrix.trans`, whose lanes address its k rows instead.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Conversion/NVGPUCommon/TensorCore.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::kernels;
using namespace mlir::mxfp4::sm90;

Value SharedTile::offset(KernelBuilder &kb, Value row, Value k) const {
  return kContiguous ? kb.add(kb.mul(row, stride()), k)
                     : kb.add(kb.mul(k, stride()), row);
}

Value sm90::sharedAddress(KernelBuilder &kb, Value memref, Value element) {
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(
      kb.builder(), kb.location(), memref);
  return kb.add(base, kb.mul(element, 2));
}

Value sm90::sharedPointer(KernelBuilder &kb, Value address) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  Value i32 = arith::IndexCastOp::create(b, loc, b.getI32Type(), address);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), i32);
}

SmallVector<Value> sm90::loadFragment(KernelBuilder &kb, const SharedTile &t,
                                      Value row, Value k, bool aOrder) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  Value lane = kb.rem(kb.threadId(), 32);
  Value q = kb.div(lane, 8), r = kb.rem(lane, 8);
  Value rowHi = aOrder ? kb.rem(q, 2) : kb.div(q, 2);
  Value kHi = aOrder ? kb.div(q, 2) : kb.rem(q, 2);
  Value laneRow =
      t.kContiguous ? kb.add(kb.mul(rowHi, 8), r) : kb.mul(rowHi, 8);
  Value laneK = t.kContiguous ? kb.mul(kHi, 8) : kb.add(kb.mul(kHi, 8), r);
  Value element = t.offset(kb, kb.add(row, laneRow), kb.add(k, laneK));

  Value pointer = sharedPointer(kb, sharedAddress(kb, t.memref, element));
  Type i32 = b.getI32Type();
  auto structType =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {i32, i32, i32, i32});
  Value m = NVVM::LdMatrixOp::create(
      b, loc, structType, pointer, 4,
      t.kContiguous ? NVVM::MMALayout::row : NVVM::MMALayout::col,
      NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
      NVVM::LdStMatrixEltType::B16);
  SmallVector<Value> regs;
  for (int64_t i = 0; i < 4; ++i)
    regs.push_back(LLVM::ExtractValueOp::create(b, loc, m, i));
  return regs;
}

KSplit sm90::splitK(int64_t tiles, int64_t steps, int64_t resident) {
  // Fill the `resident` block slots once; a few blocks more would add a
  // whole K range's time as a tail.
  if (tiles >= kMultiprocessors || steps < 16)
    return {1, steps};
  int64_t splits = std::min(resident / tiles, steps / 8);
  int64_t stepsPerSplit = (steps + splits - 1) / splits;
  // Rounding the range up can leave the last splits empty: drop them.
  return {(steps + stepsPerSplit - 1) / stepsPerSplit, stepsPerSplit};
}

Value sm90::mma(KernelBuilder &kb, ArrayRef<Value> a, ArrayRef<Value> b,
                Value acc) {
  OpBuilder &ob = kb.builder();
  Location loc = kb.location();
  Type f32 = ob.getF32Type();
  auto resultType =
      LLVM::LLVMStructType::getLiteral(ob.getContext(), {f32, f32, f32, f32});
  SmallVector<Value> c;
  for (int64_t e = 0; e < 4; ++e)
    c.push_back(vector::ExtractOp::create(ob, loc, acc, e));
  Value r = NVVM::MmaOp::create(
      ob, loc, resultType, a, b, c, {16, 8, 16}, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> outs;
  for (int64_t e = 0; e < 4; ++e)
    outs.push_back(LLVM::ExtractValueOp::create(ob, loc, r, e));
  return vector::FromElementsOp::create(ob, loc, VectorType::get({4}, f32),
                                        outs);
}

SmallVector<Value> sm90::accumulatorsAsA(KernelBuilder &kb, Value lo,
                                         Value hi) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  // A's registers: (row g, k 2t..2t+1), (row g + 8, same k), then the same
  // at k + 8; C's elements 0-1 are row g, 2-3 row g + 8, at columns 2t..2t+1.
  SmallVector<Value> regs;
  for (Value acc : {lo, hi})
    for (int64_t half = 0; half < 2; ++half) {
      Value pair = vector::ShuffleOp::create(
          b, loc, acc, acc, ArrayRef<int64_t>{2 * half, 2 * half + 1});
      Value packed = arith::TruncFOp::create(
          b, loc, VectorType::get({2}, b.getBF16Type()), pair);
      Value word = vector::BitCastOp::create(
          b, loc, VectorType::get({1}, b.getI32Type()), packed);
      regs.push_back(vector::ExtractOp::create(b, loc, word, 0));
    }
  return regs;
}
