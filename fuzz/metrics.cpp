//===- metrics.cpp - fuzz the metrics.jsonl reader ------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "FuzzTarget.h"

#include "mxfp4/Formats/Metrics.h"

using namespace mlir::mxfp4;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  for (bool requireStep : {false, true}) {
    MetricsFile file;
    (void)parseMetrics(text, file, requireStep);
  }
  return 0;
}
