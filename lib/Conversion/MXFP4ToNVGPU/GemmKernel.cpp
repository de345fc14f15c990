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
// then by the scale, gives the value (byte 255 makes the block NaN). A pair
// holds codes q and q + 4 of a word, 16 bits apart, so one multiply moves
// both (a chunk's K order is 0 4 1 5 2 6 3 7 in A and B alike); the integer
// pipe, at half the FMA pipe's rate, takes only the masks and a rotate.
//
// Warpgroup 0 expands A's 128 rows and warpgroup 1 B's. The main loop's
// unit is a super step of four K steps: lane 4g + j of warp w loads the
// 16 bytes of codes of step j of rows 32w + g + 8i (i < 4), so a row's four
// lanes read its 64 contiguous bytes and a warp's load touches 8 rows, not
// the 16 that reading a K step at a time takes (L1, busy with the MMAs'
// and the expansion's shared-memory traffic, serves half the wavefronts).
// Stage i of a super step then holds word i of every step: lane 4g + j
// writes its rows' word i, expanded, as the core-matrix chunk at K 8j of
// the stage (each store one 8-row group). A and B take the same order, so
// the product is the same sum over K; the scales were applied in the
// expansion. Where rows of scales are whole words, a row's lanes read the
// super step's four scales as one word. The next super step's loads go
// out during the first two stages. Ragged M and N are guarded; K is a
// multiple of 32 (a partial last super step expands zeros).
//
// The tensor cores add each k16 slice's products to the f32 accumulators;
// a slice holds words of two K steps, so the order differs from the CPU's
// block by block sum wherever a rounding falls inside a slice.
//
// Weight gradients (a small C, K = tokens) have too few tiles to fill the
// device: there K is split (TensorCore.h's splitK), grid z picks a range of
// super steps, each split writes its f32 partial C to a workspace, and a second
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

/// The main loop's unit: four K steps, one 16-byte load per row and lane.
static constexpr int64_t kSuperStepK = 4 * kWgStepK;
/// The rows a thread loads and expands: a warpgroup's 128, four lanes each.
static constexpr int64_t kRowsPerThread = 4;

int64_t sm90::gemmTiles(const GemmConfig &c) {
  return ceilDiv(c.m, kTile) * ceilDiv(c.n, kTile);
}

int64_t sm90::gemmBlocks(const GemmConfig &c) {
  return std::min(gemmTiles(c), kResidentBlocks);
}

KSplit sm90::gemmSplit(const GemmConfig &c) {
  // In super steps, the main loop's unit.
  return splitK(gemmTiles(c), ceilDiv(c.k, kSuperStepK));
}

namespace {

/// This thread's rows of one super step (four K steps, 128 of K): row i's
/// 16 bytes of codes of step 4 * s + lane % 4 (vector<4xi32>) and its scale
/// as loaded (the byte as i32, or with word scales the row's word of the
/// super step, i32), then, after `toScalePairs`, as a pair of bf16.
struct SuperStep {
  SmallVector<Value, 4> codes, scales;
};

/// Builds the kernel body; one instance per kernel.
class GemmBuilder {
public:
  GemmBuilder(OpBuilder &b, Location loc, const GemmConfig &c)
      : b(b), loc(loc), kb(b, loc, BoundsMode::guarded), c(c) {}

  void build(gpu::GPUFuncOp func);

private:
  Value i32(int64_t v) { return num::constant(b, loc, b.getI32Type(), v); }
  /// Loads this thread's rows `first` .. `first + count - 1` of super step
  /// `s` into `into` (zeros outside K).
  void load(Value s, int64_t first, int64_t count, SuperStep &into);
  /// The whole super step `s`.
  SuperStep load(Value s);
  /// Turns `block`'s loaded scales into bf16 pairs.
  void toScalePairs(SuperStep &block);
  /// Expands word `j` of this thread's rows of `block` into `stage`.
  void expand(const SuperStep &block, int64_t j, int64_t stage);
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
  // lane's step in a super step (index; 8 * step: its chunk's K offset in a
  // stage, and as i32 its scale's bit offset in a word), its four rows, the
  // block tile's origin and the shared tiles.
  Value aValues, aScales, bValues, bScales;
  // Whether the scales are read a word (a super step) at a time. Needs rows
  // of whole words.
  bool wordScales = c.k / 32 % 4 == 0;
  Value expandsB, laneStep, scaleShift, chunkK, rows[kRowsPerThread], m0, n0;
  CoreMatrixTile aTile, bTile;
};

} // namespace

void GemmBuilder::load(Value s, int64_t first, int64_t count, SuperStep &into) {
  int64_t kBlocks = c.k / 32;
  Type i32 = b.getI32Type();
  auto codesType = VectorType::get({4}, i32);
  Value step = kb.add(kb.mul(s, 4), laneStep);
  Value inK = kb.lt(step, kBlocks);
  SmallVector<Type> types;
  for (int64_t i = 0; i < count; ++i)
    types.append({codesType, i32});
  // A warpgroup reads one operand: the branch is uniform in every warp.
  auto ifOp = scf::IfOp::create(b, loc, types, expandsB,
                                /*withElseRegion=*/true);
  auto emit = [&](Block *block, Value values, Value scales, Value origin,
                  int64_t extent) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(block);
    SmallVector<Value> results;
    for (int64_t i = first; i < first + count; ++i) {
      Value r = kb.add(origin, rows[i]);
      Value valid = kb.andI(kb.lt(r, extent), inK);
      Value at = kb.add(kb.mul(r, kBlocks), step);
      results.push_back(kb.load(codesType, values, valid, kb.mul(at, 4),
                                extent * kBlocks * 4, /*alignment=*/16));
      // A row's four lanes read the same word: one access.
      results.push_back(
          wordScales
              ? kb.load(i32, scales, valid, kb.add(kb.mul(r, kBlocks / 4), s),
                        extent * kBlocks / 4)
              : arith::ExtUIOp::create(b, loc, i32,
                                       kb.load(b.getI8Type(), scales, valid, at,
                                               extent * kBlocks)));
    }
    scf::YieldOp::create(b, loc, results);
  };
  emit(ifOp.thenBlock(), bValues, bScales, n0, c.n);
  emit(ifOp.elseBlock(), aValues, aScales, m0, c.m);
  into.codes.resize(kRowsPerThread);
  into.scales.resize(kRowsPerThread);
  for (int64_t i = 0; i < count; ++i) {
    into.codes[first + i] = ifOp.getResult(2 * i);
    into.scales[first + i] = ifOp.getResult(2 * i + 1);
  }
}

SuperStep GemmBuilder::load(Value s) {
  SuperStep block;
  load(s, 0, kRowsPerThread, block);
  return block;
}

void GemmBuilder::toScalePairs(SuperStep &block) {
  for (Value &s : block.scales) {
    if (wordScales)
      s = arith::AndIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, s, scaleShift), i32(0xFF));
    // 2^(s-127) as bf16: byte 0 is the subnormal 2^-127, 255 NaN.
    Value bits = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, s, i32(0)),
        i32(0x40),
        arith::SelectOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, s,
                                  i32(255)),
            i32(0x7FC0), arith::ShLIOp::create(b, loc, s, i32(7))));
    Value packed = arith::OrIOp::create(
        b, loc, bits, arith::ShLIOp::create(b, loc, bits, i32(16)));
    s = vector::BitCastOp::create(
        b, loc, VectorType::get({2}, b.getBF16Type()),
        vector::BroadcastOp::create(
            b, loc, VectorType::get({1}, b.getI32Type()), packed));
  }
}

void GemmBuilder::expand(const SuperStep &block, int64_t j, int64_t stage) {
  Type i32Type = b.getI32Type();
  auto pairType = VectorType::get({2}, b.getBF16Type());
  auto asPair = [&](Value word) {
    return vector::BitCastOp::create(
        b, loc, pairType,
        vector::BroadcastOp::create(b, loc, VectorType::get({1}, i32Type),
                                    word));
  };
  Value twoTo126 = asPair(i32(0x7E807E80));
  SmallVector<Value> chunks;
  for (int64_t i = 0; i < kRowsPerThread; ++i) {
    Value word = vector::ExtractOp::create(b, loc, block.codes[i], j);
    // Codes 2, 3, 6, 7 at the places of 0, 1, 4, 5.
    Value rotated = arith::OrIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, word, i32(8)),
        arith::ShLIOp::create(b, loc, word, i32(24)));
    SmallVector<Value> pairs;
    for (int64_t q = 0; q < 4; ++q) {
      // Pair q holds codes q and q + 4 (nibbles 4q and 4q + 16 apart by
      // 16 bits): one mask, one multiply (two shifts that do not overlap,
      // so they add without carries) and one mask move both codes' sign to
      // bits 15 and 31 and their e1 e0 m to bits 8..6 and 24..22. The
      // multiply goes to the FMA pipe, the masks to the integer pipe, which
      // bounds the expansion otherwise.
      bool odd = q % 2;
      Value codes = arith::AndIOp::create(b, loc, q < 2 ? word : rotated,
                                          i32(odd ? 0x00F000F0 : 0x000F000F));
      Value spread = arith::MulIOp::create(
          b, loc, codes, i32(odd ? (1 << 2) + (1 << 8) : (1 << 6) + (1 << 12)));
      Value pair =
          asPair(arith::AndIOp::create(b, loc, spread, i32(0x81C081C0)));
      pair = arith::MulFOp::create(b, loc, pair, twoTo126);
      pair = arith::MulFOp::create(b, loc, pair, block.scales[i]);
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
    for (auto [i, chunk] : llvm::enumerate(chunks))
      storeRowChunk(kb, *tile, kb.idx(stage), rows[i], chunkK, chunk);
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
  // Adjacent columns are stored as pairs when a row has an even length; a
  // pair starts at an even element, so it is one aligned access, not two.
  bool pairs = c.n % 2 == 0;
  auto pairAlignment = [&](Type t) -> unsigned {
    return pairs ? 2 * t.getIntOrFloatBitWidth() / 8 : 0;
  };
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
            Value prior = kb.load(shaped(c.accType), acc, valid, at, c.m * c.n,
                                  pairAlignment(c.accType));
            if (!c.accType.isF32())
              prior = arith::ExtFOp::create(b, loc, shaped(f32), prior);
            value = arith::AddFOp::create(b, loc, prior, value);
          }
          if (!outType.isF32())
            value = arith::TruncFOp::create(b, loc, shaped(outType), value);
          kb.store(value, out, valid, slice ? kb.add(slice, at) : at, size,
                   pairAlignment(outType));
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
  laneStep = kb.rem(lane, 4);
  // The lane's chunk of each row in a stage: K 8 * step .. 8 * step + 7.
  chunkK = kb.mul(laneStep, 8);
  scaleShift = arith::IndexCastOp::create(b, loc, b.getI32Type(), chunkK);
  // Warp w of a warpgroup holds rows 32 w .. 32 w + 31, lane 4 g + step
  // rows 32 w + 8 i + g: each store of row i fills one 8-row group.
  Value warpRows = kb.mul(kb.div(kb.rem(tid, kTile), 32), 32);
  for (int64_t i = 0; i < kRowsPerThread; ++i)
    rows[i] = kb.add(warpRows, kb.add(kb.div(lane, 4), 8 * i));
  int64_t tilesN = ceilDiv(c.n, kTile);
  auto setTile = [&](Value tile) {
    m0 = kb.mul(kb.div(tile, tilesN), kTile);
    n0 = kb.mul(kb.rem(tile, tilesN), kTile);
  };
  // Two warpgroups, each 64 rows of C by all 128 columns.
  Value wgRow = kb.mul(kb.div(tid, 128), 64);

  // This block's super steps: all of them, or its split's range.
  Value splitId, first = kb.idx(0), last = kb.idx(ceilDiv(c.k, kSuperStepK));
  if (split.splits > 1) {
    splitId = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
    first = kb.mul(splitId, split.stepsPerSplit);
    last = kb.min(kb.add(first, split.stepsPerSplit), last);
  }
  auto flatten = [](const SuperStep &block) {
    SmallVector<Value> values(block.codes.begin(), block.codes.end());
    values.append(block.scales.begin(), block.scales.end());
    return values;
  };
  auto unflatten = [](ValueRange values) {
    SuperStep block;
    block.codes.assign(values.begin(), values.begin() + kRowsPerThread);
    block.scales.assign(values.begin() + kRowsPerThread, values.end());
    return block;
  };
  // A block loops over tiles gemmBlocks apart; it loads the next tile's
  // first super step before writing this tile's C, so the loads fly while
  // the epilogue stores.
  Value firstTile = kb.blockId();
  setTile(firstTile);
  auto tileLoop =
      scf::ForOp::create(b, loc, firstTile, kb.idx(gemmTiles(c)),
                         kb.idx(gemmBlocks(c)), flatten(load(first)));
  OpBuilder::InsertionGuard tileGuard(b);
  b.setInsertionPointToStart(tileLoop.getBody());
  Value tile = tileLoop.getInductionVar();
  setTile(tile);
  SuperStep firstStep = unflatten(tileLoop.getRegionIterArgs());
  toScalePairs(firstStep);
  // Two stages: stage j of a super step (its words j) multiplies from
  // buffer j % 2 while the threads expand the next words into the other.
  expand(firstStep, 0, 0);
  fenceSharedForMma(kb);
  gpu::BarrierOp::create(b, loc);
  SmallVector<Value> inits = {zeroAccumulators(kb, kTile)};
  inits.append(flatten(firstStep));
  auto loop = scf::ForOp::create(b, loc, first, last, kb.idx(1), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value s = loop.getInductionVar();
    Value accumulators = loop.getRegionIterArgs()[0];
    SuperStep current = unflatten(loop.getRegionIterArgs().drop_front());
    // The next super step's loads go out in two halves, after stages 0 and
    // 1, as the current one's words die: registers bound two blocks an SM.
    SuperStep next;
    for (int64_t j = 0; j < 4; ++j) {
      accumulators = issueWarpgroupMmas(kb, aTile, wgRow, bTile, kb.idx(0),
                                        kTile, kb.idx(j % 2), accumulators);
      if (j < 2)
        load(kb.add(s, 1), 2 * j, 2, next);
      if (j < 3) {
        expand(current, j + 1, (j + 1) % 2);
      } else {
        // The last super step expands past its range: harmless.
        toScalePairs(next);
        expand(next, 0, 0);
      }
      fenceSharedForMma(kb);
      waitWarpgroupMmas(kb);
      gpu::BarrierOp::create(b, loc);
    }
    SmallVector<Value> yields = {accumulators};
    yields.append(flatten(next));
    scf::YieldOp::create(b, loc, yields);
  }
  setTile(kb.add(tile, gemmBlocks(c)));
  SmallVector<Value> nextTile = flatten(load(first));
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
  // Two blocks an SM: ptxas keeps to 128 registers a thread.
  func->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                b.getDenseI32ArrayAttr({kBlockThreads, 1, 1}));
  func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                b.getI32IntegerAttr(kResidentBlocks / kMultiprocessors));
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
