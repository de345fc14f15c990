//===- GemmKernel.cpp - MXFP4 GEMM on Hopper warpgroup MMAs ---------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// C[M, N] (+)= A[M, K] * B[N, K]^T with FP4 values and canonical E8M0
// scales in memory. sm_90 has no FP4 tensor cores, so each K step of 32 (one
// scale block) expands the tiles to bf16 in shared memory, in wgmma's
// core-matrix layout (WarpgroupMma.h), and two warpgroups multiply a
// 128 x 128 block tile with `wgmma.mma_async` into f32 accumulators.
//
// The expansion is exact: an FP4 value times its power-of-two scale has at
// most two significant bits and lies in bf16's range exactly when it lies
// in f32's (byte 0 gives the bf16 subnormal 2^-127; 6 * 2^127 overflows in
// both). It is arithmetic, not a table lookup: shared memory and L1 are
// what bound this kernel (the MMAs' operand reads, the expanded tiles'
// stores, the loads), and a lookup a value pair would add to them. Code bits
// s e1 e0 m moved to bf16 bits 15 and 8..6 are the FP4 value times 2^-126
// (e1 e0 = 0 gives bf16's subnormals 0 and 2^-127); `mul.bf16x2` by 2^126,
// then by the scale, gives the value (byte 255 makes the block NaN).
//
// Warpgroup 0 expands A's 128 rows and warpgroup 1 B's, a row block (16
// bytes of codes and a scale byte) each thread and K step. Loads come in
// pairs of K steps so that two lanes read a row's 32 contiguous bytes: a
// warp's load touches 16 rows, not 32, and L1 (busy with the MMAs' and the
// expansion's shared-memory traffic) serves half the wavefronts. Lane
// 2a + b loads steps b and 1 - b of its rows r0(a) and r1(a) = r0(a) + 16;
// in step j it expands slot (j + b) % 2, so every lane works every step.
// A pair's loads are issued a pair ahead. Where rows of scales are whole
// words, a lane reads its rows' scales four K steps (two pairs) at a time. Ragged M and N are guarded; K is
// a multiple of 32.
//
// Weight gradients (a small C, K = tokens) have too few tiles to fill the
// device: there K is split (TensorCore.h's splitK), grid z picks a range of
// K steps, each split writes its f32 partial C to a workspace, and a second
// kernel adds the splits in split order (then the accumulator) and converts
// to C's type. That is deterministic, but the f32 sum is rounded split by
// split: unsplit, C is one sum over K in the tensor cores' order, and the
// GEMMs that split round once more per split.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "WarpgroupMma.h"

#include "../MXFP4ToLinalg/Numerics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::kernels;
using namespace mlir::mxfp4::sm90;
namespace num = mlir::mxfp4::numerics;

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t sm90::gemmTiles(const GemmConfig &c) {
  return ceilDiv(c.m, kTile) * ceilDiv(c.n, kTile);
}

int64_t sm90::gemmBlocks(const GemmConfig &c) {
  return std::min(gemmTiles(c), kResidentBlocks);
}

KSplit sm90::gemmSplit(const GemmConfig &c) {
  // In pairs of K steps, the main loop's unit.
  return splitK(gemmTiles(c), ceilDiv(c.k, 2 * kWgStepK));
}

namespace {

/// One K step of this thread's row: 16 bytes of codes (vector<4xi32>) and
/// its scale: the byte (i32) or, with word scales, the word (i32) of the
/// row's scales of the four K steps from 4 * (pair / 2).
struct RowBlock {
  Value codes, scale;
};

/// Builds the kernel body; one instance per kernel.
class GemmBuilder {
public:
  GemmBuilder(OpBuilder &b, Location loc, const GemmConfig &c)
      : b(b), loc(loc), kb(b, loc, BoundsMode::guarded), c(c) {}

  void build(gpu::GPUFuncOp func);

private:
  Value i32(int64_t v) { return num::constant(b, loc, b.getI32Type(), v); }
  /// Slot `slot` of this thread's row blocks of the K step pair `pair`
  /// (zeros outside K). With word scales, an odd pair takes its scale word
  /// from `previous`, the slot's block of the pair before, if given.
  RowBlock load(Value pair, int64_t slot, const RowBlock *previous);
  /// Expands step `j` of pair `pair` from the thread's `slots` into `stage`.
  void expand(ArrayRef<RowBlock> slots, Value pair, int64_t j, int64_t stage);
  /// The scale byte (i32) as a pair of bf16 (vector<2xbf16>).
  Value scalePair(Value scale);
  /// Writes this warpgroup's part of C (plus `acc`, if any) to `out`; split
  /// K (`split` is the split's index), its f32 partial C to the workspace
  /// `out` instead.
  void epilogue(Value acc, Value out, Value split, Value accumulators,
                Value rowBase, Value colBase);

  OpBuilder &b;
  Location loc;
  KernelBuilder kb;
  const GemmConfig &c;
  // Set by build: the operands as words, this thread's operand (i1, B), its
  // lane's place in a pair (b, as index and i1) and the rows of its two
  // slots, the block tile's origin and the shared tiles.
  Value aValues, aScales, bValues, bScales;
  // Whether the scales are read a word (four K steps) at a time: a warp's
  // byte loads touch 16 rows for 32 bytes, as many L1 wavefronts as its
  // code loads, and L1 bounds this kernel. Needs rows of whole words.
  bool wordScales = c.k / 32 % 4 == 0;
  Value expandsB, pairLane, oddLane, slotRows[2], m0, n0;
  CoreMatrixTile aTile, bTile;
};

} // namespace

RowBlock GemmBuilder::load(Value pair, int64_t slot, const RowBlock *previous) {
  int64_t kBlocks = c.k / 32;
  Type i32 = b.getI32Type();
  auto codesType = VectorType::get({4}, i32);
  Value step = kb.add(kb.mul(pair, 2), slot ? kb.xorI(pairLane, 1) : pairLane);
  // A warpgroup reads one operand: the branch is uniform in every warp.
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{codesType, i32}, expandsB,
                                /*withElseRegion=*/true);
  auto emit = [&](Block *block, Value values, Value scales, Value origin,
                  int64_t rows) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(block);
    Value r = kb.add(origin, slotRows[slot]);
    Value valid = kb.andI(kb.lt(r, rows), kb.lt(step, kBlocks));
    Value at = kb.add(kb.mul(r, kBlocks), step);
    Value codes = kb.load(codesType, values, valid, kb.mul(at, 4),
                          rows * kBlocks * 4, /*alignment=*/16);
    Value scale;
    if (!wordScales) {
      scale = arith::ExtUIOp::create(
          b, loc, i32,
          kb.load(b.getI8Type(), scales, valid, at, rows * kBlocks));
    } else {
      // A word covers the pairs 2q and 2q + 1 (all in K or none: K steps
      // come in whole words), so an odd pair reuses its predecessor's. Its
      // load is then of element 0 by every lane (one wavefront): no branch,
      // whose join would make the load complete before the prefetching
      // moves on.
      Value offset = kb.add(kb.mul(r, kBlocks / 4), kb.div(pair, 2));
      if (!previous) {
        scale = kb.load(i32, scales, valid, offset, rows * kBlocks / 4);
      } else {
        Value odd = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                          kb.rem(pair, 2), kb.idx(0));
        Value even = arith::XOrIOp::create(
            b, loc, odd, arith::ConstantIntOp::create(b, loc, 1, 1));
        Value word = kb.load(i32, scales, kb.andI(valid, even), offset,
                             rows * kBlocks / 4);
        scale = kb.select(odd, previous->scale, word);
      }
    }
    scf::YieldOp::create(b, loc, ValueRange{codes, scale});
  };
  emit(ifOp.thenBlock(), bValues, bScales, n0, c.n);
  emit(ifOp.elseBlock(), aValues, aScales, m0, c.m);
  return {ifOp.getResult(0), ifOp.getResult(1)};
}

Value GemmBuilder::scalePair(Value s) {
  // 2^(s-127) as bf16: byte 0 is the subnormal 2^-127, 255 NaN.
  Value bits = arith::SelectOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, s, i32(0)),
      i32(0x40),
      arith::SelectOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, s, i32(255)),
          i32(0x7FC0), arith::ShLIOp::create(b, loc, s, i32(7))));
  Value packed = arith::OrIOp::create(
      b, loc, bits, arith::ShLIOp::create(b, loc, bits, i32(16)));
  return vector::BitCastOp::create(
      b, loc, VectorType::get({2}, b.getBF16Type()),
      vector::BroadcastOp::create(b, loc, VectorType::get({1}, b.getI32Type()),
                                  packed));
}

void GemmBuilder::expand(ArrayRef<RowBlock> slots, Value pair, int64_t j,
                         int64_t stage) {
  // Slot (j + b) % 2: slot j for even lanes, the other for odd ones.
  auto pick = [&](Value even, Value odd) {
    return kb.select(oddLane, odd, even);
  };
  RowBlock block = {pick(slots[j].codes, slots[1 - j].codes),
                    pick(slots[j].scale, slots[1 - j].scale)};
  Value row = pick(slotRows[j], slotRows[1 - j]);
  Type i32Type = b.getI32Type();
  auto pairType = VectorType::get({2}, b.getBF16Type());
  auto asPair = [&](Value word) {
    return vector::BitCastOp::create(
        b, loc, pairType,
        vector::BroadcastOp::create(b, loc, VectorType::get({1}, i32Type),
                                    word));
  };
  Value byte = block.scale;
  if (wordScales) {
    // Step 2 * pair + j is byte (2 * pair + j) % 4 of the word.
    Value shift = arith::IndexCastOp::create(
        b, loc, i32Type, kb.mul(kb.add(kb.mul(kb.rem(pair, 2), 2), j), 8));
    byte = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, byte, shift), i32(0xFF));
  }
  Value scale = scalePair(byte);
  Value twoTo126 = asPair(i32(0x7E807E80));
  SmallVector<Value> chunks;
  for (int64_t q = 0; q < 4; ++q) {
    Value word = vector::ExtractOp::create(b, loc, block.codes, q);
    Value high = arith::ShRUIOp::create(b, loc, word, i32(4));
    SmallVector<Value> pairs;
    for (int64_t j = 0; j < 4; ++j) {
      // Byte j of the word (codes 2j, 2j + 1) at bits 0..7 and byte j of
      // the word shifted by 4 (code 2j + 1) at bits 16..23.
      int64_t selector = j | j << 4 | (4 + j) << 8 | (4 + j) << 12;
      Value x =
          NVVM::PermuteOp::create(b, loc, i32Type, word, high, i32(selector),
                                  NVVM::PermuteMode::DEFAULT);
      Value magnitudes = arith::AndIOp::create(
          b, loc, arith::ShLIOp::create(b, loc, x, i32(6)), i32(0x01C001C0));
      Value signs = arith::AndIOp::create(
          b, loc, arith::ShLIOp::create(b, loc, x, i32(12)), i32(0x80008000));
      Value pair = asPair(arith::OrIOp::create(b, loc, magnitudes, signs));
      pair = arith::MulFOp::create(b, loc, pair, twoTo126);
      pair = arith::MulFOp::create(b, loc, pair, scale);
      pairs.push_back(vector::ExtractOp::create(
          b, loc,
          vector::BitCastOp::create(b, loc, VectorType::get({1}, i32Type),
                                    pair),
          0));
    }
    chunks.push_back(vector::BitCastOp::create(
        b, loc, VectorType::get({8}, b.getBF16Type()),
        vector::FromElementsOp::create(b, loc, VectorType::get({4}, i32Type),
                                       pairs)));
  }
  auto ifOp = scf::IfOp::create(b, loc, expandsB, /*withElseRegion=*/true);
  for (auto [block, tile] : {std::pair{ifOp.thenBlock(), &bTile},
                             std::pair{ifOp.elseBlock(), &aTile}}) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(block->getTerminator());
    for (auto [q, chunk] : llvm::enumerate(chunks))
      storeRowChunk(kb, *tile, kb.idx(stage), row, kb.idx(8 * q), chunk);
  }
}

void GemmBuilder::epilogue(Value acc, Value out, Value split,
                           Value accumulators, Value rowBase, Value colBase) {
  Type f32 = b.getF32Type();
  Type outType = split ? f32 : c.resultType;
  // Split K: the split's slice of the workspace.
  int64_t size = c.m * c.n;
  Value slice;
  if (split) {
    size *= gemmSplit(c).splits;
    slice = kb.mul(split, c.m * c.n);
  }
  // Adjacent columns are stored as pairs when a row has an even length.
  bool pairs = c.n % 2 == 0;
  forEachWarpgroupAccumulatorPair(
      kb, accumulators, kTile, rowBase, colBase,
      [&](Value row, Value col, Value pair) {
        for (int64_t e = 0; e < (pairs ? 1 : 2); ++e) {
          Value at = kb.add(kb.mul(row, c.n), kb.add(col, e));
          Value valid = kb.andI(kb.lt(row, c.m), kb.lt(kb.add(col, e), c.n));
          auto shaped = [&](Type t) -> Type {
            return pairs ? Type(VectorType::get({2}, t)) : t;
          };
          Value value =
              pairs ? pair : vector::ExtractOp::create(b, loc, pair, e);
          if (acc) {
            Value prior = kb.load(shaped(c.accType), acc, valid, at, c.m * c.n);
            if (!c.accType.isF32())
              prior = arith::ExtFOp::create(b, loc, shaped(f32), prior);
            value = arith::AddFOp::create(b, loc, prior, value);
          }
          if (!outType.isF32())
            value = arith::TruncFOp::create(b, loc, shaped(outType), value);
          kb.store(value, out, valid, slice ? kb.add(slice, at) : at, size);
        }
      });
}

void GemmBuilder::build(gpu::GPUFuncOp func) {
  // The codes are read 16 bytes at a time, word scales 4: view the byte
  // buffers as words.
  auto words = [&](Value bytes) {
    int64_t size = cast<MemRefType>(bytes.getType()).getNumElements() / 4;
    auto type =
        MemRefType::get({size}, b.getI32Type(), MemRefLayoutAttrInterface(),
                        cast<MemRefType>(bytes.getType()).getMemorySpace());
    return memref::ViewOp::create(b, loc, type, bytes, kb.idx(0), ValueRange{});
  };
  aValues = words(func.getArgument(0));
  aScales =
      wordScales ? words(func.getArgument(1)) : Value(func.getArgument(1));
  bValues = words(func.getArgument(2));
  bScales =
      wordScales ? words(func.getArgument(3)) : Value(func.getArgument(3));
  KSplit split = gemmSplit(c);
  Value acc = c.accType && split.splits == 1 ? func.getArgument(4) : Value();
  Value out = func.getArgument(func.getFunctionType().getNumInputs() - 1);
  auto attributions = func.getWorkgroupAttributions();
  aTile = {attributions[0], kTile};
  bTile = {attributions[1], kTile};

  Value tid = kb.threadId();
  expandsB = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, tid,
                                   kb.idx(kTile));
  Value lane = kb.rem(tid, 32);
  pairLane = kb.rem(lane, 2);
  oddLane = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, pairLane,
                                  kb.idx(0));
  Value warpRows = kb.mul(kb.div(kb.rem(tid, kTile), 32), 32);
  slotRows[0] = kb.add(warpRows, kb.div(lane, 2));
  slotRows[1] = kb.add(slotRows[0], 16);
  int64_t tilesN = ceilDiv(c.n, kTile);
  auto setTile = [&](Value tile) {
    m0 = kb.mul(kb.div(tile, tilesN), kTile);
    n0 = kb.mul(kb.rem(tile, tilesN), kTile);
  };
  // Two warpgroups, each 64 rows of C by all 128 columns.
  Value wgRow = kb.mul(kb.div(tid, 128), 64);

  int64_t steps = ceilDiv(c.k, kWgStepK);
  int64_t pairs = ceilDiv(steps, 2);
  // This block's step pairs: all of them, or its split's range.
  Value splitId, firstPair = kb.idx(0), lastPair = kb.idx(pairs);
  if (split.splits > 1) {
    splitId = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
    firstPair = kb.mul(splitId, split.stepsPerSplit);
    lastPair = kb.min(kb.add(firstPair, split.stepsPerSplit), lastPair);
  }
  // `previous`: the pair before's blocks, if loaded.
  auto loadPair = [&](Value pair, ArrayRef<RowBlock> previous) {
    return SmallVector<RowBlock>{
        load(pair, 0, previous.empty() ? nullptr : &previous[0]),
        load(pair, 1, previous.empty() ? nullptr : &previous[1])};
  };
  auto flatten = [](ArrayRef<RowBlock> slots) {
    SmallVector<Value> values;
    for (const RowBlock &slot : slots)
      values.append({slot.codes, slot.scale});
    return values;
  };
  auto unflatten = [](ValueRange values) {
    return SmallVector<RowBlock>{{values[0], values[1]},
                                 {values[2], values[3]}};
  };
  // The first two step pairs of the current tile's origin.
  auto loadFirstPairs = [&]() {
    SmallVector<RowBlock> first = loadPair(firstPair, {});
    SmallVector<Value> values = flatten(first);
    values.append(flatten(loadPair(kb.add(firstPair, 1), first)));
    return values;
  };
  // A block loops over tiles gemmBlocks apart; it loads the next tile's
  // first two step pairs before writing this tile's C, so the loads fly
  // while the epilogue stores.
  Value firstTile = kb.blockId();
  setTile(firstTile);
  auto tileLoop = scf::ForOp::create(b, loc, firstTile, kb.idx(gemmTiles(c)),
                                     kb.idx(gemmBlocks(c)), loadFirstPairs());
  OpBuilder::InsertionGuard tileGuard(b);
  b.setInsertionPointToStart(tileLoop.getBody());
  Value tile = tileLoop.getInductionVar();
  setTile(tile);
  SmallVector<RowBlock> first =
      unflatten(tileLoop.getRegionIterArgs().take_front(4));
  // Two stages, a step pair's first step in stage 0 and its second in
  // stage 1: the MMAs of one stage run while the threads expand the next
  // step into the other.
  expand(first, firstPair, 0, 0);
  fenceSharedForMma(kb);
  gpu::BarrierOp::create(b, loc);
  SmallVector<Value> inits = {zeroAccumulators(kb, kTile)};
  inits.append(tileLoop.getRegionIterArgs().begin(),
               tileLoop.getRegionIterArgs().end());
  auto loop = scf::ForOp::create(b, loc, firstPair, lastPair, kb.idx(1), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value pair = loop.getInductionVar();
    auto carried = loop.getRegionIterArgs();
    SmallVector<RowBlock> current = unflatten(carried.slice(1, 4));
    SmallVector<RowBlock> next = unflatten(carried.slice(5, 4));
    Value acc = issueWarpgroupMmas(kb, aTile, wgRow, bTile, kb.idx(0), kTile,
                                   kb.idx(0), carried[0]);
    expand(current, pair, 1, 1);
    fenceSharedForMma(kb);
    waitWarpgroupMmas(kb);
    gpu::BarrierOp::create(b, loc);
    // An odd number of K steps leaves the last pair's second step empty.
    Value second = kb.lt(kb.add(kb.mul(pair, 2), 1), steps);
    auto ifOp = scf::IfOp::create(b, loc, acc.getType(), second,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inIf(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      scf::YieldOp::create(b, loc,
                           issueWarpgroupMmas(kb, aTile, wgRow, bTile,
                                              kb.idx(0), kTile, kb.idx(1),
                                              acc));
      b.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(b, loc, acc);
    }
    // The last pair expands past the end into the idle stage: harmless.
    expand(next, kb.add(pair, 1), 0, 0);
    fenceSharedForMma(kb);
    SmallVector<Value> yields = {ifOp.getResult(0)};
    yields.append(flatten(next));
    yields.append(flatten(loadPair(kb.add(pair, 2), next)));
    waitWarpgroupMmas(kb);
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, yields);
  }
  setTile(kb.add(tile, gemmBlocks(c)));
  SmallVector<Value> nextTile = loadFirstPairs();
  setTile(tile);
  epilogue(acc, out, splitId, loop.getResult(0), kb.add(m0, wgRow), n0);
  scf::YieldOp::create(b, loc, nextTile);
  b.setInsertionPointAfter(tileLoop);
  gpu::ReturnOp::create(b, loc);
}

gpu::GPUFuncOp sm90::buildGemmKernel(OpBuilder &b, Location loc,
                                     gpu::GPUModuleOp module, StringRef name,
                                     const GemmConfig &c) {
  MLIRContext *ctx = b.getContext();
  Type i8 = b.getI8Type();
  SmallVector<Type> args = {globalBuffer(ctx, c.m * c.k / 2, i8),
                            globalBuffer(ctx, c.m * c.k / 32, i8),
                            globalBuffer(ctx, c.n * c.k / 2, i8),
                            globalBuffer(ctx, c.n * c.k / 32, i8)};
  if (int64_t splits = gemmSplit(c).splits; splits > 1) {
    args.push_back(globalBuffer(ctx, splits * c.m * c.n, b.getF32Type()));
  } else {
    if (c.accType)
      args.push_back(globalBuffer(ctx, c.m * c.n, c.accType));
    args.push_back(globalBuffer(ctx, c.m * c.n, c.resultType));
  }
  Type bf16 = b.getBF16Type();
  SmallVector<Type> shared = {
      workgroupBuffer(ctx, CoreMatrixTile::elements(kTile, 2), bf16),
      workgroupBuffer(ctx, CoreMatrixTile::elements(kTile, 2), bf16)};
  gpu::GPUFuncOp func =
      createKernel(b, loc, module, name, args, shared, kBlockThreads);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&func.getBody().front());
  GemmBuilder(b, loc, c).build(func);
  return func;
}

/// Elements a thread of the add-splits kernel sums: four (16-byte f32
/// accesses) where C's size allows.
static int64_t addWidth(const GemmConfig &c) {
  return c.m * c.n % 4 == 0 ? 4 : 1;
}

int64_t sm90::addSplitsBlocks(const GemmConfig &c) {
  return ceilDiv(ceilDiv(c.m * c.n, addWidth(c)), kWorkgroupSize);
}

gpu::GPUFuncOp sm90::buildAddSplitsKernel(OpBuilder &b, Location loc,
                                          gpu::GPUModuleOp module,
                                          StringRef name, const GemmConfig &c) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  int64_t splits = gemmSplit(c).splits, size = c.m * c.n;
  SmallVector<Type> args = {globalBuffer(ctx, splits * size, f32)};
  if (c.accType)
    args.push_back(globalBuffer(ctx, size, c.accType));
  args.push_back(globalBuffer(ctx, size, c.resultType));
  gpu::GPUFuncOp func = createKernel(b, loc, module, name, args);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&func.getBody().front());
  KernelBuilder kb(b, loc, BoundsMode::guarded);
  gpu::ReturnOp::create(b, loc);
  b.setInsertionPointToStart(&func.getBody().front());

  int64_t width = addWidth(c);
  Value at = kb.mul(kb.add(kb.mul(kb.blockId(), kWorkgroupSize), kb.threadId()),
                    width);
  auto inRange = scf::IfOp::create(b, loc, kb.lt(at, size), false);
  b.setInsertionPointToStart(inRange.thenBlock());
  auto load = [&](Type element, Value buffer, Value offset) -> Value {
    if (width == 1)
      return memref::LoadOp::create(b, loc, buffer, offset);
    unsigned bytes = width * element.getIntOrFloatBitWidth() / 8;
    return vector::LoadOp::create(b, loc, VectorType::get({width}, element),
                                  buffer, offset, /*nontemporal=*/false,
                                  llvm::MaybeAlign(bytes));
  };
  Value sum = load(f32, func.getArgument(0), at);
  for (int64_t s = 1; s < splits; ++s)
    sum = arith::AddFOp::create(
        b, loc, sum, load(f32, func.getArgument(0), kb.add(at, s * size)));
  // Then the accumulator, as the unsplit kernel adds it to its one sum.
  if (c.accType) {
    Value prior = load(c.accType, func.getArgument(1), at);
    if (!c.accType.isF32())
      prior = arith::ExtFOp::create(b, loc, sum.getType(), prior);
    sum = arith::AddFOp::create(b, loc, prior, sum);
  }
  Type outType = c.resultType;
  if (width > 1)
    outType = VectorType::get({width}, outType);
  if (!c.resultType.isF32())
    sum = arith::TruncFOp::create(b, loc, outType, sum);
  Value out = func.getArguments().back();
  if (width == 1)
    memref::StoreOp::create(b, loc, sum, out, at);
  else
    vector::StoreOp::create(
        b, loc, sum, out, at, /*nontemporal=*/false,
        llvm::MaybeAlign(width * c.resultType.getIntOrFloatBitWidth() / 8));
  return func;
}
