//===- Replay.h - one call of a plan function on the device -----*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A call runs either by interpreting the plan's records or through the
// compile's host library (HostLibrary.h): both make the same driver calls.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CORE_REPLAY_H
#define MXFP4_RUNTIME_CORE_REPLAY_H

#include "Device.h"
#include "Memory.h"
#include "Plan.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace mlir::mxfp4::runtime {

/// A buffer argument: uploaded once, before the first call, and kept on the
/// device for every call.
struct Input {
  size_t index = 0;
  long id = 0;
  std::vector<char> host; // the .npy data, to spot a call writing it
  DevicePtr device = 0;
  DevicePtr pristine = 0; // a copy to restore, once a call wrote it
};

/// What every call starts from: the argument buffers and the scalars
/// (arguments and the plan's constants, fixed for the run).
struct Arguments {
  std::vector<Input> buffers;
  std::map<long, uint64_t> scalars;
};

/// Uploads the buffer `inputs` and reads the scalar ones of `function`'s
/// `records`, with the plan's constants. A buffer input is @FILE.npy or,
/// for timing runs whose arguments are too large to ship (a training step's
/// weights and moments), one generated on the host: `zeros` or `ones`
/// (f32), `normal:STD` (f32 drawn from a table of 65,536 normal values by a
/// hash of the element's index: the distribution of random weights, not
/// their independence) or `integers:N` (i32 in [0, N), token ids).
Arguments upload(Device &cu, Memory &memory, const std::vector<Record> &records,
                 const std::vector<std::string> &inputs,
                 const std::string &function);

/// Keeps a device copy of every argument the warmup call wrote (see
/// Replay.cpp), for `restore`; `tool` names the program in its note.
void keepPristineCopies(Device &cu, Memory &memory, Arguments &arguments,
                        const std::string &function, const std::string &tool);

/// Puts back the arguments a call wrote (outside the timed region: the copy
/// is queued before the start event on the same stream).
void restore(Device &cu, const Arguments &arguments);

/// Resolves the kernels of the records' launches and the library's.
void resolveKernels(Device &cu, void *module, Program &program);

/// Events around each launch of a profiled call, in launch order.
struct LaunchEvents {
  std::vector<std::pair<void *, void *>> events;
  std::vector<const std::string *> kernels;
};

/// One call of the function, through the library or the records. The
/// warmup call gets the --output paths and writes the results; timed calls
/// get none and copy nothing back. Blocks the call took and did not free
/// (its results, its globals) go back to the cache at its end, as when a
/// caller drops the results, except those `kept` asks for.
void replay(Device &cu, Memory &memory, const Program &program,
            const Arguments &arguments, const std::vector<std::string> *outputs,
            LaunchEvents *profile = nullptr,
            std::vector<DevicePtr> *kept = nullptr);

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CORE_REPLAY_H
