//===- CompileCommand.cpp - mxfp4-run compile -----------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   mxfp4-run compile --preset=tiny [--recipe=fp4-all-dht16] [-o step.mlir]
//   mxfp4-run compile --preset=pilot --target=gfx950 --step-model=step.json
//   mxfp4-run compile --preset=pilot --target=sm_90a --ranks=2 --out-dir=DIR
//
// Builds the Llama training step of a preset or JSON config and writes it as
// MLIR (after the recipe, if one is given), for mxfp4-opt, `mxfp4-run exec`
// or inspection.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "mxfp4/API/Artifact.h"
#include "mxfp4/API/Compiler.h"
#include "mxfp4/API/Gfx950.h"
#include "mxfp4/API/Gfx950StepModel.h"
#include "mxfp4/API/LlamaModel.h"
#include "mxfp4/API/Sm90a.h"
#include "mxfp4/Runtime/AtomicFile.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir::mxfp4;
namespace cl = llvm::cl;

cl::SubCommand mlir::mxfp4::compileCommand(
    "compile", "Compile a .mlir file, or the Llama training step of a preset "
               "or config, to MLIR (after a recipe, if given) or to gfx950 "
               "code objects with a kernel report");
static cl::OptionCategory compileCategory("compile options");
static cl::opt<std::string> compilePreset(
    "preset",
    cl::desc("Model preset (tiny, small, pilot, llama3.2-1b, llama3.2-3b, llama3.1-8b) or a "
             "JSON config file"),
    cl::value_desc("name|file.json"), cl::init("tiny"), cl::sub(compileCommand),
    cl::cat(compileCategory));
static cl::opt<std::string> compileRecipe(
    "recipe", cl::desc("MXFP4 recipe to apply (docs/Recipes.md)"),
    cl::value_desc("recipe"), cl::sub(compileCommand),
    cl::cat(compileCategory));
static cl::opt<std::string> compileFile(
    cl::Positional, cl::Optional,
    cl::desc("[<file.mlir>] (default: the Llama step of --preset)"),
    cl::sub(compileCommand), cl::cat(compileCategory));
static cl::opt<int64_t> compileRanks(
    "ranks",
    cl::desc("Compile the preset's step for data-parallel training on N "
             "GPUs (mxfp4-cuda-run/mxfp4-hip-run train --gpus=N): each "
             "rank's @loss_and_grads and @loss take batch_size / N sequences, "
             "and @sum_squares and @apply_shard update the rank's shard of "
             "the parameters with the averaged gradients (ZeRO-1); no "
             "@train_step"),
    cl::value_desc("N"), cl::init(0), cl::sub(compileCommand),
    cl::cat(compileCategory));
enum class CompileTarget { mlir, gfx950, sm90a };
static cl::opt<CompileTarget> compileTarget(
    "target", cl::desc("What to produce"),
    cl::values(clEnumValN(CompileTarget::mlir, "mlir",
                          "the MLIR of the program (default)"),
               clEnumValN(CompileTarget::gfx950, "gfx950",
                          "gfx950 (MI350X/MI355X) code objects, assembly, "
                          "kernel IR and a kernel report"),
               clEnumValN(CompileTarget::sm90a, "sm_90a",
                          "NVIDIA Hopper (H100/H200) cubin, PTX, kernel IR "
                          "and the host plan")),
    cl::init(CompileTarget::mlir), cl::sub(compileCommand),
    cl::cat(compileCategory));
static cl::opt<std::string> compileGemmPrecision(
    "gemm-precision",
    cl::desc("sm_90a and gfx950: high-precision GEMMs on bf16 tensor "
             "cores / MFMAs (bf16, PyTorch autocast numerics; default) or in "
             "f32 with the CPU path's numerics (f32, generic kernels)"),
    cl::init("bf16"), cl::sub(compileCommand), cl::cat(compileCategory));
static cl::opt<std::string> compileOutDir(
    "out-dir",
    cl::desc("gfx950: write kernels.hsaco, kernels.s and kernels.mlir here"),
    cl::value_desc("dir"), cl::sub(compileCommand), cl::cat(compileCategory));
static cl::opt<std::string> compileReport(
    "report",
    cl::desc("gfx950: write the kernel report as JSON ('-' for stdout)"),
    cl::value_desc("file.json"), cl::sub(compileCommand),
    cl::cat(compileCategory));
static cl::opt<std::string> compileStepModel(
    "step-model",
    cl::desc("gfx950: model a host function's time launch by launch with the "
             "kernel report's issue model (MODELED, not measured; "
             "docs/gfx950.md, \"The step by the model\"): per kernel its "
             "launches, modeled time, bound and efficiency against its "
             "roofline (MFMA peak or its buffers' bytes at 8 TB/s HBM); the "
             "step time, tokens/s (a preset's batch x sequence) and peak "
             "device memory (buffer arguments + peak temporaries). Writes "
             "JSON ('-' for stdout) and prints a table"),
    cl::value_desc("file.json"), cl::sub(compileCommand),
    cl::cat(compileCategory));
static cl::opt<std::string> compileStepFunction(
    "step-function",
    cl::desc("gfx950: the host function --step-model models"),
    cl::init("train_step"), cl::sub(compileCommand), cl::cat(compileCategory));
static cl::opt<double> compileLaunchOverhead(
    "launch-overhead-us",
    cl::desc("gfx950: --step-model's assumed overhead a launch, in "
             "microseconds"),
    cl::init(2.0), cl::sub(compileCommand), cl::cat(compileCategory));
static cl::opt<std::string> compileAssembly(
    "assembly", cl::desc("gfx950: write the kernels' assembly ('-' for stdout)"),
    cl::value_desc("file.s"), cl::sub(compileCommand),
    cl::cat(compileCategory));
static cl::opt<int64_t> compileTile(
    "tile",
    cl::desc("gfx950 GEMM workgroup tile (64, 128, 256; default: per shape)"),
    cl::init(0), cl::sub(compileCommand), cl::cat(compileCategory));
static cl::opt<std::string> compileOutput("o", cl::desc("Output file"),
                                          cl::value_desc("file"),
                                          cl::init("-"),
                                          cl::sub(compileCommand),
                                          cl::cat(compileCategory));

/// Writes `contents` to `path` ("-": stdout), whole or not at all.
static llvm::Error writeOutput(llvm::StringRef path, llvm::StringRef contents) {
  if (path == "-") {
    llvm::outs() << contents;
    return llvm::Error::success();
  }
  return writeFileAtomically(path, contents);
}

/// What produced the files of --out-dir (compiled.json).
static ArtifactOrigin origin(llvm::StringRef target) {
  ArtifactOrigin o;
  o.target = target.str();
  o.recipe = compileRecipe;
  if (compileFile.empty())
    o.model = compilePreset;
  else
    o.program = compileFile;
  o.gemmPrecision = compileGemmPrecision;
  return o;
}

static int runGfx950Compile(llvm::StringRef source, llvm::StringRef name,
                            int64_t tokensPerStep) {
  auto fail = reportError;
  Gfx950CompileOptions options;
  options.tile = compileTile;
  if (compileGemmPrecision != "bf16" && compileGemmPrecision != "f32")
    return fail(llvm::createStringError("--gemm-precision must be bf16 or "
                                        "f32, got '" +
                                        compileGemmPrecision + "'"));
  options.gemmPrecision = compileGemmPrecision;
  // The file's own recipe is applied by the caller for presets.
  if (!compileFile.empty())
    options.recipe = compileRecipe;
  llvm::Expected<Gfx950Artifact> artifact =
      mlir::mxfp4::compileForGfx950(source, name, options);
  if (!artifact)
    return fail(artifact.takeError());
  if (!compileOutDir.empty())
    if (llvm::Error error =
            writeGfx950Artifact(*artifact, origin("gfx950"), compileOutDir))
      return fail(std::move(error));
  if (!compileAssembly.empty())
    if (llvm::Error error = writeOutput(compileAssembly, artifact->assembly))
      return fail(std::move(error));
  if (!compileReport.empty()) {
    llvm::Expected<std::string> json = formatGfx950ReportJSON(*artifact);
    if (!json)
      return fail(json.takeError());
    if (llvm::Error error = writeOutput(compileReport, *json))
      return fail(std::move(error));
  }
  std::string stepTable;
  if (!compileStepModel.empty()) {
    Gfx950StepModelOptions stepOptions;
    stepOptions.function = compileStepFunction;
    stepOptions.tokensPerStep = tokensPerStep;
    stepOptions.launchOverheadMicroseconds = compileLaunchOverhead;
    llvm::Expected<Gfx950StepModel> step =
        modelGfx950Step(*artifact, stepOptions);
    if (!step)
      return fail(step.takeError());
    if (llvm::Error error =
            writeOutput(compileStepModel, formatGfx950StepModelJSON(*step)))
      return fail(std::move(error));
    stepTable = formatGfx950StepModelTable(*step);
  }
  if (compileReport != "-" && compileAssembly != "-" &&
      compileStepModel != "-") {
    llvm::Expected<std::string> table = formatGfx950ReportTable(*artifact);
    if (!table)
      return fail(table.takeError());
    llvm::outs() << *table
                 << llvm::format("compiled %zu kernels (%zu bytes of code "
                                 "object) in %.2f s\n",
                                 artifact->kernels.size(),
                                 artifact->codeObject.size(),
                                 artifact->compileSeconds);
    llvm::outs() << stepTable;
  }
  return 0;
}

static int runSm90aCompile(llvm::StringRef source, llvm::StringRef name) {
  auto fail = reportError;
  if (!compileReport.empty() || !compileStepModel.empty())
    return fail(llvm::createStringError(
        "--report and --step-model are for --target=gfx950 (no sm_90a "
        "report yet)"));
  if (compileGemmPrecision != "bf16" && compileGemmPrecision != "f32")
    return fail(llvm::createStringError("--gemm-precision must be bf16 or "
                                        "f32, got '" +
                                        compileGemmPrecision + "'"));
  llvm::Expected<Sm90aArtifact> artifact = compileForSm90a(
      source, name, compileFile.empty() ? "" : std::string(compileRecipe),
      compileGemmPrecision);
  if (!artifact)
    return fail(artifact.takeError());
  if (!compileOutDir.empty())
    if (llvm::Error error =
            writeSm90aArtifact(*artifact, origin("sm_90a"), compileOutDir))
      return fail(std::move(error));
  if (!compileAssembly.empty())
    if (llvm::Error error = writeOutput(compileAssembly, artifact->ptx))
      return fail(std::move(error));
  if (compileAssembly != "-")
    llvm::outs() << llvm::format("compiled %lld sm_90a kernels (%zu bytes of "
                                 "cubin) in %.2f s\n",
                                 (long long)artifact->kernels,
                                 artifact->cubin.size(),
                                 artifact->compileSeconds);
  return 0;
}

int mlir::mxfp4::runCompileCommand() {
  auto fail = reportError;
  std::string text, name;
  int64_t tokensPerStep = 0;
  if (!compileFile.empty() && compileRanks.getNumOccurrences())
    return fail(llvm::createStringError(
        "--ranks is for a preset's step, not for a .mlir file"));
  if (!compileFile.empty()) {
    auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(compileFile);
    if (!buffer)
      return fail(llvm::createStringError("cannot read '" + compileFile +
                                          "': " +
                                          buffer.getError().message()));
    text = (*buffer)->getBuffer().str();
    name = compileFile;
    if (compileTarget == CompileTarget::mlir && !compileRecipe.empty()) {
      llvm::Expected<std::string> rewritten = runPipeline(
          text, "func.func(mxfp4-apply-recipe{recipe=" + compileRecipe +
                    "},mxfp4-check-rotations)",
          name);
      if (!rewritten)
        return fail(rewritten.takeError());
      text = *rewritten;
    }
  } else {
    llvm::Expected<LlamaConfig> config = loadLlamaConfig(compilePreset);
    if (!config)
      return fail(config.takeError());
    llvm::SmallVector<llvm::StringRef> functions;
    if (compileRanks.getNumOccurrences()) {
      if (compileRanks < 1 || config->batchSize % compileRanks != 0)
        return fail(llvm::createStringError(llvm::formatv(
            "--ranks={0}: the preset's batch of {1} sequences does not split "
            "evenly over {0} ranks",
            int64_t(compileRanks), config->batchSize)));
      config->batchSize /= compileRanks;
      functions = {"loss", "loss_and_grads", "sum_squares", "apply_shard"};
    }
    llvm::Expected<LlamaStepSource> source = buildLlamaStepSource(
        *config, compileRecipe, functions,
        compileRanks.getNumOccurrences() ? int64_t(compileRanks) : 0);
    if (!source)
      return fail(source.takeError());
    text = std::move(source->text);
    name = "<" + compilePreset + " training step>";
    tokensPerStep = config->getTokensPerStep();
  }
  if (compileTarget == CompileTarget::gfx950)
    return runGfx950Compile(text, name, tokensPerStep);
  if (!compileStepModel.empty())
    return fail(llvm::createStringError("--step-model is for "
                                        "--target=gfx950"));
  if (compileTarget == CompileTarget::sm90a)
    return runSm90aCompile(text, name);
  std::error_code ec;
  llvm::ToolOutputFile out(compileOutput, ec, llvm::sys::fs::OF_None);
  if (ec)
    return fail(llvm::createStringError("cannot write '" + compileOutput +
                                        "': " + ec.message()));
  out.os() << text;
  out.keep();
  return 0;
}
