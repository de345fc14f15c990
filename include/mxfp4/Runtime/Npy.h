//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads and writes the NumPy `.npy` format (versions 1.0, 2.0 and 3.0): the
// magic "\x93NUMPY", a version, a header length, a Python dict literal with
// 'descr', 'fortran_order' and 'shape', then the raw elements. Only the
// little-endian C-order dtypes of HostArray.h are accepted.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_NPY_H
#define MXFP4_RUNTIME_NPY_H

#include "mxfp4/Runtime/HostArray.h"

#include "llvm/Support/Error.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir::mxfp4 {

/// Parses the contents of a `.npy` file; `name` (usually the path) prefixes
/// every error message.
llvm::Expected<HostArray> parseNpy(llvm::StringRef contents,
                                   llvm::StringRef name);

/// Reads the `.npy` file at `path`.
llvm::Expected<HostArray> readNpyFile(llvm::StringRef path);

/// Writes `array` in `.npy` format version 1.0 (2.0 if the header needs it),
/// with the data aligned to 64 bytes as NumPy writes it.
void writeNpy(const HostArray &array, llvm::raw_ostream &os);

/// Writes `array` to the `.npy` file at `path`, replacing it.
llvm::Error writeNpyFile(const HostArray &array, llvm::StringRef path);

} // namespace mlir::mxfp4

#endif // MXFP4_RUNTIME_NPY_H
