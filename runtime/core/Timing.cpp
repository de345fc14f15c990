//===- Timing.cpp - calls timed with CUDA events --------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Timing.h"

#include "Failure.h"

#include "mxfp4/Formats/Json.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

namespace mlir::mxfp4::runtime {

void profileCall(Device &cu, Memory &memory, const Program &program,
                 const Arguments &arguments) {
  LaunchEvents profile;
  for (const Record &r : program.records)
    if (r.kind == Record::Launch) {
      void *start = cu.createEvent();
      profile.events.push_back({start, cu.createEvent()});
    }
  replay(cu, memory, program, arguments, nullptr, &profile);
  cu.synchronize();
  std::map<std::string, std::pair<double, size_t>> byKernel;
  double total = 0;
  for (size_t i = 0; i < profile.kernels.size(); ++i) {
    float ms =
        cu.elapsedMs(profile.events[i].first, profile.events[i].second);
    auto &entry = byKernel[*profile.kernels[i]];
    entry.first += ms;
    ++entry.second;
    total += ms;
  }
  for (auto [start, stop] : profile.events) {
    cu.destroyEvent(start);
    cu.destroyEvent(stop);
  }
  std::vector<std::pair<double, std::string>> sorted;
  for (auto &[name, entry] : byKernel)
    sorted.push_back({entry.first, name});
  std::sort(sorted.rbegin(), sorted.rend());
  std::printf("profile: %zu launches, %.3f ms in kernels\n",
              profile.kernels.size(), total);
  // Every kernel down to 0.2% of the time: the small ones add up.
  double rest = 0;
  size_t restKernels = 0;
  for (auto &[ms, name] : sorted) {
    size_t calls = byKernel[name].second;
    if (ms < 0.002 * total) {
      rest += ms;
      restKernels += calls;
      continue;
    }
    std::printf("profile: %9.3f ms %5.1f%% %5zu x %s\n", ms, 100 * ms / total,
                calls, name.c_str());
  }
  std::printf("profile: %9.3f ms %5.1f%% %5zu x (kernels under 0.2%% each)\n",
              rest, 100 * rest / total, restKernels);
}

Times summarize(const std::vector<float> &ms) {
  Times t;
  t.calls = ms.size();
  t.min = *std::min_element(ms.begin(), ms.end());
  t.max = *std::max_element(ms.begin(), ms.end());
  for (float m : ms)
    t.mean += m;
  t.mean /= double(ms.size());
  return t;
}

void writeTimeJson(const std::string &path, const std::string &function,
                   const Times &t, size_t launches, size_t deviceBytes) {
  std::ofstream out(path);
  if (!out)
    failWrite(path);
  char numbers[200];
  std::snprintf(numbers, sizeof(numbers),
                "\"calls\": %zu, \"mean_ms\": %.6f, \"min_ms\": %.6f, "
                "\"max_ms\": %.6f, \"launches_per_call\": %zu, "
                "\"device_bytes\": %zu",
                t.calls, t.mean, t.min, t.max, launches, deviceBytes);
  out << "{\"function\": " << jsonString(function) << ", " << numbers << "}\n";
}

} // namespace mlir::mxfp4::runtime
