//===- CallArguments.cpp - check and convert call arguments ---------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "CallArguments.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>
#include <limits>

using namespace mlir::mxfp4;
using llvm::StringRef;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

//===----------------------------------------------------------------------===//
// Scalar
//===----------------------------------------------------------------------===//

llvm::Expected<Scalar> Scalar::parse(StringRef text) {
  StringRef rest = text.trim();
  Scalar scalar;
  // Integers: decimal, or hexadecimal up to 64 bits (wrapping into int64_t,
  // so 0xFFFFFFFFFFFFFFFF is -1).
  bool negative = rest.starts_with("-");
  StringRef digits = negative ? rest.drop_front() : rest;
  bool isHex = digits.consume_front_insensitive("0x");
  auto isDigit = isHex ? llvm::isHexDigit : llvm::isDigit;
  if (!digits.empty() && llvm::all_of(digits, isDigit)) {
    uint64_t magnitude;
    uint64_t limit =
        isHex ? std::numeric_limits<uint64_t>::max()
              : static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) +
                    negative;
    if (digits.getAsInteger(isHex ? 16 : 10, magnitude) || magnitude > limit)
      return makeError("the integer '" + text + "' does not fit in 64 bits");
    scalar.intValue =
        static_cast<int64_t>(negative ? 0 - magnitude : magnitude);
    return scalar;
  }
  double value;
  if (rest.empty() || rest.getAsDouble(value))
    return makeError("'" + text + "' is neither a number nor '@FILE.npy'");
  scalar.isFloat = true;
  scalar.floatValue = value;
  return scalar;
}

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

static std::string argumentName(unsigned index, StringRef label) {
  std::string name = "argument #" + std::to_string(index);
  if (!label.empty())
    name += " (" + label.str() + ")";
  return name;
}

static llvm::Error unsupportedType(StringRef what, const ValueType &type) {
  return makeError(what + ": type " + type.text +
                   " is not supported by exec (tensors of f32, f64, bf16, "
                   "i8, i32, i64, index, f4E2M1FN or f8E8M0FNU, and scalars "
                   "of f32, f64, i32, i64 or index)");
}

/// Converts a scalar to the 0-d array of `type` that holds its value.
static llvm::Expected<HostArray>
convertScalar(const ValueType &type, const Scalar &scalar, StringRef name) {
  ElementType elementType = *type.elementType;
  HostArray array = HostArray::zeros(getStorageDType(elementType), {});
  auto store = [&](auto value) {
    std::memcpy(array.bytes.data(), &value, sizeof(value));
  };
  if (elementType == ElementType::F32) {
    store(scalar.isFloat ? static_cast<float>(scalar.floatValue)
                         : static_cast<float>(scalar.intValue));
    return array;
  }
  if (elementType == ElementType::F64) {
    store(scalar.isFloat ? scalar.floatValue
                         : static_cast<double>(scalar.intValue));
    return array;
  }
  if (scalar.isFloat)
    return makeError(name + ": expected an integer for " + type.text);
  if (elementType == ElementType::I32) {
    // Accept the signed and the unsigned range, so 0xFFFFFFFF is -1.
    if (scalar.intValue < std::numeric_limits<int32_t>::min() ||
        scalar.intValue > std::numeric_limits<uint32_t>::max())
      return makeError(name + ": " + llvm::Twine(scalar.intValue) +
                       " does not fit in i32");
    store(static_cast<int32_t>(static_cast<uint32_t>(scalar.intValue)));
    return array;
  }
  store(scalar.intValue);
  return array;
}

/// Returns true if `array` has the dtype and shape `type` asks for.
static bool matches(const ValueType &type, const HostArray &array) {
  if (array.dtype != getStorageDType(*type.elementType) ||
      array.shape.size() != type.shape.size())
    return false;
  for (auto [want, got] : llvm::zip_equal(type.shape, array.shape))
    if (want >= 0 && want != got)
      return false;
  return true;
}

llvm::Expected<HostArray>
mlir::mxfp4::convertArgument(const ValueType &param,
                             const CallArgument &argument, unsigned index) {
  std::string name = argumentName(index, argument.label);
  if (!param.elementType)
    return unsupportedType(name, param);

  if (const auto *scalar = std::get_if<Scalar>(&argument.value)) {
    if (param.isTensor)
      return makeError(name + ": expected " + param.describeExpected() +
                       ", got a scalar");
    return convertScalar(param, *scalar, name);
  }

  const auto &array = std::get<HostArray>(argument.value);
  if (!matches(param, array))
    return makeError(name + ": expected " + param.describeExpected() +
                     ", got dtype " + getDTypeName(array.dtype) + " shape " +
                     formatShape(array.shape));
  if (param.elementType == ElementType::F4E2M1FN) {
    auto bad =
        llvm::find_if(array.bytes, [](uint8_t code) { return code > 0xF; });
    if (bad != array.bytes.end()) {
      // The NumPy index of the offending element.
      llvm::SmallVector<int64_t, 4> position(array.shape.size());
      int64_t linear = bad - array.bytes.begin();
      for (int64_t dim = array.shape.size() - 1; dim >= 0; --dim) {
        position[dim] = linear % array.shape[dim];
        linear /= array.shape[dim];
      }
      return makeError(name + ": element " + formatShape(position) + " is " +
                       llvm::Twine(static_cast<unsigned>(*bad)) +
                       ", not an f4E2M1FN code (0 to 15, sign in bit 3)");
    }
  }
  return array;
}

llvm::Expected<HostArray> mlir::mxfp4::allocateResult(const ValueType &type,
                                                      unsigned index) {
  std::string name = "result #" + std::to_string(index);
  if (!type.elementType)
    return unsupportedType(name, type);
  if (type.hasDynamicShape())
    return makeError(name + ": type " + type.text +
                     ": dynamic result shapes are not supported by exec");
  std::optional<int64_t> count = getNumElements(type.shape);
  int64_t bytes;
  if (!count ||
      llvm::MulOverflow(
          *count, getDTypeSize(getStorageDType(*type.elementType)), bytes))
    return makeError(name + ": type " + type.text + " is too large");
  return HostArray::zeros(getStorageDType(*type.elementType), type.shape);
}
