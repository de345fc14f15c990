//===- RoundMatmulOperands.cpp - matmuls on bf16 operands -----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Transforms/Passes.h"

#include "ElementConversion.h"

#include "mxfp4/Dialect/MXFP4/Transforms/Composites.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_ROUNDMATMULOPERANDSPASS
#include "mxfp4/Transforms/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;

namespace {

struct RoundMatmulOperandsPass
    : mxfp4::impl::RoundMatmulOperandsPassBase<RoundMatmulOperandsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // A composite's body is its reference decomposition: f32 as written.
    if (func->hasAttr(mxfp4::kCompositeAttrName))
      return;
    SmallVector<linalg::LinalgOp> matmuls;
    func.walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
          op.hasPureTensorSemantics() &&
          llvm::all_of(op->getOperandTypes(), [](Type t) {
            auto tensor = dyn_cast<RankedTensorType>(t);
            return tensor && tensor.getElementType().isF32();
          }))
        matmuls.push_back(op);
    });
    for (linalg::LinalgOp op : matmuls) {
      OpBuilder b(op);
      SmallVector<Value> inputs;
      for (Value input : op.getDpsInputs())
        inputs.push_back(
            mxfp4::convertElements(b, op.getLoc(), input, b.getBF16Type()));
      // Rebuilt rather than retyped: the named op's body converts its
      // operands to the accumulator type.
      Operation *rounded;
      if (isa<linalg::MatmulOp>(op))
        rounded =
            linalg::MatmulOp::create(b, op.getLoc(), op->getResultTypes(),
                                     inputs, op.getDpsInits(), op->getAttrs());
      else
        rounded = linalg::BatchMatmulOp::create(
            b, op.getLoc(), op->getResultTypes(), inputs, op.getDpsInits(),
            op->getAttrs());
      op->replaceAllUsesWith(rounded->getResults());
      op->erase();
    }
  }
};

} // namespace
