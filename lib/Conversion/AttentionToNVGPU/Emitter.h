//===- Emitter.h - the sm_90a attention kernels' emitter --------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The emitter of the attention kernels. What the two kinds share is
// defined in Emitter.cpp: the launch and its per-thread values, the
// operands' indexing, the online softmax on m16n8 accumulator fragments (a
// warpgroup's wgmma accumulators are the same fragments, warp by warp), the
// masks, reductions and stores; each kind's kernels and helpers in its own
// file (FlashAttention.cpp on `mma.sync`, WarpgroupAttention.cpp on
// `wgmma`).
//
// Row r of q is query position r mod seq; a block's 64 rows lie in one
// group since seq is a multiple of 64.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_CONVERSION_ATTENTIONTONVGPU_EMITTER_H
#define MXFP4_LIB_CONVERSION_ATTENTIONTONVGPU_EMITTER_H

#include "mxfp4/Conversion/AttentionCommon/Attention.h"
#include "mxfp4/Conversion/NVGPUCommon/TensorCore.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <array>

namespace mlir::mxfp4::sm90::attention {

using kernels::BoundsMode;
using kernels::KernelBuilder;

constexpr int64_t kThreads = 128; // 4 warps
constexpr int64_t kRows = 64;     // rows a block owns, and rows a step walks
constexpr int64_t kWarpRows = 16;

using Fragments = SmallVector<SmallVector<Value>>;

class Emitter {
public:
  Emitter(OpBuilder &b, Location loc, const AttentionShape &s)
      : b(b), loc(loc), kb(b, loc, BoundsMode::guarded), s(s) {}

  void forward(Value q, Value k, Value v, Value o, Value lse);
  /// The backward's query and key kernels on warpgroup MMAs and TMA loads
  /// (see usesWarpgroupMmas): steps of 64 keys (query rows), two stages.
  void backwardQueriesWarpgroup(Value q, Value k, Value v, Value lse, Value dO,
                                Value delta, Value dq);
  void backwardKeysWarpgroup(Value q, Value k, Value v, Value lse, Value dO,
                             Value delta, Value dk, Value dv);
  /// The forward on warpgroup MMAs and TMA loads: see usesWarpgroupMmas.
  void forwardWarpgroup(Value q, Value k, Value v, Value o, Value lse);
  /// True if q, k and v are bf16 at head dim 64 or 128, which the warpgroup
  /// kernels take: TMA boxes of 128 bytes of d.
  bool usesWarpgroupMmas(Value q, Value k, Value v) const {
    auto bf16 = [](Value x) {
      auto type = cast<MemRefType>(x.getType());
      return type.getElementType().isBF16() && type.getLayout().isIdentity();
    };
    return (s.headDim == 64 || s.headDim == 128) && bf16(q) && bf16(k) &&
           bf16(v);
  }
  /// Keys a step of the warpgroup forward walks: 128 at head dim 64; at
  /// 128, 64 keep its tiles (q and two stages of k and v) at 80 KiB, two
  /// blocks an SM, and the scores at 32 registers beside o's 64.
  int64_t forwardKeys() const { return s.headDim == 64 ? 128 : 64; }
  void rowDot(Value o, Value dO, Value delta);
  void backwardQueries(Value q, Value k, Value v, Value lse, Value dO,
                       Value delta, Value dq);
  /// dk and dv, or one of them (the other null).
  void backwardKeys(Value q, Value k, Value v, Value lse, Value dO, Value delta,
                    Value dk, Value dv);

  /// Every launch opened, in order.
  SmallVector<AttentionLaunch> launches;

private:
  int64_t queryRows() const { return s.groups * s.seq; }
  /// Opens a launch of blocksX blocks of 128 threads for each of the
  /// heads, with `tiles` bf16 tiles of 64 rows and `vectors` f32 [64] in
  /// shared memory, and sets the per-thread values below. Records it in
  /// `launches` as `role`. With `dynamicBytes`, the launch has that much
  /// dynamic shared memory instead. The grid is (section, blocksX, heads /
  /// section) (mxfp4::sectionHeads).
  gpu::LaunchOp open(StringRef role, int64_t blocksX, int64_t tiles,
                     int64_t vectors, int64_t minBlocksPerSM = 0,
                     int64_t dynamicBytes = 0, int64_t section = 1);
  /// mxfp4::sectionHeads for a kernel of 64-row blocks, `blocksPerSM` of
  /// them resident on each of 132 SMs (an H100's and an H200's). Head by
  /// head, llama3.2-1b's backward ran 15% slower (one block walks 512
  /// steps, a block slot's share is 667); all heads at once, the pilot's
  /// forward ran 13% slower.
  int64_t sectionHeads(bool keyBlocks, int64_t stepRows,
                       int64_t blocksPerSM) const {
    return mxfp4::sectionHeads(s, keyBlocks, kRows, stepRows,
                               132 * blocksPerSM);
  }
  /// The walk of k and v that the forward and the query kernel share: two
  /// stages of `keys`-row tiles of each (`tileBytes` a tile) from shared
  /// byte address `base` + `tilesAt`, k's two then v's, under mbarriers
  /// from `barriers` + 8, k's two then v's (the kernel's own first).
  struct KeyStages {
    Value kMap, vMap, base;
    int64_t tilesAt;
    Value barriers;
    int64_t keys, tileBytes;
  };
  /// Tile `which` (0: k, 1: v) of stage `stage`, and its mbarrier.
  Value stageTile(const KeyStages &st, int64_t which, Value stage);
  Value stageBarrier(const KeyStages &st, int64_t which, Value stage);
  /// In one thread: initializes the stages' mbarriers.
  void initKeyStages(const KeyStages &st);
  /// In one thread: the TMA loads of key block `block` into stage `stage`.
  void loadKeyStage(const KeyStages &st, Value block, Value stage);
  /// Starts key step `block` of the walk (blocks 0 .. lastBlock): after a
  /// barrier, thread `first` loads the next block into the other stage;
  /// then waits for this step's k. Returns the step's stage and its
  /// barriers' parity.
  std::pair<Value, Value> beginKeyStep(const KeyStages &st, Value block,
                                       Value lastBlock, Value first);
  /// A query kernel's (forward or dq) block: its first position, first
  /// stacked row and query head; blocks numbered longest walk first.
  struct QueryBlock {
    Value pos0, row0, qHead;
  };
  QueryBlock queryBlock();
  /// A key kernel's walk: its 64 keys from key0, and its steps, the
  /// query blocks that see them (`visibleBlocks` of them) in every group.
  struct KeyWalk {
    Value key0, visibleBlocks, steps;
  };
  KeyWalk keyWalk();
  /// Step i of a key kernel's walk: its group and query block.
  std::pair<Value, Value> keyStep(const KeyWalk &walk, Value i);
  /// A query kernel's two rows a thread (rows g and g + 8 of its warp):
  /// their positions and, for dq, their log-sum-exp (base 2) and delta.
  struct ThreadRows {
    std::array<Value, 2> pos, lse2, delta;
  };
  ThreadRows threadRows(const QueryBlock &queries, Value lse, Value delta);
  /// The wgmma descriptor of k16 slice `kk` of d, K-major, of the tile of
  /// `rows` rows at shared byte address `base` (a TMA load's layout: boxes
  /// of 64 d, rows * 128 bytes apart).
  Value kMajorSlice(Value base, int64_t rows, int64_t kk);
  /// The descriptors of the k16 slices of the tile's rows, the tile read
  /// N-major (d the N of a product over its rows): atoms of 64 d one box
  /// apart, a slice 16 rows (2048 bytes).
  SmallVector<Value> nMajorSlices(Value base, int64_t rows);
  /// A * B^T, a warpgroup's 64 x n product over d of the 64-row tile at
  /// `a` and the n-row tile at `bTile`: issued and committed, not waited
  /// for.
  Value productFromShared(Value a, Value bTile, int64_t n);
  /// acc += P * T, P this warpgroup's 64 x rows fragments (rounded to bf16
  /// as the A operand), T the `rows`-row tile at `bTile` (its rows the
  /// product's K): issued and committed, not waited for.
  Value accumulateFromRegisters(ArrayRef<Value> p, Value bTile, int64_t rows,
                                Value acc);
  /// The f32 at shared byte address `address`.
  Value loadShared(Value address);
  /// A TMA tensor map of `buffer` ([batch, seq, n, d] bf16) whose box is
  /// `rows` positions of one head by 64 elements of d (128 bytes, the
  /// 128-byte swizzle's row), as the pointer the kernel takes.
  Value tensorMap(Value buffer, int64_t rows);
  /// TMA loads of positions pos0 .. pos0 + rows - 1 of head `h` of the
  /// buffer `map` describes into shared byte address `dest`: d / 64 boxes,
  /// rows * 128 bytes apart, completing on the mbarrier at `barrier`.
  void loadRows(Value map, int64_t rows, Value h, Value pos0, Value dest,
                Value barrier);
  SharedTile rowsTile(Value memory) const {
    return {memory, true, kRows, s.headDim};
  }
  /// The same memory as the B operand of a product over its 64 rows.
  SharedTile depthTile(Value memory) const {
    return {memory, false, s.headDim, kRows};
  }
  /// mxfp4::attentionRowAt and attentionValueAt of this block's head.
  SmallVector<Value> rowAt(Value buffer, Value row0, Value r, Value col) {
    return attentionRowAt(kb, s, {head, batchIndex, kvHead}, buffer, row0, r,
                          col);
  }
  SmallVector<Value> valueAt(Value buffer, Value row) {
    return attentionValueAt(kb, s, {head, batchIndex, kvHead}, buffer, row);
  }
  /// Rows row0..row0+63 of `src` into `tile`, as bf16.
  void loadTile(Value src, Value row0, Value tile) {
    storeTile(fetchTile(src, row0), tile);
  }
  /// This thread's share of rows row0..row0+63 of `src`: vectors of 8
  /// elements in `src`'s type, loaded but not yet stored.
  SmallVector<Value> fetchTile(Value src, Value row0);
  /// Stores what `fetchTile` loaded into `tile`, as bf16.
  void storeTile(ArrayRef<Value> fetched, Value tile);
  /// A key loop step's k and v tiles of key block `block` (of 0 ..
  /// `lastBlock`) into `kTile` and `vTile`, between the step's two
  /// barriers. Where the loop prefetches, they are `fetched`, what the
  /// previous step (or the prologue) loaded, and the next block's loads are
  /// returned to carry (the last step reloads its own, unused); else they
  /// are loaded now and nothing is returned.
  SmallVector<Value> stepKeyValues(bool prefetch, ValueRange fetched, Value k,
                                   Value v, Value block, Value lastBlock,
                                   Value kTile, Value vTile);
  /// True if the loops load the next step's tiles of `src` into registers
  /// while they compute on this step's (`fetchTile` ahead of
  /// `storeTile`): bf16 tiles up to head dim 64, 16 registers a tile a
  /// thread. At head dim 128 the registers are spent on accumulators and
  /// fragments (up to 254), and f32 tiles would take twice as many.
  bool prefetches(Value src) const {
    return s.headDim <= 64 &&
           cast<MemRefType>(src.getType()).getElementType().isBF16();
  }
  /// True if the key kernel copies its next step's q and dO tiles into a
  /// second pair of shared-memory buffers with `cp.async` while it
  /// computes on this step's: bf16 tiles of identity layout at head dim
  /// 64, where four tiles fit the 48 KiB of static shared memory and the
  /// kernel's registers (228, both accumulators and both operands'
  /// fragments) leave none for a prefetch.
  bool copiesAsync(Value src) const {
    auto type = cast<MemRefType>(src.getType());
    return s.headDim <= 64 && type.getElementType().isBF16() &&
           type.getLayout().isIdentity();
  }
  /// The global pointer (!llvm.ptr<1>) to element `indices` of `buffer`.
  Value globalPointer(Value buffer, ArrayRef<Value> indices);
  /// Issues `cp.async` copies (16 bytes, bypassing L1) of rows
  /// row0..row0+63 of `src` into `tile`: the chunks `loadTile` stores.
  void copyTileAsync(Value src, Value row0, Value tile);
  /// The causal mask: where `diagonal` (a step that crosses the
  /// diagonal), `acc` with each element whose key comes after its query
  /// replaced by `masked`, else `acc` itself, so the mask costs a compare
  /// and select an element only on those steps. Rows are queries at
  /// `rowPos` (this thread's two) and columns keys from `col0` on, or,
  /// with `keyRows`, rows are keys and columns query positions.
  SmallVector<Value> maskCausal(Value diagonal, ArrayRef<Value> acc,
                                std::array<Value, 2> rowPos, Value col0,
                                bool keyRows, Value masked);
  /// The values of rows row0..row0+63 of `src` (f32) into `memory`, times
  /// `scale` if given.
  void loadVector(Value src, Value row0, Value memory, Value scale = {});
  /// The A fragments of this warp's 16 rows of `tile`.
  Fragments aFragments(Value tile);
  /// This warp's 16 x 64 block of A * T^T: A's fragments over d, T's 64
  /// rows in shared memory. Eight accumulators, n8 tiles in column order.
  SmallVector<Value> productT(const Fragments &a, Value tile);
  /// acc[d / 8] += P * T, P this warp's 16 x 64 accumulators, T's 64 rows
  /// the k of the product.
  void accumulate(ArrayRef<Value> p, Value tile, SmallVectorImpl<Value> &acc);
  /// Replaces each element x of `acc` (this warp's 16 x 8n block) by
  /// f(x, row, column, half), row in 0..15, half = row / 8.
  void mapElements(SmallVectorImpl<Value> &acc,
                   function_ref<Value(Value, Value, Value, int64_t)> f);
  /// dS = P * centered / sqrt(d), in place of the centered dP - delta.
  void scoreGradients(SmallVectorImpl<Value> &centered, ArrayRef<Value> probs) {
    for (auto [d, p] : llvm::zip(centered, probs))
      d = arith::MulFOp::create(
          b, loc, arith::MulFOp::create(b, loc, p, d),
          vector::BroadcastOp::create(b, loc, p.getType(), inverseSqrtD));
  }
  /// One key step of the online softmax. `carried` holds the running row
  /// maxima (base 2) and partial sums of this thread's two rows, then the
  /// output accumulators; `scores` the step's raw (masked) scores, which
  /// become the probabilities. Returns the new maxima and sums, then the
  /// output accumulators rescaled to the new maxima.
  SmallVector<Value> onlineSoftmax(ValueRange carried,
                                   SmallVectorImpl<Value> &scores);
  /// The forward loop's initial state (see onlineSoftmax).
  SmallVector<Value> forwardInits();
  /// Normalizes and stores the forward loop's output accumulators to o and
  /// its log-sum-exp to lse, from its final state `results`.
  void storeForward(ValueRange results, Value row0, Value o, Value lse);
  /// Per half (rows g, g + 8), `combine` over this thread's elements and
  /// then over the four threads of a row.
  std::array<Value, 2> rowReduce(ArrayRef<Value> acc, bool isMax);
  std::array<Value, 2> quadReduce(std::array<Value, 2> partial, bool isMax);
  /// Stores this warp's 16 x d accumulators times scale[half] into rows
  /// row0 + warp * 16 .. of dst.
  void storeRows(ArrayRef<Value> acc, Value dst, Value row0,
                 std::array<Value, 2> scale);
  SmallVector<Value> zeroAccumulators(int64_t count);
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  /// The score x / sqrt(d) in base 2 (times log2(e)): the softmax runs on
  /// exp2, one multiply-add and one MUFU.EX2 an element (FlashAttention's
  /// form) rather than a division and expf.
  Value scaled(Value x) { return mulF(x, log2Scale); }
  Value exp2(Value x) { return math::Exp2Op::create(b, loc, x); }
  /// exp(x / sqrt(d) - lse) = exp2(x log2(e) / sqrt(d) - lse log2(e)),
  /// `lse2` = lse log2(e).
  Value probability(Value x, Value lse2) {
    return exp2(math::FmaOp::create(b, loc, x, log2Scale,
                                    arith::NegFOp::create(b, loc, lse2)));
  }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mulF(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value le(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, x, y);
  }
  Value eq(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
  }

  OpBuilder &b;
  Location loc;
  KernelBuilder kb;
  const AttentionShape &s;
  // Set by open(): `head` is the block's stacked head, batch * kvHeads of
  // them, `batchIndex` and `kvHead` its parts.
  Value tid, head, batchIndex, kvHead, warp, g, t, inverseSqrtD, log2Scale;
  // The block's index along its head (block id y; see open).
  Value blockIndex;
};


} // namespace mlir::mxfp4::sm90::attention

#endif // MXFP4_LIB_CONVERSION_ATTENTIONTONVGPU_EMITTER_H
