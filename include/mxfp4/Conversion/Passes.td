//===- Passes.td - mxfp4 conversion passes ----------------*- tablegen -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_CONVERSION_PASSES_TD
#define MXFP4_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// MXFP4ToLinalg
//===----------------------------------------------------------------------===//

def ConvertMXFP4ToLinalgPass : Pass<"convert-mxfp4-to-linalg", "ModuleOp"> {
  let summary = "Lower mxfp4 ops to bit-exact linalg, vector and scf code on tensors";
  let description = [{
    Expands every mxfp4 op into upstream ops on tensors that implement
    `docs/Semantics.md` bit for bit, so that the rest of a target pipeline
    (bufferization, loops or vectorization, LLVM) needs no knowledge of MXFP4:

    - `quantize`: a `linalg.generic` max-reduction of the magnitude bits per
      block, one computing each block's E8M0 byte with integer arithmetic
      (all four scale rules, NaN/Inf blocks), and one rounding every element
      (compare chains for round-to-nearest-even; Philox4x32-10 for stochastic
      rounding);
    - `dequantize`: one elementwise `linalg.generic`;
    - `hadamard`: a loop nest over tiles; each tile is one vector, rotated
      with the fixed butterfly order of the semantics in registers;
    - `scaled_matmul`: decoded operands, exact 32-element block dot products,
      and f32 accumulation of the scaled block sums in increasing K order;
      with `x86-avx512-bf16`, a register-tiled micro-kernel on
      `x86vector.avx512.dot` (vdpbf16ps) over bf16 panels that keeps the same
      block order (only for CPUs that have AVX512_BF16).

    Tensors of `f4E2M1FN` and `f8E8M0FNU` become tensors of `i8` (one code or
    scale byte per element) everywhere, function signatures included: LLVM
    lays out scalar `i4` in bytes but vectors of `i4` packed, so keeping 4-bit
    types out of the lowered code avoids that mismatch. This is the CPU data
    ABI at function boundaries (`docs/Semantics.md` section 2.5). bf16 results
    are rounded with integer arithmetic, independent of how the host converts.

    Example:

    ```mlir
    // Before
    func.func @q(%x: tensor<4x64xf32>) -> tensor<4x2xf8E8M0FNU> {
      %v, %s = mxfp4.quantize %x axis = 1
          : tensor<4x64xf32> -> tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
      return %s : tensor<4x2xf8E8M0FNU>
    }
    // After (abridged)
    func.func @q(%x: tensor<4x64xf32>) -> tensor<4x2xi8> {
      %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [4, 2, 32]
          : tensor<4x64xf32> into tensor<4x2x32xf32>
      %amax = linalg.generic {... iterator_types = ["parallel", "parallel",
                                                     "reduction"]} ...
      %s = linalg.generic {...} ins(%amax : tensor<4x2xi32>) -> tensor<4x2xi8>
      return %s : tensor<4x2xi8>
    }
    ```

    Functions that use 4-bit or E8M0 tensors outside the mxfp4 ops, calls and
    returns are reported with a located error.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::x86vector::X86VectorDialect"
  ];
  let options = [
    Option<"x86Avx512BF16", "x86-avx512-bf16", "bool", /*default=*/"false",
           "Lower scaled_matmul with static shapes to an AVX-512 BF16 "
           "(vdpbf16ps) micro-kernel instead of the portable reference loops">
  ];
}

//===----------------------------------------------------------------------===//
// MXFP4ToAMDGPU
//===----------------------------------------------------------------------===//

def ConvertMXFP4ToAMDGPUPass : Pass<"convert-mxfp4-to-amdgpu", "ModuleOp"> {
  let summary = "Lower functions of mxfp4 ops to gfx950 kernels and launches";
  let description = [{
    Rewrites every function whose body is made of mxfp4 ops into a host
    function of flat device buffers and `gpu.launch_func`s, and generates the
    kernels into one `gpu.module @mxfp4_kernels` targeting
    `#rocdl.target<chip = "gfx950", abi = "500">` (MI350X/MI355X):

    - `quantize`, with the `hadamard` (size 16 or 32) and the 2-D
      `linalg.transpose` that feed it, becomes a job of a fused Hadamard +
      quantize kernel; the row-wise and the transposed quantization of one
      tensor share one kernel and one read of it. Blocks are converted with
      `v_cvt_scalef32_pk_fp4_f32` (stochastic rounding with the CPU path's
      Philox words, so both give the same bits); scales are written canonically where
      something other than a GEMM reads them and pre-shuffled for the GEMM.
      With `mixed`, an elementwise `linalg.generic` whose result only those
      quantizations read is computed inside their kernel from its inputs,
      and never written (as in `convert-mxfp4-to-nvgpu`);
    - `scaled_matmul` becomes a GEMM on `amdgpu.scaled_mfma` 16x16x128:
      workgroup tiles of 256, 128 or 64 (`tile`, else the largest that fills
      256 CUs), 4 waves, direct-to-LDS double-buffered K steps of 256,
      pre-shuffled scales one dword per 4 MFMAs, masked ragged edges,
      XCD-aware workgroup order;
    - `dequantize` becomes a kernel on `v_cvt_scalef32_pk_f32_fp4`.

    Tensors become flat memrefs (FP4 two codes a byte, low nibble first;
    E8M0 one byte each) and keep their tensor type in an `mxfp4.tensor`
    attribute. Other ops, dynamic shapes, Hadamard sizes above 32 and other
    chips are reported with located errors. `docs/gfx950.md` describes the
    kernels.

    Example:

    ```mlir
    // Before
    func.func @q(%x: tensor<64x64xf32>) -> (tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU>) {
      %h = mxfp4.hadamard %x axis = 1 size = 16 : tensor<64x64xf32>
      %v, %s = mxfp4.quantize %h axis = 1
          : tensor<64x64xf32> -> tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU>
      return %v, %s : tensor<64x64xf4E2M1FN>, tensor<64x2xf8E8M0FNU>
    }
    // After (abridged)
    module attributes {gpu.container_module} {
      func.func @q(%x: memref<4096xf32> {mxfp4.tensor = tensor<64x64xf32>})
          -> (memref<2048xi8> {mxfp4.tensor = tensor<64x64xf4E2M1FN>}, ...) {
        %v = memref.alloc() : memref<2048xi8>
        ...
        gpu.launch_func @mxfp4_kernels::@quantize_64x64_f32_r_h16d_evenvs
            blocks in (%c8, %c1, %c1) threads in (%c256, %c1, %c1) args(...)
        return %v, %s : memref<2048xi8>, memref<128xi8>
      }
      gpu.module @mxfp4_kernels [#rocdl.target<O = 3, chip = "gfx950", abi = "500">] {
        gpu.func @quantize_64x64_f32_r_h16d_evenvs(...) kernel ... {
          ... amdgpu.packed_scaled_trunc ...
        }
      }
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::amdgpu::AMDGPUDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::ROCDL::ROCDLDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
  let options = [
    Option<"chipset", "chipset", "std::string", /*default=*/"\"gfx950\"",
           "Target chip (only gfx950 has MXFP4 scaled MFMAs)">,
    Option<"tile", "tile", "int64_t", /*default=*/"0",
           "GEMM workgroup tile (64, 128 or 256); 0 picks per shape">,
    Option<"mixed", "mixed", "bool", /*default=*/"false",
           "Keep the other ops of the function: mxfp4 results reach them "
           "through bufferization.to_tensor and their tensors reach the "
           "kernels through bufferization.to_buffer, for a bufferization "
           "and a generic GPU lowering afterwards">,
    Option<"testMutation", "test-mutation", "std::string", /*default=*/"",
           "Tests only: plant a bug in the GEMM (lds-swizzle, scale-byte, "
           "fragment-row) to show that emulation catches it">
  ];
}

//===----------------------------------------------------------------------===//
// MXFP4ToNVGPU
//===----------------------------------------------------------------------===//

def ConvertMXFP4ToNVGPUPass : Pass<"convert-mxfp4-to-nvgpu", "ModuleOp"> {
  let summary = "Lower functions of mxfp4 ops to NVIDIA Hopper kernels and "
                "launches";
  let description = [{
    The NVIDIA sibling of `convert-mxfp4-to-amdgpu`, sharing its host side
    and its fused quantize kernel: functions of mxfp4 ops become host
    functions of flat device buffers and `gpu.launch_func`s into one
    `gpu.module @mxfp4_kernels` targeting
    `#nvvm.target<chip = "sm_90a", features = "+ptx80">` (H100/H200).

    - `quantize`, with the `hadamard` (16 or 32) and 2-D `linalg.transpose`
      feeding it, becomes a job of the fused Hadamard + quantize kernel
      (both orientations in one read). Hopper has no FP4 conversion
      instructions: blocks are converted with the CPU path's integer
      formulation (docs/Semantics.md), so results are the CPU's bits, for
      every rotation, scale rule and rounding mode;
    - with `mixed`, an all-parallel `linalg.generic` whose result (maybe
      reshaped) only those quantizations read (SwiGLU, its gradients, a
      norm's output, the rotary embedding's gradient) is computed inside
      their kernel, from its inputs (read at loops or constants) with its
      own scalar ops and `linalg.index`: its result is never written.
      Kernels of identical producers are shared
      (`quantize_<rows>x<cols>_<type>_fused<hash>_...`);
    - `scaled_matmul` becomes a GEMM on bf16 tensor cores
      (`wgmma.mma_async`, f32 accumulators): each K step of 32 expands the
      tiles' FP4 to bf16 (exact: FP4 times a power of two), four
      warpgroups multiply a 256 x 128 tile; where many row tiles read the
      same B, B is expanded once by a kernel of its own and bulk-copied
      into shared memory (then two warpgroups a block, two blocks an SM);
      long K is split across blocks
      (lib/Conversion/MXFP4ToNVGPU/GemmKernel.cpp). The GEMM adds `acc`
      to its finished sum (one f32 addition), so the residual adds that
      `mxfp4-fold-gemm-accumulators` moves into GEMMs keep their bits;
    - `dequantize` becomes a kernel with the CPU path's integer expansion.

    Scales stay canonical ([rows][K / 32] bytes). Other chips, other ops and
    dynamic shapes get located errors.

    Example:

    ```mlir
    // Before
    func.func @mm(%a: tensor<256x128xf32>, %b: tensor<64x128xf32>) -> tensor<256x64xf32> {
      %av, %as = mxfp4.quantize %a axis = 1
          : tensor<256x128xf32> -> tensor<256x128xf4E2M1FN>, tensor<256x4xf8E8M0FNU>
      %bv, %bs = mxfp4.quantize %b axis = 1
          : tensor<64x128xf32> -> tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>
      %c = mxfp4.scaled_matmul %av scale %as, %bv scale %bs : ... -> tensor<256x64xf32>
      return %c : tensor<256x64xf32>
    }
    // After (abridged)
    func.func @mm(%a: memref<32768xf32> {mxfp4.tensor = tensor<256x128xf32>}, ...) -> ... {
      gpu.launch_func @mxfp4_kernels::@quantize_256x128_f32_r_evenvs ...
      gpu.launch_func @mxfp4_kernels::@quantize_64x128_f32_r_evenvs ...
      gpu.launch_func @mxfp4_kernels::@gemm_256x64x128_f32
          blocks in (%c1, %c1, %c1) threads in (%c512, %c1, %c1) args(...)
      ...
    }
    gpu.module @mxfp4_kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">] {
      gpu.func @gemm_256x64x128_f32(...) workgroup(...) kernel {
        ... nvvm.wgmma.fence.aligned ... wgmma.mma_async ...
      }
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "Target chip (sm_90a or sm_90)">,
    Option<"mixed", "mixed", "bool", /*default=*/"false",
           "Keep the other ops of the function, as convert-mxfp4-to-amdgpu's "
           "option of the same name does">
  ];
}

//===----------------------------------------------------------------------===//
// LinalgToNVGPU
//===----------------------------------------------------------------------===//

def ConvertLinalgMatmulToNVGPUPass
    : Pass<"convert-linalg-matmul-to-nvgpu", "::mlir::func::FuncOp"> {
  let summary = "Bufferized linalg.matmul/batch_matmul to bf16 tensor-core "
                "launches for NVIDIA Hopper";
  let description = [{
    Every `linalg.matmul` and `linalg.batch_matmul` on f32 (or bf16 input)
    buffers, in any transposition its indexing maps express, becomes a
    `gpu.launch` of a block GEMM on Hopper's warpgroup MMAs with f32
    accumulation: f32 operands are first rounded to bf16 (ties to even)
    into copies that GEMMs reading an unchanged buffer share. These are the
    numerics of PyTorch's bf16 autocast, not the f32 of the CPU path.

    Where TMA tensor maps can describe both operands (16-byte aligned
    strides and offset), each operand gets one on the host
    (`nvgpu.tma.create.descriptor`, 128-byte swizzle, cast to the
    `!llvm.ptr` the kernel takes) and the kernel is warp-specialized: 384
    threads a block and a 128 x 256 tile (128 x 128 for N <= 128); one
    producer thread loads each K step of 64 of both operands by TMA into a
    four-stage ring in dynamic shared memory under mbarriers, and two
    consumer warpgroups multiply with `wgmma.mma_async` (m64nNk16) from the
    swizzled tiles, M- or N-major operands read transposed; `setmaxnreg`
    moves registers from producer to consumers. Otherwise (`tma=false`, or
    an operand tensor maps cannot describe) the register-staged kernel:
    128 x 128 tiles, two warpgroups that move each K step of 32 through
    registers into a two-stage K-major pipeline (`stmatrix.trans` for
    operands whose rows are contiguous). Both split K into a workspace when
    their tiles cannot fill the device.

    A GEMM whose output was just zero-filled overwrites it (the fill or the
    copy of shared zeros is dropped); otherwise it adds its whole sum to the
    output's values. In the TMA kernel an output a tensor map can describe,
    where K is not split, gets a map of its own (f32, boxes of 64 rows by 32
    columns) and is written by TMA stores (`cp.async.bulk.tensor` shared to
    global) from two swizzled 8 KiB boxes a consumer warpgroup, behind the
    ring (230,464 bytes of shared memory a block): a tile's stores drain
    while the next tile multiplies. An output added to (a residual sum)
    comes into those boxes by TMA loads first, under an mbarrier a box (32
    bytes more): the first two while the tile's first MMAs run, each later
    one once the store two boxes back has read its box.
    Contractions it does not cover (non-unit innermost strides, contiguous
    extents that are not multiples of 32, odd N, other element types) are
    left for `convert-linalg-to-gpu-launch`.

    Example:

    ```mlir
    // Before
    linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                   affine_map<(m, n, k) -> (n, k)>,
                                   affine_map<(m, n, k) -> (m, n)>]
        ins(%x, %w : memref<2048x256xf32>, memref<768x256xf32>)
        outs(%y : memref<2048x768xf32>)
    // After (abridged; %xh, %wh the bf16 copies)
    %xc = memref.cast %xh : memref<2048x256xbf16> to memref<*xbf16>
    %xm = nvgpu.tma.create.descriptor %xc box[%c128, %c64] : memref<*xbf16>
        -> <tensor = memref<128x64xbf16, #gpu.address_space<workgroup>>,
            swizzle = swizzle_128b, l2promo = l2promo_256b, oob = zero,
            interleave = none>
    %xp = builtin.unrealized_conversion_cast %xm : ... to !llvm.ptr
    ... the same for %wh (box[%c256, %c64]): %wp
    gpu.launch blocks(%bx, %by, %bz) in (%g = %c48, %b = %c1, %z = %c1)
               threads(%tx, %ty, %tz) in (%t = %c384, ...)
               dynamic_shared_memory_size %c197696_i32 {
      ... nvvm.mbarrier.init ... gpu.barrier
      scf.if %producer {
        nvvm.setmaxregister decrease 40
        scf.for %s = ... {   // one thread
          nvvm.mbarrier.try_wait.parity %empty, ...
          nvvm.mbarrier.arrive.expect_tx %full, %c49152_i32
          nvvm.cp.async.bulk.tensor.shared.cluster.global %a, %xp, %full, box[...]
          nvvm.cp.async.bulk.tensor.shared.cluster.global %b, %wp, %full, box[...]
        }
      } else {
        nvvm.setmaxregister increase 232
        %r = scf.for %s = ... iter_args(...) {
          nvvm.mbarrier.try_wait.parity %full, ...
          ... 4 x nvvm.wgmma.mma_async ... <m = 64, n = 256, k = 16> ...
          nvvm.wgmma.wait.group.sync.aligned 1
          nvvm.mbarrier.arrive %empty_of_the_previous_step
        }
        ... vector.store ... %y[...] : memref<2048x768xf32>, vector<2xf32>
      }
      gpu.terminator
    }
    ```
  }];
  let options = [
    Option<"tma", "tma", "bool", /*default=*/"true",
           "Use the warp-specialized TMA kernel where tensor maps can "
           "describe both operands (else the register-staged kernel)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

//===----------------------------------------------------------------------===//
// LinalgToAMDGPU
//===----------------------------------------------------------------------===//

def ConvertLinalgMatmulToAMDGPUPass
    : Pass<"convert-linalg-matmul-to-amdgpu", "::mlir::func::FuncOp"> {
  let summary = "Bufferized linalg contractions to bf16 MFMA GEMM launches "
                "for gfx950";
  let description = [{
    Every linalg contraction on f32 or bf16 buffers with one M, N and K
    dimension and at most one batch dimension (`linalg.matmul`,
    `linalg.batch_matmul`, their transposed forms, `linalg.generic`
    contractions), whose operands are identity-layout buffers or static
    subviews of them, becomes a `gpu.launch` of a 128 x 128 workgroup tile
    on `v_mfma_f32_16x16x32_bf16` (`amdgpu.mfma 16x16x32`, f32
    accumulation), 256 work-items (4 waves in 2 x 2, 64 x 64 each). K steps
    of 64 are copied global -> LDS directly (`amdgpu.gather_to_lds`),
    double-buffered (64 KiB), in the swizzled 128-byte rows the MXFP4 GEMM
    uses. Operands are read as bf16 with K contiguous: a bf16 operand with
    K innermost is read in place; any other (f32, transposed, K not a
    multiple of 8) is first packed into such a bf16 copy (ties to even, K
    padded with zeros) by one launch, shared by GEMMs reading an unchanged
    buffer the same way. Ragged tiles read 0 and drop stores through
    `amdgpu.fat_raw_buffer_cast` views. When the tiles cannot fill the 256
    CUs, K is split: each split writes a workspace slice and a second
    launch adds the slices to C in split order. A GEMM right after a zero
    fill of its output writes C instead of adding to it (the fill goes).
    These are PyTorch's bf16 autocast numerics, not the CPU path's f32;
    contractions not covered are left for `convert-linalg-to-gpu-launch`.

    Example:

    ```mlir
    // Before
    linalg.matmul ins(%x, %w : memref<300x256xbf16>, memref<256x200xbf16>)
                  outs(%y : memref<300x200xf32>)
    // After (abridged): W is packed K-major, then
    gpu.launch blocks(%bx, %by, %bz) in (%g = %c6, %b = %c1, %z = %c1)
               threads(%tx, %ty, %tz) in (%t = %c256, ...)
               workgroup(%lds : memref<32768xbf16, #gpu.address_space<workgroup>>) {
      amdgpu.gather_to_lds %a[...], %lds[...] : vector<8xbf16>, ...
      %r:16 = scf.for %s = %c0 to %c4 step %c1 iter_args(...) {
        amdgpu.memory_counter_wait load(0)
        gpu.barrier
        %f = vector.load %lds[...] : ..., vector<8xbf16>
        ...
        %d = amdgpu.mfma 16x16x32 %fb * %fa + %acc ...
      }
      vector.store %r#0, %c[...] : ..., vector<4xf32>
      gpu.terminator
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::amdgpu::AMDGPUDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

//===----------------------------------------------------------------------===//
// AttentionToNVGPU
//===----------------------------------------------------------------------===//

def ConvertAttentionToNVGPUPass
    : Pass<"convert-attention-to-nvgpu", "::mlir::ModuleOp"> {
  let summary = "Bufferized causal-attention composites to fused "
                "FlashAttention launches for NVIDIA Hopper";
  let description = [{
    Replaces each `func.call` of a `causal_attention` or
    `causal_attention_backward` composite (a private function marked
    `mxfp4.composite`, whose body is the reference decomposition; see
    `mxfp4/Dialect/MXFP4/Transforms/Composites.h`) by FlashAttention-2
    style launches on `mma.sync`: the forward keeps the scores of 64 query
    rows against 64 keys in registers with an online softmax and writes the
    output and the log-sum-exp; the backward recomputes the probabilities
    from the log-sum-exp in a query kernel (dq) and a key kernel (dk, dv),
    deterministically (no atomics). Operands are rounded to bf16 for the
    tensor cores, products accumulate in f32 and the softmax is f32: the
    numerics of PyTorch's bf16 autocast, not the f32 of the decomposition.
    With bf16 operands at head dim 64 or 128 the kernels run on warpgroup
    MMAs (`wgmma.mma_async`) instead, their tiles loaded by TMA (tensor maps
    the host makes) into two stages of dynamic shared memory.
    Operands are token-major ([batch, seq, heads, head dim], the
    projections' rows): the kernels read and write the heads in place.
    Calls it does not cover (head dim above 128 or not a multiple of 16,
    sequences not a multiple of 64, non-f32 or non-identity buffers) stay
    calls, for the inliner; composites left without calls are erased.

    The pass outlines its launches itself into `gpu.module @mxfp4_kernels`
    (made if missing), one kernel per role and shape
    (`attention_<fwd|bwd_delta|bwd_dq|bwd_dkdv|bwd_dk|bwd_dv>_b<batch>_s<seq>_kv<kv heads>x<groups>_d<head dim>`,
    shared by the layers): `gpu-kernel-outlining` would drop the
    `nvvm.minctasm` that tells ptxas how many blocks share an SM (the
    head-dim-128 forward: 2, for 254 registers instead of 182).

    Example:

    ```mlir
    // Before
    %o, %lse = call @causal_attention_2x256x4x64_2x256x2x64_2x256x2x64(
            %q, %k, %v)
        : (memref<2x256x4x64xf32>, memref<2x256x2x64xf32>,
           memref<2x256x2x64xf32>)
        -> (memref<2x256x4x64xf32>, memref<2x4x256xf32>)
    // After (abridged): a block per 64 stacked query rows of a (batch, KV
    // head) pair
    %o = memref.alloc() : memref<2x256x4x64xf32>
    %lse = memref.alloc() : memref<2x4x256xf32>
    gpu.launch_func @mxfp4_kernels::@attention_fwd_b2_s256_kv2x2_d64
        blocks in (%c8, %c4, %c1) threads in (%c128, %c1, %c1)
        args(%q : ..., %k : ..., %v : ..., %o : ..., %lse : ...)
    ...
    gpu.module @mxfp4_kernels {
      gpu.func @attention_fwd_b2_s256_kv2x2_d64(...)
          workgroup(%sq : memref<4608xbf16, #gpu.address_space<workgroup>>, ...)
          kernel attributes {known_block_size = array<i32: 128, 1, 1>, ...} {
        ... vector.load %arg0[...] : memref<2x256x4x64xf32>, vector<8xf32>
        %r:12 = scf.for %j = %c0 to %n step %c1 iter_args(...) {
          ... nvvm.ldmatrix ... nvvm.mma.sync ... math.exp ... gpu.shuffle xor
        }
        ... vector.store ... %arg3[...] ... memref.store ... %arg4[...]
        gpu.return
      }
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

//===----------------------------------------------------------------------===//
// AttentionToAMDGPU
//===----------------------------------------------------------------------===//

def ConvertAttentionToAMDGPUPass
    : Pass<"convert-attention-to-amdgpu", "::mlir::ModuleOp"> {
  let summary = "Bufferized causal-attention composites to fused "
                "FlashAttention launches for gfx950 (MI350X/MI355X)";
  let description = [{
    Replaces each `func.call` of a `causal_attention` composite (a private
    function marked `mxfp4.composite`, whose body is the reference
    decomposition; see `mxfp4/Dialect/MXFP4/Transforms/Composites.h`) by a
    FlashAttention-2 forward launch on `v_mfma_f32_16x16x32_bf16`: a block
    of 4 waves owns 64 or 128 stacked query rows of one (batch, KV head)
    pair (16 or 32 a wave, GQA groups stacked so that K and V are read once
    a block), walks the keys up to the diagonal in tiles of 64 through LDS
    (k as rows, v transposed) with an online softmax in f32, and writes the
    output and the log-sum-exp; the [rows x keys] scores never leave the
    registers. Operands are rounded to bf16 as they are loaded and P where
    it becomes an MFMA operand, products accumulate in f32: the numerics of
    PyTorch's bf16 autocast and of `convert-attention-to-nvgpu`, not the f32
    of the decomposition. Operands are token-major ([batch, seq, heads,
    head dim]) and read in place, f32 or bf16 (`mxfp4-round-attention-io`);
    the log-sum-exp is f32.

    Each `causal_attention_backward` call becomes FlashAttention-2's
    backward with the same rounding points, deterministic (every output
    element has one writer, no atomics): `bwd_delta` (delta = rowsum(dO *
    o)), `bwd_dq` (a block of 2 waves owns 64 stacked query rows and walks
    the keys up to the diagonal, recomputing P from the log-sum-exp) and
    `bwd_dkdv` (a block owns 64 keys and walks every query row of every GQA
    group that sees them, accumulating dv = P^T dO and dk = dS^T q). Calls
    it does not cover (head dims other than 64 and 128, sequences not a
    multiple of 64, non-identity buffers) stay calls, for the inliner;
    composites left without calls are erased.

    The pass outlines its launches itself (the shared driver of
    `convert-attention-to-nvgpu`) into `gpu.module @mxfp4_kernels` (made if
    missing), one kernel per role and shape
    (`attention_fwd_b<batch>_s<seq>_kv<kv heads>x<groups>_d<head dim>`, with
    a suffix of one letter a buffer where some are bf16), shared by the
    layers.

    Example:

    ```mlir
    // Before
    %o, %lse = call @causal_attention_2x256x4x64_2x256x2x64_2x256x2x64(
            %q, %k, %v)
        : (memref<2x256x4x64xf32>, memref<2x256x2x64xf32>,
           memref<2x256x2x64xf32>)
        -> (memref<2x256x4x64xf32>, memref<2x4x256xf32>)
    // After (abridged): a block per 128 stacked query rows of a (batch, KV
    // head) pair
    %o = memref.alloc() : memref<2x256x4x64xf32>
    %lse = memref.alloc() : memref<2x4x256xf32>
    gpu.launch_func @mxfp4_kernels::@attention_fwd_b2_s256_kv2x2_d64
        blocks in (%c4, %c4, %c1) threads in (%c256, %c1, %c1)
        args(%q : ..., %k : ..., %v : ..., %o : ..., %lse : ...)
    ...
    gpu.module @mxfp4_kernels {
      gpu.func @attention_fwd_b2_s256_kv2x2_d64(...)
          workgroup(%k : memref<4608xbf16, #gpu.address_space<workgroup>>,
                    %vt : memref<4608xbf16, #gpu.address_space<workgroup>>)
          kernel attributes {known_block_size = array<i32: 256, 1, 1>, ...} {
        ... vector.load %arg0[...] : memref<2x256x4x64xf32>, vector<8xf32>
        %r:20 = scf.for %j = %c0 to %n step %c1 iter_args(...) {
          ... amdgpu.mfma 16x16x32 ... math.exp2 ... gpu.shuffle xor
        }
        ... vector.store ... %arg3[...] ... memref.store ... %arg4[...]
        gpu.return
      }
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::amdgpu::AMDGPUDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::mxfp4::MXFP4Dialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

//===----------------------------------------------------------------------===//
// LinalgToGPU
//===----------------------------------------------------------------------===//

def ConvertLinalgToGPULaunchPass
    : Pass<"convert-linalg-to-gpu-launch", "::mlir::func::FuncOp"> {
  let summary = "Run the linalg ops of a bufferized function as gpu.launch ops";
  let description = [{
    The generic GPU code generation for what no tuned kernel covers. Every
    top-level linalg op on buffers (named ops are generalized first;
    `memref.copy` becomes a copy) becomes one `gpu.launch` with one
    work-item per point of its parallel iteration space, 256 a workgroup,
    the parallel dimensions delinearized row-major; each work-item runs the
    payload over the reduction dimensions in a loop nest that carries the
    accumulators in registers. A large elementwise op (2^18 runs of 4
    elements or more) whose outputs run along its innermost loop takes 4
    consecutive elements a work-item: 16-byte loads and stores of the
    operands along that loop, one load of those that do not vary along it. A large sum into few points is split: slices
    of work-items write partial sums that a second launch adds in slice
    order; into fewer points than a workgroup has work-items, whole
    workgroups stride the reduction and combine through a fixed tree in
    workgroup memory. A loop of rows of column updates (the embedding
    gradient's scatter-add) runs a work-item a column; a long one that
    accumulates runs in chunks of its iterations, each into its slice of a
    zeroed workspace, then the slices are added in chunk order, where the
    workspace fits 64 MiB; else, into a rank-2 buffer, its iterations are
    sorted by row on the device (a rank pass over key tiles) and the work-
    items of each touched row add its iterations in order. Every order
    is fixed: results do not depend on scheduling. With `warp-reductions`,
    a row reduction of 64 or more elements takes a warp of `warp-size`
    lanes (W: 32 on NVIDIA, 64 for gfx950's wave) a row, and a row
    reduction over [rows, columns] (W to 16 W columns, a multiple of W),
    the sums over its rows shortly before it and the elementwise ops
    right after it that read its results at their rows run as one kernel
    that reads each operand element once: a warp takes consecutive rows,
    its lanes columns lane + W j; each row's reduction combines through a
    shuffle tree and feeds the elementwise ops from a register, and the
    column sums collect in registers over the warp's rows, their partials
    added by a second launch, a warp a column. The ops must be free to move
    to the last one's place: nothing between them writes what they read or
    uses what they write, and no member reads another's output except the
    row results and an elementwise op's own output in place.
    A fill, or a copy of a buffer a fill has just made constant (a
    bufferized shared fill), into an output that a generic writes next
    costs no launch: the generic starts from the constant. Other top-level
    code that touches memory runs in a one-work-item launch (it must not
    produce values the host uses); a chain of loads and scalar ops spread
    between launches (the gradient norm's sum) first moves next to its
    end, to run in one such launch.
    All other code, scalar arithmetic included, runs on the device too
    (scalars reach later kernels through 0-d buffers), static subviews fold
    into the kernels' indices, and every allocation is freed after its last
    use unless returned: the host is left with allocations, deallocations,
    views, constants and launches, which any runtime can replay.
    `gpu-kernel-outlining` then makes the kernels.

    Example:

    ```mlir
    // Before
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : memref<1000xf32>) outs(%b : memref<1000xf32>) {
    ^bb0(%x: f32, %y: f32):
      %e = math.exp %x : f32
      linalg.yield %e : f32
    }
    // After
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
      %id = ... %bx * 256 + %tx
      scf.if %id < 1000 {
        %x = memref.load %a[%id] : memref<1000xf32>
        %e = math.exp %x : f32
        memref.store %e, %b[%id] : memref<1000xf32>
      }
      gpu.terminator
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
  let options = [
    Option<"warpReductions", "warp-reductions", "bool", /*default=*/"false",
           "Reduce each row of a sum or max over one dimension with a warp "
           "of warp-size work-items (strided, coalesced reads and a shuffle "
           "tree) instead of one work-item, and run row groups (a row "
           "reduction over [rows, columns], the column sums before it and "
           "the elementwise ops after it that read its results: a "
           "normalization's backward) as one pass over the rows">,
    Option<"warpSize", "warp-size", "int64_t", /*default=*/"32",
           "Lanes of a warp-reductions row (a power of two, 2 to 64): 32 "
           "for NVIDIA's warps, 64 for gfx950's waves">
  ];
}

//===----------------------------------------------------------------------===//
// MathToROCDLIntrinsics
//===----------------------------------------------------------------------===//

def ConvertMathToROCDLIntrinsicsPass
    : Pass<"convert-math-to-rocdl-intrinsics", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower f32 math ops to AMDGPU instructions, not device libraries";
  let description = [{
    `math.exp`, `exp2`, `log`, `log2`, `rsqrt` and `powf` on f32 become
    `rocdl.exp2` (v_exp_f32), `rocdl.log` (v_log_f32), `rocdl.rcp` and
    `math.sqrt` with the needed constant factors; tanh, erf, sin, cos and
    the other functions become upstream polynomial approximations; f64
    ones (scalars such as the cosine learning-rate schedule) are computed in
    f32 and extended. No
    `__ocml_*` call remains, so the kernels link without ROCm device
    libraries (Debian ships none for gfx950). Accurate to a few ulp, not
    bit-identical to the CPU.

    Example:

    ```mlir
    // Before
    %e = math.exp %x : f32
    // After
    %c = arith.constant 1.44269502 : f32
    %t = arith.mulf %x, %c : f32
    %e = rocdl.exp2 %t f32 -> f32
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::ROCDL::ROCDLDialect",
    "::mlir::math::MathDialect"
  ];
}

#endif // MXFP4_CONVERSION_PASSES_TD
