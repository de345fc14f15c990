//===- VectorElementwise.cpp - elementwise kernels on 16-byte vectors -----===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A large elementwise generic (the rotary embedding over every token's
// heads) moves its operands once and computes little: its kernel is bound
// by how fast it moves them. One element a work-item spends a load or store
// instruction and the delinearization of its indices on every 4 bytes; four
// consecutive elements of the innermost loop a work-item load and store 16
// bytes at once where an operand runs along that loop, read once what does
// not vary along it, and run the payload four times: the same scalar ops on
// the same values, so the same bits. Kernels with fewer than kBusyWorkItems
// such runs (AdamW's updates of one weight) keep one element a work-item:
// there the parallelism counts more (measured on the pilot step).
//
//===----------------------------------------------------------------------===//

#include "Launches.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::mxfp4::launches;

namespace {

/// Elements a work-item takes: 16 bytes of f32.
constexpr int64_t kWidth = 4;

/// How a work-item reads an operand.
enum class Read { Vector, Invariant, Scattered };

} // namespace

/// How `operand` is read along the innermost loop `last`: as one vector if
/// it runs along it in its own innermost, 16-byte aligned dimension, once
/// if it does not depend on it, else element by element.
static Read readOf(linalg::GenericOp op, OpOperand &operand, unsigned last) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  AffineMap map = op.getMatchingIndexingMap(&operand);
  if (!type || !map.isFunctionOfDim(last))
    return Read::Invariant;
  unsigned results = map.getNumResults();
  for (unsigned i = 0; i + 1 < results; ++i)
    if (map.getResult(i).isFunctionOfDim(last))
      return Read::Scattered;
  if (map.getResult(results - 1) != getAffineDimExpr(last, op.getContext()) ||
      type.getShape().back() % kWidth != 0)
    return Read::Scattered;
  return Read::Vector;
}

/// A run's alignment: a vector access reads an identity-layout buffer (its
/// own allocation, 256-byte aligned, or a parameter of the flat ZeRO
/// layout, 64 elements aligned) at a multiple of kWidth elements. Without
/// it the backends split the access into one instruction an element (a
/// large zero fill ran at half the bandwidth of HBM).
static llvm::MaybeAlign alignmentOf(VectorType type) {
  unsigned bits = type.getElementTypeBitWidth();
  if (bits % 8 != 0)
    return std::nullopt;
  return llvm::MaybeAlign(kWidth * bits / 8);
}

bool mlir::mxfp4::launches::launchVectorElementwise(
    OpBuilder &b, linalg::GenericOp op, const ConstantInits &inits) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (op.getNumReductionLoops() != 0 || ranges.empty() ||
      llvm::any_of(ranges, ShapedType::isDynamic) ||
      ranges.back() % kWidth != 0)
    return false;
  unsigned last = ranges.size() - 1;
  // A vector access needs the buffer's own 16-byte alignment; a scalar one
  // (the cross-entropy gradient's labels, a view one token on) any layout.
  for (OpOperand &operand : op->getOpOperands())
    if (auto type = dyn_cast<MemRefType>(operand.get().getType()))
      if (!type.getLayout().isIdentity() &&
          readOf(op, operand, last) == Read::Vector)
        return false;
  int64_t points = 1;
  for (int64_t r : ranges)
    points *= r;
  if (points / kWidth < kBusyWorkItems)
    return false;
  for (OpOperand &out : op.getDpsInitsMutable())
    if (readOf(op, out, last) != Read::Vector)
      return false;

  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  Value id = openLaunch(b, loc, points / kWidth);
  SmallVector<Value> ivs(ranges.size());
  Value rest = id;
  for (int64_t d = last; d >= 0; --d) {
    int64_t size = d == int64_t(last) ? ranges[d] / kWidth : ranges[d];
    Value sizeValue = arith::ConstantIndexOp::create(b, loc, size);
    ivs[d] = arith::RemUIOp::create(b, loc, rest, sizeValue);
    rest = arith::DivUIOp::create(b, loc, rest, sizeValue);
  }
  Value first = arith::MulIOp::create(
      b, loc, ivs[last], arith::ConstantIndexOp::create(b, loc, kWidth));
  // The indices of element k of the work-item's run.
  auto at = [&](int64_t k) {
    SmallVector<Value> idx(ivs);
    idx[last] = arith::AddIOp::create(
        b, loc, first, arith::ConstantIndexOp::create(b, loc, k));
    return idx;
  };
  SmallVector<SmallVector<Value>> element(kWidth);
  for (int64_t k = 0; k < kWidth; ++k)
    element[k] = at(k);
  auto indicesOf = [&](OpOperand &operand, int64_t k) {
    return *affine::expandAffineMap(b, loc, op.getMatchingIndexingMap(&operand),
                                    element[k]);
  };
  // The operand's value at each of the run's elements.
  auto read = [&](OpOperand &operand) {
    SmallVector<Value> values;
    Value v = operand.get();
    if (TypedAttr constant = inits.lookup(&operand))
      return SmallVector<Value>(kWidth,
                                arith::ConstantOp::create(b, loc, constant));
    switch (readOf(op, operand, last)) {
    case Read::Invariant: {
      Value x = isa<MemRefType>(v.getType())
                    ? memref::LoadOp::create(b, loc, v, indicesOf(operand, 0))
                          .getResult()
                    : v;
      return SmallVector<Value>(kWidth, x);
    }
    case Read::Vector: {
      auto type = VectorType::get(
          {kWidth}, cast<MemRefType>(v.getType()).getElementType());
      Value vector = vector::LoadOp::create(
          b, loc, type, v, indicesOf(operand, 0), /*nontemporal=*/false,
          alignmentOf(type));
      for (int64_t k = 0; k < kWidth; ++k)
        values.push_back(vector::ExtractOp::create(b, loc, vector, k));
      return values;
    }
    case Read::Scattered:
      for (int64_t k = 0; k < kWidth; ++k)
        values.push_back(
            memref::LoadOp::create(b, loc, v, indicesOf(operand, k)));
      return values;
    }
    llvm_unreachable("unknown access");
  };

  Block &body = op.getRegion().front();
  SmallVector<SmallVector<Value>> inputs, outs;
  for (OpOperand *in : op.getDpsInputOperands())
    inputs.push_back(read(*in));
  for (OpOperand &out : op.getDpsInitsMutable())
    outs.push_back(body.getArgument(out.getOperandNumber()).use_empty()
                       ? SmallVector<Value>()
                       : read(out));
  SmallVector<SmallVector<Value>> results(op.getNumDpsInits());
  for (int64_t k = 0; k < kWidth; ++k) {
    SmallVector<Value> outsAt;
    for (ArrayRef<Value> values : outs)
      outsAt.push_back(values.empty() ? Value() : values[k]);
    SmallVector<Value> yielded =
        emitPayload(b, op, element[k], outsAt, [&](OpOperand *in) {
          return inputs[in->getOperandNumber()][k];
        });
    for (auto [i, v] : llvm::enumerate(yielded))
      results[i].push_back(v);
  }
  for (auto [out, values] : llvm::zip(op.getDpsInitsMutable(), results)) {
    auto type = VectorType::get(
        {kWidth}, cast<MemRefType>(out.get().getType()).getElementType());
    Value vector = vector::FromElementsOp::create(b, loc, type, values);
    vector::StoreOp::create(b, loc, vector, out.get(), indicesOf(out, 0),
                            /*nontemporal=*/false, alignmentOf(type));
  }
  return true;
}
