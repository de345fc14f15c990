//===- Timing.h - calls timed with CUDA events ------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CORE_TIMING_H
#define MXFP4_RUNTIME_CORE_TIMING_H

#include "Device.h"
#include "Memory.h"
#include "Replay.h"

#include <cstddef>
#include <string>
#include <vector>

namespace mlir::mxfp4::runtime {

/// A call's time on the device's clock: an event before its first record and
/// one after its last, on the default stream that every launch and copy of
/// the call uses, so it covers the allocations, the copies of globals and
/// the host's gaps between launches as well as the kernels.
class Timer {
public:
  explicit Timer(Device &cu)
      : cu(cu), start(cu.createEvent()), stop(cu.createEvent()) {}
  Timer(const Timer &) = delete;
  Timer &operator=(const Timer &) = delete;
  ~Timer() {
    cu.destroyEvent(start);
    cu.destroyEvent(stop);
  }

  void begin() { cu.recordEvent(start); }

  /// Milliseconds since `begin`, once the device is there.
  float end() {
    cu.recordEvent(stop);
    return cu.elapsedMs(start, stop);
  }

private:
  Device &cu;
  void *start = nullptr, *stop = nullptr;
};

/// Runs one more call with events around every launch and prints the
/// kernels by total time: where a step's time goes.
void profileCall(Device &cu, Memory &memory, const Program &program,
                 const Arguments &arguments);

struct Times {
  size_t calls = 0;
  double mean = 0, min = 0, max = 0;
};

Times summarize(const std::vector<float> &ms);

/// Writes `t` as --time-json's one JSON object, with the launches a call
/// makes and the device memory the run allocated.
void writeTimeJson(const std::string &path, const std::string &function,
                   const Times &t, size_t launches, size_t deviceBytes);

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CORE_TIMING_H
