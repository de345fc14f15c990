//===- MXFP4Dialect.cpp - mxfp4 dialect -----------------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Dialect.h"
#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mxfp4;

#include "mxfp4/Dialect/MXFP4/IR/MXFP4OpsDialect.cpp.inc"

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Enums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "mxfp4/Dialect/MXFP4/IR/MXFP4Attrs.cpp.inc"

void MXFP4Dialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "mxfp4/Dialect/MXFP4/IR/MXFP4Attrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Discardable attributes
//===----------------------------------------------------------------------===//

/// Verifies `attr`'s value against its declared type; `what` names where it
/// sits, for the message.
template <typename AttrT>
static LogicalResult checkKind(Operation *op, NamedAttribute attr,
                               StringRef kind, StringRef what) {
  if (isa<AttrT>(attr.getValue()))
    return success();
  return op->emitOpError() << what << " '" << attr.getName().getValue()
                           << "' must be " << kind << ", got "
                           << attr.getValue();
}

/// Whether `array` holds strings only.
static bool allStrings(ArrayAttr array) {
  return llvm::all_of(array, [](Attribute a) { return isa<StringAttr>(a); });
}

LogicalResult MXFP4Dialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto function = dyn_cast<FunctionOpInterface>(op);
  auto onFunction = [&]() -> LogicalResult {
    if (function)
      return success();
    return op->emitOpError() << "attribute '" << name
                             << "' belongs on a function";
  };
  if (name == kGemmAttrName)
    return checkKind<GemmAttr>(op, attr, "a #mxfp4.gemm", "attribute");
  if (name == kCompositeAttrName || name == kRecipeAttrName) {
    if (failed(onFunction()) ||
        failed(checkKind<StringAttr>(op, attr, "a string", "attribute")))
      return failure();
    if (cast<StringAttr>(attr.getValue()).getValue().empty())
      return op->emitOpError() << "attribute '" << name
                               << "' must not be empty";
    return success();
  }
  if (name == kTelemetryAttrName || name == kTelemetryFieldsAttrName) {
    if (failed(onFunction()))
      return failure();
    auto array = dyn_cast<ArrayAttr>(attr.getValue());
    if (!array || !allStrings(array))
      return op->emitOpError() << "attribute '" << name
                               << "' must be an array of strings";
    // On tensors, the telemetry table is the last result, [rows, fields];
    // lowered functions return it as a flat buffer, whose shape says
    // nothing.
    ArrayRef<Type> results = function.getResultTypes();
    auto table = results.empty() ? RankedTensorType()
                                 : dyn_cast<RankedTensorType>(results.back());
    if (!table)
      return success();
    int64_t expected =
        table.getRank() != 2
            ? -1
            : table.getDimSize(name == kTelemetryAttrName ? 0 : 1);
    if (expected != static_cast<int64_t>(array.size()))
      return op->emitOpError()
             << "attribute '" << name << "' has " << array.size()
             << " names for the "
             << (name == kTelemetryAttrName ? "rows" : "columns")
             << " of the telemetry table, the last result " << table;
    return success();
  }
  if (name == kParallelLoopAttrName) {
    if (!isa<LoopLikeOpInterface>(op))
      return op->emitOpError() << "attribute '" << name
                               << "' belongs on a loop";
    return checkKind<UnitAttr>(op, attr, "a unit attribute", "attribute");
  }
  if (name == kGemmShapeAttrName) {
    if (failed(onFunction()))
      return failure();
    auto shape = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!shape || shape.size() != 3 ||
        llvm::any_of(shape.asArrayRef(), [](int64_t d) { return d <= 0; }))
      return op->emitOpError() << "attribute '" << name
                               << "' must be three positive sizes [M, N, K]";
    return success();
  }
  if (name == kSteadyIterationsAttrName) {
    if (failed(onFunction()))
      return failure();
    auto value = dyn_cast<FloatAttr>(attr.getValue());
    if (!value || !std::isfinite(value.getValueAsDouble()) ||
        value.getValueAsDouble() < 1)
      return op->emitOpError() << "attribute '" << name
                               << "' must be a float of at least 1 (the "
                                  "mean iterations of the kernel's loop)";
    return success();
  }
  if (name == kParameterAttrName || name == kStepAttrName ||
      name == kTensorAttrName)
    return op->emitOpError() << "attribute '" << name
                             << "' belongs on a function argument"
                             << (name == kTensorAttrName ? " or result" : "");
  return op->emitOpError() << "unknown attribute '" << name
                           << "' of the mxfp4 dialect";
}

/// Verifies `mxfp4.tensor` on a host function's argument or result.
static LogicalResult verifyTensorAttr(Operation *op, NamedAttribute attr,
                                      StringRef what) {
  auto value = dyn_cast<TypeAttr>(attr.getValue());
  if (!value || !isa<RankedTensorType>(value.getValue()))
    return op->emitOpError() << what << " attribute '"
                             << attr.getName().getValue()
                             << "' must be a ranked tensor type";
  return success();
}

LogicalResult MXFP4Dialect::verifyRegionArgAttribute(Operation *op,
                                                     unsigned regionIndex,
                                                     unsigned argIndex,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function)
    return op->emitOpError() << "argument attribute '" << name
                             << "' belongs on a function";
  Type type = function.getArgumentTypes()[argIndex];
  if (name == kParameterAttrName) {
    auto value = dyn_cast<StringAttr>(attr.getValue());
    if (!value || value.getValue().empty())
      return op->emitOpError() << "argument attribute '" << name
                               << "' must be a parameter's name";
    return success();
  }
  if (name == kStepAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "argument attribute '" << name
                               << "' must be a unit attribute";
    if (!type.isSignlessIntOrIndex())
      return op->emitOpError() << "argument attribute '" << name
                               << "' marks the step counter, an integer, not "
                               << type;
    return success();
  }
  if (name == kTensorAttrName)
    return verifyTensorAttr(op, attr, "argument");
  return op->emitOpError() << "argument attribute '" << name
                           << "' is not an argument attribute of the mxfp4 "
                              "dialect";
}

LogicalResult MXFP4Dialect::verifyRegionResultAttribute(Operation *op,
                                                        unsigned regionIndex,
                                                        unsigned resultIndex,
                                                        NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (function && name == kTensorAttrName)
    return verifyTensorAttr(op, attr, "result");
  return op->emitOpError() << "result attribute '" << name
                           << "' is not a result attribute of the mxfp4 "
                              "dialect";
}
