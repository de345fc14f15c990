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
static void describe(llvm::raw_ostream &os, MemRefType type,
                     TypeAttr tensor = {}) {
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
}

static void hex(llvm::raw_ostream &os, llvm::ArrayRef<char> bytes) {
  for (char c : bytes)
    os << llvm::format_hex_no_prefix(static_cast<uint8_t>(c), 2);
}

llvm::Expected<std::string> mxfp4::serializeHostPlan(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "# mxfp4 host plan v1\n";
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() || !func.isPublic())
      continue;
    DenseMap<Value, int64_t> ids;
    int64_t next = 0;
    auto id = [&](Value v) {
      auto [it, inserted] = ids.try_emplace(v, next);
      if (inserted)
        ++next;
      return it->second;
    };
    os << "function " << func.getName() << " " << func.getNumArguments()
       << " " << func.getNumResults() << "\n";
    for (BlockArgument arg : func.getArguments()) {
      if (auto memref = dyn_cast<MemRefType>(arg.getType())) {
        os << "arg " << arg.getArgNumber() << " buffer " << id(arg) << " "
           << memrefBytes(memref) << " ";
        describe(os, memref,
                 func.getArgAttrOfType<TypeAttr>(arg.getArgNumber(),
                                                 kTensorAttrName));
        os << "\n";
      }
      else if (arg.getType().isIntOrIndexOrFloat())
        os << "arg " << arg.getArgNumber() << " scalar " << id(arg) << " "
           << scalarBytes(arg.getType()) << "\n";
      else
        return located(func, "host plan: unsupported argument type");
    }
    for (Operation &op : func.getBody().front()) {
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        if (!alloc.getType().hasStaticShape())
          return located(&op, "host plan: dynamic allocation");
        os << "alloc " << id(alloc) << " " << memrefBytes(alloc.getType())
           << "\n";
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        os << "free " << id(dealloc.getMemref()) << "\n";
      } else if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp,
                     memref::MemorySpaceCastOp, memref::CastOp>(op)) {
        int64_t source = id(op.getOperand(0));
        os << "view " << id(op.getResult(0)) << " " << source << "\n";
      } else if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
        APInt bits;
        if (auto i = dyn_cast<IntegerAttr>(constant.getValue()))
          bits = i.getValue();
        else if (auto f = dyn_cast<FloatAttr>(constant.getValue()))
          bits = f.getValue().bitcastToAPInt();
        else
          return located(&op, "host plan: unsupported constant");
        int64_t bytes = scalarBytes(constant.getType());
        os << "const " << id(constant) << " " << bytes << " "
           << llvm::format_hex_no_prefix(bits.zextOrTrunc(64).getZExtValue(),
                                         2 * bytes)
           << "\n";
      } else if (auto get = dyn_cast<memref::GetGlobalOp>(op)) {
        auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
            get, get.getNameAttr());
        auto init = global ? dyn_cast_or_null<DenseElementsAttr>(
                                 global.getInitialValueAttr())
                           : DenseElementsAttr();
        if (!init || init.isSplat())
          return located(&op, "host plan: a global needs a dense, non-splat "
                              "initial value");
        os << "global " << id(get) << " " << memrefBytes(get.getType())
           << " ";
        hex(os, init.getRawData());
        os << "\n";
      } else if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
        os << "launch " << launch.getKernelName().getValue();
        for (Value size : {launch.getGridSizeX(), launch.getGridSizeY(),
                           launch.getGridSizeZ(), launch.getBlockSizeX(),
                           launch.getBlockSizeY(), launch.getBlockSizeZ()}) {
          auto c = getConstantIntValue(size);
          if (!c)
            return located(&op, "host plan: launch sizes must be constants");
          os << " " << *c;
        }
        for (Value arg : launch.getKernelOperands()) {
          if (!ids.count(arg))
            return located(&op, "host plan: a launch argument has no "
                                "definition in the plan");
          os << " " << (isa<MemRefType>(arg.getType()) ? "b" : "s")
             << ids[arg];
        }
        os << "\n";
      } else if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
          auto memref = dyn_cast<MemRefType>(v.getType());
          if (!memref || !ids.count(v))
            return located(&op, "host plan: results must be buffers");
          os << "result " << i << " " << ids[v] << " " << memrefBytes(memref)
             << " ";
          describe(os, memref,
                   func.getResultAttrOfType<TypeAttr>(i, kTensorAttrName));
          os << "\n";
        }
        os << "end\n";
      } else {
        return located(&op, "host plan: '" + op.getName().getStringRef() +
                                "' is not a plan operation");
      }
    }
  }
  return text;
}
