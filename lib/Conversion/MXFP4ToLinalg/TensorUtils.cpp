//===- TensorUtils.cpp - shape helpers for the mxfp4 lowerings ------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "TensorUtils.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

/// Reassociation grouping `axis` and `axis + 1` of a rank `rank + 1` tensor.
static SmallVector<ReassociationIndices> splitReassociation(int64_t rank,
                                                            int64_t axis) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis)
      groups.push_back({d});
    else if (d == axis)
      groups.push_back({d, d + 1});
    else
      groups.push_back({d + 1});
  }
  return groups;
}

Value mxfp4::expandAxis(OpBuilder &b, Location loc, Value tensor, int64_t axis,
                        int64_t tile) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, tensor);
  int64_t dim = shape[axis];
  shape[axis] = dim / tile;
  shape.insert(shape.begin() + axis + 1, tile);
  sizes[axis] = b.getIndexAttr(dim / tile);
  sizes.insert(sizes.begin() + axis + 1, b.getIndexAttr(tile));
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), tensor,
      splitReassociation(type.getRank(), axis), sizes);
}

Value mxfp4::collapseAxis(OpBuilder &b, Location loc, Value tensor,
                          int64_t axis) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return tensor::CollapseShapeOp::create(
      b, loc, tensor, splitReassociation(type.getRank() - 1, axis));
}

Value mxfp4::emptyTensor(OpBuilder &b, Location loc,
                         ArrayRef<OpFoldResult> sizes, Type elementType) {
  return tensor::EmptyOp::create(b, loc, sizes, elementType);
}
