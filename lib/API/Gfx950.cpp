//===- Gfx950.cpp - compile for and run on gfx950 -------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/API/Gfx950.h"

#include "CallArguments.h"
#include "Gfx950Launch.h"
#include "GpuCompile.h"

#include "mxfp4/API/HostPlan.h"

#include "mxfp4/Conversion/MXFP4ToGPUCommon/DeviceABI.h"
#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h"
#include "mxfp4/Pipelines/Pipelines.h"
#include "mxfp4/Target/GFX950/Emulator.h"
#include "mxfp4/Target/GFX950/KernelReport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <chrono>

using namespace mlir;
using namespace mlir::mxfp4;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

namespace {

/// ld.lld in a `<dir>/llvm/bin` layout, which is where the ROCDL target
/// looks for it (`toolkit`): a temporary directory with a link to Debian's
/// lld-22 (or $MXFP4_LD_LLD: findLdLld), removed when done.
class LinkerShim {
public:
  static llvm::Expected<std::unique_ptr<LinkerShim>> create() {
    std::string lld = findLdLld();
    if (lld.empty())
      return makeError("gfx950 code objects are linked with ld.lld, which "
                       "is not installed (Debian package lld-22; or set "
                       "MXFP4_LD_LLD)");
    auto shim = std::unique_ptr<LinkerShim>(new LinkerShim());
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(
            "mxfp4-lld", shim->root))
      return makeError("cannot create a temporary directory: " + ec.message());
    llvm::SmallString<256> bin(shim->root);
    llvm::sys::path::append(bin, "llvm", "bin");
    llvm::SmallString<256> link(bin);
    llvm::sys::path::append(link, "ld.lld");
    if (std::error_code ec = llvm::sys::fs::create_directories(bin))
      return makeError("cannot create '" + bin + "': " + ec.message());
    if (std::error_code ec = llvm::sys::fs::create_link(lld, link))
      return makeError("cannot link '" + link + "' to '" + lld +
                       "': " + ec.message());
    return shim;
  }
  ~LinkerShim() { llvm::sys::fs::remove_directories(root); }
  llvm::StringRef path() const { return root; }

private:
  LinkerShim() = default;
  llvm::SmallString<256> root;
};

} // namespace

/// Parses `source`, applies the recipe and lowers to kernels; returns the
/// module and the public functions' signatures as written.
static llvm::Expected<OwningOpRef<ModuleOp>>
lowerToKernels(CompileSession &session, llvm::StringRef source,
               llvm::StringRef name, const Gfx950CompileOptions &options,
               SmallVectorImpl<FunctionSignature> *functions) {
  llvm::Expected<OwningOpRef<ModuleOp>> parsed =
      parseWithRecipe(session, source, name, options.recipe);
  if (!parsed)
    return parsed.takeError();
  OwningOpRef<ModuleOp> module = std::move(*parsed);
  if (functions)
    for (auto function : module->getOps<func::FuncOp>())
      if (function.isPublic() && !function.isExternal())
        functions->push_back(describeFunction(function));
  // Dead ops (a recipe leaves the GEMMs' zero fills) decide nothing.
  PassManager cleanup(&session.context);
  cleanup.addPass(createCanonicalizerPass());
  if (failed(cleanup.run(*module)))
    return diagnosticsError("cannot simplify '" + name + "'",
                            session.diagnostics);
  PassManager pm(&session.context);
  Gfx950PipelineOptions pipeline;
  pipeline.tile = options.tile;
  pipeline.testMutation = options.testMutation;
  pipeline.mixed = needsGenericKernels(*module);
  pipeline.gemmPrecision = options.gemmPrecision;
  buildGfx950KernelPipeline(pm, pipeline);
  if (failed(pm.run(*module)))
    return diagnosticsError("cannot lower '" + name + "' for gfx950",
                            session.diagnostics);
  return module;
}

/// Lowers the kernels of `module` to ROCDL and serializes them as `format`
/// (bin or isa); returns the object of its only gpu.binary.
static llvm::Expected<std::string> serialize(CompileSession &session,
                                             ModuleOp module,
                                             llvm::StringRef format,
                                             llvm::StringRef toolkit) {
  PassManager pm(&session.context);
  Gfx950PipelineOptions pipeline;
  pipeline.format = format.str();
  pipeline.toolkit = toolkit.str();
  buildGfx950LoweringPipeline(pm, pipeline);
  if (failed(pm.run(module)))
    return diagnosticsError("cannot compile the gfx950 kernels",
                            session.diagnostics);
  if (std::optional<std::string> object = getBinaryObject(module))
    return *object;
  return makeError("the gfx950 compilation produced no code object");
}

/// Trip count of `loop` by its bounds: exact for constant bounds; with a
/// constant step and an upper bound that is a constant or min(x + c, n), the
/// iterations of a work-item whose lower bound is its offset below the step
/// (a thread id, or a chunk's start plus one): ceil(extent / step).
static std::optional<int64_t> getTripCount(scf::ForOp loop) {
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!step || *step <= 0)
    return std::nullopt;
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
  Value upperValue = loop.getUpperBound();
  std::optional<int64_t> extent;
  if (std::optional<int64_t> upper = getConstantIntValue(upperValue)) {
    extent = *upper - lower.value_or(0);
  } else if (Operation *min = upperValue.getDefiningOp();
             min && isa<arith::MinUIOp, arith::MinSIOp>(min)) {
    for (Value operand : min->getOperands()) {
      std::optional<int64_t> candidate = getConstantIntValue(operand);
      if (auto add = operand.getDefiningOp<arith::AddIOp>()) {
        candidate = getConstantIntValue(add.getRhs());
        if (!candidate)
          candidate = getConstantIntValue(add.getLhs());
      }
      if (candidate)
        extent = extent ? std::min(*extent, *candidate) : *candidate;
    }
  }
  if (!extent)
    return std::nullopt;
  return std::max<int64_t>(0, llvm::divideCeil(*extent, *step));
}

/// Bytes of a load's result or a store's value; 0 for other ops.
static int64_t getAccessBytes(Operation *op) {
  Type type;
  if (auto load = dyn_cast<memref::LoadOp>(op))
    type = load.getType();
  else if (auto store = dyn_cast<memref::StoreOp>(op))
    type = store.getValueToStore().getType();
  else if (auto load = dyn_cast<vector::LoadOp>(op))
    type = load.getType();
  else if (auto store = dyn_cast<vector::StoreOp>(op))
    type = store.getValueToStore().getType();
  else
    return 0;
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.getNumElements() *
           llvm::divideCeil(vector.getElementTypeBitWidth(), 8);
  if (type.isIntOrFloat())
    return llvm::divideCeil(type.getIntOrFloatBitWidth(), 8);
  return 0;
}

/// Fills `info`'s loop fields from the kernel's IR.
static void measureLoops(gpu::GPUFuncOp kernel, Gfx950KernelInfo &info) {
  kernel.walk([&](scf::ForOp loop) {
    if (!getTripCount(loop))
      ++info.unknownTripCounts;
    bool innermost = true;
    loop.getBody()->walk([&](scf::ForOp) {
      innermost = false;
      return WalkResult::interrupt();
    });
    if (!innermost)
      return;
    double iterations = 1;
    for (scf::ForOp l = loop; l; l = l->getParentOfType<scf::ForOp>())
      iterations *= double(getTripCount(l).value_or(1));
    if (iterations <= info.loopIterations)
      return;
    info.loopIterations = iterations;
    info.loopBytes = 0;
    loop.getBody()->walk(
        [&](Operation *op) { info.loopBytes += getAccessBytes(op); });
  });
}

llvm::Expected<Gfx950Artifact>
mxfp4::compileForGfx950(llvm::StringRef source, llvm::StringRef name,
                        const Gfx950CompileOptions &options) {
  auto start = std::chrono::steady_clock::now();
  CompileSession session;
  llvm::Expected<OwningOpRef<ModuleOp>> module =
      lowerToKernels(session, source, name, options, nullptr);
  if (!module)
    return module.takeError();
  Gfx950Artifact artifact;
  {
    llvm::raw_string_ostream os(artifact.kernelIR);
    (*module)->print(os);
  }
  if (llvm::Expected<std::vector<HostFunction>> plan =
          buildHostPlan(**module))
    artifact.plan = std::move(*plan);
  else
    artifact.planError = llvm::toString(plan.takeError());
  auto kernels = (*module)->lookupSymbol<gpu::GPUModuleOp>(
      kKernelModuleName);
  if (!kernels)
    return makeError("'" + name + "' has no function with mxfp4 ops to "
                     "compile for gfx950");
  // Workgroups per kernel, from the launches' grids (all three dimensions:
  // attention's kernels walk heads along y).
  llvm::StringMap<int64_t> workgroups;
  (*module)->walk([&](gpu::LaunchFuncOp launch) {
    auto x = getConstantIntValue(launch.getGridSizeX());
    auto y = getConstantIntValue(launch.getGridSizeY());
    auto z = getConstantIntValue(launch.getGridSizeZ());
    if (x && y && z)
      workgroups[launch.getKernelName()] = *x * *y * *z;
  });
  if (!options.codeObjects) {
    artifact.compileSeconds = secondsSince(start);
    return artifact;
  }
  llvm::Expected<std::unique_ptr<LinkerShim>> shim = LinkerShim::create();
  if (!shim)
    return shim.takeError();

  // Each kernel alone to assembly (compile time per kernel), then all of
  // them into one code object.
  for (auto kernel : kernels.getOps<gpu::GPUFuncOp>()) {
    OwningOpRef<ModuleOp> single = ModuleOp::create((*module)->getLoc());
    OpBuilder b(&session.context);
    b.setInsertionPointToStart(single->getBody());
    auto singleKernels = cast<gpu::GPUModuleOp>(b.clone(*kernels));
    for (auto other :
         llvm::make_early_inc_range(singleKernels.getOps<gpu::GPUFuncOp>()))
      if (other.getName() != kernel.getName())
        other.erase();
    auto kernelStart = std::chrono::steady_clock::now();
    llvm::Expected<std::string> assembly =
        serialize(session, *single, "isa", (*shim)->path());
    if (!assembly)
      return assembly.takeError();
    Gfx950KernelInfo info;
    info.name = kernel.getName().str();
    info.workgroups = workgroups.lookup(kernel.getName());
    if (auto shape =
            kernel->getAttrOfType<DenseI64ArrayAttr>(kGemmShapeAttrName)) {
      info.m = shape[0];
      info.n = shape[1];
      info.k = shape[2];
    }
    measureLoops(kernel, info);
    if (auto mean = kernel->getAttrOfType<FloatAttr>(kSteadyIterationsAttrName))
      info.steadyIterations = mean.getValueAsDouble();
    info.compileSeconds = secondsSince(kernelStart);
    info.assembly = *assembly;
    artifact.assembly += *assembly;
    artifact.kernels.push_back(std::move(info));
  }
  OwningOpRef<ModuleOp> forBinary = ModuleOp::create((*module)->getLoc());
  {
    OpBuilder b(&session.context);
    b.setInsertionPointToStart(forBinary->getBody());
    b.clone(*kernels);
  }
  llvm::Expected<std::string> binary =
      serialize(session, *forBinary, "bin", (*shim)->path());
  if (!binary)
    return binary.takeError();
  artifact.codeObject.assign(binary->begin(), binary->end());
  artifact.compileSeconds = secondsSince(start);
  return artifact;
}

/// The report of every kernel with its launch estimate.
static llvm::Expected<std::vector<
    std::tuple<gfx950::KernelReport, gfx950::LaunchEstimate, Gfx950KernelInfo>>>
analyze(const Gfx950Artifact &artifact) {
  std::vector<std::tuple<gfx950::KernelReport, gfx950::LaunchEstimate,
                         Gfx950KernelInfo>>
      result;
  for (const Gfx950KernelInfo &info : artifact.kernels) {
    llvm::Expected<std::vector<gfx950::KernelReport>> reports =
        gfx950::analyzeGfx950Assembly(info.assembly, {}, info.name);
    if (!reports)
      return reports.takeError();
    if (reports->size() != 1)
      return makeError("the assembly of kernel '" + info.name +
                       "' does not describe exactly one kernel");
    gfx950::KernelReport &report = reports->front();
    gfx950::LaunchShape shape;
    shape.workgroups = info.workgroups;
    shape.m = info.m;
    shape.n = info.n;
    shape.k = info.k;
    llvm::Expected<gfx950::LaunchEstimate> estimate =
        gfx950::estimateLaunch(report, shape);
    if (!estimate)
      return estimate.takeError();
    result.emplace_back(std::move(report), *estimate, info);
  }
  return result;
}

llvm::Expected<std::string>
mxfp4::formatGfx950ReportJSON(const Gfx950Artifact &artifact) {
  auto analyzed = analyze(artifact);
  if (!analyzed)
    return analyzed.takeError();
  llvm::json::Array kernels;
  for (auto &[report, estimate, info] : *analyzed) {
    llvm::json::Value value = gfx950::toJSON(report);
    llvm::json::Object &object = *value.getAsObject();
    object["launch"] = gfx950::toJSON(estimate);
    object["compile_seconds"] = info.compileSeconds;
    if (info.m)
      object["gemm"] = llvm::json::Array{info.m, info.n, info.k};
    kernels.push_back(std::move(value));
  }
  llvm::json::Object root{{"target", "gfx950"},
                          {"model", gfx950::toJSON(gfx950::IssueModel())},
                          {"compile_seconds", artifact.compileSeconds},
                          {"kernels", std::move(kernels)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return text;
}

llvm::Expected<std::string>
mxfp4::formatGfx950ReportTable(const Gfx950Artifact &artifact) {
  auto analyzed = analyze(artifact);
  if (!analyzed)
    return analyzed.takeError();
  std::vector<gfx950::KernelReport> reports;
  for (auto &entry : *analyzed)
    reports.push_back(std::get<0>(entry));
  std::string text = gfx950::formatTable(reports);
  llvm::raw_string_ostream os(text);
  for (auto &[report, estimate, info] : *analyzed) {
    os << llvm::formatv("{0}: {1} workgroups in {2} rounds (tail efficiency "
                        "{3:P0}), compiled in {4:F2} s",
                        report.name, estimate.workgroups, estimate.rounds,
                        estimate.tailEfficiency, info.compileSeconds);
    if (info.m)
      os << llvm::formatv(", {0}x{1}x{2}: {3:F1} us, {4:F0} TFLOP/s at 2.4 "
                          "GHz",
                          info.m, info.n, info.k, estimate.microseconds,
                          estimate.estimatedTflops);
    os << "\n";
  }
  return text;
}

//===----------------------------------------------------------------------===//
// Gfx950Module
//===----------------------------------------------------------------------===//

struct Gfx950Module::Impl {
  CompileSession session;
  OwningOpRef<ModuleOp> module;
  Gfx950Backend backend;
  std::unique_ptr<gfx950::HipLauncher> hip;
};

Gfx950Module::Gfx950Module() : impl(std::make_unique<Impl>()) {}
Gfx950Module::~Gfx950Module() = default;

llvm::Expected<std::unique_ptr<Gfx950Module>>
Gfx950Module::fromSource(llvm::StringRef source, llvm::StringRef name,
                         const Gfx950CompileOptions &options,
                         Gfx950Backend backend) {
  std::unique_ptr<Gfx950Module> result(new Gfx950Module());
  Impl &impl = *result->impl;
  impl.backend = backend;
  llvm::Expected<OwningOpRef<ModuleOp>> module = lowerToKernels(
      impl.session, source, name, options, &result->functions);
  if (!module)
    return module.takeError();
  impl.module = std::move(*module);
  if (backend == Gfx950Backend::hip) {
    // Fail early, before compiling, where there is no HIP or no gfx950.
    llvm::Expected<std::unique_ptr<gfx950::HipLauncher>> hip =
        gfx950::HipLauncher::create();
    if (!hip)
      return hip.takeError();
    llvm::Expected<std::unique_ptr<LinkerShim>> shim = LinkerShim::create();
    if (!shim)
      return shim.takeError();
    OwningOpRef<ModuleOp> forBinary = cast<ModuleOp>(impl.module->clone());
    llvm::Expected<std::string> binary =
        serialize(impl.session, *forBinary, "bin", (*shim)->path());
    if (!binary)
      return binary.takeError();
    if (llvm::Error error = (*hip)->loadCodeObject(*binary))
      return std::move(error);
    impl.hip = std::move(*hip);
  }
  return result;
}

const FunctionSignature *
Gfx950Module::lookupFunction(llvm::StringRef name) const {
  for (const FunctionSignature &f : functions)
    if (f.name == name)
      return &f;
  return nullptr;
}

/// Device bytes of one host argument: FP4 codes packed two to a byte (low
/// nibble first), everything else as stored.
static std::vector<uint8_t> toDevice(const HostArray &array, Type tensorType) {
  auto tensor = dyn_cast_or_null<RankedTensorType>(tensorType);
  if (!tensor || !isa<Float4E2M1FNType>(tensor.getElementType()))
    return array.bytes;
  std::vector<uint8_t> packed(array.bytes.size() / 2);
  for (size_t i = 0; i < packed.size(); ++i)
    packed[i] = (array.bytes[2 * i] & 0xF) | (array.bytes[2 * i + 1] << 4);
  return packed;
}

static void fromDevice(const std::vector<uint8_t> &bytes, Type tensorType,
                       HostArray &array) {
  auto tensor = dyn_cast_or_null<RankedTensorType>(tensorType);
  if (!tensor || !isa<Float4E2M1FNType>(tensor.getElementType())) {
    array.bytes = bytes;
    return;
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    array.bytes[2 * i] = bytes[i] & 0xF;
    array.bytes[2 * i + 1] = bytes[i] >> 4;
  }
}

llvm::Expected<llvm::SmallVector<HostArray>>
Gfx950Module::invoke(llvm::StringRef name,
                     llvm::ArrayRef<CallArgument> arguments,
                     Gfx950RunStats *stats) {
  const FunctionSignature *signature = lookupFunction(name);
  auto host = impl->module->lookupSymbol<func::FuncOp>(name);
  if (!signature || !host)
    return makeError("no public function @" + name);
  if (arguments.size() != signature->arguments.size())
    return makeError("@" + name + " takes " +
                     llvm::Twine(signature->arguments.size()) +
                     " arguments, got " + llvm::Twine(arguments.size()));
  std::vector<std::vector<uint8_t>> buffers;
  for (auto [i, argument] : llvm::enumerate(arguments)) {
    llvm::Expected<HostArray> array =
        convertArgument(signature->arguments[i], argument, i);
    if (!array)
      return array.takeError();
    auto tensorType =
        host.getArgAttrOfType<TypeAttr>(i, kTensorAttrName);
    buffers.push_back(
        toDevice(*array, tensorType ? tensorType.getValue() : Type()));
  }

  std::vector<std::vector<uint8_t>> results;
  if (impl->backend == Gfx950Backend::emulator) {
    gfx950::EmulatorStats emulatorStats;
    llvm::Expected<std::vector<gfx950::EmulatorBuffer>> out =
        gfx950::emulate(*impl->module, name, buffers, &emulatorStats);
    if (!out)
      return out.takeError();
    results = std::move(*out);
    if (stats)
      *stats = {emulatorStats.launches, emulatorStats.workgroups,
                emulatorStats.mfmas};
  } else {
    llvm::Expected<std::vector<std::vector<uint8_t>>> out =
        impl->hip->run(host, buffers);
    if (!out)
      return out.takeError();
    results = std::move(*out);
  }

  llvm::SmallVector<HostArray> arrays;
  for (auto [i, bytes] : llvm::enumerate(results)) {
    llvm::Expected<HostArray> array =
        allocateResult(signature->results[i], i);
    if (!array)
      return array.takeError();
    auto tensorType =
        host.getResultAttrOfType<TypeAttr>(i, kTensorAttrName);
    if (bytes.size() != array->bytes.size() &&
        !(tensorType && isa<Float4E2M1FNType>(
                            cast<RankedTensorType>(tensorType.getValue())
                                .getElementType())))
      return makeError("result #" + llvm::Twine(i) + " of @" + name +
                       " has " + llvm::Twine(bytes.size()) +
                       " bytes on the device, expected " +
                       llvm::Twine(array->bytes.size()));
    fromDevice(bytes, tensorType ? tensorType.getValue() : Type(), *array);
    arrays.push_back(std::move(*array));
  }
  return arrays;
}
