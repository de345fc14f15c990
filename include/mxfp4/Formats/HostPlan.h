//===- HostPlan.h - the host function as a replayable plan ------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The host functions of a program lowered for a GPU are straight-line:
// allocations, frees, reshapes, constants, constant globals and launches.
// The compiler reads them from MLIR once (mxfp4/API/HostPlan.h) into the
// structures here and writes them as plan.txt, which a small runtime
// without LLVM (runtime/) parses back here and replays; HostLibrary.h
// compiles the same structures to machine code. Standard C++ only.
//
// Format, one record per line, `#` comments:
//
//   function NAME ARGS RESULTS
//   arg I buffer ID BYTES TYPE DIMS...  | arg I scalar ID BYTES
//   alloc ID BYTES               | free ID
//   view ID SOURCE               (a reshape or cast: the same bytes)
//   const ID BYTES HEXBITS       (little-endian scalar)
//   global ID BYTES HEXDATA
//   tensormap ID SOURCE TYPE dims=D,... strides=S,... box=B,...
//             offset=BYTES swizzle=0|32|64|128 l2=0|64|128|256
//   launch KERNEL GX GY GZ BX BY BZ [shared=BYTES] ARG...
//                                      (ARG: bID or sID)
//   result I ID BYTES TYPE DIMS...      (TYPE: f32 bf16 i32 i64 u8 bytes)
//   end
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_FORMATS_HOSTPLAN_H
#define MXFP4_FORMATS_HOSTPLAN_H

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mlir::mxfp4 {

/// An argument or a result of a host function. Values are numbered in the
/// order the function defines them, arguments first.
struct HostValue {
  int64_t id = 0;
  int64_t bytes = 0;
  bool buffer = true; // else an integer or float scalar (arguments only)
  /// A buffer's element type (f32 bf16 i32 i64 u8, else bytes) and shape,
  /// so that a runtime can read and write .npy files.
  std::string elementType;
  std::vector<int64_t> shape;
};

/// A TMA tensor map (CUDA's CUtensorMap, tiled mode) of a buffer: what
/// cuTensorMapEncodeTiled takes, the buffer's address aside. Dimensions go
/// outermost first, as in the buffer's memref type; out-of-bounds elements
/// read as zeros; no interleave.
struct HostTensorMap {
  std::string elementType; // u8 f16 bf16 f32 i32 i64
  std::vector<int64_t> dims;
  /// Bytes between consecutive indices of each dimension but the innermost
  /// (whose elements are contiguous): one fewer than `dims`.
  std::vector<int64_t> strides;
  /// The box a load brings to shared memory, elements per dimension.
  std::vector<int64_t> box;
  int64_t offset = 0;      // bytes from the buffer's address to element 0
  int64_t swizzle = 0;     // the shared-memory swizzle span in bytes, or 0
  int64_t l2Promotion = 0; // the L2 promotion in bytes, or 0
};

/// The size in bytes of a tensor map's element type, 0 if it has none.
int64_t getTensorMapElementBytes(const std::string &elementType);

/// What the driver would refuse about `map` (rank 1 to 5, 16-byte aligned
/// strides and offset, boxes of 1 to 256 whose innermost row is a multiple
/// of 16 bytes and fits the swizzle), as a sentence, or an empty string.
std::string checkTensorMap(const HostTensorMap &map);

/// One operation of a host function, in program order.
struct HostStep {
  enum class Kind { Alloc, Free, View, Const, Global, TensorMap, Launch };
  Kind kind = Kind::Alloc;
  /// The value defined (alloc, view, const, global) or freed.
  int64_t id = 0;
  int64_t source = 0;                           // view, tensormap: the buffer
  int64_t bytes = 0;                            // alloc, const, global
  uint64_t bits = 0;                            // const: zero-extended
  std::vector<char> data;                       // global: the initial bytes
  std::string kernel;                           // launch
  int64_t grid[3] = {}, block[3] = {};          // launch
  std::vector<std::pair<bool, int64_t>> params; // launch: (a buffer?, id)
  int64_t sharedBytes = 0; // launch: dynamic shared memory
  HostTensorMap map;       // tensormap: its value is the map's device address
};

/// A public host function: its arguments and results by index, its steps.
struct HostFunction {
  std::string name;
  std::vector<HostValue> arguments, results;
  std::vector<HostStep> steps;
};

/// The plan as text (the format above).
std::string formatHostPlan(const std::vector<HostFunction> &plan);

/// Parses the plan `text` (read from `name`) into `plan`. Returns what is
/// wrong, located as "NAME:LINE: message", or an empty string. A global's
/// data may be shorter than its BYTES: runtimes upload it zero-padded.
std::string parseHostPlan(std::string_view text, const std::string &name,
                          std::vector<HostFunction> &plan);

/// The names of the functions of the plan `text`, in order, read from their
/// `function` records alone.
std::vector<std::string> listHostFunctions(std::string_view text);

/// Runtimes hand a freed block to a later `alloc`, so a plan that touched a
/// buffer (or a view of it) after its `free` would read another buffer's
/// data. Returns how `function` does ("the plan passes kernel_3 buffer 12
/// after freeing it"), or an empty string.
std::string checkHostLifetimes(const HostFunction &function);

/// The device memory a call of a host function holds, in bytes.
struct HostMemory {
  /// The buffer arguments, which the caller owns.
  int64_t arguments = 0;
  /// The most that the function's own allocations and globals hold at
  /// once, its results included (views hold nothing of their own; a freed
  /// block counts no longer).
  int64_t peakTemporaries = 0;
  int64_t peak() const { return arguments + peakTemporaries; }
};

/// What a call of `function` holds at its peak, by program order.
HostMemory measureHostMemory(const HostFunction &function);

} // namespace mlir::mxfp4

#endif // MXFP4_FORMATS_HOSTPLAN_H
