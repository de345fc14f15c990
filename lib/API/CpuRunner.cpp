//===- CpuRunner.cpp - run functions of a module on the host CPU ----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/API/CpuRunner.h"

#include "CallArguments.h"
#include "PackedCall.h"

#include "mxfp4/Dialect/MXFP4/Transforms/Passes.h"
#include "mxfp4/InitAll.h"
#include "mxfp4/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"

#include <malloc.h>
#include <mutex>

using namespace mlir;
using namespace mlir::mxfp4;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Returns `headline` followed by the collected diagnostics, if any.
static llvm::Error diagnosticsError(const llvm::Twine &headline,
                                    llvm::StringRef diagnostics) {
  diagnostics = diagnostics.rtrim();
  if (diagnostics.empty())
    return makeError(headline);
  return makeError(headline + "\n" + diagnostics);
}

CpuModule::CpuModule() = default;
CpuModule::~CpuModule() = default;

/// Parses, lowers and JIT-compiles the module in `buffer`.
/// True if the OpenMP runtime the build found is still there.
static bool hasOpenMPRuntime() {
  llvm::StringRef path = MXFP4_LIBOMP_PATH;
  return !path.empty() && llvm::sys::fs::exists(path);
}

/// Decides whether scaled_matmul uses the AVX-512 BF16 kernel.
static llvm::Expected<bool> useAvx512BF16(const CpuCompileOptions &options) {
  switch (options.matmulKernel) {
  case CpuMatmulKernel::automatic:
    return hostHasAvx512BF16();
  case CpuMatmulKernel::reference:
    return false;
  case CpuMatmulKernel::avx512BF16:
    if (!hostHasAvx512BF16())
      return makeError("the AVX-512 BF16 scaled_matmul kernel needs a CPU "
                       "with AVX512_BF16, which this host lacks");
    return true;
  }
  llvm_unreachable("unknown CpuMatmulKernel");
}

static llvm::Error compile(std::unique_ptr<llvm::MemoryBuffer> buffer,
                           const CpuCompileOptions &compileOptions,
                           SmallVectorImpl<FunctionSignature> &functions,
                           std::unique_ptr<ExecutionEngine> &engine,
                           bool &avx512BF16) {
  llvm::Expected<bool> bf16 = useAvx512BF16(compileOptions);
  if (!bf16)
    return bf16.takeError();
  avx512BF16 = *bf16;
  static std::once_flag targetsInitialized;
  std::call_once(targetsInitialized, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    // Compiled functions allocate their intermediate buffers on every call.
    // By default glibc maps blocks of 128 KiB and more afresh and unmaps
    // them on free, so every call page-faults all of its memory again (a
    // third of a Llama step's time, measured). Keep freed memory for reuse.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
  });

  DialectRegistry registry;
  registerAllDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
  MLIRContext context(registry);

  // Every diagnostic goes to a string, with its location and source line.
  std::string name = buffer->getBufferIdentifier().str();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  std::string diagnostics;
  llvm::raw_string_ostream diagnosticStream(diagnostics);
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagnosticStream);

  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return diagnosticsError("cannot parse or verify '" + name + "'",
                            diagnostics);

  // A recipe rewrites the tensor program (and may add a telemetry result)
  // before the signatures are taken.
  if (!compileOptions.recipe.empty()) {
    PassManager recipePm(&context);
    ApplyRecipePassOptions recipe;
    recipe.recipeText = compileOptions.recipe;
    recipePm.addNestedPass<func::FuncOp>(createApplyRecipePass(recipe));
    recipePm.addNestedPass<func::FuncOp>(createCheckRotationsPass());
    if (failed(recipePm.run(*module)))
      return diagnosticsError("cannot apply the recipe to '" + name + "'",
                              diagnostics);
  }

  // The signatures as written: lowering turns tensors into descriptors and
  // results into out-parameters.
  for (auto function : module->getOps<func::FuncOp>())
    if (function.isPublic() && !function.isExternal())
      functions.push_back(describeFunction(function));

  PassManager pm(&context);
  CpuPipelineOptions pipelineOptions;
  pipelineOptions.x86Avx512BF16 = avx512BF16;
  pipelineOptions.parallel = compileOptions.parallel && hasOpenMPRuntime();
  buildCpuPipeline(pm, pipelineOptions);
  if (failed(pm.run(*module)))
    return diagnosticsError(
        "cannot lower '" + name + "' for the CPU (mxfp4-to-cpu)", diagnostics);

  llvm::Expected<llvm::orc::JITTargetMachineBuilder> machineBuilder =
      llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!machineBuilder)
    return machineBuilder.takeError();
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      machineBuilder->createTargetMachine();
  if (!machine)
    return machine.takeError();
  auto transformer = makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0,
                                               machine->get());
  // memrefCopy, for copies between strided views, lives in the C runner
  // utilities.
  llvm::SmallVector<llvm::StringRef, 2> sharedLibs = {
      MXFP4_C_RUNNER_UTILS_PATH};
  if (pipelineOptions.parallel)
    sharedLibs.push_back(MXFP4_LIBOMP_PATH);
  ExecutionEngineOptions options;
  options.transformer = transformer;
  options.sharedLibPaths = sharedLibs;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  options.enablePerfNotificationListener = getenv("MXFP4_PERF_MAP") != nullptr;
  llvm::Expected<std::unique_ptr<ExecutionEngine>> created =
      ExecutionEngine::create(*module, options, std::move(*machine));
  if (!created)
    return diagnosticsError("cannot JIT-compile '" + name +
                                "': " + llvm::toString(created.takeError()),
                            diagnostics);
  engine = std::move(*created);
  engine->initialize();
  // The JIT generates code lazily, at the first lookup of a symbol; look up
  // every entry point now so compilation ends here and not in the first call.
  for (const FunctionSignature &function : functions) {
    llvm::Expected<void (*)(void **)> entry =
        engine->lookupPacked("_mlir_ciface_" + function.name);
    if (!entry)
      return diagnosticsError("cannot JIT-compile @" + function.name + ": " +
                                  llvm::toString(entry.takeError()),
                              diagnostics);
  }
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<CpuModule>>
CpuModule::fromSource(llvm::StringRef source, llvm::StringRef name,
                      const CpuCompileOptions &options) {
  std::unique_ptr<CpuModule> result(new CpuModule());
  if (llvm::Error error =
          compile(llvm::MemoryBuffer::getMemBufferCopy(source, name), options,
                  result->functions, result->engine, result->avx512BF16))
    return std::move(error);
  return result;
}

llvm::Expected<std::unique_ptr<CpuModule>>
CpuModule::fromFile(llvm::StringRef path, const CpuCompileOptions &options) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (std::error_code error = file.getError())
    return makeError("cannot read '" + path + "': " + error.message());
  std::unique_ptr<CpuModule> result(new CpuModule());
  if (llvm::Error error = compile(std::move(*file), options, result->functions,
                                 result->engine, result->avx512BF16))
    return std::move(error);
  return result;
}

const FunctionSignature *CpuModule::lookupFunction(llvm::StringRef name) const {
  for (const FunctionSignature &function : functions)
    if (function.name == name)
      return &function;
  return nullptr;
}

llvm::Expected<std::unique_ptr<PreparedCall>>
CpuModule::prepare(llvm::StringRef name, ArrayRef<CallArgument> arguments) {
  const FunctionSignature *function = lookupFunction(name);
  if (!function) {
    std::string known;
    for (const FunctionSignature &candidate : functions)
      known += (known.empty() ? " @" : ", @") + candidate.name;
    return makeError(
        "no public function @" + name + " in the module" +
        (known.empty() ? " (it has none)" : "; public functions:" + known));
  }
  if (arguments.size() != function->arguments.size()) {
    std::string types;
    for (const ValueType &type : function->arguments)
      types += (types.empty() ? "" : ", ") + type.text;
    size_t count = function->arguments.size();
    return makeError("@" + name + " takes " + llvm::Twine(count) +
                     (count == 1 ? " argument (" : " arguments (") + types +
                     "), got " + llvm::Twine(arguments.size()));
  }

  std::unique_ptr<PreparedCall> call(new PreparedCall());
  call->engine = engine.get();
  call->function = function;
  for (auto [i, param, argument] :
       llvm::enumerate(function->arguments, arguments)) {
    llvm::Expected<HostArray> input = convertArgument(param, argument, i);
    if (!input)
      return input.takeError();
    call->inputs.push_back(std::move(*input));
  }
  for (auto [i, type] : llvm::enumerate(function->results)) {
    llvm::Expected<HostArray> result = allocateResult(type, i);
    if (!result)
      return result.takeError();
    call->results.push_back(std::move(*result));
  }
  return call;
}

llvm::Error PreparedCall::run() {
  // Arguments in order, then the out-parameters of the tensor results;
  // scalar results come back by value.
  SmallVector<PackedOperand> operands;
  SmallVector<HostArray *> scalarResults;
  for (auto [param, input] : llvm::zip_equal(function->arguments, inputs))
    operands.push_back({&input, param.isTensor});
  for (auto [type, result] : llvm::zip_equal(function->results, results)) {
    if (type.isTensor)
      operands.push_back({&result, /*isTensor=*/true});
    else
      scalarResults.push_back(&result);
  }
  if (llvm::Error error =
          callPacked(*engine, function->name, operands, scalarResults))
    return makeError("cannot call @" + function->name + ": " +
                     llvm::toString(std::move(error)));
  return llvm::Error::success();
}

llvm::Expected<SmallVector<HostArray>>
CpuModule::invoke(llvm::StringRef name, ArrayRef<CallArgument> arguments) {
  llvm::Expected<std::unique_ptr<PreparedCall>> call = prepare(name, arguments);
  if (!call)
    return call.takeError();
  if (llvm::Error error = (*call)->run())
    return std::move(error);
  return std::move((*call)->results);
}
