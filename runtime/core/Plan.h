//===- Plan.h - a function of a host plan -----------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The function of `mxfp4-run compile --target=sm_90a`'s plan.txt that a run
// calls, parsed once (by mxfp4/Formats/HostPlan.h) into records the timed
// calls replay, with the kernels they launch once the code object is loaded.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CORE_PLAN_H
#define MXFP4_RUNTIME_CORE_PLAN_H

#include "mxfp4/API/HostABI.h"
#include "mxfp4/Formats/HostPlan.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mlir::mxfp4::runtime {

/// One record of the function, parsed once: the timed calls replay these and
/// read no text.
struct Record {
  enum Kind { Arg, Alloc, Free, View, Const, Global, TensorMap, Launch, Result };
  Kind kind = Alloc;
  long id = 0;
  long source = 0;        // view, tensormap
  size_t index = 0;       // arg, result
  size_t bytes = 0;       // arg, alloc, global, result
  bool buffer = false;    // arg: a buffer, not a scalar
  uint64_t bits = 0;      // const
  std::vector<char> data; // global: `bytes` bytes
  std::string name;       // launch: the kernel; arg, result: the element type
  unsigned grid[3] = {}, block[3] = {};
  unsigned sharedBytes = 0;                // launch: dynamic shared memory
  mlir::mxfp4::HostTensorMap map;          // tensormap
  std::vector<std::pair<bool, long>> args; // launch: (is a buffer, id)
  std::vector<int64_t> shape;              // result
  void *kernel = nullptr;                  // launch, once the code object is loaded
};

/// The records of `function` in the plan `text` (read from `planPath`), in
/// file order; fails if the plan is malformed, has no such function or uses
/// one of its buffers after freeing it. Sets `*memory`, if given, to what
/// a call holds at its peak (mlir::mxfp4::measureHostMemory).
std::vector<Record> readFunction(const std::string &text,
                                 const std::string &planPath,
                                 const std::string &function,
                                 mlir::mxfp4::HostMemory *memory = nullptr);

/// The names of the functions of the plan `text`, in order.
std::vector<std::string> functionNames(const std::string &text);

/// The function a run calls: its plan records, and, through a host
/// library, its code and the kernels the code launches by index (else the
/// records' launches are replayed).
struct Program {
  std::vector<Record> records;
  mxfp4_host_function *code = nullptr;
  std::vector<void *> kernels;
  std::vector<std::string> kernelNames;
  /// The device memory a call holds: its buffer arguments and, at most,
  /// its own allocations.
  mlir::mxfp4::HostMemory memory;
};

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CORE_PLAN_H
