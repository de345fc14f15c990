//===- Gfx950Pipeline.cpp - the mxfp4-to-gfx950 pipelines -----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mxfp4 ops -> gfx950 kernels (convert-mxfp4-to-amdgpu) -> ROCDL -> code
// objects, with the pass order verified in ../shared/research/amdgpu.md
// section 1.8: arith-to-amdgpu before gpu-to-rocdl (which carries arith ->
// LLVM patterns), vector-to-llvm for the 1-D strided slices.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Pipelines/Pipelines.h"

#include "mxfp4/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mxfp4/Transforms/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::mxfp4::buildGfx950KernelPipeline(OpPassManager &pm,
                                            const Gfx950PipelineOptions &o) {
  // Fused attention is a bf16 MFMA kernel: with f32 GEMMs the composites
  // run as their decompositions, with the CPU's numerics.
  bool bf16 = o.mixed && o.gemmPrecision == "bf16";
  if (!bf16)
    addCompositeInlining(pm);
  // Layers that read one activation get identical quantizations of it from
  // the recipe: launch each once.
  pm.addPass(createCSEPass());
  // bf16 GEMMs and attention round their operands explicitly, as on
  // sm_90a.
  if (bf16) {
    pm.addPass(createRoundAttentionIOPass());
    addBF16GemmRounding(pm);
  }
  addElementwiseFusion(pm);
  ConvertMXFP4ToAMDGPUPassOptions conversion;
  conversion.chipset = o.chipset;
  conversion.tile = o.tile;
  conversion.testMutation = o.testMutation;
  conversion.mixed = o.mixed;
  pm.addPass(createConvertMXFP4ToAMDGPUPass(conversion));
  pm.addPass(createCanonicalizerPass());
  addPostConversionCSE(pm, o.mixed);
  if (o.mixed)
    buildGenericGpuKernelPipeline(
        pm,
        [&](OpPassManager &module) {
          if (bf16)
            module.addPass(createConvertAttentionToAMDGPUPass());
        },
        [&](OpPassManager &functions) {
          if (bf16)
            functions.addPass(createConvertLinalgMatmulToAMDGPUPass());
        },
        /*warpSize=*/o.warpReductions ? 64 : 0);
}

void mlir::mxfp4::addBF16GemmRounding(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createRoundMatmulOperandsPass());
  pm.addPass(createCSEPass());
  // As autocast's, the GEMMs write bf16 results; only those that
  // elementwise ops read, which then move half the bytes.
  pm.addNestedPass<func::FuncOp>(createRoundGemmResultsPass());
}

void mlir::mxfp4::addElementwiseFusion(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createFuseElementwisePass());
}

void mlir::mxfp4::addPostConversionCSE(OpPassManager &pm, bool mixed) {
  if (!mixed) {
    pm.addPass(createCSEPass());
    return;
  }
  // In mixed mode only the kernels: the host code's launches read tensors
  // through one bufferization.to_buffer each, where they read them, and CSE
  // would merge a later one into an earlier one. Bufferization then sees the
  // tensor's last read too early and may let an op between them write its
  // buffer in place (a sum overwrote activations that a later quantize
  // launch still read). The host code is CSE'd once bufferized.
  pm.nest<gpu::GPUModuleOp>().addPass(createCSEPass());
}

void mlir::mxfp4::addCompositeInlining(OpPassManager &pm) {
  // Only inlining: the callers' own pipelines canonicalize afterwards.
  pm.addPass(createInlinerPass({}, [](OpPassManager &) {}));
}

void mlir::mxfp4::buildGenericGpuKernelPipeline(
    OpPassManager &pm, llvm::function_ref<void(OpPassManager &)> fused,
    llvm::function_ref<void(OpPassManager &)> tuned, int64_t warpSize) {
  // The rest of the program: buffers, one generic kernel per linalg op, and
  // one module of distinct kernels.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());
  if (fused)
    fused(pm);
  // Composites left as calls run as their decompositions (before the tuned
  // passes, which may turn their ops into launches).
  addCompositeInlining(pm);
  if (tuned)
    tuned(pm.nest<func::FuncOp>());
  ConvertLinalgToGPULaunchPassOptions generic;
  generic.warpReductions = warpSize != 0;
  if (warpSize)
    generic.warpSize = warpSize;
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToGPULaunchPass(generic));
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createMergeKernelModulesPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::mxfp4::buildGfx950Pipeline(OpPassManager &pm,
                                      const Gfx950PipelineOptions &o) {
  buildGfx950KernelPipeline(pm, o);
  buildGfx950LoweringPipeline(pm, o);
}

void mlir::mxfp4::buildGfx950LoweringPipeline(OpPassManager &pm,
                                              const Gfx950PipelineOptions &o) {
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createConvertMathToROCDLIntrinsicsPass());
  kernels.addPass(createArithToAMDGPUConversionPass({o.chipset}));
  arith::ArithExpandOpsPassOptions expand;
  expand.includeF8E8M0 = expand.includeF4E2M1 = true;
  kernels.addPass(arith::createArithExpandOpsPass(expand));
  kernels.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToROCDLOpsOptions rocdl;
  rocdl.chipset = o.chipset;
  rocdl.useBarePtrCallConv = true;
  // Offsets fit 32 bits (buffer offsets are 32-bit anyway): half the
  // registers and instructions of 64-bit index math.
  rocdl.indexBitwidth = 32;
  kernels.addPass(createConvertGpuOpsToROCDLOps(rocdl));
  kernels.addPass(createConvertAMDGPUToROCDLPass({o.chipset}));
  kernels.addPass(createConvertVectorToLLVMPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  if (o.format == "mlir")
    return;
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = o.format;
  binary.toolkitPath = o.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}
