//===- Sm90a.cpp - compile for NVIDIA Hopper (sm_90a) ---------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/API/Sm90a.h"

#include "mxfp4/API/HostPlan.h"

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Dialect.h"
#include "mxfp4/Dialect/MXFP4/Transforms/Passes.h"
#include "mxfp4/InitAll.h"
#include "mxfp4/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>

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

/// Runs `pm` on `module`; the diagnostics in `diagnostics` on failure.
static llvm::Error run(PassManager &pm, ModuleOp module,
                       const llvm::Twine &what,
                       const std::string &diagnostics) {
  if (succeeded(pm.run(module)))
    return llvm::Error::success();
  return makeError(what + (diagnostics.empty() ? "" : "\n" + diagnostics));
}

/// The object of the module's only gpu.binary.
static std::string binaryObject(ModuleOp module) {
  for (auto binary : module.getOps<gpu::BinaryOp>())
    for (Attribute object : binary.getObjects())
      return cast<gpu::ObjectAttr>(object).getObject().getValue().str();
  return {};
}

llvm::Expected<Sm90aArtifact> mxfp4::compileForSm90a(llvm::StringRef source,
                                                     llvm::StringRef name,
                                                     llvm::StringRef recipe) {
  auto start = std::chrono::steady_clock::now();
  llvm::Expected<std::string> toolkit = findToolkit();
  if (!toolkit)
    return toolkit.takeError();
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, name), llvm::SMLoc());
  std::string diagnostics;
  llvm::raw_string_ostream stream(diagnostics);
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, stream);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return makeError("cannot parse or verify '" + name + "'\n" + diagnostics);
  if (!recipe.empty()) {
    PassManager pm(&context);
    ApplyRecipePassOptions options;
    options.recipeText = recipe.str();
    pm.addNestedPass<func::FuncOp>(createApplyRecipePass(options));
    if (llvm::Error e = run(pm, *module,
                            "cannot apply the recipe to '" + name + "'",
                            diagnostics))
      return std::move(e);
  }
  WalkResult found = module->walk([&](Operation *op) {
    if (isa<MXFP4Dialect>(op->getDialect())) {
      op->emitError("sm_90a: the MXFP4 kernels for NVIDIA are not written "
                    "yet; compile programs without mxfp4 ops (the bf16 "
                    "recipe) or use --target=gfx950");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (found.wasInterrupted())
    return makeError("cannot compile '" + name + "' for sm_90a\n" +
                     diagnostics);

  Sm90aArtifact artifact;
  PassManager kernels(&context);
  Sm90aPipelineOptions options;
  options.toolkit = *toolkit;
  options.format = "mlir";
  buildSm90aPipeline(kernels, options);
  if (llvm::Error e = run(kernels, *module,
                          "cannot lower '" + name + "' for sm_90a",
                          diagnostics))
    return std::move(e);
  {
    llvm::raw_string_ostream os(artifact.kernelIR);
    (*module)->print(os);
  }
  llvm::Expected<std::string> plan = serializeHostPlan(*module);
  if (!plan)
    return plan.takeError();
  artifact.plan = std::move(*plan);
  (*module)->walk([&](gpu::GPUModuleOp m) {
    for (auto f : m.getOps<LLVM::LLVMFuncOp>())
      if (f->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()))
        ++artifact.kernels;
  });
  for (auto [format, out] :
       {std::pair<const char *, std::string *>{"isa", &artifact.ptx}}) {
    OwningOpRef<ModuleOp> copy = cast<ModuleOp>((*module)->clone());
    PassManager pm(&context);
    GpuModuleToBinaryPassOptions binary;
    binary.compilationTarget = format;
    binary.toolkitPath = *toolkit;
    pm.addPass(createGpuModuleToBinaryPass(binary));
    if (llvm::Error e = run(pm, *copy, "cannot compile the sm_90a kernels",
                            diagnostics))
      return std::move(e);
    *out = binaryObject(*copy);
  }
  PassManager pm(&context);
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "bin";
  binary.toolkitPath = *toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  if (llvm::Error e =
          run(pm, *module, "cannot compile the sm_90a kernels", diagnostics))
    return std::move(e);
  std::string cubin = binaryObject(*module);
  artifact.cubin.assign(cubin.begin(), cubin.end());
  artifact.compileSeconds = std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - start)
                                .count();
  return artifact;
}
