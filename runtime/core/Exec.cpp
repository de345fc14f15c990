//===- Exec.cpp - one function, its results and its time ------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Exec.h"

#include "Memory.h"
#include "Replay.h"
#include "Timing.h"

#include <cstdio>

namespace mlir::mxfp4::runtime {

void exec(Device &cu, void *module, const Compiled &compiled,
          const Options &o) {
  Program program = compiled.program(o.function);
  resolveKernels(cu, module, program);
  Memory memory(cu);
  Arguments arguments =
      upload(cu, memory, program.records, o.inputs, o.function);
  replay(cu, memory, program, arguments, &o.outputs);
  cu.synchronize();
  if (o.repeat == 0)
    return;

  keepPristineCopies(cu, memory, arguments, o.function, o.toolName);
  std::vector<float> ms;
  {
    Timer timer(cu);
    if (o.backToBack) {
      for (size_t batch = 0; batch < o.batches; ++batch) {
        timer.begin();
        for (size_t i = 0; i < o.repeat; ++i) {
          restore(cu, arguments);
          replay(cu, memory, program, arguments, nullptr);
        }
        ms.insert(ms.end(), o.repeat, timer.end() / float(o.repeat));
      }
    } else {
      for (size_t i = 0; i < o.repeat; ++i) {
        restore(cu, arguments);
        timer.begin();
        replay(cu, memory, program, arguments, nullptr);
        ms.push_back(timer.end());
      }
    }
  }
  cu.synchronize();
  Times t = summarize(ms);
  std::printf("time: %s: %zu calls, mean %.3f ms, min %.3f ms, max %.3f ms\n",
              o.function.c_str(), t.calls, t.mean, t.min, t.max);
  std::printf("device memory: %.3f GB allocated (arguments, their pristine "
              "copies and the cached blocks)\n",
              double(memory.allocatedBytes()) / 1e9);
  if (o.profile) {
    restore(cu, arguments);
    profileCall(cu, memory, program, arguments);
  }
  if (!o.timeJson.empty()) {
    size_t launches = 0;
    for (const Record &r : program.records)
      launches += r.kind == Record::Launch;
    writeTimeJson(o.timeJson, o.function, t, launches,
                  memory.allocatedBytes());
  }
}

} // namespace mlir::mxfp4::runtime
