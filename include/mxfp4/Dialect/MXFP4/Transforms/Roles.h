//===- Roles.h - find the linear-layer GEMMs of a training step -*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_DIALECT_MXFP4_TRANSFORMS_ROLES_H
#define MXFP4_DIALECT_MXFP4_TRANSFORMS_ROLES_H

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Dialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <string>

namespace mlir::mxfp4 {

/// The discardable attribute builders put on a linear-layer contraction.
constexpr llvm::StringLiteral kGemmAttrName = "mxfp4.gemm";
/// The argument attribute naming a parameter (its HF name, e.g.
/// "layers.0.mlp.up_proj.weight").
constexpr llvm::StringLiteral kParameterAttrName = "mxfp4.parameter";
/// The argument attribute marking the i64 optimizer-step counter.
constexpr llvm::StringLiteral kStepAttrName = "mxfp4.step";

/// A contraction of a training step that is one of a linear layer's GEMMs,
/// with the convention of GemmAttr: lhs/rhs are (input, weight) for Fprop,
/// (grad output, weight) for Dgrad and (grad output, input) for Wgrad.
struct LinearGemm {
  linalg::MatmulOp op;
  GemmRole role;
  std::string layer;
  /// True if the role came from dataflow rather than a tag.
  bool inferred = false;
};

/// Finds every linear-layer GEMM of `function`: 2-D linalg.matmul ops tagged
/// with `mxfp4.gemm`, and, with `infer`, untagged ones whose role follows
/// from the rules of docs/Recipes.md ("Roles"). Contractions that are not
/// linear layers are left out silently; ambiguous ones get a remark. With
/// `includeLmHead`, parameters named like the LM head or an embedding count
/// as linear layers too.
SmallVector<LinearGemm> findLinearGemms(func::FuncOp function, bool infer,
                                        bool includeLmHead);

} // namespace mlir::mxfp4

#endif // MXFP4_DIALECT_MXFP4_TRANSFORMS_ROLES_H
