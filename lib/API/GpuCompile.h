//===- GpuCompile.h - what the GPU targets' compilers share -----*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_API_GPUCOMPILE_H
#define MXFP4_LIB_API_GPUCOMPILE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <optional>
#include <string>

namespace mlir::mxfp4 {

/// A context with every dialect whose diagnostics collect, located, in
/// `diagnostics`.
struct CompileSession {
  CompileSession();

  MLIRContext context;
  llvm::SourceMgr sourceMgr;
  std::string diagnostics;
  llvm::raw_string_ostream stream{diagnostics};
  SourceMgrDiagnosticHandler handler{sourceMgr, &context, stream};
};

/// True if some function has ops besides the ones the mxfp4 kernels take:
/// then the program is bufferized and gets generic kernels too (the mxfp4
/// conversions' mixed mode); else its functions become flat host functions.
bool needsGenericKernels(ModuleOp module);

/// `headline`, then the collected diagnostics.
llvm::Error diagnosticsError(const llvm::Twine &headline,
                             llvm::StringRef diagnostics);

/// Parses and verifies `source`, then applies `recipe` (if not empty) and
/// checks its rotations.
llvm::Expected<OwningOpRef<ModuleOp>>
parseWithRecipe(CompileSession &session, llvm::StringRef source,
                llvm::StringRef name, llvm::StringRef recipe);

/// The object of the first gpu.binary of `module`.
std::optional<std::string> getBinaryObject(ModuleOp module);

/// ld.lld: $MXFP4_LD_LLD if set, else the one in LLVM's tools directory,
/// else ld.lld-22 or ld.lld on PATH; empty if there is none.
std::string findLdLld();

/// Seconds since `start`.
double secondsSince(std::chrono::steady_clock::time_point start);

} // namespace mlir::mxfp4

#endif // MXFP4_LIB_API_GPUCOMPILE_H
