//===- AttentionToNVGPU.cpp - attention composites to fused kernels -------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The sm_90a kernels (FlashAttention.h) behind the shared driver
// (AttentionCommon): it replaces the composite calls they cover and
// outlines their launches into named kernels, keeping the `nvvm.minctasm`
// that tells ptxas a kernel's occupancy.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Conversion/Passes.h"

#include "FlashAttention.h"

#include "mxfp4/Conversion/AttentionCommon/Attention.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_CONVERTATTENTIONTONVGPUPASS
#include "mxfp4/Conversion/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;
using namespace mlir::mxfp4;

namespace {

/// The Hopper kernels: forward and backward for every shape they cover.
class Sm90AttentionEmitter : public AttentionEmitter {
public:
  bool isSupported(const AttentionShape &shape, bool) const override {
    return sm90::isSupported(shape);
  }
  SmallVector<AttentionLaunch> emitForward(OpBuilder &b, Location loc,
                                           const AttentionShape &shape, Value q,
                                           Value k, Value v, Value o,
                                           Value lse) override {
    return sm90::emitAttentionForward(b, loc, shape, q, k, v, o, lse);
  }
  SmallVector<AttentionLaunch>
  emitBackward(OpBuilder &b, Location loc, const AttentionShape &shape,
               Value q, Value k, Value v, Value o, Value lse, Value dO,
               Value dq, Value dk, Value dv) override {
    return sm90::emitAttentionBackward(b, loc, shape, q, k, v, o, lse, dO, dq,
                                       dk, dv);
  }
};

struct ConvertAttentionToNVGPUPass
    : mxfp4::impl::ConvertAttentionToNVGPUPassBase<
          ConvertAttentionToNVGPUPass> {
  void runOnOperation() override {
    Sm90AttentionEmitter emitter;
    convertAttentionComposites(getOperation(), emitter);
  }
};

} // namespace
