//===- GpuCompile.cpp - what the GPU targets' compilers share -------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "GpuCompile.h"

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h"
#include "mxfp4/Dialect/MXFP4/Transforms/Passes.h"
#include "mxfp4/InitAll.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

using namespace mlir;
using namespace mlir::mxfp4;

static DialectRegistry makeRegistry() {
  DialectRegistry registry;
  registerAllDialects(registry);
  return registry;
}

CompileSession::CompileSession() : context(makeRegistry()) {
  context.loadAllAvailableDialects();
}

llvm::Error mxfp4::diagnosticsError(const llvm::Twine &headline,
                                    llvm::StringRef diagnostics) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      diagnostics.empty() ? headline.str()
                          : (headline + "\n" + diagnostics).str());
}

llvm::Expected<OwningOpRef<ModuleOp>>
mxfp4::parseWithRecipe(CompileSession &session, llvm::StringRef source,
                       llvm::StringRef name, llvm::StringRef recipe) {
  session.sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, name), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(
      session.sourceMgr, ParserConfig(&session.context));
  if (!module)
    return diagnosticsError("cannot parse or verify '" + name + "'",
                            session.diagnostics);
  if (recipe.empty())
    return module;
  PassManager pm(&session.context);
  ApplyRecipePassOptions options;
  options.recipeText = recipe.str();
  pm.addNestedPass<func::FuncOp>(createApplyRecipePass(options));
  pm.addNestedPass<func::FuncOp>(createCheckRotationsPass());
  if (failed(pm.run(*module)))
    return diagnosticsError("cannot apply the recipe to '" + name + "'",
                            session.diagnostics);
  return module;
}

std::optional<std::string> mxfp4::getBinaryObject(ModuleOp module) {
  for (auto binary : module.getOps<gpu::BinaryOp>())
    for (Attribute object : binary.getObjects())
      return cast<gpu::ObjectAttr>(object).getObject().getValue().str();
  return std::nullopt;
}

std::string mxfp4::findLdLld() {
  if (const char *env = getenv("MXFP4_LD_LLD"))
    return llvm::sys::fs::exists(env) ? env : "";
  if (auto found =
          llvm::sys::findProgramByName("ld.lld", {MXFP4_LLVM_TOOLS_DIR}))
    return *found;
  for (llvm::StringRef name : {"ld.lld-22", "ld.lld"})
    if (auto found = llvm::sys::findProgramByName(name))
      return *found;
  return "";
}

double mxfp4::secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

bool mxfp4::needsGenericKernels(ModuleOp module) {
  for (auto function : module.getOps<func::FuncOp>())
    for (Operation &op : function.getBody().getOps()) {
      if (isa<QuantizeOp, DequantizeOp, ScaledMatmulOp, HadamardOp,
              tensor::EmptyOp, arith::ConstantOp, func::ReturnOp>(op))
        continue;
      auto transpose = dyn_cast<linalg::TransposeOp>(op);
      if (transpose && transpose.getPermutation() == ArrayRef<int64_t>{1, 0})
        continue;
      return true;
    }
  return false;
}
