//===- CpuPipeline.cpp - the mxfp4-to-cpu pipeline ------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Pipelines/Pipelines.h"

#include "mxfp4/Conversion/Passes.h"
#include "mxfp4/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/Transforms/RequestCWrappers.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

bool mlir::mxfp4::hostHasAvx512BF16() {
  return llvm::sys::getHostCPUFeatures().lookup("avx512bf16");
}

void mlir::mxfp4::buildCpuPipeline(OpPassManager &pm,
                                   const CpuPipelineOptions &options) {
  // Composites (attention) run as their decompositions, fused with the rest
  // of the step by the passes below.
  addCompositeInlining(pm);
  // Layers that read one activation (q/k/v_proj, gate/up_proj) get identical
  // rotations and quantizations of it from the recipe: compute each once.
  pm.addPass(createCSEPass());
  // Norms, activations and softmax: one loop nest per chain, not per op.
  pm.addNestedPass<func::FuncOp>(createFuseElementwisePass());
  // Layers repeat the same kernels: lower and compile each distinct one once.
  pm.addPass(createOutlineKernelsPass());
  ConvertMXFP4ToLinalgPassOptions lowering;
  lowering.x86Avx512BF16 = options.x86Avx512BF16;
  pm.addPass(createConvertMXFP4ToLinalgPass(lowering));
  // Elementwise arith/math on whole tensors becomes linalg so it bufferizes.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addNestedPass<func::FuncOp>(createVectorizeMatmulsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // Tensors to buffers; results become caller-allocated out-parameters so a
  // runtime owns every buffer that crosses the boundary, and arguments stay
  // the caller's inputs (a result whose destination is an argument, as the
  // AdamW update's, gets a copy to update instead).
  pm.addNestedPass<func::FuncOp>(createReadOnlyArgumentsPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Loops that update a buffer in place forward it unchanged; folding those
  // iter_args lets the result allocations be hoisted to the caller instead
  // of being copied out.
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createDistinctResultBuffersPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createCanonicalizerPass());

  // Loops, then LLVM. The JIT's -O3 vectorizes the loop bodies for the host.
  if (options.parallel)
    pm.addNestedPass<func::FuncOp>(createParallelizeLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // Unrolled, so n-D transfers become 1-D ones without a stack slot per
  // loop iteration (an alloca in a hot loop exhausts the stack).
  VectorTransferToSCFOptions vectorToSCF;
  vectorToSCF.enableFullUnroll(true);
  pm.addPass(createConvertVectorToSCFPass(vectorToSCF));
  if (options.parallel) {
    pm.addPass(createConvertSCFToOpenMPPass());
    // Inlines the memref.alloca_scope the conversion wraps loop bodies in
    // (nothing is allocated in them), which control-flow lowering needs.
    pm.addPass(createCanonicalizerPass());
  }
  pm.addPass(createLowerAffinePass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.x86Vector = options.x86Avx512BF16;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  // Vector transfer lowering may leave affine index arithmetic behind.
  pm.addPass(createLowerAffinePass());
  // Math with an LLVM intrinsic stays vectorizable; the rest (erf, ...)
  // becomes calls into the C library.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  if (options.parallel)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::mxfp4::registerPipelines() {
  PassPipelineRegistration<CpuPipelineOptions>(
      "mxfp4-to-cpu",
      "Lower mxfp4 and upstream tensor code to the LLVM dialect for the host "
      "CPU (bit-exact reference semantics, C-interface entry points with "
      "caller-allocated results)",
      buildCpuPipeline);
  PassPipelineRegistration<Gfx950PipelineOptions>(
      "mxfp4-to-gfx950-kernels",
      "Lower functions of mxfp4 ops to gfx950 kernels (amdgpu, vector, "
      "memref, scf) and a host function of launches",
      buildGfx950KernelPipeline);
  PassPipelineRegistration<Gfx950PipelineOptions>(
      "mxfp4-to-gfx950",
      "Lower functions of mxfp4 ops to gfx950 code objects (HSACO, code "
      "object v5) and a host function of launches",
      buildGfx950Pipeline);
  PassPipelineRegistration<Sm90aPipelineOptions>(
      "mxfp4-to-sm90a",
      "Lower a tensor program to NVIDIA Hopper (sm_90a) kernels: mxfp4 "
      "kernels, generic kernels for the other ops, NVVM, PTX and cubins "
      "(CUDA toolkit)",
      buildSm90aPipeline);
}
