//===- Sm90a.cpp - compile for NVIDIA Hopper (sm_90a) ---------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/API/Sm90a.h"

#include "GpuCompile.h"

#include "mxfp4/API/HostLibrary.h"
#include "mxfp4/API/HostPlan.h"

#include "mxfp4/Pipelines/Pipelines.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::mxfp4;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The CUDA toolkit: $MXFP4_CUDA_PATH, else /usr/local/cuda.
static llvm::Expected<std::string> findToolkit() {
  std::string path = "/usr/local/cuda";
  if (const char *env = getenv("MXFP4_CUDA_PATH"))
    path = env;
  llvm::SmallString<256> ptxas(path);
  llvm::sys::path::append(ptxas, "bin", "ptxas");
  if (!llvm::sys::fs::can_execute(ptxas))
    return makeError("sm_90a cubins need the CUDA toolkit's ptxas, not found "
                     "at '" + ptxas + "' (set MXFP4_CUDA_PATH to the toolkit)");
  return path;
}

llvm::Expected<Sm90aArtifact>
mxfp4::compileForSm90a(llvm::StringRef source, llvm::StringRef name,
                       llvm::StringRef recipe, llvm::StringRef gemmPrecision) {
  auto start = std::chrono::steady_clock::now();
  llvm::Expected<std::string> toolkit = findToolkit();
  if (!toolkit)
    return toolkit.takeError();
  CompileSession session;
  llvm::Expected<OwningOpRef<ModuleOp>> module =
      parseWithRecipe(session, source, name, recipe);
  if (!module)
    return module.takeError();
  Sm90aArtifact artifact;
  PassManager kernels(&session.context);
  Sm90aPipelineOptions options;
  options.toolkit = *toolkit;
  options.format = "mlir";
  options.mixed = needsGenericKernels(**module);
  options.gemmPrecision = gemmPrecision.str();
  buildSm90aPipeline(kernels, options);
  if (failed(kernels.run(**module)))
    return diagnosticsError("cannot lower '" + name + "' for sm_90a",
                            session.diagnostics);
  {
    llvm::raw_string_ostream os(artifact.kernelIR);
    (*module)->print(os);
  }
  llvm::Expected<std::vector<HostFunction>> plan = buildHostPlan(**module);
  if (!plan)
    return plan.takeError();
  artifact.plan = formatHostPlan(*plan);
  (*module)->walk([&](gpu::GPUModuleOp m) {
    for (auto f : m.getOps<LLVM::LLVMFuncOp>())
      if (f->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()))
        ++artifact.kernels;
  });
  // PTX from a copy, then the cubin from the module itself.
  auto serialize = [&](ModuleOp m, llvm::StringRef format,
                       std::string &out) -> llvm::Error {
    PassManager pm(&session.context);
    GpuModuleToBinaryPassOptions binary;
    binary.compilationTarget = format.str();
    binary.toolkitPath = *toolkit;
    pm.addPass(createGpuModuleToBinaryPass(binary));
    std::optional<std::string> object;
    if (failed(pm.run(m)) || !(object = getBinaryObject(m)))
      return diagnosticsError("cannot compile the sm_90a kernels",
                              session.diagnostics);
    out = std::move(*object);
    return llvm::Error::success();
  };
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>((*module)->clone());
  if (llvm::Error e = serialize(*copy, "isa", artifact.ptx))
    return std::move(e);
  std::string cubin;
  if (llvm::Error e = serialize(**module, "bin", cubin))
    return std::move(e);
  artifact.cubin.assign(cubin.begin(), cubin.end());
  llvm::Expected<std::string> hostObject =
      emitHostObject(*plan, artifact.plan, artifact.cubin);
  if (!hostObject)
    return hostObject.takeError();
  artifact.hostObject = std::move(*hostObject);
  artifact.compileSeconds = secondsSince(start);
  return artifact;
}
