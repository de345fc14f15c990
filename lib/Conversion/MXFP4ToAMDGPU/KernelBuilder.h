//===- KernelBuilder.h - index math for gfx950 kernels ----------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A thin builder for kernel bodies: index arithmetic that folds constants,
// buffer views with hardware bounds checks, and the masked-offset idiom that
// makes ragged tiles cheap (an out-of-range access is sent past the end of
// its buffer, where loads read 0 and stores are dropped).
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_CONVERSION_MXFP4TOAMDGPU_KERNELBUILDER_H
#define MXFP4_LIB_CONVERSION_MXFP4TOAMDGPU_KERNELBUILDER_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::mxfp4::gfx950 {

class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  OpBuilder &builder() { return b; }
  Location location() const { return loc; }

  Value idx(int64_t v);
  Value i32(int64_t v);
  Value add(Value x, Value y);
  Value add(Value x, int64_t y) { return add(x, idx(y)); }
  Value mul(Value x, int64_t y);
  Value div(Value x, int64_t y);
  Value rem(Value x, int64_t y);
  Value min(Value x, Value y);
  Value lt(Value x, Value y);
  Value lt(Value x, int64_t y) { return lt(x, idx(y)); }
  Value andI(Value x, Value y);
  Value xorI(Value x, int64_t y);
  Value select(Value cond, Value x, Value y);

  /// thread_id x, block_id x.
  Value threadId();
  Value blockId();

  /// A bounds-checked buffer view of kernel argument `memref` (1-D, global):
  /// loads past its end read 0, stores past its end are dropped.
  Value buffer(Value memref);

  /// `offset` if `valid`, else the first offset past a buffer of `bytes`
  /// elements (out of range, hence masked by the hardware bounds check).
  Value maskedOffset(Value valid, Value offset, int64_t size);

private:
  OpBuilder &b;
  Location loc;
};

/// The offset of scale (row, kBlock) in the pre-shuffled layout of a scale
/// matrix with `kBlocks` K blocks, as IR: LaneLayout's
/// getShuffledScaleOffset(m16n16k128, ...).
Value emitShuffledScaleOffset(KernelBuilder &kb, Value row, Value kBlock,
                              int64_t kBlocks);

/// Creates a kernel `name` in `module` with `argTypes` and 256 threads per
/// workgroup, and positions `b` at its start.
gpu::GPUFuncOp createKernel(OpBuilder &b, Location loc,
                            gpu::GPUModuleOp module, StringRef name,
                            TypeRange argTypes,
                            TypeRange workgroupBuffers = {});

/// memref<size x type> in the global address space.
MemRefType globalBuffer(MLIRContext *context, int64_t size, Type type);

} // namespace mlir::mxfp4::gfx950

#endif // MXFP4_LIB_CONVERSION_MXFP4TOAMDGPU_KERNELBUILDER_H
