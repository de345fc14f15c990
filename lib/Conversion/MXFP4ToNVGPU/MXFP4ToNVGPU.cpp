//===- MXFP4ToNVGPU.cpp - the convert-mxfp4-to-nvgpu pass -----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// NVIDIA Hopper as a target of the shared mxfp4-to-GPU conversion
// (../MXFP4ToGPUCommon): guarded memory access, the CPU path's integer
// conversions (so quantize and dequantize give the CPU's bits), canonical
// scales, and the bf16 tensor-core GEMM (K split for weight gradients).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "mxfp4/Conversion/NVGPUCommon/TensorCore.h"

#include "mxfp4/Conversion/MXFP4ToGPUCommon/FunctionConverter.h"

#include "mxfp4/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_CONVERTMXFP4TONVGPUPASS
#include "mxfp4/Conversion/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::kernels;

static std::string typeName(Type t) { return t.isF32() ? "f32" : "bf16"; }

static KernelTarget getSm90Target() {
  KernelTarget target;
  target.name = "sm_90a";
  target.bounds = BoundsMode::guarded;
  target.stageQuantize = true;
  target.gemm = [](OpBuilder &b, Location loc, gpu::GPUModuleOp module,
                   const GemmShape &shape) -> GemmLaunch {
    sm90::GemmConfig config = sm90::chooseGemmVariant(
        {shape.m, shape.n, shape.k, shape.resultType, shape.accType});
    auto getKernel = [&](const std::string &name, auto build) {
      auto kernel = module.lookupSymbol<gpu::GPUFuncOp>(name);
      if (!kernel) {
        OpBuilder kb(b.getContext());
        kernel = build(kb, loc, module, name, config);
      }
      return kernel;
    };
    std::string types =
        typeName(config.resultType) +
        (config.accType ? "_acc" + typeName(config.accType) : "");
    int64_t splits = sm90::gemmSplit(config).splits;
    std::string shapeName =
        llvm::formatv("{0}x{1}x{2}", config.m, config.n, config.k);
    if (config.expandedB) {
      GemmLaunch launch = {
          {getKernel("gemm_" + shapeName + "_" + types + "_expanded_b",
                     sm90::buildGemmKernel),
           sm90::gemmBlocks(config), sm90::gemmThreads(config)}};
      launch.expandB = {
          getKernel("expand_b_" + shapeName, sm90::buildExpandBKernel),
          sm90::expandBBlocks(config)};
      launch.expandedElements = sm90::expandedBElements(config);
      return launch;
    }
    if (splits == 1)
      return {
          {getKernel("gemm_" + shapeName + "_" + types, sm90::buildGemmKernel),
           sm90::gemmBlocks(config), sm90::gemmThreads(config)}};
    // The split GEMM writes f32 partial products whatever C's types; the
    // adding kernel reads them in C's layout either way.
    return {
        {getKernel(llvm::formatv("gemm_{0}_split{1}{2}", shapeName, splits,
                                 config.transposedC ? "_transposed" : ""),
                   sm90::buildGemmKernel),
         sm90::gemmBlocks(config), sm90::gemmThreads(config), splits},
        KernelLaunch{getKernel(llvm::formatv("add_splits_{0}x{1}x{2}_{3}",
                                             splits, shape.m, shape.n, types),
                               sm90::buildAddSplitsKernel),
                     sm90::addSplitsBlocks(config)},
        config.transposedC};
  };
  return target;
}

namespace {

struct ConvertMXFP4ToNVGPUPass
    : mxfp4::impl::ConvertMXFP4ToNVGPUPassBase<ConvertMXFP4ToNVGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (chip != "sm_90a" && chip != "sm_90") {
      module.emitError() << "convert-mxfp4-to-nvgpu: chip '" << chip
                         << "' is not supported; the kernels use sm_90 "
                            "(Hopper: H100/H200) bf16 tensor cores";
      return signalPassFailure();
    }
    auto target = NVVM::NVVMTargetAttr::get(
        &getContext(), /*optLevel=*/3, "nvptx64-nvidia-cuda", chip, "+ptx80");
    if (failed(convertMXFP4Functions(module, getSm90Target(), target, mixed)))
      signalPassFailure();
  }
};

} // namespace
