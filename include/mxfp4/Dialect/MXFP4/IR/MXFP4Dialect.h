//===- MXFP4Dialect.h - mxfp4 dialect ---------------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The mxfp4 dialect: its enumerations and attributes. Ops are in MXFP4Ops.h.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_DIALECT_MXFP4_IR_MXFP4DIALECT_H
#define MXFP4_DIALECT_MXFP4_IR_MXFP4DIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Enums.h.inc"

// Before the dialect: its discardable-attribute helpers return GemmAttr.
#define GET_ATTRDEF_CLASSES
#include "mxfp4/Dialect/MXFP4/IR/MXFP4Attrs.h.inc"

#include "mxfp4/Dialect/MXFP4/IR/MXFP4OpsDialect.h.inc"

namespace mlir::mxfp4 {

/// The names of the dialect's discardable attributes, declared with their
/// types in MXFP4Base.td and verified by MXFP4Dialect.
constexpr llvm::StringLiteral kGemmAttrName =
    MXFP4Dialect::GemmAttrHelper::getNameStr();
constexpr llvm::StringLiteral kParameterAttrName =
    MXFP4Dialect::ParameterAttrHelper::getNameStr();
constexpr llvm::StringLiteral kStepAttrName =
    MXFP4Dialect::StepAttrHelper::getNameStr();
constexpr llvm::StringLiteral kCompositeAttrName =
    MXFP4Dialect::CompositeAttrHelper::getNameStr();
constexpr llvm::StringLiteral kRecipeAttrName =
    MXFP4Dialect::RecipeAttrHelper::getNameStr();
constexpr llvm::StringLiteral kTelemetryAttrName =
    MXFP4Dialect::TelemetryAttrHelper::getNameStr();
constexpr llvm::StringLiteral kTelemetryFieldsAttrName =
    MXFP4Dialect::TelemetryFieldsAttrHelper::getNameStr();
constexpr llvm::StringLiteral kParallelLoopAttrName =
    MXFP4Dialect::ParallelAttrHelper::getNameStr();
constexpr llvm::StringLiteral kTensorAttrName =
    MXFP4Dialect::TensorAttrHelper::getNameStr();
constexpr llvm::StringLiteral kGemmShapeAttrName =
    MXFP4Dialect::GemmShapeAttrHelper::getNameStr();
constexpr llvm::StringLiteral kSteadyIterationsAttrName =
    MXFP4Dialect::SteadyIterationsAttrHelper::getNameStr();

} // namespace mlir::mxfp4

#endif // MXFP4_DIALECT_MXFP4_IR_MXFP4DIALECT_H
