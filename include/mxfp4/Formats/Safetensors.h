//===- Safetensors.h - the .safetensors format, without LLVM ----*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The header of Hugging Face's `.safetensors` files in standard C++ only:
// the compiler's runtime library (mxfp4/Runtime/Safetensors.h, which maps
// dtypes and wraps errors in llvm::Error) and the CUDA runtime (runtime/,
// which cannot link LLVM) read and write checkpoints through these, one
// implementation of the format.
//
// A file is an 8-byte little-endian header length N, N bytes of JSON
//
//   {"__metadata__":{"format":"pt"},
//    "name":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},...}
//
// padded with spaces to a multiple of 8, then the tensors' bytes back to
// back (offsets are relative to the end of the header).
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_FORMATS_SAFETENSORS_H
#define MXFP4_FORMATS_SAFETENSORS_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace mlir::mxfp4 {

/// A tensor entry of a safetensors header.
struct SafetensorsTensor {
  std::string name;
  /// The format's name of the element type: "F32", "U8", ...
  std::string dtype;
  std::vector<int64_t> shape;
  /// Where the tensor's bytes lie, [begin, end), counted from the end of the
  /// header.
  uint64_t begin = 0, end = 0;
};

/// The header of a safetensors file.
struct SafetensorsHeader {
  /// The "__metadata__" entries.
  std::map<std::string, std::string> metadata;
  /// The tensors in the order of the header.
  std::vector<SafetensorsTensor> tensors;
  /// Where the data starts in the file: 8 + the header's length.
  size_t dataOffset = 0;
};

/// The size in bytes of an element of the safetensors dtype `dtype` ("F32":
/// 4, "BF16": 2, ...), or 0 if the format has no such dtype.
size_t getSafetensorsDTypeSize(std::string_view dtype);

/// Parses and checks the header of the safetensors file `bytes` into
/// `header`: the tensors must have one of `dtypes` (named in the error
/// otherwise), shapes that match their data offsets, and their data must
/// tile the bytes after the header exactly, as the reference implementation
/// demands. Returns what is wrong ("the header is not valid JSON: ...",
/// "tensor 'w': 'data_offsets' [0, 24] run past the 16 data bytes of the file
/// (truncated file?)", ...), or an empty string.
std::string parseSafetensorsHeader(std::string_view bytes,
                                   const std::vector<std::string> &dtypes,
                                   SafetensorsHeader &header);

/// Formats into `bytes` what a safetensors file holds before the data of
/// `tensors`: the length and the compact JSON header with `metadata` first
/// (left out when empty), padded with spaces to a multiple of 8 bytes. The
/// tensors' offsets must lay their data out back to back in the order given,
/// from 0. Returns what is wrong, writing nothing, if a name repeats, is
/// "__metadata__" or is not UTF-8, if a dtype is not the format's or a
/// tensor's bytes do not match its shape; else an empty string.
std::string
formatSafetensorsHeader(const std::vector<SafetensorsTensor> &tensors,
                        const std::map<std::string, std::string> &metadata,
                        std::string &bytes);

} // namespace mlir::mxfp4

#endif // MXFP4_FORMATS_SAFETENSORS_H
