//===- LinalgToNVGPU.cpp - linalg contractions on Hopper tensor cores ----===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The training step's high-precision GEMMs (linear layers outside the MXFP4
// recipe's reach, attention's QK^T and PV, and their gradients) are
// linalg.matmul / linalg.batch_matmul on f32 buffers, in any of the
// transpositions their indexing maps allow. The generic lowering gives them
// one work-item per output element; here each becomes a `gpu.launch` of a
// block GEMM on Hopper's warpgroup MMAs (WarpgroupMma.h) with f32
// accumulation, PyTorch's bf16 autocast numerics. f32 operands are first
// rounded (ties to even) into bf16 copies, shared by the GEMMs that read an
// unchanged buffer.
//
// Where TMA tensor maps can describe both bf16 operands (16-byte aligned
// strides and offset), the kernel is warp-specialized: the host makes each
// operand's tensor map (`nvgpu.tma.create.descriptor`, 128-byte swizzle;
// the plan's `tensormap` records, which the runtimes encode), and a block
// of three warpgroups computes a 128 x 256 tile (128 x 128 for N <= 128).
// One thread of the producer warpgroup issues the TMA loads of each K step
// of 64 into a ring of four stages in dynamic shared memory, a `full`
// mbarrier a stage completing when its bytes land; the two consumer
// warpgroups (64 rows each) wait on it, issue four m64nNk16 MMAs reading
// the swizzled tiles (K-major, or M- / N-major for operands whose rows are
// contiguous), keep one group in flight and release the previous stage on
// its `empty` mbarrier. `setmaxnreg` moves registers from the producer to
// the consumers' accumulators. Blocks walk the tiles in groups of 8 along
// M, so that a wave reads each B tile from L2 several times. Where a
// tensor map can describe the f32 C (and K is unsplit), each consumer
// stages its rows 32 columns at a time in two swizzled boxes and one thread
// issues a TMA store of each: the f32 C of a short-K GEMM (the pilot's K =
// 512) is as many bytes to write as its MMAs take time, and the stores then
// drain while the block's next tile multiplies instead of before it starts.
// Where C is added to (the residual sums), a TMA load brings each box of
// the prior C first: the first two go out during the tile's first MMAs, each
// later one as soon as the store two boxes back has read its box, so no
// thread waits on a global load of its own.
//
// Other contractions with unit innermost strides take the register-staged
// kernel: 128 x 128 tiles, every K step of 32 moved 8 bf16 a thread per
// chunk into a two-stage pipeline (K-major; `stmatrix.trans` transposes
// operands whose rows are contiguous) while `wgmma.mma_async` multiplies
// the other stage. Both split K into a workspace when their tiles cannot
// fill the device. Contractions neither covers (a non-unit innermost
// stride, sizes that are not multiples of 32, other element types) are left
// to the generic lowering.
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
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
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

/// A bf16 copy of an f32 buffer, made by one launch (8 elements a thread):
/// the GEMMs read operands at half the bytes (the same rounding as rounding
/// on load), and an activation several GEMMs read is rounded once.
static Value emitBF16Copy(OpBuilder &b, Location loc, Value src) {
  auto type = cast<MemRefType>(src.getType());
  Value dst = memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), b.getBF16Type()));
  KernelBuilder kb(b, loc, BoundsMode::guarded);
  OpBuilder::InsertionGuard guard(b);
  Value id = openItemLaunch(kb, type.getNumElements() / 8, kBlockThreads);
  // The multi-index of element 8 * id; the innermost extent is a multiple
  // of 8 (of 32, for a covered contraction), so the 8 share a row.
  SmallVector<Value> at(type.getRank());
  Value rest = kb.mul(id, 8);
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    at[d] = d ? kb.rem(rest, type.getDimSize(d)) : rest;
    rest = kb.div(rest, type.getDimSize(d));
  }
  Value x = vector::LoadOp::create(b, loc, VectorType::get({8}, b.getF32Type()),
                                   src, at);
  Value h =
      arith::TruncFOp::create(b, loc, VectorType::get({8}, b.getBF16Type()), x);
  vector::StoreOp::create(b, loc, h, dst, at, /*nontemporal=*/false,
                          llvm::MaybeAlign(16));
  return dst;
}

namespace {

/// The bf16 copies of a function's GEMM operands, reused while the source
/// is not written.
class BF16Copies {
public:
  /// The bf16 copy of `memref` for the GEMM `op`, made before `op` unless
  /// an earlier copy is still current.
  Value get(OpBuilder &b, Operation *op, Value memref) {
    auto it = copies.find(memref);
    if (it != copies.end() && unchangedSince(memref, it->second.made, op))
      return it->second.bf16;
    b.setInsertionPoint(op);
    Value bf16 = emitBF16Copy(b, op->getLoc(), memref);
    copies[memref] = {bf16, bf16.getDefiningOp()};
    return bf16;
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

  struct Copy {
    Value bf16;
    Operation *made;
  };
  DenseMap<Value, Copy> copies;
};

} // namespace

/// The memref indices of (batch, row, k) of `l`.
static SmallVector<Value> indices(const ContractionOperand &l, Value batch,
                                  Value row, Value k) {
  SmallVector<Value> idx(cast<MemRefType>(l.memref.getType()).getRank());
  if (l.batchDim >= 0)
    idx[l.batchDim] = batch;
  idx[l.rowDim] = row;
  idx[l.kDim] = k;
  return idx;
}

/// The TMA box coordinates of (batch, row, k) of `l`: its memref indices,
/// innermost first.
static SmallVector<Value> boxCoordinates(const ContractionOperand &l,
                                         Value batch, Value row, Value k) {
  return llvm::to_vector(llvm::reverse(indices(l, batch, row, k)));
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

/// Stores `pair` (vector<2xf32>), columns col and col + 1 of row `row` of
/// batch `batch` of C, into `workspace` slice `split` if there is one, else
/// into C itself (adding to it unless the contraction overwrites).
static void storeOutputPair(OpBuilder &b, Location loc,
                            const LinalgContraction &c, Value workspace,
                            Value split, Value batch, Value row, Value col,
                            Value pair) {
  if (workspace) {
    vector::StoreOp::create(b, loc, pair, workspace,
                            ValueRange{split, batch, row, col},
                            /*nontemporal=*/false, llvm::MaybeAlign(8));
    return;
  }
  llvm::MaybeAlign pairAlign(pairsAligned(c.c.memref) ? 8 : 4);
  SmallVector<Value> at = indices(c.c, batch, row, col);
  auto pairType = VectorType::get({2}, b.getF32Type());
  if (!c.overwrite) {
    Value prior = vector::LoadOp::create(b, loc, pairType, c.c.memref, at,
                                         /*nontemporal=*/false, pairAlign);
    pair = arith::AddFOp::create(b, loc, prior, pair);
  }
  vector::StoreOp::create(b, loc, pair, c.c.memref, at,
                          /*nontemporal=*/false, pairAlign);
}

/// After `gemm` wrote K splits into `workspace`: adds them to the output.
static void addSplits(OpBuilder &b, Location loc, const LinalgContraction &c,
                      gpu::LaunchOp gemm, Value workspace, int64_t splits);

namespace {

/// Emits one contraction's launch.
class GemmEmitter {
public:
  GemmEmitter(OpBuilder &b, Location loc, const LinalgContraction &c)
      : b(b), loc(loc), kb(b, loc, BoundsMode::guarded), c(c) {}

  void emit();

private:
  /// Where chunk `i` (0 or 1) of this thread lies in an operand's stage: the
  /// (row, k) of its first element in the tile; 8 elements along K if the
  /// operand is K-contiguous, else along the rows.
  std::pair<Value, Value> chunkOrigin(bool kContiguous, int64_t i);
  /// This thread's two chunks of `l`'s stage at (row0, k0), zeros outside.
  SmallVector<Value> loadChunks(const ContractionOperand &l, int64_t rows,
                                Value batch, Value row0, Value k0);
  /// Stores chunks from `loadChunks` into `stage` of `tile`.
  void storeChunks(ArrayRef<Value> chunks, bool kContiguous,
                   const CoreMatrixTile &tile, Value stage);

  OpBuilder &b;
  Location loc;
  KernelBuilder kb;
  const LinalgContraction &c;
};

} // namespace

std::pair<Value, Value> GemmEmitter::chunkOrigin(bool kContiguous, int64_t i) {
  // A warp's chunk is 8 rows x 32 K (K-contiguous: four lanes read a row's
  // 64 bytes) or 8 K x 32 rows (four lanes read a K row's 64 bytes, one
  // stmatrix.trans stores them); the 16 chunks of a 128 x 32 stage go two
  // to a warp.
  Value tid = kb.threadId();
  Value lane = kb.rem(tid, 32);
  Value chunk = kb.add(kb.mul(kb.div(tid, 32), 2), i);
  if (kContiguous)
    return {kb.add(kb.mul(chunk, 8), kb.div(lane, 4)),
            kb.mul(kb.rem(lane, 4), 8)};
  return {kb.add(kb.mul(kb.div(chunk, 4), 32), kb.mul(kb.rem(lane, 4), 8)),
          kb.add(kb.mul(kb.rem(chunk, 4), 8), kb.div(lane, 4))};
}

SmallVector<Value> GemmEmitter::loadChunks(const ContractionOperand &l,
                                           int64_t rows, Value batch,
                                           Value row0, Value k0) {
  auto vecType = VectorType::get({8}, b.getBF16Type());
  Value zeros = arith::ConstantOp::create(b, loc, b.getZeroAttr(vecType));
  SmallVector<Value> chunks;
  for (int64_t i = 0; i < 2; ++i) {
    auto [row, k] = chunkOrigin(l.kInnermost(), i);
    row = kb.add(row0, row);
    k = kb.add(k0, k);
    Value valid = kb.andI(kb.lt(row, rows), kb.lt(k, c.k));
    Value zero = kb.idx(0);
    SmallVector<Value> at = indices(l, batch, kb.select(valid, row, zero),
                                    kb.select(valid, k, zero));
    Value v =
        vector::LoadOp::create(b, loc, vecType, l.memref, at,
                               /*nontemporal=*/false, llvm::MaybeAlign(16));
    chunks.push_back(kb.select(valid, v, zeros));
  }
  return chunks;
}

void GemmEmitter::storeChunks(ArrayRef<Value> chunks, bool kContiguous,
                              const CoreMatrixTile &tile, Value stage) {
  for (auto [i, chunk] : llvm::enumerate(chunks)) {
    auto [row, k] = chunkOrigin(kContiguous, i);
    if (kContiguous) {
      storeRowChunk(kb, tile, stage, row, k, chunk);
      continue;
    }
    // The warp's block starts at the rows of lane 0 and the K of lane 0.
    Value rowBase = kb.mul(kb.div(row, 32), 32);
    Value kBase = kb.mul(kb.div(k, 8), 8);
    storeTransposedBlock(kb, tile, stage, rowBase, kBase, chunk);
  }
}

void GemmEmitter::emit() {
  MLIRContext *ctx = b.getContext();
  int64_t tilesM = (c.m + kTile - 1) / kTile,
          tilesN = (c.n + kTile - 1) / kTile;
  int64_t steps = (c.k + kWgStepK - 1) / kWgStepK;
  // Split K when the tiles cannot fill the device: each split sums a range
  // of K steps into a slice of a workspace, and a second launch adds the
  // slices to the output in split order. Two blocks of 256 threads fit an
  // SM.
  auto [splits, stepsPerSplit] =
      splitK(tilesM * tilesN * c.batch, steps, 2 * kMultiprocessors);
  Value workspace;
  if (splits > 1)
    workspace = memref::AllocOp::create(
        b, loc, MemRefType::get({splits, c.batch, c.m, c.n}, b.getF32Type()));
  Value one = kb.idx(1);
  Type bf16 = b.getBF16Type();
  auto launch = gpu::LaunchOp::create(
      b, loc, kb.idx(tilesM * tilesN), kb.idx(c.batch), kb.idx(splits),
      kb.idx(kBlockThreads), one, one, /*dynamicSharedMemorySize=*/Value(),
      /*asyncTokenType=*/Type(), /*asyncDependencies=*/ValueRange(),
      TypeRange{
          workgroupBuffer(ctx, CoreMatrixTile::elements(kTile, 2), bf16),
          workgroupBuffer(ctx, CoreMatrixTile::elements(kTile, 2), bf16)});
  OpBuilder::InsertionGuard guard(b);
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&body);
  CoreMatrixTile aTile{launch.getWorkgroupAttributions()[0], kTile};
  CoreMatrixTile bTile{launch.getWorkgroupAttributions()[1], kTile};

  Value tid = launch.getThreadIds().x;
  Value batch = launch.getBlockIds().y;
  Value split = launch.getBlockIds().z;
  Value firstStep = kb.mul(split, stepsPerSplit);
  Value lastStep = kb.min(kb.add(firstStep, stepsPerSplit), kb.idx(steps));
  Value m0 = kb.mul(kb.div(launch.getBlockIds().x, tilesN), kTile);
  Value n0 = kb.mul(kb.rem(launch.getBlockIds().x, tilesN), kTile);
  // Two warpgroups, each 64 rows of C by all 128 columns.
  Value wgRow = kb.mul(kb.div(tid, 128), 64);

  auto load = [&](Value step) {
    Value k0 = kb.mul(step, kWgStepK);
    SmallVector<Value> chunks = loadChunks(c.a, c.m, batch, m0, k0);
    chunks.append(loadChunks(c.b, c.n, batch, n0, k0));
    return chunks;
  };
  auto store = [&](ArrayRef<Value> chunks, Value stage) {
    storeChunks(chunks.take_front(2), c.a.kInnermost(), aTile, stage);
    storeChunks(chunks.drop_front(2), c.b.kInnermost(), bTile, stage);
    fenceSharedForAsyncProxy(kb);
  };
  // Two stages: the MMAs of one run while the threads store the next, whose
  // global loads were issued a step earlier.
  store(load(firstStep), kb.idx(0));
  gpu::BarrierOp::create(b, loc);
  SmallVector<Value> inits = {zeroAccumulators(kb, kTile)};
  inits.append(load(kb.add(firstStep, 1)));
  auto loop = scf::ForOp::create(b, loc, firstStep, lastStep, one, inits);
  {
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPointToStart(loop.getBody());
    Value s = loop.getInductionVar();
    auto carried = loop.getRegionIterArgs();
    Value stage = kb.rem(arith::SubIOp::create(b, loc, s, firstStep), 2);
    Value acc = issueWarpgroupMmas(kb, aTile, wgRow, bTile, kb.idx(0), kTile,
                                   stage, carried[0]);
    // The last step stores past the end into the idle stage: harmless.
    store(SmallVector<Value>(carried.drop_front()),
          arith::SubIOp::create(b, loc, one, stage));
    SmallVector<Value> results = {acc};
    results.append(load(kb.add(s, 2)));
    waitWarpgroupMmas(kb);
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, results);
  }
  forEachWarpgroupAccumulatorPair(
      kb, loop.getResult(0), kTile, kb.add(m0, wgRow), n0,
      [&](Value row, Value col, Value pair) {
        kb.when(kb.andI(kb.lt(row, c.m), kb.lt(col, c.n)), [&] {
          storeOutputPair(b, loc, c, workspace, split, batch, row, col, pair);
        });
      });
  if (workspace)
    addSplits(b, loc, c, launch, workspace, splits);
}

static void addSplits(OpBuilder &b, Location loc, const LinalgContraction &c,
                      gpu::LaunchOp gemm, Value workspace, int64_t splits) {
  KernelBuilder kb(b, loc, BoundsMode::guarded);
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

//===----------------------------------------------------------------------===//
// The TMA kernel
//===----------------------------------------------------------------------===//

namespace {

/// The warp-specialized GEMM's geometry: a block computes a kTmaTileM x
/// `tileN` tile of C with one producer warpgroup (one thread issues the TMA
/// loads) and two consumer warpgroups (64 rows each, m64nNk16 MMAs), over a
/// ring of `stages` K steps of kSwizzledStepK.
constexpr int64_t kTmaTileM = 128;
constexpr int64_t kTmaThreads = 384;
/// Registers a thread after `setmaxnreg`: the producer gives up what the
/// consumers' accumulators need (128 x 40 + 256 x 232 <= 65,536).
constexpr int64_t kProducerRegisters = 40, kConsumerRegisters = 232;
/// Shared memory a block may use (227 KiB on sm_90).
constexpr int64_t kMaxSharedBytes = 232448;
/// Output tiles a raster group covers along M: a wave of blocks then reads
/// a few A tiles and each B tile several times from L2.
constexpr int64_t kRasterGroupM = 8;

/// C's columns a consumer warpgroup stages for one TMA store: one
/// 128-byte swizzled row of f32 by its 64 rows (8 KiB).
constexpr int64_t kStoreBoxCols = 32;
constexpr int64_t kStoreBoxBytes = 64 * kStoreBoxCols * 4;

/// True if a TMA tensor map can describe `l`'s memref, whose elements are of
/// type `element`: 16-byte aligned strides and offset (CUDA's
/// cuTensorMapEncodeTiled), at most 2^32 elements a dimension.
static bool tensorMapCovers(const ContractionOperand &l, Type element) {
  auto type = cast<MemRefType>(l.memref.getType());
  if (type.getElementType() != element)
    return false;
  int64_t perChunk = 128 / element.getIntOrFloatBitWidth();
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) || offset % perChunk)
    return false;
  for (auto [size, stride] : llvm::zip(type.getShape(), strides))
    if (size > (int64_t(1) << 32) ||
        (stride != 1 && (ShapedType::isDynamic(stride) || stride % perChunk)))
      return false;
  return strides.back() == 1;
}

/// Emits one contraction as the TMA kernel.
class TmaGemmEmitter {
public:
  TmaGemmEmitter(OpBuilder &b, Location loc, const LinalgContraction &c)
      : b(b), loc(loc), kb(b, loc, BoundsMode::guarded), c(c),
        tileN(c.n > 128 ? 256 : 128),
        stageBytes((kTmaTileM + tileN) * kSwizzledStepK * 2),
        storedByTma(tensorMapCovers(c.c, Float32Type::get(b.getContext()))),
        stages(std::min<int64_t>(4, (kMaxSharedBytes - 2048 - stagingBytes()) /
                                        stageBytes)) {}

  /// Emits the GEMM, splitting K where its tiles cannot fill the device
  /// (one block an SM): split s writes its partial sums to slice s of a
  /// workspace, which a second launch adds to the output.
  void emit();

private:
  /// On the host: the tensor map of operand `l` for tiles of `tileRows`
  /// rows, as the generic pointer the kernel takes.
  Value createTensorMap(const ContractionOperand &l, int64_t tileRows);
  /// In the producer: the TMA loads of `l`'s tile at (batch, row0, k0) into
  /// shared byte address `dest`, completing on `barrier`.
  void loadTile(const ContractionOperand &l, Value map, int64_t tileRows,
                Value batch, Value row0, Value k0, Value dest, Value barrier);
  /// The wgmma descriptor of K slice `k` (0 .. 3) of `l`'s rows from
  /// `base` (a 64-row boundary of a stage).
  Value descriptor(const ContractionOperand &l, Value base, int64_t k);
  /// Shared memory for C's TMA stores: two boxes a consumer warpgroup.
  int64_t stagingBytes() const { return storedByTma ? 4 * kStoreBoxBytes : 0; }
  /// Which of a consumer's two staging boxes (at `boxes`) box `box` of a
  /// tile's columns uses, and that staging box's load mbarrier (of the two
  /// at `loaded`).
  Value stagingBox(Value boxes, int64_t box) {
    return kb.add(boxes, (box % 2) * kStoreBoxBytes);
  }
  Value boxBarrier(Value loaded, int64_t box) {
    return kb.add(loaded, (box % 2) * 8);
  }
  /// In a consumer warpgroup's first thread, where C is added to: the TMA
  /// load of box `box` (32 columns from n0 + 32 box, rows row0 .. row0 + 63)
  /// of C's map `cMap` into staging box `box % 2` at `boxes`, completing on
  /// that box's mbarrier in `loaded`.
  void loadBox(int64_t box, Value cMap, Value boxes, Value loaded, Value batch,
               Value row0, Value n0);
  /// In a consumer warpgroup: stores its accumulators `acc` (rows row0 ..
  /// row0 + 63 of C from column n0), plus C's prior values where C is added
  /// to, through its two staging boxes at `boxes`, one TMA store of C's map
  /// `cMap` a box of 32 columns. Adding, the first two boxes' loads are in
  /// flight and `loaded` holds the boxes' two mbarriers.
  void storeByTma(Value acc, Value cMap, Value boxes, Value loaded,
                  Value consumer, Value batch, Value row0, Value n0);

  OpBuilder &b;
  Location loc;
  KernelBuilder kb;
  const LinalgContraction &c;
  int64_t tileN, stageBytes;
  /// A tensor map can describe C: the consumers stage each tile's rows in
  /// shared memory (loaded by TMA first where C is added to) and TMA stores
  /// write them while the next tile's MMAs run (where unsplit).
  bool storedByTma;
  int64_t stages;
};

} // namespace

Value TmaGemmEmitter::createTensorMap(const ContractionOperand &l,
                                      int64_t tileRows) {
  // The box: K-major a tile's rows by one 128-byte K step; M- or N-major
  // 64 rows (128 bytes) by the K step, one box per 64 rows.
  SmallVector<int64_t> box(cast<MemRefType>(l.memref.getType()).getRank(), 1);
  box[l.rowDim] = l.kInnermost() ? tileRows : 64;
  box[l.kDim] = kSwizzledStepK;
  return sm90::createTensorMap(kb, l.memref, box);
}

void TmaGemmEmitter::loadTile(const ContractionOperand &l, Value map,
                              int64_t tileRows, Value batch, Value row0,
                              Value k0, Value dest, Value barrier) {
  int64_t boxes = l.kInnermost() ? 1 : tileRows / 64;
  for (int64_t i = 0; i < boxes; ++i) {
    SmallVector<Value> at = boxCoordinates(l, batch, kb.add(row0, i * 64), k0);
    // An M- or N-major box is 64 rows by the K step: 8 KiB.
    loadTensorTile(kb, map, at, kb.add(dest, i * 64 * kSwizzledStepK * 2),
                   barrier);
  }
}

Value TmaGemmEmitter::descriptor(const ContractionOperand &l, Value base,
                                 int64_t k) {
  if (l.kInnermost())
    return swizzledDescriptor(kb, kb.add(base, k * 32), /*kMajor=*/true);
  // 64-row atoms one box (8 KiB) apart; a k16 slice is 16 rows of 128 bytes.
  return swizzledDescriptor(kb, kb.add(base, k * 2048), /*kMajor=*/false,
                            64 * kSwizzledStepK * 2);
}

void TmaGemmEmitter::loadBox(int64_t box, Value cMap, Value boxes, Value loaded,
                             Value batch, Value row0, Value n0) {
  Value barrier = boxBarrier(loaded, box);
  arriveExpectingBytesAt(kb, barrier, kStoreBoxBytes);
  loadTensorTile(
      kb, cMap,
      boxCoordinates(c.c, batch, row0, kb.add(n0, box * kStoreBoxCols)),
      stagingBox(boxes, box), barrier);
}

void TmaGemmEmitter::storeByTma(Value acc, Value cMap, Value boxes,
                                Value loaded, Value consumer, Value batch,
                                Value row0, Value n0) {
  // Thread 4g + t of warp w holds rows 16w + g and 16w + g + 8 of the
  // warpgroup's 64, columns 8i + 2t and 8i + 2t + 1 of each block i of 8.
  // A box row is 128 bytes whose 16-byte chunks the 128-byte swizzle
  // permutes by the row's index mod 8 (g here): the warp's pairs of a column
  // block then fill all 32 banks twice, without conflicts.
  Value t = kb.rem(kb.threadId(), 128), lane = kb.rem(t, 32);
  Value g = kb.div(lane, 4), quad = kb.rem(lane, 4);
  Value rowBytes = kb.mul(kb.add(kb.mul(kb.div(t, 32), 16), g), 128);
  Value leader = kb.lt(t, 1);
  // Each consumer warpgroup syncs on a named barrier of its own (1 or 2).
  auto syncConsumer = [&] { syncNamedBarrier(kb, kb.add(consumer, 1), 128); };
  bool adds = !c.overwrite;
  int64_t boxCount = tileN / kStoreBoxCols;
  for (int64_t box = 0; box < boxCount; ++box) {
    Value staged = stagingBox(boxes, box);
    if (adds) {
      // The box's load has landed (the mbarrier's completion makes its
      // bytes visible). A box is loaded boxCount / 2 times a tile, an even
      // count, so the parity of its n-th load is that of n in every tile.
      waitAt(kb, boxBarrier(loaded, box), kb.idx((box / 2) % 2));
    } else {
      // The box's last store (two boxes ago, or the previous tile's) has
      // read it; then every thread may overwrite it.
      kb.when(leader, [&] { waitTensorStoreReads(kb, 1); });
      syncConsumer();
    }
    for (int64_t i = 0; i < kStoreBoxCols / 8; ++i) {
      int64_t block = box * (kStoreBoxCols / 8) + i;
      // Chunk 2i + t / 2 of the row, 8 bytes into it for odd t.
      Value chunk =
          arith::XOrIOp::create(b, loc, kb.add(kb.div(quad, 2), 2 * i), g);
      Value at = kb.add(kb.add(staged, rowBytes),
                        kb.add(kb.mul(chunk, 16), kb.mul(kb.rem(quad, 2), 8)));
      for (int64_t half = 0; half < 2; ++half) {
        int64_t e = 4 * block + 2 * half;
        auto pairType = VectorType::get({2}, b.getF32Type());
        Value pair = vector::FromElementsOp::create(
            b, loc, pairType,
            ValueRange{LLVM::ExtractValueOp::create(b, loc, acc, e),
                       LLVM::ExtractValueOp::create(b, loc, acc, e + 1)});
        Value pointer = sharedPointer(kb, kb.add(at, half * 8 * 128));
        // The prior C plus the whole sum, as the register stores add.
        if (adds)
          pair = arith::AddFOp::create(
              b, loc,
              LLVM::LoadOp::create(b, loc, pairType, pointer, /*alignment=*/8),
              pair);
        LLVM::StoreOp::create(b, loc, pair, pointer, /*alignment=*/8);
      }
    }
    // The TMA store (the async proxy) reads what the threads wrote.
    fenceSharedForAsyncProxy(kb);
    syncConsumer();
    kb.when(leader, [&] {
      storeTensorTile(
          kb, cMap,
          boxCoordinates(c.c, batch, row0, kb.add(n0, box * kStoreBoxCols)),
          staged);
      // The load two boxes ahead refills this box once the store has read
      // it (the threads' accesses to it preceded the barrier above).
      if (adds && box + 2 < boxCount) {
        waitTensorStoreReads(kb, 0);
        loadBox(box + 2, cMap, boxes, loaded, batch, row0, n0);
      }
    });
  }
}

void TmaGemmEmitter::emit() {
  int64_t tilesM = (c.m + kTmaTileM - 1) / kTmaTileM,
          tilesN = (c.n + tileN - 1) / tileN;
  int64_t steps = (c.k + kSwizzledStepK - 1) / kSwizzledStepK;
  // Plain variables: the lambdas below capture them, which C++17 does not
  // allow for structured bindings.
  KSplit split = splitK(tilesM * tilesN * c.batch, steps, kMultiprocessors);
  int64_t splits = split.splits, stepsPerSplit = split.stepsPerSplit;
  Value workspace;
  if (splits > 1)
    workspace = memref::AllocOp::create(
        b, loc, MemRefType::get({splits, c.batch, c.m, c.n}, b.getF32Type()));
  // Work items: output tiles of each batch and K split, tiles fastest.
  int64_t items = tilesM * tilesN * c.batch * splits;
  Value aMap = createTensorMap(c.a, kTmaTileM);
  Value bMap = createTensorMap(c.b, tileN);
  bool viaTma = storedByTma && splits == 1;
  Value cMap;
  if (viaTma) {
    SmallVector<int64_t> box(cast<MemRefType>(c.c.memref.getType()).getRank(),
                             1);
    box[c.c.rowDim] = 64;
    box[c.c.kDim] = kStoreBoxCols;
    cMap = sm90::createTensorMap(kb, c.c.memref, box);
  }
  // Tiles start 1024-aligned (the swizzle's period), then C's staging
  // boxes; the barriers follow: the ring's, then where C is added to, one
  // for the loads of each staging box.
  int64_t staging = viaTma ? stagingBytes() : 0;
  bool loadsC = viaTma && !c.overwrite;
  int64_t sharedBytes = 1024 + stages * stageBytes + staging + 2 * stages * 8 +
                        (loadsC ? 4 * 8 : 0);
  int64_t blocks = std::min(items, kMultiprocessors);
  Value one = kb.idx(1);
  auto launch = gpu::LaunchOp::create(
      b, loc, kb.idx(blocks), one, one, kb.idx(kTmaThreads), one, one,
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), sharedBytes));
  OpBuilder::InsertionGuard guard(b);
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&body);

  Value tid = launch.getThreadIds().x;
  Value block = launch.getBlockIds().x;
  /// Work item `w`'s tile origin, batch, split and K steps.
  struct Item {
    Value m0, n0, batch, split, firstStep, lastStep;
  };
  auto itemAt = [&](Value w) {
    Item item;
    Value t = kb.rem(w, tilesM * tilesN);
    Value rest = kb.div(w, tilesM * tilesN);
    item.batch = kb.rem(rest, c.batch);
    item.split = kb.div(rest, c.batch);
    item.firstStep = kb.mul(item.split, stepsPerSplit);
    item.lastStep =
        kb.min(kb.add(item.firstStep, stepsPerSplit), kb.idx(steps));
    // Raster: groups of kRasterGroupM tile rows, M fastest within a group.
    Value group = kb.div(t, kRasterGroupM * tilesN);
    Value groupM0 = kb.mul(group, kRasterGroupM);
    Value groupRows =
        kb.min(kb.idx(kRasterGroupM),
               arith::SubIOp::create(b, loc, kb.idx(tilesM), groupM0));
    Value inGroup = kb.rem(t, kRasterGroupM * tilesN);
    item.m0 = kb.mul(
        kb.add(groupM0, arith::RemUIOp::create(b, loc, inGroup, groupRows)),
        kTmaTileM);
    item.n0 =
        kb.mul(arith::DivUIOp::create(b, loc, inGroup, groupRows), tileN);
    return item;
  };
  /// A loop over this block's work items (persistent: a block takes items
  /// block, block + blocks, ...) carrying the count of K steps the ring has
  /// passed; `body` gets the item and that count and returns the item's
  /// steps.
  auto forEachItem = [&](function_ref<Value(const Item &, Value)> body) {
    auto loop = scf::ForOp::create(b, loc, block, kb.idx(items),
                                   kb.idx(blocks), ValueRange{kb.idx(0)});
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPointToStart(loop.getBody());
    Value passed = loop.getRegionIterArgs()[0];
    Item item = itemAt(loop.getInductionVar());
    Value count = body(item, passed);
    scf::YieldOp::create(b, loc, ValueRange{kb.add(passed, count)});
  };

  Value tiles = swizzleAlignedSharedBase(kb);
  Value boxes = kb.add(tiles, stages * stageBytes);
  Value barriers = kb.add(boxes, staging);
  auto full = [&](Value s) { return kb.add(barriers, kb.mul(s, 8)); };
  auto empty = [&](Value s) {
    return kb.add(barriers, kb.add(kb.mul(s, 8), stages * 8));
  };
  auto aStage = [&](Value s) { return kb.add(tiles, kb.mul(s, stageBytes)); };
  auto bStage = [&](Value s) {
    return kb.add(aStage(s), kTmaTileM * kSwizzledStepK * 2);
  };
  // Consumer `consumer`'s two staging boxes, and their loads' mbarriers.
  auto consumerBoxes = [&](Value consumer) {
    return kb.add(boxes, kb.mul(consumer, 2 * kStoreBoxBytes));
  };
  auto boxLoads = [&](Value consumer) {
    return kb.add(barriers, kb.add(kb.mul(consumer, 16), 2 * stages * 8));
  };
  // A stage fills when the producer's TMA bytes land; it empties when each
  // of the 8 consumer warps has finished the MMAs that read it. A staging
  // box's load completes with its bytes.
  kb.when(kb.lt(tid, 1), [&] {
    for (int64_t s = 0; s < stages; ++s) {
      initBarrierAt(kb, full(kb.idx(s)), 1);
      initBarrierAt(kb, empty(kb.idx(s)), 8);
    }
    if (loadsC)
      for (int64_t consumer = 0; consumer < 2; ++consumer)
        for (int64_t box = 0; box < 2; ++box)
          initBarrierAt(kb, boxBarrier(boxLoads(kb.idx(consumer)), box), 1);
  });
  gpu::BarrierOp::create(b, loc);

  // The ring position of the K step the ring passes as its `g`-th: its
  // stage and the parity of its pass over the ring.
  auto position = [&](Value g) {
    return std::pair<Value, Value>{kb.rem(g, stages),
                                   kb.rem(kb.div(g, stages), 2)};
  };
  auto stepCount = [&](const Item &item) {
    return arith::SubIOp::create(b, loc, item.lastStep, item.firstStep)
        .getResult();
  };
  Value warpgroup = kb.div(tid, 128);
  auto producer = scf::IfOp::create(b, loc, kb.lt(warpgroup, 1),
                                    /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard inProducer(b);
    b.setInsertionPointToStart(producer.thenBlock());
    NVVM::SetMaxRegisterOp::create(b, loc, kProducerRegisters,
                                   NVVM::SetMaxRegisterAction::decrease);
    kb.when(kb.lt(tid, 1), [&] {
      forEachItem([&](const Item &item, Value passed) {
        auto loop =
            scf::ForOp::create(b, loc, item.firstStep, item.lastStep, one);
        OpBuilder::InsertionGuard inLoop(b);
        b.setInsertionPointToStart(loop.getBody());
        Value i = loop.getInductionVar();
        auto [s, parity] = position(
            kb.add(passed, arith::SubIOp::create(b, loc, i, item.firstStep)));
        // The first pass finds every stage empty (the phase before a
        // fresh barrier's first counts as complete).
        waitAt(kb, empty(s), kb.xorI(parity, 1));
        arriveExpectingBytesAt(kb, full(s), stageBytes);
        Value k0 = kb.mul(i, kSwizzledStepK);
        loadTile(c.a, aMap, kTmaTileM, item.batch, item.m0, k0, aStage(s),
                 full(s));
        loadTile(c.b, bMap, tileN, item.batch, item.n0, k0, bStage(s),
                 full(s));
        b.setInsertionPointAfter(loop);
        return stepCount(item);
      });
    });
  }
  b.setInsertionPointToStart(producer.elseBlock());
  NVVM::SetMaxRegisterOp::create(b, loc, kConsumerRegisters,
                                 NVVM::SetMaxRegisterAction::increase);
  Value consumer = arith::SubIOp::create(b, loc, warpgroup, one);
  Value lane = kb.rem(tid, 32);
  forEachItem([&](const Item &item, Value passed) {
    Value row0 = kb.add(item.m0, kb.mul(consumer, 64));
    auto loop = scf::ForOp::create(b, loc, item.firstStep, item.lastStep, one,
                                   ValueRange{zeroAccumulators(kb, tileN)});
    Value count = stepCount(item);
    {
      OpBuilder::InsertionGuard inLoop(b);
      b.setInsertionPointToStart(loop.getBody());
      Value i = loop.getInductionVar();
      Value g = kb.add(passed, arith::SubIOp::create(b, loc, i, item.firstStep));
      auto [s, parity] = position(g);
      waitAt(kb, full(s), parity);
      // This consumer's 64 rows of A: an offset of 64 rows (K-major: 64
      // rows of 128 bytes; M-major: one 8 KiB atom).
      Value aBase = kb.add(aStage(s), kb.mul(consumer, 64 * 128));
      SmallVector<std::pair<Value, Value>> slices;
      for (int64_t k = 0; k < kSwizzledStepK / 16; ++k)
        slices.push_back(
            {descriptor(c.a, aBase, k), descriptor(c.b, bStage(s), k)});
      Value acc =
          issueWarpgroupMmas(kb, slices, tileN, c.a.kInnermost(),
                             c.b.kInnermost(), loop.getRegionIterArgs()[0]);
      // Where C is added to, the consumer's first thread loads the prior
      // C's first two boxes while the tile's first MMAs run, once the
      // previous tile's stores have read the staging boxes.
      if (loadsC)
        kb.when(kb.andI(kb.lt(kb.rem(tid, 128), 1),
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              i, item.firstStep)),
                [&] {
                  waitTensorStoreReads(kb, 0);
                  for (int64_t box = 0; box < 2; ++box)
                    loadBox(box, cMap, consumerBoxes(consumer),
                            boxLoads(consumer), item.batch, row0, item.n0);
                });
      // The previous step's MMAs are done: its stage can refill.
      waitWarpgroupMmas(kb, 1);
      kb.when(kb.andI(kb.lt(item.firstStep, i), kb.lt(lane, 1)), [&] {
        arriveAt(kb, empty(position(arith::SubIOp::create(b, loc, g, one))
                               .first));
      });
      scf::YieldOp::create(b, loc, acc);
    }
    // The item's last stage is free once its MMAs are.
    waitWarpgroupMmas(kb, 0);
    kb.when(kb.andI(kb.lt(item.firstStep, item.lastStep), kb.lt(lane, 1)), [&] {
      Value last = arith::SubIOp::create(b, loc, kb.add(passed, count), one);
      arriveAt(kb, empty(position(last).first));
    });
    if (viaTma) {
      storeByTma(loop.getResult(0), cMap, consumerBoxes(consumer),
                 boxLoads(consumer), consumer, item.batch, row0, item.n0);
      return count;
    }
    forEachWarpgroupAccumulatorPair(
        kb, loop.getResult(0), tileN, row0, item.n0,
        [&](Value row, Value col, Value pair) {
          kb.when(kb.andI(kb.lt(row, c.m), kb.lt(col, c.n)), [&] {
            storeOutputPair(b, loc, c, workspace, item.split, item.batch, row,
                            col, pair);
          });
        });
    return count;
  });
  // Shared memory must outlive the stores' reads of it.
  if (viaTma)
    kb.when(kb.lt(kb.rem(tid, 128), 1), [&] { waitTensorStoreReads(kb, 0); });
  if (workspace)
    addSplits(b, loc, c, launch, workspace, splits);
}

namespace {

struct ConvertLinalgMatmulToNVGPUPass
    : mxfp4::impl::ConvertLinalgMatmulToNVGPUPassBase<
          ConvertLinalgMatmulToNVGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, LinalgContraction>> found;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        return;
      if (std::optional<LinalgContraction> c = matchContraction(op))
        found.push_back({op, *c});
    });
    OpBuilder b(&getContext());
    BF16Copies copies;
    for (auto &[op, contraction] : found) {
      contraction.overwrite = takeZeroInit(op, contraction.c.memref);
      for (ContractionOperand *l : {&contraction.a, &contraction.b})
        if (cast<MemRefType>(l->memref.getType()).getElementType().isF32())
          l->memref = copies.get(b, op, l->memref);
      b.setInsertionPoint(op);
      if (tma && tensorMapCovers(contraction.a, b.getBF16Type()) &&
          tensorMapCovers(contraction.b, b.getBF16Type()))
        TmaGemmEmitter(b, op.getLoc(), contraction).emit();
      else
        GemmEmitter(b, op.getLoc(), contraction).emit();
      op->erase();
    }
  }
};

} // namespace
