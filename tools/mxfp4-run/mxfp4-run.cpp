//===- mxfp4-run.cpp - run mxfp4 programs ---------------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A thin command line over mxfp4/API, one subcommand per job:
//
//   mxfp4-run exec FILE.mlir --function=NAME --input=@a.npy --input=5
//       --output=@out.npy --print
//
// JIT-compiles FILE.mlir for the host CPU and calls NAME on the inputs.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "mxfp4/API/CpuRunner.h"
#include "mxfp4/API/Gfx950.h"
#include "mxfp4/API/LayerStudy.h"
#include "mxfp4/Runtime/ArrayPrinter.h"
#include "mxfp4/Runtime/Npy.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/PrettyStackTrace.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>

using namespace mlir::mxfp4;
namespace cl = llvm::cl;

//===----------------------------------------------------------------------===//
// exec
//===----------------------------------------------------------------------===//

static cl::SubCommand execCommand(
    "exec", "Run one function of a .mlir file on the CPU (JIT-compiled with "
            "the mxfp4-to-cpu pipeline)");
static cl::OptionCategory execCategory("exec options");

static cl::opt<std::string> execFile(cl::Positional, cl::Required,
                                     cl::desc("<file.mlir>"),
                                     cl::sub(execCommand),
                                     cl::cat(execCategory));
static cl::opt<std::string> execFunction(
    "function",
    cl::desc("Public function to run (default: the module's only one)"),
    cl::value_desc("name"), cl::sub(execCommand), cl::cat(execCategory));
static cl::list<std::string> execInputs(
    "input",
    cl::desc("Next argument: @FILE.npy, or an inline scalar such as 5, -1.5 "
             "or 0x10"),
    cl::value_desc("@file.npy|value"), cl::sub(execCommand),
    cl::cat(execCategory));
static cl::list<std::string>
    execOutputs("output", cl::desc("Write the next result to FILE.npy"),
                cl::value_desc("@file.npy"), cl::sub(execCommand),
                cl::cat(execCategory));
static cl::SubCommand studyCommand(
    "layer-study",
    "Quantization error of one linear layer's Fprop, Dgrad and Wgrad GEMMs "
    "under MXFP4 rotation recipes, on data with outliers (runs with "
    "embedded defaults)");
static cl::OptionCategory studyCategory("layer-study options");
static cl::opt<CpuMatmulKernel> execMatmulKernel(
    "cpu-matmul", cl::desc("How scaled_matmul runs on the CPU"),
    cl::values(clEnumValN(CpuMatmulKernel::automatic, "auto",
                          "AVX-512 BF16 kernel if the host has it (default)"),
               clEnumValN(CpuMatmulKernel::reference, "reference",
                          "portable reference loops"),
               clEnumValN(CpuMatmulKernel::avx512BF16, "avx512-bf16",
                          "AVX-512 BF16 (vdpbf16ps) micro-kernel")),
    cl::init(CpuMatmulKernel::automatic), cl::sub(execCommand),
    cl::sub(studyCommand), cl::cat(execCategory), cl::cat(studyCategory));
static cl::opt<bool> execParallel(
    "parallel",
    cl::desc("Spread independent loops over the cores with OpenMP (default; "
             "results are the same either way)"),
    cl::init(true), cl::sub(execCommand), cl::cat(execCategory));
static cl::opt<std::string> execRecipe(
    "recipe",
    cl::desc("Apply an MXFP4 recipe (a preset such as fp4-all-dht16, or "
             "settings; docs/Recipes.md) before compiling"),
    cl::value_desc("recipe"), cl::sub(execCommand), cl::cat(execCategory));
enum class ExecTarget { cpu, gfx950, gfx950Emulator };
static cl::opt<ExecTarget> execTarget(
    "target", cl::desc("Where to run"),
    cl::values(
        clEnumValN(ExecTarget::cpu, "cpu", "JIT-compiled for the host (default)"),
        clEnumValN(ExecTarget::gfx950, "gfx950",
                   "gfx950 kernels on an MI350X/MI355X through HIP "
                   "(libamdhip64.so of ROCm >= 7.0, loaded at run time)"),
        clEnumValN(ExecTarget::gfx950Emulator, "gfx950-emulator",
                   "gfx950 kernels executed lane by lane on the host (their "
                   "own IR: index math, LDS, lane layouts, scales)")),
    cl::init(ExecTarget::cpu), cl::sub(execCommand), cl::cat(execCategory));
static cl::opt<int64_t> execTile(
    "tile", cl::desc("gfx950 GEMM workgroup tile (64, 128, 256; default: per "
                     "shape)"),
    cl::init(0), cl::sub(execCommand), cl::cat(execCategory));
static cl::opt<std::string> execTestMutation(
    "gfx950-test-mutation",
    cl::desc("Tests only: plant a bug in the gfx950 GEMM (lds-swizzle, "
             "scale-byte, fragment-row)"),
    cl::Hidden, cl::sub(execCommand), cl::cat(execCategory));
static cl::opt<std::string> execGemmPrecision(
    "gemm-precision",
    cl::desc("gfx950: high-precision GEMMs in f32 (generic kernels, the "
             "CPU's numerics; default) or bf16 (operands rounded to bf16, "
             "bf16 MFMA kernels)"),
    cl::init("f32"), cl::sub(execCommand), cl::cat(execCategory));
static cl::opt<bool> execPrint(
    "print",
    cl::desc("Print every result (the default when no --output is given)"),
    cl::sub(execCommand), cl::cat(execCategory));

//===----------------------------------------------------------------------===//
// layer-study
//===----------------------------------------------------------------------===//

static cl::opt<int64_t> studyTokens("tokens", cl::desc("Tokens (rows of X)"),
                                    cl::init(2048), cl::sub(studyCommand),
                                    cl::cat(studyCategory));
static cl::opt<int64_t> studyIn("in-features", cl::desc("K"), cl::init(1024),
                                cl::sub(studyCommand), cl::cat(studyCategory));
static cl::opt<int64_t> studyOut("out-features", cl::desc("N"), cl::init(512),
                                 cl::sub(studyCommand),
                                 cl::cat(studyCategory));
static cl::opt<int64_t> studyOutliers(
    "outliers", cl::desc("Outlier activation channels and gradient tokens"),
    cl::init(8), cl::sub(studyCommand), cl::cat(studyCategory));
static cl::opt<float> studyScale("outlier-scale",
                                 cl::desc("Magnitude factor of the outliers"),
                                 cl::init(50.0f), cl::sub(studyCommand),
                                 cl::cat(studyCategory));
static cl::opt<uint64_t> studySeed("seed", cl::desc("Data and rotation seed"),
                                   cl::init(1), cl::sub(studyCommand),
                                   cl::cat(studyCategory));
static cl::opt<bool> studyPrintMlir(
    "print-mlir", cl::desc("Print the generated module before the table"),
    cl::sub(studyCommand), cl::cat(studyCategory));

static int runLayerStudyCommand() {
  LayerStudyOptions options;
  options.tokens = studyTokens;
  options.inFeatures = studyIn;
  options.outFeatures = studyOut;
  options.outliers = studyOutliers;
  options.outlierScale = studyScale;
  options.seed = studySeed;
  options.compile.matmulKernel = execMatmulKernel;
  llvm::Expected<LayerStudyReport> report = runLayerStudy(options);
  if (!report) {
    llvm::WithColor::error() << llvm::toString(report.takeError()) << "\n";
    return 1;
  }
  if (studyPrintMlir)
    llvm::outs() << report->source << "\n";
  llvm::outs() << llvm::format(
      "linear layer X[%lld x %lld], W[%lld x %lld], %lld outliers x %.0f; "
      "compiled in %.2f s, ran in %.2f s\n\n",
      (long long)options.tokens, (long long)options.inFeatures,
      (long long)options.outFeatures, (long long)options.inFeatures,
      (long long)options.outliers, options.outlierScale, report->compileSeconds,
      report->runSeconds);
  llvm::outs() << "GEMM    recipe      rel. error    vs fp4\n";
  double fp4 = 0;
  for (const LayerStudyRow &row : report->rows) {
    if (row.recipe == "fp4")
      fp4 = row.relativeError;
    llvm::outs() << llvm::format("%-7s %-10s  %10.3e", row.gemm.c_str(),
                                 row.recipe.c_str(), row.relativeError);
    if (row.recipe != "bf16" && fp4 > 0)
      llvm::outs() << llvm::format("    %5.2fx", row.relativeError / fp4);
    llvm::outs() << "\n";
  }
  return 0;
}

/// Returns "1 result", "2 results".
static std::string countOf(size_t count, llvm::StringRef noun) {
  return std::to_string(count) + " " + noun.str() + (count == 1 ? "" : "s");
}

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error() << message << "\n";
  return 1;
}

static int fail(llvm::Error error) {
  return fail(llvm::toString(std::move(error)));
}

/// Returns the function to run: --function, or the module's only public one.
static llvm::Expected<const FunctionSignature *>
chooseFunction(llvm::ArrayRef<FunctionSignature> functions) {
  llvm::StringRef name = llvm::StringRef(execFunction).ltrim('@');
  std::string problem;
  if (!name.empty()) {
    for (const FunctionSignature &function : functions)
      if (function.name == name)
        return &function;
    problem = "no public function @" + name.str() + " in '" + execFile + "'";
  } else if (functions.size() == 1) {
    return &functions.front();
  } else if (functions.empty()) {
    return llvm::createStringError("'" + execFile +
                                   "' has no public function to run");
  } else {
    problem = "'" + execFile + "' has " +
              countOf(functions.size(), "public function") +
              "; choose one with --function";
  }
  std::string known;
  for (const FunctionSignature &function : functions)
    known += (known.empty() ? " @" : ", @") + function.name;
  return llvm::createStringError(
      problem +
      (known.empty() ? " (it has none)" : " (public functions:" + known + ")"));
}

/// Turns `--input` values into call arguments: `@FILE.npy` or a scalar.
static llvm::Expected<llvm::SmallVector<CallArgument>> readInputs() {
  llvm::SmallVector<CallArgument> arguments;
  for (auto [i, text] : llvm::enumerate(execInputs)) {
    llvm::StringRef value(text);
    std::string where = "argument #" + std::to_string(i) + " (" + text + ")";
    if (value.consume_front("@")) {
      llvm::Expected<HostArray> array = readNpyFile(value);
      if (!array)
        return llvm::createStringError(where + ": " +
                                       llvm::toString(array.takeError()));
      arguments.push_back({std::move(*array), text});
      continue;
    }
    llvm::Expected<Scalar> scalar = Scalar::parse(value);
    if (!scalar)
      return llvm::createStringError(where + ": " +
                                     llvm::toString(scalar.takeError()));
    arguments.push_back({*scalar, text});
  }
  return arguments;
}

static int runExec() {
  llvm::SmallVector<llvm::StringRef> outputPaths;
  for (auto [i, text] : llvm::enumerate(execOutputs)) {
    llvm::StringRef path(text);
    if (!path.consume_front("@") || path.empty())
      return fail("output #" + llvm::Twine(i) + ": expected @FILE.npy, got '" +
                  text + "'");
    outputPaths.push_back(path);
  }

  std::unique_ptr<CpuModule> cpu;
  std::unique_ptr<Gfx950Module> gpu;
  if (execTarget == ExecTarget::cpu) {
    llvm::Expected<std::unique_ptr<CpuModule>> module =
        CpuModule::fromFile(execFile,
                            CpuCompileOptions{execMatmulKernel, execRecipe,
                                              execParallel});
    if (!module)
      return fail(module.takeError());
    cpu = std::move(*module);
  } else {
    auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(execFile);
    if (!buffer)
      return fail("cannot read '" + execFile +
                  "': " + buffer.getError().message());
    Gfx950CompileOptions options;
    options.tile = execTile;
    options.recipe = execRecipe;
    options.testMutation = execTestMutation;
    if (execGemmPrecision != "bf16" && execGemmPrecision != "f32")
      return fail("--gemm-precision must be bf16 or f32, got '" +
                  execGemmPrecision + "'");
    options.gemmPrecision = execGemmPrecision;
    llvm::Expected<std::unique_ptr<Gfx950Module>> module =
        Gfx950Module::fromSource(
            (*buffer)->getBuffer(), execFile, options,
            execTarget == ExecTarget::gfx950 ? Gfx950Backend::hip
                                             : Gfx950Backend::emulator);
    if (!module)
      return fail(module.takeError());
    gpu = std::move(*module);
  }
  llvm::Expected<const FunctionSignature *> chosen =
      chooseFunction(cpu ? cpu->getFunctions() : gpu->getFunctions());
  if (!chosen)
    return fail(chosen.takeError());
  const FunctionSignature *function = *chosen;
  if (outputPaths.size() > function->results.size())
    return fail(llvm::Twine(outputPaths.size()) + " outputs given, but @" +
                function->name + " has " +
                countOf(function->results.size(), "result"));

  llvm::Expected<llvm::SmallVector<CallArgument>> arguments = readInputs();
  if (!arguments)
    return fail(arguments.takeError());
  llvm::Expected<llvm::SmallVector<HostArray>> results =
      cpu ? cpu->invoke(function->name, *arguments)
          : gpu->invoke(function->name, *arguments);
  if (!results)
    return fail(results.takeError());

  for (auto [i, path] : llvm::enumerate(outputPaths))
    if (llvm::Error error = writeNpyFile((*results)[i], path))
      return fail("result #" + llvm::Twine(i) + ": " +
                  llvm::toString(std::move(error)));
  if (execPrint || outputPaths.empty()) {
    for (auto [i, type, result] :
         llvm::enumerate(function->results, *results)) {
      llvm::outs() << "result #" << i << ": " << type.text << "\n";
      printArray(llvm::outs(), result, *type.elementType);
    }
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::setBugReportMsg("mxfp4-run crashed: please report this with the "
                        "input files and the command line.\n");
#ifdef SIGXFSZ
  // A write past the file size limit then fails with EFBIG, which the
  // writers report as the error it is (as a full disk's ENOSPC); LLVM's
  // handlers would report the signal as a crash.
  std::signal(SIGXFSZ, SIG_IGN);
#endif

  // The parser would take an unknown subcommand for a stray positional
  // argument; name the problem instead.
  if (argc > 1 && argv[1][0] != '-') {
    llvm::StringRef name(argv[1]);
    if (llvm::none_of(cl::getRegisteredSubcommands(), [&](cl::SubCommand *sub) {
          return sub->getName() == name;
        })) {
      std::string known;
      for (cl::SubCommand *sub : cl::getRegisteredSubcommands())
        if (!sub->getName().empty())
          known += (known.empty() ? "" : ", ") + sub->getName().str();
      return fail("unknown subcommand '" + name + "' (known: " + known +
                  "); see 'mxfp4-run --help'");
    }
  }

  cl::HideUnrelatedOptions(execCategory, execCommand);
  cl::HideUnrelatedOptions(studyCategory, studyCommand);
  cl::HideUnrelatedOptions(llvm::ArrayRef<const cl::OptionCategory *>{});
  cl::ParseCommandLineOptions(
      argc, argv,
      "mxfp4 runner: runs mxfp4 programs\n\n"
      "  Run 'mxfp4-run <subcommand> --help' for a subcommand's options.\n");

  if (execCommand)
    return runExec();
  if (studyCommand)
    return runLayerStudyCommand();
  if (compileCommand)
    return runCompileCommand();
  if (trainCommand)
    return runTrainCommand();
  if (recipeStudyCommand)
    return runStudyCommand();
  if (isDataCommandSelected())
    return runDataCommand();
  return fail("no subcommand given; see 'mxfp4-run --help'");
}
