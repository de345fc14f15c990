//===- HostArray.h - a dense array in host memory ---------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The unit of data that crosses the runtime boundary: a contiguous, row-major
// byte buffer with a NumPy-compatible storage type and a shape. It knows
// nothing about MLIR types; see ElementType.h for how tensor element types
// are stored in it.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_HOSTARRAY_H
#define MXFP4_RUNTIME_HOSTARRAY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::mxfp4 {

/// The storage types of host arrays, all little-endian, named as NumPy names
/// them.
enum class DType { Float32, Float64, Int32, Int64, UInt8, UInt16 };

/// Returns the size of one element of `dtype` in bytes.
int64_t getDTypeSize(DType dtype);

/// Returns NumPy's name of `dtype` ("float32", "uint8", ...).
llvm::StringRef getDTypeName(DType dtype);

/// Returns the `.npy` type descriptor of `dtype` ("<f4", "|u1", ...).
llvm::StringRef getDTypeDescr(DType dtype);

/// Returns the dtype whose `.npy` descriptor is `descr`, if it is one of the
/// supported ones.
std::optional<DType> parseDTypeDescr(llvm::StringRef descr);

/// Formats `shape` as NumPy prints it: "(4, 64)", "(3,)", "()". Negative
/// (dynamic) sizes print as "?".
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// Returns the number of elements of `shape`, or std::nullopt if a size is
/// negative or the product does not fit in int64_t.
std::optional<int64_t> getNumElements(llvm::ArrayRef<int64_t> shape);

/// A dense array: `bytes` holds the elements in row-major (C) order, each
/// `getDTypeSize(dtype)` bytes, little-endian.
struct HostArray {
  DType dtype = DType::Float32;
  llvm::SmallVector<int64_t, 4> shape;
  std::vector<uint8_t> bytes;

  /// Returns a zero-filled array of `dtype` and `shape`; `shape` must be
  /// static and small enough to allocate.
  static HostArray zeros(DType dtype, llvm::ArrayRef<int64_t> shape);

  /// Returns the number of elements.
  int64_t getNumElements() const;
};

} // namespace mlir::mxfp4

#endif // MXFP4_RUNTIME_HOSTARRAY_H
