//===- Emitter.cpp - the sm_90a attention kernels' emitter ----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What both kinds of attention kernel emit: launches, indexing, the online
// softmax on m16n8 fragments, masks, reductions, stores and the backward's
// row-dot kernel.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::kernels;
using namespace mlir::mxfp4::sm90;
using namespace mlir::mxfp4::sm90::attention;

gpu::LaunchOp Emitter::open(StringRef role, int64_t blocksX, int64_t tiles,
                            int64_t vectors, int64_t minBlocksPerSM,
                            int64_t dynamicBytes, int64_t section) {
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
      b, loc, kb.idx(section), kb.idx(blocksX), kb.idx(s.heads() / section),
      kb.idx(kThreads), one, one, dynamic, /*asyncTokenType=*/Type(),
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
  head =
      kb.add(kb.mul(launch.getBlockIds().z, section), launch.getBlockIds().x);
  blockIndex = launch.getBlockIds().y;
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

Emitter::QueryBlock Emitter::queryBlock() {
  // Longest rows first (the diagonal's positions last in the causal
  // triangle), and a position block's groups adjacent: they read the same
  // keys.
  Value group = kb.rem(blockIndex, s.groups);
  Value posBlock = arith::SubIOp::create(b, loc, kb.idx(s.seq / kRows - 1),
                                         kb.div(blockIndex, s.groups));
  Value pos0 = kb.mul(posBlock, kRows);
  return {pos0, kb.add(kb.mul(group, s.seq), pos0),
          kb.add(kb.mul(kvHead, s.groups), group)};
}

Emitter::KeyWalk Emitter::keyWalk() {
  Value key0 = kb.mul(blockIndex, kRows);
  // The query blocks that see these keys: in each group, positions from
  // key0 to seq - 1.
  Value visibleBlocks =
      arith::SubIOp::create(b, loc, kb.idx(s.seq / kRows), blockIndex);
  return {key0, visibleBlocks,
          arith::MulIOp::create(b, loc, visibleBlocks, kb.idx(s.groups))};
}

std::pair<Value, Value> Emitter::keyStep(const KeyWalk &walk, Value i) {
  Value group = arith::DivUIOp::create(b, loc, i, walk.visibleBlocks);
  return {group, kb.add(blockIndex,
                        arith::RemUIOp::create(b, loc, i, walk.visibleBlocks))};
}

Emitter::ThreadRows Emitter::threadRows(const QueryBlock &queries, Value lse,
                                        Value delta) {
  ThreadRows rows;
  Value warpRow = kb.add(kb.mul(warp, kWarpRows), g);
  Value warpPos = kb.add(queries.pos0, warpRow);
  rows.pos = {warpPos, kb.add(warpPos, 8)};
  for (int64_t h = 0; h < 2; ++h) {
    Value row = kb.add(queries.row0, kb.add(warpRow, h * 8));
    rows.lse2[h] = mulF(memref::LoadOp::create(b, loc, lse, valueAt(lse, row)),
                        f32(M_LOG2E));
    rows.delta[h] = memref::LoadOp::create(b, loc, delta, valueAt(delta, row));
  }
  return rows;
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

SmallVector<Value> Emitter::maskCausal(Value diagonal, ArrayRef<Value> acc,
                                       std::array<Value, 2> rowPos, Value col0,
                                       bool keyRows, Value masked) {
  auto branch = scf::IfOp::create(b, loc, ValueRange(acc).getTypes(), diagonal,
                                  /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(branch.thenBlock());
  SmallVector<Value> applied(acc);
  mapElements(applied, [&](Value x, Value, Value col, int64_t half) {
    Value colPos = kb.add(col0, col);
    Value visible =
        keyRows ? le(rowPos[half], colPos) : le(colPos, rowPos[half]);
    return arith::SelectOp::create(b, loc, visible, x, masked).getResult();
  });
  scf::YieldOp::create(b, loc, applied);
  b.setInsertionPointToStart(branch.elseBlock());
  scf::YieldOp::create(b, loc, acc);
  return SmallVector<Value>(branch.getResults());
}

SmallVector<Value> Emitter::zeroAccumulators(int64_t count) {
  auto type = VectorType::get({4}, b.getF32Type());
  return SmallVector<Value>(
      count, arith::ConstantOp::create(b, loc, b.getZeroAttr(type)));
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

void Emitter::rowDot(Value o, Value dO, Value delta) {
  OpBuilder::InsertionGuard guard(b);
  // `lanes` adjacent threads a row, each a vector of 8 elements in turn:
  // a warp reads whole rows, coalesced; the lanes add up with shuffles.
  int64_t chunks = s.headDim / 8, lanes = 1;
  while (lanes < 8 && chunks % (2 * lanes) == 0)
    lanes *= 2;
  int64_t rowsPerBlock = kThreads / lanes;
  open("bwd_delta", queryRows() / rowsPerBlock, 0, 0);
  Value row = kb.add(kb.mul(blockIndex, rowsPerBlock), kb.div(tid, lanes));
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
