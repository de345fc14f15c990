//===- AttentionToNVGPU.cpp - attention composites to fused kernels -------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Runs after bufferization: a call of a causal-attention composite has f32
// buffer operands and returns fresh buffers, which become allocations the
// fused launches (FlashAttention.h) fill. The pass outlines the launches
// itself, into named kernels of the kernel module (one per distinct
// kernel, shared by the layers): gpu-kernel-outlining would drop the
// attributes that tell ptxas a kernel's occupancy.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Conversion/Passes.h"

#include "FlashAttention.h"

#include "mxfp4/Conversion/MXFP4ToGPUCommon/DeviceABI.h"
#include "mxfp4/Dialect/MXFP4/Transforms/Composites.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_CONVERTATTENTIONTONVGPUPASS
#include "mxfp4/Conversion/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;
using namespace mlir::mxfp4;

/// The static shape of `v` if it is an f32 (or, where `bf16` allows, a
/// bf16) buffer with the identity layout.
static std::optional<ArrayRef<int64_t>> plainShape(Value v, bool bf16 = false) {
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type || !type.hasStaticShape() ||
      !(type.getElementType().isF32() ||
        (bf16 && type.getElementType().isBF16())) ||
      !type.getLayout().isIdentity())
    return std::nullopt;
  return type.getShape();
}

/// The attention shape of a composite call, if the kernels cover it:
/// q [B, S, H, D], k and v [B, S, KVH, D] (H a multiple of KVH), and
/// (backward) o and dO as q, lse [B, H, S]. All but lse may be bf16
/// (mxfp4-round-attention-io): the kernels multiply bf16 tiles either way.
static std::optional<sm90::AttentionShape> matchShape(func::CallOp call,
                                                      bool backward) {
  if (call.getNumOperands() != (backward ? 6u : 3u))
    return std::nullopt;
  Value lse = backward ? call.getOperand(4) : call.getResult(1);
  for (Value v : llvm::concat<Value>(call.getOperands(), call.getResults()))
    if (!plainShape(v, /*bf16=*/v != lse))
      return std::nullopt;
  auto shapeOf = [&](unsigned i) {
    return *plainShape(call.getOperand(i), true);
  };
  ArrayRef<int64_t> q = shapeOf(0), k = shapeOf(1);
  if (q.size() != 4 || k.size() != 4 || q[0] != k[0] || q[1] != k[1] ||
      q[3] != k[3] || q[2] % k[2] || shapeOf(2) != k)
    return std::nullopt;
  sm90::AttentionShape shape{q[0], k[2], q[2] / k[2], q[1], q[3]};
  SmallVector<int64_t> lseShape = {q[0], q[2], q[1]};
  if (backward &&
      (shapeOf(3) != q || shapeOf(4) != ArrayRef(lseShape) || shapeOf(5) != q))
    return std::nullopt;
  if (!sm90::isSupported(shape))
    return std::nullopt;
  return shape;
}

/// The element types of `call`'s buffers as a kernel name suffix: none if
/// all are f32, else one letter each, operands then results (f for f32, h
/// for bf16).
static std::string typeSuffix(func::CallOp call) {
  std::string letters;
  for (Type t :
       llvm::concat<const Type>(call.getOperandTypes(), call.getResultTypes()))
    letters += getElementTypeOrSelf(t).isBF16() ? 'h' : 'f';
  return letters.find('h') == std::string::npos ? "" : "_" + letters;
}

/// Replaces `l`'s gpu.launch by a launch of kernel
/// `attention_<role>_<shape><types>` in `kernels`, outlined from it unless
/// an earlier layer's launch made it.
static void outline(OpBuilder &b, gpu::GPUModuleOp kernels,
                    const sm90::AttentionShape &shape, StringRef types,
                    const sm90::AttentionLaunch &l) {
  gpu::LaunchOp launch = l.launch;
  std::string name = llvm::formatv(
      "attention_{0}_b{1}_s{2}_kv{3}x{4}_d{5}{6}", l.role, shape.batch,
      shape.seq, shape.kvHeads, shape.groups, shape.headDim, types);
  // Constants are rematerialized inside rather than passed.
  (void)sinkOperationsIntoLaunchOp(launch, [](Operation *op) {
    return op->hasTrait<OpTrait::ConstantLike>();
  });
  SmallVector<Value> operands;
  gpu::GPUFuncOp func = outlineKernelFunc(launch, name, operands);
  if (auto existing = kernels.lookupSymbol<gpu::GPUFuncOp>(name)) {
    func.erase();
    func = existing;
  } else {
    if (l.minBlocksPerSM)
      func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    b.getI32IntegerAttr(l.minBlocksPerSM));
    SymbolTable(kernels).insert(func);
  }
  b.setInsertionPoint(launch);
  gpu::LaunchFuncOp::create(b, launch.getLoc(), func,
                            launch.getGridSizeOperandValues(),
                            launch.getBlockSizeOperandValues(),
                            launch.getDynamicSharedMemorySize(), operands);
  launch.erase();
}

namespace {

struct ConvertAttentionToNVGPUPass
    : mxfp4::impl::ConvertAttentionToNVGPUPassBase<
          ConvertAttentionToNVGPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) { calls.push_back(call); });
    OpBuilder b(&getContext());
    // The kernel module (made by convert-mxfp4-to-nvgpu, else here).
    auto kernels = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName);
    auto getKernels = [&] {
      if (!kernels) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToEnd(module.getBody());
        kernels =
            gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName);
        module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                        b.getUnitAttr());
      }
      return kernels;
    };
    SetVector<func::FuncOp> composites;
    for (func::CallOp call : calls) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      auto kind = callee ? callee->getAttrOfType<StringAttr>(kCompositeAttrName)
                         : StringAttr();
      if (!kind)
        continue;
      bool backward = kind.getValue() == kCausalAttentionBackward;
      if (!backward && kind.getValue() != kCausalAttention)
        continue;
      composites.insert(callee);
      std::optional<sm90::AttentionShape> shape = matchShape(call, backward);
      if (!shape)
        continue;
      b.setInsertionPoint(call);
      Location loc = call.getLoc();
      SmallVector<Value> results;
      for (Type t : call.getResultTypes())
        results.push_back(memref::AllocOp::create(b, loc, cast<MemRefType>(t)));
      auto args = call.getOperands();
      SmallVector<sm90::AttentionLaunch> launches =
          backward
              ? sm90::emitAttentionBackward(b, loc, *shape, args[0], args[1],
                                            args[2], args[3], args[4], args[5],
                                            results[0], results[1], results[2])
              : sm90::emitAttentionForward(b, loc, *shape, args[0], args[1],
                                           args[2], results[0], results[1]);
      std::string types = typeSuffix(call);
      for (const sm90::AttentionLaunch &launch : launches)
        outline(b, getKernels(), *shape, types, launch);
      call.replaceAllUsesWith(results);
      call.erase();
    }
    for (func::FuncOp callee : composites)
      if (callee.isPrivate() &&
          SymbolTable::symbolKnownUseEmpty(callee, module))
        callee.erase();
  }
};

} // namespace
