//===- TensorBuilder.h - terse builders of f32 tensor programs --*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The vocabulary the model builders write their graphs in: linalg named
// matmuls (the forms the recipe passes and the CPU vectorizer recognize),
// reshapes, transposes, and linalg.generic maps and reductions with a body
// given as a lambda. Everything stays on tensors, so the whole step
// bufferizes and lowers through the ordinary pipelines.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_MODELS_TENSORBUILDER_H
#define MXFP4_LIB_MODELS_TENSORBUILDER_H

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include <functional>

namespace mlir::mxfp4 {

class TensorBuilder {
public:
  /// The body of a generic: the block's arguments (inputs, then the output
  /// element) in, the value to yield out.
  using Body = std::function<Value(OpBuilder &, Location, ValueRange)>;

  TensorBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  OpBuilder &b;
  Location loc;

  Type f32() { return b.getF32Type(); }
  Value f32(double value);
  Value f64(double value);
  Value index(int64_t value);

  /// A zero-filled f32 tensor.
  Value zeros(ArrayRef<int64_t> shape);
  /// A tensor filled with `value`, of `shape` and f32.
  Value filled(ArrayRef<int64_t> shape, double value);

  /// A 2-D f32 matmul: op(a) * op(b) with op the transpose where asked. The
  /// transposes are expressed by indexing maps (A*B^T is the Fprop form,
  /// A^T*B the Wgrad form of docs/Recipes.md); `tag` marks a linear layer's
  /// GEMM for the recipe passes.
  Value matmul(Value lhs, Value rhs, bool transposeLhs, bool transposeRhs,
               GemmAttr tag = {});
  /// A batched f32 matmul, batch dim first; transposes are explicit
  /// copies so the batched product is in the plain vectorizable form.
  Value batchMatmul(Value lhs, Value rhs, bool transposeLhs,
                    bool transposeRhs);

  Value transpose(Value value, ArrayRef<int64_t> permutation);
  /// A row-major reshape (a view after bufferization).
  Value reshape(Value value, ArrayRef<int64_t> shape);
  /// Rows [offset, offset + size) of dim `dim`.
  Value slice(Value value, int64_t dim, int64_t offset, int64_t size);

  /// A linalg.generic with one output of `outShape` (and element type
  /// `outType`, f32 by default) indexed by `outMap`; loops not in `outMap`
  /// are reductions. The output starts at `init` (a fill) or, when `init`
  /// is empty, is uninitialized and must not be read by `body`.
  Value generic(ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                AffineMap outMap, ArrayRef<int64_t> outShape,
                std::optional<double> init, const Body &body,
                Type outType = {});
  /// An elementwise map over inputs of the same shape as the result.
  Value map(ValueRange inputs, const Body &body);
  /// Sums (or maxima, `isMax`) of `value` over its last dim.
  Value reduceLast(Value value, bool isMax = false);
  /// The sum of all elements as a 0-d tensor.
  Value sumAll(Value value, bool squares = false);

  /// Loop index `dim` inside a generic body.
  Value loopIndex(OpBuilder &nested, Location l, int64_t dim);

  /// The identity map of rank `rank`, and projections keeping `dims`.
  AffineMap identity(unsigned rank);
  AffineMap project(unsigned rank, ArrayRef<unsigned> dims);
  /// A map of `rank` loops to `exprs` (affine dims and constants).
  AffineMap mapOf(unsigned rank, ArrayRef<AffineExpr> exprs);
  AffineExpr d(unsigned i) { return b.getAffineDimExpr(i); }
  AffineExpr c(int64_t v) { return b.getAffineConstantExpr(v); }
};

/// Shape of a ranked tensor value.
ArrayRef<int64_t> shapeOf(Value value);

} // namespace mlir::mxfp4

#endif // MXFP4_LIB_MODELS_TENSORBUILDER_H
