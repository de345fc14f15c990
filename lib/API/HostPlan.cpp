//===- HostPlan.cpp - the host function as a replayable plan --------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/API/HostPlan.h"

#include "mxfp4/Conversion/MXFP4ToGPUCommon/DeviceABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::mxfp4;

static llvm::Error located(Operation *op, const llvm::Twine &message) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getLoc() << ": " << message;
  return llvm::createStringError(llvm::inconvertibleErrorCode(), text);
}

static int64_t memrefBytes(MemRefType type) {
  return type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
}

static int64_t scalarBytes(Type type) {
  if (type.isIndex())
    return 8;
  return (type.getIntOrFloatBitWidth() + 7) / 8;
}

/// "f32 256 64": the element type and shape of a buffer, so a runtime can
/// read and write .npy files.
static std::string describe(MemRefType type, TypeAttr tensor = {}) {
  std::string text;
  llvm::raw_string_ostream os(text);
  Type e = type.getElementType();
  // A flat buffer of a whole-function conversion: the tensor's shape, when
  // it has the buffer's elements (FP4 tensors are packed).
  ArrayRef<int64_t> shape = type.getShape();
  if (auto t = tensor ? dyn_cast<RankedTensorType>(tensor.getValue())
                      : RankedTensorType();
      t && t.getElementType() == e && t.getNumElements() == type.getNumElements())
    shape = t.getShape();
  if (e.isF32())
    os << "f32";
  else if (e.isBF16())
    os << "bf16";
  else if (e.isInteger(32))
    os << "i32";
  else if (e.isInteger(64) || e.isIndex())
    os << "i64";
  else if (e.isInteger(8))
    os << "u8";
  else
    os << "bytes";
  for (int64_t d : shape)
    os << " " << d;
  return text;
}

/// The host function `func` as a plan.
static llvm::Expected<HostFunction> buildFunction(func::FuncOp func) {
  HostFunction function;
  function.name = func.getName().str();
  DenseMap<Value, int64_t> ids;
  int64_t next = 0;
  auto id = [&](Value v) {
    auto [it, inserted] = ids.try_emplace(v, next);
    if (inserted)
      ++next;
    return it->second;
  };
  for (BlockArgument arg : func.getArguments()) {
    HostValue value;
    value.id = id(arg);
    if (auto memref = dyn_cast<MemRefType>(arg.getType())) {
      value.bytes = memrefBytes(memref);
      value.type = describe(memref, func.getArgAttrOfType<TypeAttr>(
                                        arg.getArgNumber(), kTensorAttrName));
    } else if (arg.getType().isIntOrIndexOrFloat()) {
      value.buffer = false;
      value.bytes = scalarBytes(arg.getType());
    } else {
      return located(func, "host plan: unsupported argument type");
    }
    function.arguments.push_back(std::move(value));
  }
  for (Operation &op : func.getBody().front()) {
    HostStep step;
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      if (!alloc.getType().hasStaticShape())
        return located(&op, "host plan: dynamic allocation");
      step.kind = HostStep::Kind::Alloc;
      step.id = id(alloc);
      step.bytes = memrefBytes(alloc.getType());
    } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      step.kind = HostStep::Kind::Free;
      step.id = id(dealloc.getMemref());
    } else if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp,
                   memref::MemorySpaceCastOp, memref::CastOp>(op)) {
      step.kind = HostStep::Kind::View;
      step.source = id(op.getOperand(0));
      step.id = id(op.getResult(0));
    } else if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      APInt bits;
      if (auto i = dyn_cast<IntegerAttr>(constant.getValue()))
        bits = i.getValue();
      else if (auto f = dyn_cast<FloatAttr>(constant.getValue()))
        bits = f.getValue().bitcastToAPInt();
      else
        return located(&op, "host plan: unsupported constant");
      step.kind = HostStep::Kind::Const;
      step.id = id(constant);
      step.bytes = scalarBytes(constant.getType());
      step.bits = bits.zextOrTrunc(64).getZExtValue();
    } else if (auto get = dyn_cast<memref::GetGlobalOp>(op)) {
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
          get, get.getNameAttr());
      auto init = global ? dyn_cast_or_null<DenseElementsAttr>(
                               global.getInitialValueAttr())
                         : DenseElementsAttr();
      if (!init || init.isSplat())
        return located(&op, "host plan: a global needs a dense, non-splat "
                            "initial value");
      step.kind = HostStep::Kind::Global;
      step.id = id(get);
      step.bytes = memrefBytes(get.getType());
      step.data.assign(init.getRawData().begin(), init.getRawData().end());
    } else if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
      // Kernels get their shared memory statically; runtimes launch with
      // none dynamic.
      if (launch.getDynamicSharedMemorySize())
        return located(&op, "host plan: dynamic shared memory");
      step.kind = HostStep::Kind::Launch;
      step.kernel = launch.getKernelName().getValue().str();
      Value sizes[] = {launch.getGridSizeX(),  launch.getGridSizeY(),
                       launch.getGridSizeZ(),  launch.getBlockSizeX(),
                       launch.getBlockSizeY(), launch.getBlockSizeZ()};
      for (auto [i, size] : llvm::enumerate(sizes)) {
        auto c = getConstantIntValue(size);
        if (!c)
          return located(&op, "host plan: launch sizes must be constants");
        (i < 3 ? step.grid[i] : step.block[i - 3]) = *c;
      }
      for (Value arg : launch.getKernelOperands()) {
        if (!ids.count(arg))
          return located(&op, "host plan: a launch argument has no "
                              "definition in the plan");
        step.params.push_back({isa<MemRefType>(arg.getType()), ids[arg]});
      }
    } else if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        auto memref = dyn_cast<MemRefType>(v.getType());
        if (!memref || !ids.count(v))
          return located(&op, "host plan: results must be buffers");
        HostValue result;
        result.id = ids[v];
        result.bytes = memrefBytes(memref);
        result.type = describe(
            memref, func.getResultAttrOfType<TypeAttr>(i, kTensorAttrName));
        function.results.push_back(std::move(result));
      }
      continue;
    } else {
      return located(&op, "host plan: '" + op.getName().getStringRef() +
                              "' is not a plan operation");
    }
    function.steps.push_back(std::move(step));
  }
  return function;
}

llvm::Expected<std::vector<HostFunction>>
mxfp4::buildHostPlan(ModuleOp module) {
  std::vector<HostFunction> plan;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() || !func.isPublic())
      continue;
    llvm::Expected<HostFunction> function = buildFunction(func);
    if (!function)
      return function.takeError();
    plan.push_back(std::move(*function));
  }
  return plan;
}

std::string mxfp4::formatHostPlan(llvm::ArrayRef<HostFunction> plan) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "# mxfp4 host plan v1\n";
  auto hex = [&](uint64_t bits, int64_t bytes) {
    os << llvm::format_hex_no_prefix(bits, 2 * bytes);
  };
  for (const HostFunction &function : plan) {
    os << "function " << function.name << " " << function.arguments.size()
       << " " << function.results.size() << "\n";
    for (auto [i, arg] : llvm::enumerate(function.arguments)) {
      os << "arg " << i << (arg.buffer ? " buffer " : " scalar ") << arg.id
         << " " << arg.bytes;
      if (arg.buffer)
        os << " " << arg.type;
      os << "\n";
    }
    for (const HostStep &step : function.steps) {
      switch (step.kind) {
      case HostStep::Kind::Alloc:
        os << "alloc " << step.id << " " << step.bytes;
        break;
      case HostStep::Kind::Free:
        os << "free " << step.id;
        break;
      case HostStep::Kind::View:
        os << "view " << step.id << " " << step.source;
        break;
      case HostStep::Kind::Const:
        os << "const " << step.id << " " << step.bytes << " ";
        hex(step.bits, step.bytes);
        break;
      case HostStep::Kind::Global:
        os << "global " << step.id << " " << step.bytes << " ";
        for (char c : step.data)
          hex(static_cast<uint8_t>(c), 1);
        break;
      case HostStep::Kind::Launch:
        os << "launch " << step.kernel;
        for (int64_t size : step.grid)
          os << " " << size;
        for (int64_t size : step.block)
          os << " " << size;
        for (auto [buffer, id] : step.params)
          os << " " << (buffer ? "b" : "s") << id;
        break;
      }
      os << "\n";
    }
    for (auto [i, result] : llvm::enumerate(function.results))
      os << "result " << i << " " << result.id << " " << result.bytes << " "
         << result.type << "\n";
    os << "end\n";
  }
  return text;
}
