//===- training-run.cpp - fuzz the run.txt reader -------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "FuzzTarget.h"

#include "mxfp4/Formats/TrainingRun.h"

using namespace mlir::mxfp4;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  TrainingRunManifest manifest;
  if (!parseTrainingRunManifest(text, "run.txt", manifest).empty())
    return 0;
  // A manifest read is one the writer writes and reads back the same.
  std::string written = formatTrainingRunManifest(manifest);
  TrainingRunManifest again;
  std::string error = parseTrainingRunManifest(written, "run.txt", again);
  fuzz::require(error.empty(), "formatTrainingRunManifest reads back",
                error + "\n" + written);
  fuzz::require(formatTrainingRunManifest(again) == written,
                "formatTrainingRunManifest is stable", written);
  return 0;
}
