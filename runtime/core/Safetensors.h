//===- Safetensors.h - f32 tensors in safetensors files ---------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Hugging Face's format, parsed, checked and formatted by the code the CPU
// driver uses (mxfp4/Formats/Safetensors.h): an 8-byte header length, the
// JSON header with {"format": "pt"} metadata first and the tensors in order,
// padded to 8 bytes, then the data.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CORE_SAFETENSORS_H
#define MXFP4_RUNTIME_CORE_SAFETENSORS_H

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::mxfp4::runtime {

/// A little-endian f32 tensor.
struct NamedTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<char> data;
};

/// Writes `tensors`, in the order given, as the F32 tensors of the file
/// `path`.
void writeSafetensors(const std::string &path,
                      const std::vector<NamedTensor> &tensors);

/// The tensors of `path`, in the order of its header; fails naming the file
/// unless it is a valid safetensors file of F32 tensors.
std::vector<NamedTensor> readSafetensors(const std::string &path);

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CORE_SAFETENSORS_H
