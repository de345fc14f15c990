//===- HostPlan.h - the host function as a replayable plan ------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The host functions of a program lowered for a GPU are straight-line:
// allocations, frees, reshapes, constants, constant globals and launches.
// `buildHostPlan` reads them once; `formatHostPlan` writes them as text a
// small runtime without LLVM replays (runtime/cuda), and HostLibrary.h
// compiles them to machine code. Format, one record per line, `#` comments:
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

#ifndef MXFP4_API_HOSTPLAN_H
#define MXFP4_API_HOSTPLAN_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace mlir::mxfp4 {

/// An argument or a result of a host function. Values are numbered in the
/// order the function defines them, arguments first.
struct HostValue {
  int64_t id = 0;
  int64_t bytes = 0;
  bool buffer = true; // else an integer or float scalar (arguments only)
  /// A buffer's element type and shape, "f32 256 64".
  std::string type;
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

/// Reads every public host function of `module`; an op outside the plan's
/// vocabulary is a located error.
llvm::Expected<std::vector<HostFunction>> buildHostPlan(ModuleOp module);

/// The plan as text (the format above).
std::string formatHostPlan(llvm::ArrayRef<HostFunction> plan);

} // namespace mlir::mxfp4

#endif // MXFP4_API_HOSTPLAN_H
