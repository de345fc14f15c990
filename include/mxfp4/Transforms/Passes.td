//===- Passes.td - mxfp4 general transform passes ---------*- tablegen -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Passes that are not specific to the mxfp4 dialect but that the project's
// pipelines need and upstream does not provide.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_TRANSFORMS_PASSES_TD
#define MXFP4_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DistinctResultBuffersPass
    : Pass<"mxfp4-distinct-result-buffers", "::mlir::func::FuncOp"> {
  let summary = "Give every memref result of a function its own buffer";
  let description = [{
    After bufferization, a function may return one buffer at several result
    positions (CSE merges equal computations, for example a deterministic
    Hadamard rotation and its inverse, which are the same arithmetic).
    Upstream `buffer-results-to-out-params` assumes distinct buffers: with
    `hoist-static-allocs` it replaces an allocation by the first out-parameter
    and crashes on the second. This pass copies every repeated result into a
    fresh allocation, so each out-parameter is written on its own.

    Example:

    ```mlir
    // Before
    func.func @f() -> (memref<4xf32>, memref<4xf32>) {
      %a = memref.alloc() : memref<4xf32>
      return %a, %a : memref<4xf32>, memref<4xf32>
    }
    // After
    func.func @f() -> (memref<4xf32>, memref<4xf32>) {
      %a = memref.alloc() : memref<4xf32>
      %b = memref.alloc() : memref<4xf32>
      memref.copy %a, %b : memref<4xf32> to memref<4xf32>
      return %a, %b : memref<4xf32>, memref<4xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def ReadOnlyArgumentsPass
    : Pass<"mxfp4-read-only-arguments", "::mlir::func::FuncOp"> {
  let summary = "Keep the tensor arguments of public functions unwritten";
  let description = [{
    One-shot bufferization with function boundaries treats every function
    argument as writable: an op whose destination is an argument (the Llama
    step's AdamW update writes the weights and moments it reads) updates the
    caller's buffer in place. The GPU targets' host plans want that (the step
    then holds one set of weights and moments); a C interface whose callers
    own read-only inputs does not. This pass marks every ranked tensor
    argument of a public function `bufferization.writable = false`, so that
    bufferization copies such an argument before writing it.

    Example:

    ```mlir
    // Before
    func.func @step(%w: tensor<4xf32>) -> tensor<4xf32>
    // After
    func.func @step(%w: tensor<4xf32> {bufferization.writable = false})
        -> tensor<4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def ParallelizeLoopsPass
    : Pass<"mxfp4-parallelize-loops", "::mlir::func::FuncOp"> {
  let summary = "Turn loops the lowerings marked independent into scf.parallel";
  let description = [{
    The mxfp4 lowerings know which of their loops have independent
    iterations (the outer row or tile loop of quantize, hadamard and
    scaled_matmul: every iteration writes its own rows or columns and reads
    nothing another writes) and mark them `mxfp4.parallel`. After
    bufferization such a loop has no iteration arguments left; this pass
    rewrites it as `scf.parallel`, which `convert-scf-to-openmp` spreads over
    the host's cores. Results do not depend on the thread count: no
    reduction crosses iterations.

    Example:

    ```mlir
    // Before
    scf.for %i = %c0 to %c64 step %c1 { ... } {mxfp4.parallel}
    // After
    scf.parallel (%i) = (%c0) to (%c64) step (%c1) { ... }
    ```
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def VectorizeMatmulsPass
    : Pass<"mxfp4-vectorize-matmuls", "::mlir::func::FuncOp"> {
  let summary = "Tile and vectorize the high-precision matmuls of a step";
  let description = [{
    The GEMMs a recipe leaves in high precision (attention, the LM head,
    every linear layer under `bf16`) are `linalg.matmul` and
    `linalg.batch_matmul` on f32 tensors. Lowered to scalar loops they run at
    about 1 GFLOP/s. This pass first turns transposed operand maps (the
    Fprop form A * B^T, the Wgrad form A^T * B) into explicit
    `linalg.transpose` copies of the operand, then tiles each matmul with
    static shapes into
    8 x 32 x 16 (M x N x K) tiles with `scf.for` loops, vectorizes every tile
    into a `vector.contract`, and lowers the contraction to outer products,
    that is broadcast-and-FMA sequences the host's vector unit executes.
    The outer tile loop is marked `mxfp4.parallel`. The sum over K is
    accumulated in increasing K order within and across tiles, as the loops
    would, but with fused multiply-adds (one rounding per
    step instead of two), so results may differ from the scalar loops in the
    last bits. Shapes that are not tile multiples, and non-f32 matmuls, are
    left to the loop lowering.

    Example:

    ```mlir
    // Before
    %c = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>)
        outs(%z : tensor<64x64xf32>) -> tensor<64x64xf32>
    // After (abridged)
    %c = scf.for %i = %c0 to %c64 step %c8 iter_args(...) {
      scf.for %j ... step %c32 { scf.for %k ... step %c16 {
        %va = vector.transfer_read ... : tensor<8x16xf32>, vector<8x16xf32>
        ...
        %acc = vector.fma ... : vector<32xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def FuseElementwisePass
    : Pass<"mxfp4-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Fuse chains of elementwise linalg.generic ops";
  let description = [{
    A training step's norms, activations, residual adds and softmax are
    chains of `linalg.generic` ops, each a full pass over a [tokens,
    features] tensor when lowered on its own. This pass fuses a producer
    generic into its consumer generic (elementwise producers, into
    elementwise or reduction consumers) with upstream's elementwise fusion,
    restricted so that results are unchanged and kernels keep their form:
    only `linalg.generic` into `linalg.generic` (named ops such as matmuls
    and fills are left for the passes that recognize them), and only a
    producer with no other user (nothing is computed twice). Every element
    is computed by the same operations in the same order, so results are
    bit-identical.

    Example:

    ```mlir
    // Before
    %s = linalg.generic {... ["parallel"]} ins(%x : tensor<8xf32>) ... {
      ^bb0(%a: f32, %o: f32): %e = math.exp %a : f32  linalg.yield %e : f32 }
    %t = linalg.generic {... ["parallel"]} ins(%s, %y : ...) ... {
      ^bb0(%a: f32, %b: f32, %o: f32): %m = arith.mulf %a, %b : f32 ... }
    // After
    %t = linalg.generic {... ["parallel"]} ins(%x, %y : ...) ... {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %e = math.exp %a : f32
        %m = arith.mulf %e, %b : f32 ... }
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def RoundAttentionIOPass
    : Pass<"mxfp4-round-attention-io", "::mlir::ModuleOp"> {
  let summary = "Give attention composites bf16 inputs and outputs (bf16 "
                "GEMM precision)";
  let description = [{
    The fused attention kernels multiply bf16 tiles on tensor cores
    (autocast's numerics), rounding q, k, v and dO from f32 as they loaded
    every tile. This pass stores attention's tensors as bf16, as PyTorch's
    bf16 attention does, so that every kernel moves half the bytes: each
    call of a `causal_attention` composite (q, k, v -> o, lse) or a
    `causal_attention_backward` composite (q, k, v, o, lse, dO -> dq, dk,
    dv) with f32 tensors calls a variant of it (`_bf16io`) whose operands
    and results other than the log-sum-exp are bf16, and whose body widens
    the operands, computes what the original's does and rounds the results.

    Where the values are made and read:
    - An operand is rounded where it is computed, ahead of the reshapes
      that only lead to the call (replayed on bf16): the rounding fuses
      into the rotary embedding (`mxfp4-fuse-elementwise`) or into the
      projection's GEMM (`mxfp4-round-gemm-results`). The forward and
      backward calls share one rounding of each value, and the backward
      reads the forward's bf16 o. A tensor widened from bf16 is read as
      the bf16 tensor it was.
    - A result's readers read the bf16 value through reshapes replayed on
      bf16: a `linalg.generic` widens it in its body (the rotary
      embedding's gradient; one that only rounds it back to bf16 goes);
      the others (quantizations) share one widening generic, which the
      quantize kernels compute from the bf16 value.

    The kernels compute the same products as before from the same bf16
    tiles; what changes is that o, dq, dk and dv are rounded to bf16 and
    the backward's rowsum(dO * o) reads the bf16 values. A composite no
    kernel replaces is inlined with its roundings.

    Example:

    ```mlir
    // Before
    %o, %lse = call @causal_attention_2x128x4x64_2x128x2x64_2x128x2x64(
        %q, %k, %v) : (tensor<2x128x4x64xf32>, ...) -> (...)
    // After
    %qh = linalg.generic {...} ins(%q : tensor<2x128x4x64xf32>)
        outs(%e : tensor<2x128x4x64xbf16>) { arith.truncf ... }
    ...
    %oh, %lse = call @causal_attention_..._bf16io(%qh, %kh, %vh)
        : (tensor<2x128x4x64xbf16>, ...)
        -> (tensor<2x128x4x64xbf16>, tensor<2x4x128xf32>)
    func.func private @causal_attention_..._bf16io(
        %q: tensor<2x128x4x64xbf16>, ...) -> (tensor<2x128x4x64xbf16>, ...)
        attributes {mxfp4.composite = "causal_attention"} {
      %qf = linalg.generic {...} ins(%q : ...) ... { arith.extf ... }
      ... // the original body on %qf, %kf, %vf, then o rounded
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def RoundGemmResultsPass
    : Pass<"mxfp4-round-gemm-results", "::mlir::func::FuncOp"> {
  let summary = "Store the MXFP4 GEMM results that only elementwise ops read "
                "as bf16 (bf16 GEMM precision)";
  let description = [{
    PyTorch autocast's GEMMs write bf16 results. With bf16 GEMM precision,
    every f32 `mxfp4.scaled_matmul` without an accumulator whose readers are
    all all-parallel `linalg.generic` inputs (directly or through reshapes,
    which are retyped) gets a bf16 result (the GEMM rounds its f32 sum once,
    ties to even), and each reader widens the element back to f32 where it
    reads it (`arith.extf` at the start of its body). The tensors this
    concerns in a Llama step are the FFN's gate and up projections and the
    down projection's input gradient, 32768 x 1408 in the pilot: written
    once and read by up to three kernels (SwiGLU, its two gradients), they
    move half the bytes; and the query and key projections, which the
    rotary embedding reads. A reader that only rounds the
    result to bf16 (attention's v and dO, from `mxfp4-round-attention-io`)
    goes: the GEMM writes what it computed.

    Results that a sum reads (a generic of additions only) keep f32: the
    sum becomes the GEMM's accumulator later (residual adds, input
    gradients of several GEMMs), with one f32 rounding. So do results that
    a reduction or a non-generic op reads (weight gradients, the attention
    composites' operands before `mxfp4-round-attention-io`).
    Composite functions are left as they are.

    Example:

    ```mlir
    // Before
    %g = mxfp4.scaled_matmul %a scale %as, %b scale %bs : ...
        -> tensor<64x96xf32>
    %h = linalg.generic {... ["parallel", "parallel"]}
        ins(%g, %u : tensor<64x96xf32>, tensor<64x96xf32>) ... {
      ^bb0(%x: f32, %y: f32, %o: f32):
        %m = arith.mulf %x, %y : f32 ... }
    // After
    %g = mxfp4.scaled_matmul %a scale %as, %b scale %bs : ...
        -> tensor<64x96xbf16>
    %h = linalg.generic {... ["parallel", "parallel"]}
        ins(%g, %u : tensor<64x96xbf16>, tensor<64x96xf32>) ... {
      ^bb0(%xh: bf16, %y: f32, %o: f32):
        %x = arith.extf %xh : bf16 to f32
        %m = arith.mulf %x, %y : f32 ... }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def RoundMatmulOperandsPass
    : Pass<"mxfp4-round-matmul-operands", "::mlir::func::FuncOp"> {
  let summary = "Give f32 matmuls operands rounded to bf16 (bf16 GEMM "
                "precision)";
  let description = [{
    With bf16 tensor-core GEMMs (PyTorch autocast's numerics), every f32
    `linalg.matmul` and `linalg.batch_matmul` rounds its operands to bf16
    (ties to even) before multiplying with f32 accumulation. This pass makes
    that rounding explicit on tensors: each f32 operand becomes a
    `linalg.generic` of `arith.truncf`, and the matmul is rebuilt on the
    bf16 operands with its f32 init and result. CSE then merges the
    roundings of one value read by several GEMMs, and
    `mxfp4-fuse-elementwise` fuses a rounding into the elementwise op that
    produced its operand when nothing else reads the f32 value: the norm
    or activation kernel writes bf16 directly, and no separate rounding
    pass over the tensor remains. Results are unchanged: the same
    roundings happen, only earlier. Composite functions (the reference
    bodies of fused kernels) are left as they are.

    Example:

    ```mlir
    // Before
    %y = linalg.matmul ins(%x, %w : tensor<64x32xf32>, tensor<32x16xf32>)
                       outs(%z : tensor<64x16xf32>) -> tensor<64x16xf32>
    // After
    %xh = linalg.generic {...} ins(%x : tensor<64x32xf32>)
        outs(%e0 : tensor<64x32xbf16>) {
      ^bb0(%a: f32, %o: bf16):
        %h = arith.truncf %a : f32 to bf16
        linalg.yield %h : bf16
    } -> tensor<64x32xbf16>
    %wh = linalg.generic {...} ins(%w : ...) ... -> tensor<32x16xbf16>
    %y = linalg.matmul ins(%xh, %wh : tensor<64x32xbf16>, tensor<32x16xbf16>)
                       outs(%z : tensor<64x16xf32>) -> tensor<64x16xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def OutlineKernelsPass : Pass<"mxfp4-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Outline repeated heavy ops into private kernel functions, "
                "one per distinct shape";
  let description = [{
    A training step repeats the same GEMMs and quantizations in every layer:
    the Llama step of the `tiny` preset has 170 matmuls but 16 distinct
    ones. Lowered in place, each copy becomes its own tiled, vectorized
    loop nest, and LLVM compiles every copy again. This pass moves each
    root op (by default `linalg.matmul`, `linalg.batch_matmul`,
    `mxfp4.quantize` and `mxfp4.scaled_matmul`) together with the
    single-use producers it is lowered with (the `linalg.fill` and
    `tensor.empty` of its init, the `mxfp4.hadamard` a quantize absorbs,
    scalar constants) into a private function, and replaces it with a
    `func.call`. Ops that are identical up to their operands and
    discardable attributes (such as the `mxfp4.gemm` tags, which the recipe
    passes have consumed by now) share one function, so compile time grows
    with the number of distinct shapes instead of the number of layers.
    An op whose kernel occurs once stays in place: it is compiled once
    either way, and in place its loop nest keeps static strides and writes
    its results where they are used (an outlined kernel allocates its
    results, and a caller that returns them copies them out: the CPU
    quantize of a function returning its codes ran 2.3x slower).
    Results are unchanged: the kernel computes what the ops computed.

    Example (the same matmul in a second layer, with weights %w1, becomes
    a second call of the same kernel):

    ```mlir
    // Before
    %z = linalg.fill ins(%cst : f32) outs(%e : tensor<64x32xf32>) -> ...
    %y = linalg.matmul {mxfp4.gemm = #mxfp4.gemm<fprop, "l0">}
        ins(%x, %w : ...) outs(%z : tensor<64x32xf32>) -> tensor<64x32xf32>
    // After
    %y = call @kernel_0(%x, %w) : (...) -> tensor<64x32xf32>
    ...
    func.func private @kernel_0(%a: tensor<64x64xf32>, %b: tensor<32x64xf32>)
        -> tensor<64x32xf32> {
      %cst = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<64x32xf32>
      %z = linalg.fill ins(%cst : f32) outs(%e : tensor<64x32xf32>) -> ...
      %y = linalg.matmul ins(%a, %b : ...) outs(%z : ...) -> ...
      return %y : tensor<64x32xf32>
    }
    ```
  }];
  let options = [
    ListOption<"rootOps", "ops", "std::string",
               "Names of the ops to outline (default: matmuls, quantize, "
               "scaled_matmul)">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}


def MergeKernelModulesPass
    : Pass<"mxfp4-merge-kernel-modules", "::mlir::ModuleOp"> {
  let summary = "Move every GPU kernel into one gpu.module, one copy of each";
  let description = [{
    `gpu-kernel-outlining` makes one `gpu.module` per launch; a training step
    has thousands, most of them the same kernel once per layer. This pass
    moves every kernel into the module `into` (created if missing), keeps
    one copy of each distinct kernel (equal text up to its name), names the
    moved ones `kernel_N`, and points every `gpu.launch_func` at its copy:
    one code object, each distinct kernel compiled once.

    Example:

    ```mlir
    // Before
    gpu.launch_func @f_kernel::@f_kernel ...
    gpu.launch_func @f_kernel_0::@f_kernel ...   // the same kernel
    gpu.module @f_kernel { gpu.func @f_kernel(...) kernel { ... } }
    gpu.module @f_kernel_0 { gpu.func @f_kernel(...) kernel { ... } }
    // After
    gpu.launch_func @mxfp4_kernels::@kernel_0 ...
    gpu.launch_func @mxfp4_kernels::@kernel_0 ...
    gpu.module @mxfp4_kernels { gpu.func @kernel_0(...) kernel { ... } }
    ```
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
  let options = [
    Option<"into", "into", "std::string", /*default=*/"\"mxfp4_kernels\"",
           "The gpu.module that receives the kernels">
  ];
}

#endif // MXFP4_TRANSFORMS_PASSES_TD
