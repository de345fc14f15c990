//===- Attention.cpp - attention composites to fused launches -------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Runs after bufferization: a call of a causal-attention composite has
// buffer operands and returns fresh buffers, which become allocations the
// target's launches fill. The driver outlines the launches itself, into
// named kernels of the kernel module (one per distinct kernel, shared by
// the layers): gpu-kernel-outlining would drop the attributes a target's
// code generator needs (occupancy hints).
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Conversion/AttentionCommon/Attention.h"

#include "mxfp4/Conversion/MXFP4ToGPUCommon/DeviceABI.h"
#include "mxfp4/Dialect/MXFP4/Transforms/Composites.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::mxfp4;

AttentionEmitter::~AttentionEmitter() = default;

SmallVector<Value> mlir::mxfp4::attentionRowAt(kernels::KernelBuilder &kb,
                                               const AttentionShape &shape,
                                               const AttentionHead &head,
                                               Value buffer, Value row0,
                                               Value r, Value col) {
  int64_t groups =
      cast<MemRefType>(buffer.getType()).getDimSize(2) / shape.kvHeads;
  Value position = kb.add(kb.rem(row0, shape.seq), r);
  Value h = head.kvHead;
  if (groups > 1)
    h = kb.add(kb.mul(head.kvHead, groups), kb.div(row0, shape.seq));
  return {head.batchIndex, position, h, col};
}

SmallVector<Value> mlir::mxfp4::attentionValueAt(kernels::KernelBuilder &kb,
                                                 const AttentionShape &shape,
                                                 const AttentionHead &head,
                                                 Value buffer, Value row) {
  if (cast<MemRefType>(buffer.getType()).getRank() == 2)
    return {head.head, row};
  return {head.batchIndex,
          kb.add(kb.mul(head.kvHead, shape.groups), kb.div(row, shape.seq)),
          kb.rem(row, shape.seq)};
}

int64_t mlir::mxfp4::sectionHeads(const AttentionShape &shape, bool keyBlocks,
                                  int64_t rows, int64_t stepRows,
                                  int64_t slots) {
  int64_t headSteps = 0, longest = 0;
  for (int64_t block = 0; block < shape.seq / rows; ++block) {
    int64_t steps =
        keyBlocks ? shape.groups *
                        llvm::divideCeil(shape.seq - block * rows, stepRows)
                  : llvm::divideCeil((block + 1) * rows, stepRows);
    longest = std::max(longest, steps);
    headSteps += keyBlocks ? steps : shape.groups * steps;
  }
  int64_t need =
      llvm::divideCeil(longest * slots, std::max<int64_t>(headSteps, 1));
  for (int64_t section = 1; section < shape.heads(); ++section)
    if (shape.heads() % section == 0 && section >= need)
      return section;
  return shape.heads();
}

/// The static shape of `t` if it is an f32 (or, where `bf16` allows, a
/// bf16) buffer with the identity layout.
static std::optional<ArrayRef<int64_t>> plainShape(Type t, bool bf16) {
  auto type = dyn_cast<MemRefType>(t);
  if (!type || !type.hasStaticShape() ||
      !(type.getElementType().isF32() ||
        (bf16 && type.getElementType().isBF16())) ||
      !type.getLayout().isIdentity())
    return std::nullopt;
  return type.getShape();
}

std::optional<AttentionShape>
mxfp4::matchAttentionShape(TypeRange operands, TypeRange results,
                           bool backward) {
  if (operands.size() != (backward ? 6u : 3u) ||
      results.size() != (backward ? 3u : 2u))
    return std::nullopt;
  // The log-sum-exp: forward result 1, backward operand 4.
  auto isLse = [&](bool isOperand, unsigned i) {
    return backward ? isOperand && i == 4 : !isOperand && i == 1;
  };
  for (auto [i, t] : llvm::enumerate(operands))
    if (!plainShape(t, !isLse(true, i)))
      return std::nullopt;
  for (auto [i, t] : llvm::enumerate(results))
    if (!plainShape(t, !isLse(false, i)))
      return std::nullopt;
  auto shapeOf = [&](unsigned i) { return *plainShape(operands[i], true); };
  ArrayRef<int64_t> q = shapeOf(0), k = shapeOf(1);
  if (q.size() != 4 || k.size() != 4 || q[0] != k[0] || q[1] != k[1] ||
      q[3] != k[3] || q[2] % k[2] || shapeOf(2) != k)
    return std::nullopt;
  AttentionShape shape{q[0], k[2], q[2] / k[2], q[1], q[3]};
  SmallVector<int64_t> lseShape = {q[0], q[2], q[1]};
  if (backward &&
      (shapeOf(3) != q || shapeOf(4) != ArrayRef(lseShape) || shapeOf(5) != q))
    return std::nullopt;
  return shape;
}

std::string mxfp4::attentionKernelName(const AttentionLaunch &launch,
                                       const AttentionShape &shape,
                                       StringRef typeSuffix) {
  return llvm::formatv("attention_{0}_b{1}_s{2}_kv{3}x{4}_d{5}{6}",
                       launch.role, shape.batch, shape.seq, shape.kvHeads,
                       shape.groups, shape.headDim, typeSuffix);
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

/// Replaces `l`'s gpu.launch by a launch of its named kernel in `kernels`,
/// outlined from it unless an earlier layer's launch made it.
static void outline(OpBuilder &b, gpu::GPUModuleOp kernels,
                    const AttentionShape &shape, StringRef types,
                    const AttentionLaunch &l) {
  gpu::LaunchOp launch = l.launch;
  std::string name = attentionKernelName(l, shape, types);
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
    for (const NamedAttribute &attr : l.kernelAttributes)
      func->setAttr(attr.getName(), attr.getValue());
    SymbolTable(kernels).insert(func);
  }
  b.setInsertionPoint(launch);
  gpu::LaunchFuncOp::create(b, launch.getLoc(), func,
                            launch.getGridSizeOperandValues(),
                            launch.getBlockSizeOperandValues(),
                            launch.getDynamicSharedMemorySize(), operands);
  launch.erase();
}

void mxfp4::convertAttentionComposites(ModuleOp module,
                                       AttentionEmitter &emitter) {
  SymbolTable symbols(module);
  SmallVector<func::CallOp> calls;
  module.walk([&](func::CallOp call) { calls.push_back(call); });
  OpBuilder b(module.getContext());
  // The kernel module (made by the mxfp4 conversion, else here).
  auto kernels = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName);
  auto getKernels = [&] {
    if (!kernels) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(module.getBody());
      kernels = gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName);
      module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                      b.getUnitAttr());
    }
    return kernels;
  };
  llvm::SetVector<func::FuncOp> composites;
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
    std::optional<AttentionShape> shape = matchAttentionShape(
        call.getOperandTypes(), call.getResultTypes(), backward);
    if (!shape || !emitter.isSupported(*shape, backward))
      continue;
    b.setInsertionPoint(call);
    Location loc = call.getLoc();
    SmallVector<Value> results;
    for (Type t : call.getResultTypes())
      results.push_back(memref::AllocOp::create(b, loc, cast<MemRefType>(t)));
    auto args = call.getOperands();
    SmallVector<AttentionLaunch> launches =
        backward ? emitter.emitBackward(b, loc, *shape, args[0], args[1],
                                        args[2], args[3], args[4], args[5],
                                        results[0], results[1], results[2])
                 : emitter.emitForward(b, loc, *shape, args[0], args[1],
                                       args[2], results[0], results[1]);
    std::string types = typeSuffix(call);
    for (const AttentionLaunch &launch : launches)
      outline(b, getKernels(), *shape, types, launch);
    call.replaceAllUsesWith(results);
    call.erase();
  }
  for (func::FuncOp callee : composites)
    if (callee.isPrivate() && SymbolTable::symbolKnownUseEmpty(callee, module))
      callee.erase();
}
