//===- GemmKernel.cpp - MXFP4 GEMM on Hopper warpgroup MMAs ---------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// C[M, N] (+)= A[M, K] * B[N, K]^T with FP4 values and canonical E8M0
// scales in memory. sm_90 has no FP4 tensor cores, so each K step of 32 (one
// scale block) expands the tiles to bf16 and four warpgroups multiply a
// 256 x 128 block tile (64 rows each) with `wgmma.mma_async` into f32
// accumulators: A's rows go straight into each warpgroup's A fragments
// (registers), B's into shared memory in wgmma's core-matrix layout
// (WarpgroupMma.h), shared by the four. A from registers saves its
// shared-memory stores and the MMAs' reads of it; four warpgroups on one B
// tile expand 384 rows for 256 x 128 of C where two expanded 256 for
// 128 x 128. One block of 512 threads (128 registers each) fills an SM.
//
// The expansion is exact and arithmetic (Fp4Expansion.h).
//
// Lane 4g + t of warp w holds rows 16w + g and 16w + g + 8 of A (wgmma's
// A fragment rows for warp w % 4 of warpgroup w / 4) and row 8w + g of B.
// The main loop's unit is a super step of four K steps: the lane loads
// block t of the super step (16 bytes) of each of its three rows, so a
// row's four lanes read its 64 contiguous bytes. Stage j multiplies words j of
// every block: a k16 slice's K 2t, 2t + 1 (and 2t + 8, 2t + 9) are, in A's
// fragment, lane t's pairs, so the lane expands word j of its A rows into the
// registers of the stage's two slices, and stores word j of its B rows'
// pairs at the same K of the B tile (each warp store one core matrix).
// Within a slice the K order is then a permutation of the four blocks'
// words, the same in A and B, so the product is the same sum over K; the
// scales were applied in the expansion. Where rows of scales are whole
// words, a row's lanes read the super step's four scales as one word. The
// next super step's loads go out during the first two stages, each after
// the stage's fence (which waits for them otherwise). Ragged M and
// N are guarded; K is a multiple of 32 (a partial last super step expands
// zeros).
//
// A bf16 C is stored in 16-byte chunks: the accumulators give a lane two
// adjacent columns in each of 16 column blocks of 8, so a quad of lanes
// transposes its pairs with two exchanges and each lane stores one block
// (a warp store covers 64 contiguous bytes of 8 rows). Pair stores (4
// bytes, 8 rows of 16 bytes a warp store) took a third of the time of the
// pilot's K = 512 GEMMs.
//
// What bounds the kernel is the expansion's instruction count, five a code
// pair: timed without it (wrong values) the same structure runs at 0.9 to
// 1.2 times cuBLAS's bf16 rate, and the expansion does not overlap with
// the MMAs even where nothing waits for it (docs/performance.md).
//
// So where many row tiles of A read the same B (Fprop and Dgrad: B is the
// weight), B is expanded once, by a kernel of its own, into bf16 stages in
// the shared-memory layout (unpadded), and the GEMM bulk-copies each 8 KiB
// stage (`cp.async.bulk`, the async proxy wgmma reads) two stages ahead.
// A thread then loads and expands only its two rows of A, and no stage
// needs a block barrier or a proxy fence: its MMAs wait on the stage's
// "full" barrier, and thread 0 refills a buffer once the block's
// warpgroups have arrived on its "empty" one after their MMAs read it. The blocks
// then expand B 1/128th as often on the pilot's 32768-row GEMMs (+10%);
// a B of more than 16 MiB as bf16 would stream from memory instead of L2.
// With nothing of B to share but the copies, such a GEMM's blocks are two
// warpgroups (128 x 128 tiles), two an SM: the four warpgroups of one block
// wrote C all at once, idling the SM's tensor cores; two blocks drift
// apart, and one's epilogue overlaps the other's MMAs (the pilot step's
// expanded GEMMs 5-10% faster on an H200).
//
// The tensor cores add each k16 slice's products to the f32 accumulators;
// a slice holds words of four K steps, so the order differs from the CPU's
// block by block sum wherever a rounding falls inside a slice.
//
// Weight gradients (a small C, K = tokens) have too few tiles to fill the
// device: there K is split (TensorCore.h's splitK), grid z picks a range of
// super steps, each split writes its f32 partial C to a workspace, and a second
// kernel adds the splits in split order (then the accumulator) and converts
// to C's type. That is deterministic, but the f32 sum is rounded split by
// split: unsplit, C is one sum over K in the tensor cores' order, and the
// GEMMs that split round once more per split. A split GEMM may run
// transposed, C^T = B * A^T with its partials stored at C's places, where
// that gives the slowest block fewer super steps (chooseGemmVariant).
//
//===----------------------------------------------------------------------===//

#include "Fp4Expansion.h"
#include "Kernels.h"
#include "mxfp4/Conversion/NVGPUCommon/WarpgroupMma.h"

#include "mxfp4/Dialect/MXFP4/Utils/Numerics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::kernels;
using namespace mlir::mxfp4::sm90;
namespace num = mlir::mxfp4::numerics;

/// The block tile: 64 rows of C a warpgroup, by kTile columns.
static int64_t tileM(const GemmConfig &c) { return 64 * gemmWarpgroups(c); }
/// The rows a thread loads and expands: two of A, then one of B (none
/// where B comes expanded).
static constexpr int64_t kRowsPerThread = 3;
/// The row tiles of A from which B is expanded once, ahead of the GEMM:
/// below that the blocks expand each B tile fewer times than the
/// expansion kernel's pass over B costs.
static constexpr int64_t kExpandedBMinRowTiles = 8;
/// The largest expanded B, bytes: it stays in the L2 cache (50 MiB on an
/// H200) while the blocks of a row tile read it. 8192 x 8192 (128 MiB) ran
/// 7% slower than expanding FP4 in every block, and still 4% slower with
/// the tiles ordered in bands of 16 row tiles column by column (the blocks
/// running at once then read 8 B tiles): copies two stages ahead do not
/// cover reads from memory.
static constexpr int64_t kExpandedBMaxBytes = 16 << 20;
int64_t sm90::gemmWarpgroups(const GemmConfig &c) {
  return c.expandedB ? 2 : 4;
}

/// Blocks resident on an SM: the register file holds 512 threads of 128
/// registers.
static int64_t blocksPerSM(const GemmConfig &c) {
  return 4 / gemmWarpgroups(c);
}

int64_t sm90::gemmTiles(const GemmConfig &c) {
  return llvm::divideCeil(c.m, tileM(c)) * llvm::divideCeil(c.n, kTile);
}

int64_t sm90::gemmBlocks(const GemmConfig &c) {
  return std::min(gemmTiles(c), blocksPerSM(c) * kMultiprocessors);
}

KSplit sm90::gemmSplit(const GemmConfig &c) {
  // In super steps, the main loop's unit. An expanded B is chosen only for
  // GEMMs that need no split (chooseGemmVariant).
  int64_t steps = llvm::divideCeil(c.k, kGemmSuperStepK);
  if (c.expandedB)
    return {1, steps};
  return splitK(gemmTiles(c), steps, blocksPerSM(c) * kMultiprocessors);
}

GemmConfig sm90::chooseGemmVariant(const GemmConfig &c) {
  GemmConfig transposed = c;
  std::swap(transposed.m, transposed.n);
  transposed.transposedC = true;
  KSplit own = gemmSplit(c), other = gemmSplit(transposed);
  if (own.splits == 1 || other.splits == 1) {
    GemmConfig whole = c;
    whole.expandedB =
        own.splits == 1 &&
        llvm::divideCeil(c.m, tileM(c)) >= kExpandedBMinRowTiles &&
        expandedBElements(c) * 2 <= kExpandedBMaxBytes;
    return whole;
  }
  // The super steps of the slowest block: its rounds times a split's steps.
  auto span = [](const GemmConfig &g, KSplit split) {
    return llvm::divideCeil(gemmTiles(g) * split.splits,
                            blocksPerSM(g) * kMultiprocessors) *
           split.stepsPerSplit;
  };
  return span(transposed, other) < span(c, own) ? transposed : c;
}

namespace {

/// This thread's rows of one super step (four K steps, 128 of K), in the
/// order A row r0, A row r0 + 8, B row: the 16 bytes of codes of
/// block 4 * s + lane % 4 (vector<4xi32>) and its scale as loaded (the byte
/// as i32, or with word scales the row's word of the super step, i32),
/// then, after `toScalePairs`, as a pair of bf16.
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
  /// `s` into `into` (zeros outside K and past M or N).
  void load(Value s, int64_t first, int64_t count, SuperStep &into);
  /// The whole super step `s`.
  SuperStep load(Value s);
  /// Turns `block`'s loaded scales into bf16 pairs.
  void toScalePairs(SuperStep &block);
  /// The four bf16 pairs (as i32) of word `j` of row `i` of `block`.
  SmallVector<Value, 4> expandWord(const SuperStep &block, int64_t i,
                                   int64_t j);
  /// This thread's A fragments of word `j` of `block`: the registers of the
  /// stage's two k16 MMAs.
  SmallVector<Value> expandA(const SuperStep &block, int64_t j);
  /// Expands word `j` of this thread's B rows of `block` into `stage`.
  void expandB(const SuperStep &block, int64_t j, int64_t stage);
  /// Writes this warpgroup's part of C (plus `acc`, if any) to `out`; split
  /// K (`split` is the split's index), its f32 partial C to the workspace
  /// `out` instead.
  void epilogue(Value acc, Value out, Value split, Value accumulators,
                Value rowBase, Value colBase);
  /// The epilogue of a bf16 C without an accumulator, rows of whole
  /// 16-byte chunks: each quad of lanes transposes its rows' pairs so that
  /// a lane stores 8 adjacent columns at once.
  void storeChunks(Value out, Value accumulators, Value rowBase, Value colBase);
  /// The origin (m0, n0) of C's tile `tile`.
  std::pair<Value, Value> tileOrigin(Value tile);
  /// Expanded B: thread 0's bulk copy of stage `stage` of super step `s` of
  /// the B tile from row `nRow` into buffer `stage`.
  void copyStage(Value nRow, Value s, int64_t stage);
  /// Expanded B, after stage j's wait for the previous stage's MMAs: the
  /// warpgroup releases that stage's buffer, thread 0 refills the buffer
  /// two stages back. `parity` is the super step's.
  void releaseAndRefill(Value s, int64_t j, Value parity, Value tile);

  OpBuilder &b;
  Location loc;
  KernelBuilder kb;
  const GemmConfig &c;
  // Set by build: the operands as words, this thread's block of a super
  // step (index; as i32 times 8, its scale's bit offset in a word), its
  // rows (two of A, one of B), the block tile's origin and the shared B
  // tile.
  Value aValues, aScales, bValues, bScales;
  // Expanded B: its global address (i64).
  Value bExpandedAddress;
  // The block's range of super steps.
  Value first, last;
  // Whether the scales are read a word (a super step) at a time. Needs rows
  // of whole words.
  bool wordScales = c.k / 32 % 4 == 0;
  // Whether a load can fall outside the operands: ragged tiles or a
  // partial last super step, whose codes past K must read as zeros.
  // Otherwise loads past the end (the last super step's and the last
  // tile's prefetch) are clamped to data nobody uses, and none is guarded.
  bool guarded = c.m % tileM(c) || c.n % kTile || c.k % kGemmSuperStepK;
  // Rows a thread loads: A's two, and B's one unless B comes expanded.
  int64_t rowCount = c.expandedB ? 2 : kRowsPerThread;
  Value laneBlock, laneWord, scaleShift, rows[kRowsPerThread], m0, n0;
  CoreMatrixTile bTile;
  // Expanded B: the barriers of its shared-memory stages, kGemmBStages "full"
  // (the stage's bulk copy landed) and then kGemmBStages "empty" (the four
  // warpgroups' MMAs read it).
  Value stageBarriers;
};

} // namespace

void GemmBuilder::load(Value s, int64_t first, int64_t count, SuperStep &into) {
  int64_t kBlocks = c.k / 32;
  Type i32 = b.getI32Type();
  auto codesType = VectorType::get({4}, i32);
  Value step = kb.add(kb.mul(s, 4), laneBlock);
  Value inK = kb.lt(step, kBlocks);
  into.codes.resize(rowCount);
  into.scales.resize(rowCount);
  for (int64_t i = first; i < first + count; ++i) {
    bool isB = i >= 2;
    Value values = isB ? bValues : aValues, scales = isB ? bScales : aScales;
    int64_t extent = isB ? c.n : c.m;
    Value r = kb.add(isB ? n0 : m0, rows[i]);
    Value valid = guarded ? kb.andI(kb.lt(r, extent), inK)
                          : arith::ConstantIntOp::create(b, loc, 1, 1);
    Value at = kb.add(kb.mul(r, kBlocks), step);
    into.codes[i] = kb.load(codesType, values, valid, kb.mul(at, 4),
                            extent * kBlocks * 4, /*alignment=*/16);
    // A row's four lanes read the same word: one access.
    into.scales[i] =
        wordScales
            ? kb.load(i32, scales, valid, kb.add(kb.mul(r, kBlocks / 4), s),
                      extent * kBlocks / 4)
            : arith::ExtUIOp::create(
                  b, loc, i32,
                  kb.load(b.getI8Type(), scales, valid, at, extent * kBlocks));
  }
}

SuperStep GemmBuilder::load(Value s) {
  SuperStep block;
  load(s, 0, rowCount, block);
  return block;
}

void GemmBuilder::toScalePairs(SuperStep &block) {
  for (Value &s : block.scales) {
    if (wordScales)
      s = arith::AndIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, s, scaleShift), i32(0xFF));
    s = scalePair(b, loc, s);
  }
}

SmallVector<Value, 4> GemmBuilder::expandWord(const SuperStep &block, int64_t i,
                                              int64_t j) {
  return expandPairs(b, loc,
                     vector::ExtractOp::create(b, loc, block.codes[i], j),
                     block.scales[i]);
}

SmallVector<Value> GemmBuilder::expandA(const SuperStep &block, int64_t j) {
  SmallVector<Value, 4> row0 = expandWord(block, 0, j),
                        row8 = expandWord(block, 1, j);
  // k16 slice h of the stage takes pairs 2h (K 2t, 2t + 1 of the slice)
  // and 2h + 1 (K 2t + 8, 2t + 9), each of rows g and g + 8.
  SmallVector<Value> regs;
  for (int64_t h = 0; h < 2; ++h)
    regs.append({row0[2 * h], row8[2 * h], row0[2 * h + 1], row8[2 * h + 1]});
  return regs;
}

void GemmBuilder::expandB(const SuperStep &block, int64_t j, int64_t stage) {
  for (int64_t i = 2; i < rowCount; ++i) {
    // Pair p goes where A's pair p sits: K 8p + 2t of the stage. A warp's
    // store fills one core matrix (its 8 rows' 16 bytes): no conflicts.
    SmallVector<Value, 4> pairs = expandWord(block, i, j);
    for (auto [p, pair] : llvm::enumerate(pairs)) {
      Value at = kb.add(bTile.offset(kb, kb.idx(stage), rows[i],
                                     kb.idx(8 * static_cast<int64_t>(p))),
                        laneWord);
      storePair(b, loc, pair, bTile.memref, at);
    }
  }
}

void GemmBuilder::storeChunks(Value out, Value accumulators, Value rowBase,
                              Value colBase) {
  Type i32Type = b.getI32Type();
  auto bit = [&](int64_t k) {
    return arith::TruncIOp::create(
        b, loc, b.getI1Type(),
        arith::IndexCastOp::create(b, loc, i32Type,
                                   kb.rem(kb.div(laneBlock, 1 << k), 2)));
  };
  Value b0 = bit(0), b1 = bit(1);
  auto sel = [&](Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y).getResult();
  };
  auto xorShuffle = [&](Value v, int64_t offset) {
    return gpu::ShuffleOp::create(b, loc, v, offset, 32, gpu::ShuffleMode::XOR)
        .getShuffleResult();
  };
  Value t = kb.rem(kb.threadId(), 128);
  Value row0 = kb.add(
      rowBase, kb.add(kb.mul(kb.div(t, 32), 16), kb.div(kb.rem(t, 32), 4)));
  auto pairType = VectorType::get({2}, b.getF32Type());
  for (int64_t half = 0; half < 2; ++half)
    for (int64_t u = 0; u < kTile / 32; ++u) {
      // x[k]: this lane's pair of columns 8 (4u + k) + 2 lane + {0, 1}.
      SmallVector<Value, 4> x;
      for (int64_t k = 0; k < 4; ++k) {
        int64_t e = 4 * (4 * u + k) + 2 * half;
        Value pair = vector::FromElementsOp::create(
            b, loc, pairType,
            ValueRange{
                LLVM::ExtractValueOp::create(b, loc, accumulators, e),
                LLVM::ExtractValueOp::create(b, loc, accumulators, e + 1)});
        pair = arith::TruncFOp::create(
            b, loc, VectorType::get({2}, b.getBF16Type()), pair);
        x.push_back(vector::ExtractOp::create(
            b, loc,
            vector::BitCastOp::create(b, loc, VectorType::get({1}, i32Type),
                                      pair),
            0));
      }
      // Transpose the quad's 4 x 4 pairs (lane t, index k) in two exchanges:
      // with lane t ^ 1 the indices of the other parity, then with lane
      // t ^ 2 the other half. Lane t ends with column block 4u + t.
      Value keepA = sel(b0, x[1], x[0]), keepB = sel(b0, x[3], x[2]);
      Value gotA = xorShuffle(sel(b0, x[0], x[1]), 1);
      Value gotB = xorShuffle(sel(b0, x[2], x[3]), 1);
      // Index b0 (A) and 2 + b0 (B) of lanes with bit 0 clear (lo) and set.
      Value aLo = sel(b0, gotA, keepA), aHi = sel(b0, keepA, gotA);
      Value bLo = sel(b0, gotB, keepB), bHi = sel(b0, keepB, gotB);
      // Keep index b0 + 2 b1, send the other.
      Value keepLo = sel(b1, bLo, aLo), keepHi = sel(b1, bHi, aHi);
      Value gotLo = xorShuffle(sel(b1, aLo, bLo), 2);
      Value gotHi = xorShuffle(sel(b1, aHi, bHi), 2);
      Value chunk = vector::FromElementsOp::create(
          b, loc, VectorType::get({4}, i32Type),
          ValueRange{sel(b1, gotLo, keepLo), sel(b1, gotHi, keepHi),
                     sel(b1, keepLo, gotLo), sel(b1, keepHi, gotHi)});
      Value row = kb.add(row0, 8 * half);
      Value col = kb.add(colBase, kb.mul(kb.add(laneBlock, 4 * u), 8));
      Value valid = kb.andI(kb.lt(row, c.m), kb.lt(col, c.n));
      kb.store(vector::BitCastOp::create(
                   b, loc, VectorType::get({8}, b.getBF16Type()), chunk),
               out, valid, kb.add(kb.mul(row, c.n), col), c.m * c.n,
               /*alignment=*/16);
    }
}

void GemmBuilder::epilogue(Value acc, Value out, Value split,
                           Value accumulators, Value rowBase, Value colBase) {
  if (!split && !acc && c.resultType.isBF16() && c.n % 8 == 0)
    return storeChunks(out, accumulators, rowBase, colBase);
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
  // Transposed partials put them a column of the GEMM's C apart.
  bool pairs = c.n % 2 == 0 && !c.transposedC;
  auto pairAlignment = [&](Type t) -> unsigned {
    return pairs ? 2 * t.getIntOrFloatBitWidth() / 8 : 0;
  };
  auto shaped = [&](Type t) -> Type {
    return pairs ? Type(VectorType::get({2}, t)) : t;
  };
  // This thread's elements (or pairs) of C: where, whether in range, value.
  struct Element {
    Value at, valid, value;
  };
  SmallVector<Element> elements;
  forEachWarpgroupAccumulatorPair(
      kb, accumulators, kTile, rowBase, colBase,
      [&](Value row, Value col, Value pair) {
        for (int64_t e = 0; e < (pairs ? 1 : 2); ++e) {
          Value at = c.transposedC ? kb.add(kb.mul(kb.add(col, e), c.m), row)
                                   : kb.add(kb.mul(row, c.n), kb.add(col, e));
          Value valid = kb.andI(kb.lt(row, c.m), kb.lt(kb.add(col, e), c.n));
          elements.push_back(
              {at, valid,
               pairs ? pair : vector::ExtractOp::create(b, loc, pair, e)});
        }
      });
  // The accumulator's loads go out a batch at a time, ahead of the batch's
  // stores: a load cannot pass a store to another buffer that may alias, so
  // loads interleaved with the stores would each wait a full memory
  // latency. 16 pairs keep 32 registers in flight.
  constexpr size_t kBatch = 16;
  for (size_t first = 0; first < elements.size(); first += kBatch) {
    ArrayRef<Element> batch = ArrayRef(elements).slice(
        first, std::min(kBatch, elements.size() - first));
    SmallVector<Value> priors;
    for (const Element &x : acc ? batch : ArrayRef<Element>()) {
      Value prior = kb.load(shaped(c.accType), acc, x.valid, x.at, c.m * c.n,
                            pairAlignment(c.accType));
      if (!c.accType.isF32())
        prior = arith::ExtFOp::create(b, loc, shaped(f32), prior);
      priors.push_back(prior);
    }
    for (auto [i, x] : llvm::enumerate(batch)) {
      Value value = x.value;
      if (acc)
        value = arith::AddFOp::create(b, loc, priors[i], value);
      if (!outType.isF32())
        value = arith::TruncFOp::create(b, loc, shaped(outType), value);
      kb.store(value, out, x.valid, slice ? kb.add(slice, x.at) : x.at, size,
               pairAlignment(outType));
    }
  }
}

/// The global address (i64) of kernel argument `index`, a buffer. Kernels
/// index with 32 bits, so `memref.extract_aligned_pointer_as_index` would
/// truncate it; the bulk copy needs all 64, which PTX reads from the
/// argument itself (NVPTX names it <kernel>_param_<index>).
static Value globalAddress(KernelBuilder &kb, gpu::GPUFuncOp func,
                           int64_t index) {
  OpBuilder &b = kb.builder();
  std::string text =
      ("{\n.reg .u64 t;\nld.param.u64 t, [" + func.getName() + "_param_" +
       Twine(index) + "];\ncvta.to.global.u64 $0, t;\n}")
          .str();
  return LLVM::InlineAsmOp::create(
             b, kb.location(), b.getI64Type(), ValueRange{}, text, "=l",
             /*has_side_effects=*/false, /*is_align_stack=*/false,
             LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
             /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

std::pair<Value, Value> GemmBuilder::tileOrigin(Value tile) {
  int64_t tilesN = llvm::divideCeil(c.n, kTile);
  return {kb.mul(kb.div(tile, tilesN), tileM(c)),
          kb.mul(kb.rem(tile, tilesN), kTile)};
}

void GemmBuilder::copyStage(Value nRow, Value s, int64_t stage) {
  // The expanded B is [N tiles][super steps][stages] of 8 KiB.
  Value block =
      kb.add(kb.mul(kb.add(kb.mul(kb.div(nRow, kTile),
                                  llvm::divideCeil(c.k, kGemmSuperStepK)),
                           s),
                    kGemmBStages),
             stage);
  Value source = arith::AddIOp::create(
      b, loc, bExpandedAddress,
      arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                 kb.mul(block, kExpandedBStageBytes)));
  bulkCopyToShared(kb, stageBarriers, stage, bTile.memref,
                   kb.idx(stage * bTile.stageElements()), source,
                   kExpandedBStageBytes);
}

void GemmBuilder::releaseAndRefill(Value s, int64_t j, Value parity,
                                   Value tile) {
  Value tid = kb.threadId();
  // This warpgroup's MMAs of the previous stage are done (wgmma waits are
  // the warpgroup's): its leader releases their buffer. Stage 3's release
  // of a tile's last super step follows the loop.
  Value leader = kb.lt(kb.rem(tid, 128), 1);
  if (j > 0)
    kb.when(leader,
            [&] { arriveOnBarrier(kb, stageBarriers, kGemmBStages + j - 1); });
  else
    kb.when(kb.andI(leader, kb.lt(first, s)),
            [&] { arriveOnBarrier(kb, stageBarriers, 2 * kGemmBStages - 1); });
  // Thread 0 refills the buffer that stage j - 2 read, two stages ahead:
  // stage j + 2 of this super step, or stage j - 2 of the next (the next
  // tile's first, if any), once all the block's warpgroups released it.
  int64_t stage = (j + 2) % kGemmBStages;
  Value producer = kb.lt(tid, 1);
  if (j < 2) {
    kb.when(producer, [&] {
      waitOnBarrier(kb, stageBarriers, kGemmBStages + stage,
                    arith::XOrIOp::create(b, loc, parity, i32(1)));
      copyStage(n0, s, stage);
    });
    return;
  }
  Value nextStep = kb.add(s, 1);
  Value inTile = kb.lt(nextStep, last);
  Value nextTile = kb.add(tile, gemmBlocks(c));
  Value any =
      arith::OrIOp::create(b, loc, inTile, kb.lt(nextTile, gemmTiles(c)));
  Value row =
      arith::SelectOp::create(b, loc, inTile, n0, tileOrigin(nextTile).second);
  Value step = arith::SelectOp::create(b, loc, inTile, nextStep, first);
  kb.when(kb.andI(producer, any), [&] {
    waitOnBarrier(kb, stageBarriers, kGemmBStages + stage, parity);
    copyStage(row, step, stage);
  });
}

void GemmBuilder::build(gpu::GPUFuncOp func) {
  aValues = codeWords(kb, func.getArgument(0));
  aScales = wordScales ? codeWords(kb, func.getArgument(1))
                       : Value(func.getArgument(1));
  int64_t accArgument = 4;
  if (c.expandedB) {
    bExpandedAddress = globalAddress(kb, func, 2);
    accArgument = 3;
  } else {
    bValues = codeWords(kb, func.getArgument(2));
    bScales = wordScales ? codeWords(kb, func.getArgument(3))
                         : Value(func.getArgument(3));
  }
  KSplit split = gemmSplit(c);
  Value acc =
      c.accType && split.splits == 1 ? func.getArgument(accArgument) : Value();
  Value out = func.getArgument(func.getFunctionType().getNumInputs() - 1);
  bTile = {func.getWorkgroupAttributions()[0], kTile,
           /*padded=*/!c.expandedB};
  if (c.expandedB) {
    stageBarriers = func.getWorkgroupAttributions()[1];
    SmallVector<int64_t> arrivals(kGemmBStages, 1);
    arrivals.append(kGemmBStages, gemmWarpgroups(c));
    initBarriers(kb, stageBarriers, arrivals);
  }

  Value tid = kb.threadId();
  Value lane = kb.rem(tid, 32);
  laneBlock = kb.rem(lane, 4);
  // The lane's pair in a core-matrix row, and its scale's bit offset.
  laneWord = kb.mul(laneBlock, 2);
  scaleShift =
      arith::IndexCastOp::create(b, loc, b.getI32Type(), kb.mul(laneBlock, 8));
  // Warp w holds rows 16 w + g and 16 w + g + 8 (g = lane / 4) of A:
  // wgmma's A fragment rows for warp w % 4 of warpgroup w / 4.
  Value warp = kb.div(tid, 32);
  rows[0] = kb.add(kb.mul(warp, 16), kb.div(lane, 4));
  rows[1] = kb.add(rows[0], 8);
  // B row 8 w + g: a warp's stores fill one core matrix.
  rows[2] = kb.add(kb.mul(warp, 8), kb.div(lane, 4));
  auto setTile = [&](Value tile) { std::tie(m0, n0) = tileOrigin(tile); };
  // Each warpgroup 64 rows of C by all 128 columns.
  Value wgRow = kb.mul(kb.div(tid, 128), 64);

  // This block's super steps: all of them, or its split's range.
  Value splitId;
  first = kb.idx(0);
  last = kb.idx(llvm::divideCeil(c.k, kGemmSuperStepK));
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
  int64_t rowCount = this->rowCount;
  auto unflatten = [rowCount](ValueRange values) {
    SuperStep block;
    block.codes.assign(values.begin(), values.begin() + rowCount);
    block.scales.assign(values.begin() + rowCount,
                        values.begin() + 2 * rowCount);
    return block;
  };
  // A block loops over tiles gemmBlocks apart; it loads the next tile's
  // first super step before writing this tile's C, so the loads fly while
  // the epilogue stores.
  Value firstTile = kb.blockId();
  setTile(firstTile);
  // Expanded B: the first tile's first two stages; the main loop copies
  // each stage two stages ahead from then on.
  if (c.expandedB)
    kb.when(kb.lt(tid, 1), [&] {
      copyStage(n0, first, 0);
      copyStage(n0, first, 1);
    });
  SmallVector<Value> tileInits = flatten(load(first));
  // Expanded B: the parity of the block's super steps so far. Super step G
  // fills and empties every buffer once: phase G of each barrier.
  if (c.expandedB)
    tileInits.push_back(i32(0));
  auto tileLoop = scf::ForOp::create(b, loc, firstTile, kb.idx(gemmTiles(c)),
                                     kb.idx(gemmBlocks(c)), tileInits);
  OpBuilder::InsertionGuard tileGuard(b);
  b.setInsertionPointToStart(tileLoop.getBody());
  Value tile = tileLoop.getInductionVar();
  setTile(tile);
  SuperStep firstStep = unflatten(tileLoop.getRegionIterArgs());
  toScalePairs(firstStep);
  // Four buffers of B, one a stage of the super step. Stage j issues its
  // MMAs and waits only for the previous stage's, whose A registers the
  // next A fragments reuse; the next stage's B goes to the buffer that
  // stage j - 3 read, which every warpgroup waited for before an earlier
  // barrier. The tensor cores thus get stage j + 1's MMAs while stage j's
  // may still run. Expanded B needs no block barrier: each stage's MMAs
  // wait for its copy, and its buffer is refilled once all four
  // warpgroups' MMAs have read it.
  if (!c.expandedB)
    expandB(firstStep, 0, 0);
  SmallVector<Value> aRegs = expandA(firstStep, 0);
  if (!c.expandedB) {
    fenceSharedForAsyncProxy(kb);
    gpu::BarrierOp::create(b, loc);
  }
  SmallVector<Value> inits = {zeroAccumulators(kb, kTile)};
  inits.append(flatten(firstStep));
  inits.append(aRegs);
  if (c.expandedB)
    inits.push_back(tileLoop.getRegionIterArgs().back());
  auto loop = scf::ForOp::create(b, loc, first, last, kb.idx(1), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value s = loop.getInductionVar();
    auto carried = loop.getRegionIterArgs();
    Value accumulators = carried[0];
    SuperStep current = unflatten(carried.drop_front());
    SmallVector<Value> a(carried.begin() + 1 + 2 * rowCount,
                         carried.begin() + 1 + 2 * rowCount + 8);
    Value parity = c.expandedB ? carried.back() : Value();
    // The next super step's loads go out in two halves, A's rows in stage 0
    // and B's in stage 1, as the current one's words die: a thread has 128
    // registers.
    SuperStep next;
    // Whole tiles: the last super step's prefetch reloads itself.
    Value nextStep =
        guarded ? kb.add(s, 1)
                : kb.min(kb.add(s, 1),
                         arith::SubIOp::create(b, loc, last, kb.idx(1)));
    for (int64_t j = 0; j < kGemmBStages; ++j) {
      if (c.expandedB)
        waitOnBarrier(kb, stageBarriers, j, parity);
      accumulators = issueWarpgroupMmasRegisterA(kb, a, bTile, kb.idx(0), kTile,
                                                 kb.idx(j), accumulators);
      waitWarpgroupMmas(kb, /*pending=*/1);
      if (c.expandedB)
        releaseAndRefill(s, j, parity, tile);
      // The last super step expands past its range: harmless.
      if (j == 3)
        toScalePairs(next);
      const SuperStep &source = j < 3 ? current : next;
      if (c.expandedB) {
        a = expandA(source, (j + 1) % 4);
        // No fence waits for loads here: both rows of the next super step
        // go out in stage 0, and the registers hold them.
        if (j == 0)
          load(nextStep, 0, rowCount, next);
        continue;
      }
      expandB(source, (j + 1) % 4, (j + 1) % kGemmBStages);
      a = expandA(source, (j + 1) % 4);
      fenceSharedForAsyncProxy(kb);
      // After the fence, which waits for the thread's loads in flight
      // (ptxas: MEMBAR.ALL.CTA): they then have a stage's time.
      if (j < 2)
        load(nextStep, 2 * j, j == 0 ? 2 : kRowsPerThread - 2, next);
      gpu::BarrierOp::create(b, loc);
    }
    SmallVector<Value> yields = {accumulators};
    yields.append(flatten(next));
    yields.append(a);
    if (c.expandedB)
      yields.push_back(arith::XOrIOp::create(b, loc, parity, i32(1)));
    scf::YieldOp::create(b, loc, yields);
  }
  // The epilogue reads the accumulators.
  waitWarpgroupMmas(kb);
  if (c.expandedB)
    kb.when(kb.lt(kb.rem(tid, 128), 1),
            [&] { arriveOnBarrier(kb, stageBarriers, 2 * kGemmBStages - 1); });
  Value nextTile = kb.add(tile, gemmBlocks(c));
  setTile(guarded ? nextTile : kb.min(nextTile, kb.idx(gemmTiles(c) - 1)));
  SmallVector<Value> nextLoads = flatten(load(first));
  if (c.expandedB)
    nextLoads.push_back(loop.getResults().back());
  setTile(tile);
  epilogue(acc, out, splitId, loop.getResult(0), kb.add(m0, wgRow), n0);
  scf::YieldOp::create(b, loc, nextLoads);
  b.setInsertionPointAfter(tileLoop);
  gpu::ReturnOp::create(b, loc);
}

gpu::GPUFuncOp sm90::buildGemmKernel(OpBuilder &b, Location loc,
                                     gpu::GPUModuleOp module, StringRef name,
                                     const GemmConfig &c) {
  MLIRContext *ctx = b.getContext();
  Type i8 = b.getI8Type();
  SmallVector<Type> args = {globalBuffer(ctx, c.m * c.k / 2, i8),
                            globalBuffer(ctx, c.m * c.k / 32, i8)};
  if (c.expandedB) {
    args.push_back(globalBuffer(ctx, expandedBElements(c), b.getBF16Type()));
  } else {
    args.push_back(globalBuffer(ctx, c.n * c.k / 2, i8));
    args.push_back(globalBuffer(ctx, c.n * c.k / 32, i8));
  }
  if (int64_t splits = gemmSplit(c).splits; splits > 1) {
    args.push_back(globalBuffer(ctx, splits * c.m * c.n, b.getF32Type()));
  } else {
    if (c.accType)
      args.push_back(globalBuffer(ctx, c.m * c.n, c.accType));
    args.push_back(globalBuffer(ctx, c.m * c.n, c.resultType));
  }
  SmallVector<Type> shared = {
      workgroupBuffer(ctx,
                      CoreMatrixTile::elements(kTile, kGemmBStages,
                                               /*padded=*/!c.expandedB),
                      b.getBF16Type())};
  if (c.expandedB)
    shared.push_back(workgroupBuffer(ctx, 2 * kGemmBStages, b.getI64Type()));
  gpu::GPUFuncOp func =
      createKernel(b, loc, module, name, args, shared, gemmThreads(c));
  // ptxas keeps to 128 registers a thread.
  func->setAttr(
      NVVM::NVVMDialect::getMaxntidAttrName(),
      b.getDenseI32ArrayAttr({static_cast<int32_t>(gemmThreads(c)), 1, 1}));
  func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                b.getI32IntegerAttr(blocksPerSM(c)));
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
  return llvm::divideCeil(llvm::divideCeil(c.m * c.n, addWidth(c)),
                          kWorkgroupSize);
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
