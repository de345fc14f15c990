//===- Launches.h - pieces of the generic GPU kernels ----------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What convert-linalg-to-gpu-launch's lowerings share: the launch with one
// work-item a point, the combiners of reductions, the payload's clone, the
// buffers an op touches, the constants that outputs start from, and the
// 16-byte elementwise lowering (VectorElementwise.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_CONVERSION_LINALGTOGPU_LAUNCHES_H
#define MXFP4_LIB_CONVERSION_LINALGTOGPU_LAUNCHES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>

namespace mlir::mxfp4::launches {

/// Work-items a workgroup.
constexpr int64_t kThreads = 256;

/// Work-items that keep an H200 or MI355X busy: reductions with fewer
/// output points than this are split (see `launchGeneric`), elementwise
/// kernels with fewer than this many runs of 4 elements keep one element a
/// work-item.
constexpr int64_t kBusyWorkItems = 1 << 18;

/// Emits `gpu.launch` over `points` work-items (`threads` a workgroup) and
/// positions `b` inside it, under `if (id < points)`; returns the id.
Value openLaunch(OpBuilder &b, Location loc, int64_t points,
                 int64_t threads = kThreads);

/// How each output of a reduction combines: the op that the payload yields
/// as `op(out, x)` with `out` used nowhere else (f32 addf, maximumf or
/// maxnumf), or none if some output does not.
std::optional<SmallVector<Operation *>> getCombiners(linalg::GenericOp op);

/// True if every output of `op` is a sum: such reductions may be split and
/// their partial sums added afterwards.
bool isSumReduction(linalg::GenericOp op);

/// The neutral element of `combiner` (f32).
Value neutralOf(OpBuilder &b, Location loc, Operation *combiner);

/// `combiner`'s op on (x, y).
Value combineWith(OpBuilder &b, Location loc, Operation *combiner, Value x,
                  Value y);

/// Clones `op`'s payload at the loop indices `ivs` (for linalg.index) with
/// its outputs' values `outs` (null for an output the payload does not
/// read) and its inputs from `input`; returns what it yields.
SmallVector<Value> emitPayload(OpBuilder &b, linalg::GenericOp op,
                               ArrayRef<Value> ivs, ArrayRef<Value> outs,
                               function_ref<Value(OpOperand *)> input);

/// The buffer under `v` and its views.
Value rootOf(Value v);

/// The buffers (roots) an op reads and writes.
struct Access {
  DenseSet<Value> reads, writes;
};

/// What `op` reads and writes; an op other than a generic or a load counts
/// as writing every buffer it or its regions use.
Access accessOf(Operation *op);

/// True for allocations and ops without memory effects.
bool touchesNoMemory(Operation *op);

/// True if `a` and `b` share a buffer.
bool intersects(const DenseSet<Value> &a, const DenseSet<Value> &b);

/// Outputs of generics whose elements hold a known constant when the
/// generic starts (`foldConstantInits`): their kernels use the constant
/// instead of loading it.
using ConstantInits = DenseMap<OpOperand *, TypedAttr>;

/// `output`'s value at `indices` when its generic starts.
Value loadInit(OpBuilder &b, Location loc, OpOperand &output,
               ValueRange indices, const ConstantInits &inits);

/// Erases each fill, or copy of a buffer that a fill has made constant and
/// nothing has written since, whose target the next op touching it writes
/// as a generic's output without reading it as an input, and records the
/// constant as that output's initial value: the reductions' zeroed
/// accumulators then cost no launch.
ConstantInits foldConstantInits(Block &entry);

/// Lowers a large elementwise generic with four consecutive elements of its
/// innermost loop a work-item (VectorElementwise.cpp); false, emitting
/// nothing, if it is small or its outputs do not run along that loop.
bool launchVectorElementwise(OpBuilder &b, linalg::GenericOp op,
                             const ConstantInits &inits);

} // namespace mlir::mxfp4::launches

#endif // MXFP4_LIB_CONVERSION_LINALGTOGPU_LAUNCHES_H
