//===- CompileCommand.cpp - mxfp4-run compile -----------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   mxfp4-run compile --preset=tiny [--recipe=fp4-all-dht16] [-o step.mlir]
//
// Builds the Llama training step of a preset or JSON config and writes it as
// MLIR (after the recipe, if one is given), for mxfp4-opt, `mxfp4-run exec`
// or inspection.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "mxfp4/API/LlamaModel.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir::mxfp4;
namespace cl = llvm::cl;

cl::SubCommand mlir::mxfp4::compileCommand(
    "compile", "Build the Llama training step of a preset or config and write "
               "it as MLIR (after a recipe, if given)");
static cl::OptionCategory compileCategory("compile options");
static cl::opt<std::string> compilePreset(
    "preset",
    cl::desc("Model preset (tiny, small, pilot, llama3.1-8b) or a JSON config "
             "file"),
    cl::value_desc("name|file.json"), cl::init("tiny"), cl::sub(compileCommand),
    cl::cat(compileCategory));
static cl::opt<std::string> compileRecipe(
    "recipe", cl::desc("MXFP4 recipe to apply (docs/Recipes.md)"),
    cl::value_desc("recipe"), cl::sub(compileCommand),
    cl::cat(compileCategory));
static cl::opt<std::string> compileOutput("o", cl::desc("Output file"),
                                          cl::value_desc("file"),
                                          cl::init("-"),
                                          cl::sub(compileCommand),
                                          cl::cat(compileCategory));

int mlir::mxfp4::runCompileCommand() {
  auto fail = reportError;
  llvm::Expected<LlamaConfig> config = loadLlamaConfig(compilePreset);
  if (!config)
    return fail(config.takeError());
  llvm::Expected<LlamaStepSource> source =
      buildLlamaStepSource(*config, compileRecipe);
  if (!source)
    return fail(source.takeError());
  std::error_code ec;
  llvm::ToolOutputFile out(compileOutput, ec, llvm::sys::fs::OF_None);
  if (ec)
    return fail(llvm::createStringError("cannot write '" + compileOutput +
                                        "': " + ec.message()));
  out.os() << source->text;
  out.keep();
  return 0;
}
