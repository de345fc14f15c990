//===- HostArray.cpp - a dense array in host memory -----------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Runtime/HostArray.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::mxfp4;

int64_t mlir::mxfp4::getDTypeSize(DType dtype) {
  switch (dtype) {
  case DType::Float32:
  case DType::Int32:
    return 4;
  case DType::Float64:
  case DType::Int64:
    return 8;
  case DType::UInt8:
    return 1;
  case DType::UInt16:
    return 2;
  }
  llvm_unreachable("unknown dtype");
}

llvm::StringRef mlir::mxfp4::getDTypeName(DType dtype) {
  switch (dtype) {
  case DType::Float32:
    return "float32";
  case DType::Float64:
    return "float64";
  case DType::Int32:
    return "int32";
  case DType::Int64:
    return "int64";
  case DType::UInt8:
    return "uint8";
  case DType::UInt16:
    return "uint16";
  }
  llvm_unreachable("unknown dtype");
}

llvm::StringRef mlir::mxfp4::getDTypeDescr(DType dtype) {
  switch (dtype) {
  case DType::Float32:
    return "<f4";
  case DType::Float64:
    return "<f8";
  case DType::Int32:
    return "<i4";
  case DType::Int64:
    return "<i8";
  case DType::UInt8:
    return "|u1";
  case DType::UInt16:
    return "<u2";
  }
  llvm_unreachable("unknown dtype");
}

std::optional<DType> mlir::mxfp4::parseDTypeDescr(llvm::StringRef descr) {
  return llvm::StringSwitch<std::optional<DType>>(descr)
      .Case("<f4", DType::Float32)
      .Case("<f8", DType::Float64)
      .Case("<i4", DType::Int32)
      .Case("<i8", DType::Int64)
      .Case("|u1", DType::UInt8)
      .Case("<u2", DType::UInt16)
      .Default(std::nullopt);
}

std::string mlir::mxfp4::formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '(';
  for (auto [i, size] : llvm::enumerate(shape)) {
    if (i)
      os << ", ";
    if (size < 0)
      os << '?';
    else
      os << size;
  }
  if (shape.size() == 1)
    os << ',';
  os << ')';
  return text;
}

std::optional<int64_t>
mlir::mxfp4::getNumElements(llvm::ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t size : shape) {
    if (size < 0 || llvm::MulOverflow(count, size, count))
      return std::nullopt;
  }
  return count;
}

HostArray HostArray::zeros(DType dtype, llvm::ArrayRef<int64_t> shape) {
  HostArray array;
  array.dtype = dtype;
  array.shape.assign(shape.begin(), shape.end());
  array.bytes.assign(array.getNumElements() * getDTypeSize(dtype), 0);
  return array;
}

int64_t HostArray::getNumElements() const {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}
