//===- GemmKernel.cpp - MXFP4 GEMM on Hopper tensor cores -----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// C[M, N] (+)= A[M, K] * B[N, K]^T with FP4 values and canonical E8M0
// scales in memory. sm_90 has no FP4 tensor cores, so each K step expands
// the tiles to bf16 in shared memory and multiplies them with
// `mma.sync.m16n8k16.bf16` into f32 accumulators.
//
// The expansion is exact: an FP4 value times its power-of-two scale has at
// most two significant bits and lies in bf16's range exactly when it lies
// in f32's (byte 0 gives the bf16 subnormal 2^-127; 6 * 2^127 overflows in
// both). Each thread expands one 32-element block of A and one of B per K
// step: a byte of two codes indexes a 256-entry table of bf16 pairs, and one
// `mul.bf16x2` applies the scale (byte 255 makes the block NaN).
//
// The MMAs are TensorCore.h's (128 x 128 block tiles, K steps of 64, 8
// warps); the next step's global loads are issued before this step's MMAs.
// Ragged M and N are guarded; K is a multiple of 32.
//
// Weight gradients (a small C, K = tokens) have too few tiles to fill the
// device: there K is split (TensorCore.h's splitK), grid z picks a range of
// K steps, each split writes its f32 partial C to a workspace, and a second
// kernel adds the splits in split order (then the accumulator) and converts
// to C's type. That is deterministic, but the f32 sum is rounded split by
// split: unsplit, C is one in-order sum over K like the CPU's, and only the
// GEMMs that split lose bit-identity with it.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "TensorCore.h"

#include "../MXFP4ToLinalg/Numerics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::kernels;
using namespace mlir::mxfp4::sm90;
namespace num = mlir::mxfp4::numerics;

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t sm90::gemmBlocks(const GemmConfig &c) {
  return ceilDiv(c.m, kTile) * ceilDiv(c.n, kTile);
}

KSplit sm90::gemmSplit(const GemmConfig &c) {
  return splitK(gemmBlocks(c), ceilDiv(c.k, kStepK));
}

namespace {

/// Builds the kernel body; one instance per kernel.
class GemmBuilder {
public:
  GemmBuilder(OpBuilder &b, Location loc, const GemmConfig &c)
      : b(b), loc(loc), kb(b, loc, BoundsMode::guarded), c(c) {}

  void build(gpu::GPUFuncOp func);

private:
  Value i32(int64_t v) { return num::constant(b, loc, b.getI32Type(), v); }
  /// The bf16 bits of E2M1 code `code` (i32, 0..15).
  Value codeBits(Value code);
  void fillTable(Value table, Value tid);
  /// Loads block `kBlock` of row `row` of an operand with `rows` rows:
  /// 16 bytes of codes and the scale byte (zeros outside).
  std::pair<Value, Value> loadBlock(Value values, Value scales, Value row,
                                    Value kBlock, int64_t rows);
  /// Expands a block into the shared tile at `offset` (elements).
  void expandBlock(Value codes, Value scale, Value table, Value tile,
                   Value offset);
  /// Writes this warp's part of C (plus `acc`, if any) to `out`; split K
  /// (`split` is the split's index), its f32 partial C to the workspace
  /// `out` instead.
  void epilogue(Value acc, Value out, Value split,
                ArrayRef<Value> accumulators, Value rowBase, Value colBase);

  OpBuilder &b;
  Location loc;
  KernelBuilder kb;
  const GemmConfig &c;
};

} // namespace

Value GemmBuilder::codeBits(Value code) {
  // Magnitude codes 2..7 are 2^(e-1) (1 + m/2) for bits e e m: bf16 bits
  // (code << 6) + 0x3F00; code 1 is 0.5 and code 0 is 0.
  Value magnitude = arith::AndIOp::create(b, loc, code, i32(7));
  Value normal = arith::AddIOp::create(
      b, loc, arith::ShLIOp::create(b, loc, magnitude, i32(6)), i32(0x3F00));
  Value bits = arith::SelectOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, magnitude,
                            i32(2)),
      arith::MulIOp::create(b, loc, magnitude, i32(0x3F00)), normal);
  Value sign = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, code, i32(8)), i32(12));
  return arith::OrIOp::create(b, loc, bits, sign);
}

void GemmBuilder::fillTable(Value table, Value tid) {
  Value byte = arith::IndexCastOp::create(b, loc, b.getI32Type(), tid);
  Value lo = codeBits(arith::AndIOp::create(b, loc, byte, i32(15)));
  Value hi = codeBits(arith::ShRUIOp::create(b, loc, byte, i32(4)));
  Value pair = arith::OrIOp::create(
      b, loc, lo, arith::ShLIOp::create(b, loc, hi, i32(16)));
  memref::StoreOp::create(b, loc, pair, table, ValueRange{tid});
}

std::pair<Value, Value> GemmBuilder::loadBlock(Value values, Value scales,
                                               Value row, Value kBlock,
                                               int64_t rows) {
  int64_t kBlocks = c.k / 32;
  Value valid = kb.andI(kb.lt(row, rows), kb.lt(kBlock, kBlocks));
  Value block = kb.add(kb.mul(row, kBlocks), kBlock);
  Value codes = kb.load(VectorType::get({4}, b.getI32Type()), values, valid,
                        kb.mul(block, 4), rows * kBlocks * 4,
                        /*alignment=*/16);
  Value scale = kb.load(b.getI8Type(), scales, valid, block, rows * kBlocks);
  return {codes, scale};
}

void GemmBuilder::expandBlock(Value codes, Value scale, Value table,
                              Value tile, Value offset) {
  Type i32Type = b.getI32Type();
  auto pairType = VectorType::get({2}, b.getBF16Type());
  // The scale as bf16: 2^(s-127); byte 0 is the subnormal 2^-127, 255 NaN.
  Value s = arith::ExtUIOp::create(b, loc, i32Type, scale);
  Value bits = arith::SelectOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, s, i32(0)),
      i32(0x40),
      arith::SelectOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, s, i32(255)),
          i32(0x7FC0), arith::ShLIOp::create(b, loc, s, i32(7))));
  Value packedScale = arith::OrIOp::create(
      b, loc, bits, arith::ShLIOp::create(b, loc, bits, i32(16)));
  Value scalePair = vector::BitCastOp::create(
      b, loc, pairType,
      vector::BroadcastOp::create(b, loc, VectorType::get({1}, i32Type),
                                  packedScale));
  SmallVector<Value> words;
  for (int64_t w = 0; w < 4; ++w) {
    Value word = vector::ExtractOp::create(b, loc, codes, w);
    for (int64_t j = 0; j < 4; ++j) {
      Value byte = arith::AndIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, word, i32(8 * j)), i32(255));
      Value entry = memref::LoadOp::create(
          b, loc, table,
          ValueRange{arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                                byte)});
      Value pair = vector::BitCastOp::create(
          b, loc, pairType,
          vector::BroadcastOp::create(b, loc, VectorType::get({1}, i32Type),
                                      entry));
      pair = arith::MulFOp::create(b, loc, pair, scalePair);
      words.push_back(vector::ExtractOp::create(
          b, loc,
          vector::BitCastOp::create(b, loc, VectorType::get({1}, i32Type),
                                    pair),
          0));
    }
  }
  // 64 bytes into the tile, 16 at a time.
  for (int64_t q = 0; q < 4; ++q) {
    Value chunk = vector::FromElementsOp::create(
        b, loc, VectorType::get({4}, i32Type),
        ArrayRef<Value>(words).slice(4 * q, 4));
    Value asBF16 = vector::BitCastOp::create(
        b, loc, VectorType::get({8}, b.getBF16Type()), chunk);
    vector::StoreOp::create(b, loc, asBF16, tile,
                            ValueRange{kb.add(offset, 8 * q)},
                            /*nontemporal=*/false, llvm::MaybeAlign(16));
  }
}

void GemmBuilder::epilogue(Value acc, Value out, Value split,
                           ArrayRef<Value> accumulators, Value rowBase,
                           Value colBase) {
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
  forEachAccumulatorPair(kb, accumulators, rowBase, colBase,
                         [&](Value row, Value col, Value pair) {
    for (int64_t e = 0; e < (pairs ? 1 : 2); ++e) {
      Value at = kb.add(kb.mul(row, c.n), kb.add(col, e));
      Value valid = kb.andI(kb.lt(row, c.m), kb.lt(kb.add(col, e), c.n));
      auto shaped = [&](Type t) -> Type {
        return pairs ? Type(VectorType::get({2}, t)) : t;
      };
      Value value = pairs ? pair : vector::ExtractOp::create(b, loc, pair, e);
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
  Type f32 = b.getF32Type();
  // The codes are read 16 bytes at a time: view the byte buffers as words.
  auto words = [&](Value bytes) {
    int64_t size = cast<MemRefType>(bytes.getType()).getNumElements() / 4;
    auto type = MemRefType::get(
        {size}, b.getI32Type(), MemRefLayoutAttrInterface(),
        cast<MemRefType>(bytes.getType()).getMemorySpace());
    return memref::ViewOp::create(b, loc, type, bytes, kb.idx(0),
                                  ValueRange{});
  };
  Value aValues = words(func.getArgument(0)), aScales = func.getArgument(1);
  Value bValues = words(func.getArgument(2)), bScales = func.getArgument(3);
  KSplit split = gemmSplit(c);
  Value acc =
      c.accType && split.splits == 1 ? func.getArgument(4) : Value();
  Value out = func.getArgument(func.getFunctionType().getNumInputs() - 1);
  auto attributions = func.getWorkgroupAttributions();
  Value table = attributions[0], aTile = attributions[1],
        bTile = attributions[2];

  Value tid = kb.threadId();
  fillTable(table, tid);

  int64_t tilesN = ceilDiv(c.n, kTile);
  Value m0 = kb.mul(kb.div(kb.blockId(), tilesN), kTile);
  Value n0 = kb.mul(kb.rem(kb.blockId(), tilesN), kTile);
  // Loading: thread t expands row t / 2, K block t % 2 of the step.
  Value loadRow = kb.div(tid, 2), loadHalf = kb.rem(tid, 2);
  Value tileOffset = SharedTile{aTile, true}.offset(kb, loadRow,
                                                   kb.mul(loadHalf, 32));
  auto load = [&](Value step) {
    Value kBlock = kb.add(kb.mul(step, 2), loadHalf);
    auto [ac, as] = loadBlock(aValues, aScales, kb.add(m0, loadRow), kBlock,
                              c.m);
    auto [bc, bs] = loadBlock(bValues, bScales, kb.add(n0, loadRow), kBlock,
                              c.n);
    return SmallVector<Value>{ac, as, bc, bs};
  };

  Value warp = kb.div(tid, 32);
  Value wm = kb.div(warp, kWarpsN), wn = kb.rem(warp, kWarpsN);

  auto accType = VectorType::get({4}, f32);
  int64_t tiles = kAccumulators;
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(accType));
  SmallVector<Value> inits(tiles, zero);
  int64_t steps = ceilDiv(c.k, kStepK);
  // This block's K steps: all of them, or its split's range.
  Value splitId, firstStep = kb.idx(0), lastStep = kb.idx(steps);
  if (split.splits > 1) {
    splitId = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
    firstStep = kb.mul(splitId, split.stepsPerSplit);
    lastStep = kb.min(kb.add(firstStep, split.stepsPerSplit), lastStep);
  }
  SmallVector<Value> first = load(firstStep);
  inits.append(first);

  auto loop =
      scf::ForOp::create(b, loc, firstStep, lastStep, kb.idx(1), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value step = loop.getInductionVar();
    auto carried = loop.getRegionIterArgs();
    gpu::BarrierOp::create(b, loc); // the previous step's reads are done
    expandBlock(carried[tiles], carried[tiles + 1], table, aTile, tileOffset);
    expandBlock(carried[tiles + 2], carried[tiles + 3], table, bTile,
                tileOffset);
    gpu::BarrierOp::create(b, loc);
    // The next step's global loads fly while the tensor cores work.
    SmallVector<Value> next = load(kb.add(step, 1));
    SmallVector<Value> accumulators(carried.take_front(tiles));
    mmaStep(kb, SharedTile{aTile, true}, SharedTile{bTile, true}, wm, wn,
            accumulators);
    SmallVector<Value> yields(accumulators);
    yields.append(next);
    scf::YieldOp::create(b, loc, yields);
  }
  SmallVector<Value> results(loop.getResults().take_front(tiles));
  epilogue(acc, out, splitId, results, kb.add(m0, kb.mul(wm, kWarpM)),
           kb.add(n0, kb.mul(wn, kWarpN)));
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
  SmallVector<Type> shared = {
      workgroupBuffer(ctx, 256, b.getI32Type()),
      workgroupBuffer(ctx, SharedTile::elements(true), b.getBF16Type()),
      workgroupBuffer(ctx, SharedTile::elements(true), b.getBF16Type())};
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
                                          StringRef name,
                                          const GemmConfig &c) {
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
  Value at = kb.mul(
      kb.add(kb.mul(kb.blockId(), kWorkgroupSize), kb.threadId()), width);
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
