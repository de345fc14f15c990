//===- LinalgToAMDGPU.cpp - linalg contractions on gfx950 bf16 MFMAs ------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The training step's high-precision GEMMs (the LM head, linear layers a
// recipe keeps in bf16, attention's batched matmuls once the composites are
// inlined) are linalg contractions on buffers. The generic lowering gives
// them one work-item per output element with a K loop; here each becomes a
// `gpu.launch` of a 128 x 128 workgroup tile on `v_mfma_f32_16x16x32_bf16`:
//
// - operands are read as bf16 [batch, rows, K] with K contiguous. An
//   operand that is already so (a bf16 buffer or static view whose K is
//   innermost, 16-byte aligned rows) is read in place; any other (f32,
//   K not innermost, K not a multiple of 8) is first packed into a bf16
//   copy of that layout (ties-to-even rounding, K padded with zeros to a
//   multiple of 8) by one launch, shared by the GEMMs that read an
//   unchanged buffer in the same orientation;
// - 4 waves in 2 x 2, each 64 x 64 of C as 4 x 4 subtiles of 16 x 16 with
//   f32 accumulators; K steps of 64: both 128 x 64 operand tiles go global ->
//   LDS directly (`amdgpu.gather_to_lds`), double-buffered (2 x 32 KiB),
//   in the swizzled 128-byte rows of the MXFP4 GEMM (AMDGPUCommon);
// - the MFMA computes D^T = B A^T so that each lane's 4 accumulators are 4
//   consecutive columns of C;
// - ragged M, N and K: out-of-range loads are sent past the end of their
//   buffer view (`amdgpu.fat_raw_buffer_cast`: they read 0), out-of-range
//   stores likewise (dropped);
// - split-K where the tiles cannot fill the 256 CUs: each split writes its
//   partial tile to a workspace and a second launch adds the splits to C
//   in split order (deterministic).
//
// These are the numerics of PyTorch's bf16 autocast (bf16 operands, f32
// accumulation), not the CPU path's f32.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Conversion/Passes.h"

#include "mxfp4/Conversion/AMDGPUCommon/GemmTiling.h"
#include "mxfp4/Conversion/GPUCommon/Contraction.h"
#include "mxfp4/Conversion/MXFP4ToGPUCommon/KernelBuilder.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_CONVERTLINALGMATMULTOAMDGPUPASS
#include "mxfp4/Conversion/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::kernels;
using namespace mlir::mxfp4::gfx950;

namespace {

constexpr int64_t kThreads = 256;
constexpr int64_t kWave = 64;
constexpr int64_t kTile = 128;  // workgroup tile of C, both dimensions
constexpr int64_t kStepK = 64;  // bf16 values along K per LDS row
constexpr int64_t kChunk = 8;   // bf16 values per 16-byte chunk
constexpr int64_t kStageElems = 2 * kTile * kStepK;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// A buffer as the kernels address it: an identity-layout base and a static
/// offset and strides (in base elements) for each of the view's dimensions.
struct View {
  Value base;
  int64_t offset = 0;
  SmallVector<int64_t> strides;
};

/// A contraction operand: its view and which of its dimensions hold the
/// batch (or -1), the rows (M for A and C, N for B) and K (N for C).
struct Operand {
  View view;
  Type element;
  int64_t batchDim = -1, rowDim = 0, kDim = 0;
  int64_t stride(int64_t dim) const {
    return dim < 0 ? 0 : view.strides[dim];
  }
};

/// C[b, m, n] (+)= sum_k A[b, m, k] * B[b, n, k].
struct Contraction {
  Operand a, b, c;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool overwrite = false;
};

} // namespace

/// Identity strides of a static shape.
static SmallVector<int64_t> identityStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

static bool isPlainBuffer(MemRefType type) {
  return type.hasStaticShape() && type.getLayout().isIdentity() &&
         !type.getMemorySpace();
}

/// `memref` as a view of an identity-layout buffer: the buffer itself, or a
/// static, rank-preserving subview of one (the kernels only ever see
/// identity layouts, as the generic kernels do).
static std::optional<View> resolveView(Value memref) {
  auto type = dyn_cast<MemRefType>(memref.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  if (isPlainBuffer(type))
    return View{memref, 0, identityStrides(type.getShape())};
  auto sub = memref.getDefiningOp<memref::SubViewOp>();
  if (!sub || !isPlainBuffer(sub.getSourceType()) ||
      sub.getSourceType().getRank() != type.getRank() ||
      llvm::any_of(sub.getStaticOffsets(), ShapedType::isDynamic) ||
      llvm::any_of(sub.getStaticStrides(), ShapedType::isDynamic))
    return std::nullopt;
  SmallVector<int64_t> base = identityStrides(sub.getSourceType().getShape());
  View view{sub.getSource(), 0, {}};
  for (auto [offset, stride, b] :
       llvm::zip(sub.getStaticOffsets(), sub.getStaticStrides(), base)) {
    view.offset += offset * b;
    view.strides.push_back(stride * b);
  }
  return view;
}

/// `op` if this kernel covers it: any contraction
/// `matchLinalgContraction` matches whose operands are f32 or bf16 buffers
/// or static views of them.
static std::optional<Contraction> matchContraction(linalg::LinalgOp op) {
  std::optional<LinalgContraction> matched = matchLinalgContraction(op);
  if (!matched)
    return std::nullopt;
  auto operand = [](const ContractionOperand &o) -> std::optional<Operand> {
    std::optional<View> view = resolveView(o.memref);
    Type element = cast<MemRefType>(o.memref.getType()).getElementType();
    if (!view || (!element.isF32() && !element.isBF16()))
      return std::nullopt;
    return Operand{*view, element, o.batchDim, o.rowDim, o.kDim};
  };
  auto a = operand(matched->a), b = operand(matched->b),
       c = operand(matched->c);
  if (!a || !b || !c)
    return std::nullopt;
  return Contraction{*a, *b, *c, matched->batch, matched->m, matched->n,
                     matched->k};
}

/// True if `out` is all zeros when `op` runs: the last op of the block
/// before `op` that touches `out` (or a view of it) zero-fills exactly
/// `out`. That fill goes and the GEMM writes C instead of adding to it.
static bool takeZeroInit(Operation *op, Value out) {
  SmallVector<Value> aliases = {out};
  if (auto view = out.getDefiningOp<ViewLikeOpInterface>())
    aliases.push_back(view.getViewSource());
  for (size_t i = 0; i < aliases.size(); ++i)
    for (Operation *user : aliases[i].getUsers())
      if (isa<ViewLikeOpInterface>(user) &&
          !llvm::is_contained(aliases, user->getResult(0)))
        aliases.push_back(user->getResult(0));
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    bool touches = false;
    prev->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        touches |= llvm::is_contained(aliases, operand);
    });
    if (!touches)
      continue;
    if (!isZeroFill(prev) ||
        cast<linalg::FillOp>(prev).getOutputs().front() != out)
      return false;
    prev->erase();
    return true;
  }
  return false;
}

/// The flat, global-address-space view the kernels read `base` through.
static Value flatDeviceBuffer(OpBuilder &b, Location loc, Value base) {
  auto type = cast<MemRefType>(base.getType());
  Value flat = base;
  if (type.getRank() != 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < type.getRank(); ++d)
      all[0].push_back(d);
    flat = memref::CollapseShapeOp::create(b, loc, base, all);
  }
  return memref::MemorySpaceCastOp::create(
      b, loc,
      globalBuffer(b.getContext(), type.getNumElements(),
                   type.getElementType()),
      flat);
}

static int64_t numElements(Value memref) {
  return cast<MemRefType>(memref.getType()).getNumElements();
}

namespace {

/// A GEMM operand as the kernel reads it: bf16 [batch, rows, K] with K
/// contiguous, in `buffer` (flat, global) at `offset` + batch * batchStride
/// + row * rowStride + k.
struct KMajor {
  Value buffer;
  int64_t size = 0, offset = 0, batchStride = 0, rowStride = 0;
};

/// Packed copies of operands, reused while their source is not written.
class Packer {
public:
  /// `o` (rows x k per batch) as a KMajor operand of `kPadded` columns,
  /// packed before `op` unless it can be read in place or an earlier packing
  /// of the same source and orientation is still current.
  KMajor get(OpBuilder &b, Operation *op, const Operand &o, int64_t batch,
             int64_t rows, int64_t k, int64_t kPadded);

private:
  /// Packs `o` at the builder's insertion point; `made` gets the launch.
  KMajor pack(OpBuilder &b, Location loc, const Operand &o, int64_t batch,
              int64_t rows, int64_t k, int64_t kPadded, Operation *&made);

  struct Key {
    Value base;
    int64_t offset, batchDim, rowDim, kDim, kPadded;
    bool operator==(const Key &o) const {
      return base == o.base && offset == o.offset && batchDim == o.batchDim &&
             rowDim == o.rowDim && kDim == o.kDim && kPadded == o.kPadded;
    }
  };
  struct Copy {
    Key key;
    SmallVector<int64_t> strides;
    KMajor packed;
    Operation *made;
  };
  SmallVector<Copy, 4> copies;
};

} // namespace

/// True if nothing in `op`'s block between `made` and `op` may write
/// `base` (or a view of it).
static bool unchangedSince(Value base, Operation *made, Operation *op) {
  if (made->getBlock() != op->getBlock())
    return false;
  SmallVector<Value> aliases = {base};
  for (size_t i = 0; i < aliases.size(); ++i)
    for (Operation *user : aliases[i].getUsers()) {
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        aliases.push_back(user->getResult(0));
        continue;
      }
      Operation *at = op->getBlock()->findAncestorOpInBlock(*user);
      if (!at)
        return false;
      if (!(made->isBeforeInBlock(at) && at->isBeforeInBlock(op)))
        continue;
      auto effects = dyn_cast<MemoryEffectOpInterface>(user);
      if (!effects || effects.hasEffect<MemoryEffects::Write>() ||
          effects.hasEffect<MemoryEffects::Free>())
        return false;
    }
  return true;
}

KMajor Packer::get(OpBuilder &b, Operation *op, const Operand &o,
                   int64_t batch, int64_t rows, int64_t k, int64_t kPadded) {
  // Read in place: bf16, K innermost and contiguous, 16-byte aligned rows.
  if (o.element.isBF16() && kPadded == k && o.stride(o.kDim) == 1 &&
      o.view.offset % kChunk == 0 && o.stride(o.rowDim) % kChunk == 0 &&
      o.stride(o.batchDim) % kChunk == 0) {
    b.setInsertionPoint(op);
    return {flatDeviceBuffer(b, op->getLoc(), o.view.base),
            numElements(o.view.base), o.view.offset, o.stride(o.batchDim),
            o.stride(o.rowDim)};
  }
  Key key{o.view.base, o.view.offset, o.batchDim, o.rowDim, o.kDim, kPadded};
  for (Copy &copy : copies)
    if (copy.key == key && copy.strides == o.view.strides &&
        unchangedSince(o.view.base, copy.made, op))
      return copy.packed;
  b.setInsertionPoint(op);
  Operation *made = nullptr;
  KMajor packed = pack(b, op->getLoc(), o, batch, rows, k, kPadded, made);
  copies.push_back({key, o.view.strides, packed, made});
  return packed;
}

KMajor Packer::pack(OpBuilder &b, Location loc, const Operand &o,
                    int64_t batch, int64_t rows, int64_t k, int64_t kPadded,
                    Operation *&made) {
  Type bf16 = b.getBF16Type();
  Value dst = memref::AllocOp::create(
      b, loc, MemRefType::get({batch, rows, kPadded}, bf16));
  Value dstFlat = flatDeviceBuffer(b, loc, dst);
  Value srcFlat = flatDeviceBuffer(b, loc, o.view.base);
  int64_t srcSize = numElements(o.view.base), dstSize = batch * rows * kPadded;
  {
    OpBuilder::InsertionGuard guard(b);
    KernelBuilder kb(b, loc);
    // One work-item per 8 consecutive K of one row: one 16-byte store.
    gpu::LaunchOp launch;
    Value id = openItemLaunch(kb, dstSize / kChunk, kThreads, &launch);
    made = launch;
    Value src = kb.buffer(srcFlat), out = kb.buffer(dstFlat);
    Value k0 = kb.mul(kb.rem(id, kPadded / kChunk), kChunk);
    Value rest = kb.div(id, kPadded / kChunk);
    Value row = kb.rem(rest, rows), bt = kb.div(rest, rows);
    Value rowBase = kb.add(kb.idx(o.view.offset),
                           kb.add(kb.mul(bt, o.stride(o.batchDim)),
                                  kb.mul(row, o.stride(o.rowDim))));
    SmallVector<Value> elems;
    for (int64_t i = 0; i < kChunk; ++i) {
      Value kk = kb.add(k0, i);
      Value at = kb.add(rowBase, kb.mul(kk, o.stride(o.kDim)));
      Value v = kb.load(o.element, src, kb.lt(kk, k), at, srcSize);
      if (!o.element.isBF16())
        v = arith::TruncFOp::create(b, loc, bf16, v);
      elems.push_back(v);
    }
    Value chunk = vector::FromElementsOp::create(
        b, loc, VectorType::get({kChunk}, bf16), elems);
    vector::StoreOp::create(b, loc, chunk, out,
                            ValueRange{kb.mul(id, kChunk)});
  }
  return {dstFlat, dstSize, 0, rows * kPadded, kPadded};
}

namespace {

/// Emits one contraction: operand packing, the GEMM, the split reduction.
class GemmEmitter {
public:
  GemmEmitter(OpBuilder &b, Location loc, const Contraction &c,
              const KMajor &a, const KMajor &bop, int64_t kPadded)
      : b(b), loc(loc), c(c), a(a), bop(bop), kPadded(kPadded) {}
  void emit();

private:
  /// The element offset of C (b, m, n) in C's base buffer.
  Value cOffset(KernelBuilder &kb, Value batch, Value m, Value n) {
    const Operand &o = c.c;
    return kb.add(kb.idx(o.view.offset),
                  kb.add(kb.mul(batch, o.stride(o.batchDim)),
                         kb.add(kb.mul(m, o.stride(o.rowDim)),
                                kb.mul(n, o.stride(o.kDim)))));
  }
  void emitReduction(Value workspace, int64_t splits, int64_t paddedN,
                     Value cFlat, int64_t cSize);

  OpBuilder &b;
  Location loc;
  const Contraction &c;
  KMajor a, bop;
  int64_t kPadded;
};

} // namespace

void GemmEmitter::emit() {
  MLIRContext *ctx = b.getContext();
  Type bf16 = b.getBF16Type(), f32 = b.getF32Type();
  int64_t tilesM = ceilDiv(c.m, kTile), tilesN = ceilDiv(c.n, kTile);
  int64_t steps = ceilDiv(kPadded, kStepK);
  // At least 4 steps a split.
  auto [splits, stepsPerSplit] = splitK(tilesM * tilesN * c.batch, steps, 4);
  int64_t paddedN = ceilDiv(c.n, 4) * 4;
  Value workspace, wsFlat;
  int64_t wsSize = splits * c.batch * c.m * paddedN;
  if (splits > 1) {
    workspace = memref::AllocOp::create(
        b, loc, MemRefType::get({splits, c.batch, c.m, paddedN}, f32));
    wsFlat = flatDeviceBuffer(b, loc, workspace);
  }
  Value cFlat = flatDeviceBuffer(b, loc, c.c.view.base);
  int64_t cSize = numElements(c.c.view.base);
  KernelBuilder hk(b, loc);
  Value one = hk.idx(1);
  auto launch = gpu::LaunchOp::create(
      b, loc, hk.idx(tilesM * tilesN), hk.idx(c.batch), hk.idx(splits),
      hk.idx(kThreads), one, one, /*dynamicSharedMemorySize=*/Value(),
      /*asyncTokenType=*/Type(), /*asyncDependencies=*/ValueRange(),
      TypeRange{workgroupBuffer(ctx, 2 * kStageElems, bf16)});
  {
    OpBuilder::InsertionGuard guard(b);
    Block &body = launch.getBody().front();
    b.setInsertionPointToStart(&body);
    gpu::TerminatorOp::create(b, loc);
    b.setInsertionPointToStart(&body);
    KernelBuilder kb(b, loc);
    Value lds = launch.getWorkgroupAttributions()[0];
    Value aBuf = kb.buffer(a.buffer), bBuf = kb.buffer(bop.buffer);
    Value cBuf = kb.buffer(splits > 1 ? wsFlat : cFlat);

    Value tid = launch.getThreadIds().x;
    Value batch = launch.getBlockIds().y, split = launch.getBlockIds().z;
    Value wave = kb.div(tid, kWave), lane = kb.rem(tid, kWave);
    Value wm = kb.div(wave, 2), wn = kb.rem(wave, 2);
    auto [tm, tn] =
        remapTileForXcds(kb, launch.getBlockIds().x, tilesM, tilesN);
    Value m0 = kb.mul(tm, kTile), n0 = kb.mul(tn, kTile);
    Value lane16 = kb.rem(lane, 16), laneGroup = kb.div(lane, 16);
    Value firstStep = kb.mul(split, stepsPerSplit);
    Value lastStep = kb.min(kb.add(firstStep, stepsPerSplit), kb.idx(steps));

    // Global -> LDS copy of K step `step` into its stage.
    auto stageBase = [&](Value step) {
      return kb.mul(kb.rem(step, 2), kStageElems);
    };
    auto copyOperand = [&](const KMajor &op, Value buf, int64_t rows,
                           Value row0, Value dstBase, Value step) {
      Value rowOrigin =
          kb.add(kb.idx(op.offset), kb.mul(batch, op.batchStride));
      copySwizzledRowsToLds(
          kb, buf, lds, dstBase, kTile,
          VectorType::get({kChunk}, b.getBF16Type()), wave, lane,
          [&](Value groupRow, Value laneRow, Value chunk) {
            Value r = kb.add(kb.add(row0, groupRow), laneRow);
            Value kk = kb.add(kb.mul(step, kStepK), kb.mul(chunk, kChunk));
            Value valid = kb.andI(kb.lt(r, rows), kb.lt(kk, kPadded));
            Value at = kb.add(rowOrigin, kb.add(kb.mul(r, op.rowStride), kk));
            return kb.maskedOffset(valid, at, op.size);
          });
    };
    auto copyStep = [&](Value step) {
      Value base = stageBase(step);
      copyOperand(a, aBuf, c.m, m0, base, step);
      copyOperand(bop, bBuf, c.n, n0, kb.add(base, kb.idx(kTile * kStepK)),
                  step);
    };

    auto vec4f32 = VectorType::get({4}, f32);
    SmallVector<Value> init(
        16, arith::ConstantOp::create(
                b, loc, DenseElementsAttr::get(vec4f32, b.getF32FloatAttr(0))));
    copyStep(firstStep);
    auto loop = scf::ForOp::create(b, loc, firstStep, lastStep, one, init);
    {
      OpBuilder::InsertionGuard loopGuard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value step = loop.getInductionVar();
      // This step's tiles are in LDS once every wave's copies landed; the
      // barrier also says the other stage is free again.
      amdgpu::MemoryCounterWaitOp::create(b, loc, b.getI32IntegerAttr(0),
                                          IntegerAttr(), IntegerAttr(),
                                          IntegerAttr(), IntegerAttr());
      gpu::BarrierOp::create(b, loc);
      // Every fragment is read before the next copy is issued: LLVM cannot
      // tell the stages apart and would make a later read wait for it.
      Value base = stageBase(step);
      auto fragType = VectorType::get({kChunk}, bf16);
      SmallVector<SmallVector<Value>, 2> aFrag(2), bFrag(2);
      for (int64_t s = 0; s < 2; ++s) {
        // Lane l holds K values 8 (l / 16) .. + 7 of row l % 16 of the
        // 32-wide K slice s (the 16x16x32 operand layout).
        Value chunk = kb.add(laneGroup, kb.idx(4 * s));
        Value slot = swizzledSlot(kb, chunk, lane16);
        Value laneOffset = kb.add(kb.mul(lane16, kStepK), kb.mul(slot, kChunk));
        auto fragment = [&](int64_t tileOffset, Value waveRow, int64_t sub) {
          Value offset = kb.add(
              kb.add(base, kb.idx(tileOffset + 16 * sub * kStepK)),
              kb.add(kb.mul(waveRow, kStepK), laneOffset));
          return vector::LoadOp::create(b, loc, fragType, lds,
                                        ValueRange{offset});
        };
        for (int64_t i = 0; i < 4; ++i)
          aFrag[s].push_back(fragment(0, kb.mul(wm, kTile / 2), i));
        for (int64_t j = 0; j < 4; ++j)
          bFrag[s].push_back(
              fragment(kTile * kStepK, kb.mul(wn, kTile / 2), j));
      }
      Value next = kb.add(step, 1);
      auto ifOp = scf::IfOp::create(b, loc, kb.lt(next, lastStep), false);
      {
        OpBuilder::InsertionGuard ifGuard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        copyStep(next);
      }
      SmallVector<Value> acc(loop.getRegionIterArgs());
      for (int64_t s = 0; s < 2; ++s)
        for (int64_t i = 0; i < 4; ++i)
          for (int64_t j = 0; j < 4; ++j) {
            Value &d = acc[i * 4 + j];
            d = amdgpu::MFMAOp::create(b, loc, vec4f32, 16, 16, 32, 1,
                                       bFrag[s][j], aFrag[s][i], d);
          }
      scf::YieldOp::create(b, loc, acc);
    }

    // Epilogue: lane l holds C[row l % 16][4 (l / 16) .. + 3] of each
    // subtile.
    const Operand &co = c.c;
    bool vectorC = co.stride(co.kDim) == 1 && c.n % 4 == 0 &&
                   co.view.offset % 4 == 0 && co.stride(co.rowDim) % 4 == 0 &&
                   co.stride(co.batchDim) % 4 == 0;
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 4; ++j) {
        Value v = loop.getResult(i * 4 + j);
        Value m = kb.add(kb.add(m0, kb.mul(wm, kTile / 2)),
                         kb.add(kb.idx(16 * i), lane16));
        Value n = kb.add(kb.add(n0, kb.mul(wn, kTile / 2)),
                         kb.add(kb.idx(16 * j), kb.mul(laneGroup, 4)));
        if (splits > 1) {
          // The workspace's rows are padded to 4 columns: one store.
          Value at = kb.add(
              kb.mul(kb.add(kb.mul(kb.add(kb.mul(split, c.batch), batch), c.m),
                            m),
                     paddedN),
              n);
          Value valid = kb.andI(kb.lt(m, c.m), kb.lt(n, c.n));
          vector::StoreOp::create(b, loc, v, cBuf,
                                  ValueRange{kb.maskedOffset(valid, at,
                                                             wsSize)});
          continue;
        }
        auto vecC = VectorType::get({4}, co.element);
        if (vectorC) {
          Value valid = kb.andI(kb.lt(m, c.m), kb.lt(n, c.n));
          Value at = kb.maskedOffset(valid, cOffset(kb, batch, m, n), cSize);
          if (!c.overwrite) {
            Value prior = vector::LoadOp::create(b, loc, vecC, cBuf,
                                                 ValueRange{at});
            if (!co.element.isF32())
              prior = arith::ExtFOp::create(b, loc, vec4f32, prior);
            v = arith::AddFOp::create(b, loc, prior, v);
          }
          if (!co.element.isF32())
            v = arith::TruncFOp::create(b, loc, vecC, v);
          vector::StoreOp::create(b, loc, v, cBuf, ValueRange{at});
          continue;
        }
        for (int64_t r = 0; r < 4; ++r) {
          Value nr = kb.add(n, r);
          Value valid = kb.andI(kb.lt(m, c.m), kb.lt(nr, c.n));
          Value at = kb.maskedOffset(valid, cOffset(kb, batch, m, nr), cSize);
          Value e = vector::ExtractOp::create(b, loc, v, r);
          if (!c.overwrite) {
            Value prior =
                memref::LoadOp::create(b, loc, cBuf, ValueRange{at});
            if (!co.element.isF32())
              prior = arith::ExtFOp::create(b, loc, f32, prior);
            e = arith::AddFOp::create(b, loc, prior, e);
          }
          if (!co.element.isF32())
            e = arith::TruncFOp::create(b, loc, co.element, e);
          memref::StoreOp::create(b, loc, e, cBuf, ValueRange{at});
        }
      }
  }
  if (splits > 1) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfter(launch);
    emitReduction(wsFlat, splits, paddedN, cFlat, cSize);
  }
}

void GemmEmitter::emitReduction(Value workspace, int64_t splits,
                                int64_t paddedN, Value cFlat, int64_t cSize) {
  // One work-item an output: C (+)= the splits' partial sums, in order.
  KernelBuilder kb(b, loc);
  Type f32 = b.getF32Type();
  int64_t outputs = c.batch * c.m * c.n;
  Value id = openItemLaunch(kb, outputs, kThreads);
  Value ws = kb.buffer(workspace), out = kb.buffer(cFlat);
  Value n = kb.rem(id, c.n), rest = kb.div(id, c.n);
  Value m = kb.rem(rest, c.m), batch = kb.div(rest, c.m);
  Value at = cOffset(kb, batch, m, n);
  Type element = c.c.element;
  Value sum;
  if (c.overwrite) {
    sum = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  } else {
    sum = memref::LoadOp::create(b, loc, out, ValueRange{at});
    if (!element.isF32())
      sum = arith::ExtFOp::create(b, loc, f32, sum);
  }
  Value row = kb.add(kb.mul(kb.add(kb.mul(batch, c.m), m), paddedN), n);
  int64_t splitStride = c.batch * c.m * paddedN;
  for (int64_t s = 0; s < splits; ++s) {
    Value part = memref::LoadOp::create(
        b, loc, ws, ValueRange{kb.add(row, kb.idx(s * splitStride))});
    sum = arith::AddFOp::create(b, loc, sum, part);
  }
  if (!element.isF32())
    sum = arith::TruncFOp::create(b, loc, element, sum);
  memref::StoreOp::create(b, loc, sum, out, ValueRange{at});
}

namespace {

struct ConvertLinalgMatmulToAMDGPUPass
    : mxfp4::impl::ConvertLinalgMatmulToAMDGPUPassBase<
          ConvertLinalgMatmulToAMDGPUPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, Contraction>, 4> found;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        return;
      if (std::optional<Contraction> c = matchContraction(op))
        found.push_back({op, *c});
    });
    OpBuilder b(&getContext());
    Packer packer;
    for (auto &[op, c] : found) {
      c.overwrite = takeZeroInit(op, op.getDpsInits()[0]);
      int64_t kPadded = ceilDiv(c.k, kChunk) * kChunk;
      KMajor a = packer.get(b, op, c.a, c.batch, c.m, c.k, kPadded);
      KMajor bop = packer.get(b, op, c.b, c.batch, c.n, c.k, kPadded);
      b.setInsertionPoint(op);
      GemmEmitter(b, op.getLoc(), c, a, bop, kPadded).emit();
      op->erase();
    }
  }
};

} // namespace
