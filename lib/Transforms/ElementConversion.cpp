//===- ElementConversion.cpp - element type conversions on tensors -------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ElementConversion.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

Value mxfp4::convertElements(OpBuilder &b, Location loc, Value value,
                             Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  auto resultType = type.clone(elementType);
  Value empty =
      tensor::EmptyOp::create(b, loc, resultType.getShape(), elementType);
  AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  bool narrower = elementType.getIntOrFloatBitWidth() <
                  type.getElementType().getIntOrFloatBitWidth();
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, ValueRange{value}, ValueRange{empty},
      ArrayRef<AffineMap>{identity, identity}, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value converted =
            narrower ? arith::TruncFOp::create(nb, l, elementType, args[0])
                           .getResult()
                     : arith::ExtFOp::create(nb, l, elementType, args[0])
                           .getResult();
        linalg::YieldOp::create(nb, l, converted);
      });
  return generic.getResult(0);
}

/// Whether `g` only widens its one input and rounds it back to the same
/// type, element for element: a copy of its input.
static bool isRoundTrip(linalg::GenericOp g) {
  if (g.getNumDpsInputs() != 1 || g.getNumResults() != 1 ||
      g.getDpsInputs()[0].getType() != g.getResult(0).getType() ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return false;
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  auto narrow = yield.getOperand(0).getDefiningOp<arith::TruncFOp>();
  auto wide =
      narrow ? narrow.getIn().getDefiningOp<arith::ExtFOp>() : arith::ExtFOp();
  return wide && wide.getIn() == g.getBody()->getArgument(0) &&
         g.getBody()->getOperations().size() == 3;
}

void mxfp4::widenInReader(linalg::GenericOp g, OpOperand &use) {
  BlockArgument arg = g.getMatchingBlockArgument(&use);
  arg.setType(getElementTypeOrSelf(use.get().getType()));
  OpBuilder b = OpBuilder::atBlockBegin(g.getBody());
  Value wide = arith::ExtFOp::create(b, g.getLoc(), b.getF32Type(), arg);
  arg.replaceAllUsesExcept(wide, wide.getDefiningOp());
  if (isRoundTrip(g)) {
    g.getResult(0).replaceAllUsesWith(use.get());
    g.erase();
  }
}

Value mxfp4::reshapeLike(OpBuilder &b, Operation *reshape, Value source) {
  auto type = cast<RankedTensorType>(reshape->getResult(0).getType())
                  .clone(getElementTypeOrSelf(source.getType()));
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(reshape))
    return tensor::CollapseShapeOp::create(b, reshape->getLoc(), type, source,
                                           collapse.getReassociationIndices());
  auto expand = cast<tensor::ExpandShapeOp>(reshape);
  return tensor::ExpandShapeOp::create(b, reshape->getLoc(), type, source,
                                       expand.getReassociationIndices(),
                                       expand.getMixedOutputShape());
}

Value mxfp4::widenedFrom(Value value) {
  auto g = value.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 1 || g.getNumResults() != 1 ||
      g.getNumParallelLoops() != g.getNumLoops() ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return {};
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  auto wide = yield.getOperand(0).getDefiningOp<arith::ExtFOp>();
  if (!wide || wide.getIn() != g.getBody()->getArgument(0) ||
      g.getBody()->getOperations().size() != 2)
    return {};
  return g.getDpsInputs()[0];
}
