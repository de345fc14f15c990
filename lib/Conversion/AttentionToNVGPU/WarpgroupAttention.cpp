//===- WarpgroupAttention.cpp - attention on warpgroup MMAs ---------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The attention kernels for bf16 operands at head dims 64 and 128, on
// warpgroup MMAs (WarpgroupMma.h). A block is one warpgroup owning 64
// rows; its tiles arrive by TMA in the 128-byte swizzled layout (boxes of
// 128 bytes of d, the tensor maps made on the host) in dynamic shared
// memory, two stages of the walked tiles under mbarriers, and thread 0
// issues the next step's loads while the warpgroup computes on this
// step's. The products whose operands are tiles (scores, dP) read both
// from shared memory; those that take probabilities or score gradients
// (o, dq, dk, dv) take them from registers as A and read the walked tile
// N-major (d its N), so nothing is transposed in memory. The forward walks
// 128 keys a step at head dim 64 and 64 at 128; the backward kernels 64
// keys or query rows. The wgmma accumulators are mma.sync's C fragments
// (warp w holding rows 16w .. 16w + 15), so the softmax, masks and stores
// are the Emitter's.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "mxfp4/Conversion/NVGPUCommon/WarpgroupMma.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::kernels;
using namespace mlir::mxfp4::sm90;
using namespace mlir::mxfp4::sm90::attention;

Value Emitter::tensorMap(Value buffer, int64_t rows) {
  return createTensorMap(kb, buffer, {1, rows, 1, 64});
}

void Emitter::loadRows(Value map, int64_t rows, Value h, Value pos0, Value dest,
                       Value barrier) {
  for (int64_t box = 0; box < s.headDim / 64; ++box)
    loadTensorTile(kb, map, {kb.idx(64 * box), h, pos0, batchIndex},
                   kb.add(dest, box * rows * 128), barrier);
}

Value Emitter::stageTile(const KeyStages &st, int64_t which, Value stage) {
  return kb.add(kb.add(st.base, st.tilesAt + which * 2 * st.tileBytes),
                kb.mul(stage, st.tileBytes));
}

Value Emitter::stageBarrier(const KeyStages &st, int64_t which, Value stage) {
  return kb.add(kb.add(st.barriers, 8 + which * 16), kb.mul(stage, 8));
}

void Emitter::initKeyStages(const KeyStages &st) {
  for (int64_t stage = 0; stage < 2; ++stage)
    for (int64_t which = 0; which < 2; ++which)
      initBarrierAt(kb, stageBarrier(st, which, kb.idx(stage)), 1);
}

void Emitter::loadKeyStage(const KeyStages &st, Value block, Value stage) {
  Value key0 = kb.mul(block, st.keys);
  for (int64_t which = 0; which < 2; ++which) {
    Value barrier = stageBarrier(st, which, stage);
    arriveExpectingBytesAt(kb, barrier, st.tileBytes);
    loadRows(which ? st.vMap : st.kMap, st.keys, kvHead, key0,
             stageTile(st, which, stage), barrier);
  }
}

std::pair<Value, Value> Emitter::beginKeyStep(const KeyStages &st, Value block,
                                              Value lastBlock, Value first) {
  Value stage = kb.rem(block, 2), parity = kb.rem(kb.div(block, 2), 2);
  // Every warp is done with the previous step's stage (its MMAs have
  // completed): the next block's loads may overwrite it.
  gpu::BarrierOp::create(b, loc);
  kb.when(kb.andI(first, kb.lt(block, lastBlock)), [&] {
    loadKeyStage(st, kb.add(block, 1),
                 arith::SubIOp::create(b, loc, kb.idx(1), stage));
  });
  waitAt(kb, stageBarrier(st, 0, stage), parity);
  return {stage, parity};
}

Value Emitter::kMajorSlice(Value base, int64_t rows, int64_t kk) {
  return swizzledDescriptor(kb,
                            kb.add(base, (kk / 4) * rows * 128 + (kk % 4) * 32),
                            /*kMajor=*/true);
}

SmallVector<Value> Emitter::nMajorSlices(Value base, int64_t rows) {
  SmallVector<Value> slices;
  for (int64_t kk = 0; kk < rows / 16; ++kk)
    slices.push_back(swizzledDescriptor(kb, kb.add(base, kk * 2048),
                                        /*kMajor=*/false, rows * 128));
  return slices;
}

Value Emitter::productFromShared(Value a, Value bTile, int64_t n) {
  SmallVector<std::pair<Value, Value>> slices;
  for (int64_t kk = 0; kk < s.headDim / 16; ++kk)
    slices.push_back({kMajorSlice(a, kRows, kk), kMajorSlice(bTile, n, kk)});
  return issueWarpgroupMmas(kb, slices, n, /*aKMajor=*/true, /*bKMajor=*/true,
                            sm90::zeroAccumulators(kb, n));
}

Value Emitter::accumulateFromRegisters(ArrayRef<Value> p, Value bTile,
                                       int64_t rows, Value acc) {
  SmallVector<Value> regs;
  for (size_t kk = 0; kk + 1 < p.size(); kk += 2)
    llvm::append_range(regs, accumulatorsAsA(kb, p[kk], p[kk + 1]));
  return issueWarpgroupMmasRegisterA(kb, regs, nMajorSlices(bTile, rows),
                                     s.headDim, /*bKMajor=*/false, acc);
}

Value Emitter::loadShared(Value address) {
  return LLVM::LoadOp::create(b, loc, b.getF32Type(),
                              sharedPointer(kb, address));
}

void Emitter::forwardWarpgroup(Value q, Value k, Value v, Value o, Value lse) {
  OpBuilder::InsertionGuard guard(b);
  int64_t keys = forwardKeys();
  int64_t qBytes = kRows * s.headDim * 2, kvBytes = keys * s.headDim * 2;
  Value qMap = tensorMap(q, kRows), kMap = tensorMap(k, keys),
        vMap = tensorMap(v, keys);
  // q, k's two stages, v's two, from a 1024-byte boundary (the swizzle's
  // period); then the mbarriers: q's, k's two, v's two.
  int64_t barriersAt = qBytes + 4 * kvBytes;
  // Three blocks an SM at head dim 64, two at 128 (shared memory).
  open("fwd", queryRows() / kRows, 0, 0, 0, 1024 + barriersAt + 5 * 8,
       sectionHeads(/*keyBlocks=*/false, keys, s.headDim == 64 ? 3 : 2));
  Value qBase = swizzleAlignedSharedBase(kb);
  Value qBarrier = kb.add(qBase, barriersAt);
  KeyStages keyStages{kMap, vMap, qBase, qBytes, qBarrier, keys, kvBytes};
  QueryBlock queries = queryBlock();
  Value pos0 = queries.pos0, row0 = queries.row0, qHead = queries.qHead;
  Value zero = kb.idx(0), one = kb.idx(1);
  Value first = kb.lt(tid, 1);
  kb.when(first, [&] {
    initBarrierAt(kb, qBarrier, 1);
    initKeyStages(keyStages);
  });
  gpu::BarrierOp::create(b, loc);
  // Keys 0 .. pos0 + 63 in blocks of `keys`: the last crosses the diagonal.
  Value lastBlock = kb.div(pos0, keys);
  kb.when(first, [&] {
    arriveExpectingBytesAt(kb, qBarrier, qBytes);
    loadRows(qMap, kRows, qHead, pos0, qBase, qBarrier);
    loadKeyStage(keyStages, zero, zero);
  });
  Value warpPos = kb.add(pos0, kb.mul(warp, kWarpRows));
  std::array<Value, 2> pos = {kb.add(warpPos, g),
                              kb.add(warpPos, kb.add(g, 8))};
  Value negInf = f32(-std::numeric_limits<double>::infinity());
  waitAt(kb, qBarrier, zero);
  auto loop = scf::ForOp::create(b, loc, zero, kb.add(lastBlock, 1), one,
                                 forwardInits());
  {
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPointToStart(loop.getBody());
    auto carried = loop.getRegionIterArgs();
    Value block = loop.getInductionVar();
    Value key0 = kb.mul(block, keys);
    auto [stage, parity] = beginKeyStep(keyStages, block, lastBlock, first);
    Value acc = productFromShared(qBase, stageTile(keyStages, 0, stage), keys);
    waitWarpgroupMmas(kb, 0);
    SmallVector<Value> scores =
        maskCausal(eq(block, lastBlock), accumulatorFragments(kb, acc, keys),
                   pos, key0, /*keyRows=*/false, negInf);
    SmallVector<Value> yielded = onlineSoftmax(carried, scores);
    waitAt(kb, stageBarrier(keyStages, 1, stage), parity);
    Value out = accumulateFromRegisters(
        scores, stageTile(keyStages, 1, stage), keys,
        accumulatorStruct(kb, ArrayRef<Value>(yielded).drop_front(4)));
    waitWarpgroupMmas(kb, 0);
    yielded.resize(4);
    yielded.append(accumulatorFragments(kb, out, s.headDim));
    scf::YieldOp::create(b, loc, yielded);
  }
  storeForward(loop.getResults(), row0, o, lse);
}

void Emitter::backwardQueriesWarpgroup(Value q, Value k, Value v, Value lse,
                                       Value dO, Value delta, Value dq) {
  OpBuilder::InsertionGuard guard(b);
  int64_t keys = kRows, tileBytes = kRows * s.headDim * 2;
  Value qMap = tensorMap(q, kRows), dOMap = tensorMap(dO, kRows),
        kMap = tensorMap(k, keys), vMap = tensorMap(v, keys);
  // q, dO, k's two stages, v's two; then the mbarriers: q and dO's, k's
  // two, v's two.
  int64_t barriersAt = 6 * tileBytes;
  // Four blocks an SM at head dim 64, two at 128 (shared memory).
  open("bwd_dq", queryRows() / kRows, 0, 0, 0, 1024 + barriersAt + 5 * 8,
       sectionHeads(/*keyBlocks=*/false, keys, s.headDim == 64 ? 4 : 2));
  Value qBase = swizzleAlignedSharedBase(kb), dOBase = kb.add(qBase, tileBytes);
  Value qBarrier = kb.add(qBase, barriersAt);
  KeyStages keyStages{kMap,     vMap, qBase,    2 * tileBytes,
                      qBarrier, keys, tileBytes};
  QueryBlock queries = queryBlock();
  Value pos0 = queries.pos0, row0 = queries.row0, qHead = queries.qHead;
  Value zero = kb.idx(0), one = kb.idx(1);
  Value first = kb.lt(tid, 1);
  kb.when(first, [&] {
    initBarrierAt(kb, qBarrier, 1);
    initKeyStages(keyStages);
  });
  gpu::BarrierOp::create(b, loc);
  kb.when(first, [&] {
    arriveExpectingBytesAt(kb, qBarrier, 2 * tileBytes);
    loadRows(qMap, kRows, qHead, pos0, qBase, qBarrier);
    loadRows(dOMap, kRows, qHead, pos0, dOBase, qBarrier);
    loadKeyStage(keyStages, zero, zero);
  });
  ThreadRows rows = threadRows(queries, lse, delta);
  const std::array<Value, 2> &pos = rows.pos, &rowLse = rows.lse2,
                             &rowDelta = rows.delta;
  Value lastBlock = kb.div(pos0, keys);
  waitAt(kb, qBarrier, zero);
  auto loop = scf::ForOp::create(b, loc, zero, kb.add(lastBlock, 1), one,
                                 zeroAccumulators(s.headDim / 8));
  {
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPointToStart(loop.getBody());
    Value block = loop.getInductionVar();
    Value key0 = kb.mul(block, keys);
    auto [stage, parity] = beginKeyStep(keyStages, block, lastBlock, first);
    Value scores =
        productFromShared(qBase, stageTile(keyStages, 0, stage), keys);
    waitAt(kb, stageBarrier(keyStages, 1, stage), parity);
    Value dP = productFromShared(dOBase, stageTile(keyStages, 1, stage), keys);
    waitWarpgroupMmas(kb, 0);
    SmallVector<Value> probs = accumulatorFragments(kb, scores, keys);
    mapElements(probs, [&](Value x, Value, Value, int64_t half) {
      return probability(x, rowLse[half]);
    });
    Value zeroF = f32(0);
    probs = maskCausal(eq(block, lastBlock), probs, pos, key0,
                       /*keyRows=*/false, zeroF);
    SmallVector<Value> dS = accumulatorFragments(kb, dP, keys);
    mapElements(dS, [&](Value x, Value, Value, int64_t half) {
      return sub(x, rowDelta[half]);
    });
    scoreGradients(dS, probs);
    // dq += dS k, k's rows the product's K.
    Value acc = accumulateFromRegisters(
        dS, stageTile(keyStages, 0, stage), keys,
        accumulatorStruct(kb, SmallVector<Value>(loop.getRegionIterArgs())));
    waitWarpgroupMmas(kb, 0);
    scf::YieldOp::create(b, loc, accumulatorFragments(kb, acc, s.headDim));
  }
  storeRows(SmallVector<Value>(loop.getResults()), dq, row0, {});
}

void Emitter::backwardKeysWarpgroup(Value q, Value k, Value v, Value lse,
                                    Value dO, Value delta, Value dk, Value dv) {
  OpBuilder::InsertionGuard guard(b);
  int64_t rows = kRows, tileBytes = kRows * s.headDim * 2,
          vectorBytes = rows * 4;
  Value qMap = tensorMap(q, rows), dOMap = tensorMap(dO, rows),
        kMap = tensorMap(k, kRows), vMap = tensorMap(v, kRows);
  // k, v, then two stages of the walked q and dO tiles; two stages of the
  // lse and delta vectors; the mbarriers: k and v's, the stages' two.
  int64_t vectorsAt = 6 * tileBytes, barriersAt = vectorsAt + 4 * vectorBytes;
  // At head dim 64 ptxas takes 204 registers, two blocks an SM; held to
  // three (168, 12 bytes spilled) the backward at llama3.2-1b's shape runs
  // 3% faster on an H100 (docs/performance.md). At 128 the tiles (96 KiB)
  // allow two.
  int64_t blocksPerSM = s.headDim == 64 ? 3 : 2;
  open("bwd_dkdv", s.seq / kRows, 0, 0, s.headDim == 64 ? blocksPerSM : 0,
       1024 + barriersAt + 3 * 8,
       sectionHeads(/*keyBlocks=*/true, rows, blocksPerSM));
  Value kBase = swizzleAlignedSharedBase(kb), vBase = kb.add(kBase, tileBytes);
  auto qBase = [&](Value stage) {
    return kb.add(kb.add(kBase, 2 * tileBytes), kb.mul(stage, 2 * tileBytes));
  };
  auto dOBase = [&](Value stage) { return kb.add(qBase(stage), tileBytes); };
  auto lseBase = [&](Value stage) {
    return kb.add(kb.add(kBase, vectorsAt), kb.mul(stage, 2 * vectorBytes));
  };
  auto deltaBase = [&](Value stage) {
    return kb.add(lseBase(stage), vectorBytes);
  };
  Value kvBarrier = kb.add(kBase, barriersAt);
  auto stageBarrier = [&](Value stage) {
    return kb.add(kb.add(kvBarrier, 8), kb.mul(stage, 8));
  };
  Value block = blockIndex;
  KeyWalk walk = keyWalk();
  Value key0 = walk.key0, steps = walk.steps;
  Value zero = kb.idx(0), one = kb.idx(1);
  Value first = kb.lt(tid, 1);
  kb.when(first, [&] {
    initBarrierAt(kb, kvBarrier, 1);
    for (Value stage : {zero, one})
      initBarrierAt(kb, stageBarrier(stage), 1);
  });
  gpu::BarrierOp::create(b, loc);
  auto loadStep = [&](Value i, Value stage) {
    auto [group, posBlock] = keyStep(walk, i);
    Value pos0 = kb.mul(posBlock, rows);
    Value row0 = kb.add(kb.mul(group, s.seq), pos0);
    Value qHead = kb.add(kb.mul(kvHead, s.groups), group);
    Value barrier = stageBarrier(stage);
    arriveExpectingBytesAt(kb, barrier, 2 * tileBytes + 2 * vectorBytes);
    loadRows(qMap, rows, qHead, pos0, qBase(stage), barrier);
    loadRows(dOMap, rows, qHead, pos0, dOBase(stage), barrier);
    copyToSharedAt(kb, barrier, lseBase(stage),
                   globalPointer(lse, valueAt(lse, row0)), vectorBytes);
    copyToSharedAt(kb, barrier, deltaBase(stage),
                   globalPointer(delta, valueAt(delta, row0)), vectorBytes);
  };
  kb.when(first, [&] {
    arriveExpectingBytesAt(kb, kvBarrier, 2 * tileBytes);
    loadRows(kMap, kRows, kvHead, key0, kBase, kvBarrier);
    loadRows(vMap, kRows, kvHead, key0, vBase, kvBarrier);
    loadStep(zero, zero);
  });
  Value warpKey = kb.add(key0, kb.add(kb.mul(warp, kWarpRows), g));
  std::array<Value, 2> keyPos = {warpKey, kb.add(warpKey, 8)};
  waitAt(kb, kvBarrier, zero);
  SmallVector<Value> inits = zeroAccumulators(s.headDim / 4);
  auto loop = scf::ForOp::create(b, loc, zero, steps, one, inits);
  {
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    Value posBlock = keyStep(walk, i).second;
    Value pos0 = kb.mul(posBlock, rows);
    Value stage = kb.rem(i, 2), parity = kb.rem(kb.div(i, 2), 2);
    // Every warp is done with the previous step's stage.
    gpu::BarrierOp::create(b, loc);
    kb.when(kb.andI(first, kb.lt(kb.add(i, 1), steps)), [&] {
      loadStep(kb.add(i, 1), arith::SubIOp::create(b, loc, one, stage));
    });
    waitAt(kb, stageBarrier(stage), parity);
    // Transposed: rows are keys, columns query rows.
    Value scoresT = productFromShared(kBase, qBase(stage), rows);
    Value dPT = productFromShared(vBase, dOBase(stage), rows);
    waitWarpgroupMmas(kb, 0);
    // A column's lse (base 2) and delta, read once for both halves.
    SmallVector<Value> colLse2, colDelta;
    for (int64_t ni = 0; ni < rows / 8; ++ni)
      for (int64_t e = 0; e < 2; ++e) {
        Value col = kb.add(kb.mul(t, 2), ni * 8 + e);
        colLse2.push_back(mulF(
            loadShared(kb.add(lseBase(stage), kb.mul(col, 4))), f32(M_LOG2E)));
        colDelta.push_back(
            loadShared(kb.add(deltaBase(stage), kb.mul(col, 4))));
      }
    auto byColumn = [&](SmallVectorImpl<Value> &acc, ArrayRef<Value> values,
                        function_ref<Value(Value, Value)> f) {
      auto type = VectorType::get({4}, b.getF32Type());
      for (auto [ni, vec] : llvm::enumerate(acc)) {
        SmallVector<Value> elements;
        for (int64_t e = 0; e < 4; ++e)
          elements.push_back(f(vector::ExtractOp::create(b, loc, vec, e),
                               values[2 * ni + e % 2]));
        vec = vector::FromElementsOp::create(b, loc, type, elements);
      }
    };
    SmallVector<Value> probsT = accumulatorFragments(kb, scoresT, rows);
    byColumn(probsT, colLse2,
             [&](Value x, Value lse2) { return probability(x, lse2); });
    Value zeroF = f32(0);
    probsT = maskCausal(eq(posBlock, block), probsT, keyPos, pos0,
                        /*keyRows=*/true, zeroF);
    SmallVector<Value> dST = accumulatorFragments(kb, dPT, rows);
    byColumn(dST, colDelta, [&](Value x, Value d) { return sub(x, d); });
    scoreGradients(dST, probsT);
    auto carried = loop.getRegionIterArgs();
    int64_t accs = s.headDim / 8;
    // dv += P^T dO, dk += dS^T q: the walked tiles' rows are the K.
    Value dvAcc = accumulateFromRegisters(
        probsT, dOBase(stage), rows,
        accumulatorStruct(kb, SmallVector<Value>(carried.take_front(accs))));
    Value dkAcc = accumulateFromRegisters(
        dST, qBase(stage), rows,
        accumulatorStruct(kb, SmallVector<Value>(carried.drop_front(accs))));
    waitWarpgroupMmas(kb, 0);
    SmallVector<Value> next = accumulatorFragments(kb, dvAcc, s.headDim);
    next.append(accumulatorFragments(kb, dkAcc, s.headDim));
    scf::YieldOp::create(b, loc, next);
  }
  auto results = loop.getResults();
  int64_t accs = s.headDim / 8;
  storeRows(SmallVector<Value>(results.take_front(accs)), dv, key0, {});
  storeRows(SmallVector<Value>(results.drop_front(accs)), dk, key0, {});
}
