//===- Exec.h - one function, its results and its time ----------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `mxfp4-cuda-run exec`: the first call is a warmup and writes the --output
// files; --repeat=N (1 unless given) then times N more calls with CUDA
// events, each call alone or, with --back-to-back, as one batch (or
// --batches=B batches, each timed alone). The inputs
// are uploaded once and stay on the device; the plan's
// allocations come from a cache of freed blocks, as in PyTorch, so
// steady-state calls make no cuMemAlloc. --profile adds a call that times
// every launch and prints the kernels by total time.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CORE_EXEC_H
#define MXFP4_RUNTIME_CORE_EXEC_H

#include "Compiled.h"
#include "Device.h"
#include "Options.h"

namespace mlir::mxfp4::runtime {

/// Calls `o.function` of `compiled`, whose code object is loaded as `module`.
void exec(Device &cu, void *module, const Compiled &compiled, const Options &o);

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CORE_EXEC_H
