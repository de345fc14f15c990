//===- Safetensors.h - Hugging Face .safetensors files ----------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads and writes the `.safetensors` format that Hugging Face checkpoints
// use: an 8-byte little-endian header length N, N bytes of JSON
//
//   {"__metadata__": {"format": "pt"},
//    "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}, ...}
//
// padded with spaces to a multiple of 8, then the tensors' bytes back to back
// (offsets are relative to the end of the header). Only the dtypes of
// HostArray.h are accepted: F32, F64, I32, I64, U8 and U16. The header is
// parsed, checked and formatted by mxfp4/Formats/Safetensors.h, which the
// CUDA runtime shares; this adds the dtypes, the files and llvm::Error.
//
// Writes go through writeFileAtomically (AtomicFile.h), so that a failed
// write never destroys the previous good file.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_SAFETENSORS_H
#define MXFP4_RUNTIME_SAFETENSORS_H

#include "mxfp4/Runtime/AtomicFile.h"
#include "mxfp4/Runtime/HostArray.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir::mxfp4 {

/// A tensor of a `.safetensors` file.
struct NamedArray {
  std::string name;
  HostArray array;
};

/// Returns the safetensors name of `dtype` ("F32", "U8", ...).
llvm::StringRef getSafetensorsDTypeName(DType dtype);

/// Parses the contents of a `.safetensors` file; `name` (usually the path)
/// prefixes every error message. The tensors come back in the order of the
/// header, which is the order writeSafetensors was given (other writers sort
/// by name; callers must not depend on the order). If `metadata` is not null,
/// it receives the "__metadata__" entries.
llvm::Expected<std::vector<NamedArray>>
parseSafetensors(llvm::StringRef contents, llvm::StringRef name,
                 std::map<std::string, std::string> *metadata = nullptr);

/// Reads the `.safetensors` file at `path`; see parseSafetensors.
llvm::Expected<std::vector<NamedArray>>
readSafetensors(llvm::StringRef path,
                std::map<std::string, std::string> *metadata = nullptr);

/// Writes `tensors` in the order given, with `metadata` as "__metadata__"
/// (left out when empty), to `os`. Fails, writing nothing, if a name repeats,
/// is "__metadata__" or is not UTF-8, or if an array's bytes do not match its
/// shape; `name` prefixes the error messages.
llvm::Error
writeSafetensors(llvm::raw_ostream &os, llvm::StringRef name,
                 llvm::ArrayRef<NamedArray> tensors,
                 const std::map<std::string, std::string> &metadata = {});

/// Writes the `.safetensors` file at `path` atomically (see
/// writeFileAtomically).
llvm::Error
writeSafetensors(llvm::StringRef path, llvm::ArrayRef<NamedArray> tensors,
                 const std::map<std::string, std::string> &metadata = {});

} // namespace mlir::mxfp4

#endif // MXFP4_RUNTIME_SAFETENSORS_H
