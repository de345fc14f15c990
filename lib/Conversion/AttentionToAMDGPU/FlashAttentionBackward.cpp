//===- FlashAttentionBackward.cpp - fused attention backward on gfx950 ----===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// FlashAttention-2's backward on `v_mfma_f32_16x16x32_bf16` (wave64),
// deterministic (no atomics: every output element has one writer), with the
// operands, rounding points and launches of the sm_90a kernels
// (AttentionToNVGPU): q, k, v and dO are rounded to bf16 as they are loaded,
// products accumulate in f32, P and dS are rounded to bf16 where they become
// MFMA operands, delta is an f32 dot product of o and dO as stored.
//
// - bwd_delta: delta = rowsum(dO * o), d / 8 lanes a row, added up with
//   shuffles.
// - bwd_dq: a block of 2 waves owns 64 stacked query rows (32 a wave) and
//   walks the keys up to the diagonal in tiles of 64, recomputing
//   P = exp2(s log2(e) / sqrt(d) - lse log2(e)) from lse; dq accumulates
//   over the tiles.
// - bwd_dkdv: a block owns 64 keys (32 a wave) and walks every stacked
//   query row that sees them (the query tiles from the diagonal on, in
//   every GQA group), accumulating dv = P^T dO and dk = dS^T q.
//   dS = P (dP - delta) / sqrt(d); the 1 / sqrt(d) (f32) multiplies the dq
//   and dk sums once, so P (dP - delta) is what is rounded to bf16.
//
// The MFMA (Mfma.h) leaves in lane l column l % 16 of its result. Every
// product keeps the wave's own rows (queries in bwd_dq, keys in bwd_dkdv)
// as those columns, two tiles of 16: the wave's rows are the B operand,
// read once from global memory into registers, and the walked tile is A,
// read from LDS, each read feeding both column tiles. The scores of two
// 16-row subtiles of the walked tile are then directly the B operand of the
// product over those 32 rows in accumulator order, whose A operand (the
// walked tile transposed, d rows) is read in the same order. The walked
// tile is staged twice, as rows and transposed (copyRowsToLds,
// copyRowsToLdsTransposed). Only the diagonal tile is masked.
//
// Row r of q is query position r mod seq; a tile's 64 rows lie in one group
// since seq is a multiple of 64.
//
//===----------------------------------------------------------------------===//

#include "FlashAttention.h"
#include "Mfma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::kernels;
using namespace mlir::mxfp4::gfx950;

namespace {

constexpr int64_t kRows = 64; // rows a block owns, and rows a step walks
/// Accumulator columns of 16 a wave owns: each operand read from LDS feeds
/// this many MFMAs.
constexpr int64_t kColumnTiles = 2;
constexpr int64_t kWaveRows = kColumnTiles * 16; // rows a wave owns
constexpr int64_t kThreads = kRows / kWaveRows * 64;
constexpr double kLog2E = 1.4426950408889634;

/// Where a walked tile is staged in LDS: its rows and its transpose (null
/// where the kernel does not read it).
struct Staged {
  std::optional<LdsTile> rows, transposed;
};

class BackwardEmitter {
public:
  BackwardEmitter(OpBuilder &b, Location loc, const AttentionShape &s)
      : b(b), loc(loc), kb(b, loc), s(s) {}

  void delta(Value o, Value dO, Value delta);
  void queries(Value q, Value k, Value v, Value lse, Value dO, Value delta,
               Value dq);
  void keys(Value q, Value k, Value v, Value lse, Value dO, Value delta,
            Value dk, Value dv);

  /// Every launch opened, in order.
  SmallVector<AttentionLaunch> launches;

private:
  int64_t queryRows() const { return s.groups * s.seq; }
  /// Opens a launch of blocksX blocks of 256 threads for each head, with
  /// the bf16 workgroup buffers of `tiles` (rows x cols each) and `vectors`
  /// f32 [64], records it as `role` and sets the per-thread values below.
  /// The grid is (section, blocksX, heads / section)
  /// (mxfp4::sectionHeads).
  gpu::LaunchOp open(StringRef role, int64_t blocksX,
                     ArrayRef<std::pair<int64_t, int64_t>> tiles,
                     int64_t vectors, int64_t section = 1);
  /// mxfp4::attentionRowAt and attentionValueAt of this block's head.
  SmallVector<Value> rowAt(Value buffer, Value row0, Value r, Value col) {
    return attentionRowAt(kb, s, {head, batchIndex, kvHead}, buffer, row0, r,
                          col);
  }
  SmallVector<Value> valueAt(Value buffer, Value row) {
    return attentionValueAt(kb, s, {head, batchIndex, kvHead}, buffer, row);
  }
  /// Stages the 64-row tile at `row0` of `src` into `to`.
  void stage(Value src, Value row0, const Staged &to);
  /// The block-local row of this lane's column in column tile `c`:
  /// wave row 16 c + l % 16.
  Value columnRow(int64_t c) {
    return kb.add(kb.mul(wave, kWaveRows), kb.add(lane.row, c * kMfmaTile));
  }
  /// The operands (k over d) of this wave's rows of the tile at `row0` of
  /// `src`, read from global memory once: [c][k step] for column tile c.
  SmallVector<SmallVector<Value>> waveOperands(Value src, Value row0);
  /// 16 x 16 of X Y^T for each column tile: X rows 16 sub .. of a staged
  /// tile, Y[c] (k over d). Lane l gets column l % 16 (the wave's row 16 c
  /// + l % 16) of tile rows 16 sub + 4 (l / 16) + r.
  SmallVector<Value> product(const LdsTile &rows, int64_t sub,
                             ArrayRef<SmallVector<Value>> y);
  /// acc[c][dt] += X Y^T over the walked tile's 64 rows: X the transposed
  /// tile's d rows 16 dt .., Y the bf16 scores[c] (4 accumulator tiles of
  /// 16 rows).
  void accumulate(const LdsTile &transposed,
                  ArrayRef<SmallVector<Value>> scores,
                  MutableArrayRef<SmallVector<Value>> acc);
  /// Zeroes the elements of accumulator tile `sub` of the walked tile in
  /// column tile `c` whose row (tile-local) `visible(row, column)` hides
  /// from the lane's column (block-local).
  Value mask(Value acc, int64_t sub, int64_t c,
             function_ref<Value(Value row, Value column)> visible);
  /// Stores acc[dt] of column tile `c` (the transposed result: d rows
  /// 16 dt + 4 (l / 16) + r of the lane's column) times `scale` (if any)
  /// into rows row0 .. of `dst`.
  void storeRows(ArrayRef<Value> acc, int64_t c, Value dst, Value row0,
                 Value scale = Value());
  SmallVector<Value> zeros(int64_t count) {
    return SmallVector<Value>(count, zeroAccumulator(kb));
  }
  VectorType vec4f32() { return VectorType::get({4}, b.getF32Type()); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value splat(Value x) {
    return vector::BroadcastOp::create(b, loc, vec4f32(), x);
  }
  /// P = exp2(s log2(e) / sqrt(d) - lse log2(e)) (one FMA and one
  /// exp2); `negLse2` is -lse log2(e).
  Value probabilities(Value scores, Value negLse2) {
    double scale = kLog2E / std::sqrt(static_cast<double>(s.headDim));
    Value z = math::FmaOp::create(b, loc, scores, splat(f32(scale)), negLse2);
    // Per element: the ROCDL lowering of math.exp2 (v_exp_f32) is scalar.
    SmallVector<Value> elements;
    for (int64_t r = 0; r < 4; ++r)
      elements.push_back(math::Exp2Op::create(
          b, loc, vector::ExtractOp::create(b, loc, z, r)));
    return vector::FromElementsOp::create(b, loc, vec4f32(), elements);
  }
  /// P (dP - delta): dS but for the 1 / sqrt(d), which the dq and dk sums
  /// apply once, to their results (gradientScale()).
  Value scoreGradients(Value probs, Value dProbs, Value delta) {
    Value centered = arith::SubFOp::create(b, loc, dProbs, delta);
    return arith::MulFOp::create(b, loc, probs, centered);
  }
  /// 1 / sqrt(d) as f32 (exact at head dim 64).
  Value gradientScale() {
    return f32(1 / std::sqrt(static_cast<double>(s.headDim)));
  }
  /// -lse log2(e) of stacked row `row`.
  Value negatedLse2(Value lse, Value row) {
    Value x = memref::LoadOp::create(b, loc, lse, valueAt(lse, row));
    return arith::MulFOp::create(b, loc, x, f32(-kLog2E));
  }
  Value ule(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, x, y);
  }

  OpBuilder &b;
  Location loc;
  KernelBuilder kb;
  const AttentionShape &s;
  // Set by open(): `head` is the block's stacked head, batch * kvHeads of
  // them, `batchIndex` and `kvHead` its parts; `lane` the thread's place in
  // its wave's MFMAs.
  // `blockIndex` is the block's index along its head (see open).
  Value tid, head, blockIndex, batchIndex, kvHead, wave;
  MfmaLane lane;
};

} // namespace

gpu::LaunchOp BackwardEmitter::open(StringRef role, int64_t blocksX,
                                    ArrayRef<std::pair<int64_t, int64_t>> tiles,
                                    int64_t vectors, int64_t section) {
  MLIRContext *ctx = b.getContext();
  SmallVector<Type> shared;
  for (auto [rows, cols] : tiles)
    shared.push_back(workgroupBuffer(ctx, LdsTile::elements(rows, cols),
                                     b.getBF16Type()));
  shared.append(vectors, workgroupBuffer(ctx, kRows, b.getF32Type()));
  Value one = kb.idx(1);
  auto launch = gpu::LaunchOp::create(
      b, loc, kb.idx(section), kb.idx(blocksX), kb.idx(s.heads() / section),
      kb.idx(kThreads), one, one,
      /*dynamicSharedMemorySize=*/Value(), /*asyncTokenType=*/Type(),
      /*asyncDependencies=*/ValueRange(), shared);
  launches.push_back({launch, role.str(), {}});
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&body);
  tid = launch.getThreadIds().x;
  head =
      kb.add(kb.mul(launch.getBlockIds().z, section), launch.getBlockIds().x);
  blockIndex = launch.getBlockIds().y;
  batchIndex = kb.div(head, s.kvHeads);
  kvHead = kb.rem(head, s.kvHeads);
  wave = kb.div(tid, kWaveLanes);
  lane = getMfmaLane(kb, kb.rem(tid, kWaveLanes));
  return launch;
}

void BackwardEmitter::stage(Value src, Value row0, const Staged &to) {
  auto at = [&](Value r, Value col) { return rowAt(src, row0, r, col); };
  if (to.rows)
    copyRowsToLds(kb, src, at, *to.rows, tid, kThreads);
  if (to.transposed)
    copyRowsToLdsTransposed(kb, src, at, *to.transposed, kRows, s.headDim,
                            tid, kThreads);
}

SmallVector<SmallVector<Value>> BackwardEmitter::waveOperands(Value src,
                                                              Value row0) {
  SmallVector<SmallVector<Value>> operands(kColumnTiles);
  for (int64_t c = 0; c < kColumnTiles; ++c)
    for (int64_t k0 = 0; k0 < s.headDim; k0 += kMfmaK) {
      Value col = kb.add(kb.mul(lane.group, kOperandElements), k0);
      operands[c].push_back(loadAsBf16(
          kb, src, rowAt(src, row0, columnRow(c), col), kOperandElements));
    }
  return operands;
}

SmallVector<Value>
BackwardEmitter::product(const LdsTile &rows, int64_t sub,
                         ArrayRef<SmallVector<Value>> y) {
  SmallVector<Value> acc = zeros(kColumnTiles);
  for (int64_t ks = 0; ks < s.headDim / kMfmaK; ++ks) {
    Value x = loadOperand(kb, rows, lane, kb.idx(sub * kMfmaTile),
                          kb.idx(ks * kMfmaK));
    for (int64_t c = 0; c < kColumnTiles; ++c)
      acc[c] = mfma(kb, x, y[c][ks], acc[c]);
  }
  return acc;
}

void BackwardEmitter::accumulate(const LdsTile &transposed,
                                 ArrayRef<SmallVector<Value>> scores,
                                 MutableArrayRef<SmallVector<Value>> acc) {
  for (int64_t step = 0; step < kRows / kMfmaK; ++step) {
    SmallVector<Value> y;
    for (int64_t c = 0; c < kColumnTiles; ++c)
      y.push_back(accumulatorsAsOperand(kb, scores[c][2 * step],
                                        scores[c][2 * step + 1]));
    for (int64_t dt = 0; dt < s.headDim / kMfmaTile; ++dt) {
      Value x = loadOperandInAccumulatorOrder(kb, transposed, lane,
                                              kb.idx(dt * kMfmaTile),
                                              kb.idx(step * kMfmaK));
      for (int64_t c = 0; c < kColumnTiles; ++c)
        acc[c][dt] = mfma(kb, x, y[c], acc[c][dt]);
    }
  }
}

Value BackwardEmitter::mask(
    Value acc, int64_t sub, int64_t c,
    function_ref<Value(Value row, Value column)> visible) {
  Value column = columnRow(c);
  Value zero = f32(0);
  SmallVector<Value> elements;
  for (int64_t r = 0; r < 4; ++r) {
    Value row = kb.add(kb.mul(lane.group, 4), sub * kMfmaTile + r);
    Value x = vector::ExtractOp::create(b, loc, acc, r);
    elements.push_back(
        arith::SelectOp::create(b, loc, visible(row, column), x, zero));
  }
  return vector::FromElementsOp::create(b, loc, vec4f32(), elements);
}

void BackwardEmitter::storeRows(ArrayRef<Value> acc, int64_t c, Value dst,
                                Value row0, Value scale) {
  Type element = cast<MemRefType>(dst.getType()).getElementType();
  Value r = columnRow(c);
  for (auto [dt, v] : llvm::enumerate(acc)) {
    Value col = kb.add(kb.mul(lane.group, 4),
                       static_cast<int64_t>(dt) * kMfmaTile);
    Value x = v;
    if (scale)
      x = arith::MulFOp::create(b, loc, x, splat(scale));
    if (!element.isF32())
      x = arith::TruncFOp::create(b, loc, VectorType::get({4}, element), x);
    vector::StoreOp::create(b, loc, x, dst, rowAt(dst, row0, r, col));
  }
}

void BackwardEmitter::delta(Value o, Value dO, Value delta) {
  OpBuilder::InsertionGuard guard(b);
  // d / 8 adjacent lanes a row, 8 elements each: a wave reads whole rows,
  // coalesced; the lanes add up with shuffles.
  int64_t lanes = s.headDim / kOperandElements;
  int64_t rowsPerBlock = kThreads / lanes;
  open("bwd_delta", queryRows() / rowsPerBlock, {}, 0);
  Value row = kb.add(kb.mul(blockIndex, rowsPerBlock), kb.div(tid, lanes));
  Value laneInRow = kb.rem(tid, lanes);
  Value tile0 = kb.mul(kb.div(row, kRows), kRows);
  SmallVector<Value> at = rowAt(o, tile0, kb.rem(row, kRows),
                                kb.mul(laneInRow, kOperandElements));
  auto f32x8 = VectorType::get({kOperandElements}, b.getF32Type());
  // o and dO as f32, widened where they are bf16.
  auto load = [&](Value src) -> Value {
    Type e = cast<MemRefType>(src.getType()).getElementType();
    Value x = vector::LoadOp::create(
        b, loc, VectorType::get({kOperandElements}, e), src, at);
    return e.isF32() ? x : arith::ExtFOp::create(b, loc, f32x8, x);
  };
  Value product = arith::MulFOp::create(b, loc, load(o), load(dO));
  Value total = vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                            product);
  for (int64_t offset = lanes / 2; offset > 0; offset /= 2)
    total = arith::AddFOp::create(
        b, loc, total,
        gpu::ShuffleOp::create(b, loc, total, offset, kWaveLanes,
                               gpu::ShuffleMode::XOR)
            .getShuffleResult());
  kb.when(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, laneInRow,
                                kb.idx(0)),
          [&] {
            memref::StoreOp::create(b, loc, total, delta, valueAt(delta, row));
          });
}

void BackwardEmitter::queries(Value q, Value k, Value v, Value lse, Value dO,
                              Value delta, Value dq) {
  OpBuilder::InsertionGuard guard(b);
  int64_t d = s.headDim, accs = d / kMfmaTile;
  gpu::LaunchOp launch = open(
      "bwd_dq", queryRows() / kRows, {{kRows, d}, {d, kRows}, {kRows, d}}, 0,
      sectionHeads(s, /*keyBlocks=*/false, kRows, kRows, kResidentBlocks));
  auto shared = launch.getWorkgroupAttributions();
  Value zero = kb.idx(0);
  Staged kTile{LdsTile{shared[0], zero, kRows, d},
               LdsTile{shared[1], zero, d, kRows}};
  Staged vTile{LdsTile{shared[2], zero, kRows, d}, std::nullopt};

  // The longest rows (last positions) first.
  Value row0 = kb.mul(arith::SubIOp::create(
                          b, loc, kb.idx(queryRows() / kRows - 1), blockIndex),
                      kRows);
  Value pos0 = kb.rem(row0, s.seq);
  auto qOperands = waveOperands(q, row0);
  auto dOOperands = waveOperands(dO, row0);
  // This lane's query rows (its column of every product), their lse and
  // delta.
  SmallVector<Value> negLse2, rowDelta;
  for (int64_t c = 0; c < kColumnTiles; ++c) {
    Value row = kb.add(row0, columnRow(c));
    negLse2.push_back(splat(negatedLse2(lse, row)));
    rowDelta.push_back(
        splat(memref::LoadOp::create(b, loc, delta, valueAt(delta, row))));
  }

  // One tile of 64 keys from key0 on; `acc` is [c][dt] flattened.
  auto step = [&](Value key0, bool diagonal, ValueRange carried) {
    gpu::BarrierOp::create(b, loc); // the previous tile's reads are done
    stage(k, key0, kTile);
    stage(v, key0, vTile);
    gpu::BarrierOp::create(b, loc);
    SmallVector<SmallVector<Value>> dS(kColumnTiles);
    for (int64_t sub = 0; sub < kRows / kMfmaTile; ++sub) {
      SmallVector<Value> scores = product(*kTile.rows, sub, qOperands);
      SmallVector<Value> dP = product(*vTile.rows, sub, dOOperands);
      for (int64_t c = 0; c < kColumnTiles; ++c) {
        Value p = probabilities(scores[c], negLse2[c]);
        if (diagonal)
          p = mask(p, sub, c,
                   [&](Value key, Value query) { return ule(key, query); });
        dS[c].push_back(scoreGradients(p, dP[c], rowDelta[c]));
      }
    }
    SmallVector<SmallVector<Value>> acc;
    for (int64_t c = 0; c < kColumnTiles; ++c)
      acc.emplace_back(carried.slice(c * accs, accs));
    accumulate(*kTile.transposed, dS, acc);
    SmallVector<Value> out;
    for (auto &a : acc)
      out.append(a);
    return out;
  };

  // Key tiles 0 .. pos0 / 64: the last (the diagonal) is the one masked.
  Value diagonal = kb.div(pos0, kRows);
  auto loop = scf::ForOp::create(b, loc, kb.idx(0), diagonal, kb.idx(1),
                                 zeros(kColumnTiles * accs));
  {
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> acc = step(kb.mul(loop.getInductionVar(), kRows),
                                  false, loop.getRegionIterArgs());
    scf::YieldOp::create(b, loc, acc);
  }
  SmallVector<Value> dqAcc = step(pos0, true, loop.getResults());
  for (int64_t c = 0; c < kColumnTiles; ++c)
    storeRows(ArrayRef<Value>(dqAcc).slice(c * accs, accs), c, dq, row0,
              gradientScale());
}

void BackwardEmitter::keys(Value q, Value k, Value v, Value lse, Value dO,
                           Value delta, Value dk, Value dv) {
  OpBuilder::InsertionGuard guard(b);
  int64_t d = s.headDim, accs = d / kMfmaTile;
  gpu::LaunchOp launch =
      open("bwd_dkdv", s.seq / kRows,
           {{kRows, d}, {d, kRows}, {kRows, d}, {d, kRows}}, 2,
           sectionHeads(s, /*keyBlocks=*/true, kRows, kRows, kResidentBlocks));
  auto shared = launch.getWorkgroupAttributions();
  Value zero = kb.idx(0);
  Staged qTile{LdsTile{shared[0], zero, kRows, d},
               LdsTile{shared[1], zero, d, kRows}};
  Staged dOTile{LdsTile{shared[2], zero, kRows, d},
                LdsTile{shared[3], zero, d, kRows}};
  Value lseShared = shared[4], deltaShared = shared[5];

  Value block = blockIndex;
  Value key0 = kb.mul(block, kRows);
  auto kOperands = waveOperands(k, key0);
  auto vOperands = waveOperands(v, key0);

  // One tile of 64 stacked query rows from row0 on; `carried` is dv's
  // [c][dt], then dk's.
  auto step = [&](Value row0, bool diagonal, ValueRange carried) {
    gpu::BarrierOp::create(b, loc); // the previous tile's reads are done
    stage(q, row0, qTile);
    stage(dO, row0, dOTile);
    kb.when(kb.lt(tid, kRows), [&] {
      Value row = kb.add(row0, tid);
      memref::StoreOp::create(b, loc, negatedLse2(lse, row), lseShared,
                              ValueRange{tid});
      memref::StoreOp::create(
          b, loc, memref::LoadOp::create(b, loc, delta, valueAt(delta, row)),
          deltaShared, ValueRange{tid});
    });
    gpu::BarrierOp::create(b, loc);
    SmallVector<SmallVector<Value>> probs(kColumnTiles), dS(kColumnTiles);
    for (int64_t sub = 0; sub < kRows / kMfmaTile; ++sub) {
      // Rows 16 sub + 4 (l / 16) + r: their lse and delta.
      Value at = kb.add(kb.mul(lane.group, 4), sub * kMfmaTile);
      Value negLse2 = vector::LoadOp::create(b, loc, vec4f32(), lseShared,
                                             ValueRange{at});
      Value rowDelta = vector::LoadOp::create(b, loc, vec4f32(), deltaShared,
                                              ValueRange{at});
      SmallVector<Value> scores = product(*qTile.rows, sub, kOperands);
      SmallVector<Value> dP = product(*dOTile.rows, sub, vOperands);
      for (int64_t c = 0; c < kColumnTiles; ++c) {
        Value p = probabilities(scores[c], negLse2);
        if (diagonal)
          p = mask(p, sub, c,
                   [&](Value query, Value key) { return ule(key, query); });
        dS[c].push_back(scoreGradients(p, dP[c], rowDelta));
        probs[c].push_back(p);
      }
    }
    SmallVector<SmallVector<Value>> dvAcc, dkAcc;
    for (int64_t c = 0; c < kColumnTiles; ++c) {
      dvAcc.emplace_back(carried.slice(c * accs, accs));
      dkAcc.emplace_back(carried.slice((kColumnTiles + c) * accs, accs));
    }
    accumulate(*dOTile.transposed, probs, dvAcc);
    accumulate(*qTile.transposed, dS, dkAcc);
    SmallVector<Value> out;
    for (auto &a : llvm::concat<SmallVector<Value>>(dvAcc, dkAcc))
      out.append(a);
    return out;
  };

  // In each group, the query tiles that see these keys: the diagonal one
  // (masked), then the rest up to seq.
  auto groups = scf::ForOp::create(b, loc, kb.idx(0), kb.idx(s.groups),
                                   kb.idx(1), zeros(2 * kColumnTiles * accs));
  {
    OpBuilder::InsertionGuard inGroups(b);
    b.setInsertionPointToStart(groups.getBody());
    Value groupRow0 = kb.mul(groups.getInductionVar(), s.seq);
    SmallVector<Value> acc = step(kb.add(groupRow0, key0), true,
                                  groups.getRegionIterArgs());
    auto rest = scf::ForOp::create(b, loc, kb.add(block, 1),
                                   kb.idx(s.seq / kRows), kb.idx(1), acc);
    {
      OpBuilder::InsertionGuard inRest(b);
      b.setInsertionPointToStart(rest.getBody());
      SmallVector<Value> next =
          step(kb.add(groupRow0, kb.mul(rest.getInductionVar(), kRows)), false,
               rest.getRegionIterArgs());
      scf::YieldOp::create(b, loc, next);
    }
    scf::YieldOp::create(b, loc, rest.getResults());
  }
  SmallVector<Value> results(groups.getResults());
  for (int64_t c = 0; c < kColumnTiles; ++c) {
    storeRows(ArrayRef<Value>(results).slice(c * accs, accs), c, dv, key0);
    storeRows(ArrayRef<Value>(results).slice((kColumnTiles + c) * accs, accs),
              c, dk, key0, gradientScale());
  }
}

SmallVector<AttentionLaunch> gfx950::emitAttentionBackward(
    OpBuilder &b, Location loc, const AttentionShape &shape, Value q, Value k,
    Value v, Value o, Value lse, Value dO, Value dq, Value dk, Value dv) {
  Value delta = memref::AllocOp::create(
      b, loc,
      MemRefType::get({shape.heads(), shape.groups * shape.seq},
                      b.getF32Type()));
  BackwardEmitter emitter(b, loc, shape);
  emitter.delta(o, dO, delta);
  emitter.queries(q, k, v, lse, dO, delta, dq);
  emitter.keys(q, k, v, lse, dO, delta, dk, dv);
  // Block i of a group (bwd_dq) walks key tiles 0 .. i, block i of the keys
  // (bwd_dkdv) query tiles i .. seq / 64 - 1 of every group: (seq / 64 + 1)
  // / 2 tiles on average.
  double mean = double(shape.seq / kRows + 1) / 2;
  for (AttentionLaunch &launch : emitter.launches) {
    if (launch.role == "bwd_dq")
      setSteadyIterations(b, launch, mean);
    else if (launch.role == "bwd_dkdv")
      setSteadyIterations(b, launch, double(shape.groups) * mean);
  }
  return emitter.launches;
}
