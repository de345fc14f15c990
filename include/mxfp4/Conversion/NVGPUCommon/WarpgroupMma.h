//===- WarpgroupMma.h - Hopper warpgroup MMAs (wgmma) -----------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Hopper's asynchronous warpgroup MMA: four warps (a warpgroup) multiply
// bf16 operand tiles that `wgmma.mma_async` reads from shared memory itself,
// through 64-bit matrix descriptors, into f32 accumulators held in the
// warpgroup's registers. Unlike `mma.sync`, the operands never pass through
// registers (no `ldmatrix`), and the MMAs run while the threads load and
// store the next K step.
//
// Operand tiles come in two layouts (PTX ISA, "Shared Memory Matrix
// Layout"). Threads store K-major tiles in the no-swizzle ("interleave")
// layout: 8 x 8 core matrices, each 8 rows of 16 bytes stored contiguously;
// a descriptor's leading byte offset is the distance of core matrices
// adjacent in K, its stride byte offset that of 8-row groups, and operands
// whose rows are contiguous in global memory are transposed on their way
// in by `stmatrix.trans`. TMA loads write the 128-byte swizzled layout
// (`swizzledDescriptor`), K-major or, for operands whose rows are
// contiguous, M- / N-major, which wgmma reads transposed. Operand stages
// that come whole from global memory arrive by bulk or tensor copies (the
// async proxy wgmma reads) under mbarriers.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_CONVERSION_NVGPUCOMMON_WARPGROUPMMA_H
#define MXFP4_CONVERSION_NVGPUCOMMON_WARPGROUPMMA_H

#include "mxfp4/Conversion/MXFP4ToGPUCommon/KernelBuilder.h"

namespace mlir::mxfp4::sm90 {

using kernels::KernelBuilder;

/// The K extent of one pipeline stage of an operand tile.
constexpr int64_t kWgStepK = 32;

/// A K-major bf16 operand tile of `rows` x kWgStepK in shared memory, in
/// `stages` copies (a pipeline's buffers) one after another. The K step's
/// four core matrices of an 8-row group are coreBytes() apart and 8-row
/// groups groupBytes() apart. Padded, the 32 bytes of padding in each put
/// the 16-byte rows that a quarter-warp stores (two rows' four chunks each)
/// or one `stmatrix` stores (rows of four groups) in distinct banks;
/// unpadded, a stage is one contiguous 8-row group after another, as bulk
/// copies write it.
struct CoreMatrixTile {
  Value memref; // 1-D bf16 in workgroup memory
  int64_t rows;
  bool padded = true;

  static int64_t coreBytes(bool padded) { return padded ? 128 + 32 : 128; }
  static int64_t groupBytes(bool padded) {
    return (kWgStepK / 8) * coreBytes(padded) + (padded ? 32 : 0);
  }
  int64_t stageElements() const { return rows / 8 * groupBytes(padded) / 2; }
  static int64_t elements(int64_t rows, int64_t stages, bool padded = true) {
    return stages * (rows / 8 * groupBytes(padded) / 2);
  }
  /// The element offset of (row, k) in stage `stage`; `k` a multiple of 8.
  Value offset(KernelBuilder &kb, Value stage, Value row, Value k) const;
  /// The wgmma descriptor of the rows from `row` (a multiple of 8) at K
  /// offset `k` (a multiple of 16) of stage `stage`.
  Value descriptor(KernelBuilder &kb, Value stage, Value row, int64_t k) const;
};

/// Stores 8 bf16 of row `row`, K `k` .. k + 7 (vector<8xbf16>), to `tile`.
void storeRowChunk(KernelBuilder &kb, const CoreMatrixTile &tile, Value stage,
                   Value row, Value k, Value chunk);

/// The warp's transposed store of a 8 (K) x 32 (rows) block: lane l holds
/// `chunk`, the 8 rows from row0 + 8 * (l % 4) at K k0 + l / 4
/// (vector<8xbf16>); `stmatrix.trans` writes them as 32 K-major rows of 8.
void storeTransposedBlock(KernelBuilder &kb, const CoreMatrixTile &tile,
                          Value stage, Value row0, Value k0, Value chunk);

/// The accumulators of a warpgroup's m64nN tile: an LLVM struct of N / 2
/// f32, zeros.
Value zeroAccumulators(KernelBuilder &kb, int64_t n);

/// acc += A * B over the stage's K: `a` the 64 rows from `aRow`, `b` the
/// `n` rows from `bRow`. Fences, issues and commits the MMAs; they complete
/// at `waitWarpgroupMmas`.
Value issueWarpgroupMmas(KernelBuilder &kb, const CoreMatrixTile &a, Value aRow,
                         const CoreMatrixTile &b, Value bRow, int64_t n,
                         Value stage, Value acc);

/// acc += A * B over the stage's K with A in registers: `a` holds, per k16
/// slice, the four registers of wgmma's A fragment (bf16 pairs as i32) of
/// this thread's rows of the warpgroup's 64; `b` the `n` rows from `bRow`.
/// Fences, issues and commits the MMAs; they read `a` until
/// `waitWarpgroupMmas`.
Value issueWarpgroupMmasRegisterA(KernelBuilder &kb, ArrayRef<Value> a,
                                  const CoreMatrixTile &b, Value bRow,
                                  int64_t n, Value stage, Value acc);

/// acc += A * B with A in registers, one k16 slice per entry of `bSlices`
/// (B's descriptors): `a` holds the slices' A fragments, four registers
/// each (see above); `bKMajor` gives B's layout (else N-major, read
/// transposed). Fences, issues and commits the MMAs.
Value issueWarpgroupMmasRegisterA(KernelBuilder &kb, ArrayRef<Value> a,
                                  ArrayRef<Value> bSlices, int64_t n,
                                  bool bKMajor, Value acc);

/// The accumulators of an m64nN tile as `mma.sync`'s: N / 8 vector<4xf32>,
/// one an n8 block, in the m16n8 C fragment's order (TensorCore.h). The
/// layouts agree: warp w of the warpgroup holds rows 16w .. 16w + 15.
SmallVector<Value> accumulatorFragments(KernelBuilder &kb, Value acc,
                                        int64_t n);

/// The inverse of accumulatorFragments.
Value accumulatorStruct(KernelBuilder &kb, ArrayRef<Value> fragments);

/// Waits until at most `pending` of this warpgroup's committed MMA groups
/// (the latest) are still running.
void waitWarpgroupMmas(KernelBuilder &kb, int64_t pending = 0);

/// Makes this thread's stores to shared memory visible to the async proxy
/// (later wgmmas, TMA stores); a barrier must follow.
void fenceSharedForAsyncProxy(KernelBuilder &kb);

/// Barriers (mbarriers) in `barriers`, a workgroup buffer of i64: thread 0
/// initializes barrier i to complete a phase at `arrivals[i]` arrivals (and
/// the bytes they announce), then the block synchronizes.
void initBarriers(KernelBuilder &kb, Value barriers,
                  ArrayRef<int64_t> arrivals);

/// This thread's arrival on barrier `index`.
void arriveOnBarrier(KernelBuilder &kb, Value barriers, int64_t index);

/// Waits until the phase of barrier `index` with parity `parity` (i32, 0 or
/// 1) has completed. A fresh barrier counts the phase before its first as
/// complete.
void waitOnBarrier(KernelBuilder &kb, Value barriers, int64_t index,
                   Value parity);

/// This thread's arrival on barrier `index`, announcing `bytes`, and the
/// bulk copy (the async proxy, as wgmma reads) of `bytes` bytes from global
/// byte address `source` (i64) to element `element` of the bf16 workgroup
/// buffer `dest`, which completes them.
void bulkCopyToShared(KernelBuilder &kb, Value barriers, int64_t index,
                      Value dest, Value element, Value source, int64_t bytes);

/// The bulk copy (the async proxy) of `bytes` bytes from global pointer
/// `source` (!llvm.ptr<1>, 16-byte aligned) to shared byte address `dest`,
/// completing them on the mbarrier at `barrier`, whose arrival announced
/// them.
void copyToSharedAt(KernelBuilder &kb, Value barrier, Value dest, Value source,
                    int64_t bytes);

/// The K extent of a stage in the 128-byte swizzled layout: one 128-byte
/// row of bf16.
constexpr int64_t kSwizzledStepK = 64;

/// The shared byte address (index) of the launch's dynamic shared memory,
/// rounded up to 1024 bytes (the 128-byte swizzle's period): kernels of
/// swizzled tiles ask for 1024 bytes more than they use.
Value swizzleAlignedSharedBase(KernelBuilder &kb);

/// The wgmma descriptor of an operand tile in the 128-byte swizzled layout
/// that a TMA load with CU_TENSOR_MAP_SWIZZLE_128B writes (PTX ISA, "Matrix
/// Descriptor"; the layouts CUTLASS calls SW128), from shared byte address
/// `address` (index). K-major: 128-byte rows of 64 K, 8-row groups 1024
/// bytes apart; the address moves 32 bytes per k16 slice. MN-major: atoms
/// of 64 rows (128 bytes) by 8 K, 1024 bytes apart along K and
/// `atomStrideBytes` apart along the rows. An atom starts 1024-aligned.
Value swizzledDescriptor(KernelBuilder &kb, Value address, bool kMajor,
                         int64_t atomStrideBytes = 0);

/// acc += A * B over one k16 slice per entry of `slices` (the A and B
/// descriptors), `n` columns; `aKMajor` / `bKMajor` give the operands'
/// layouts (else M- / N-major, read transposed). Fences, issues and commits
/// the MMAs; they complete at `waitWarpgroupMmas`.
Value issueWarpgroupMmas(KernelBuilder &kb,
                         ArrayRef<std::pair<Value, Value>> slices, int64_t n,
                         bool aKMajor, bool bKMajor, Value acc);

/// Initializes the mbarrier at shared byte address `barrier` (index) to
/// complete a phase at `arrivals` arrivals; the caller picks one thread and
/// synchronizes the block after.
void initBarrierAt(KernelBuilder &kb, Value barrier, int64_t arrivals);

/// This thread's arrival on the mbarrier at `barrier`.
void arriveAt(KernelBuilder &kb, Value barrier);

/// This thread's arrival on the mbarrier at `barrier`, announcing `bytes`
/// that asynchronous copies will complete.
void arriveExpectingBytesAt(KernelBuilder &kb, Value barrier, int64_t bytes);

/// Waits until the phase with parity `parity` (index, 0 or 1) of the
/// mbarrier at `barrier` has completed.
void waitAt(KernelBuilder &kb, Value barrier, Value parity);

/// A TMA tensor map of the bf16 or f32 buffer `buffer` (identity or strided
/// layout, made on the host: the host plan records it) with box `box`
/// (outermost first), the 128-byte swizzle, zeros out of bounds and 256-byte
/// L2 promotion, as the pointer a kernel takes (the driver's copy of it).
Value createTensorMap(KernelBuilder &kb, Value buffer, ArrayRef<int64_t> box);

/// A TMA load (`cp.async.bulk.tensor`, tile mode) of the box at
/// `coordinates` (index, innermost first) of the tensor map `map` (a
/// generic pointer to it in global memory) to shared byte address `dest`,
/// completing its bytes on the mbarrier at `barrier`.
void loadTensorTile(KernelBuilder &kb, Value map, ArrayRef<Value> coordinates,
                    Value dest, Value barrier);

/// A TMA store (`cp.async.bulk.tensor`, shared to global, tile mode) of the
/// box at shared byte address `source` to `coordinates` (index, innermost
/// first) of the tensor map `map`, clipped at the tensor's edges, committed
/// as a bulk async-group of its own. Writes to `source` by the block's
/// threads must be fenced for the async proxy (fenceSharedForAsyncProxy) and
/// synchronized before it.
void storeTensorTile(KernelBuilder &kb, Value map, ArrayRef<Value> coordinates,
                     Value source);

/// Waits until at most `pending` of this thread's bulk async-groups (TMA
/// stores) have yet to read their shared memory.
void waitTensorStoreReads(KernelBuilder &kb, int64_t pending);

/// Synchronizes the `threads` threads (a multiple of 32) that reach named
/// barrier `id` (index, 1 to 15; 0 is the block's).
void syncNamedBarrier(KernelBuilder &kb, Value id, int64_t threads);

/// Calls `body(row, col, pair)` for each pair of adjacent accumulators of
/// the m64nN tile `acc` (columns col, col + 1 of row `row`, vector<2xf32>)
/// of this thread's warpgroup, whose tile starts at (rowBase, colBase).
void forEachWarpgroupAccumulatorPair(
    KernelBuilder &kb, Value acc, int64_t n, Value rowBase, Value colBase,
    function_ref<void(Value row, Value col, Value pair)> body);

} // namespace mlir::mxfp4::sm90

#endif // MXFP4_CONVERSION_NVGPUCOMMON_WARPGROUPMMA_H
