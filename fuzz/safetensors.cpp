//===- safetensors.cpp - fuzz the safetensors header reader ---------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "FuzzTarget.h"

#include "mxfp4/Formats/Safetensors.h"

using namespace mlir::mxfp4;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  SafetensorsHeader header;
  (void)parseSafetensorsHeader(bytes, {"F32", "BF16", "I32", "U8"}, header);
  return 0;
}
