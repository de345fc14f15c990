//===- AttentionToAMDGPU.cpp - attention composites to gfx950 kernels -----===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The gfx950 kernels (FlashAttention.h) behind the shared driver
// (AttentionCommon): it replaces the composite calls they cover and
// outlines their launches into named kernels of the kernel module.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Conversion/Passes.h"

#include "FlashAttention.h"

#include "mxfp4/Conversion/AttentionCommon/Attention.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_CONVERTATTENTIONTOAMDGPUPASS
#include "mxfp4/Conversion/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;
using namespace mlir::mxfp4;

namespace {

/// The gfx950 kernels, forward and backward over the same shapes.
class Gfx950AttentionEmitter : public AttentionEmitter {
public:
  bool isSupported(const AttentionShape &shape, bool) const override {
    return gfx950::isSupported(shape);
  }
  SmallVector<AttentionLaunch> emitForward(OpBuilder &b, Location loc,
                                           const AttentionShape &shape, Value q,
                                           Value k, Value v, Value o,
                                           Value lse) override {
    return gfx950::emitAttentionForward(b, loc, shape, q, k, v, o, lse);
  }
  SmallVector<AttentionLaunch>
  emitBackward(OpBuilder &b, Location loc, const AttentionShape &shape,
               Value q, Value k, Value v, Value o, Value lse, Value dO,
               Value dq, Value dk, Value dv) override {
    return gfx950::emitAttentionBackward(b, loc, shape, q, k, v, o, lse, dO,
                                         dq, dk, dv);
  }
};

struct ConvertAttentionToAMDGPUPass
    : mxfp4::impl::ConvertAttentionToAMDGPUPassBase<
          ConvertAttentionToAMDGPUPass> {
  void runOnOperation() override {
    Gfx950AttentionEmitter emitter;
    convertAttentionComposites(getOperation(), emitter);
  }
};

} // namespace
