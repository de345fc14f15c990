//===- Signature.cpp - function signatures at the host boundary -----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/API/Signature.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::mxfp4;

bool ValueType::hasDynamicShape() const {
  return llvm::any_of(shape, [](int64_t size) { return size < 0; });
}

std::string ValueType::describeExpected() const {
  if (!elementType)
    return text;
  llvm::StringRef dtype = getDTypeName(getStorageDType(*elementType));
  if (isTensor)
    return text + " (dtype " + dtype.str() + ", shape " + formatShape(shape) +
           ")";
  return text + " (a scalar or a 0-d " + dtype.str() + " array)";
}

/// Returns the element type `type` travels as, if any.
static std::optional<ElementType> getElementType(Type type, bool inTensor) {
  if (type.isF32())
    return ElementType::F32;
  if (type.isF64())
    return ElementType::F64;
  if (type.isInteger(32))
    return ElementType::I32;
  if (type.isInteger(64))
    return ElementType::I64;
  if (type.isIndex())
    return ElementType::Index;
  // Narrow types only inside tensors: scalars of these types have no
  // inline spelling worth supporting.
  if (!inTensor)
    return std::nullopt;
  if (type.isBF16())
    return ElementType::BF16;
  if (type.isInteger(8))
    return ElementType::I8;
  if (isa<Float4E2M1FNType>(type))
    return ElementType::F4E2M1FN;
  if (isa<Float8E8M0FNUType>(type))
    return ElementType::F8E8M0FNU;
  return std::nullopt;
}

static ValueType describeType(Type type) {
  ValueType result;
  llvm::raw_string_ostream(result.text) << type;
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    result.isTensor = true;
    for (int64_t size : tensor.getShape())
      result.shape.push_back(ShapedType::isDynamic(size) ? -1 : size);
    result.elementType =
        getElementType(tensor.getElementType(), /*inTensor=*/true);
    return result;
  }
  result.elementType = getElementType(type, /*inTensor=*/false);
  return result;
}

FunctionSignature mlir::mxfp4::describeFunction(func::FuncOp function) {
  FunctionSignature signature;
  signature.name = function.getSymName().str();
  for (Type type : function.getArgumentTypes())
    signature.arguments.push_back(describeType(type));
  for (Type type : function.getResultTypes())
    signature.results.push_back(describeType(type));
  return signature;
}
