//===- TensorBuilder.cpp - terse builders of f32 tensor programs ----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "TensorBuilder.h"

#include "mxfp4/Dialect/MXFP4/Transforms/Roles.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;
using namespace mlir::mxfp4;

ArrayRef<int64_t> mlir::mxfp4::shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

Value TensorBuilder::f32(double value) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
}

Value TensorBuilder::f64(double value) {
  return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(value));
}

Value TensorBuilder::index(int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value TensorBuilder::filled(ArrayRef<int64_t> shape, double value) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, f32());
  return linalg::FillOp::create(b, loc, ValueRange{f32(value)},
                                ValueRange{empty})
      .getResult(0);
}

Value TensorBuilder::zeros(ArrayRef<int64_t> shape) {
  return filled(shape, 0.0);
}

AffineMap TensorBuilder::identity(unsigned rank) {
  return b.getMultiDimIdentityMap(rank);
}

AffineMap TensorBuilder::project(unsigned rank, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned dim : dims)
    exprs.push_back(d(dim));
  return mapOf(rank, exprs);
}

AffineMap TensorBuilder::mapOf(unsigned rank, ArrayRef<AffineExpr> exprs) {
  return AffineMap::get(rank, 0, exprs, b.getContext());
}

Value TensorBuilder::matmul(Value lhs, Value rhs, bool transposeLhs,
                            bool transposeRhs, GemmAttr tag) {
  ArrayRef<int64_t> l = shapeOf(lhs), r = shapeOf(rhs);
  int64_t m = transposeLhs ? l[1] : l[0];
  int64_t n = transposeRhs ? r[0] : r[1];
  AffineExpr dm = d(0), dn = d(1), dk = d(2);
  SmallVector<AffineMap> maps = {
      mapOf(3, transposeLhs ? ArrayRef<AffineExpr>{dk, dm}
                            : ArrayRef<AffineExpr>{dm, dk}),
      mapOf(3, transposeRhs ? ArrayRef<AffineExpr>{dn, dk}
                            : ArrayRef<AffineExpr>{dk, dn}),
      mapOf(3, {dm, dn})};
  auto mm = linalg::MatmulOp::create(
      b, loc, TypeRange{RankedTensorType::get({m, n}, f32())},
      ValueRange{lhs, rhs}, ValueRange{zeros({m, n})});
  mm.setIndexingMapsAttr(b.getAffineMapArrayAttr(maps));
  if (tag)
    mm->setAttr(kGemmAttrName, tag);
  return mm.getResult(0);
}

Value TensorBuilder::batchMatmul(Value lhs, Value rhs, bool transposeLhs,
                                 bool transposeRhs) {
  if (transposeLhs)
    lhs = transpose(lhs, {0, 2, 1});
  if (transposeRhs)
    rhs = transpose(rhs, {0, 2, 1});
  ArrayRef<int64_t> l = shapeOf(lhs), r = shapeOf(rhs);
  SmallVector<int64_t> shape = {l[0], l[1], r[2]};
  return linalg::BatchMatmulOp::create(
             b, loc, TypeRange{RankedTensorType::get(shape, f32())},
             ValueRange{lhs, rhs}, ValueRange{zeros(shape)})
      .getResult(0);
}

Value TensorBuilder::transpose(Value value, ArrayRef<int64_t> permutation) {
  ArrayRef<int64_t> shape = shapeOf(value);
  SmallVector<int64_t> outShape;
  for (int64_t p : permutation)
    outShape.push_back(shape[p]);
  auto type = cast<RankedTensorType>(value.getType());
  Value init = tensor::EmptyOp::create(b, loc, outShape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, value, init, permutation)
      .getResult()[0];
}

Value TensorBuilder::reshape(Value value, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  // Through 1-D: collapse all dims, then expand into the new ones.
  int64_t total = type.getNumElements();
  Value flat = value;
  if (type.getRank() != 1) {
    ReassociationIndices all;
    for (int64_t i = 0; i < type.getRank(); ++i)
      all.push_back(i);
    flat = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({total}, type.getElementType()), value,
        ArrayRef<ReassociationIndices>{all});
  }
  if (shape.size() == 1)
    return flat;
  ReassociationIndices all;
  for (size_t i = 0; i < shape.size(); ++i)
    all.push_back(i);
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), flat,
      ArrayRef<ReassociationIndices>{all});
}

Value TensorBuilder::slice(Value value, int64_t dim, int64_t offset,
                           int64_t size) {
  ArrayRef<int64_t> shape = shapeOf(value);
  SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(shape.size(), b.getIndexAttr(1));
  for (int64_t s : shape)
    sizes.push_back(b.getIndexAttr(s));
  offsets[dim] = b.getIndexAttr(offset);
  sizes[dim] = b.getIndexAttr(size);
  return tensor::ExtractSliceOp::create(b, loc, value, offsets, sizes,
                                        strides);
}

Value TensorBuilder::generic(ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                             AffineMap outMap, ArrayRef<int64_t> outShape,
                             std::optional<double> init, const Body &body,
                             Type outType) {
  if (!outType)
    outType = f32();
  Value out = tensor::EmptyOp::create(b, loc, outShape, outType);
  if (init) {
    Value scalar = arith::ConstantOp::create(b, loc,
                                             b.getFloatAttr(outType, *init));
    out = linalg::FillOp::create(b, loc, ValueRange{scalar}, ValueRange{out})
              .getResult(0);
  }
  unsigned rank = outMap.getNumDims();
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::reduction);
  for (AffineExpr e : outMap.getResults())
    if (auto dim = dyn_cast<AffineDimExpr>(e))
      iterators[dim.getPosition()] = utils::IteratorType::parallel;
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(outMap);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{out.getType()}, inputs, ValueRange{out}, maps,
      iterators, [&](OpBuilder &nested, Location l, ValueRange args) {
        linalg::YieldOp::create(nested, l, body(nested, l, args));
      });
  return op.getResult(0);
}

Value TensorBuilder::map(ValueRange inputs, const Body &body) {
  ArrayRef<int64_t> shape = shapeOf(inputs.front());
  AffineMap id = identity(shape.size());
  SmallVector<AffineMap> maps(inputs.size(), id);
  return generic(inputs, maps, id, shape, std::nullopt, body);
}

Value TensorBuilder::reduceLast(Value value, bool isMax) {
  ArrayRef<int64_t> shape = shapeOf(value);
  unsigned rank = shape.size();
  SmallVector<unsigned> kept;
  for (unsigned i = 0; i + 1 < rank; ++i)
    kept.push_back(i);
  double init = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
  return generic(
      value, identity(rank), project(rank, kept), shape.drop_back(), init,
      [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        if (isMax)
          return arith::MaximumFOp::create(nb, l, a[0], a[1]);
        return arith::AddFOp::create(nb, l, a[0], a[1]);
      });
}

Value TensorBuilder::sumAll(Value value, bool squares) {
  unsigned rank = shapeOf(value).size();
  return generic(value, identity(rank), mapOf(rank, {}), {}, 0.0,
                 [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                   Value x = a[0];
                   if (squares)
                     x = arith::MulFOp::create(nb, l, x, x);
                   return arith::AddFOp::create(nb, l, a[1], x);
                 });
}

Value TensorBuilder::loopIndex(OpBuilder &nested, Location l, int64_t dim) {
  return linalg::IndexOp::create(nested, l, dim);
}
