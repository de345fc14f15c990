//===- Gfx950Launch.h - run a gfx950 host function through HIP --*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_API_GFX950LAUNCH_H
#define MXFP4_LIB_API_GFX950LAUNCH_H

#include "mxfp4/Runtime/HipRuntime.h"
#include "mxfp4/Target/GFX950/CodeObject.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::mxfp4::gfx950 {

/// Executes the host functions that convert-mxfp4-to-amdgpu produces
/// (allocations, launches, a return) on a HIP device.
class HipLauncher {
public:
  /// Loads the HIP runtime; a clear error without one or without a device.
  static llvm::Expected<std::unique_ptr<HipLauncher>> create();

  /// Loads the code object holding every kernel and reads its metadata (the
  /// kernel argument layouts).
  llvm::Error loadCodeObject(llvm::StringRef bytes);

  /// Runs `host` on device copies of `arguments` (one byte buffer per
  /// argument, memrefs and scalars alike) and returns its results' bytes.
  llvm::Expected<std::vector<std::vector<uint8_t>>>
  run(func::FuncOp host, llvm::ArrayRef<std::vector<uint8_t>> arguments);

private:
  HipLauncher() = default;
  std::unique_ptr<HipRuntime> hip;
  HipModule module;
  CodeObject codeObject;
};

} // namespace mlir::mxfp4::gfx950

#endif // MXFP4_LIB_API_GFX950LAUNCH_H
