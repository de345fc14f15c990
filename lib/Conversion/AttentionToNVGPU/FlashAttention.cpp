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

gpu::LaunchOp Emitter::open(StringRef role, int64_t blocksX, int64_t tiles,
                            int64_t vectors, int64_t minBlocksPerSM,
                            int64_t dynamicBytes) {
  MLIRContext *ctx = b.getContext();
  SmallVector<Type> shared(
      tiles, workgroupBuffer(ctx, SharedTile::elements(true, kRows, s.headDim),
                             b.getBF16Type()));
  shared.append(vectors, workgroupBuffer(ctx, kRows, b.getF32Type()));
  Value one = kb.idx(1);
  Value dynamic;
  if (dynamicBytes)
    dynamic =
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), dynamicBytes);
  auto launch = gpu::LaunchOp::create(
      b, loc, kb.idx(blocksX), kb.idx(s.heads()), one, kb.idx(kThreads), one,
      one, dynamic, /*asyncTokenType=*/Type(),
      /*asyncDependencies=*/ValueRange(), shared);
  AttentionLaunch &opened = launches.emplace_back();
  opened.launch = launch;
  opened.role = role.str();
  // ptxas keeps this many blocks resident on an SM (0: ptxas chooses).
  if (minBlocksPerSM)
    opened.kernelAttributes.set(NVVM::NVVMDialect::getMinctasmAttrName(),
                                b.getI32IntegerAttr(minBlocksPerSM));
  Block &body = launch.getBody().front();
  b.setInsertionPointToStart(&body);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&body);
  tid = launch.getThreadIds().x;
  head = launch.getBlockIds().y;
  batchIndex = kb.div(head, s.kvHeads);
  kvHead = kb.rem(head, s.kvHeads);
  warp = kb.div(tid, 32);
  Value lane = kb.rem(tid, 32);
  g = kb.div(lane, 4);
  t = kb.rem(lane, 4);
  double inverse = 1 / std::sqrt(static_cast<double>(s.headDim));
  inverseSqrtD = f32(inverse);
  log2Scale = f32(inverse * M_LOG2E);
  return launch;
}

SmallVector<Value> Emitter::rowAt(Value buffer, Value row0, Value r,
                                  Value col) {
  int64_t groups = cast<MemRefType>(buffer.getType()).getDimSize(2) / s.kvHeads;
  Value position = kb.add(kb.rem(row0, s.seq), r);
  Value h = kvHead;
  if (groups > 1)
    h = kb.add(kb.mul(kvHead, groups), kb.div(row0, s.seq));
  return {batchIndex, position, h, col};
}

SmallVector<Value> Emitter::valueAt(Value buffer, Value row) {
  if (cast<MemRefType>(buffer.getType()).getRank() == 2)
    return {head, row};
  return {batchIndex, kb.add(kb.mul(kvHead, s.groups), kb.div(row, s.seq)),
          kb.rem(row, s.seq)};
}

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

Value Emitter::globalPointer(Value buffer, ArrayRef<Value> indices) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<MemRefType>(buffer.getType());
  // The buffer's aligned pointer from its LLVM descriptor: kernels index
  // with 32 bits, so `memref.extract_aligned_pointer_as_index` would
  // truncate a global address. The cast folds into the descriptor the
  // kernel's argument lowering builds (convert-gpu-to-nvvm with 32-bit
  // indices and bare pointers).
  Type i32 = b.getI32Type();
  auto pointer = LLVM::LLVMPointerType::get(ctx);
  auto sizes = LLVM::LLVMArrayType::get(i32, type.getRank());
  auto descriptor = LLVM::LLVMStructType::getLiteral(
      ctx, {pointer, pointer, i32, sizes, sizes});
  Value base = LLVM::ExtractValueOp::create(
      b, loc,
      UnrealizedConversionCastOp::create(b, loc, descriptor, buffer)
          .getResult(0),
      1);
  SmallVector<int64_t> strides = type.getStridesAndOffset().first;
  Value linear = kb.idx(0);
  for (auto [index, stride] : llvm::zip(indices, strides))
    linear = kb.add(linear, kb.mul(index, stride));
  Value element = LLVM::GEPOp::create(
      b, loc, pointer, type.getElementType(), base,
      ValueRange{arith::IndexCastOp::create(b, loc, i32, linear)});
  return LLVM::AddrSpaceCastOp::create(
      b, loc, LLVM::LLVMPointerType::get(ctx, 1), element);
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

SmallVector<Value>
Emitter::maskWhere(Value masked, ArrayRef<Value> scores,
                   function_ref<Value(Value, Value, Value, int64_t)> f) {
  auto branch = scf::IfOp::create(b, loc, ValueRange(scores).getTypes(), masked,
                                  /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(branch.thenBlock());
  SmallVector<Value> applied(scores);
  mapElements(applied, f);
  scf::YieldOp::create(b, loc, applied);
  b.setInsertionPointToStart(branch.elseBlock());
  scf::YieldOp::create(b, loc, scores);
  return SmallVector<Value>(branch.getResults());
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

SmallVector<Value> Emitter::zeroAccumulators(int64_t count) {
  auto type = VectorType::get({4}, b.getF32Type());
  return SmallVector<Value>(
      count, arith::ConstantOp::create(b, loc, b.getZeroAttr(type)));
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

void Emitter::mapElements(SmallVectorImpl<Value> &acc,
                          function_ref<Value(Value, Value, Value, int64_t)> f) {
  auto type = VectorType::get({4}, b.getF32Type());
  for (auto [ni, vec] : llvm::enumerate(acc)) {
    SmallVector<Value> elements;
    for (int64_t e = 0; e < 4; ++e) {
      Value x = vector::ExtractOp::create(b, loc, vec, e);
      Value row = kb.add(g, (e / 2) * 8);
      Value col = kb.add(kb.mul(t, 2), static_cast<int64_t>(ni) * 8 + e % 2);
      elements.push_back(f(x, row, col, e / 2));
    }
    vec = vector::FromElementsOp::create(b, loc, type, elements);
  }
}

std::array<Value, 2> Emitter::quadReduce(std::array<Value, 2> partial,
                                         bool isMax) {
  for (Value &v : partial)
    for (int64_t offset : {1, 2}) {
      Value other =
          gpu::ShuffleOp::create(b, loc, v, offset, 32, gpu::ShuffleMode::XOR)
              .getShuffleResult();
      v = isMax ? arith::MaximumFOp::create(b, loc, v, other).getResult()
                : arith::AddFOp::create(b, loc, v, other).getResult();
    }
  return partial;
}

std::array<Value, 2> Emitter::rowReduce(ArrayRef<Value> acc, bool isMax) {
  std::array<Value, 2> partial;
  for (int64_t half = 0; half < 2; ++half) {
    Value r;
    for (Value vec : acc)
      for (int64_t e = 2 * half; e < 2 * half + 2; ++e) {
        Value x = vector::ExtractOp::create(b, loc, vec, e);
        r = !r      ? x
            : isMax ? arith::MaximumFOp::create(b, loc, r, x).getResult()
                    : arith::AddFOp::create(b, loc, r, x).getResult();
      }
    partial[half] = r;
  }
  return partial;
}

void Emitter::storeRows(ArrayRef<Value> acc, Value dst, Value row0,
                        std::array<Value, 2> scale) {
  auto pairType = VectorType::get({2}, b.getF32Type());
  Type elementType = cast<MemRefType>(dst.getType()).getElementType();
  Value warpRow = kb.add(kb.mul(warp, kWarpRows), g);
  for (int64_t half = 0; half < 2; ++half) {
    Value row = kb.add(warpRow, half * 8);
    // This thread's pair of columns 2t, 2t + 1 of each 8-column block.
    SmallVector<Value> pairs;
    for (Value vec : acc) {
      Value pair = vector::ShuffleOp::create(
          b, loc, vec, vec, ArrayRef<int64_t>{2 * half, 2 * half + 1});
      if (scale[half]) {
        Value splat =
            vector::BroadcastOp::create(b, loc, pairType, scale[half]);
        pair = arith::MulFOp::create(b, loc, pair, splat);
      }
      pairs.push_back(pair);
    }
    if (elementType.isF32()) {
      for (auto [di, pair] : llvm::enumerate(pairs))
        vector::StoreOp::create(
            b, loc, pair, dst,
            rowAt(dst, row0, row,
                  kb.add(kb.mul(t, 2), static_cast<int64_t>(di) * 8)));
      continue;
    }
    // bf16: a pair is 4 bytes, and the quad's pairs of a block 16, half a
    // sector. Neighbouring threads trade pairs of two blocks, so that each
    // stores 4 consecutive values: the even thread of a neighbouring pair
    // columns 2t .. 2t + 3 of the first block, the odd one columns
    // 2t - 2 .. 2t + 1 of the second, and a quad's stores fill a sector.
    auto asWord = [&](Value pair) -> Value {
      Value h = arith::TruncFOp::create(
          b, loc, VectorType::get({2}, elementType), pair);
      return vector::ExtractOp::create(
          b, loc,
          vector::BitCastOp::create(b, loc,
                                    VectorType::get({1}, b.getI32Type()), h),
          0);
    };
    Value parity = kb.rem(t, 2);
    Value odd = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, parity,
                                      kb.idx(0));
    for (size_t di = 0; di + 1 < pairs.size(); di += 2) {
      Value first = asWord(pairs[di]), second = asWord(pairs[di + 1]);
      Value mine = arith::SelectOp::create(b, loc, odd, second, first);
      Value sent = arith::SelectOp::create(b, loc, odd, first, second);
      Value got =
          gpu::ShuffleOp::create(b, loc, sent, 1, 32, gpu::ShuffleMode::XOR)
              .getShuffleResult();
      Value lo = arith::SelectOp::create(b, loc, odd, got, mine);
      Value hi = arith::SelectOp::create(b, loc, odd, mine, got);
      Value words = vector::FromElementsOp::create(
          b, loc, VectorType::get({2}, b.getI32Type()), ValueRange{lo, hi});
      Value four = vector::BitCastOp::create(
          b, loc, VectorType::get({4}, elementType), words);
      // Column 2 (t - t % 2) of the first block, or of the second.
      Value col = kb.add(kb.add(kb.mul(kb.div(t, 2), 4), kb.mul(parity, 8)),
                         static_cast<int64_t>(di) * 8);
      vector::StoreOp::create(b, loc, four, dst, rowAt(dst, row0, row, col),
                              /*nontemporal=*/false, llvm::MaybeAlign(8));
    }
  }
}

SmallVector<Value> Emitter::onlineSoftmax(ValueRange carried,
                                          SmallVectorImpl<Value> &scores) {
  // Raw scores: the maximum commutes with the positive scale, which folds
  // into the exponent's multiply-add.
  std::array<Value, 2> blockMax = quadReduce(rowReduce(scores, true), true);
  std::array<Value, 2> newMax, correction;
  for (int64_t h = 0; h < 2; ++h) {
    newMax[h] =
        arith::MaximumFOp::create(b, loc, carried[h], scaled(blockMax[h]));
    correction[h] = exp2(sub(carried[h], newMax[h]));
  }
  mapElements(scores, [&](Value x, Value, Value, int64_t half) {
    return exp2(math::FmaOp::create(
        b, loc, x, log2Scale, arith::NegFOp::create(b, loc, newMax[half])));
  });
  // Per-thread partial sums; the four threads of a row add up at the end.
  std::array<Value, 2> blockSum = rowReduce(scores, false);
  SmallVector<Value> next = {newMax[0], newMax[1]};
  for (int64_t h = 0; h < 2; ++h)
    next.push_back(arith::AddFOp::create(
        b, loc, mulF(carried[2 + h], correction[h]), blockSum[h]));
  SmallVector<Value> out(carried.drop_front(4));
  mapElements(out, [&](Value x, Value, Value, int64_t half) {
    return mulF(x, correction[half]);
  });
  next.append(out);
  return next;
}

void Emitter::storeForward(ValueRange results, Value row0, Value o, Value lse) {
  std::array<Value, 2> sums = quadReduce({results[2], results[3]}, false);
  std::array<Value, 2> inverse;
  for (int64_t h = 0; h < 2; ++h)
    inverse[h] = arith::DivFOp::create(b, loc, f32(1), sums[h]);
  storeRows(SmallVector<Value>(results.slice(4, s.headDim / 8)), o, row0,
            inverse);
  // Lane t == 0 of each row writes its log-sum-exp.
  auto first = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, t, kb.idx(0)),
      false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(first.thenBlock());
  Value rowBase = kb.add(row0, kb.add(kb.mul(warp, kWarpRows), g));
  // The running maximum is in base 2.
  for (int64_t h = 0; h < 2; ++h) {
    Value value = arith::AddFOp::create(b, loc, mulF(results[h], f32(M_LN2)),
                                        math::LogOp::create(b, loc, sums[h]));
    memref::StoreOp::create(b, loc, value, lse,
                            valueAt(lse, kb.add(rowBase, h * 8)));
  }
}

SmallVector<Value> Emitter::forwardInits() {
  Value negInf = f32(-std::numeric_limits<double>::infinity());
  SmallVector<Value> inits = {negInf, negInf, f32(0), f32(0)};
  inits.append(zeroAccumulators(s.headDim / 8));
  return inits;
}

void Emitter::forward(Value q, Value k, Value v, Value o, Value lse) {
  OpBuilder::InsertionGuard guard(b);
  // Two blocks of 128 threads fit an SM with up to 255 registers each;
  // told so, ptxas gave the head-dim-128 forward 254 registers rather than
  // 182 when it masked every step (0.186 against 0.241 ms on an H200,
  // docs/sm90a.md); it takes 208 now.
  gpu::LaunchOp launch =
      open("fwd", queryRows() / kRows, 2, 0, s.headDim > 64 ? 2 : 0);
  auto shared = launch.getWorkgroupAttributions();
  // q is staged in k's buffer: the loop's first barrier follows its reads.
  Value qTile = shared[0], kTile = shared[0], vTile = shared[1];
  Value row0 = kb.mul(launch.getBlockIds().x, kRows);
  Value pos0 = kb.rem(row0, s.seq);
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
        maskWhere(diagonal, productT(qFrags, kTile),
                  [&](Value x, Value, Value col, int64_t half) {
                    Value visible = le(kb.add(key0, col), pos[half]);
                    return arith::SelectOp::create(b, loc, visible, x, negInf)
                        .getResult();
                  });
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

void Emitter::rowDot(Value o, Value dO, Value delta) {
  OpBuilder::InsertionGuard guard(b);
  // `lanes` adjacent threads a row, each a vector of 8 elements in turn:
  // a warp reads whole rows, coalesced; the lanes add up with shuffles.
  int64_t chunks = s.headDim / 8, lanes = 1;
  while (lanes < 8 && chunks % (2 * lanes) == 0)
    lanes *= 2;
  int64_t rowsPerBlock = kThreads / lanes;
  gpu::LaunchOp launch = open("bwd_delta", queryRows() / rowsPerBlock, 0, 0);
  Value row =
      kb.add(kb.mul(launch.getBlockIds().x, rowsPerBlock), kb.div(tid, lanes));
  Value lane = kb.rem(tid, lanes);
  auto type = VectorType::get({8}, b.getF32Type());
  // o and dO as f32, widened where they are bf16.
  auto load = [&](Value src, ArrayRef<Value> at) -> Value {
    Type e = cast<MemRefType>(src.getType()).getElementType();
    Value x = vector::LoadOp::create(b, loc, VectorType::get({8}, e), src, at);
    return e.isF32() ? x : arith::ExtFOp::create(b, loc, type, x);
  };
  Value sum = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  for (int64_t c = 0; c < chunks; c += lanes) {
    SmallVector<Value> at =
        rowAt(o, row, kb.idx(0), kb.mul(kb.add(lane, c), 8));
    sum = vector::FMAOp::create(b, loc, load(o, at), load(dO, at), sum);
  }
  Value total =
      vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, sum);
  for (int64_t offset = lanes / 2; offset > 0; offset /= 2)
    total = arith::AddFOp::create(
        b, loc, total,
        gpu::ShuffleOp::create(b, loc, total, offset, 32, gpu::ShuffleMode::XOR)
            .getShuffleResult());
  auto first = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, kb.idx(0)),
      false);
  b.setInsertionPointToStart(first.thenBlock());
  memref::StoreOp::create(b, loc, total, delta, valueAt(delta, row));
}

void Emitter::backwardQueries(Value q, Value k, Value v, Value lse, Value dO,
                              Value delta, Value dq) {
  OpBuilder::InsertionGuard guard(b);
  // The prefetch's registers would take ptxas to 239, two blocks an SM;
  // held to three (168 registers, a few bytes spilled) the backward at
  // llama3.2-1b's shape runs 3% faster on an H100 (docs/performance.md).
  bool prefetch = prefetches(k) && prefetches(v);
  gpu::LaunchOp launch =
      open("bwd_dq", queryRows() / kRows, 2, 0, prefetch ? 3 : 0);
  auto shared = launch.getWorkgroupAttributions();
  // q and dO are staged in k's and v's buffers (see forward).
  Value qTile = shared[0], dOTile = shared[1], kTile = shared[0],
        vTile = shared[1];
  Value row0 = kb.mul(launch.getBlockIds().x, kRows);
  Value pos0 = kb.rem(row0, s.seq);
  loadTile(q, row0, qTile);
  loadTile(dO, row0, dOTile);
  gpu::BarrierOp::create(b, loc);
  Fragments qFrags = aFragments(qTile), dOFrags = aFragments(dOTile);
  Value warpRow = kb.add(kb.mul(warp, kWarpRows), g);
  Value warpPos = kb.add(pos0, warpRow);
  std::array<Value, 2> pos = {warpPos, kb.add(warpPos, 8)};
  std::array<Value, 2> rowLse, rowDelta;
  for (int64_t h = 0; h < 2; ++h) {
    Value row = kb.add(row0, kb.add(warpRow, h * 8));
    rowLse[h] = mulF(memref::LoadOp::create(b, loc, lse, valueAt(lse, row)),
                     f32(M_LOG2E));
    rowDelta[h] = memref::LoadOp::create(b, loc, delta, valueAt(delta, row));
  }
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
    probs = maskWhere(
        eq(block, lastBlock), probs,
        [&](Value p, Value, Value col, int64_t half) {
          Value visible = le(kb.add(key0, col), pos[half]);
          return arith::SelectOp::create(b, loc, visible, p, zero).getResult();
        });
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
           2 * pairs, vectors * pairs);
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
  Value block = launch.getBlockIds().x;
  Value key0 = kb.mul(block, kRows);
  // The query blocks that see these keys: in each group, positions from
  // key0 to seq - 1.
  int64_t blocksPerGroup = s.seq / kRows;
  Value visibleBlocks =
      arith::SubIOp::create(b, loc, kb.idx(blocksPerGroup), block);
  Value steps = arith::MulIOp::create(b, loc, visibleBlocks, kb.idx(s.groups));
  // Step i's first query row (stacked) and its query block.
  auto stepRows = [&](Value i) -> std::pair<Value, Value> {
    Value group = arith::DivUIOp::create(b, loc, i, visibleBlocks);
    Value posBlock =
        kb.add(block, arith::RemUIOp::create(b, loc, i, visibleBlocks));
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
    probsT = maskWhere(
        eq(posBlock, block), probsT,
        [&](Value p, Value, Value col, int64_t half) {
          Value visible = le(keyPos[half], kb.add(pos0, col));
          return arith::SelectOp::create(b, loc, visible, p, zero).getResult();
        });
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
  return shape.seq % kRows == 0 && shape.groups * shape.seq % kThreads == 0 &&
         shape.headDim % 16 == 0 && shape.headDim <= 128 && shape.groups >= 1 &&
         shape.batch >= 1 && shape.kvHeads >= 1;
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
