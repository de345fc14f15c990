//===- Passes.h - mxfp4 general transform passes ----------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_TRANSFORMS_PASSES_H
#define MXFP4_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mxfp4/Transforms/ParallelLoops.h"

namespace mlir::mxfp4 {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "mxfp4/Transforms/Passes.h.inc"

} // namespace mlir::mxfp4

#endif // MXFP4_TRANSFORMS_PASSES_H
