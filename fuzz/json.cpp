//===- json.cpp - fuzz the JSON reader (configs, trainer states) ----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "FuzzTarget.h"

#include "mxfp4/Formats/Checkpoint.h"
#include "mxfp4/Formats/Json.h"

using namespace mlir::mxfp4;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  std::string error;
  if (std::optional<JsonValue> value = parseJson(text, error)) {
    // What a checkpoint writes of a value reads back.
    std::string written = formatCheckpointJson(*value);
    std::optional<JsonValue> again = parseJson(written, error);
    fuzz::require(again.has_value(), "formatCheckpointJson reads back",
                  error + " in " + written);
    fuzz::require(formatCheckpointJson(*again) == written,
                  "formatCheckpointJson is stable", written);
  }
  TrainerState state;
  (void)parseTrainerState(text, state);
  return 0;
}
