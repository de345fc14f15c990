//===- ReadOnlyArguments.cpp - public functions keep their inputs --------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/IR/Builders.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_READONLYARGUMENTSPASS
#include "mxfp4/Transforms/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;

namespace {

struct ReadOnlyArgumentsPass
    : mxfp4::impl::ReadOnlyArgumentsPassBase<ReadOnlyArgumentsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !func.isPublic())
      return;
    Builder b(&getContext());
    for (BlockArgument arg : func.getArguments())
      if (isa<RankedTensorType>(arg.getType()))
        func.setArgAttr(arg.getArgNumber(),
                        bufferization::BufferizationDialect::kWritableAttrName,
                        b.getBoolAttr(false));
  }
};

} // namespace
