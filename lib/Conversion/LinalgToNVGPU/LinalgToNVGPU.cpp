//===- LinalgToNVGPU.cpp - linalg contractions on Hopper tensor cores ----===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The training step's high-precision GEMMs (linear layers outside the MXFP4
// recipe's reach, attention's QK^T and PV, and their gradients) are
// linalg.matmul / linalg.batch_matmul on f32 or bf16 buffers, in any of the
// transpositions their indexing maps allow. The generic lowering gives them
// one work-item per output element; here each becomes a `gpu.launch` of a
// 128 x 128 block GEMM on Hopper's warpgroup MMAs (WarpgroupMma.h) with f32
// accumulation: PyTorch's bf16 autocast numerics.
//
// Each operand is first packed, by a launch of its own, into the layout its
// shared-memory stages have: for every 128-row tile and K step of 16, 4 KiB
// of K-major core matrices (no swizzle), rounded to bf16 (ties to even) and
// zero-padded past the operand's rows and K. A packed operand is shared by
// the GEMMs that read an unchanged buffer the same way. The GEMM then needs
// no address arithmetic, bounds checks or transposes in its main loop:
// thread 0 bulk-copies (`cp.async.bulk`, the async proxy wgmma reads) each
// step's A and B stages into one of five buffers, kStages - 1 steps ahead,
// under an mbarrier that their bytes complete; the two warpgroups (64 rows of
// C each) wait on it, issue their MMA and, once the next step's is issued,
// release the buffer on a second mbarrier that thread 0 waits on before
// refilling it. No block barrier is needed after the setup. The copies
// replace the register-staged loads that a K step of 32 and a block barrier
// a step bound at 0.4x cuBLAS; packing costs a pass over each operand, which
// a producer could write directly (not done).
//
// Contractions this kernel does not cover (a non-unit innermost stride, a
// contiguous extent that is not a multiple of 32, an odd N, other element
// types) are left to the generic lowering.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Conversion/Passes.h"

#include "mxfp4/Conversion/GPUCommon/Contraction.h"
#include "mxfp4/Conversion/NVGPUCommon/TensorCore.h"
#include "mxfp4/Conversion/NVGPUCommon/WarpgroupMma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_CONVERTLINALGMATMULTONVGPUPASS
#include "mxfp4/Conversion/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::kernels;
using namespace mlir::mxfp4::sm90;

/// True if `memref` is f32 (or bf16 for inputs) with a static shape and a
/// unit innermost stride.
static bool isSupportedBuffer(Value memref, bool input) {
  auto type = dyn_cast<MemRefType>(memref.getType());
  if (!type || !type.hasStaticShape())
    return false;
  Type e = type.getElementType();
  if (!e.isF32() && !(input && e.isBF16()))
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  return !strides.empty() && strides.back() == 1;
}

/// `op` if this kernel covers it: a matmul or batch_matmul (any
/// transposition) with the batch outermost, C's N innermost and operands
/// that `isSupportedBuffer` accepts.
static std::optional<LinalgContraction> matchContraction(linalg::LinalgOp op) {
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
    return std::nullopt;
  std::optional<LinalgContraction> matched = matchLinalgContraction(op);
  if (!matched)
    return std::nullopt;
  LinalgContraction &c = *matched;
  if (c.a.batchDim > 0 || c.b.batchDim > 0 || c.c.batchDim > 0 ||
      !c.c.kInnermost())
    return std::nullopt;
  if (!isSupportedBuffer(c.a.memref, true) ||
      !isSupportedBuffer(c.b.memref, true) ||
      !isSupportedBuffer(c.c.memref, false))
    return std::nullopt;
  // Every thread's 32 contiguous elements are all in range or all out.
  auto contiguousSize = [&](const ContractionOperand &l, int64_t rows) {
    return l.kInnermost() ? c.k : rows;
  };
  if (contiguousSize(c.a, c.m) % 32 || contiguousSize(c.b, c.n) % 32 || c.n % 2)
    return std::nullopt;
  return matched;
}

/// The ops of `block` that write (or free) the buffer `buffer`, or failure
/// if that is unknown: a write from another block, an op without declared
/// effects, or a view of the buffer (writes through it would not be seen).
static FailureOr<SmallVector<Operation *>> writesIn(Value buffer,
                                                    Block *block) {
  SmallVector<Operation *> writes;
  for (Operation *user : buffer.getUsers()) {
    if (isa<ViewLikeOpInterface>(user) || !isa<MemoryEffectOpInterface>(user))
      return failure();
    if (!hasEffect<MemoryEffects::Write>(user, buffer) &&
        !hasEffect<MemoryEffects::Free>(user, buffer))
      continue;
    Operation *at = block->findAncestorOpInBlock(*user);
    if (!at)
      return failure();
    writes.push_back(at);
  }
  return writes;
}

/// The op of `op`'s block that last wrote `buffer` before `op`, or null if
/// none did or that is unknown.
static Operation *lastWriter(Value buffer, Operation *op) {
  FailureOr<SmallVector<Operation *>> writes = writesIn(buffer, op->getBlock());
  if (failed(writes))
    return nullptr;
  Operation *last = nullptr;
  for (Operation *at : *writes)
    if (at != op && at->isBeforeInBlock(op) &&
        (!last || last->isBeforeInBlock(at)))
      last = at;
  return last;
}

/// True if an op of the block between `from` and `to` may read `buffer`.
static bool readBetween(Value buffer, Operation *from, Operation *to) {
  for (Operation *user : buffer.getUsers()) {
    Operation *at = to->getBlock()->findAncestorOpInBlock(*user);
    if (!at || (from->isBeforeInBlock(at) && at->isBeforeInBlock(to) &&
                (!isa<MemoryEffectOpInterface>(user) ||
                 hasEffect<MemoryEffects::Read>(user, buffer))))
      return true;
  }
  return false;
}

/// True if `op`'s output `out` holds +0.0 when it runs: bufferization
/// gives GEMMs one shared zero buffer and, right before each GEMM, a copy
/// of it into the output (or, for the last, the buffer itself). Erases such
/// a copy, and the fill once nothing else uses its buffer; a fill of the
/// output itself goes too unless something reads it first. The GEMM then
/// writes its output instead of adding to it: a read and a write of C less.
static bool takeZeroInit(Operation *op, Value out) {
  Operation *writer = lastWriter(out, op);
  if (isZeroFill(writer)) {
    // The GEMM writes every element of `out`: the fill is dead unless
    // something reads the zeros first.
    if (!readBetween(out, writer, op))
      writer->erase();
    return true;
  }
  auto copy = dyn_cast_or_null<memref::CopyOp>(writer);
  if (!copy || copy->getNextNode() != op || copy.getTarget() != out)
    return false;
  Value zeros = copy.getSource();
  Operation *fill = lastWriter(zeros, copy);
  if (!isZeroFill(fill))
    return false;
  copy->erase();
  if (llvm::hasSingleElement(zeros.getUsers()) &&
      zeros.getDefiningOp<memref::AllocOp>()) {
    fill->erase();
    zeros.getDefiningOp()->erase();
  }
  return true;
}

/// The packed operand layout: every 128-row tile of an operand, K step by
/// K step of 16, as the wgmma stage it becomes in shared memory (K-major,
/// no swizzle: 16 groups of 8 rows, each two 8 x 8 core matrices of 128
/// contiguous bytes), 4 KiB a stage, zeros past the operand's rows and K:
/// [batch][row tile][K step][group][core matrix][row][8].
constexpr int64_t kPackK = 16;
constexpr int64_t kStageElements = kTile * kPackK;
constexpr int64_t kStageBytes = kStageElements * 2;
/// Stages of A and B in flight: five of 8 KiB, with their barriers, stay
/// under the 48 KiB of static shared memory, and two blocks share an SM.
constexpr int64_t kStages = 5;

/// An operand's packed copy (the layout above) and how it was read.
struct PackedOperand {
  Value memref; // 1-D bf16
  int64_t rowTiles = 0, kSteps = 0;
  bool batched = false;
};

/// Packs `l` (rows x K of `c`, f32 or bf16, any transposition) into a new
/// buffer, rounding f32 to bf16 (ties to even): the GEMM then reads each
/// stage as one bulk copy.
static PackedOperand emitPack(OpBuilder &b, Location loc,
                              const LinalgContraction &c,
                              const ContractionOperand &l, int64_t rows) {
  PackedOperand p;
  p.rowTiles = llvm::divideCeil(rows, kTile);
  p.kSteps = llvm::divideCeil(c.k, kPackK);
  p.batched = l.batchDim >= 0;
  int64_t batches = p.batched ? c.batch : 1;
  int64_t elements = batches * p.rowTiles * p.kSteps * kStageElements;
  p.memref = memref::AllocOp::create(
      b, loc, MemRefType::get({elements}, b.getBF16Type()));
  KernelBuilder kb(b, loc, BoundsMode::guarded);
  OpBuilder::InsertionGuard guard(b);
  auto type = cast<MemRefType>(l.memref.getType());
  auto chunkType = VectorType::get({8}, type.getElementType());
  auto bf16Type = VectorType::get({8}, b.getBF16Type());
  // The 8 elements of `l` from (batch, row, k) along its innermost
  // dimension, as bf16; zeros where out of range (the innermost extent is
  // a multiple of 32: a chunk is all in or all out).
  auto loadChunk = [&](Value batch, Value row, Value k) {
    Value valid = kb.andI(kb.lt(row, rows), kb.lt(k, c.k));
    Value zero = kb.idx(0);
    SmallVector<Value> at(type.getRank());
    if (l.batchDim >= 0)
      at[l.batchDim] = batch;
    at[l.rowDim] = kb.select(valid, row, zero);
    at[l.kDim] = kb.select(valid, k, zero);
    Value v = vector::LoadOp::create(b, loc, chunkType, l.memref, at);
    if (type.getElementType().isF32())
      v = arith::TruncFOp::create(b, loc, bf16Type, v);
    return kb.select(valid, v,
                     arith::ConstantOp::create(b, loc, b.getZeroAttr(bf16Type))
                         .getResult());
  };
  auto store = [&](Value chunk, Value offset) {
    vector::StoreOp::create(b, loc, chunk, p.memref, ValueRange{offset},
                            /*nontemporal=*/false, llvm::MaybeAlign(16));
  };
  if (l.kInnermost()) {
    // A work-item a core-matrix row: 8 consecutive K of one row, read as
    // one chunk, written 16 bytes after the previous work-item's.
    Value id = openItemLaunch(kb, elements / 8, kBlockThreads);
    Value r = kb.rem(id, 8), cm = kb.rem(kb.div(id, 8), 2);
    Value g = kb.rem(kb.div(id, 16), kTile / 8);
    Value stage = kb.div(id, 16 * (kTile / 8));
    Value ks = kb.rem(stage, p.kSteps);
    Value rt = kb.rem(kb.div(stage, p.kSteps), p.rowTiles);
    Value batch = kb.div(stage, p.kSteps * p.rowTiles);
    Value row = kb.add(kb.mul(rt, kTile), kb.add(kb.mul(g, 8), r));
    Value k = kb.add(kb.mul(ks, kPackK), kb.mul(cm, 8));
    store(loadChunk(batch, row, k), kb.mul(id, 8));
    return p;
  }
  // Rows contiguous: a work-item a core matrix, read as 8 chunks of 8 rows
  // (one a K) and transposed in registers.
  Value id = openItemLaunch(kb, elements / 64, kBlockThreads);
  Value cm = kb.rem(id, 2);
  Value g = kb.rem(kb.div(id, 2), kTile / 8);
  Value stage = kb.div(id, 2 * (kTile / 8));
  Value ks = kb.rem(stage, p.kSteps);
  Value rt = kb.rem(kb.div(stage, p.kSteps), p.rowTiles);
  Value batch = kb.div(stage, p.kSteps * p.rowTiles);
  Value row0 = kb.add(kb.mul(rt, kTile), kb.mul(g, 8));
  Value k0 = kb.add(kb.mul(ks, kPackK), kb.mul(cm, 8));
  SmallVector<Value> columns;
  for (int64_t j = 0; j < 8; ++j)
    columns.push_back(loadChunk(batch, row0, kb.add(k0, j)));
  for (int64_t r = 0; r < 8; ++r) {
    SmallVector<Value> line;
    for (int64_t j = 0; j < 8; ++j)
      line.push_back(vector::ExtractOp::create(b, loc, columns[j], r));
    store(vector::FromElementsOp::create(b, loc, bf16Type, line),
          kb.add(kb.mul(id, 64), r * 8));
  }
  return p;
}

namespace {

/// The packed copies of a function's GEMM operands, reused while the source
/// is not written.
class PackedOperands {
public:
  /// `l`'s packed copy for the GEMM `op`, made before `op` unless an
  /// earlier copy of the same reading is still current.
  PackedOperand get(OpBuilder &b, Operation *op, const LinalgContraction &c,
                    const ContractionOperand &l, int64_t rows) {
    Key key{l.memref, l.batchDim, l.rowDim, l.kDim};
    auto it = copies.find(key);
    if (it != copies.end() &&
        unchangedSince(l.memref, it->second.second, op))
      return it->second.first;
    b.setInsertionPoint(op);
    PackedOperand p = emitPack(b, op->getLoc(), c, l, rows);
    copies[key] = {p, p.memref.getDefiningOp()};
    return p;
  }

private:
  /// True if nothing writes `memref` between `made` and `op` (one block;
  /// a buffer with views, or used by ops of unknown effects, never is).
  static bool unchangedSince(Value memref, Operation *made, Operation *op) {
    if (made->getBlock() != op->getBlock() ||
        (!memref.getDefiningOp<memref::AllocOp>() &&
         !isa<BlockArgument>(memref)))
      return false;
    FailureOr<SmallVector<Operation *>> writes =
        writesIn(memref, op->getBlock());
    return succeeded(writes) && llvm::none_of(*writes, [&](Operation *at) {
             return made->isBeforeInBlock(at) && at->isBeforeInBlock(op);
           });
  }

  using Key = std::tuple<Value, int64_t, int64_t, int64_t>;
  DenseMap<Key, std::pair<PackedOperand, Operation *>> copies;
};

/// Emits one contraction's launch.
class GemmEmitter {
public:
  GemmEmitter(OpBuilder &b, Location loc, const LinalgContraction &c,
              PackedOperand a, PackedOperand bOperand)
      : b(b), loc(loc), kb(b, loc, BoundsMode::guarded), c(c), a(a),
        bPacked(bOperand) {}

  void emit();

private:
  /// After `gemm` wrote K splits into `workspace`: adds them to the output.
  void addSplits(gpu::LaunchOp gemm, Value workspace, int64_t splits);
  /// The memref indices of (batch, row, k) of `l`.
  SmallVector<Value> indices(const ContractionOperand &l, Value batch,
                             Value row, Value k);
  /// The global byte address (i64) of stage `step` of row tile `rowTile`
  /// of `p` (whose buffer starts at `base`).
  Value stageAddress(const PackedOperand &p, Value base, Value batch,
                     Value rowTile, Value step);
  /// The wgmma descriptor of the packed stage at element `element` of the
  /// workgroup buffer `stages`.
  Value descriptor(Value stages, Value element);

  OpBuilder &b;
  Location loc;
  KernelBuilder kb;
  const LinalgContraction &c;
  PackedOperand a, bPacked;
};

} // namespace

SmallVector<Value> GemmEmitter::indices(const ContractionOperand &l,
                                        Value batch, Value row, Value k) {
  SmallVector<Value> idx(cast<MemRefType>(l.memref.getType()).getRank());
  if (l.batchDim >= 0)
    idx[l.batchDim] = batch;
  idx[l.rowDim] = row;
  idx[l.kDim] = k;
  return idx;
}

Value GemmEmitter::stageAddress(const PackedOperand &p, Value base,
                                Value batch, Value rowTile, Value step) {
  Value tile = p.batched ? kb.add(kb.mul(batch, p.rowTiles), rowTile) : rowTile;
  Value stage = kb.add(kb.mul(tile, p.kSteps), step);
  Type i64 = b.getI64Type();
  Value bytes = arith::MulIOp::create(
      b, loc, arith::IndexCastUIOp::create(b, loc, i64, stage),
      arith::ConstantIntOp::create(b, loc, i64, kStageBytes));
  return arith::AddIOp::create(b, loc, base, bytes);
}

Value GemmEmitter::descriptor(Value stages, Value element) {
  Value address = sharedAddress(kb, stages, element);
  Type i64 = b.getI64Type();
  Value a64 = arith::IndexCastUIOp::create(b, loc, i64, address);
  auto constant = [&](uint64_t v) {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  };
  Value start = arith::ShRUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, a64, constant(0x3FFFF)),
      constant(4));
  // Core matrices adjacent in K 128 bytes apart, 8-row groups 256.
  uint64_t leading = 128 >> 4, stride = 256 >> 4;
  return arith::OrIOp::create(b, loc, start,
                              constant((leading << 16) | (stride << 32)));
}

/// True if every pair of adjacent columns of `memref` starts 8-byte aligned.
static bool pairsAligned(Value memref) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(cast<MemRefType>(memref.getType())
                 .getStridesAndOffset(strides, offset)))
    return false;
  return offset % 2 == 0 && llvm::all_of(ArrayRef(strides).drop_back(),
                                         [](int64_t s) { return s % 2 == 0; });
}

void GemmEmitter::emit() {
  MLIRContext *ctx = b.getContext();
  int64_t tilesM = a.rowTiles, tilesN = bPacked.rowTiles;
  // Splits count K steps of 32, as the tensor cores' K order has always
  // been cut: a split's range is whole pairs of packed stages.
  auto [splits, stepsPerSplit32] =
      splitK(tilesM * tilesN * c.batch, llvm::divideCeil(c.k, 32),
             2 * kMultiprocessors);
  int64_t stepsPerSplit = 2 * stepsPerSplit32, steps = a.kSteps;
  Value workspace;
  if (splits > 1)
    workspace = memref::AllocOp::create(
        b, loc, MemRefType::get({splits, c.batch, c.m, c.n}, b.getF32Type()));
  Value one = kb.idx(1);
  auto launch = gpu::LaunchOp::create(
      b, loc, kb.idx(tilesM * tilesN), kb.idx(c.batch), kb.idx(splits),
      kb.idx(kBlockThreads), one, one, /*dynamicSharedMemorySize=*/Value(),
      /*asyncTokenType=*/Type(), /*asyncDependencies=*/ValueRange(),
      TypeRange{workgroupBuffer(ctx, kStages * 2 * kStageElements,
                                b.getBF16Type()),
                workgroupBuffer(ctx, 2 * kStages, b.getI64Type())});
  OpBuilder::InsertionGuard guard(b);
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&body);
  one = kb.idx(1);
  Value stages = launch.getWorkgroupAttributions()[0];
  Value barriers = launch.getWorkgroupAttributions()[1];
  // Barriers 0 .. kStages - 1: a buffer's two copies landed ("full");
  // kStages .. 2 kStages - 1: both warpgroups' MMAs read it ("empty").
  // Each completes a phase at two arrivals.
  initBarriers(kb, barriers, SmallVector<int64_t>(2 * kStages, 2));

  Value tid = launch.getThreadIds().x;
  Value batch = launch.getBlockIds().y;
  Value split = launch.getBlockIds().z;
  Value first = kb.mul(split, stepsPerSplit);
  Value last = kb.min(kb.add(first, stepsPerSplit), kb.idx(steps));
  Value rowTileA = kb.div(launch.getBlockIds().x, tilesN);
  Value rowTileB = kb.rem(launch.getBlockIds().x, tilesN);
  Value m0 = kb.mul(rowTileA, kTile), n0 = kb.mul(rowTileB, kTile);
  // Two warpgroups, each 64 rows of C by all 128 columns.
  Value wgRow = kb.mul(kb.div(tid, 128), 64);
  Value aBase = globalByteAddress(kb, a.memref);
  Value bBase = globalByteAddress(kb, bPacked.memref);
  Value producer = kb.lt(tid, 1);

  // Buffer `buffer` (index) gets stage `step` of A and of B.
  auto copyStage = [&](Value buffer, Value step) {
    Value element = kb.mul(buffer, 2 * kStageElements);
    bulkCopyToShared(kb, barriers, buffer, stages, element,
                     stageAddress(a, aBase, batch, rowTileA, step),
                     kStageBytes);
    bulkCopyToShared(kb, barriers, buffer, stages,
                     kb.add(element, kStageElements),
                     stageAddress(bPacked, bBase, batch, rowTileB, step),
                     kStageBytes);
  };
  // Thread 0 fills every buffer, then refills each as both warpgroups
  // release it: kStages - 1 stages ahead of the MMAs.
  kb.when(producer, [&] {
    for (int64_t i = 0; i < kStages; ++i)
      kb.when(kb.lt(kb.add(first, i), last),
              [&] { copyStage(kb.idx(i), kb.add(first, i)); });
  });
  auto parity = [&](Value local) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(),
                                      kb.rem(kb.div(local, kStages), 2));
  };
  auto loop = scf::ForOp::create(b, loc, first, last, one,
                                 ValueRange{zeroAccumulators(kb, kTile)});
  {
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPointToStart(loop.getBody());
    Value s = loop.getInductionVar();
    Value local = arith::SubIOp::create(b, loc, s, first);
    Value buffer = kb.rem(local, kStages);
    waitOnBarrier(kb, barriers, buffer, parity(local));
    Value element = kb.mul(buffer, 2 * kStageElements);
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    Value acc = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, loop.getRegionIterArgs()[0].getType(),
        loop.getRegionIterArgs()[0],
        descriptor(stages, kb.add(element, kb.mul(wgRow, kPackK))),
        descriptor(stages, kb.add(element, kStageElements)),
        NVVM::MMAShapeAttr::get(ctx, 64, kTile, 16), NVVM::WGMMATypes::bf16,
        NVVM::WGMMATypes::bf16, NVVM::WGMMATypes::f32,
        NVVM::WGMMAScaleOut::one, NVVM::WGMMAScaleIn::one,
        NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row, NVVM::MMALayout::col,
        /*satfinite=*/nullptr);
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    // The previous stage's MMAs are done: each warpgroup's leader releases
    // its buffer, and thread 0 refills it kStages stages later.
    waitWarpgroupMmas(kb, /*pending=*/1);
    kb.when(kb.lt(kb.idx(0), local), [&] {
      Value previous = arith::SubIOp::create(b, loc, local, one);
      Value released = kb.rem(previous, kStages);
      kb.when(kb.lt(kb.rem(tid, 128), 1), [&] {
        arriveOnBarrier(kb, barriers, kb.add(released, kStages));
      });
      Value refill = kb.add(kb.add(first, previous), kStages);
      kb.when(kb.andI(producer, kb.lt(refill, last)), [&] {
        waitOnBarrier(kb, barriers, kb.add(released, kStages),
                      parity(previous));
        copyStage(released, refill);
      });
    });
    scf::YieldOp::create(b, loc, acc);
  }
  // The epilogue reads the accumulators.
  waitWarpgroupMmas(kb);
  Value acc = loop.getResult(0);
  llvm::MaybeAlign pairAlign(pairsAligned(c.c.memref) ? 8 : 4);
  forEachWarpgroupAccumulatorPair(
      kb, acc, kTile, kb.add(m0, wgRow), n0,
      [&](Value row, Value col, Value pair) {
        Value valid = kb.andI(kb.lt(row, c.m), kb.lt(col, c.n));
        auto guard = scf::IfOp::create(b, loc, valid, false);
        OpBuilder::InsertionGuard inIf(b);
        b.setInsertionPointToStart(guard.thenBlock());
        if (workspace) {
          vector::StoreOp::create(b, loc, pair, workspace,
                                  ValueRange{split, batch, row, col},
                                  /*nontemporal=*/false, llvm::MaybeAlign(8));
          return;
        }
        SmallVector<Value> at = indices(c.c, batch, row, col);
        auto pairType = VectorType::get({2}, b.getF32Type());
        if (!c.overwrite) {
          Value prior =
              vector::LoadOp::create(b, loc, pairType, c.c.memref, at,
                                     /*nontemporal=*/false, pairAlign);
          pair = arith::AddFOp::create(b, loc, prior, pair);
        }
        vector::StoreOp::create(b, loc, pair, c.c.memref, at,
                                /*nontemporal=*/false, pairAlign);
      });
  if (workspace)
    addSplits(launch, workspace, splits);
}

void GemmEmitter::addSplits(gpu::LaunchOp gemm, Value workspace,
                            int64_t splits) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(gemm);
  // One thread a pair of outputs: C += the splits' partial sums, in order.
  Value id = openItemLaunch(kb, c.batch * c.m * c.n / 2, kBlockThreads);
  Value element = kb.mul(id, 2);
  Value col = kb.rem(element, c.n);
  Value row = kb.rem(kb.div(element, c.n), c.m);
  Value batch = kb.div(element, c.m * c.n);
  SmallVector<Value> at = indices(c.c, batch, row, col);
  auto pairType = VectorType::get({2}, b.getF32Type());
  // A pair starts at an even element: one 8-byte access where C's layout
  // keeps pairs aligned (the workspace's always does), not two.
  llvm::MaybeAlign pairAlign(pairsAligned(c.c.memref) ? 8 : 4);
  Value sum = c.overwrite
                  ? arith::ConstantOp::create(b, loc, b.getZeroAttr(pairType))
                        .getResult()
                  : vector::LoadOp::create(b, loc, pairType, c.c.memref, at,
                                           /*nontemporal=*/false, pairAlign)
                        .getResult();
  for (int64_t s = 0; s < splits; ++s)
    sum = arith::AddFOp::create(
        b, loc, sum,
        vector::LoadOp::create(b, loc, pairType, workspace,
                               ValueRange{kb.idx(s), batch, row, col},
                               /*nontemporal=*/false, llvm::MaybeAlign(8)));
  vector::StoreOp::create(b, loc, sum, c.c.memref, at, /*nontemporal=*/false,
                          pairAlign);
}

namespace {

struct ConvertLinalgMatmulToNVGPUPass
    : mxfp4::impl::ConvertLinalgMatmulToNVGPUPassBase<
          ConvertLinalgMatmulToNVGPUPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, LinalgContraction>> found;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        return;
      if (std::optional<LinalgContraction> c = matchContraction(op))
        found.push_back({op, *c});
    });
    OpBuilder b(&getContext());
    PackedOperands packed;
    for (auto &[op, contraction] : found) {
      contraction.overwrite = takeZeroInit(op, contraction.c.memref);
      PackedOperand a =
          packed.get(b, op, contraction, contraction.a, contraction.m);
      PackedOperand bOperand =
          packed.get(b, op, contraction, contraction.b, contraction.n);
      b.setInsertionPoint(op);
      GemmEmitter(b, op.getLoc(), contraction, a, bOperand).emit();
      op->erase();
    }
  }
};

} // namespace
