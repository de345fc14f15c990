//===- FlashAttention.cpp - fused causal attention on Hopper --------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// FlashAttention-2 on `mma.sync` (TensorCore.h): a block of 4 warps owns 64
// rows (16 a warp) and walks 64-row tiles of the other operand through
// shared memory, converted from f32 to bf16 on the way in (PyTorch's
// autocast rounding); products accumulate in f32 and the softmax is f32,
// in base 2 as FlashAttention computes it: scores scaled by log2(e) /
// sqrt(d), exp2 (one MUFU.EX2 an element) and lse converted back to base e.
// A product's accumulators are the next MMA's A operand in registers, so
// scores and probabilities never leave the warp.
//
// - Forward: per 64 query rows, keys in steps of 64 up to the diagonal,
//   with the online softmax (running row maximum and sum, rescaling the
//   output); writes o and lse = max + log(sum).
// - Backward, deterministic (no atomics): a row-dot kernel
//   delta = rowsum(dO * o), up to 8 threads a row; a query kernel that
//   recomputes P = exp(s - lse) and accumulates dq = dS k over the keys; a
//   key kernel that, per 64 keys, walks every query row that sees them (all
//   stacked GQA groups) and accumulates dv = P^T dO and dk = dS^T q.
//   dS = P * (dP - delta) / sqrt(d). Above head dim 64 the key kernel's
//   registers (both accumulators and both operands' fragments) would not
//   fit: there one key kernel accumulates dv and another, recomputing P,
//   dk.
//
// A tile whose rows become A fragments in registers (q, dO; k, v in the
// key kernels) is staged in a buffer that the loop then reuses for the
// tiles it walks: two 64-row tiles of shared memory a kernel, 34 KiB at
// head dim 128, within the 48 KiB of static shared memory.
//
// The forward and query kernels at head dim 64 load the next step's bf16
// k and v tiles into registers while they compute on this step's, so a
// step's barriers wait on shared-memory stores rather than on global
// memory. The key kernel has no registers to spare for that: at head dim
// 64 it double-buffers q and dO in shared memory instead and `cp.async`
// fills the buffers of the next step while it computes on this one's. The
// causal mask (a compare and select an element) applies only on the step
// whose tiles cross the diagonal.
//
// These kernels take what the warpgroup kernels (WarpgroupAttention.cpp)
// do not: f32 operands, and head dims other than 64 and 128.
//
//===----------------------------------------------------------------------===//

#include "FlashAttention.h"
#include "Emitter.h"

#include "mxfp4/Conversion/NVGPUCommon/TensorCore.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::kernels;
using namespace mlir::mxfp4::sm90;
using namespace mlir::mxfp4::sm90::attention;

// 8 contiguous elements a thread per chunk, consecutive threads
// consecutive chunks: coalesced reads, 16-byte shared stores. f32 is
// rounded on the way, bf16 stored as it is.
SmallVector<Value> Emitter::fetchTile(Value src, Value row0) {
  int64_t chunksPerRow = s.headDim / 8;
  Type srcType = cast<MemRefType>(src.getType()).getElementType();
  SmallVector<Value> fetched;
  for (int64_t i = 0; i < kRows * chunksPerRow / kThreads; ++i) {
    Value chunk = kb.add(tid, i * kThreads);
    Value row = kb.div(chunk, chunksPerRow);
    Value col = kb.mul(kb.rem(chunk, chunksPerRow), 8);
    fetched.push_back(vector::LoadOp::create(
        b, loc, VectorType::get({8}, srcType), src, rowAt(src, row0, row, col),
        /*nontemporal=*/false,
        llvm::MaybeAlign(8 * srcType.getIntOrFloatBitWidth() / 8)));
  }
  return fetched;
}

void Emitter::storeTile(ArrayRef<Value> fetched, Value tile) {
  int64_t chunksPerRow = s.headDim / 8;
  SharedTile view = rowsTile(tile);
  auto bf16x8 = VectorType::get({8}, b.getBF16Type());
  for (auto [i, loaded] : llvm::enumerate(fetched)) {
    Value chunk = kb.add(tid, static_cast<int64_t>(i) * kThreads);
    Value row = kb.div(chunk, chunksPerRow);
    Value col = kb.mul(kb.rem(chunk, chunksPerRow), 8);
    Value h = loaded;
    if (!cast<VectorType>(h.getType()).getElementType().isBF16())
      h = arith::TruncFOp::create(b, loc, bf16x8, h);
    vector::StoreOp::create(b, loc, h, tile,
                            ValueRange{view.offset(kb, row, col)},
                            /*nontemporal=*/false, llvm::MaybeAlign(16));
  }
}

void Emitter::copyTileAsync(Value src, Value row0, Value tile) {
  int64_t chunksPerRow = s.headDim / 8;
  SharedTile view = rowsTile(tile);
  for (int64_t i = 0; i < kRows * chunksPerRow / kThreads; ++i) {
    Value chunk = kb.add(tid, i * kThreads);
    Value row = kb.div(chunk, chunksPerRow);
    Value col = kb.mul(kb.rem(chunk, chunksPerRow), 8);
    Value global = globalPointer(src, rowAt(src, row0, row, col));
    Value shared =
        sharedPointer(kb, sharedAddress(kb, tile, view.offset(kb, row, col)));
    NVVM::CpAsyncOp::create(
        b, loc, shared, global, b.getI32IntegerAttr(16),
        NVVM::LoadCacheModifierKindAttr::get(b.getContext(),
                                             NVVM::LoadCacheModifierKind::CG),
        Value());
  }
}

SmallVector<Value> Emitter::stepKeyValues(bool prefetch, ValueRange fetched,
                                          Value k, Value v, Value block,
                                          Value lastBlock, Value kTile,
                                          Value vTile) {
  gpu::BarrierOp::create(b, loc); // the previous step's reads are done
  SmallVector<Value> next;
  if (prefetch) {
    size_t half = fetched.size() / 2;
    storeTile(SmallVector<Value>(fetched.take_front(half)), kTile);
    storeTile(SmallVector<Value>(fetched.drop_front(half)), vTile);
    Value nextKey0 = kb.mul(kb.min(kb.add(block, 1), lastBlock), kRows);
    next.append(fetchTile(k, nextKey0));
    next.append(fetchTile(v, nextKey0));
  } else {
    Value key0 = kb.mul(block, kRows);
    loadTile(k, key0, kTile);
    loadTile(v, key0, vTile);
  }
  gpu::BarrierOp::create(b, loc);
  return next;
}

void Emitter::loadVector(Value src, Value row0, Value memory, Value scale) {
  auto inRange = scf::IfOp::create(b, loc, kb.lt(tid, kRows), false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(inRange.thenBlock());
  Value x =
      memref::LoadOp::create(b, loc, src, valueAt(src, kb.add(row0, tid)));
  if (scale)
    x = mulF(x, scale);
  memref::StoreOp::create(b, loc, x, memory, ValueRange{tid});
}

Fragments Emitter::aFragments(Value tile) {
  Fragments frags;
  for (int64_t kk = 0; kk < s.headDim; kk += 16)
    frags.push_back(loadFragment(kb, rowsTile(tile), kb.mul(warp, kWarpRows),
                                 kb.idx(kk), /*aOrder=*/true));
  return frags;
}

SmallVector<Value> Emitter::productT(const Fragments &a, Value tile) {
  SmallVector<Value> acc = zeroAccumulators(kRows / 8);
  for (int64_t kk = 0; kk < s.headDim / 16; ++kk)
    for (int64_t nj = 0; nj < kRows / 16; ++nj) {
      SmallVector<Value> bRegs = loadFragment(
          kb, rowsTile(tile), kb.idx(nj * 16), kb.idx(kk * 16), false);
      for (int64_t h = 0; h < 2; ++h)
        acc[2 * nj + h] = mma(kb, a[kk], ArrayRef<Value>(bRegs).slice(2 * h, 2),
                              acc[2 * nj + h]);
    }
  return acc;
}

void Emitter::accumulate(ArrayRef<Value> p, Value tile,
                         SmallVectorImpl<Value> &acc) {
  for (int64_t kk = 0; kk < kRows / 16; ++kk) {
    SmallVector<Value> aRegs = accumulatorsAsA(kb, p[2 * kk], p[2 * kk + 1]);
    for (int64_t dj = 0; dj < s.headDim / 16; ++dj) {
      SmallVector<Value> bRegs = loadFragment(
          kb, depthTile(tile), kb.idx(dj * 16), kb.idx(kk * 16), false);
      for (int64_t h = 0; h < 2; ++h)
        acc[2 * dj + h] = mma(kb, aRegs, ArrayRef<Value>(bRegs).slice(2 * h, 2),
                              acc[2 * dj + h]);
    }
  }
}

void Emitter::forward(Value q, Value k, Value v, Value o, Value lse) {
  OpBuilder::InsertionGuard guard(b);
  // Two blocks of 128 threads fit an SM with up to 255 registers each;
  // told so, ptxas gave the head-dim-128 forward 254 registers rather than
  // 182 when it masked every step (0.186 against 0.241 ms on an H200,
  // docs/sm90a.md); it takes 208 now.
  // The sections assume two blocks an SM (at least that many fit).
  gpu::LaunchOp launch =
      open("fwd", queryRows() / kRows, 2, 0, s.headDim > 64 ? 2 : 0, 0,
           sectionHeads(/*keyBlocks=*/false, kRows, 2));
  auto shared = launch.getWorkgroupAttributions();
  // q is staged in k's buffer: the loop's first barrier follows its reads.
  Value qTile = shared[0], kTile = shared[0], vTile = shared[1];
  QueryBlock queries = queryBlock();
  Value row0 = queries.row0, pos0 = queries.pos0;
  loadTile(q, row0, qTile);
  gpu::BarrierOp::create(b, loc);
  Fragments qFrags = aFragments(qTile);
  // This thread's two query positions (rows g and g + 8 of its warp).
  Value warpPos = kb.add(pos0, kb.mul(warp, kWarpRows));
  std::array<Value, 2> pos = {kb.add(warpPos, g),
                              kb.add(warpPos, kb.add(g, 8))};

  Value negInf = f32(-std::numeric_limits<double>::infinity());
  SmallVector<Value> inits = forwardInits();
  int64_t state = inits.size();
  // The key block on the diagonal is the last.
  Value lastBlock = kb.div(pos0, kRows);
  bool prefetch = prefetches(k) && prefetches(v);
  if (prefetch) {
    inits.append(fetchTile(k, kb.idx(0)));
    inits.append(fetchTile(v, kb.idx(0)));
  }
  auto loop = scf::ForOp::create(b, loc, kb.idx(0), kb.add(lastBlock, 1),
                                 kb.idx(1), inits);
  {
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPointToStart(loop.getBody());
    auto carried = loop.getRegionIterArgs();
    Value block = loop.getInductionVar();
    Value key0 = kb.mul(block, kRows);
    SmallVector<Value> next =
        stepKeyValues(prefetch, carried.drop_front(state), k, v, block,
                      lastBlock, kTile, vTile);
    Value diagonal = eq(block, lastBlock);
    SmallVector<Value> scores =
        maskCausal(diagonal, productT(qFrags, kTile), pos, key0,
                   /*keyRows=*/false, negInf);
    SmallVector<Value> yielded =
        onlineSoftmax(carried.take_front(state), scores);
    SmallVector<Value> out(ArrayRef<Value>(yielded).drop_front(4));
    accumulate(scores, vTile, out);
    yielded.resize(4);
    yielded.append(out);
    yielded.append(next);
    scf::YieldOp::create(b, loc, yielded);
  }
  storeForward(loop.getResults(), row0, o, lse);
}

void Emitter::backwardQueries(Value q, Value k, Value v, Value lse, Value dO,
                              Value delta, Value dq) {
  OpBuilder::InsertionGuard guard(b);
  // The prefetch's registers would take ptxas to 239, two blocks an SM;
  // held to three (168 registers, a few bytes spilled) the backward at
  // llama3.2-1b's shape runs 3% faster on an H100 (docs/performance.md).
  bool prefetch = prefetches(k) && prefetches(v);
  gpu::LaunchOp launch =
      open("bwd_dq", queryRows() / kRows, 2, 0, prefetch ? 3 : 0, 0,
           sectionHeads(/*keyBlocks=*/false, kRows, prefetch ? 3 : 2));
  auto shared = launch.getWorkgroupAttributions();
  // q and dO are staged in k's and v's buffers (see forward).
  Value qTile = shared[0], dOTile = shared[1], kTile = shared[0],
        vTile = shared[1];
  QueryBlock queries = queryBlock();
  Value row0 = queries.row0, pos0 = queries.pos0;
  loadTile(q, row0, qTile);
  loadTile(dO, row0, dOTile);
  gpu::BarrierOp::create(b, loc);
  Fragments qFrags = aFragments(qTile), dOFrags = aFragments(dOTile);
  ThreadRows rows = threadRows(queries, lse, delta);
  const std::array<Value, 2> &pos = rows.pos, &rowLse = rows.lse2,
                             &rowDelta = rows.delta;
  Value lastBlock = kb.div(pos0, kRows);
  SmallVector<Value> inits = zeroAccumulators(s.headDim / 8);
  int64_t state = inits.size();
  if (prefetch) {
    inits.append(fetchTile(k, kb.idx(0)));
    inits.append(fetchTile(v, kb.idx(0)));
  }
  auto loop = scf::ForOp::create(b, loc, kb.idx(0), kb.add(lastBlock, 1),
                                 kb.idx(1), inits);
  {
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPointToStart(loop.getBody());
    Value block = loop.getInductionVar();
    Value key0 = kb.mul(block, kRows);
    SmallVector<Value> next =
        stepKeyValues(prefetch, loop.getRegionIterArgs().drop_front(state), k,
                      v, block, lastBlock, kTile, vTile);
    SmallVector<Value> probs = productT(qFrags, kTile);
    mapElements(probs, [&](Value x, Value, Value, int64_t half) {
      return probability(x, rowLse[half]);
    });
    Value zero = f32(0);
    probs = maskCausal(eq(block, lastBlock), probs, pos, key0,
                       /*keyRows=*/false, zero);
    SmallVector<Value> dS = productT(dOFrags, vTile);
    mapElements(dS, [&](Value x, Value, Value, int64_t half) {
      return sub(x, rowDelta[half]);
    });
    scoreGradients(dS, probs);
    SmallVector<Value> acc(loop.getRegionIterArgs().take_front(state));
    accumulate(dS, kTile, acc);
    acc.append(next);
    scf::YieldOp::create(b, loc, acc);
  }
  storeRows(SmallVector<Value>(loop.getResults().take_front(state)), dq, row0,
            {});
}

void Emitter::backwardKeys(Value q, Value k, Value v, Value lse, Value dO,
                           Value delta, Value dk, Value dv) {
  OpBuilder::InsertionGuard guard(b);
  bool wantDv = static_cast<bool>(dv), wantDk = static_cast<bool>(dk);
  // Two buffers of each walked tile and vector, step i using pair i % 2.
  bool async = wantDk && wantDv && copiesAsync(q) && copiesAsync(dO);
  int64_t pairs = async ? 2 : 1, vectors = wantDk ? 2 : 1;
  gpu::LaunchOp launch =
      open(wantDk ? (wantDv ? "bwd_dkdv" : "bwd_dk") : "bwd_dv", s.seq / kRows,
           2 * pairs, vectors * pairs, 0, 0,
           sectionHeads(/*keyBlocks=*/true, kRows, 2));
  auto shared = launch.getWorkgroupAttributions();
  // Tiles q0, dO0 (, q1, dO1), then vectors lse0 (, delta0) (, lse1,
  // delta1).
  auto tileOf = [&](int64_t pair, int64_t which) {
    return shared[2 * pair + which];
  };
  auto vectorOf = [&](int64_t pair, int64_t which) {
    return shared[2 * pairs + vectors * pair + which];
  };
  // k and v are staged in the last pair's q and dO buffers (see forward):
  // the first step's copies into the first pair start before them.
  Value kTile = tileOf(pairs - 1, 0), vTile = tileOf(pairs - 1, 1);
  Value block = blockIndex;
  KeyWalk walk = keyWalk();
  Value key0 = walk.key0, steps = walk.steps;
  // Step i's first query row (stacked) and its query block.
  auto stepRows = [&](Value i) -> std::pair<Value, Value> {
    auto [group, posBlock] = keyStep(walk, i);
    return {kb.add(kb.mul(group, s.seq), kb.mul(posBlock, kRows)), posBlock};
  };
  if (async) {
    Value first = stepRows(kb.idx(0)).first;
    copyTileAsync(q, first, tileOf(0, 0));
    copyTileAsync(dO, first, tileOf(0, 1));
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
    loadVector(lse, first, vectorOf(0, 0), f32(M_LOG2E));
    loadVector(delta, first, vectorOf(0, 1));
  }
  loadTile(k, key0, kTile);
  if (wantDk)
    loadTile(v, key0, vTile);
  gpu::BarrierOp::create(b, loc);
  Fragments kFrags = aFragments(kTile), vFrags;
  if (wantDk)
    vFrags = aFragments(vTile);
  Value warpKey = kb.add(key0, kb.add(kb.mul(warp, kWarpRows), g));
  std::array<Value, 2> keyPos = {warpKey, kb.add(warpKey, 8)};
  int64_t accs = s.headDim / 8;
  SmallVector<Value> inits =
      zeroAccumulators((wantDv ? accs : 0) + (wantDk ? accs : 0));
  auto loop = scf::ForOp::create(b, loc, kb.idx(0), steps, kb.idx(1), inits);
  {
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    auto [row0, posBlock] = stepRows(i);
    Value pos0 = kb.mul(posBlock, kRows);
    Value qTile = tileOf(0, 0), dOTile = tileOf(0, 1),
          lseShared = vectorOf(0, 0),
          deltaShared = wantDk ? vectorOf(0, 1) : Value();
    std::array<Value, 2> nextVectors;
    Value odd;
    if (async) {
      // This step's copies (issued a step ahead) have landed, and every
      // thread is done with the other pair, which the next step's copies
      // then fill; its vectors load into registers now and are stored
      // once this step's compute is issued.
      NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
      gpu::BarrierOp::create(b, loc);
      odd = kb.rem(i, 2);
      odd = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, odd,
                                  kb.idx(0));
      auto pick = [&](Value ifOdd, Value ifEven) {
        return arith::SelectOp::create(b, loc, odd, ifOdd, ifEven).getResult();
      };
      qTile = pick(tileOf(1, 0), tileOf(0, 0));
      dOTile = pick(tileOf(1, 1), tileOf(0, 1));
      lseShared = pick(vectorOf(1, 0), vectorOf(0, 0));
      deltaShared = pick(vectorOf(1, 1), vectorOf(0, 1));
      Value nextRow0 = stepRows(kb.min(kb.add(i, 1), kb.add(steps, -1))).first;
      copyTileAsync(q, nextRow0, pick(tileOf(0, 0), tileOf(1, 0)));
      copyTileAsync(dO, nextRow0, pick(tileOf(0, 1), tileOf(1, 1)));
      NVVM::CpAsyncCommitGroupOp::create(b, loc);
      // Threads past the 64 rows load row 63 again and store nothing.
      Value row = kb.add(nextRow0, kb.min(tid, kb.idx(kRows - 1)));
      nextVectors = {
          mulF(memref::LoadOp::create(b, loc, lse, valueAt(lse, row)),
               f32(M_LOG2E)),
          memref::LoadOp::create(b, loc, delta, valueAt(delta, row))};
    } else {
      gpu::BarrierOp::create(b, loc);
      loadTile(q, row0, qTile);
      loadTile(dO, row0, dOTile);
      loadVector(lse, row0, lseShared, f32(M_LOG2E));
      if (wantDk)
        loadVector(delta, row0, deltaShared);
      gpu::BarrierOp::create(b, loc);
    }
    // Transposed probabilities: rows are keys, columns query rows.
    SmallVector<Value> probsT = productT(kFrags, qTile);
    mapElements(probsT, [&](Value x, Value, Value col, int64_t) {
      Value rowLse2 = memref::LoadOp::create(b, loc, lseShared, col);
      return probability(x, rowLse2);
    });
    Value zero = f32(0);
    probsT = maskCausal(eq(posBlock, block), probsT, keyPos, pos0,
                        /*keyRows=*/true, zero);
    SmallVector<Value> acc(loop.getRegionIterArgs());
    SmallVector<Value> next;
    if (wantDv) {
      SmallVector<Value> dvAcc(acc.begin(), acc.begin() + accs);
      accumulate(probsT, dOTile, dvAcc);
      next.append(dvAcc);
    }
    if (wantDk) {
      SmallVector<Value> dkAcc(acc.end() - accs, acc.end());
      SmallVector<Value> dST = productT(vFrags, dOTile);
      mapElements(dST, [&](Value x, Value, Value col, int64_t) {
        Value rowDelta = memref::LoadOp::create(b, loc, deltaShared, col);
        return sub(x, rowDelta);
      });
      scoreGradients(dST, probsT);
      accumulate(dST, qTile, dkAcc);
      next.append(dkAcc);
    }
    if (async) {
      auto inRange = scf::IfOp::create(b, loc, kb.lt(tid, kRows), false);
      OpBuilder::InsertionGuard storeGuard(b);
      b.setInsertionPointToStart(inRange.thenBlock());
      for (int64_t which = 0; which < 2; ++which)
        memref::StoreOp::create(b, loc, nextVectors[which],
                                arith::SelectOp::create(b, loc, odd,
                                                        vectorOf(0, which),
                                                        vectorOf(1, which)),
                                ValueRange{tid});
    }
    scf::YieldOp::create(b, loc, next);
  }
  // The last step copied its own tiles once more: nothing may be in
  // flight at the kernel's end.
  if (async)
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  auto results = loop.getResults();
  if (wantDv)
    storeRows(SmallVector<Value>(results.take_front(accs)), dv, key0, {});
  if (wantDk)
    storeRows(SmallVector<Value>(results.take_back(accs)), dk, key0, {});
}

bool sm90::isSupported(const AttentionShape &shape) {
  // A head's blocks run along the grid's y and sections of heads along z,
  // at most 65535 of each; the delta kernel has the most blocks, 16 query
  // rows or more a block.
  constexpr int64_t kMaxGridY = 65535;
  return shape.seq % kRows == 0 && shape.groups * shape.seq % kThreads == 0 &&
         shape.groups * shape.seq / 16 <= kMaxGridY &&
         shape.heads() <= kMaxGridY && shape.headDim % 16 == 0 &&
         shape.headDim <= 128 && shape.groups >= 1 && shape.batch >= 1 &&
         shape.kvHeads >= 1;
}

SmallVector<AttentionLaunch>
sm90::emitAttentionForward(OpBuilder &b, Location loc,
                           const AttentionShape &shape, Value q, Value k,
                           Value v, Value o, Value lse) {
  Emitter emitter(b, loc, shape);
  if (emitter.usesWarpgroupMmas(q, k, v))
    emitter.forwardWarpgroup(q, k, v, o, lse);
  else
    emitter.forward(q, k, v, o, lse);
  return emitter.launches;
}

SmallVector<AttentionLaunch> sm90::emitAttentionBackward(
    OpBuilder &b, Location loc, const AttentionShape &shape, Value q, Value k,
    Value v, Value o, Value lse, Value dO, Value dq, Value dk, Value dv) {
  Value delta = memref::AllocOp::create(
      b, loc,
      MemRefType::get({shape.heads(), shape.groups * shape.seq},
                      b.getF32Type()));
  Emitter emitter(b, loc, shape);
  emitter.rowDot(o, dO, delta);
  if (emitter.usesWarpgroupMmas(q, k, v) &&
      emitter.usesWarpgroupMmas(dO, k, v)) {
    emitter.backwardQueriesWarpgroup(q, k, v, lse, dO, delta, dq);
    emitter.backwardKeysWarpgroup(q, k, v, lse, dO, delta, dk, dv);
    return emitter.launches;
  }
  emitter.backwardQueries(q, k, v, lse, dO, delta, dq);
  if (shape.headDim <= 64) {
    emitter.backwardKeys(q, k, v, lse, dO, delta, dk, dv);
  } else {
    emitter.backwardKeys(q, k, v, lse, dO, delta, Value(), dv);
    emitter.backwardKeys(q, k, v, lse, dO, delta, dk, Value());
  }
  return emitter.launches;
}
