//===- Sm90aPipeline.cpp - the mxfp4-to-sm90a pipeline --------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// NVIDIA Hopper: the generic kernels of a program (the same ones gfx950
// gets for its non-mxfp4 ops) through NVVM to PTX and cubins. Math functions
// link the CUDA toolkit's libdevice. The MXFP4 kernels for NVIDIA (FP4 in
// memory, bf16 tensor-core GEMM) are not written yet.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::mxfp4::buildSm90aPipeline(OpPassManager &pm,
                                     const Sm90aPipelineOptions &o) {
  buildGenericGpuKernelPipeline(pm);
  GpuNVVMAttachTargetOptions target;
  target.triple = "nvptx64-nvidia-cuda";
  target.chip = "sm_90a";
  target.features = "+ptx80";
  target.optLevel = 3;
  target.moduleMatcher = "mxfp4_kernels";
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  nvvm.indexBitwidth = 32;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  kernels.addPass(createReconcileUnrealizedCastsPass());
  if (o.format == "mlir")
    return;
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = o.format;
  binary.toolkitPath = o.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}
