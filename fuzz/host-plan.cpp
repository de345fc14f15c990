//===- host-plan.cpp - fuzz the host plan reader --------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "FuzzTarget.h"

#include "mxfp4/Formats/HostPlan.h"

using namespace mlir::mxfp4;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  (void)listHostFunctions(text);
  std::vector<HostFunction> plan;
  if (!parseHostPlan(text, "plan.txt", plan).empty())
    return 0;
  // What the runtimes do with a plan before they run it.
  for (const HostFunction &function : plan) {
    (void)checkHostLifetimes(function);
    (void)measureHostMemory(function);
  }
  std::string written = formatHostPlan(plan);
  std::vector<HostFunction> again;
  std::string error = parseHostPlan(written, "plan.txt", again);
  fuzz::require(error.empty(), "formatHostPlan reads back",
                error + "\n" + written);
  fuzz::require(formatHostPlan(again) == written, "formatHostPlan is stable",
                written);
  return 0;
}
