//===- npy.cpp - fuzz the .npy header reader ------------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "FuzzTarget.h"

#include "mxfp4/Formats/Npy.h"

using namespace mlir::mxfp4;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  NpyHeader header;
  if (!parseNpyHeader(bytes, header).empty())
    return 0;
  fuzz::require(header.dataOffset <= size, "data offset within the file",
                std::to_string(header.dataOffset));
  for (int64_t d : header.shape)
    fuzz::require(d >= 0, "non-negative sizes", std::to_string(d));
  (void)formatNpyShape(header.shape);
  return 0;
}
