//===- Sm90aPipeline.cpp - the mxfp4-to-sm90a pipeline --------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// NVIDIA Hopper: mxfp4 ops to their kernels (convert-mxfp4-to-nvgpu, which
// shares the quantize kernel with gfx950), the rest of the program to the
// generic kernels gfx950 also gets, then NVVM, PTX and cubins. Math
// functions link the CUDA toolkit's libdevice.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Pipelines/Pipelines.h"

#include "mxfp4/Conversion/Passes.h"
#include "mxfp4/Dialect/MXFP4/Transforms/Passes.h"
#include "mxfp4/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::mxfp4::buildSm90aPipeline(OpPassManager &pm,
                                     const Sm90aPipelineOptions &o) {
  // Fused attention is a bf16 tensor-core kernel: with f32 GEMMs the
  // composites run as their decompositions, with the CPU's numerics.
  bool bf16 = o.gemmPrecision == "bf16";
  if (!bf16)
    addCompositeInlining(pm);
  // Layers that read one activation get identical quantizations of it from
  // the recipe: launch each once.
  pm.addPass(createCSEPass());
  // bf16 GEMMs and attention round their operands: explicitly, so that
  // one rounding serves every GEMM reading a value and fuses into its
  // producer.
  if (bf16) {
    pm.addPass(createRoundAttentionIOPass());
    addBF16GemmRounding(pm);
  }
  addElementwiseFusion(pm);
  // The GEMM adds its accumulator to the finished sum (one f32 addition):
  // a residual add `x + C` becomes the GEMM's accumulator, bit for bit.
  if (o.mixed)
    pm.addNestedPass<func::FuncOp>(createFoldGemmAccumulatorsPass());
  // Mixed mode makes the kernel module (with its NVVM target) even for a
  // program without mxfp4 ops; the generic kernels are merged into it.
  ConvertMXFP4ToNVGPUPassOptions conversion;
  conversion.mixed = o.mixed;
  pm.addPass(createConvertMXFP4ToNVGPUPass(conversion));
  pm.addPass(createCanonicalizerPass());
  addPostConversionCSE(pm, o.mixed);
  if (o.mixed)
    buildGenericGpuKernelPipeline(
        pm,
        [&](OpPassManager &module) {
          if (bf16)
            module.addPass(createConvertAttentionToNVGPUPass());
        },
        [&](OpPassManager &functions) {
          if (bf16)
            functions.addPass(createConvertLinalgMatmulToNVGPUPass());
        },
        /*warpSize=*/32);
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  nvvm.indexBitwidth = 32;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  // NVVM ops without an LLVM intrinsic (wgmma.mma_async) become inline PTX.
  kernels.addPass(createConvertNVVMToLLVMPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  if (o.format == "mlir")
    return;
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = o.format;
  binary.toolkitPath = o.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}
