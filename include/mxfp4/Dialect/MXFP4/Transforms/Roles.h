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

/// A contraction of a training step that is one of a linear layer's GEMMs,
/// with the convention of GemmAttr: lhs/rhs are (input, weight) for Fprop,
/// (grad output, weight) for Dgrad and (grad output, input) for Wgrad.
struct LinearGemm {
  /// A linalg.matmul, or any other two-operand mul/add contraction that
  /// reads as one 2-D GEMM (docs/Recipes.md, "Roles"): linalg.generic,
  /// linalg.contract, linalg.batch_matmul with the weight broadcast.
  linalg::LinalgOp op;
  GemmRole role;
  std::string layer;
  /// True if the role came from dataflow rather than a tag.
  bool inferred = false;
  /// The input of `op` that is the GEMM's lhs; the other one is its rhs.
  /// Frontends write the operands in either order (W X^T computes Y^T).
  unsigned lhsInput = 0;
};

/// A contraction that reads a parameter, or that is shaped like a weight
/// gradient, but is none of a linear layer's GEMMs: it stays in high
/// precision, which a caller reports (a remark, or an error under
/// `require-roles`).
struct UnclassifiedContraction {
  Operation *op;
  /// Why, for the message, e.g. `reads parameter "l.weight" with a batch
  /// dimension of its own`.
  std::string reason;

  /// "contraction not classified as a linear layer's GEMM (<reason>)".
  std::string message() const;
};

/// What the role analysis of one function finds.
struct LinearGemms {
  SmallVector<LinearGemm> gemms;
  SmallVector<UnclassifiedContraction> unclassified;
};

/// Finds every linear-layer GEMM of `function`: contractions tagged with
/// `mxfp4.gemm`, and, with `infer`, untagged ones whose role follows from the
/// rules of docs/Recipes.md ("Roles"). Contractions that read a parameter,
/// or are shaped like a weight gradient, and get no role are returned as
/// unclassified (without `infer`, every untagged one of them); attention
/// and other contractions that touch no parameter are left out silently.
/// With `includeLmHead`, parameters named like the LM head or an embedding
/// count as linear layers too; without it their GEMMs are skipped silently.
LinearGemms findLinearGemms(func::FuncOp function, bool infer,
                            bool includeLmHead);

/// Rewrites `gemm.op` as a 2-D linalg.matmul in one of its four
/// transposition forms, ins(lhs, rhs) with maps (m,k) or (k,m), (n,k) or
/// (k,n) -> (m,n), the form the recipe rewrite starts from: the weight's
/// batch broadcast is dropped, the operands are transposed and collapsed
/// where they have to be, and the product is expanded and transposed back
/// into the original result. A matmul already in that form is returned as
/// is. Views of an operand are created next to its definition (or reuse a
/// collapse_shape or transpose that already exists there), so two GEMMs
/// that read one activation still read one value. Fails with `why` set if
/// the op does not have one of the supported forms.
FailureOr<linalg::MatmulOp> normalizeLinearGemm(const LinearGemm &gemm,
                                                std::string &why);

} // namespace mlir::mxfp4

#endif // MXFP4_DIALECT_MXFP4_TRANSFORMS_ROLES_H
