//===- LlamaModel.cpp - the Llama training step as source text ------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/API/LlamaModel.h"

#include "mxfp4/Dialect/MXFP4/Transforms/Passes.h"
#include "mxfp4/InitAll.h"
#include "mxfp4/Models/LlamaStep.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::mxfp4;

llvm::Expected<LlamaConfig>
mlir::mxfp4::loadLlamaConfig(llvm::StringRef presetOrFile) {
  if (llvm::is_contained(LlamaConfig::getPresetNames(), presetOrFile))
    return LlamaConfig::fromPreset(presetOrFile);
  if (!presetOrFile.ends_with(".json") && !llvm::sys::fs::exists(presetOrFile))
    return LlamaConfig::fromPreset(presetOrFile); // names the presets
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(presetOrFile, /*IsText=*/true);
  if (std::error_code error = file.getError())
    return llvm::createStringError("cannot read config '" + presetOrFile +
                                   "': " + error.message());
  return LlamaConfig::fromJSON((*file)->getBuffer(), presetOrFile);
}

llvm::Expected<LlamaStepSource>
mlir::mxfp4::buildLlamaStepSource(const LlamaConfig &config,
                                  llvm::StringRef recipe,
                                  llvm::ArrayRef<llvm::StringRef> functions,
                                  int64_t ranks) {
  if (llvm::Error error = config.verify())
    return std::move(error);
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  std::string diagnostics;
  llvm::raw_string_ostream diagnosticStream(diagnostics);
  // The three functions repeat the same GEMMs: report each problem once.
  llvm::StringSet<> seen;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    std::string line;
    llvm::raw_string_ostream(line)
        << diagnostic.getLocation() << ": " << diagnostic << "\n";
    if (seen.insert(line).second)
      diagnosticStream << line;
    return success();
  });
  OwningOpRef<ModuleOp> module = buildLlamaStepModule(context, config, functions, ranks);
  if (failed(verify(*module)))
    return llvm::createStringError("the Llama step of '" + config.name +
                                   "' does not verify (a builder bug):\n" +
                                   diagnostics);
  if (!recipe.empty()) {
    PassManager pm(&context);
    ApplyRecipePassOptions options;
    options.recipeText = recipe.str();
    pm.addNestedPass<func::FuncOp>(createApplyRecipePass(options));
    pm.addNestedPass<func::FuncOp>(createCheckRotationsPass());
    if (failed(pm.run(*module)))
      return llvm::createStringError("cannot apply recipe '" + recipe +
                                     "' to the Llama step:\n" + diagnostics);
  }
  LlamaStepSource source;
  for (auto function : module->getOps<func::FuncOp>())
    if (function.getSymName() == "train_step")
      if (auto rows = function->getAttrOfType<ArrayAttr>(kTelemetryAttrName))
        for (Attribute row : rows)
          if (auto name = dyn_cast<StringAttr>(row))
            source.telemetryRows.push_back(name.str());
  llvm::raw_string_ostream os(source.text);
  module->print(os, OpPrintingFlags().enableDebugInfo(false));
  return source;
}
