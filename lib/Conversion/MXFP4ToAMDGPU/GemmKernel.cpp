//===- GemmKernel.cpp - MXFP4 GEMM on gfx950 scaled MFMAs -----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// C[M, N] = acc + A[M, K] * B[N, K]^T with A, B in FP4 and pre-shuffled E8M0
// scales, on `v_mfma_scale_f32_16x16x128_f8f6f4`.
//
// Structure (docs/gfx950.md has the picture):
// - one workgroup per tileM x tileN tile of C, 4 waves in a 2 x 2 grid, each
//   wave a (tileM/2) x (tileN/2) block of 16 x 16 MFMA subtiles;
// - K steps of 256: A and B tiles go global -> LDS directly
//   (`amdgpu.gather_to_lds`, 16 bytes a lane), double-buffered, the next
//   step's copy in flight while the MFMAs consume the current one. An LDS row
//   holds 128 bytes (256 FP4 values) as 8 chunks of 16 bytes; chunk c of row
//   r sits in slot c ^ (r % 8) so that the 16 lanes reading one K chunk of
//   16 consecutive rows hit distinct banks;
// - scales: one dword a lane per 2 row subtiles x 2 K steps, straight from
//   global memory into registers, prefetched one K step ahead;
// - the MFMA computes D^T = B A^T so each lane's 4 accumulators are 4
//   consecutive columns of C (one 16-byte store);
// - ragged M, N and K: every out-of-range load is sent past the end of its
//   buffer (the buffer view reads 0 there) and every out-of-range store is
//   dropped the same way; zero products leave the sums unchanged;
// - workgroup order: XCD-aware (consecutive tiles on one XCD's L2) and
//   grouped by 8 tile rows (A tiles reused from L2);
// - split K (`GemmConfig::splits`, grid z): split s runs K steps
//   [s * stepsPerSplit, ...) from zero and writes its f32 partial tile to
//   workspace[s]; the add-splits kernel then finishes C.
//
// Accumulation order: each accumulator adds its K blocks in increasing K
// order, which is the reference order of docs/Semantics.md section 6 if the
// MFMA adds its 4 blocks in order (the emulator's model; the hardware's
// internal order is not documented). Split, each split sums its own range
// so, and C = ((acc + split 0) + split 1) + ...
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "mxfp4/Conversion/AMDGPUCommon/GemmTiling.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::gfx950;
using namespace mlir::mxfp4::kernels;

namespace {
constexpr int64_t kStepK = 256;        // K per main-loop step
constexpr int64_t kRowBytes = kStepK / 2;
static_assert(kRowBytes == kLdsRowBytes, "one K step fills a swizzled row");
} // namespace

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t gfx950::gemmWorkgroups(const GemmConfig &c) {
  return ceilDiv(c.m, c.tileM) * ceilDiv(c.n, c.tileN);
}

gpu::GPUFuncOp gfx950::buildGemmKernel(OpBuilder &b, Location loc,
                                       gpu::GPUModuleOp module, StringRef name,
                                       const GemmConfig &c) {
  MLIRContext *ctx = b.getContext();
  Type i8 = b.getI8Type(), f32 = b.getF32Type();
  int64_t kBlocks = c.k / 32, kSteps = ceilDiv(c.k, kStepK);
  int64_t waveM = c.tileM / 2, waveN = c.tileN / 2;
  int64_t subM = waveM / 16, subN = waveN / 16;
  int64_t stageBytes = (c.tileM + c.tileN) * kRowBytes;
  int64_t aBytes = c.m * c.k / 2, bBytes = c.n * c.k / 2;
  int64_t aScaleBytes = getShuffledScaleBytes(c.m, kBlocks);
  int64_t bScaleBytes = getShuffledScaleBytes(c.n, kBlocks);

  bool split = c.splits > 1;
  SmallVector<Type> args = {globalBuffer(ctx, aBytes, i8),
                            globalBuffer(ctx, aScaleBytes, i8),
                            globalBuffer(ctx, bBytes, i8),
                            globalBuffer(ctx, bScaleBytes, i8)};
  if (split) {
    // The partial products, whatever C's types: the add-splits kernel
    // converts.
    args.push_back(globalBuffer(ctx, c.splits * c.m * c.n, f32));
  } else {
    if (c.accType)
      args.push_back(globalBuffer(ctx, c.m * c.n, c.accType));
    args.push_back(globalBuffer(ctx, c.m * c.n, c.resultType));
  }
  Type accType = split ? Type() : c.accType;
  Type resultType = split ? f32 : c.resultType;
  int64_t cSize = (split ? c.splits : 1) * c.m * c.n;
  auto ldsType = MemRefType::get(
      {2 * stageBytes}, i8, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
  gpu::GPUFuncOp func = createKernel(b, loc, module, name, args, {ldsType});
  // The problem, for the kernel report's throughput estimate.
  func->setAttr(kGemmShapeAttrName, b.getDenseI64ArrayAttr({c.m, c.n, c.k}));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&func.getBody().front());
  KernelBuilder kb(b, loc);

  Value lds = func.getWorkgroupAttributions()[0];
  Value aBuf = kb.buffer(func.getArgument(0));
  Value aScales = kb.buffer(func.getArgument(1));
  Value bBuf = kb.buffer(func.getArgument(2));
  Value bScales = kb.buffer(func.getArgument(3));
  Value accBuf = accType ? kb.buffer(func.getArgument(4)) : Value();
  Value cBuf = kb.buffer(func.getArgument(args.size() - 1));

  Value tid = kb.threadId();
  Value wave = kb.div(tid, kWaveSize), lane = kb.rem(tid, kWaveSize);
  Value wm = kb.div(wave, 2), wn = kb.rem(wave, 2);
  auto [tm, tn] = remapTileForXcds(kb, kb.blockId(), ceilDiv(c.m, c.tileM),
                                   ceilDiv(c.n, c.tileN));
  Value m0 = kb.mul(tm, c.tileM), n0 = kb.mul(tn, c.tileN);
  Value waveRowM = kb.add(m0, kb.mul(wm, waveM));
  Value waveRowN = kb.add(n0, kb.mul(wn, waveN));
  Value lane16 = kb.rem(lane, 16), laneGroup = kb.div(lane, 16);
  // This workgroup's K steps, and where its C (or partial C) starts. Every
  // split runs stepsPerSplit steps (a constant trip count); the last split's
  // steps past K read zeros (`copyTile`'s K mask) under the last step's
  // scales and add +0 products, which leave its sums unchanged.
  int64_t loopSteps = split ? c.stepsPerSplit : kSteps;
  Value firstStep = kb.idx(0), cBase = kb.idx(0);
  if (split) {
    Value splitId = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
    firstStep = kb.mul(splitId, c.stepsPerSplit);
    cBase = kb.mul(splitId, c.m * c.n);
  }
  auto scaleStep = [&](Value step) { return kb.min(step, kb.idx(kSteps - 1)); };

  // Global -> LDS copy of one operand's tile for K step `step` into `stage`
  // (the swizzled rows of AMDGPUCommon's copySwizzledRowsToLds).
  auto copyTile = [&](Value src, int64_t rows, int64_t tileRows, Value row0,
                      int64_t ldsOffset, Value stageBase, Value step) {
    Value kChunk0 = kb.mul(step, kStepK / 32);
    copySwizzledRowsToLds(
        kb, src, lds, kb.add(stageBase, kb.idx(ldsOffset)), tileRows,
        VectorType::get({4}, b.getI32Type()), wave, lane,
        [&](Value groupRow, Value laneRow, Value chunk) {
          Value kChunk = kb.add(kChunk0, chunk);
          Value row = kb.add(kb.add(row0, groupRow), laneRow);
          Value valid = kb.andI(kb.lt(kChunk, kBlocks), kb.lt(row, rows));
          Value offset = kb.add(kb.mul(row, c.k / 2), kb.mul(kChunk, 16));
          return kb.maskedOffset(valid, offset, rows * c.k / 2);
        });
  };
  auto stageBase = [&](Value step) { return kb.mul(kb.rem(step, 2), stageBytes); };
  auto copyStep = [&](Value step) {
    Value base = stageBase(step);
    copyTile(aBuf, c.m, c.tileM, m0, 0, base, step);
    copyTile(bBuf, c.n, c.tileN, n0, c.tileM * kRowBytes, base, step);
  };

  // Scale dwords of K step `step`: one per pair of 16-row subtiles.
  auto vec4i8 = VectorType::get({4}, i8);
  auto loadScales = [&](Value scales, Value waveRow, int64_t pairs, Value step,
                        SmallVectorImpl<Value> &out) {
    for (int64_t p = 0; p < pairs; ++p) {
      Value group = kb.add(kb.div(waveRow, 32), kb.idx(p));
      Value dword = kb.add(kb.mul(kb.add(kb.mul(group, kSteps), step), 64), lane);
      out.push_back(vector::LoadOp::create(b, loc, vec4i8, scales,
                                           ValueRange{kb.mul(dword, 4)}));
    }
  };
  auto loadStepScales = [&](Value step, SmallVectorImpl<Value> &out) {
    loadScales(aScales, waveRowM, subM / 2, step, out);
    loadScales(bScales, waveRowN, subN / 2, step, out);
  };

  // Accumulators, from `acc` where given. Lane l holds C[row l % 16 of the
  // subtile][4 (l / 16) .. + 3].
  auto vec4f32 = VectorType::get({4}, f32);
  auto accPosition = [&](int64_t i, int64_t j) {
    Value m = kb.add(kb.add(waveRowM, kb.idx(16 * i)), lane16);
    Value n = kb.add(kb.add(waveRowN, kb.idx(16 * j)), kb.mul(laneGroup, 4));
    return std::make_pair(m, n);
  };
  SmallVector<Value> init;
  for (int64_t i = 0; i < subM; ++i)
    for (int64_t j = 0; j < subN; ++j) {
      if (!accType) {
        init.push_back(arith::ConstantOp::create(
            b, loc, DenseElementsAttr::get(vec4f32, b.getF32FloatAttr(0))));
        continue;
      }
      // Rows and columns out of range read 0 and their results are dropped.
      auto [m, n] = accPosition(i, j);
      Value v;
      if (c.n % 4 == 0) {
        Value valid = kb.andI(kb.lt(m, c.m), kb.lt(n, c.n));
        Value offset =
            kb.maskedOffset(valid, kb.add(kb.mul(m, c.n), n), c.m * c.n);
        v = vector::LoadOp::create(b, loc, VectorType::get({4}, accType),
                                   accBuf, ValueRange{offset});
      } else {
        SmallVector<Value> elems;
        for (int64_t r = 0; r < 4; ++r) {
          Value nr = kb.add(n, r);
          Value valid = kb.andI(kb.lt(m, c.m), kb.lt(nr, c.n));
          Value offset =
              kb.maskedOffset(valid, kb.add(kb.mul(m, c.n), nr), c.m * c.n);
          elems.push_back(
              memref::LoadOp::create(b, loc, accBuf, ValueRange{offset}));
        }
        v = vector::FromElementsOp::create(
            b, loc, VectorType::get({4}, accType), elems);
      }
      if (!accType.isF32())
        v = arith::ExtFOp::create(b, loc, vec4f32, v);
      init.push_back(v);
    }

  // Prologue: the first K step in flight, its scales loaded.
  copyStep(firstStep);
  loadStepScales(scaleStep(firstStep), init);
  int64_t numAcc = subM * subN;

  Value zero = kb.idx(0);
  auto loop =
      scf::ForOp::create(b, loc, zero, kb.idx(loopSteps), kb.idx(1), init);
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value iteration = loop.getInductionVar();
    Value step = split ? kb.add(firstStep, iteration) : iteration;
    ValueRange carried = loop.getRegionIterArgs();
    // This step's tiles are in LDS once every wave's copies have landed; the
    // barrier also tells that the other stage is free again.
    amdgpu::MemoryCounterWaitOp::create(b, loc, b.getI32IntegerAttr(0),
                                        IntegerAttr(), IntegerAttr(),
                                        IntegerAttr(), IntegerAttr());
    gpu::BarrierOp::create(b, loc);
    auto scaleType = VectorType::get({4}, b.getType<Float8E8M0FNUType>());
    SmallVector<Value> aScale, bScale;
    for (int64_t p = 0; p < subM / 2; ++p)
      aScale.push_back(vector::BitCastOp::create(b, loc, scaleType,
                                                 carried[numAcc + p]));
    for (int64_t p = 0; p < subN / 2; ++p)
      bScale.push_back(vector::BitCastOp::create(
          b, loc, scaleType, carried[numAcc + subM / 2 + p]));

    // Every fragment of this step is read from LDS before the next step's
    // copy is issued: the hardware cannot tell the two stages apart, so a
    // read after the copy would wait for the copy to land.
    Value base = stageBase(step);
    auto fragType = VectorType::get({32}, b.getType<Float4E2M1FNType>());
    auto vec16i8 = VectorType::get({16}, i8);
    SmallVector<SmallVector<Value>, 2> aFrag(2), bFrag(2);
    for (int64_t s = 0; s < 2; ++s) {
      // Lane l reads K chunk 4 s + l / 16 of row l % 16 of each subtile.
      Value chunk = kb.add(laneGroup, kb.idx(4 * s));
      Value slot = c.testMutation == "lds-swizzle"
                       ? chunk
                       : swizzledSlot(kb, chunk, lane);
      Value row = c.testMutation == "fragment-row" ? kb.xorI(lane16, 1) : lane16;
      Value laneOffset = kb.add(kb.mul(row, kRowBytes), kb.mul(slot, 16));
      auto fragment = [&](int64_t tileOffset, Value waveRow, int64_t sub) {
        Value offset = kb.add(
            kb.add(base, kb.idx(tileOffset + 16 * sub * kRowBytes)),
            kb.add(kb.mul(waveRow, kRowBytes), laneOffset));
        Value bytes = vector::LoadOp::create(b, loc, vec16i8, lds,
                                             ValueRange{offset});
        return vector::BitCastOp::create(b, loc, fragType, bytes);
      };
      for (int64_t i = 0; i < subM; ++i)
        aFrag[s].push_back(fragment(0, kb.mul(wm, waveM), i));
      for (int64_t j = 0; j < subN; ++j)
        bFrag[s].push_back(
            fragment(c.tileM * kRowBytes, kb.mul(wn, waveN), j));
    }

    Value next = kb.add(step, 1);
    Value hasNext = kb.lt(kb.add(iteration, 1), loopSteps);
    auto ifOp = scf::IfOp::create(b, loc, hasNext, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      copyStep(next);
    }
    // Next step's scales (the last step reloads its own: no branch).
    SmallVector<Value> nextScales;
    loadStepScales(scaleStep(next), nextScales);

    SmallVector<Value> acc(carried.begin(), carried.begin() + numAcc);
    for (int64_t s = 0; s < 2; ++s)
      for (int64_t i = 0; i < subM; ++i)
        for (int64_t j = 0; j < subN; ++j) {
          Value &d = acc[i * subN + j];
          int64_t aByte = 2 * s + i % 2;
          if (c.testMutation == "scale-byte")
            aByte = 2 * (i % 2) + s;
          d = amdgpu::ScaledMFMAOp::create(
              b, loc, vec4f32, 16, 16, 128, bFrag[s][j], aFrag[s][i], d,
              bScale[j / 2], aScale[i / 2], 2 * s + j % 2, aByte);
        }
    SmallVector<Value> yields(acc);
    yields.append(nextScales);
    scf::YieldOp::create(b, loc, yields);
  }

  // Epilogue: 4 consecutive columns a lane, masked past M and N.
  for (int64_t i = 0; i < subM; ++i)
    for (int64_t j = 0; j < subN; ++j) {
      Value v = loop.getResult(i * subN + j);
      auto resultVec = VectorType::get({4}, resultType);
      if (!resultType.isF32())
        v = arith::TruncFOp::create(b, loc, resultVec, v);
      auto [m, n] = accPosition(i, j);
      if (c.n % 4 == 0) {
        Value valid = kb.andI(kb.lt(m, c.m), kb.lt(n, c.n));
        Value offset = kb.maskedOffset(
            valid, kb.add(cBase, kb.add(kb.mul(m, c.n), n)), cSize);
        vector::StoreOp::create(b, loc, v, cBuf, ValueRange{offset});
        continue;
      }
      for (int64_t r = 0; r < 4; ++r) {
        Value nr = kb.add(n, r);
        Value valid = kb.andI(kb.lt(m, c.m), kb.lt(nr, c.n));
        Value offset = kb.maskedOffset(
            valid, kb.add(cBase, kb.add(kb.mul(m, c.n), nr)), cSize);
        Value e = vector::ExtractOp::create(b, loc, v, r);
        memref::StoreOp::create(b, loc, e, cBuf, ValueRange{offset});
      }
    }
  gpu::ReturnOp::create(b, loc);
  return func;
}

/// Elements a work-item of the add-splits kernel sums: four (16-byte f32
/// accesses) where C's size allows.
static int64_t addWidth(const GemmConfig &c) {
  return c.m * c.n % 4 == 0 ? 4 : 1;
}

int64_t gfx950::addSplitsWorkgroups(const GemmConfig &c) {
  return ceilDiv(ceilDiv(c.m * c.n, addWidth(c)), kWorkgroupSize);
}

gpu::GPUFuncOp gfx950::buildAddSplitsKernel(OpBuilder &b, Location loc,
                                            gpu::GPUModuleOp module,
                                            StringRef name,
                                            const GemmConfig &c) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  int64_t size = c.m * c.n;
  SmallVector<Type> args = {globalBuffer(ctx, c.splits * size, f32)};
  if (c.accType)
    args.push_back(globalBuffer(ctx, size, c.accType));
  args.push_back(globalBuffer(ctx, size, c.resultType));
  gpu::GPUFuncOp func = createKernel(b, loc, module, name, args);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&func.getBody().front());
  KernelBuilder kb(b, loc);
  Value ws = kb.buffer(func.getArgument(0));
  Value accBuf = c.accType ? kb.buffer(func.getArgument(1)) : Value();
  Value out = kb.buffer(func.getArguments().back());

  // Work-items past C are sent past the end of every buffer.
  int64_t width = addWidth(c);
  Value at = kb.mul(kb.add(kb.mul(kb.blockId(), kWorkgroupSize), kb.threadId()),
                    width);
  Value valid = kb.lt(at, size);
  auto load = [&](Type element, Value buffer, Value offset, int64_t bufSize) {
    Value index = kb.maskedOffset(valid, offset, bufSize);
    if (width == 1)
      return Value(memref::LoadOp::create(b, loc, buffer, ValueRange{index}));
    return Value(vector::LoadOp::create(
        b, loc, VectorType::get({width}, element), buffer, ValueRange{index}));
  };
  // In the unsplit kernel's order: the accumulator, then the K ranges.
  Value sum;
  if (c.accType) {
    sum = load(c.accType, accBuf, at, size);
    if (!c.accType.isF32())
      sum = arith::ExtFOp::create(
          b, loc, width == 1 ? f32 : Type(VectorType::get({width}, f32)), sum);
  }
  for (int64_t s = 0; s < c.splits; ++s) {
    Value part = load(f32, ws, kb.add(at, s * size), c.splits * size);
    sum = sum ? arith::AddFOp::create(b, loc, sum, part).getResult() : part;
  }
  if (!c.resultType.isF32())
    sum = arith::TruncFOp::create(
        b, loc,
        width == 1 ? c.resultType
                   : Type(VectorType::get({width}, c.resultType)),
        sum);
  Value index = kb.maskedOffset(valid, at, size);
  if (width == 1)
    memref::StoreOp::create(b, loc, sum, out, ValueRange{index});
  else
    vector::StoreOp::create(b, loc, sum, out, ValueRange{index});
  gpu::ReturnOp::create(b, loc);
  return func;
}
