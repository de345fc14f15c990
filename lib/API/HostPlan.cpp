//===- HostPlan.cpp - a module's host functions as a plan -----------------===//
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
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
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

/// Sets `value`'s element type and shape from the buffer `type`, so that a
/// runtime can read and write .npy files.
static void describe(HostValue &value, MemRefType type, TypeAttr tensor = {}) {
  Type e = type.getElementType();
  // A flat buffer of a whole-function conversion: the tensor's shape, when
  // it has the buffer's elements (FP4 tensors are packed).
  ArrayRef<int64_t> shape = type.getShape();
  if (auto t = tensor ? dyn_cast<RankedTensorType>(tensor.getValue())
                      : RankedTensorType();
      t && t.getElementType() == e && t.getNumElements() == type.getNumElements())
    shape = t.getShape();
  if (e.isF32())
    value.elementType = "f32";
  else if (e.isBF16())
    value.elementType = "bf16";
  else if (e.isInteger(32))
    value.elementType = "i32";
  else if (e.isInteger(64) || e.isIndex())
    value.elementType = "i64";
  else if (e.isInteger(8))
    value.elementType = "u8";
  else
    value.elementType = "bytes";
  value.shape.assign(shape.begin(), shape.end());
}

/// The tensor map `create` describes, of a buffer of type `type`.
static llvm::Expected<HostTensorMap>
describeTensorMap(nvgpu::TmaCreateDescriptorOp create, MemRefType type) {
  nvgpu::TensorMapDescriptorType desc = create.getTensorMap().getType();
  HostTensorMap map;
  HostValue element;
  describe(element, type);
  map.elementType = element.elementType;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type.hasStaticShape() ||
      failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic) || strides.back() != 1)
    return located(create, "host plan: a tensor map needs a static shape and "
                           "layout with a contiguous innermost dimension");
  int64_t bytes = (type.getElementTypeBitWidth() + 7) / 8;
  map.dims.assign(type.getShape().begin(), type.getShape().end());
  for (int64_t stride : ArrayRef(strides).drop_back())
    map.strides.push_back(stride * bytes);
  map.offset = offset * bytes;
  for (Value size : create.getBoxDimensions()) {
    auto c = getConstantIntValue(size);
    if (!c)
      return located(create, "host plan: a tensor map's box must be constant");
    map.box.push_back(*c);
  }
  switch (desc.getSwizzle()) {
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_NONE:
    map.swizzle = 0;
    break;
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_32B:
    map.swizzle = 32;
    break;
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_64B:
    map.swizzle = 64;
    break;
  case nvgpu::TensorMapSwizzleKind::SWIZZLE_128B:
    map.swizzle = 128;
    break;
  }
  switch (desc.getL2promo()) {
  case nvgpu::TensorMapL2PromoKind::L2PROMO_NONE:
    map.l2Promotion = 0;
    break;
  case nvgpu::TensorMapL2PromoKind::L2PROMO_64B:
    map.l2Promotion = 64;
    break;
  case nvgpu::TensorMapL2PromoKind::L2PROMO_128B:
    map.l2Promotion = 128;
    break;
  case nvgpu::TensorMapL2PromoKind::L2PROMO_256B:
    map.l2Promotion = 256;
    break;
  }
  if (desc.getOob() != nvgpu::TensorMapOOBKind::OOB_ZERO ||
      desc.getInterleave() != nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE)
    return located(create, "host plan: tensor maps read zeros out of bounds "
                           "and are not interleaved");
  std::string problem = checkTensorMap(map);
  if (!problem.empty())
    return located(create, "host plan: tensor map: " + problem);
  return map;
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
      describe(value, memref,
               func.getArgAttrOfType<TypeAttr>(arg.getArgNumber(),
                                               kTensorAttrName));
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
    } else if (auto unranked = dyn_cast<memref::CastOp>(op);
               unranked && isa<UnrankedMemRefType>(unranked.getType())) {
      // For a tensor map, which reads the ranked source's layout.
      step.kind = HostStep::Kind::View;
      step.source = id(unranked.getSource());
      step.id = id(unranked);
    } else if (auto create = dyn_cast<nvgpu::TmaCreateDescriptorOp>(op)) {
      auto source = create.getTensor().getDefiningOp<memref::CastOp>();
      if (!source)
        return located(&op, "host plan: a tensor map of a buffer that is not "
                            "a cast of a ranked one");
      llvm::Expected<HostTensorMap> map = describeTensorMap(
          create, cast<MemRefType>(source.getSource().getType()));
      if (!map)
        return map.takeError();
      step.kind = HostStep::Kind::TensorMap;
      step.source = id(create.getTensor());
      step.id = id(create);
      step.map = std::move(*map);
    } else if (auto pointer = dyn_cast<UnrealizedConversionCastOp>(op);
               pointer && pointer->getNumOperands() == 1 &&
               pointer->getNumResults() == 1 &&
               isa<nvgpu::TensorMapDescriptorType>(
                   pointer->getOperand(0).getType()) &&
               isa<LLVM::LLVMPointerType>(pointer->getResult(0).getType())) {
      // The kernel's view of a tensor map: its device address.
      ids[pointer->getResult(0)] = id(pointer->getOperand(0));
      continue;
    } else if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp,
                   memref::MemorySpaceCastOp, memref::CastOp,
                   memref::SubViewOp>(op)) {
      // The address passed is the source's: the offset and strides must
      // be static, in the type the kernel receives.
      auto type = cast<MemRefType>(op.getResult(0).getType());
      SmallVector<int64_t> strides;
      int64_t offset;
      if (failed(type.getStridesAndOffset(strides, offset)) ||
          ShapedType::isDynamic(offset) ||
          llvm::any_of(strides, ShapedType::isDynamic))
        return located(&op, "host plan: a view with a dynamic layout");
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
      step.kind = HostStep::Kind::Launch;
      if (Value shared = launch.getDynamicSharedMemorySize()) {
        auto bytes = getConstantIntValue(shared);
        if (!bytes)
          return located(&op, "host plan: dynamic shared memory must be a "
                              "constant");
        step.sharedBytes = *bytes;
      }
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
        // Buffers and tensor maps pass their device addresses.
        step.params.push_back(
            {isa<MemRefType, LLVM::LLVMPointerType>(arg.getType()), ids[arg]});
      }
    } else if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        auto memref = dyn_cast<MemRefType>(v.getType());
        if (!memref || !ids.count(v))
          return located(&op, "host plan: results must be buffers");
        HostValue result;
        result.id = ids[v];
        result.bytes = memrefBytes(memref);
        describe(result, memref,
                 func.getResultAttrOfType<TypeAttr>(i, kTensorAttrName));
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
    llvm::Expected<HostFunction> function =
        buildFunction(func);
    if (!function)
      return function.takeError();
    plan.push_back(std::move(*function));
  }
  return plan;
}
