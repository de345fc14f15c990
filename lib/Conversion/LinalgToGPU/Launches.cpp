//===- Launches.cpp - pieces of the generic GPU kernels -------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Launches.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <limits>

using namespace mlir;

namespace mlir::mxfp4::launches {

Value openLaunch(OpBuilder &b, Location loc, int64_t points, int64_t threads) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value blocks = arith::ConstantIndexOp::create(
      b, loc, std::max<int64_t>(1, (points + threads - 1) / threads));
  Value block = arith::ConstantIndexOp::create(b, loc, threads);
  auto launch =
      gpu::LaunchOp::create(b, loc, blocks, one, one, block, one, one);
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value id = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, launch.getBlockIds().x,
                            arith::ConstantIndexOp::create(b, loc, threads)),
      launch.getThreadIds().x);
  if (points % threads != 0) {
    Value inRange =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, id,
                              arith::ConstantIndexOp::create(b, loc, points));
    auto guard = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
    b.setInsertionPointToStart(guard.thenBlock());
  }
  return id;
}

std::optional<SmallVector<Operation *>> getCombiners(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  SmallVector<Operation *> combiners;
  for (auto [i, v] : llvm::enumerate(yield.getValues())) {
    BlockArgument out = body.getArgument(op.getNumDpsInputs() + i);
    Operation *combine = v.getDefiningOp();
    if (!combine ||
        !isa<arith::AddFOp, arith::MaximumFOp, arith::MaxNumFOp>(combine) ||
        !out.hasOneUse() || !out.getType().isF32() ||
        (combine->getOperand(0) != out && combine->getOperand(1) != out))
      return std::nullopt;
    combiners.push_back(combine);
  }
  return combiners;
}

bool isSumReduction(linalg::GenericOp op) {
  std::optional<SmallVector<Operation *>> combiners = getCombiners(op);
  return combiners && llvm::all_of(*combiners, [](Operation *c) {
           return isa<arith::AddFOp>(c);
         });
}

Value neutralOf(OpBuilder &b, Location loc, Operation *combiner) {
  float value = isa<arith::AddFOp>(combiner)
                    ? 0.0f
                    : -std::numeric_limits<float>::infinity();
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
}

Value combineWith(OpBuilder &b, Location loc, Operation *combiner, Value x,
                  Value y) {
  OperationState state(loc, combiner->getName());
  state.addOperands({x, y});
  state.addTypes(x.getType());
  state.addAttributes(combiner->getAttrs());
  return b.create(state)->getResult(0);
}

SmallVector<Value> emitPayload(OpBuilder &b, linalg::GenericOp op,
                               ArrayRef<Value> ivs, ArrayRef<Value> outs,
                               function_ref<Value(OpOperand *)> input) {
  Block &body = op.getRegion().front();
  IRMapping mapping;
  for (OpOperand *in : op.getDpsInputOperands())
    mapping.map(body.getArgument(in->getOperandNumber()), input(in));
  for (auto [i, out] : llvm::enumerate(outs))
    if (out)
      mapping.map(body.getArgument(op.getNumDpsInputs() + i), out);
  SmallVector<Value> results;
  for (Operation &inner : body) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner))
      mapping.map(index.getResult(), ivs[index.getDim()]);
    else if (auto yield = dyn_cast<linalg::YieldOp>(inner))
      for (Value v : yield.getValues())
        results.push_back(mapping.lookupOrDefault(v));
    else
      b.clone(inner, mapping);
  }
  return results;
}

Value rootOf(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

Access accessOf(Operation *op) {
  Access access;
  if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
    for (OpOperand *in : generic.getDpsInputOperands())
      if (isa<MemRefType>(in->get().getType()))
        access.reads.insert(rootOf(in->get()));
    for (OpOperand &out : generic.getDpsInitsMutable())
      access.writes.insert(rootOf(out.get()));
    return access;
  }
  if (auto load = dyn_cast<memref::LoadOp>(op)) {
    access.reads.insert(rootOf(load.getMemRef()));
    return access;
  }
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (isa<MemRefType>(v.getType()))
        access.writes.insert(rootOf(v));
  });
  return access;
}

bool touchesNoMemory(Operation *op) {
  return isa<memref::AllocOp>(op) || isMemoryEffectFree(op);
}

bool intersects(const DenseSet<Value> &a, const DenseSet<Value> &b) {
  return llvm::any_of(a, [&](Value v) { return b.contains(v); });
}

Value loadInit(OpBuilder &b, Location loc, OpOperand &output,
               ValueRange indices, const ConstantInits &inits) {
  if (TypedAttr constant = inits.lookup(&output))
    return arith::ConstantOp::create(b, loc, constant);
  return memref::LoadOp::create(b, loc, output.get(), indices);
}

/// The constant `op` writes to every element of its output if it is a fill
/// (a generic yielding a constant scalar input at every point).
static TypedAttr fillConstant(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0 ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return {};
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield.getValues().front() != body.getArgument(0))
    return {};
  TypedAttr constant;
  if (!matchPattern(op.getDpsInputOperand(0)->get(), m_Constant(&constant)))
    return {};
  return constant;
}

/// The buffer a copy reads, if `op` copies one buffer of its output's type.
static Value copySource(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0)
    return {};
  OpOperand *in = op.getDpsInputOperand(0);
  OpOperand *out = op.getDpsInitOperand(0);
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (in->get().getType() != out->get().getType() ||
      !op.getMatchingIndexingMap(in).isIdentity() ||
      !op.getMatchingIndexingMap(out).isIdentity() ||
      yield.getValues().front() != body.getArgument(0))
    return {};
  return in->get();
}

ConstantInits foldConstantInits(Block &entry) {
  // Buffers a fill writes before any other access, and the op that writes
  // them next, if any: in between, they hold the constant.
  DenseMap<Value, TypedAttr> constantBuffers;
  DenseMap<Value, Operation *> overwrittenAt;
  DenseSet<Value> seen;
  for (Operation &op : entry) {
    if (touchesNoMemory(&op))
      continue;
    auto generic = dyn_cast<linalg::GenericOp>(op);
    TypedAttr constant = generic ? fillConstant(generic) : TypedAttr();
    Access access = accessOf(&op);
    if (constant) {
      Value root = rootOf(generic.getDpsInits().front());
      if (!seen.contains(root) &&
          isa_and_nonnull<memref::AllocOp>(root.getDefiningOp()))
        constantBuffers[root] = constant;
      access.writes.insert(root);
    }
    for (Value root : access.writes)
      if (seen.contains(root) && constantBuffers.count(root))
        overwrittenAt.try_emplace(root, &op);
    seen.insert(access.reads.begin(), access.reads.end());
    seen.insert(access.writes.begin(), access.writes.end());
  }
  auto constantAt = [&](Value root, Operation *op) -> TypedAttr {
    Operation *overwrite = overwrittenAt.lookup(root);
    if (overwrite && !op->isBeforeInBlock(overwrite))
      return {};
    return constantBuffers.lookup(root);
  };

  ConstantInits inits;
  SmallVector<Operation *> folded;
  for (Operation &op : entry) {
    auto init = dyn_cast<linalg::GenericOp>(op);
    if (!init)
      continue;
    TypedAttr constant = fillConstant(init);
    if (!constant)
      if (Value source = copySource(init))
        constant = constantAt(rootOf(source), &op);
    if (!constant)
      continue;
    Value target = init.getDpsInits().front();
    Value root = rootOf(target);
    // The next op that touches the target must be a generic writing it as
    // an output, without reading it as an input.
    for (Operation *next = op.getNextNode(); next; next = next->getNextNode()) {
      if (touchesNoMemory(next))
        continue;
      Access access = accessOf(next);
      if (!access.reads.contains(root) && !access.writes.contains(root))
        continue;
      auto user = dyn_cast<linalg::GenericOp>(next);
      if (!user || access.reads.contains(root))
        break;
      for (OpOperand &out : user.getDpsInitsMutable())
        if (out.get() == target) {
          inits[&out] = constant;
          folded.push_back(&op);
        }
      break;
    }
  }
  for (Operation *op : folded)
    op->erase();
  return inits;
}

} // namespace mlir::mxfp4::launches
