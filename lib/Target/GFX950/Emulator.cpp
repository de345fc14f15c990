//===- Emulator.cpp - run gfx950 kernels on the host ----------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The host side of the emulator: interprets the host function (allocations,
// casts, launches) and hands each gpu.launch_func to the kernel executor.
//
//===----------------------------------------------------------------------===//

#include "EmulatorImpl.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir;
using namespace mlir::mxfp4::gfx950;
using namespace mlir::mxfp4::gfx950::emu;

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

std::string emu::formatLocation(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return (file.getFilename().getValue() + ":" + llvm::Twine(file.getLine()) +
            ":" + llvm::Twine(file.getColumn()))
        .str();
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

llvm::Error emu::makeError(Location loc, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 formatLocation(loc) +
                                     ": gfx950 emulator: " + message);
}

llvm::Error emu::opError(Operation *op, const llvm::Twine &message) {
  return makeError(op->getLoc(),
                   "'" + op->getName().getStringRef() + "': " + message);
}

//===----------------------------------------------------------------------===//
// Host interpreter
//===----------------------------------------------------------------------===//

namespace {

/// A host SSA value: a memref (a whole buffer) or scalar bits.
struct HostValue {
  Buffer *buffer = nullptr;
  uint64_t bits = 0;
};

/// Returns the byte size of a scalar of `type`, or 0 if unsupported.
static int64_t getScalarBytes(Type type) {
  if (type.isIndex())
    return 8;
  if (type.isIntOrFloat() && type.getIntOrFloatBitWidth() <= 64)
    return (type.getIntOrFloatBitWidth() + 7) / 8;
  return 0;
}

/// Returns the byte size of the static identity-layout memref `type`, or an
/// error.
static llvm::Expected<int64_t> getMemRefBytes(MemRefType type, Location loc) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return makeError(loc, "unsupported memref type " +
                              llvm::Twine(printed(Type(type))) +
                              " (needs a static shape and identity layout)");
  int64_t elemBytes = getScalarBytes(type.getElementType());
  if (elemBytes == 0 || (type.getElementType().isIntOrFloat() &&
                         type.getElementType().getIntOrFloatBitWidth() % 8 &&
                         type.getElementType().getIntOrFloatBitWidth() != 1))
    return makeError(loc, "unsupported memref element type in " +
                              llvm::Twine(printed(Type(type))));
  return type.getNumElements() * elemBytes;
}

/// The translated kernels of one module, each translated once.
class ProgramCache {
public:
  llvm::Expected<const Program *> get(gpu::GPUFuncOp func) {
    auto it = programs.find(func);
    if (it != programs.end())
      return it->second.get();
    llvm::Expected<std::unique_ptr<Program>> program = compileKernel(func);
    if (!program)
      return program.takeError();
    const Program *result = program->get();
    programs[func] = std::move(*program);
    return result;
  }

private:
  llvm::DenseMap<Operation *, std::unique_ptr<Program>> programs;
};

/// Checks grid and block sizes of a launch of `func` (errors at `where`).
static llvm::Error checkLaunchSizes(Operation *where, gpu::GPUFuncOp func,
                                    const int64_t grid[3],
                                    const int64_t block[3]) {
  for (int i = 0; i < 6; ++i) {
    int64_t v = i < 3 ? grid[i] : block[i - 3];
    if (v <= 0 || v > (int64_t(1) << 31))
      return opError(where, "invalid " + llvm::Twine(i < 3 ? "grid" : "block") +
                                " size " + llvm::Twine(v));
  }
  int64_t threads = block[0] * block[1] * block[2];
  if (threads > 1024)
    return opError(where, "workgroup of " + llvm::Twine(threads) +
                              " threads exceeds gfx950's 1024");
  if (std::optional<ArrayRef<int32_t>> known = func.getKnownBlockSize()) {
    for (int d = 0; d < 3; ++d)
      if ((*known)[d] != block[d])
        return opError(where, "block size (" + llvm::Twine(block[0]) + ", " +
                                  llvm::Twine(block[1]) + ", " +
                                  llvm::Twine(block[2]) +
                                  ") does not match the kernel's "
                                  "known_block_size");
  }
  return llvm::Error::success();
}

class HostRunner {
public:
  HostRunner(ModuleOp module, EmulatorStats &stats)
      : module(module), stats(stats) {}

  llvm::Expected<std::vector<EmulatorBuffer>>
  run(llvm::StringRef function, ArrayRef<EmulatorBuffer> arguments);

private:
  Buffer *newBuffer(int64_t bytes, llvm::StringRef name) {
    buffers.push_back(std::make_unique<Buffer>());
    Buffer *buffer = buffers.back().get();
    // Hardware does not zero new memory: poison it.
    buffer->allocate(bytes, 0xCD);
    buffer->name = name.str();
    return buffer;
  }
  llvm::Error launch(gpu::LaunchFuncOp launch);

  ModuleOp module;
  EmulatorStats &stats;
  std::vector<std::unique_ptr<Buffer>> buffers;
  llvm::DenseMap<Value, HostValue> env;
  ProgramCache programs;
};

} // namespace

llvm::Error HostRunner::launch(gpu::LaunchFuncOp launch) {
  if (!launch.getAsyncDependencies().empty() || launch.getAsyncToken() ||
      launch.getAsyncObject())
    return opError(launch, "asynchronous launches are not supported");
  if (launch.hasClusterSize())
    return opError(launch, "cluster launches are not supported");
  if (launch.getDynamicSharedMemorySize())
    return opError(launch, "dynamic shared memory is not supported");
  auto func = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
      launch, launch.getKernel());
  if (!func)
    return opError(launch, "kernel " +
                               llvm::Twine(printed(launch.getKernel())) +
                               " is not a gpu.func");
  if (!func.isKernel())
    return opError(launch, "'" + func.getName() + "' is not a kernel");

  int64_t grid[3], block[3];
  Value sizes[6] = {launch.getGridSizeX(),  launch.getGridSizeY(),
                    launch.getGridSizeZ(),  launch.getBlockSizeX(),
                    launch.getBlockSizeY(), launch.getBlockSizeZ()};
  for (int i = 0; i < 6; ++i) {
    int64_t v = static_cast<int64_t>(env.lookup(sizes[i]).bits);
    if (auto intType = dyn_cast<IntegerType>(sizes[i].getType()))
      v = signExtend(static_cast<uint64_t>(v), intType.getWidth());
    (i < 3 ? grid[i] : block[i - 3]) = v;
  }
  if (llvm::Error error = checkLaunchSizes(launch, func, grid, block))
    return error;

  ValueRange operands = launch.getKernelOperands();
  ArrayRef<Type> argTypes = func.getArgumentTypes();
  if (operands.size() != argTypes.size())
    return opError(launch, "passes " + llvm::Twine(operands.size()) +
                               " arguments to a kernel taking " +
                               llvm::Twine(argTypes.size()));
  llvm::Expected<const Program *> program = programs.get(func);
  if (!program)
    return program.takeError();
  std::vector<KernelArg> args;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands[i].getType() != argTypes[i])
      return opError(launch, "argument " + llvm::Twine(i) + " has type " +
                                 printed(operands[i].getType()) +
                                 " but the kernel expects " +
                                 printed(argTypes[i]));
    HostValue value = env.lookup(operands[i]);
    KernelArg arg;
    if (isa<MemRefType>(argTypes[i])) {
      if (value.buffer->freed)
        return opError(launch,
                       "argument " + llvm::Twine(i) + " was deallocated");
      arg.isMemRef = true;
      arg.view.buffer = value.buffer;
      arg.view.sizeBytes = value.buffer->size;
    } else {
      arg.bits = value.bits;
    }
    args.push_back(arg);
  }
  ++stats.launches;
  return runKernel(**program, args, grid, block, stats);
}

llvm::Expected<std::vector<EmulatorBuffer>>
HostRunner::run(llvm::StringRef function, ArrayRef<EmulatorBuffer> arguments) {
  auto func = module.lookupSymbol<func::FuncOp>(function);
  if (!func || func.isExternal())
    return makeError(module.getLoc(),
                     "no host function '" + function + "' with a body");
  Block &body = func.getBody().front();
  if (!func.getBody().hasOneBlock())
    return opError(func, "host functions must have a single block");
  if (arguments.size() != body.getNumArguments())
    return opError(func, "expects " + llvm::Twine(body.getNumArguments()) +
                             " arguments, got " +
                             llvm::Twine(arguments.size()));
  for (auto [index, arg] : llvm::enumerate(body.getArguments())) {
    const EmulatorBuffer &bytes = arguments[index];
    if (auto memrefType = dyn_cast<MemRefType>(arg.getType())) {
      llvm::Expected<int64_t> size = getMemRefBytes(memrefType, func.getLoc());
      if (!size)
        return size.takeError();
      if (static_cast<int64_t>(bytes.size()) != *size)
        return opError(func, "argument " + llvm::Twine(index) + " of type " +
                                 printed(arg.getType()) + " needs " +
                                 llvm::Twine(*size) + " bytes, got " +
                                 llvm::Twine(bytes.size()));
      Buffer *buffer = newBuffer(0, "argument " + std::to_string(index));
      buffer->assign(bytes);
      env[arg] = {buffer, 0};
      continue;
    }
    int64_t size = getScalarBytes(arg.getType());
    if (size == 0)
      return opError(func, "argument " + llvm::Twine(index) +
                               " has unsupported type " +
                               printed(arg.getType()));
    if (static_cast<int64_t>(bytes.size()) != size)
      return opError(func, "argument " + llvm::Twine(index) + " of type " +
                               printed(arg.getType()) + " needs " +
                               llvm::Twine(size) + " bytes, got " +
                               llvm::Twine(bytes.size()));
    uint64_t bits = 0;
    for (int64_t b = 0; b < size; ++b)
      bits |= static_cast<uint64_t>(bytes[b]) << (8 * b);
    env[arg] = {nullptr, bits};
  }

  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      std::vector<EmulatorBuffer> results;
      for (Value operand : ret.getOperands()) {
        HostValue value = env.lookup(operand);
        if (isa<MemRefType>(operand.getType())) {
          if (value.buffer->freed)
            return opError(&op, "returns a deallocated memref");
          results.emplace_back(value.buffer->data,
                               value.buffer->data + value.buffer->size);
          continue;
        }
        int64_t size = getScalarBytes(operand.getType());
        EmulatorBuffer bytes(size);
        for (int64_t b = 0; b < size; ++b)
          bytes[b] = static_cast<uint8_t>(value.bits >> (8 * b));
        results.push_back(std::move(bytes));
      }
      return results;
    }
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      uint64_t bits;
      if (auto intAttr = dyn_cast<IntegerAttr>(constant.getValue()))
        bits = intAttr.getValue().getZExtValue();
      else if (auto floatAttr = dyn_cast<FloatAttr>(constant.getValue()))
        bits = floatAttr.getValue().bitcastToAPInt().getZExtValue();
      else
        return opError(&op, "only scalar host constants are supported");
      env[constant.getResult()] = {nullptr, bits};
      continue;
    }
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      llvm::Expected<int64_t> size =
          getMemRefBytes(alloc.getType(), alloc.getLoc());
      if (!size)
        return size.takeError();
      env[alloc.getResult()] = {newBuffer(*size, "memref.alloc"), 0};
      continue;
    }
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      HostValue value = env.lookup(dealloc.getMemref());
      if (value.buffer->freed)
        return opError(&op, "double deallocation");
      value.buffer->freed = true;
      continue;
    }
    if (auto cast = dyn_cast<memref::MemorySpaceCastOp>(op)) {
      env[cast.getResult()] = env.lookup(cast.getSource());
      continue;
    }
    // Reshapes of identity-layout buffers view the same bytes.
    if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(op)) {
      env[op.getResult(0)] = env.lookup(op.getOperand(0));
      continue;
    }
    if (auto get = dyn_cast<memref::GetGlobalOp>(op)) {
      llvm::Expected<EmulatorBuffer> bytes = getGlobalBytes(get);
      if (!bytes)
        return bytes.takeError();
      Buffer *buffer = newBuffer(0, "memref.get_global");
      buffer->assign(*bytes);
      env[get.getResult()] = {buffer, 0};
      continue;
    }
    if (auto launchOp = dyn_cast<gpu::LaunchFuncOp>(op)) {
      if (llvm::Error error = launch(launchOp))
        return std::move(error);
      continue;
    }
    return makeError(op.getLoc(), "unsupported host op '" +
                                      op.getName().getStringRef() + "'");
  }
  return opError(func, "host function has no func.return");
}

llvm::Expected<EmulatorBuffer>
mlir::mxfp4::gfx950::getGlobalBytes(memref::GetGlobalOp get) {
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      get, get.getNameAttr());
  auto init = global ? dyn_cast_or_null<DenseElementsAttr>(
                           global.getInitialValueAttr())
                     : DenseElementsAttr();
  if (!init)
    return opError(get, "needs a memref.global with a dense initial value");
  llvm::Expected<int64_t> size = getMemRefBytes(get.getType(), get.getLoc());
  if (!size)
    return size.takeError();
  int64_t count = get.getType().getNumElements();
  int64_t elemBytes = count ? *size / count : 0;
  EmulatorBuffer bytes(*size);
  ArrayRef<char> raw = init.getRawData();
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(bytes.data() + i * elemBytes,
                raw.data() + (init.isSplat() ? 0 : i * elemBytes), elemBytes);
  return bytes;
}

llvm::Expected<std::vector<EmulatorBuffer>>
mlir::mxfp4::gfx950::emulate(ModuleOp module, llvm::StringRef function,
                             llvm::ArrayRef<EmulatorBuffer> arguments,
                             EmulatorStats *stats) {
  EmulatorStats local;
  HostRunner runner(module, stats ? *stats : local);
  return runner.run(function, arguments);
}

//===----------------------------------------------------------------------===//
// Single launches
//===----------------------------------------------------------------------===//

struct EmulatedKernelModule::Impl {
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  ProgramCache programs;
  llvm::StringMap<std::unique_ptr<EmulatedKernel>> kernels;
};

EmulatedKernelModule::EmulatedKernelModule(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}

EmulatedKernelModule::~EmulatedKernelModule() = default;

ModuleOp EmulatedKernelModule::getModule() { return *impl->module; }

llvm::Expected<std::unique_ptr<EmulatedKernelModule>>
EmulatedKernelModule::parse(llvm::StringRef text, llvm::StringRef bufferName) {
  auto impl = std::make_unique<Impl>();
  DialectRegistry registry;
  registry.insert<amdgpu::AMDGPUDialect, arith::ArithDialect,
                  cf::ControlFlowDialect, func::FuncDialect, gpu::GPUDialect,
                  LLVM::LLVMDialect, math::MathDialect, memref::MemRefDialect,
                  ROCDL::ROCDLDialect, scf::SCFDialect, ub::UBDialect,
                  vector::VectorDialect>();
  impl->context.appendDialectRegistry(registry);
  impl->context.loadAllAvailableDialects();
  // Collect the parser's diagnostics instead of printing them.
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&impl->context, [&](Diagnostic &diag) {
    llvm::raw_string_ostream os(diagnostics);
    if (!diagnostics.empty())
      os << "\n";
    os << formatLocation(diag.getLocation()) << ": " << diag.str();
    return success();
  });
  ParserConfig config(&impl->context);
  impl->module = parseSourceString<ModuleOp>(text, config, bufferName);
  if (!impl->module)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        bufferName + ": gfx950 emulator: cannot parse the kernel module" +
            (diagnostics.empty() ? "" : ":\n" + diagnostics));
  return std::unique_ptr<EmulatedKernelModule>(
      new EmulatedKernelModule(std::move(impl)));
}

llvm::Expected<const EmulatedKernel *>
EmulatedKernelModule::getKernel(llvm::StringRef name) {
  auto it = impl->kernels.find(name);
  if (it != impl->kernels.end())
    return it->second.get();
  gpu::GPUFuncOp found;
  int count = 0;
  impl->module->walk([&](gpu::GPUFuncOp func) {
    if (func.isKernel() && func.getName() == name) {
      found = func;
      ++count;
    }
  });
  if (count == 0)
    return makeError(impl->module->getLoc(), "no kernel named '" + name + "'");
  if (count > 1)
    return makeError(impl->module->getLoc(),
                     llvm::Twine(count) + " gpu.modules have a kernel named '" +
                         name + "'");
  auto kernel = std::unique_ptr<EmulatedKernel>(new EmulatedKernel());
  kernel->name = name.str();
  kernel->func = found;
  for (Type type : found.getArgumentTypes()) {
    EmulatedKernelParam param;
    param.type = type;
    if (auto memrefType = dyn_cast<MemRefType>(type)) {
      llvm::Expected<int64_t> size = getMemRefBytes(memrefType, found.getLoc());
      if (!size)
        return size.takeError();
      param.isMemRef = true;
      param.bytes = *size;
    } else {
      param.bytes = getScalarBytes(type);
      if (param.bytes == 0)
        return opError(found, "parameter type " + llvm::Twine(printed(type)) +
                                  " cannot be passed to a launch");
    }
    kernel->params.push_back(param);
  }
  const EmulatedKernel *result = kernel.get();
  impl->kernels[name] = std::move(kernel);
  return result;
}

llvm::Error EmulatedKernelModule::launch(const EmulatedKernel &kernel,
                                         const int64_t grid[3],
                                         const int64_t block[3],
                                         llvm::ArrayRef<EmulatedKernelArg> args,
                                         EmulatorStats *stats) {
  auto func = cast<gpu::GPUFuncOp>(kernel.func);
  if (llvm::Error error = checkLaunchSizes(func, func, grid, block))
    return error;
  ArrayRef<EmulatedKernelParam> params = kernel.getParams();
  if (args.size() != params.size())
    return opError(func, "launched with " + llvm::Twine(args.size()) +
                             " arguments, the kernel takes " +
                             llvm::Twine(params.size()));
  llvm::Expected<const Program *> program = impl->programs.get(func);
  if (!program)
    return program.takeError();
  // One Buffer per memref argument, viewing the caller's memory.
  std::vector<Buffer> views(args.size());
  std::vector<KernelArg> kernelArgs(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (!params[i].isMemRef) {
      kernelArgs[i].bits = truncBits(args[i].bits, 8 * params[i].bytes);
      continue;
    }
    if (!args[i].pointer)
      return opError(func, "argument " + llvm::Twine(i) + " (" +
                               printed(params[i].type) + ") is a null pointer");
    if (args[i].bytes < params[i].bytes)
      return opError(func, "argument " + llvm::Twine(i) + " (" +
                               printed(params[i].type) + ", " +
                               llvm::Twine(params[i].bytes) +
                               " bytes) points at only " +
                               llvm::Twine(args[i].bytes) + " bytes of memory");
    views[i].data = static_cast<uint8_t *>(args[i].pointer);
    views[i].size = params[i].bytes;
    views[i].name = "argument " + std::to_string(i);
    kernelArgs[i].isMemRef = true;
    kernelArgs[i].view.buffer = &views[i];
    kernelArgs[i].view.sizeBytes = params[i].bytes;
  }
  EmulatorStats local;
  EmulatorStats &counters = stats ? *stats : local;
  ++counters.launches;
  return runKernel(**program, kernelArgs, grid, block, counters);
}
