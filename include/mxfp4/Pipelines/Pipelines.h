//===- Pipelines.h - named mxfp4 pass pipelines -----------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_PIPELINES_PIPELINES_H
#define MXFP4_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir::mxfp4 {

/// Options of the `mxfp4-to-cpu` pipeline.
struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  Option<bool> x86Avx512BF16{
      *this, "x86-avx512-bf16",
      llvm::cl::desc("Use the AVX-512 BF16 scaled_matmul micro-kernel (only "
                     "for hosts with AVX512_BF16)"),
      llvm::cl::init(false)};
  Option<bool> parallel{
      *this, "parallel",
      llvm::cl::desc("Spread independent loops over the cores with OpenMP "
                     "(the JIT must load libomp)"),
      llvm::cl::init(false)};
};

/// Returns true if the host CPU has AVX512_BF16 (vdpbf16ps).
struct Gfx950PipelineOptions
    : public PassPipelineOptions<Gfx950PipelineOptions> {
  Option<std::string> chipset{*this, "chipset",
                              llvm::cl::desc("Target chip (gfx950)"),
                              llvm::cl::init("gfx950")};
  Option<int64_t> tile{*this, "tile",
                       llvm::cl::desc("GEMM workgroup tile (64, 128, 256; "
                                      "0 picks per shape)"),
                       llvm::cl::init(0)};
  Option<bool> mixed{
      *this, "mixed",
      llvm::cl::desc("The functions have ops besides mxfp4 ones: bufferize "
                     "them and give each a generic GPU kernel"),
      llvm::cl::init(false)};
  Option<std::string> testMutation{
      *this, "test-mutation",
      llvm::cl::desc("Tests only: plant a bug in the GEMM kernels"),
      llvm::cl::init("")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Kernel output: bin (HSACO code objects), isa "
                     "(assembly), llvm (bitcode) or mlir (ROCDL dialect)"),
      llvm::cl::init("bin")};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("Directory with llvm/bin/ld.lld for format=bin (see "
                     "docs/gfx950.md; the tools make one)"),
      llvm::cl::init("")};
  Option<std::string> gemmPrecision{
      *this, "gemm-precision",
      llvm::cl::desc("Mixed mode, high-precision GEMMs (linalg "
                     "contractions): f32 (the CPU path's numerics, generic "
                     "kernels) or bf16 (operands rounded to bf16, bf16 "
                     "MFMAs with f32 accumulation, as PyTorch's autocast)"),
      llvm::cl::init("f32")};
  Option<bool> warpReductions{
      *this, "warp-reductions",
      llvm::cl::desc("Mixed mode: generic row reductions and row groups (a "
                     "normalization's backward) take a wave of 64 "
                     "work-items a row combined by gpu.shuffle, as sm_90a's "
                     "take a warp, instead of one work-item a row"),
      llvm::cl::init(true)};
};

bool hostHasAvx512BF16();

/// Lowers a module of mxfp4 and upstream tensor/linalg/arith/math ops to the
/// LLVM dialect for the host CPU (`mxfp4-to-cpu`).
///
/// Calling convention of every public function `@f` afterwards: its C
/// interface `_mlir_ciface_f` takes, in order, one pointer to a strided
/// memref descriptor (identity layout) per tensor argument and scalars by
/// value, then one descriptor pointer per tensor result, which the caller
/// allocates and the function fills (`buffer-results-to-out-params`).
/// Tensors of f4E2M1FN and f8E8M0FNU are i8 buffers, one code or scale byte
/// per element; bf16 tensors are buffers of 16-bit patterns.
void buildCpuPipeline(OpPassManager &pm,
                      const CpuPipelineOptions &options = {});

/// Registers the named pipelines with the global pass registry.
/// mxfp4 ops to the host function and `gpu.module` of gfx950 kernels in
/// upstream dialects (amdgpu, vector, memref, scf): the IR the emulator runs.
void buildGfx950KernelPipeline(OpPassManager &pm,
                               const Gfx950PipelineOptions &options = {});

/// Inlines every call, composites (mxfp4/Dialect/MXFP4/Transforms/
/// Composites.h) included: their bodies are their reference decompositions.
void addCompositeInlining(OpPassManager &pm);

/// bf16 GEMM precision, on tensors: rounds the operands of high-precision
/// GEMMs to bf16 explicitly (mxfp4-round-matmul-operands; one rounding for
/// every GEMM reading a value, fused into its producer later) and gives the
/// MXFP4 GEMMs whose results only elementwise ops read bf16 results
/// (mxfp4-round-gemm-results). Target-neutral: sm_90a and gfx950.
void addBF16GemmRounding(OpPassManager &pm);

/// CSE after a target's mxfp4 conversion: of everything, or in mixed mode
/// of the kernels only (the host code is CSE'd after bufferization, which
/// must see each launch's read of a tensor where the launch is).
void addPostConversionCSE(OpPassManager &pm, bool mixed);

/// Bufferizes a tensor program and gives every linalg op a generic GPU
/// kernel (convert-linalg-to-gpu-launch), all kernels in one gpu.module
/// @mxfp4_kernels: target-independent. After bufferization, `fused` adds a
/// target's module passes that replace composites by fused kernels; the
/// composites left are inlined; `tuned` adds a target's function passes
/// (tuned GEMMs) before the generic kernels. A nonzero `warpSize` gives
/// row reductions, and row groups such as a normalization's backward, a
/// warp of that many work-items a row and a shuffle tree
/// (convert-linalg-to-gpu-launch{warp-reductions}): 32 on NVIDIA, 64 (a
/// wave) on gfx950.
void buildGenericGpuKernelPipeline(
    OpPassManager &pm, llvm::function_ref<void(OpPassManager &)> fused = {},
    llvm::function_ref<void(OpPassManager &)> tuned = {},
    int64_t warpSize = 0);

/// Norms, activations, residual adds and the optimizer's updates, on
/// tensors before a target's mxfp4 conversion: one kernel per chain of
/// elementwise ops instead of one per op, bit-identical
/// (mxfp4-fuse-elementwise). Target-neutral: sm_90a and gfx950.
void addElementwiseFusion(OpPassManager &pm);

struct Sm90aPipelineOptions
    : public PassPipelineOptions<Sm90aPipelineOptions> {
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Kernel output: bin (cubin), isa (PTX) or llvm"),
      llvm::cl::init("bin")};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit directory (ptxas, libdevice)"),
      llvm::cl::init("/usr/local/cuda")};
  Option<bool> mixed{
      *this, "mixed",
      llvm::cl::desc("The program has ops besides mxfp4 ones: bufferize it "
                     "and give those generic kernels (else functions of "
                     "mxfp4 ops become flat host functions)"),
      llvm::cl::init(true)};
  Option<std::string> gemmPrecision{
      *this, "gemm-precision",
      llvm::cl::desc("High-precision GEMMs (linalg.matmul/batch_matmul): bf16 "
                     "(operands rounded to bf16 on tensor cores, f32 "
                     "accumulation, as PyTorch's autocast) or f32 (the CPU "
                     "path's numerics, generic kernels)"),
      llvm::cl::init("bf16")};
};

/// A tensor program to kernels for NVIDIA Hopper (sm_90a): mxfp4 kernels
/// (convert-mxfp4-to-nvgpu) and generic ones, NVVM, PTX, and cubins with the
/// CUDA toolkit's ptxas.
void buildSm90aPipeline(OpPassManager &pm,
                        const Sm90aPipelineOptions &options = {});

/// The kernels of a module after buildGfx950KernelPipeline to ROCDL and code
/// objects (`format`).
void buildGfx950LoweringPipeline(OpPassManager &pm,
                                 const Gfx950PipelineOptions &options = {});

/// The kernel pipeline, then ROCDL and code objects (`format`).
void buildGfx950Pipeline(OpPassManager &pm,
                         const Gfx950PipelineOptions &options = {});

void registerPipelines();

} // namespace mlir::mxfp4

#endif // MXFP4_PIPELINES_PIPELINES_H
