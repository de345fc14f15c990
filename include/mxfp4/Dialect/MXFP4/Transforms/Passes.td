//===- Passes.td - mxfp4 dialect transform passes ---------*- tablegen -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_DIALECT_MXFP4_TRANSFORMS_PASSES_TD
#define MXFP4_DIALECT_MXFP4_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AnnotateRolesPass : Pass<"mxfp4-annotate-roles", "::mlir::func::FuncOp"> {
  let summary = "Tag every linear-layer GEMM with its role and layer";
  let description = [{
    Runs the role analysis of `mxfp4-apply-recipe` and writes what it finds
    as `mxfp4.gemm` attributes, so a graph from a frontend that knows nothing
    of roles can be inspected, edited and then quantized. Tagged contractions
    are kept; untagged ones get a tag when the rules of docs/Recipes.md
    ("Roles") decide. The analysis reads the GEMMs as other frontends write
    them: `linalg.matmul` in any of its four transposition forms (MLIR 22's
    replacement for `matmul_transpose_a/b`) with the weight on either side,
    `linalg.generic` and `linalg.contract` mul/add contractions with
    permuted maps, `linalg.batch_matmul` of a weight broadcast over the
    batch, and operands seen through casts, `linalg.transpose`,
    `tensor.collapse_shape`/`expand_shape` and broadcasts. The tag goes on
    the contraction as written; `mxfp4-apply-recipe` rewrites it.

    A contraction that reads a parameter (through those views), or whose
    result is shaped like one, and gets no role is named in a remark that
    says why, e.g.
    `remark: contraction not classified as a linear layer's GEMM (reads
    parameter "experts.weight" of rank 3; linear layers have 2-D weights)`.

    Example:

    ```mlir
    // Before
    func.func @f(%x: tensor<64x128xf32>,
                 %w: tensor<32x128xf32> {mxfp4.parameter = "mlp.up_proj.weight"},
                 %dy: tensor<64x32xf32>) -> ... {
      %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
          affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
          ins(%x, %w : ...) outs(%zero : tensor<64x32xf32>) -> tensor<64x32xf32>
      %dyt = linalg.transpose ins(%dy : tensor<64x32xf32>)
          outs(%e : tensor<32x64xf32>) permutation = [1, 0]
      %dw = linalg.matmul ins(%dyt, %x : tensor<32x64xf32>, tensor<64x128xf32>)
          outs(%zero2 : tensor<32x128xf32>) -> tensor<32x128xf32>
      ...
    // After
      %y = linalg.matmul indexing_maps = [...]
          {mxfp4.gemm = #mxfp4.gemm<fprop, "mlp.up_proj">} ins(%x, %w : ...) ...
      %dw = linalg.matmul {mxfp4.gemm = #mxfp4.gemm<wgrad, "mlp.up_proj">}
          ins(%dyt, %x : ...) ...
    ```
    The Wgrad is found because the function's Dgrad (elided) reads %dy and
    its Fprop %x, along the axes a Wgrad keeps.
  }];
  let options = [
    Option<"includeLmHead", "lm-head", "bool", /*default=*/"false",
           "Treat parameters named like the LM head or an embedding as "
           "linear layers">
  ];
  let dependentDialects = ["::mlir::mxfp4::MXFP4Dialect"];
}

def ApplyRecipePass : Pass<"mxfp4-apply-recipe", "::mlir::func::FuncOp"> {
  let summary = "Rewrite linear-layer GEMMs into hadamard, quantize and "
                "scaled_matmul as a recipe says";
  let description = [{
    For every linear-layer GEMM (tagged with `mxfp4.gemm`, or found by the
    role analysis of `mxfp4-annotate-roles`), applies the recipe's choices
    for its role. A GEMM written in another frontend's form (a generic, a
    batch matmul of a broadcast weight, 3-D activations, the weight on the
    left) is first rewritten as a 2-D `linalg.matmul`: transposes folded
    into its maps, a broadcast batch dropped, operands collapsed to
    [tokens, features], and the product expanded and transposed back into
    the original result, so every form gets the canonical form's quantized
    GEMM, bit for bit. Then both operands are put in canonical K-major
    form (a `linalg.transpose` of the high-precision tensor where the GEMM
    reduces over its first axis: W for Dgrad, dY and X for Wgrad), rotated
    with the same `mxfp4.hadamard`
    (same size, kind, seed and step, so the rotations cancel), quantized along
    the reduction axis with each operand's scale rule and rounding, and
    multiplied with `mxfp4.scaled_matmul`. An operand left in high precision
    while the other is MXFP4 is dequantized again (fake quantization) and the
    product stays a `linalg.matmul`; rotations without quantization also keep
    a `linalg.matmul`, which checks that they cancel.

    Seeds of stochastic rounding and random rotations are constants hashed
    from (layer, role, operand) and the recipe's `seed`; the counter and the
    step of `random_per_step` rotations are the function argument marked
    `{mxfp4.step}`. With `weight_cache=true` (the default) every use of a
    weight in one step draws the same bits, as a weight quantized once per
    optimizer step would.

    With `telemetry=true`, every quantization also gets statistics (fraction
    clipped at +-6, fraction flushed to zero, SQNR in dB, scale exponent
    min/max/mean, NaN-block fraction) computed with upstream ops; they are
    returned as one more function result, a [quantizations x 8] f32 table
    whose rows the function attribute `mxfp4.telemetry` names
    (layer/role/operand) and whose columns `mxfp4.telemetry_fields` names.

    The recipe is a preset name or `key=value` settings (docs/Recipes.md),
    e.g. `recipe=fp4-all-dht16` or
    `recipe="fp4-all,wgrad.hadamard=deterministic,wgrad.hadamard_size=32"`.

    Contractions that read a parameter, or are shaped like a weight
    gradient, and get no role stay in high precision with a remark naming
    them and why (see `mxfp4-annotate-roles`); with `require-roles=true`
    each is an error instead and the pass fails before it rewrites
    anything, so a graph cannot silently train part of its linear layers in
    f32. LM-head and embedding parameters are left out by choice unless the
    recipe has `lm_head=true`, and never reported.

    Example (`recipe=fp4-all-dht16`, the Fprop of one layer):

    ```mlir
    // Before
    %y = linalg.matmul indexing_maps = [...]
        {mxfp4.gemm = #mxfp4.gemm<fprop, "l0">}
        ins(%x, %w : tensor<64x128xf32>, tensor<32x128xf32>)
        outs(%zero : tensor<64x32xf32>) -> tensor<64x32xf32>
    // After
    %hx = mxfp4.hadamard %x axis = 1 size = 16 : tensor<64x128xf32>
    %a, %as = mxfp4.quantize %hx axis = 1 : ...
    %hw = mxfp4.hadamard %w axis = 1 size = 16 : tensor<32x128xf32>
    %b, %bs = mxfp4.quantize %hw axis = 1 : ...
    %y = mxfp4.scaled_matmul %a scale %as, %b scale %bs
        {mxfp4.gemm = #mxfp4.gemm<fprop, "l0">} : ... -> tensor<64x32xf32>
    ```

    Example (`recipe=fp4-all-dht16`, an untagged Wgrad written as a
    transpose of dY and a plain matmul, after `--canonicalize --cse`):

    ```mlir
    // Before
    %dyt = linalg.transpose ins(%dy : tensor<256x1024xf32>)
        outs(%e : tensor<1024x256xf32>) permutation = [1, 0]
    %dw = linalg.matmul ins(%dyt, %x : tensor<1024x256xf32>, tensor<256x512xf32>)
        outs(%zero : tensor<1024x512xf32>) -> tensor<1024x512xf32>
    // After: what the canonical (k,m),(k,n) Wgrad gives; dY^T and X^T are
    // rotated and quantized along the tokens
    %dyt = linalg.transpose ins(%dy : tensor<256x1024xf32>) ... permutation = [1, 0]
    %xt = linalg.transpose ins(%x : tensor<256x512xf32>) ... permutation = [1, 0]
    %hg = mxfp4.hadamard %dyt axis = 1 size = 16 : tensor<1024x256xf32>
    %g, %gs = mxfp4.quantize %hg axis = 1 : ... -> tensor<1024x256xf4E2M1FN>, ...
    %hx = mxfp4.hadamard %xt axis = 1 size = 16 : tensor<512x256xf32>
    %q, %qs = mxfp4.quantize %hx axis = 1 : ... -> tensor<512x256xf4E2M1FN>, ...
    %dw = mxfp4.scaled_matmul %g scale %gs, %q scale %qs
        {mxfp4.gemm = #mxfp4.gemm<wgrad, "layers.0.w">} : ... -> tensor<1024x512xf32>
    ```
  }];
  let options = [
    Option<"recipeText", "recipe", "std::string", /*default=*/"\"bf16\"",
           "A preset name or recipe settings (docs/Recipes.md)">,
    Option<"requireRoles", "require-roles", "bool", /*default=*/"false",
           "Fail, with an error at each, if a contraction that reads a "
           "parameter (or is shaped like a weight gradient) gets no role">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::mxfp4::MXFP4Dialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def FoldGemmAccumulatorsPass
    : Pass<"mxfp4-fold-gemm-accumulators", "::mlir::func::FuncOp"> {
  let summary = "Make an elementwise f32 sum's first term the accumulator of "
                "the scaled_matmul added to it";
  let description = [{
    Where a target's GEMM adds its accumulator to the finished f32 sum
    (C = acc + A * B^T, one addition: the sm_90a kernels), an elementwise
    `x + C` that is an f32 `scaled_matmul`'s only reader (a residual add,
    the sum of two GEMMs) is that GEMM with `acc(x)`: the same bits, one
    pass over C fewer. A longer sum added from the left,
    `((x + C) + y) + ...`, keeps its rest, `((C' + y) + ...)`, where C' is
    the GEMM with `acc(x)`, and a later GEMM among its terms folds the rest
    in turn, so `(C1 + C2) + C3` becomes a chain of accumulating GEMMs. `x`
    must be defined before the GEMM (the GEMM reads it) and every addition
    of the sum exact IEEE (no fast-math flags).

    Only for such targets: the CPU path adds the accumulator first, block
    by block, so there the fold would change the rounding. The sm_90a
    pipeline runs it before `convert-mxfp4-to-nvgpu` when compiling whole
    steps (`mixed`).

    Before:

    ```mlir
    %mm = mxfp4.scaled_matmul %av scale %as, %bv scale %bs : ... -> tensor<128x64xf32>
    %y = linalg.generic {indexing_maps = [#id, #id, #id], ...}
        ins(%x, %mm : tensor<128x64xf32>, tensor<128x64xf32>)
        outs(%e : tensor<128x64xf32>) {
    ^bb0(%l: f32, %r: f32, %o: f32):
      %s = arith.addf %l, %r : f32
      linalg.yield %s : f32
    } -> tensor<128x64xf32>
    ```

    After:

    ```mlir
    %y = mxfp4.scaled_matmul %av scale %as, %bv scale %bs acc(%x) : ... -> tensor<128x64xf32>
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect"];
}

def CheckRotationsPass : Pass<"mxfp4-check-rotations", "::mlir::func::FuncOp"> {
  let summary = "Prove that the operands of every scaled_matmul are blocked "
                "along K and rotated identically";
  let description = [{
    For every `mxfp4.scaled_matmul`, follows each operand's values and scales
    to one `mxfp4.quantize` along the contraction axis, and that quantize's
    input to an `mxfp4.hadamard` along the same axis if there is one. The
    pass fails with an error located at the matmul unless both operands are
    unrotated, or rotated by the same matrix (same axis, size, kind, seed and
    step values, same direction): only then does
    (A R)(B R)^T = A B^T hold, so a rotation changes what the quantizer sees
    but not the product. Operands that do not come from a quantize in this
    function (pre-quantized weights) are an error unless
    `allow-external-operands` is set, since nothing can be proven about them.

    Example of a rejected function:

    ```mlir
    %ha = mxfp4.hadamard %a axis = 1 size = 16 : tensor<16x64xf32>
    %qa, %sa = mxfp4.quantize %ha axis = 1 : ...
    %qb, %sb = mxfp4.quantize %b axis = 1 : ...
    // error: the rotations of the operands do not cancel: lhs is rotated
    // by a deterministic H16, rhs is not rotated
    %c = mxfp4.scaled_matmul %qa scale %sa, %qb scale %sb : ...
    ```
  }];
  let options = [
    Option<"allowExternalOperands", "allow-external-operands", "bool",
           /*default=*/"false",
           "Accept operands that are not quantized in this function">
  ];
}

#endif // MXFP4_DIALECT_MXFP4_TRANSFORMS_PASSES_TD
