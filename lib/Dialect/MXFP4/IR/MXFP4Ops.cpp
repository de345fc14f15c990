//===- MXFP4Ops.cpp - mxfp4 op verifiers, builders and folders ------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::mxfp4;

bool mlir::mxfp4::isSupportedHadamardSize(int64_t size) {
  return size == 16 || size == 32 || size == 64 || size == 128;
}

//===----------------------------------------------------------------------===//
// Shared verification helpers
//===----------------------------------------------------------------------===//

/// Formats a shape as `[4, ?, 64]` for diagnostics.
static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(shape, os, [&](int64_t dim) {
    if (ShapedType::isDynamic(dim))
      os << '?';
    else
      os << dim;
  });
  os << ']';
  return text;
}

/// Two shapes agree if they have the same rank and every pair of static
/// dimensions is equal; a dynamic dimension matches anything.
static bool shapesAgree(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  if (lhs.size() != rhs.size())
    return false;
  for (auto [l, r] : llvm::zip_equal(lhs, rhs))
    if (!ShapedType::isDynamic(l) && !ShapedType::isDynamic(r) && l != r)
      return false;
  return true;
}

/// Checks that `axis` names a dimension of `type` and that this dimension is
/// static and a multiple of `tile`. `what` names the tile in messages.
static LogicalResult verifyTiledAxis(Operation *op, RankedTensorType type,
                                     int64_t axis, int64_t tile,
                                     StringRef what) {
  int64_t rank = type.getRank();
  if (rank == 0)
    return op->emitOpError("needs a tensor of rank at least 1");
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " is out of range for a tensor of rank " << rank;
  int64_t dim = type.getDimSize(axis);
  if (ShapedType::isDynamic(dim))
    return op->emitOpError("dimension ")
           << axis << " is blocked and must be static";
  if (dim % tile != 0)
    return op->emitOpError("dimension ")
           << axis << " (size " << dim << ") is not a multiple of the " << what
           << " " << tile;
  return success();
}

static LogicalResult verifyBlockSize(Operation *op, int64_t blockSize) {
  if (blockSize != kBlockSize)
    return op->emitOpError("block_size ")
           << blockSize << " is not supported; MXFP4 blocks have "
           << kBlockSize << " elements";
  return success();
}

/// Verifies that `scales` is `values` with dimension `axis` divided by the
/// block size. Assumes `axis` was already checked.
static LogicalResult verifyScalesShape(Operation *op, RankedTensorType values,
                                       RankedTensorType scales, int64_t axis,
                                       int64_t blockSize) {
  SmallVector<int64_t> expected(values.getShape());
  expected[axis] /= blockSize;
  if (!shapesAgree(scales.getShape(), expected))
    return op->emitOpError("scales shape ")
           << formatShape(scales.getShape()) << " does not match "
           << formatShape(expected) << " (dimension " << axis
           << " divided by the block size " << blockSize << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

void QuantizeOp::build(OpBuilder &builder, OperationState &state, Value input,
                       int64_t axis, ScaleRule scaleRule) {
  auto inputType = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> scaleShape(inputType.getShape());
  scaleShape[axis] /= kBlockSize;
  auto valuesType = RankedTensorType::get(inputType.getShape(),
                                          builder.getType<Float4E2M1FNType>());
  auto scalesType =
      RankedTensorType::get(scaleShape, builder.getType<Float8E8M0FNUType>());
  build(builder, state, valuesType, scalesType, input, /*seed=*/Value(),
        /*counter=*/Value(), axis, kBlockSize, scaleRule,
        Rounding::nearest_even);
}

LogicalResult QuantizeOp::verify() {
  auto inputType = getInput().getType();
  int64_t axis = getAxis();
  if (failed(verifyBlockSize(*this, getBlockSize())) ||
      failed(verifyTiledAxis(*this, inputType, axis, getBlockSize(),
                             "block size")))
    return failure();
  auto valuesType = getValues().getType();
  if (!shapesAgree(valuesType.getShape(), inputType.getShape()))
    return emitOpError("values shape ")
           << formatShape(valuesType.getShape())
           << " does not match input shape "
           << formatShape(inputType.getShape());
  if (failed(verifyScalesShape(*this, inputType, getScales().getType(), axis,
                               getBlockSize())))
    return failure();
  bool stochastic = getRounding() == Rounding::stochastic;
  if (stochastic && (!getSeed() || !getCounter()))
    return emitOpError("stochastic rounding needs seed and counter operands");
  if (!stochastic && (getSeed() || getCounter()))
    return emitOpError(
        "seed and counter are only allowed with stochastic rounding");
  return success();
}

//===----------------------------------------------------------------------===//
// DequantizeOp
//===----------------------------------------------------------------------===//

LogicalResult DequantizeOp::verify() {
  auto valuesType = getValues().getType();
  int64_t axis = getAxis();
  if (failed(verifyBlockSize(*this, getBlockSize())) ||
      failed(verifyTiledAxis(*this, valuesType, axis, getBlockSize(),
                             "block size")) ||
      failed(verifyScalesShape(*this, valuesType, getScales().getType(), axis,
                               getBlockSize())))
    return failure();
  auto resultType = getResult().getType();
  if (!shapesAgree(resultType.getShape(), valuesType.getShape()))
    return emitOpError("result shape ")
           << formatShape(resultType.getShape())
           << " does not match values shape "
           << formatShape(valuesType.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// HadamardOp
//===----------------------------------------------------------------------===//

LogicalResult HadamardOp::verify() {
  int64_t size = getSize();
  if (!isSupportedHadamardSize(size))
    return emitOpError("size ")
           << size << " is not supported; expected 16, 32, 64 or 128";
  if (failed(verifyTiledAxis(*this, getInput().getType(), getAxis(), size,
                             "Hadamard size")))
    return failure();
  switch (getKind()) {
  case HadamardKind::deterministic:
    if (getSeed() || getStep())
      return emitOpError("a deterministic rotation takes no seed or step");
    break;
  case HadamardKind::random_fixed:
    if (!getSeed() || getStep())
      return emitOpError(
          "a random_fixed rotation needs a seed and takes no step");
    break;
  case HadamardKind::random_per_step:
    if (!getSeed() || !getStep())
      return emitOpError("a random_per_step rotation needs a seed and a step");
    break;
  }
  return success();
}

bool HadamardOp::hasSameRotation(HadamardOp other) {
  return getAxis() == other.getAxis() && getSize() == other.getSize() &&
         getKind() == other.getKind() && getSeed() == other.getSeed() &&
         getStep() == other.getStep();
}

OpFoldResult HadamardOp::fold(FoldAdaptor) {
  // A rotation followed by its inverse (or the inverse followed by the
  // rotation) with the same matrix is the identity in exact arithmetic.
  // Folding drops the rounding of the intermediate tensor, so the folded
  // program is never less accurate than the unfolded one.
  auto producer = getInput().getDefiningOp<HadamardOp>();
  if (!producer || producer.getInverse() == getInverse() ||
      !hasSameRotation(producer))
    return {};
  return producer.getInput();
}

//===----------------------------------------------------------------------===//
// ScaledMatmulOp
//===----------------------------------------------------------------------===//

LogicalResult ScaledMatmulOp::verify() {
  ArrayRef<int64_t> lhs = getLhs().getType().getShape();
  ArrayRef<int64_t> rhs = getRhs().getType().getShape();
  int64_t k = lhs[1];
  if (ShapedType::isDynamic(k) || ShapedType::isDynamic(rhs[1]))
    return emitOpError("the reduction dimension K must be static");
  if (k != rhs[1])
    return emitOpError("K mismatch: lhs is ")
           << formatShape(lhs) << " and rhs is " << formatShape(rhs)
           << "; both operands must be [rows, K] with the same K";
  if (k % kBlockSize != 0)
    return emitOpError("K = ") << k << " is not a multiple of the block size "
                               << kBlockSize;
  auto checkScale = [&](StringRef name, ArrayRef<int64_t> values,
                        ArrayRef<int64_t> scales) -> LogicalResult {
    SmallVector<int64_t> expected = {values[0], k / kBlockSize};
    if (shapesAgree(scales, expected))
      return success();
    return emitOpError(name) << " shape " << formatShape(scales)
                             << " does not match " << formatShape(expected)
                             << " ([rows, K/32]: operands are blocked along K)";
  };
  if (failed(checkScale("lhs_scale", lhs, getLhsScale().getType().getShape())) ||
      failed(checkScale("rhs_scale", rhs, getRhsScale().getType().getShape())))
    return failure();
  SmallVector<int64_t> expected = {lhs[0], rhs[0]};
  ArrayRef<int64_t> result = getResult().getType().getShape();
  if (!shapesAgree(result, expected))
    return emitOpError("result shape ")
           << formatShape(result) << " does not match [M, N] = "
           << formatShape(expected);
  return success();
}

#define GET_OP_CLASSES
#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.cpp.inc"
