//===- DistinctResultBuffers.cpp - one buffer per function result ---------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_DISTINCTRESULTBUFFERSPASS
#include "mxfp4/Transforms/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;

namespace {

struct DistinctResultBuffersPass
    : mxfp4::impl::DistinctResultBuffersPassBase<DistinctResultBuffersPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      llvm::SmallDenseSet<Value> seen;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value value = operand.get();
        auto type = dyn_cast<MemRefType>(value.getType());
        if (!type || seen.insert(value).second)
          continue;
        SmallVector<Value> dynamicSizes;
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (type.isDynamicDim(d))
            dynamicSizes.push_back(
                memref::DimOp::create(b, ret.getLoc(), value, d));
        Value copy = memref::AllocOp::create(
            b, ret.getLoc(),
            MemRefType::get(type.getShape(), type.getElementType()),
            dynamicSizes);
        memref::CopyOp::create(b, ret.getLoc(), value, copy);
        operand.set(copy);
      }
    });
  }
};

} // namespace
