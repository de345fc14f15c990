//===- LinalgToGPU.cpp - linalg on buffers to one gpu.launch each ---------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The generic GPU code generation for the ops no tuned kernel covers
// (attention, norms, RoPE, SwiGLU, loss, AdamW): every top-level linalg op
// of a bufferized function becomes one `gpu.launch` with one work-item per
// point of its parallel iteration space (256 a workgroup), each looping over
// the reduction dimensions with its accumulators in registers; memref.copy
// becomes a copy kernel; any other top-level code that touches memory (the
// embedding's row loops, scalar loads and stores) runs in a one-work-item
// launch, so the host function is left with allocations, views, launches
// and scalar arithmetic. Target-independent: gfx950 and sm_90a share it.
//
//===----------------------------------------------------------------------===//

#include "Launches.h"
#include "RowFusion.h"

#include "mxfp4/Conversion/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/IR/PatternMatch.h"

#include <algorithm>
#include <limits>

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_CONVERTLINALGTOGPULAUNCHPASS
#include "mxfp4/Conversion/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;
using namespace mlir::mxfp4::launches;

/// Emits `gpu.launch` over `blocks` workgroups of kThreads work-items, each
/// with `buffers` f32 workgroup buffers of kThreads elements, and positions
/// `b` inside it (no guard: every work-item reaches the barriers).
static gpu::LaunchOp openWorkgroupLaunch(OpBuilder &b, Location loc,
                                         int64_t blocks, int64_t buffers) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto scratch = MemRefType::get(
      {kThreads}, b.getF32Type(), MemRefLayoutAttrInterface{},
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup));
  auto launch = gpu::LaunchOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, blocks), one, one,
      arith::ConstantIndexOp::create(b, loc, kThreads), one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, SmallVector<Type>(buffers, scratch));
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  return launch;
}

/// The fewest elements a work-item of a split workgroup reduction sums:
/// fewer would only add partials.
constexpr int64_t kMinPerWorkItem = 8;

/// Combines `values` (one per combiner) over the kThreads work-items of
/// `launch` through its workgroup buffers, halving the active work-items at
/// each step: a fixed tree, so the same bits every run (no atomics). Leaves
/// `b` inside `if (thread == 0)` and returns the totals there.
static SmallVector<Value> combineWorkgroup(OpBuilder &b, Location loc,
                                           gpu::LaunchOp launch,
                                           ValueRange values,
                                           ArrayRef<Operation *> combiners) {
  Value thread = launch.getThreadIds().x;
  ArrayRef<BlockArgument> scratch = launch.getWorkgroupAttributions();
  for (auto [value, buffer] : llvm::zip(values, scratch))
    memref::StoreOp::create(b, loc, value, buffer, thread);
  gpu::BarrierOp::create(b, loc);
  for (int64_t half = kThreads / 2; half > 0; half /= 2) {
    Value active =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, thread,
                              arith::ConstantIndexOp::create(b, loc, half));
    auto step = scf::IfOp::create(b, loc, active, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard stepGuard(b);
      b.setInsertionPointToStart(step.thenBlock());
      Value other = arith::AddIOp::create(
          b, loc, thread, arith::ConstantIndexOp::create(b, loc, half));
      for (auto [buffer, c] : llvm::zip(scratch, combiners)) {
        Value mine = memref::LoadOp::create(b, loc, buffer, thread);
        Value theirs = memref::LoadOp::create(b, loc, buffer, other);
        memref::StoreOp::create(b, loc, combineWith(b, loc, c, mine, theirs),
                                buffer, thread);
      }
    }
    // Work-item 0 reads back only what it wrote last.
    if (half > 1)
      gpu::BarrierOp::create(b, loc);
  }
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread,
                            arith::ConstantIndexOp::create(b, loc, 0));
  auto store = scf::IfOp::create(b, loc, first, /*withElse=*/false);
  b.setInsertionPointToStart(store.thenBlock());
  SmallVector<Value> totals;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  for (Value buffer : scratch.take_front(values.size()))
    totals.push_back(memref::LoadOp::create(b, loc, buffer, zero));
  return totals;
}

/// Sets ivs[d] for the loop dims `dims` (innermost last) from the linear
/// index `r` over their `ranges`.
static void delinearize(OpBuilder &b, Location loc, Value r,
                        ArrayRef<int64_t> dims, ArrayRef<int64_t> ranges,
                        SmallVectorImpl<Value> &ivs) {
  for (int64_t d : llvm::reverse(dims)) {
    Value size = arith::ConstantIndexOp::create(b, loc, ranges[d]);
    ivs[d] = arith::RemUIOp::create(b, loc, r, size);
    r = arith::DivUIOp::create(b, loc, r, size);
  }
}

/// One launch for a linalg.generic on buffers; two for a sum over a large
/// space into few points (a bias gradient): there one work-item per output
/// point would leave the device idle, so `slices` work-items per point each
/// sum a contiguous chunk of the (linearized) reduction space into a partial
/// buffer, and a second launch adds the partials to the output in slice
/// order. A large reduction into fewer points than a workgroup has
/// work-items (a gradient norm, a loss) takes whole workgroups instead,
/// whose work-items stride a chunk (reading it coalesced) and combine
/// through a workgroup tree (`combineWorkgroup`): one workgroup a point and
/// slice, then, if there are several slices, one a point combining their
/// partials. Every work-item's share and every combining order is fixed,
/// so each run gives the same bits.
static LogicalResult launchGeneric(OpBuilder &b, linalg::GenericOp op,
                                   bool warpReductions, int64_t warpSize,
                                   const ConstantInits &constantInits) {
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return op.emitError("generic GPU lowering needs static loop ranges");
  if (launchVectorElementwise(b, op, constantInits))
    return success();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> parallel, reduction;
  int64_t points = 1;
  for (auto [d, it] : llvm::enumerate(iterators)) {
    if (it == utils::IteratorType::parallel) {
      parallel.push_back(d);
      points *= ranges[d];
    } else {
      reduction.push_back(d);
    }
  }
  for (OpOperand &operand : op->getOpOperands())
    if (auto view = operand.get().getDefiningOp<memref::SubViewOp>())
      if (!view.getSourceType().getLayout().isIdentity() ||
          view.getSourceType().getRank() != view.getType().getRank() ||
          llvm::any_of(view.getStaticOffsets(), ShapedType::isDynamic) ||
          llvm::any_of(view.getStaticStrides(), ShapedType::isDynamic))
        return op.emitError("generic GPU lowering: only static, "
                            "rank-preserving subviews of plain buffers");
  int64_t reductionSize = 1;
  for (int64_t d : reduction)
    reductionSize *= ranges[d];
  std::optional<SmallVector<Operation *>> combiners = getCombiners(op);
  bool workgroups = !reduction.empty() && points < kThreads &&
                    reductionSize >= 1024 && combiners;
  // A reduction along the innermost dimension over rows enough to fill the
  // device a warp a row (an RMSNorm backward's per-token dot product): its
  // lanes read a row coalesced, where a work-item a point and slice would
  // read addresses a row apart.
  bool rowShaped =
      warpReductions && reduction.size() == 1 &&
      reduction.front() == static_cast<int64_t>(ranges.size()) - 1 &&
      reductionSize >= 64 && combiners &&
      points * warpSize >= kBusyWorkItems / 4;
  int64_t slices = 1;
  if (workgroups)
    // At least kMinPerWorkItem elements a work-item, and at most
    // kBusyWorkItems / kThreads partials a point for the second launch.
    slices = std::max<int64_t>(
        1, std::min(kBusyWorkItems / kThreads / points,
                    reductionSize / (kThreads * kMinPerWorkItem)));
  else if (!reduction.empty() && !rowShaped && points < kBusyWorkItems / 4 &&
           reductionSize >= 1024 && isSumReduction(op))
    // At most kBusyWorkItems / kThreads partials a point, as points >=
    // kThreads here.
    slices = std::min(kBusyWorkItems / points, reductionSize / 64);
  int64_t chunk = (reductionSize + slices - 1) / slices;
  // A row reduction (one reduced dimension, one row a point) with a warp a
  // row: its `warpSize` work-items stride the row, reading it coalesced,
  // and a shuffle tree combines them.
  bool warpRows = warpReductions && !workgroups && slices == 1 &&
                  reduction.size() == 1 && reductionSize >= 64 && combiners;
  int64_t lanes = warpRows ? warpSize : 1;

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  SmallVector<Value> partials;
  if (slices > 1)
    for (Value init : op.getDpsInits())
      partials.push_back(memref::AllocOp::create(
          b, loc,
          MemRefType::get({slices, points},
                          cast<MemRefType>(init.getType()).getElementType())));
  gpu::LaunchOp launch;
  Value id;
  if (workgroups) {
    launch = openWorkgroupLaunch(b, loc, points * slices, op.getNumDpsInits());
    id = launch.getBlockIds().x;
  } else {
    id = openLaunch(b, loc, points * slices * lanes);
  }
  Value slice, lane;
  if (warpRows) {
    Value width = arith::ConstantIndexOp::create(b, loc, lanes);
    lane = arith::RemUIOp::create(b, loc, id, width);
    id = arith::DivUIOp::create(b, loc, id, width);
  }
  if (slices > 1) {
    Value pointCount = arith::ConstantIndexOp::create(b, loc, points);
    slice = arith::DivUIOp::create(b, loc, id, pointCount);
    id = arith::RemUIOp::create(b, loc, id, pointCount);
  }
  Value point = id;

  // Row-major delinearization of the parallel dimensions.
  SmallVector<Value> ivs(ranges.size());
  auto delinearizePoint = [&](Value rest) {
    for (int64_t d : llvm::reverse(parallel)) {
      Value size = arith::ConstantIndexOp::create(b, loc, ranges[d]);
      ivs[d] = arith::RemUIOp::create(b, loc, rest, size);
      rest = arith::DivUIOp::create(b, loc, rest, size);
    }
  };
  delinearizePoint(id);

  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // A static subview is folded into the indices of its source, so kernels
  // only ever see identity-layout buffers.
  auto base = [&](OpOperand *operand) -> Value {
    if (auto view = operand->get().getDefiningOp<memref::SubViewOp>())
      return view.getSource();
    return operand->get();
  };
  auto indices = [&](OpOperand *operand) {
    SmallVector<Value> idx =
        *affine::expandAffineMap(b, loc, maps[operand->getOperandNumber()],
                                 ivs);
    if (auto view = operand->get().getDefiningOp<memref::SubViewOp>())
      for (auto [i, offset, stride] :
           llvm::enumerate(view.getStaticOffsets(), view.getStaticStrides()))
        idx[i] = arith::AddIOp::create(
            b, loc, arith::ConstantIndexOp::create(b, loc, offset),
            arith::MulIOp::create(b, loc, idx[i],
                                  arith::ConstantIndexOp::create(b, loc,
                                                                 stride)));
    return idx;
  };
  auto load = [&](OpOperand *operand) -> Value {
    if (!isa<MemRefType>(operand->get().getType()))
      return operand->get();
    return memref::LoadOp::create(b, loc, base(operand), indices(operand));
  };
  // An output's value before the op: a known constant, else its load.
  auto loadInit = [&](OpOperand &output) -> Value {
    if (TypedAttr constant = constantInits.lookup(&output))
      return arith::ConstantOp::create(b, loc, constant);
    return load(&output);
  };

  // Runs the payload at `ivs`, with the outputs' current values `accs`.
  auto payload = [&](ValueRange accs) {
    return emitPayload(b, op, ivs, SmallVector<Value>(accs), load);
  };

  // The accumulators' start: the outputs, or 0 for a slice's partial sum
  // (a warp's lanes and a workgroup's work-items start from their
  // combiners' neutral elements below).
  SmallVector<Value> inits;
  for (OpOperand &output : op.getDpsInitsMutable())
    if (!warpRows && !workgroups)
      inits.push_back(slices > 1 ? Value(arith::ConstantOp::create(
                                       b, loc, b.getF32FloatAttr(0.0f)))
                                 : loadInit(output));
  // Slice `slice`'s chunk [first, last) of the linearized reduction space.
  auto sliceChunk = [&]() -> std::pair<Value, Value> {
    Value first =
        slices > 1
            ? arith::MulIOp::create(
                  b, loc, slice, arith::ConstantIndexOp::create(b, loc, chunk))
                  .getResult()
            : arith::ConstantIndexOp::create(b, loc, 0).getResult();
    Value last = arith::MinUIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, first,
                              arith::ConstantIndexOp::create(b, loc, chunk)),
        arith::ConstantIndexOp::create(b, loc, reductionSize));
    return {first, last};
  };
  SmallVector<Value> results;
  if (workgroups) {
    SmallVector<Value> neutrals;
    for (Operation *c : *combiners)
      neutrals.push_back(neutralOf(b, loc, c));
    // This slice's chunk of the linearized reduction space, its work-items
    // striding it.
    auto [first, last] = sliceChunk();
    auto loop = scf::ForOp::create(
        b, loc, arith::AddIOp::create(b, loc, first, launch.getThreadIds().x),
        last, arith::ConstantIndexOp::create(b, loc, kThreads), neutrals);
    {
      OpBuilder::InsertionGuard loopGuard(b);
      b.setInsertionPointToStart(loop.getBody());
      delinearize(b, loc, loop.getInductionVar(), reduction, ranges, ivs);
      scf::YieldOp::create(b, loc, payload(loop.getRegionIterArgs()));
    }
    for (int64_t d : reduction)
      ivs[d] = {};
    SmallVector<Value> totals =
        combineWorkgroup(b, loc, launch, loop.getResults(), *combiners);
    if (slices > 1) {
      for (auto [partial, total] : llvm::zip(partials, totals))
        memref::StoreOp::create(b, loc, total, partial,
                                ValueRange{slice, point});
      // The slices' partials, a workgroup a point.
      b.setInsertionPointAfter(launch);
      launch = openWorkgroupLaunch(b, loc, points, op.getNumDpsInits());
      Value p = launch.getBlockIds().x;
      delinearizePoint(p);
      // The first launch's constants are not visible in this one.
      neutrals.clear();
      for (Operation *c : *combiners)
        neutrals.push_back(neutralOf(b, loc, c));
      auto sum = scf::ForOp::create(
          b, loc, launch.getThreadIds().x,
          arith::ConstantIndexOp::create(b, loc, slices),
          arith::ConstantIndexOp::create(b, loc, kThreads), neutrals);
      {
        OpBuilder::InsertionGuard sumGuard(b);
        b.setInsertionPointToStart(sum.getBody());
        SmallVector<Value> next;
        for (auto [partial, acc, c] :
             llvm::zip(partials, sum.getRegionIterArgs(), *combiners))
          next.push_back(combineWith(
              b, loc, c, acc,
              memref::LoadOp::create(b, loc, partial,
                                     ValueRange{sum.getInductionVar(), p})));
        scf::YieldOp::create(b, loc, next);
      }
      totals = combineWorkgroup(b, loc, launch, sum.getResults(), *combiners);
    }
    for (auto [output, total, c] :
         llvm::zip(op.getDpsInitsMutable(), totals, *combiners))
      results.push_back(combineWith(b, loc, c, loadInit(output), total));
  } else if (warpRows) {
    SmallVector<Value> neutrals;
    for (Operation *c : *combiners)
      neutrals.push_back(neutralOf(b, loc, c));
    int64_t d = reduction[0];
    auto loop = scf::ForOp::create(
        b, loc, lane, arith::ConstantIndexOp::create(b, loc, ranges[d]),
        arith::ConstantIndexOp::create(b, loc, lanes), neutrals);
    {
      OpBuilder::InsertionGuard loopGuard(b);
      b.setInsertionPointToStart(loop.getBody());
      ivs[d] = loop.getInductionVar();
      scf::YieldOp::create(b, loc, payload(loop.getRegionIterArgs()));
    }
    ivs[d] = {};
    SmallVector<Value> partial(loop.getResults());
    for (int64_t offset = lanes / 2; offset > 0; offset /= 2)
      for (auto [value, c] : llvm::zip(partial, *combiners)) {
        Value other = gpu::ShuffleOp::create(b, loc, value, offset, lanes,
                                             gpu::ShuffleMode::XOR)
                          .getShuffleResult();
        value = combineWith(b, loc, c, value, other);
      }
    Value first = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, lane,
        arith::ConstantIndexOp::create(b, loc, 0));
    auto store = scf::IfOp::create(b, loc, first, /*withElse=*/false);
    b.setInsertionPointToStart(store.thenBlock());
    for (auto [output, value, c] :
         llvm::zip(op.getDpsInitsMutable(), partial, *combiners))
      results.push_back(combineWith(b, loc, c, loadInit(output), value));
  } else if (slices > 1) {
    // This slice's chunk of the linearized reduction space, in order.
    auto [first, last] = sliceChunk();
    auto loop = scf::ForOp::create(b, loc, first, last,
                                   arith::ConstantIndexOp::create(b, loc, 1),
                                   inits);
    b.setInsertionPointToStart(loop.getBody());
    delinearize(b, loc, loop.getInductionVar(), reduction, ranges, ivs);
    scf::YieldOp::create(b, loc, payload(loop.getRegionIterArgs()));
    b.setInsertionPointAfter(loop);
    for (auto [partial, result] : llvm::zip(partials, loop.getResults()))
      memref::StoreOp::create(b, loc, result, partial,
                              ValueRange{slice, point});
    for (int64_t d : reduction)
      ivs[d] = {};
    // The partials into the outputs, one work-item a point.
    Operation *parent = b.getInsertionBlock()->getParentOp();
    auto partialLaunch = isa<gpu::LaunchOp>(parent)
                             ? cast<gpu::LaunchOp>(parent)
                             : parent->getParentOfType<gpu::LaunchOp>();
    b.setInsertionPointAfter(partialLaunch);
    Value p = openLaunch(b, loc, points);
    delinearizePoint(p);
    SmallVector<Value> outs;
    for (OpOperand &output : op.getDpsInitsMutable())
      outs.push_back(loadInit(output));
    auto sum = scf::ForOp::create(b, loc,
                                  arith::ConstantIndexOp::create(b, loc, 0),
                                  arith::ConstantIndexOp::create(b, loc, slices),
                                  arith::ConstantIndexOp::create(b, loc, 1),
                                  outs);
    {
      OpBuilder::InsertionGuard sumGuard(b);
      b.setInsertionPointToStart(sum.getBody());
      SmallVector<Value> next;
      for (auto [partial, acc] : llvm::zip(partials, sum.getRegionIterArgs()))
        next.push_back(arith::AddFOp::create(
            b, loc, acc,
            memref::LoadOp::create(b, loc, partial,
                                   ValueRange{sum.getInductionVar(), p})));
      scf::YieldOp::create(b, loc, next);
    }
    results = SmallVector<Value>(sum.getResults());
  } else if (reduction.empty()) {
    results = payload(inits);
  } else {
    // Reduction dimensions as a loop nest carrying the accumulators.
    std::function<SmallVector<Value>(unsigned, ValueRange)> nest =
        [&](unsigned level, ValueRange accs) -> SmallVector<Value> {
      if (level == reduction.size())
        return payload(accs);
      int64_t d = reduction[level];
      auto loop = scf::ForOp::create(
          b, loc, arith::ConstantIndexOp::create(b, loc, 0),
          arith::ConstantIndexOp::create(b, loc, ranges[d]),
          arith::ConstantIndexOp::create(b, loc, 1), accs);
      OpBuilder::InsertionGuard loopGuard(b);
      b.setInsertionPointToStart(loop.getBody());
      ivs[d] = loop.getInductionVar();
      SmallVector<Value> inner = nest(level + 1, loop.getRegionIterArgs());
      scf::YieldOp::create(b, loc, inner);
      return SmallVector<Value>(loop.getResults());
    };
    results = nest(0, inits);
    for (int64_t d : reduction)
      ivs[d] = {};
  }
  for (auto [output, result] :
       llvm::zip(op.getDpsInitsMutable(), results)) {
    SmallVector<Value> idx = indices(&output);
    memref::StoreOp::create(b, loc, result, base(&output), idx);
  }
  return success();
}

/// True for ops the host runs: allocations, views, constants and launches.
/// Everything else, scalar arithmetic included (the learning-rate
/// schedule), runs on the device, so a runtime only allocates and launches.
/// True if `op` makes a TMA tensor map of a buffer on the host (Hopper's
/// GEMM kernel, LinalgToNVGPU), or casts one to the pointer a kernel takes:
/// a kernel reads the buffer through its result.
static bool isTensorMap(Operation *op) {
  if (isa<nvgpu::TmaCreateDescriptorOp>(op))
    return true;
  auto cast = dyn_cast<UnrealizedConversionCastOp>(op);
  return cast && cast->getNumOperands() == 1 &&
         isa<nvgpu::TensorMapDescriptorType>(cast->getOperand(0).getType());
}

static bool staysOnHost(Operation *op) {
  return isa<memref::AllocOp, memref::DeallocOp, memref::CollapseShapeOp,
             memref::ExpandShapeOp, memref::SubViewOp, memref::CastOp,
             memref::ReinterpretCastOp, memref::MemorySpaceCastOp,
             memref::GetGlobalOp, arith::ConstantOp, gpu::LaunchOp,
             gpu::LaunchFuncOp, func::ReturnOp>(op) ||
         isTensorMap(op);
}

/// Frees every allocation of the (straight-line) host function after the
/// last op that uses it or a view of it, unless the function returns it: a
/// training step allocates far more than a device holds if nothing is
/// reused.
static void freeAfterLastUse(Block &entry) {
  OpBuilder b(entry.getParentOp()->getContext());
  DenseMap<Operation *, int64_t> position;
  int64_t next = 0;
  for (Operation &op : entry)
    position[&op] = next++;
  for (Operation &op : llvm::make_early_inc_range(entry)) {
    auto alloc = dyn_cast<memref::AllocOp>(op);
    if (!alloc)
      continue;
    SmallVector<Value> aliases = {alloc.getResult()};
    Operation *last = alloc;
    bool returned = false;
    for (size_t i = 0; i < aliases.size(); ++i)
      for (Operation *user : aliases[i].getUsers()) {
        Operation *top = entry.findAncestorOpInBlock(*user);
        if (!top)
          continue;
        if (isa<func::ReturnOp>(top))
          returned = true;
        if ((isa<memref::CollapseShapeOp, memref::ExpandShapeOp,
                 memref::SubViewOp, memref::CastOp, memref::ReinterpretCastOp,
                 memref::MemorySpaceCastOp>(user) ||
             isTensorMap(user)) &&
            user->getBlock() == &entry)
          aliases.push_back(user->getResult(0));
        if (position.lookup(top) > position.lookup(last))
          last = top;
      }
    if (returned)
      continue;
    b.setInsertionPointAfter(last);
    memref::DeallocOp::create(b, alloc.getLoc(), alloc.getResult());
  }
}

/// Column loops (see `launchColumnLoop`) of fewer iterations keep one
/// work-item a column.
constexpr int64_t kSplitIterations = 4096;

/// The fewest iterations a chunk of a split column loop runs: its
/// work-items also zero their column of the chunk's workspace.
constexpr int64_t kMinChunkIterations = 256;

/// The most elements a split column loop's workspace may hold (64 MiB of
/// f32): a large vocabulary keeps the sequential loop.
constexpr int64_t kMaxWorkspaceElements = int64_t(1) << 24;

/// The load and store of an accumulation `M[i..., d] = M[i..., d] + x` that
/// is the only store of the column loop `outer`'s inner loop `inner` and
/// the only access to M's buffer in `outer`, M a static allocation: then
/// the loop's chunks may accumulate into zeroed copies of M that are added
/// to it afterwards.
static std::optional<std::pair<memref::LoadOp, memref::StoreOp>>
getAccumulation(scf::ForOp outer, scf::ForOp inner) {
  SmallVector<memref::StoreOp> stores(
      inner.getBody()->getOps<memref::StoreOp>());
  if (stores.size() != 1)
    return std::nullopt;
  memref::StoreOp store = stores.front();
  Value target = store.getMemRef();
  auto type = cast<MemRefType>(target.getType());
  auto add = store.getValue().getDefiningOp<arith::AddFOp>();
  if (!add || !target.getDefiningOp<memref::AllocOp>() ||
      !type.hasStaticShape() || !type.getLayout().isIdentity())
    return std::nullopt;
  memref::LoadOp load;
  for (Value operand : add->getOperands())
    if (auto candidate = operand.getDefiningOp<memref::LoadOp>())
      if (candidate.getMemRef() == target &&
          llvm::equal(candidate.getIndices(), store.getIndices()))
        load = candidate;
  if (!load || !load->hasOneUse())
    return std::nullopt;
  WalkResult walk = outer.walk([&](Operation *op) {
    if (op == load || op == store)
      return WalkResult::advance();
    for (Value operand : op->getOperands())
      if (isa<MemRefType>(operand.getType()) && rootOf(operand) == target)
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return std::nullopt;
  return std::make_pair(load, store);
}

/// A long column loop that accumulates (see `getAccumulation`) runs as
/// `chunks` contiguous chunks of its iterations times D columns, each
/// work-item accumulating its chunk's iterations in order into its column
/// of a zeroed workspace slice [chunk][M's shape with D columns]; a second
/// launch then adds the slices to M in chunk order, one work-item an
/// element. Sums are formed chunk by chunk, not in pure iteration order,
/// but the order is fixed: the same bits every run.
static void launchColumnChunks(OpBuilder &b, scf::ForOp outer, scf::ForOp inner,
                               memref::LoadOp load, memref::StoreOp store,
                               int64_t chunks) {
  Location loc = outer.getLoc();
  int64_t lower = *getConstantIntValue(outer.getLowerBound());
  int64_t upper = *getConstantIntValue(outer.getUpperBound());
  int64_t step = *getConstantIntValue(outer.getStep());
  int64_t columns = *getConstantIntValue(inner.getUpperBound());
  int64_t iterations = (upper - lower + step - 1) / step;
  int64_t chunk = (iterations + chunks - 1) / chunks;
  Value target = store.getMemRef();
  auto type = cast<MemRefType>(target.getType());
  SmallVector<int64_t> rows(type.getShape().drop_back());
  SmallVector<int64_t> shape = {chunks};
  llvm::append_range(shape, rows);
  shape.push_back(columns);

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(outer);
  Value workspace = memref::AllocOp::create(
      b, loc, MemRefType::get(shape, type.getElementType()));
  Value id = openLaunch(b, loc, chunks * columns);
  auto launch = cast<gpu::LaunchOp>(id.getParentBlock()->getParentOp());
  Value columnCount = arith::ConstantIndexOp::create(b, loc, columns);
  Value slot = arith::DivUIOp::create(b, loc, id, columnCount);
  Value column = arith::RemUIOp::create(b, loc, id, columnCount);
  // `M[i..., column]` of this chunk's slice.
  auto slotIndices = [&](ValueRange leading) {
    SmallVector<Value> indices = {slot};
    llvm::append_range(indices, leading);
    indices.push_back(column);
    return indices;
  };
  Value zero = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type.getElementType(), 0.0));
  SmallVector<Value> starts, ends, ones;
  for (int64_t size : rows) {
    starts.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    ends.push_back(arith::ConstantIndexOp::create(b, loc, size));
    ones.push_back(arith::ConstantIndexOp::create(b, loc, 1));
  }
  scf::buildLoopNest(b, loc, starts, ends, ones,
                     [&](OpBuilder &nb, Location l, ValueRange leading) {
                       memref::StoreOp::create(nb, l, zero, workspace,
                                               slotIndices(leading));
                     });
  Value begin = arith::AddIOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, lower),
      arith::MulIOp::create(
          b, loc, slot, arith::ConstantIndexOp::create(b, loc, chunk * step)));
  Value end = arith::MinUIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc, begin, arith::ConstantIndexOp::create(b, loc, chunk * step)),
      arith::ConstantIndexOp::create(b, loc, upper));
  auto loop = scf::ForOp::create(b, loc, begin, end,
                                 arith::ConstantIndexOp::create(b, loc, step));
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    IRMapping mapping;
    mapping.map(outer.getInductionVar(), loop.getInductionVar());
    mapping.map(inner.getInductionVar(), column);
    for (Operation &op : outer.getBody()->without_terminator())
      if (&op != inner)
        b.clone(op, mapping);
    for (Operation &op : inner.getBody()->without_terminator()) {
      if (&op != load && &op != store) {
        b.clone(op, mapping);
        continue;
      }
      SmallVector<Value> leading;
      for (Value index : store.getIndices().drop_back())
        leading.push_back(mapping.lookupOrDefault(index));
      if (&op == load)
        mapping.map(
            load.getResult(),
            memref::LoadOp::create(b, loc, workspace, slotIndices(leading)));
      else
        memref::StoreOp::create(b, loc,
                                mapping.lookupOrDefault(store.getValue()),
                                workspace, slotIndices(leading));
    }
  }

  // The slices into M in chunk order, one work-item an element.
  b.setInsertionPointAfter(launch);
  int64_t elements = columns;
  for (int64_t size : rows)
    elements *= size;
  Value rest = openLaunch(b, loc, elements);
  SmallVector<Value> indices(shape.size() - 1);
  for (int64_t d = indices.size() - 1; d >= 0; --d) {
    Value size = arith::ConstantIndexOp::create(b, loc, shape[d + 1]);
    indices[d] = arith::RemUIOp::create(b, loc, rest, size);
    rest = arith::DivUIOp::create(b, loc, rest, size);
  }
  auto sum = scf::ForOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, 0),
      arith::ConstantIndexOp::create(b, loc, chunks),
      arith::ConstantIndexOp::create(b, loc, 1),
      ValueRange{memref::LoadOp::create(b, loc, target, indices)});
  {
    OpBuilder::InsertionGuard sumGuard(b);
    b.setInsertionPointToStart(sum.getBody());
    SmallVector<Value> slotIndex = {sum.getInductionVar()};
    llvm::append_range(slotIndex, indices);
    Value partial = memref::LoadOp::create(b, loc, workspace, slotIndex);
    scf::YieldOp::create(b, loc,
                         combineWith(b, loc, store.getValue().getDefiningOp(),
                                     sum.getRegionIterArgs()[0], partial));
  }
  memref::StoreOp::create(b, loc, sum.getResult(0), target, indices);
  outer.erase();
}

/// Key tiles of the sorted scatter-add's rank pass (`launchSortedRows`):
/// at most this many partial counts a token, each over ceil(T / tiles)
/// keys.
constexpr int64_t kRankTiles = 64;

/// Tokens a work-item of the sorted scatter-add loads before adding them
/// in order along a row's whole blocks, and along its tail: loads in
/// flight along a long row (the longest row's chain of loads bounds the
/// kernel), few wasted ones on a short row.
constexpr int64_t kSegmentUnroll = 32;
constexpr int64_t kSegmentTail = 8;

/// Columns a work-item of the sorted scatter-add sums (c + k D / 4), where
/// they divide D: more loads in flight a work-item, a quarter as many
/// rounds of workgroups.
constexpr int64_t kSegmentColumns = 2;

/// The add of an accumulation (`getAccumulation`) and its other operand,
/// if `launchSortedRows` can lower it: M of rank 2 indexed [row, d] with
/// `row` computed before the inner loop, and the sum used only by the
/// store.
static std::optional<std::pair<arith::AddFOp, Value>>
getSortableAccumulation(scf::ForOp outer, scf::ForOp inner, memref::LoadOp load,
                        memref::StoreOp store) {
  auto type = cast<MemRefType>(store.getMemRef().getType());
  auto add = store.getValue().getDefiningOp<arith::AddFOp>();
  std::optional<int64_t> lower = getConstantIntValue(outer.getLowerBound());
  std::optional<int64_t> upper = getConstantIntValue(outer.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(outer.getStep());
  if (type.getRank() != 2 || !add || !add->hasOneUse() ||
      add->getBlock() != inner.getBody() || !lower || !upper || !step ||
      *step <= 0 || *upper <= *lower ||
      (*upper - *lower) / *step >= std::numeric_limits<int32_t>::max() ||
      type.getDimSize(0) >= std::numeric_limits<int32_t>::max() ||
      !inner.isDefinedOutsideOfLoop(store.getIndices().front()))
    return std::nullopt;
  Value x = add.getLhs() == load.getResult() ? add.getRhs() : add.getLhs();
  if (x == load.getResult() ||
      (add.getLhs() != load.getResult() && add.getRhs() != load.getResult()))
    return std::nullopt;
  return std::make_pair(add, x);
}

/// The embedding gradient at a large vocabulary (`M[row(t), d] += x(t, d)`
/// over T tokens, M [R, D] too large for `launchColumnChunks`' copies):
/// the tokens are sorted by (row, token) and each touched row's D
/// work-items add its tokens in ascending order, so every element gets the
/// sequential loop's sum, in parallel over rows and columns:
///  1. keys[j] = row(t_j) << B | j, B = ceil(log2 T), the row R where
///     row(t_j) is outside M (T work-items);
///  2. for tile k of the keys (at most kRankTiles) and token j, the keys
///     of tile k below key j and those below the next row's first key:
///     counts[0..1][k][j] (tiles x T work-items);
///  3. their sums, key j's position in the sorted order and the end of
///     its row's run of positions: sorted[position] = keys[j],
///     ends[position] = end (T work-items);
///  4. a work-item per (position, column): at the first position of a
///     row, it loads M[row, d], adds x at the row's tokens in order
///     (kSegmentUnroll keys and loads at a time, then kSegmentTail with
///     selects dropping those past the end) and stores the sum (T x D
///     work-items; the others return at once).
/// Integers only before step 4 and one fixed order in it: the same bits
/// every run, those of the sequential loop. Rows without tokens are not
/// touched. The rank pass compares every pair of keys, T / tiles
/// comparisons a work-item, free of atomics and of scans over the
/// vocabulary.
static void launchSortedRows(OpBuilder &b, scf::ForOp outer, scf::ForOp inner,
                             memref::LoadOp load, memref::StoreOp store,
                             arith::AddFOp add, Value x) {
  Location loc = outer.getLoc();
  int64_t lower = *getConstantIntValue(outer.getLowerBound());
  int64_t upper = *getConstantIntValue(outer.getUpperBound());
  int64_t step = *getConstantIntValue(outer.getStep());
  int64_t columns = *getConstantIntValue(inner.getUpperBound());
  int64_t tokens = (upper - lower + step - 1) / step;
  Value target = store.getMemRef();
  int64_t vocab = cast<MemRefType>(target.getType()).getDimSize(0);
  Value rowIndex = store.getIndices().front();
  int64_t tiles =
      std::clamp<int64_t>((tokens + kThreads - 1) / kThreads, 1, kRankTiles);
  int64_t tile = (tokens + tiles - 1) / tiles;
  unsigned bits = llvm::Log2_64_Ceil(tokens);
  // 32-bit keys where (R + 1) << B, the bound of the largest, fits.
  bool narrow = ((vocab + 1) << bits) <= std::numeric_limits<uint32_t>::max();
  IntegerType keyType = b.getIntegerType(narrow ? 32 : 64);
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, keyType, v);
  };
  auto castTo = [&](Value v, Type type) -> Value {
    return arith::IndexCastUIOp::create(b, loc, type, v);
  };
  auto rowOf = [&](Value key) -> Value {
    return arith::ShRUIOp::create(b, loc, key, constant(bits));
  };
  auto tokenOf = [&](Value key) -> Value {
    return castTo(
        arith::AndIOp::create(b, loc, key, constant((int64_t(1) << bits) - 1)),
        b.getIndexType());
  };
  // The ops before the inner loop at iteration j (token lower + j * step).
  auto clonePrefix = [&](IRMapping &mapping, Value j) {
    mapping.map(
        outer.getInductionVar(),
        arith::AddIOp::create(b, loc, index(lower),
                              arith::MulIOp::create(b, loc, j, index(step))));
    for (Operation &op : outer.getBody()->without_terminator())
      if (&op != inner)
        b.clone(op, mapping);
  };
  auto less = [&](Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  };

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(outer);
  Value keys =
      memref::AllocOp::create(b, loc, MemRefType::get({tokens}, keyType));
  Value counts = memref::AllocOp::create(
      b, loc, MemRefType::get({2, tiles, tokens}, b.getI32Type()));
  Value sorted =
      memref::AllocOp::create(b, loc, MemRefType::get({tokens}, keyType));
  Value ends = memref::AllocOp::create(
      b, loc, MemRefType::get({tokens}, b.getI32Type()));

  // 1. Each token's key.
  {
    OpBuilder::InsertionGuard launchGuard(b);
    Value j = openLaunch(b, loc, tokens);
    IRMapping mapping;
    clonePrefix(mapping, j);
    Value row = mapping.lookupOrDefault(rowIndex);
    row = arith::SelectOp::create(b, loc, less(row, index(vocab)), row,
                                  index(vocab));
    Value key = arith::OrIOp::create(
        b, loc,
        arith::ShLIOp::create(b, loc, castTo(row, keyType), constant(bits)),
        castTo(j, keyType));
    memref::StoreOp::create(b, loc, key, keys, j);
  }

  // 2. Counts over one tile of the keys.
  {
    OpBuilder::InsertionGuard launchGuard(b);
    Value id = openLaunch(b, loc, tiles * tokens);
    Value k = arith::DivUIOp::create(b, loc, id, index(tokens));
    Value j = arith::RemUIOp::create(b, loc, id, index(tokens));
    Value key = memref::LoadOp::create(b, loc, keys, j);
    // The next row's first possible key.
    Value next = arith::ShLIOp::create(
        b, loc, arith::AddIOp::create(b, loc, rowOf(key), constant(1)),
        constant(bits));
    Value first = arith::MulIOp::create(b, loc, k, index(tile));
    Value last = arith::MinUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, first, index(tile)),
        index(tokens));
    Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
    auto loop = scf::ForOp::create(b, loc, first, last, index(1),
                                   ValueRange{zero, zero});
    {
      OpBuilder::InsertionGuard loopGuard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value other =
          memref::LoadOp::create(b, loc, keys, loop.getInductionVar());
      SmallVector<Value> flags = {less(other, key), less(other, next)};
      SmallVector<Value> sums;
      for (auto [count, flag] : llvm::zip(loop.getRegionIterArgs(), flags))
        sums.push_back(arith::AddIOp::create(
            b, loc, count,
            arith::ExtUIOp::create(b, loc, b.getI32Type(), flag)));
      scf::YieldOp::create(b, loc, sums);
    }
    for (auto [c, count] : llvm::enumerate(loop.getResults()))
      memref::StoreOp::create(b, loc, count, counts,
                              ValueRange{index(c), k, j});
  }

  // 3. Each key at its position in the sorted order.
  {
    OpBuilder::InsertionGuard launchGuard(b);
    Value j = openLaunch(b, loc, tokens);
    Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
    auto loop = scf::ForOp::create(b, loc, index(0), index(tiles), index(1),
                                   ValueRange{zero, zero});
    {
      OpBuilder::InsertionGuard loopGuard(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> sums;
      for (auto [c, count] : llvm::enumerate(loop.getRegionIterArgs()))
        sums.push_back(arith::AddIOp::create(
            b, loc, count,
            memref::LoadOp::create(
                b, loc, counts,
                ValueRange{index(c), loop.getInductionVar(), j})));
      scf::YieldOp::create(b, loc, sums);
    }
    Value position = castTo(loop.getResult(0), b.getIndexType());
    memref::StoreOp::create(b, loc, memref::LoadOp::create(b, loc, keys, j),
                            sorted, position);
    memref::StoreOp::create(b, loc, loop.getResult(1), ends, position);
  }

  // 4. The work-items of a row's first position add the row's tokens in
  // order, kSegmentColumns columns each (lanes at consecutive columns).
  {
    OpBuilder::InsertionGuard launchGuard(b);
    int64_t width = columns % kSegmentColumns == 0 ? kSegmentColumns : 1;
    int64_t stride = columns / width;
    Value id = openLaunch(b, loc, tokens * stride);
    Value p = arith::DivUIOp::create(b, loc, id, index(stride));
    Value c = arith::RemUIOp::create(b, loc, id, index(stride));
    Value row = rowOf(memref::LoadOp::create(b, loc, sorted, p));
    Value atStart =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, p, index(0));
    Value before = rowOf(memref::LoadOp::create(
        b, loc, sorted,
        arith::SelectOp::create(b, loc, atStart, p,
                                arith::SubIOp::create(b, loc, p, index(1)))
            .getResult()));
    Value first = arith::AndIOp::create(
        b, loc,
        arith::OrIOp::create(b, loc, atStart,
                             arith::CmpIOp::create(b, loc,
                                                   arith::CmpIPredicate::ne,
                                                   before, row)),
        less(row, constant(vocab)));
    auto ifFirst = scf::IfOp::create(b, loc, first, /*withElse=*/false);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    Value r = castTo(row, b.getIndexType());
    SmallVector<Value> cols, init;
    for (int64_t k = 0; k < width; ++k) {
      cols.push_back(arith::AddIOp::create(b, loc, c, index(k * stride)));
      init.push_back(
          memref::LoadOp::create(b, loc, target, ValueRange{r, cols.back()}));
    }
    Value end =
        castTo(memref::LoadOp::create(b, loc, ends, p), b.getIndexType());
    Value back = arith::SubIOp::create(b, loc, end, index(1));
    // Adds the terms at positions [q0, q0 + count) to `accs` in order;
    // with `masked`, those at or past the end (clamped loads) are dropped.
    auto addBlock = [&](Value q0, int64_t count, bool masked, ValueRange accs) {
      SmallVector<SmallVector<Value>> terms;
      SmallVector<Value> valid;
      for (int64_t u = 0; u < count; ++u) {
        Value q = arith::AddIOp::create(b, loc, q0, index(u));
        valid.push_back(less(q, end));
        Value key = memref::LoadOp::create(
            b, loc, sorted,
            ValueRange{masked ? arith::MinUIOp::create(b, loc, q, back) : q});
        IRMapping mapping;
        clonePrefix(mapping, tokenOf(key));
        terms.emplace_back();
        for (Value col : cols) {
          mapping.map(inner.getInductionVar(), col);
          for (Operation &op : inner.getBody()->without_terminator())
            if (&op != load && &op != store && &op != add)
              b.clone(op, mapping);
          terms.back().push_back(mapping.lookupOrDefault(x));
        }
      }
      SmallVector<Value> results(accs);
      for (auto [u, columnTerms] : llvm::enumerate(terms))
        for (auto [acc, term] : llvm::zip(results, columnTerms)) {
          IRMapping mapping;
          mapping.map(load.getResult(), acc);
          mapping.map(x, term);
          Value sum = b.clone(*add, mapping)->getResult(0);
          // A block's first position is always before the end.
          acc = masked && u > 0
                    ? arith::SelectOp::create(b, loc, valid[u], sum, acc)
                          .getResult()
                    : sum;
        }
      return results;
    };
    // Whole blocks of kSegmentUnroll, then the tail kSegmentTail at a time.
    Value whole = arith::AddIOp::create(
        b, loc, p,
        arith::MulIOp::create(b, loc,
                              arith::DivUIOp::create(
                                  b, loc, arith::SubIOp::create(b, loc, end, p),
                                  index(kSegmentUnroll)),
                              index(kSegmentUnroll)));
    auto main =
        scf::ForOp::create(b, loc, p, whole, index(kSegmentUnroll), init);
    {
      OpBuilder::InsertionGuard loopGuard(b);
      b.setInsertionPointToStart(main.getBody());
      scf::YieldOp::create(b, loc,
                           addBlock(main.getInductionVar(), kSegmentUnroll,
                                    /*masked=*/false,
                                    main.getRegionIterArgs()));
    }
    auto tail = scf::ForOp::create(b, loc, whole, end, index(kSegmentTail),
                                   main.getResults());
    {
      OpBuilder::InsertionGuard loopGuard(b);
      b.setInsertionPointToStart(tail.getBody());
      scf::YieldOp::create(b, loc,
                           addBlock(tail.getInductionVar(), kSegmentTail,
                                    /*masked=*/true, tail.getRegionIterArgs()));
    }
    for (auto [col, sum] : llvm::zip(cols, tail.getResults()))
      memref::StoreOp::create(b, loc, sum, target, ValueRange{r, col});
  }
  outer.erase();
}

/// A loop `for t { prefix; for d < D { body } }` whose inner iterations
/// touch memory only at last index `d` (the embedding gradient's
/// scatter-add: dE[id(t), d] += dX[t, d]) runs as D work-items, each
/// looping over t in order: no two work-items touch one element and each
/// element sees the sequential order, so the result is the sequential one.
/// A loop whose body accumulates into a static buffer runs in chunks
/// instead where it is long and the chunks' copies are small
/// (`launchColumnChunks`), else, for M of rank 2, sorted by row
/// (`launchSortedRows`): the one-loop-a-column form remains for the other
/// column loops.
static bool launchColumnLoop(OpBuilder &b, scf::ForOp outer) {
  if (outer.getNumResults() != 0)
    return false;
  Block *body = outer.getBody();
  if (body->getOperations().size() < 2)
    return false;
  auto inner = dyn_cast<scf::ForOp>(*std::prev(body->end(), 2));
  if (!inner || inner.getNumResults() != 0)
    return false;
  std::optional<int64_t> lower = getConstantIntValue(inner.getLowerBound());
  std::optional<int64_t> upper = getConstantIntValue(inner.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(inner.getStep());
  if (!lower || !upper || !step || *lower != 0 || *step != 1)
    return false;
  for (Operation &op : body->without_terminator())
    if (&op != inner && !isPure(&op) && !isa<memref::LoadOp>(op))
      return false;
  Value d = inner.getInductionVar();
  for (Operation &op : inner.getBody()->without_terminator()) {
    if (op.getNumRegions())
      return false;
    ValueRange indices;
    if (auto load = dyn_cast<memref::LoadOp>(op))
      indices = load.getIndices();
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      indices = store.getIndices();
    else if (!isPure(&op))
      return false;
    else
      continue;
    if (indices.empty() || indices.back() != d ||
        llvm::is_contained(indices.drop_back(), d))
      return false;
  }
  std::optional<int64_t> first = getConstantIntValue(outer.getLowerBound());
  std::optional<int64_t> end = getConstantIntValue(outer.getUpperBound());
  std::optional<int64_t> stride = getConstantIntValue(outer.getStep());
  if (first && end && stride && *upper > 0)
    if (auto accumulation = getAccumulation(outer, inner)) {
      auto [load, store] = *accumulation;
      auto type = cast<MemRefType>(store.getMemRef().getType());
      int64_t slice = *upper;
      for (int64_t size : type.getShape().drop_back())
        slice *= size;
      int64_t chunks =
          slice == 0 || *end - *first < kSplitIterations * *stride
              ? 1
              : std::min({kBusyWorkItems / *upper,
                          (*end - *first) / *stride / kMinChunkIterations,
                          kMaxWorkspaceElements / slice});
      if (chunks > 1) {
        launchColumnChunks(b, outer, inner, load, store, chunks);
        return true;
      }
      // Too few tokens to split, or copies of M too large: sorted by row.
      if (auto sortable = getSortableAccumulation(outer, inner, load, store)) {
        launchSortedRows(b, outer, inner, load, store, sortable->first,
                         sortable->second);
        return true;
      }
    }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(outer);
  Value id = openLaunch(b, outer.getLoc(), *upper);
  IRMapping mapping;
  auto loop = cast<scf::ForOp>(b.clone(*outer, mapping));
  auto clonedInner =
      cast<scf::ForOp>(*std::prev(loop.getBody()->end(), 2));
  b.setInsertionPoint(clonedInner);
  IRMapping innerMapping;
  innerMapping.map(clonedInner.getInductionVar(), id);
  for (Operation &op : clonedInner.getBody()->without_terminator())
    b.clone(op, innerMapping);
  clonedInner.erase();
  outer.erase();
  return true;
}

/// A load, or scalar arithmetic other than a constant: what the host
/// leaves to one-work-item launches.
static bool isDeviceScalar(Operation *op) {
  if (isa<memref::LoadOp>(op))
    return true;
  return !staysOnHost(op) && op->getNumRegions() == 0 &&
         isMemoryEffectFree(op) && op->getNumResults() > 0 &&
         llvm::all_of(op->getResultTypes(),
                      [](Type t) { return t.isIntOrIndexOrFloat(); });
}

/// Moves each load or scalar op whose first user is one too right before
/// that user, the last ops first, unless something between writes what it
/// loads: a chain of them spread over the function (the gradient norm's
/// sum, a load and an add after each parameter's sum of squares) then runs
/// in one launch instead of one a link.
static void sinkScalarChains(Block &entry) {
  SmallVector<Operation *> ops;
  for (Operation &op : entry)
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops)) {
    if (!isDeviceScalar(op))
      continue;
    Operation *first = nullptr;
    for (Operation *user : op->getUsers()) {
      Operation *top = entry.findAncestorOpInBlock(*user);
      if (top && (!first || top->isBeforeInBlock(first)))
        first = top;
    }
    if (!first || !isDeviceScalar(first) || first == op->getNextNode())
      continue;
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      Value root = rootOf(load.getMemRef());
      bool written = false;
      for (Operation *x = op->getNextNode(); x != first && !written;
           x = x->getNextNode())
        written = !touchesNoMemory(x) && accessOf(x).writes.contains(root);
      if (written)
        continue;
    }
    op->moveBefore(first);
  }
}

namespace {

struct ConvertLinalgToGPULaunchPass
    : mxfp4::impl::ConvertLinalgToGPULaunchPassBase<
          ConvertLinalgToGPULaunchPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    IRRewriter rewriter(func.getContext());
    Block &entry = func.getBody().front();

    // Copies and named ops become linalg.generic first.
    for (Operation &op : llvm::make_early_inc_range(entry)) {
      if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        rewriter.setInsertionPoint(copy);
        auto linalgCopy = linalg::CopyOp::create(
            rewriter, copy.getLoc(), copy.getSource(), copy.getTarget());
        rewriter.eraseOp(copy);
        if (failed(linalg::generalizeNamedOp(rewriter, linalgCopy)))
          return signalPassFailure();
        continue;
      }
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (linalgOp && !isa<linalg::GenericOp>(op)) {
        if (!linalgOp.hasPureBufferSemantics()) {
          op.emitError("generic GPU lowering needs bufferized linalg ops");
          return signalPassFailure();
        }
        rewriter.setInsertionPoint(&op);
        if (failed(linalg::generalizeNamedOp(rewriter, linalgOp))) {
          op.emitError("generic GPU lowering cannot generalize this op");
          return signalPassFailure();
        }
      }
    }

    // A shuffle tree needs a power of two lanes, all in one warp (gfx950's
    // wave is the widest, 64).
    int64_t lanes = warpSize;
    if (lanes < 2 || lanes > 64 || !llvm::isPowerOf2_64(lanes)) {
      func.emitError("convert-linalg-to-gpu-launch: warp-size must be a "
                     "power of two from 2 to 64, got ")
          << lanes;
      return signalPassFailure();
    }
    OpBuilder b(func.getContext());
    ConstantInits constantInits = foldConstantInits(entry);
    if (warpReductions)
      fuseRowGroups(b, entry, constantInits, warpSize);
    for (Operation &op : llvm::make_early_inc_range(entry)) {
      auto generic = dyn_cast<linalg::GenericOp>(op);
      if (!generic)
        continue;
      if (!generic.hasPureBufferSemantics()) {
        op.emitError("generic GPU lowering needs bufferized linalg ops");
        return signalPassFailure();
      }
      if (failed(launchGeneric(b, generic, warpReductions, warpSize,
                                constantInits)))
        return signalPassFailure();
      generic.erase();
    }

    for (auto loop : llvm::make_early_inc_range(entry.getOps<scf::ForOp>()))
      launchColumnLoop(b, loop);
    sinkScalarChains(entry);

    // What is left and touches memory runs on one work-item, and so does
    // scalar arithmetic on values read from memory (the global gradient
    // norm). Such scalars reach later code through a 0-d buffer.
    DenseSet<Operation *> onDevice;
    for (Operation &op : entry) {
      bool fromDevice = llvm::any_of(op.getOperands(), [&](Value v) {
        Operation *def = v.getDefiningOp();
        return def && onDevice.contains(def);
      });
      if (!staysOnHost(&op) ||
          (fromDevice && !isa<gpu::LaunchOp, func::ReturnOp>(op)))
        onDevice.insert(&op);
    }
    // Consecutive device ops share a launch: number the runs.
    DenseMap<Operation *, int64_t> run;
    int64_t runs = 0;
    bool inRun = false;
    for (Operation &op : entry) {
      if (!onDevice.contains(&op)) {
        inRun = false;
        continue;
      }
      if (!inRun)
        ++runs;
      inRun = true;
      run[&op] = runs;
    }
    auto topLevel = [&](Operation *op) { return entry.findAncestorOpInBlock(*op); };
    for (Operation &op : llvm::make_early_inc_range(entry)) {
      if (!onDevice.contains(&op))
        continue;
      for (Value result : op.getResults()) {
        SmallVector<OpOperand *> outside;
        for (OpOperand &use : result.getUses())
          if (run.lookup(topLevel(use.getOwner())) != run[&op])
            outside.push_back(&use);
        if (outside.empty())
          continue;
        if (!result.getType().isIntOrIndexOrFloat()) {
          op.emitError("generic GPU lowering: a non-scalar value computed on "
                       "the device is used on the host");
          return signalPassFailure();
        }
        b.setInsertionPointToStart(&entry);
        Value slot = memref::AllocOp::create(
            b, op.getLoc(), MemRefType::get({}, result.getType()));
        b.setInsertionPointAfter(&op);
        onDevice.insert(
            memref::StoreOp::create(b, op.getLoc(), result, slot, ValueRange{}));
        for (OpOperand *use : outside) {
          if (isa<func::ReturnOp>(use->getOwner())) {
            op.emitError("generic GPU lowering: a scalar computed on the "
                         "device is returned");
            return signalPassFailure();
          }
          b.setInsertionPoint(use->getOwner());
          auto load = memref::LoadOp::create(b, op.getLoc(), slot, ValueRange{});
          use->set(load);
          if (use->getOwner()->getBlock() == &entry)
            onDevice.insert(load);
        }
      }
    }
    // Each run in a one-work-item launch (the slot stores and loads sit
    // next to their runs' ops, so the runs are unchanged).
    SmallVector<SmallVector<Operation *>> groups(1);
    for (Operation &op : entry) {
      if (!onDevice.contains(&op)) {
        if (!groups.back().empty())
          groups.emplace_back();
        continue;
      }
      groups.back().push_back(&op);
    }
    for (ArrayRef<Operation *> group : groups) {
      if (group.empty())
        continue;
      b.setInsertionPoint(group.front());
      openLaunch(b, group.front()->getLoc(), 1, 1);
      Operation *terminator = b.getInsertionBlock()->getTerminator();
      for (Operation *op : group)
        op->moveBefore(terminator);
    }
    freeAfterLastUse(entry);
  }
};

} // namespace
