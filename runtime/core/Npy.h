//===- Npy.h - .npy files and whole files -----------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CORE_NPY_H
#define MXFP4_RUNTIME_CORE_NPY_H

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::mxfp4::runtime {

/// The bytes of the file `path`.
std::vector<char> readFile(const std::string &path);

/// Writes `text` to the file `path`.
void writeFile(const std::string &path, const std::string &text);

/// The data bytes of a .npy file (C order, little endian).
std::vector<char> readNpy(const std::string &path);

/// Writes `data` as a .npy file of element type `type` (f32, bf16, i32, i64,
/// else bytes) and `shape`.
void writeNpy(const std::string &path, const std::string &type,
              const std::vector<int64_t> &shape, const std::vector<char> &data);

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CORE_NPY_H
