//===- Npy.h - the .npy format, without LLVM --------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// NumPy's .npy header in standard C++ only: the compiler's runtime library
// (mxfp4/Runtime/Npy.h, which maps dtypes and wraps errors in llvm::Error)
// and the CUDA runtime (runtime/, which cannot link LLVM) read and write
// .npy files through these, one implementation of the format.
//
// A file is the magic "\x93NUMPY", a version (1.0: a 16-bit header length;
// 2.0 and 3.0: 32-bit), the header, a Python dict literal such as
// "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" padded with
// spaces and a newline so that the data starts at a multiple of 64 bytes,
// then the data.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_FORMATS_NPY_H
#define MXFP4_FORMATS_NPY_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlir::mxfp4 {

/// The fields of a .npy header.
struct NpyHeader {
  /// NumPy's type string, e.g. "<f4" or "|u1".
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
  /// Where the data starts in the file.
  size_t dataOffset = 0;
};

/// Parses the header of the .npy file `bytes` into `header`. Returns what is
/// wrong ("not a .npy file (bad magic)", "truncated .npy header", "'shape'
/// is not a tuple of sizes", ...), or an empty string.
std::string parseNpyHeader(std::string_view bytes, NpyHeader &header);

/// `shape` as NumPy prints it: "(2, 3)", "(5,)", "()".
std::string formatNpyShape(const std::vector<int64_t> &shape);

/// The bytes before the data of a C-order .npy file of `descr` and `shape`:
/// version 1.0, or 2.0 when the header needs more than 64 KiB, with the
/// data aligned to 64 bytes as NumPy writes it.
std::string formatNpyHeader(const std::string &descr,
                            const std::vector<int64_t> &shape);

} // namespace mlir::mxfp4

#endif // MXFP4_FORMATS_NPY_H
