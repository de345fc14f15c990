//===- WarpgroupMma.cpp - Hopper warpgroup MMAs (wgmma) -------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Layouts (PTX ISA): the matrix descriptor holds the start address, the
// leading and the stride byte offsets, each (x & 0x3FFFF) >> 4, at bits 0,
// 16 and 32; swizzle mode 0 (bits 62-63) is the no-swizzle layout. The
// accumulator of an m64nNk16 MMA is, for warp w of the warpgroup, the
// m16n8 C fragments of rows 16w .. 16w + 15, one per 8 columns: registers
// 4i + {0, 1} hold row 16w + lane / 4, columns 8i + 2 (lane % 4) + {0, 1};
// registers 4i + {2, 3} the same columns of the row 8 below. `stmatrix`
// takes the m8n8 fragments `ldmatrix` gives (lane l: row l / 4, columns
// 2 (l % 4) + {0, 1}); with `.trans` it stores column j of matrix q as the
// 16-byte row whose address lane 8q + j gives.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Conversion/NVGPUCommon/WarpgroupMma.h"

#include "mxfp4/Conversion/NVGPUCommon/TensorCore.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::sm90;

Value CoreMatrixTile::offset(KernelBuilder &kb, Value stage, Value row,
                             Value k) const {
  Value group = kb.mul(kb.div(row, 8), groupBytes(padded) / 2);
  Value inGroup = kb.add(kb.mul(kb.div(k, 8), coreBytes(padded) / 2),
                         kb.mul(kb.rem(row, 8), 8));
  return kb.add(kb.mul(stage, stageElements()), kb.add(group, inGroup));
}

/// The matrix descriptor of the operand at shared byte address `address`
/// (index) with the given leading and stride byte offsets and swizzle mode.
static Value matrixDescriptor(KernelBuilder &kb, Value address,
                              uint64_t leadingBytes, uint64_t strideBytes,
                              uint64_t swizzleMode) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  Value a64 = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), address);
  auto constant = [&](uint64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  };
  Value start = arith::ShRUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, a64, constant(0x3FFFF)),
      constant(4));
  return arith::OrIOp::create(
      b, loc, start,
      constant(((leadingBytes >> 4) << 16) | ((strideBytes >> 4) << 32) |
               (swizzleMode << 62)));
}

Value CoreMatrixTile::descriptor(KernelBuilder &kb, Value stage, Value row,
                                 int64_t k) const {
  Value address = sharedAddress(kb, memref, offset(kb, stage, row, kb.idx(k)));
  return matrixDescriptor(kb, address, coreBytes(padded), groupBytes(padded),
                          /*swizzleMode=*/0);
}

void sm90::storeRowChunk(KernelBuilder &kb, const CoreMatrixTile &tile,
                         Value stage, Value row, Value k, Value chunk) {
  vector::StoreOp::create(kb.builder(), kb.location(), chunk, tile.memref,
                          ValueRange{tile.offset(kb, stage, row, k)},
                          /*nontemporal=*/false, llvm::MaybeAlign(16));
}

void sm90::storeTransposedBlock(KernelBuilder &kb, const CoreMatrixTile &tile,
                                Value stage, Value row0, Value k0,
                                Value chunk) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  // Register q of lane l: rows row0 + 8 (l % 4) + 2q + {0, 1} at K
  // k0 + l / 4, i.e. columns 2 (l % 4) + {0, 1} of matrix q's row l / 4.
  // Column j of matrix q is then row row0 + 8 (j / 2) + 2q + j % 2.
  Value words = vector::BitCastOp::create(
      b, loc, VectorType::get({4}, b.getI32Type()), chunk);
  SmallVector<Value> regs;
  for (int64_t q = 0; q < 4; ++q)
    regs.push_back(vector::ExtractOp::create(b, loc, words, q));
  Value lane = kb.rem(kb.threadId(), 32);
  Value q = kb.div(lane, 8), j = kb.rem(lane, 8);
  Value row = kb.add(row0, kb.add(kb.add(kb.mul(kb.div(j, 2), 8), kb.mul(q, 2)),
                                  kb.rem(j, 2)));
  Value address =
      sharedAddress(kb, tile.memref, tile.offset(kb, stage, row, k0));
  NVVM::StMatrixOp::create(
      b, loc, sharedPointer(kb, address), regs,
      NVVM::MMALayoutAttr::get(b.getContext(), NVVM::MMALayout::col),
      NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
      NVVM::LdStMatrixEltTypeAttr::get(b.getContext(),
                                       NVVM::LdStMatrixEltType::B16));
}

static LLVM::LLVMStructType accumulatorType(MLIRContext *ctx, int64_t n) {
  return LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(n / 2, Float32Type::get(ctx)));
}

Value sm90::zeroAccumulators(KernelBuilder &kb, int64_t n) {
  OpBuilder &b = kb.builder();
  return LLVM::ZeroOp::create(b, kb.location(),
                              accumulatorType(b.getContext(), n));
}

Value sm90::issueWarpgroupMmas(KernelBuilder &kb, const CoreMatrixTile &a,
                               Value aRow, const CoreMatrixTile &b, Value bRow,
                               int64_t n, Value stage, Value acc) {
  OpBuilder &ob = kb.builder();
  Location loc = kb.location();
  MLIRContext *ctx = ob.getContext();
  NVVM::WgmmaFenceAlignedOp::create(ob, loc);
  for (int64_t k = 0; k < kWgStepK; k += 16)
    acc = NVVM::WgmmaMmaAsyncOp::create(
        ob, loc, accumulatorType(ctx, n), acc, a.descriptor(kb, stage, aRow, k),
        b.descriptor(kb, stage, bRow, k),
        NVVM::MMAShapeAttr::get(ctx, 64, n, 16), NVVM::WGMMATypes::bf16,
        NVVM::WGMMATypes::bf16, NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
        NVVM::MMALayout::col,
        /*satfinite=*/nullptr);
  NVVM::WgmmaGroupSyncAlignedOp::create(ob, loc);
  return acc;
}

Value sm90::issueWarpgroupMmasRegisterA(KernelBuilder &kb, ArrayRef<Value> a,
                                        const CoreMatrixTile &b, Value bRow,
                                        int64_t n, Value stage, Value acc) {
  SmallVector<Value> slices;
  for (int64_t k = 0; k < kWgStepK; k += 16)
    slices.push_back(b.descriptor(kb, stage, bRow, k));
  return issueWarpgroupMmasRegisterA(kb, a, slices, n, /*bKMajor=*/true, acc);
}

Value sm90::issueWarpgroupMmasRegisterA(KernelBuilder &kb, ArrayRef<Value> a,
                                        ArrayRef<Value> bSlices, int64_t n,
                                        bool bKMajor, Value acc) {
  OpBuilder &ob = kb.builder();
  Location loc = kb.location();
  MLIRContext *ctx = ob.getContext();
  // NVVM's wgmma op takes A only as a descriptor: inline PTX, in the form
  // that op's lowering writes (scale-d a predicate; then imm-scale-a,
  // imm-scale-b and imm-trans-b).
  int64_t count = n / 2;
  std::string text, constraints;
  llvm::raw_string_ostream os(text), cs(constraints);
  os << "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
     << "wgmma.mma_async.sync.aligned.m64n" << n << "k16.f32.bf16.bf16 {";
  for (int64_t i = 0; i < count; ++i) {
    os << (i ? ", $" : "$") << i;
    cs << "=f,";
  }
  os << "}, {$" << 2 * count << ", $" << 2 * count + 1 << ", $" << 2 * count + 2
     << ", $" << 2 * count + 3 << "}, $" << 2 * count + 4 << ", p, 1, 1, "
     << (bKMajor ? 0 : 1) << ";\n}";
  for (int64_t i = 0; i < count; ++i)
    cs << i << ",";
  cs << "r,r,r,r,l";
  NVVM::WgmmaFenceAlignedOp::create(ob, loc);
  for (auto [slice, descriptor] : llvm::enumerate(bSlices)) {
    SmallVector<Value> operands;
    for (int64_t i = 0; i < count; ++i)
      operands.push_back(LLVM::ExtractValueOp::create(ob, loc, acc, i));
    llvm::append_range(operands, a.slice(slice * 4, 4));
    operands.push_back(descriptor);
    acc = LLVM::InlineAsmOp::create(
              ob, loc, accumulatorType(ctx, n), operands, text, constraints,
              /*has_side_effects=*/true, /*is_align_stack=*/false,
              LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
              /*operand_attrs=*/ArrayAttr())
              .getResult(0);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(ob, loc);
  return acc;
}

SmallVector<Value> sm90::accumulatorFragments(KernelBuilder &kb, Value acc,
                                              int64_t n) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  auto type = VectorType::get({4}, b.getF32Type());
  SmallVector<Value> fragments;
  for (int64_t i = 0; i < n / 8; ++i) {
    SmallVector<Value> elements;
    for (int64_t e = 0; e < 4; ++e)
      elements.push_back(LLVM::ExtractValueOp::create(b, loc, acc, 4 * i + e));
    fragments.push_back(vector::FromElementsOp::create(b, loc, type, elements));
  }
  return fragments;
}

Value sm90::accumulatorStruct(KernelBuilder &kb, ArrayRef<Value> fragments) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  int64_t n = static_cast<int64_t>(fragments.size()) * 8;
  Value acc =
      LLVM::PoisonOp::create(b, loc, accumulatorType(b.getContext(), n));
  for (auto [i, fragment] : llvm::enumerate(fragments))
    for (int64_t e = 0; e < 4; ++e)
      acc = LLVM::InsertValueOp::create(
          b, loc, acc, vector::ExtractOp::create(b, loc, fragment, e),
          static_cast<int64_t>(4 * i + e));
  return acc;
}

void sm90::waitWarpgroupMmas(KernelBuilder &kb, int64_t pending) {
  OpBuilder &b = kb.builder();
  NVVM::WgmmaWaitGroupSyncOp::create(b, kb.location(),
                                     b.getI64IntegerAttr(pending));
}

void sm90::fenceSharedForAsyncProxy(KernelBuilder &kb) {
  OpBuilder &b = kb.builder();
  NVVM::FenceProxyOp::create(
      b, kb.location(),
      NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

/// The shared byte address of barrier `index` of `barriers`.
static Value barrierAddress(KernelBuilder &kb, Value barriers, int64_t index) {
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(
      kb.builder(), kb.location(), barriers);
  return kb.add(base, 8 * index);
}

static Value i32Constant(KernelBuilder &kb, int64_t v) {
  return arith::ConstantIntOp::create(kb.builder(), kb.location(),
                                      kb.builder().getI32Type(), v);
}

void sm90::initBarrierAt(KernelBuilder &kb, Value barrier, int64_t arrivals) {
  NVVM::MBarrierInitOp::create(kb.builder(), kb.location(),
                               sharedPointer(kb, barrier),
                               i32Constant(kb, arrivals), Value());
}

void sm90::arriveAt(KernelBuilder &kb, Value barrier) {
  NVVM::MBarrierArriveOp::create(kb.builder(), kb.location(),
                                 kb.builder().getI64Type(),
                                 sharedPointer(kb, barrier), Value());
}

void sm90::arriveExpectingBytesAt(KernelBuilder &kb, Value barrier,
                                  int64_t bytes) {
  OpBuilder &b = kb.builder();
  NVVM::MBarrierArriveExpectTxOp::create(
      b, kb.location(), b.getI64Type(), sharedPointer(kb, barrier),
      i32Constant(kb, bytes), NVVM::MemScopeKind::CTA, /*relaxed=*/false,
      Value());
}

void sm90::waitAt(KernelBuilder &kb, Value barrier, Value parity) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  if (parity.getType().isIndex())
    parity = arith::IndexCastOp::create(b, loc, b.getI32Type(), parity);
  // The suspend-time hint CUTLASS uses (ns).
  NVVM::MBarrierTryWaitParityOp::create(b, loc, sharedPointer(kb, barrier),
                                        parity, i32Constant(kb, 10000000));
}

/// A shared::cta address as the shared::cluster pointer that the bulk
/// copies of PTX 8.0 take (a block's own window is part of its cluster's).
static Value clusterPointer(KernelBuilder &kb, Value address) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 7),
      arith::IndexCastOp::create(b, loc, b.getI32Type(), address).getResult());
}

Value sm90::createTensorMap(KernelBuilder &kb, Value buffer,
                            ArrayRef<int64_t> box) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  MLIRContext *ctx = b.getContext();
  auto type = cast<MemRefType>(buffer.getType());
  Type element = type.getElementType();
  auto descType = nvgpu::TensorMapDescriptorType::get(
      ctx,
      MemRefType::get(box, element, MemRefLayoutAttrInterface(),
                      gpu::AddressSpaceAttr::get(
                          ctx, gpu::GPUDialect::getWorkgroupAddressSpace())),
      nvgpu::TensorMapSwizzleKind::SWIZZLE_128B,
      nvgpu::TensorMapL2PromoKind::L2PROMO_256B,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
  Value unranked = memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(element, type.getMemorySpace()), buffer);
  SmallVector<Value> sizes;
  for (int64_t size : box)
    sizes.push_back(kb.idx(size));
  Value map =
      nvgpu::TmaCreateDescriptorOp::create(b, loc, descType, unranked, sizes);
  return UnrealizedConversionCastOp::create(
             b, loc, LLVM::LLVMPointerType::get(ctx), map)
      .getResult(0);
}

/// A tile's coordinates (index) as the i32 a bulk tensor copy takes.
static SmallVector<Value> tensorCoordinates(KernelBuilder &kb,
                                            ArrayRef<Value> coordinates) {
  OpBuilder &b = kb.builder();
  SmallVector<Value> at;
  for (Value c : coordinates)
    at.push_back(
        arith::IndexCastOp::create(b, kb.location(), b.getI32Type(), c));
  return at;
}

void sm90::loadTensorTile(KernelBuilder &kb, Value map,
                          ArrayRef<Value> coordinates, Value dest,
                          Value barrier) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  SmallVector<Value> at = tensorCoordinates(kb, coordinates);
  NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
      b, loc, clusterPointer(kb, dest), map, at, sharedPointer(kb, barrier),
      /*im2colOffsets=*/ValueRange(), /*multicastMask=*/Value(),
      /*l2CacheHint=*/Value(),
      NVVM::TMALoadModeAttr::get(b.getContext(), NVVM::TMALoadMode::TILE),
      b.getBoolAttr(false), /*group=*/nullptr, /*predicate=*/Value());
}

void sm90::storeTensorTile(KernelBuilder &kb, Value map,
                           ArrayRef<Value> coordinates, Value source) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  SmallVector<Value> at = tensorCoordinates(kb, coordinates);
  NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
      b, loc, map, sharedPointer(kb, source), at, /*l2CacheHint=*/Value(),
      NVVM::TMAStoreMode::TILE, /*predicate=*/Value());
  NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
}

void sm90::waitTensorStoreReads(KernelBuilder &kb, int64_t pending) {
  OpBuilder &b = kb.builder();
  NVVM::CpAsyncBulkWaitGroupOp::create(b, kb.location(), pending,
                                       b.getUnitAttr());
}

void sm90::syncNamedBarrier(KernelBuilder &kb, Value id, int64_t threads) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  NVVM::BarrierOp::create(
      b, loc, /*res=*/Type(),
      arith::IndexCastOp::create(b, loc, b.getI32Type(), id),
      i32Constant(kb, threads),
      /*reductionOp=*/nullptr,
      /*reductionPredicate=*/Value());
}

Value sm90::swizzleAlignedSharedBase(KernelBuilder &kb) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  MLIRContext *ctx = b.getContext();
  Value shared = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface(),
                      gpu::AddressSpaceAttr::get(
                          ctx, gpu::GPUDialect::getWorkgroupAddressSpace())));
  Value raw = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, shared);
  return kb.mul(kb.div(kb.add(raw, 1023), 1024), 1024);
}

Value sm90::swizzledDescriptor(KernelBuilder &kb, Value address, bool kMajor,
                               int64_t atomStrideBytes) {
  // K-major: the leading offset is unused within a 128-byte row (16 by
  // convention). Both: 8-row (8-K) groups 1024 bytes apart; mode 1 is the
  // 128-byte swizzle.
  return matrixDescriptor(kb, address, kMajor ? 16 : atomStrideBytes, 1024,
                          /*swizzleMode=*/1);
}

Value sm90::issueWarpgroupMmas(KernelBuilder &kb,
                               ArrayRef<std::pair<Value, Value>> slices,
                               int64_t n, bool aKMajor, bool bKMajor,
                               Value acc) {
  OpBuilder &ob = kb.builder();
  Location loc = kb.location();
  MLIRContext *ctx = ob.getContext();
  NVVM::WgmmaFenceAlignedOp::create(ob, loc);
  // wgmma's "row" A and "col" B are K-major; the others are read transposed.
  for (auto [a, b] : slices)
    acc = NVVM::WgmmaMmaAsyncOp::create(
        ob, loc, accumulatorType(ctx, n), acc, a, b,
        NVVM::MMAShapeAttr::get(ctx, 64, n, 16), NVVM::WGMMATypes::bf16,
        NVVM::WGMMATypes::bf16, NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
        aKMajor ? NVVM::MMALayout::row : NVVM::MMALayout::col,
        bKMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        /*satfinite=*/nullptr);
  NVVM::WgmmaGroupSyncAlignedOp::create(ob, loc);
  return acc;
}

void sm90::initBarriers(KernelBuilder &kb, Value barriers,
                        ArrayRef<int64_t> arrivals) {
  kb.when(kb.lt(kb.threadId(), 1), [&] {
    for (auto [i, count] : llvm::enumerate(arrivals))
      initBarrierAt(kb, barrierAddress(kb, barriers, i), count);
  });
  gpu::BarrierOp::create(kb.builder(), kb.location());
}

void sm90::arriveOnBarrier(KernelBuilder &kb, Value barriers, int64_t index) {
  arriveAt(kb, barrierAddress(kb, barriers, index));
}

void sm90::waitOnBarrier(KernelBuilder &kb, Value barriers, int64_t index,
                         Value parity) {
  waitAt(kb, barrierAddress(kb, barriers, index), parity);
}

void sm90::bulkCopyToShared(KernelBuilder &kb, Value barriers, int64_t index,
                            Value dest, Value element, Value source,
                            int64_t bytes) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  Value bar = barrierAddress(kb, barriers, index);
  arriveExpectingBytesAt(kb, bar, bytes);
  Value global = LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 1), source);
  copyToSharedAt(kb, bar, sharedAddress(kb, dest, element), global, bytes);
}

void sm90::copyToSharedAt(KernelBuilder &kb, Value barrier, Value dest,
                          Value source, int64_t bytes) {
  NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(
      kb.builder(), kb.location(), clusterPointer(kb, dest), source,
      sharedPointer(kb, barrier), i32Constant(kb, bytes), Value(), Value());
}

void sm90::forEachWarpgroupAccumulatorPair(
    KernelBuilder &kb, Value acc, int64_t n, Value rowBase, Value colBase,
    function_ref<void(Value row, Value col, Value pair)> body) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  Value t = kb.rem(kb.threadId(), 128);
  Value lane = kb.rem(t, 32);
  Value row0 =
      kb.add(rowBase, kb.add(kb.mul(kb.div(t, 32), 16), kb.div(lane, 4)));
  Value col0 = kb.add(colBase, kb.mul(kb.rem(lane, 4), 2));
  auto pairType = VectorType::get({2}, b.getF32Type());
  for (int64_t i = 0; i < n / 8; ++i)
    for (int64_t half = 0; half < 2; ++half) {
      int64_t e = 4 * i + 2 * half;
      Value pair = vector::FromElementsOp::create(
          b, loc, pairType,
          ValueRange{LLVM::ExtractValueOp::create(b, loc, acc, e),
                     LLVM::ExtractValueOp::create(b, loc, acc, e + 1)});
      body(kb.add(row0, half * 8), kb.add(col0, i * 8), pair);
    }
}
