//===- Safetensors.cpp - f32 tensors in safetensors files -----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Safetensors.h"

#include "Failure.h"
#include "Npy.h"

#include "mxfp4/Formats/Safetensors.h"

#include <cerrno>
#include <fstream>

namespace mlir::mxfp4::runtime {

using mlir::mxfp4::SafetensorsTensor;

void writeSafetensors(const std::string &path,
                      const std::vector<NamedTensor> &tensors) {
  std::vector<SafetensorsTensor> entries;
  uint64_t offset = 0;
  for (const NamedTensor &t : tensors) {
    entries.push_back({t.name, "F32", t.shape, offset, offset + t.data.size()});
    offset = entries.back().end;
  }
  std::string header;
  // "format": "pt" is what transformers checks before loading the file.
  std::string problem = mlir::mxfp4::formatSafetensorsHeader(
      entries, {{"format", "pt"}}, header);
  if (!problem.empty())
    fail("'" + path + "': " + problem);
  errno = 0; // what failWrite reports comes from this file's writes
  std::ofstream out(path, std::ios::binary);
  out << header;
  for (const NamedTensor &t : tensors)
    out.write(t.data.data(), t.data.size());
  if (!out.flush())
    failWrite(path);
}

std::vector<NamedTensor> readSafetensors(const std::string &path) {
  std::vector<char> file = readFile(path);
  SafetensorsHeader header;
  std::string problem = mlir::mxfp4::parseSafetensorsHeader(
      std::string_view(file.data(), file.size()), {"F32"}, header);
  if (!problem.empty())
    fail("'" + path + "': " + problem);
  std::vector<NamedTensor> tensors;
  for (const SafetensorsTensor &entry : header.tensors) {
    auto data = file.begin() + header.dataOffset;
    tensors.push_back({entry.name, entry.shape,
                       std::vector<char>(data + entry.begin, data + entry.end)});
  }
  return tensors;
}

} // namespace mlir::mxfp4::runtime
