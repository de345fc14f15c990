//===- MXFP4ToAMDGPU.cpp - the convert-mxfp4-to-amdgpu pass ---------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// gfx950 as a target of the shared mxfp4-to-GPU conversion
// (../MXFP4ToGPUCommon): hardware bounds checks on raw buffers, the scaled
// FP4 conversion instructions, pre-shuffled scales and the scaled-MFMA GEMM.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "mxfp4/Conversion/MXFP4ToGPUCommon/FunctionConverter.h"

#include "mxfp4/Conversion/Passes.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_CONVERTMXFP4TOAMDGPUPASS
#include "mxfp4/Conversion/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::gfx950;
using namespace mlir::mxfp4::kernels;

/// The largest tile whose grid still gives every CU of an MI355X (256) a
/// workgroup; 64 x 64 for small problems.
static int64_t chooseTile(int64_t m, int64_t n) {
  for (int64_t tile : {256, 128})
    if (((m + tile - 1) / tile) * ((n + tile - 1) / tile) >= 256)
      return tile;
  return 64;
}

static std::string typeName(Type t) { return t.isF32() ? "f32" : "bf16"; }

/// gfx950's part of the conversion; `tileOverride` 0 picks per shape.
static KernelTarget getGfx950Target(int64_t tileOverride,
                                    std::string testMutation) {
  KernelTarget target;
  target.name = "gfx950";
  target.bounds = BoundsMode::hardware;
  target.convertBlock = convertBlock;
  target.expandBlock = expandBlock;
  target.gemmScaleLayout = getShuffledScaleLayout();
  target.gemm = [=](OpBuilder &b, Location loc, gpu::GPUModuleOp module,
                    const GemmShape &shape) -> GemmLaunch {
    GemmConfig config;
    config.m = shape.m;
    config.n = shape.n;
    config.k = shape.k;
    config.tileM = config.tileN =
        tileOverride ? tileOverride : chooseTile(config.m, config.n);
    config.resultType = shape.resultType;
    config.accType = shape.accType;
    config.testMutation = testMutation;
    std::string name = llvm::formatv(
        "gemm_{0}x{1}x{2}_t{3}x{4}_{5}{6}", config.m, config.n, config.k,
        config.tileM, config.tileN, typeName(config.resultType),
        (config.accType ? "_acc" + typeName(config.accType) : "") +
            (testMutation.empty() ? "" : "_mutated_" + testMutation));
    auto kernel = module.lookupSymbol<gpu::GPUFuncOp>(name);
    if (!kernel) {
      OpBuilder kb(b.getContext());
      kernel = buildGemmKernel(kb, loc, module, name, config);
    }
    return {{kernel, gemmWorkgroups(config)}};
  };
  target.convertScales = [](OpBuilder &b, Location loc,
                             gpu::GPUModuleOp module, int64_t rows,
                             int64_t kBlocks) -> KernelLaunch {
    std::string name = llvm::formatv("shuffle_scales_{0}x{1}", rows, kBlocks);
    auto kernel = module.lookupSymbol<gpu::GPUFuncOp>(name);
    if (!kernel) {
      OpBuilder kb(b.getContext());
      kernel = buildShuffleScalesKernel(kb, loc, module, name, rows, kBlocks);
    }
    return {kernel, shuffleScalesWorkgroups(rows, kBlocks)};
  };
  return target;
}

namespace {

struct ConvertMXFP4ToAMDGPUPass
    : mxfp4::impl::ConvertMXFP4ToAMDGPUPassBase<ConvertMXFP4ToAMDGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (chipset != "gfx950") {
      module.emitError() << "convert-mxfp4-to-amdgpu: chipset '" << chipset
                         << "' has no MXFP4 scaled MFMAs; only gfx950 "
                            "(MI350X/MI355X) is supported";
      return signalPassFailure();
    }
    if (!testMutation.empty() && testMutation != "lds-swizzle" &&
        testMutation != "scale-byte" && testMutation != "fragment-row") {
      module.emitError() << "convert-mxfp4-to-amdgpu: unknown test mutation '"
                         << testMutation << "'";
      return signalPassFailure();
    }
    if (tile != 0 && tile != 64 && tile != 128 && tile != 256) {
      module.emitError() << "convert-mxfp4-to-amdgpu: tile must be 64, 128 "
                            "or 256, got "
                         << static_cast<int64_t>(tile);
      return signalPassFailure();
    }
    auto target = ROCDL::ROCDLTargetAttr::get(&getContext(), /*optLevel=*/3,
                                              "amdgcn-amd-amdhsa", chipset, "",
                                              /*abiVersion=*/"500");
    if (failed(convertMXFP4Functions(
            module, getGfx950Target(tile, testMutation), target, mixed)))
      signalPassFailure();
  }
};

} // namespace
