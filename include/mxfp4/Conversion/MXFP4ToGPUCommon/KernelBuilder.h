//===- KernelBuilder.h - index math and memory access in kernels -*- C++
//-*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A thin builder for kernel bodies: index arithmetic that folds constants,
// and memory access that is safe past the end of a buffer. Targets differ in
// how: AMD buffers check bounds in hardware (an out-of-range access is sent
// past the end of its buffer, where loads read 0 and stores are dropped,
// which makes ragged tiles cheap); elsewhere accesses are guarded.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_CONVERSION_MXFP4TOGPUCOMMON_KERNELBUILDER_H
#define MXFP4_CONVERSION_MXFP4TOGPUCOMMON_KERNELBUILDER_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::mxfp4::kernels {

/// How kernels keep accesses past a buffer's end harmless.
enum class BoundsMode {
  /// AMD raw buffers: out-of-range loads read 0, stores are dropped.
  hardware,
  /// Loads of invalid elements read element 0 and give 0; stores are
  /// skipped.
  guarded,
};

class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc,
                BoundsMode bounds = BoundsMode::hardware)
      : b(b), loc(loc), bounds(bounds) {}

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

  /// Runs `body` (which builds at the builder's insertion point) where
  /// `condition` holds.
  void when(Value condition, function_ref<void()> body);

  /// thread_id x, block_id x.
  Value threadId();
  Value blockId();

  /// The view of kernel argument `memref` (1-D, global) that load/store
  /// use: a bounds-checked buffer in hardware mode, the memref otherwise.
  Value buffer(Value memref);

  /// Hardware mode: `offset` if `valid`, else the first offset past a
  /// buffer of `size` elements (out of range, hence masked).
  Value maskedOffset(Value valid, Value offset, int64_t size);

  /// Loads `type` (a scalar or a 1-D vector) at `offset` of `buffer` (of
  /// `size` elements) where `valid`, else zeros. `alignment` in bytes (0:
  /// the element's).
  Value load(Type type, Value buffer, Value valid, Value offset, int64_t size,
             unsigned alignment = 0);
  /// Stores `value` at `offset` of `buffer` where `valid`.
  void store(Value value, Value buffer, Value valid, Value offset, int64_t size,
             unsigned alignment = 0);

private:
  OpBuilder &b;
  Location loc;
  BoundsMode bounds;
};

/// Creates a kernel `name` in `module` with `argTypes`, `workgroupBuffers`
/// and `threads` threads per block; `b`'s insertion point is unchanged
/// (callers build the body from the entry block's start).
gpu::GPUFuncOp createKernel(OpBuilder &b, Location loc, gpu::GPUModuleOp module,
                            StringRef name, TypeRange argTypes,
                            TypeRange workgroupBuffers = {},
                            int64_t threads = 256);

/// memref<size x type> in the global address space.
MemRefType globalBuffer(MLIRContext *context, int64_t size, Type type);

/// memref<size x type> in workgroup (shared) memory.
MemRefType workgroupBuffer(MLIRContext *context, int64_t size, Type type);

} // namespace mlir::mxfp4::kernels

#endif // MXFP4_CONVERSION_MXFP4TOGPUCOMMON_KERNELBUILDER_H
