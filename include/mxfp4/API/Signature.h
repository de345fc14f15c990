//===- Signature.h - function signatures at the host boundary ---*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The argument and result types of a function as written in its source,
// before lowering, in a form that needs no MLIR context: what a caller must
// pass and what it gets back.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_API_SIGNATURE_H
#define MXFP4_API_SIGNATURE_H

#include "mxfp4/Runtime/ElementType.h"

#include <optional>
#include <string>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace mlir::mxfp4 {

/// The type of one argument or result of a function.
struct ValueType {
  /// The type as MLIR prints it: "tensor<2x3xf32>", "f32".
  std::string text;
  /// The element type (the type itself for a scalar), or std::nullopt if the
  /// host cannot exchange values of this type.
  std::optional<ElementType> elementType;
  /// True for a ranked tensor, false for a scalar.
  bool isTensor = false;
  /// The tensor's sizes; -1 for a dynamic size.
  llvm::SmallVector<int64_t, 4> shape;

  /// Returns true if some size of the tensor is dynamic.
  bool hasDynamicShape() const;

  /// Describes what the host passes for this type, e.g. "tensor<4x64xf32>
  /// (dtype float32, shape (4, 64))" or "f32 (a scalar or a 0-d float32
  /// array)".
  std::string describeExpected() const;
};

/// The signature of a public function.
struct FunctionSignature {
  std::string name;
  llvm::SmallVector<ValueType> arguments;
  llvm::SmallVector<ValueType> results;
};

/// Returns the signature of `function`.
FunctionSignature describeFunction(func::FuncOp function);

} // namespace mlir::mxfp4

#endif // MXFP4_API_SIGNATURE_H
