//===- FlashAttentionForward.cpp - fused attention forward on gfx950 ------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// FlashAttention-2's forward on `v_mfma_f32_16x16x32_bf16` (wave64), with
// the operands, rounding points and contract of the sm_90a kernel
// (AttentionToNVGPU): q, k and v are rounded to bf16 as they are loaded,
// products accumulate in f32, the online softmax is f32 and P is rounded to
// bf16 where it becomes an MFMA operand; o = P v / rowsum(P) and
// lse = max + log(sum) per query row.
//
// A block of 4 waves owns `blockRows` stacked query rows (rows r = g * seq
// + s of one (batch, KV head) pair, all in one GQA group), a wave 16 or 32
// of them (one or two 16-query tiles). Its q fragments stay in registers
// for the whole kernel. Keys come in tiles of 64 through LDS, k as rows and
// v transposed (d rows of 64 keys, Mfma.h's copies):
//
// - S^T = K Q^T: per 16-key subtile and query tile, one accumulator whose
//   lane l holds query l % 16 and keys 4 (l / 16) + i. The row maximum is a
//   maximum over the lane's 16 keys and a reduction over the 4 lanes of a
//   column (2 xor shuffles); exp2 with the 1 / sqrt(d) and log2(e) scales
//   folded into one multiply.
// - O^T += V^T P^T: two key subtiles' probabilities are directly the B
//   operand of one MFMA over 32 keys (accumulator order, Mfma.h), V^T read
//   in the same order from the transposed tile; lane l then holds query
//   l % 16, head-dim values 16 t + 4 (l / 16) + i, 4 consecutive values
//   of one o row for the store.
// - causal: the key tiles left of the block's first position are all
//   visible and walked without masks; the block's diagonal tiles (blockRows
//   / 64) mask keys after a row's position. Every row sees key 0 in its
//   first tile, so the running maximum is finite from then on.
//
// Blocks start with the longest (the last positions of a group), so that
// the short ones fill the tail of the launch.
//
//===----------------------------------------------------------------------===//

#include "FlashAttention.h"
#include "Mfma.h"

#include "mxfp4/Conversion/MXFP4ToGPUCommon/KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::kernels;
using namespace mlir::mxfp4::gfx950;

namespace {

constexpr int64_t kThreads = 256; // 4 waves
constexpr int64_t kWaves = kThreads / kWaveLanes;
constexpr int64_t kKeys = 64; // keys a step

/// Query tiles of 16 a wave: two where the sequence allows 128-row blocks
/// (each K and V fragment read from LDS then feeds two MFMAs).
int64_t queryTilesOf(const AttentionShape &s) {
  return s.seq % (2 * kMfmaTile * kWaves) == 0 ? 2 : 1;
}

class ForwardEmitter {
public:
  ForwardEmitter(OpBuilder &b, Location loc, const AttentionShape &s)
      : b(b), loc(loc), kb(b, loc), s(s), queryTiles(queryTilesOf(s)),
        blockRows(queryTiles * kMfmaTile * kWaves) {}

  AttentionLaunch emit(Value q, Value k, Value v, Value o, Value lse);

private:
  /// The running softmax state and output accumulators of one wave.
  struct State {
    SmallVector<Value> max, sum; // per query tile: this lane's column
    SmallVector<Value> out;      // [d tile][query tile]
  };
  /// One step over the 64 keys from `key0`: load them into LDS, score,
  /// update `state`. Masks keys after the query's position if `masked`.
  void step(Value k, Value v, Value key0, bool masked, State &state);
  /// `state` as loop-carried values, and back.
  SmallVector<Value> pack(const State &state) const;
  State unpack(ValueRange values) const;
  /// Runs `step` for key tiles [from, to) with the state in `state`.
  void walk(Value k, Value v, Value from, Value to, bool masked,
            State &state);

  Value f32(double x) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(x));
  }
  /// Applies `f` to each element of a vector<4xf32>.
  Value map(Value vec, function_ref<Value(Value, int64_t)> f) {
    SmallVector<Value> elements;
    for (int64_t i = 0; i < 4; ++i)
      elements.push_back(f(vector::ExtractOp::create(b, loc, vec, i), i));
    return vector::FromElementsOp::create(b, loc, vec.getType(), elements);
  }
  Value maxF(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value exp2(Value x) { return math::Exp2Op::create(b, loc, x); }

  OpBuilder &b;
  Location loc;
  KernelBuilder kb;
  const AttentionShape &s;
  int64_t queryTiles, blockRows;
  // Set by emit().
  Value tid, batchIndex, kvHead, wave;
  MfmaLane lane;
  LdsTile kTile, vTile;
  /// q fragments: [query tile][32 head-dim values].
  SmallVector<SmallVector<Value>> qFrags;
  /// This lane's query position in each query tile.
  SmallVector<Value> positions;
};

} // namespace

SmallVector<Value> ForwardEmitter::pack(const State &state) const {
  SmallVector<Value> values(state.max);
  values.append(state.sum);
  values.append(state.out);
  return values;
}

ForwardEmitter::State ForwardEmitter::unpack(ValueRange values) const {
  State state;
  state.max.assign(values.begin(), values.begin() + queryTiles);
  state.sum.assign(values.begin() + queryTiles,
                   values.begin() + 2 * queryTiles);
  state.out.assign(values.begin() + 2 * queryTiles, values.end());
  return state;
}

void ForwardEmitter::walk(Value k, Value v, Value from, Value to, bool masked,
                          State &state) {
  auto loop = scf::ForOp::create(b, loc, from, to, kb.idx(1), pack(state));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  State carried = unpack(loop.getRegionIterArgs());
  step(k, v, kb.mul(loop.getInductionVar(), kKeys), masked, carried);
  scf::YieldOp::create(b, loc, pack(carried));
  b.setInsertionPointAfter(loop);
  state = unpack(loop.getResults());
}

void ForwardEmitter::step(Value k, Value v, Value key0, bool masked,
                          State &state) {
  int64_t d = s.headDim;
  // The previous step's LDS reads are done before the tiles are replaced.
  gpu::BarrierOp::create(b, loc);
  auto keyRow = [&](Value r, Value col) -> SmallVector<Value> {
    return {batchIndex, kb.add(key0, r), kvHead, col};
  };
  copyRowsToLds(kb, k, keyRow, kTile, tid, kThreads);
  copyRowsToLdsTransposed(kb, v, keyRow, vTile, kKeys, d, tid, kThreads);
  gpu::BarrierOp::create(b, loc);

  // Scores, scaled for exp2: scores[kt][qt].
  double scale = M_LOG2E / std::sqrt(static_cast<double>(d));
  Value scaleValue = f32(scale);
  Value negInf = f32(-std::numeric_limits<double>::infinity());
  SmallVector<SmallVector<Value>> scores(kKeys / kMfmaTile);
  for (int64_t kt = 0; kt < kKeys / kMfmaTile; ++kt) {
    SmallVector<Value> acc(queryTiles, zeroAccumulator(kb));
    for (int64_t ks = 0; ks < d / kMfmaK; ++ks) {
      Value a = loadOperand(kb, kTile, lane, kb.idx(kt * kMfmaTile),
                            kb.idx(ks * kMfmaK));
      for (int64_t qt = 0; qt < queryTiles; ++qt)
        acc[qt] = mfma(kb, a, qFrags[qt][ks], acc[qt]);
    }
    Value laneKey = kb.add(key0, kb.add(kb.mul(lane.group, 4), kt * kMfmaTile));
    for (int64_t qt = 0; qt < queryTiles; ++qt)
      acc[qt] = map(acc[qt], [&](Value x, int64_t i) -> Value {
        Value scaled = arith::MulFOp::create(b, loc, x, scaleValue);
        if (!masked)
          return scaled;
        Value visible =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                  kb.add(laneKey, i), positions[qt]);
        return arith::SelectOp::create(b, loc, visible, scaled, negInf);
      });
    scores[kt] = acc;
  }

  for (int64_t qt = 0; qt < queryTiles; ++qt) {
    Value blockMax;
    for (auto &tile : scores)
      for (int64_t i = 0; i < 4; ++i) {
        Value x = vector::ExtractOp::create(b, loc, tile[qt], i);
        blockMax = blockMax ? maxF(blockMax, x) : x;
      }
    blockMax = reduceOverColumn(kb, blockMax, /*isMax=*/true);
    Value newMax = maxF(state.max[qt], blockMax);
    Value correction =
        exp2(arith::SubFOp::create(b, loc, state.max[qt], newMax));
    Value partial;
    for (auto &tile : scores) {
      tile[qt] = map(tile[qt], [&](Value x, int64_t) -> Value {
        Value p = exp2(arith::SubFOp::create(b, loc, x, newMax));
        partial = partial ? arith::AddFOp::create(b, loc, partial, p)
                                .getResult()
                          : p;
        return p;
      });
    }
    // This lane's share of the row sum; the four lanes of a column add up
    // once at the end (the correction is the same for all of them).
    state.sum[qt] = arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, state.sum[qt], correction),
        partial);
    state.max[qt] = newMax;
    Value splat = vector::BroadcastOp::create(
        b, loc, VectorType::get({4}, b.getF32Type()), correction);
    for (int64_t dt = 0; dt < d / kMfmaTile; ++dt) {
      Value &acc = state.out[dt * queryTiles + qt];
      acc = arith::MulFOp::create(b, loc, acc, splat);
    }
  }

  for (int64_t ks = 0; ks < kKeys / kMfmaK; ++ks) {
    SmallVector<Value> probs;
    for (int64_t qt = 0; qt < queryTiles; ++qt)
      probs.push_back(accumulatorsAsOperand(kb, scores[2 * ks][qt],
                                            scores[2 * ks + 1][qt]));
    for (int64_t dt = 0; dt < d / kMfmaTile; ++dt) {
      Value a = loadOperandInAccumulatorOrder(
          kb, vTile, lane, kb.idx(dt * kMfmaTile), kb.idx(ks * kMfmaK));
      for (int64_t qt = 0; qt < queryTiles; ++qt) {
        Value &acc = state.out[dt * queryTiles + qt];
        acc = mfma(kb, a, probs[qt], acc);
      }
    }
  }
}

AttentionLaunch ForwardEmitter::emit(Value q, Value k, Value v, Value o,
                                     Value lse) {
  OpBuilder::InsertionGuard guard(b);
  MLIRContext *ctx = b.getContext();
  int64_t d = s.headDim;
  int64_t blocks = s.groups * s.seq / blockRows;
  int64_t section =
      sectionHeads(s, /*keyBlocks=*/false, blockRows, kKeys, kResidentBlocks);
  Type bf16 = b.getBF16Type();
  SmallVector<Type> shared = {
      workgroupBuffer(ctx, LdsTile::elements(kKeys, d), bf16),
      workgroupBuffer(ctx, LdsTile::elements(d, kKeys), bf16)};
  Value one = kb.idx(1);
  auto launch = gpu::LaunchOp::create(
      b, loc, kb.idx(section), kb.idx(blocks), kb.idx(s.heads() / section),
      kb.idx(kThreads), one, one, /*dynamicSharedMemorySize=*/Value(),
      /*asyncTokenType=*/Type(),
      /*asyncDependencies=*/ValueRange(), shared);
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&body);

  tid = launch.getThreadIds().x;
  Value head =
      kb.add(kb.mul(launch.getBlockIds().z, section), launch.getBlockIds().x);
  batchIndex = kb.div(head, s.kvHeads);
  kvHead = kb.rem(head, s.kvHeads);
  wave = kb.div(tid, kWaveLanes);
  lane = getMfmaLane(kb, kb.rem(tid, kWaveLanes));
  Value zero = kb.idx(0);
  auto workgroup = launch.getWorkgroupAttributions();
  kTile = LdsTile{workgroup[0], zero, kKeys, d};
  vTile = LdsTile{workgroup[1], zero, d, kKeys};

  // The longest blocks (last positions) first (see sectionHeads).
  Value blockIndex =
      arith::SubIOp::create(b, loc, kb.idx(blocks - 1), launch.getBlockIds().y);
  Value row0 = kb.mul(blockIndex, blockRows);
  Value group = kb.div(row0, s.seq);
  Value pos0 = kb.rem(row0, s.seq);
  Value queryHead = kb.add(kb.mul(kvHead, s.groups), group);
  Value wavePos = kb.add(pos0, kb.mul(wave, queryTiles * kMfmaTile));
  for (int64_t qt = 0; qt < queryTiles; ++qt) {
    Value pos = kb.add(wavePos, kb.add(lane.row, qt * kMfmaTile));
    positions.push_back(pos);
    SmallVector<Value> frags;
    for (int64_t ks = 0; ks < d / kMfmaK; ++ks)
      frags.push_back(loadAsBf16(
          kb, q,
          {batchIndex, pos, queryHead,
           kb.add(kb.mul(lane.group, kOperandElements), ks * kMfmaK)},
          kOperandElements));
    qFrags.push_back(frags);
  }

  State state;
  state.max.assign(queryTiles, f32(-std::numeric_limits<double>::infinity()));
  state.sum.assign(queryTiles, f32(0));
  state.out.assign(d / kMfmaTile * queryTiles, zeroAccumulator(kb));
  Value firstDiagonal = kb.div(pos0, kKeys);
  walk(k, v, zero, firstDiagonal, /*masked=*/false, state);
  walk(k, v, firstDiagonal, kb.add(firstDiagonal, blockRows / kKeys),
       /*masked=*/true, state);

  Type outType = cast<MemRefType>(o.getType()).getElementType();
  auto quad = VectorType::get({4}, b.getF32Type());
  for (int64_t qt = 0; qt < queryTiles; ++qt) {
    Value sum = reduceOverColumn(kb, state.sum[qt], /*isMax=*/false);
    Value inverse = arith::DivFOp::create(b, loc, f32(1), sum);
    Value splat = vector::BroadcastOp::create(b, loc, quad, inverse);
    for (int64_t dt = 0; dt < d / kMfmaTile; ++dt) {
      Value x = arith::MulFOp::create(b, loc, state.out[dt * queryTiles + qt],
                                      splat);
      if (!outType.isF32())
        x = arith::TruncFOp::create(b, loc, VectorType::get({4}, outType), x);
      Value col = kb.add(kb.mul(lane.group, 4), dt * kMfmaTile);
      vector::StoreOp::create(b, loc, x, o,
                              ValueRange{batchIndex, positions[qt], queryHead,
                                         col});
    }
    // lse = ln(sum_k e^(s_k / sqrt d)) = (max + log2(sum)) ln 2, the max
    // in the exp2 domain; lanes 0..15 hold the 16 queries.
    kb.when(kb.lt(lane.lane, kMfmaTile), [&] {
      Value log2Sum = math::Log2Op::create(b, loc, sum);
      Value value = arith::MulFOp::create(
          b, loc, arith::AddFOp::create(b, loc, state.max[qt], log2Sum),
          f32(M_LN2));
      memref::StoreOp::create(b, loc, value, lse,
                              ValueRange{batchIndex, queryHead, positions[qt]});
    });
  }
  AttentionLaunch result;
  result.launch = launch;
  result.role = "fwd";
  // Block i of a group starts at position i * blockRows and walks i *
  // blockRows / 64 unmasked tiles, then blockRows / 64 diagonal ones.
  int64_t perGroup = s.seq / blockRows;
  setSteadyIterations(b, result,
                      double(blockRows / kKeys) * double(perGroup + 1) / 2);
  return result;
}

bool gfx950::isSupported(const AttentionShape &shape) {
  // A head's blocks run along the grid's y and sections of heads along z,
  // at most 65535 of each; the delta kernel has the most blocks, 16 query
  // rows or more a block.
  constexpr int64_t kMaxGridY = 65535;
  return shape.seq % kKeys == 0 && shape.groups * shape.seq / 16 <= kMaxGridY &&
         shape.heads() <= kMaxGridY &&
         (shape.headDim == 64 || shape.headDim == 128) && shape.groups >= 1 &&
         shape.batch >= 1 && shape.kvHeads >= 1;
}

SmallVector<AttentionLaunch>
gfx950::emitAttentionForward(OpBuilder &b, Location loc,
                             const AttentionShape &shape, Value q, Value k,
                             Value v, Value o, Value lse) {
  return {ForwardEmitter(b, loc, shape).emit(q, k, v, o, lse)};
}
