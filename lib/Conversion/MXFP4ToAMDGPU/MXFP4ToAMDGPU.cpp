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

#include "mxfp4/Conversion/AMDGPUCommon/GemmTiling.h"
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

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// K steps of the GEMM's main loop (256 of K each), and the fewest a split
/// runs.
static int64_t gemmSteps(int64_t k) { return ceilDiv(k, 256); }
constexpr int64_t kMinStepsPerSplit = 4;

/// How `config`'s K is split. The splits' workspace is written and read
/// back (2 x splits x M N x 4 bytes): it is kept within the operands' own
/// (M + N) K / 2 bytes, which bounds the split's HBM traffic at twice the
/// unsplit kernel's.
static KSplit chooseSplit(const GemmConfig &config) {
  int64_t maxSplits =
      (config.m + config.n) * config.k / (16 * config.m * config.n);
  return splitK(gemmWorkgroups(config), gemmSteps(config.k),
                kMinStepsPerSplit, maxSplits);
}

/// The largest tile whose grid still gives every CU of an MI355X (256) a
/// workgroup; else 128 x 128 where K can be split to fill the CUs (the
/// weight gradients: 64 x 64 tiles are LDS-bound, reading 3 bytes of LDS
/// per MFMA cycle against 1.5 at 128); else 64 x 64.
static int64_t chooseTile(const GemmConfig &config) {
  for (int64_t tile : {256, 128})
    if (ceilDiv(config.m, tile) * ceilDiv(config.n, tile) >= kComputeUnits)
      return tile;
  GemmConfig at128 = config;
  at128.tileM = at128.tileN = 128;
  return chooseSplit(at128).splits > 1 ? 128 : 64;
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
    config.resultType = shape.resultType;
    config.accType = shape.accType;
    config.testMutation = testMutation;
    config.tileM = config.tileN =
        tileOverride ? tileOverride : chooseTile(config);
    KSplit split = chooseSplit(config);
    config.splits = split.splits;
    config.stepsPerSplit = split.stepsPerSplit;
    std::string types =
        typeName(config.resultType) +
        (config.accType ? "_acc" + typeName(config.accType) : "");
    std::string mutated =
        testMutation.empty() ? "" : "_mutated_" + testMutation;
    auto getKernel = [&](const std::string &name, auto build) {
      auto kernel = module.lookupSymbol<gpu::GPUFuncOp>(name);
      if (!kernel) {
        OpBuilder kb(b.getContext());
        kernel = build(kb, loc, module, name, config);
      }
      return kernel;
    };
    std::string shapeName = llvm::formatv(
        "{0}x{1}x{2}_t{3}x{4}", config.m, config.n, config.k, config.tileM,
        config.tileN);
    if (config.splits == 1)
      return {{getKernel("gemm_" + shapeName + "_" + types + mutated,
                         buildGemmKernel),
               gemmWorkgroups(config)}};
    // The split GEMM writes f32 partial products whatever C's types.
    return {{getKernel(llvm::formatv("gemm_{0}_split{1}{2}", shapeName,
                                     config.splits, mutated),
                       buildGemmKernel),
             gemmWorkgroups(config), kWorkgroupSize, config.splits},
            KernelLaunch{
                getKernel(llvm::formatv("add_splits_{0}x{1}x{2}_{3}",
                                        config.splits, config.m, config.n,
                                        types),
                          buildAddSplitsKernel),
                addSplitsWorkgroups(config)}};
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
