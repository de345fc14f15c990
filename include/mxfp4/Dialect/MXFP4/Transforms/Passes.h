//===- Passes.h - mxfp4 dialect transform passes ----------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_DIALECT_MXFP4_TRANSFORMS_PASSES_H
#define MXFP4_DIALECT_MXFP4_TRANSFORMS_PASSES_H

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::mxfp4 {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "mxfp4/Dialect/MXFP4/Transforms/Passes.h.inc"

} // namespace mlir::mxfp4

#endif // MXFP4_DIALECT_MXFP4_TRANSFORMS_PASSES_H
