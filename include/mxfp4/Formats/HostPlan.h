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
//   launch KERNEL GX GY GZ BX BY BZ ARG...   (ARG: bID or sID)
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

/// One operation of a host function, in program order.
struct HostStep {
  enum class Kind { Alloc, Free, View, Const, Global, Launch };
  Kind kind = Kind::Alloc;
  /// The value defined (alloc, view, const, global) or freed.
  int64_t id = 0;
  int64_t source = 0;                           // view: the value it aliases
  int64_t bytes = 0;                            // alloc, const, global
  uint64_t bits = 0;                            // const: zero-extended
  std::vector<char> data;                       // global: the initial bytes
  std::string kernel;                           // launch
  int64_t grid[3] = {}, block[3] = {};          // launch
  std::vector<std::pair<bool, int64_t>> params; // launch: (a buffer?, id)
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
