//===- MXFP4Ops.td - mxfp4 operations ---------------------*- tablegen -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_DIALECT_MXFP4_IR_MXFP4OPS_TD
#define MXFP4_DIALECT_MXFP4_IR_MXFP4OPS_TD

include "mxfp4/Dialect/MXFP4/IR/MXFP4Base.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

def MXFP4_QuantizeOp : MXFP4_Op<"quantize",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "quantize to E2M1 values and one E8M0 scale per block";
  let description = [{
    Splits `input` into blocks of `block_size` (32) consecutive elements along
    `axis`, derives one E8M0 scale per block from the block's largest magnitude
    with `scale_rule`, and rounds every element divided by its block's scale to
    the E2M1 grid with `rounding`, saturating at +-6.

    `values` has the shape of `input`; `scales` has the shape of `input` with
    dimension `axis` divided by `block_size`. `axis` is the reduction axis of
    the GEMM that consumes the result: K for Fprop, N for Dgrad, the token axis
    for Wgrad.

    Scale rules (E(a) is the unbiased exponent of a; full definitions with
    clamps and special blocks in `docs/Semantics.md`):
    - `floor`: E(amax) - 2, the OCP MX v1.0 section 6.3 conversion;
    - `even` (default): E(amax rounded to one mantissa bit) - 2, as in ROCm
      Transformer Engine's MXFP4 kernel and AITER, the stack the seed paper
      trained with;
    - `ceil`: E(amax) + (mantissa != 0) - 2;
    - `rceil`: the smallest s with amax <= 6 * 2^s (never saturates).

    `rounding = nearest_even` rounds ties to the even code
    (0.25 -> 0, 0.75 -> 1, 2.5 -> 2, 5 -> 4). `rounding = stochastic` rounds up
    in magnitude with probability equal to the fractional distance, drawing the
    random bits from Philox4x32-10 keyed on `seed` at counter (element index,
    `counter`): the same operands give the same bits on every run and every
    thread count. Only stochastic rounding takes `seed` and `counter`.

    A block holding a NaN or an infinity gets the NaN scale 0xFF.

    Example:

    ```mlir
    %v, %s = mxfp4.quantize %x axis = 1
        : tensor<4x64xbf16> -> tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
    %v2, %s2 = mxfp4.quantize %g axis = 0 scale_rule = floor
        rounding = stochastic seed(%seed) counter(%step)
        : tensor<64x8xf32> -> tensor<64x8xf4E2M1FN>, tensor<2x8xf8E8M0FNU>
    ```
  }];

  let arguments = (ins
    MXFP4_HighPrecisionTensor:$input,
    Optional<I64>:$seed,
    Optional<I64>:$counter,
    I64Attr:$axis,
    DefaultValuedAttr<I64Attr, "32">:$block_size,
    DefaultValuedAttr<MXFP4_ScaleRuleAttr, "::mlir::mxfp4::ScaleRule::even">:$scale_rule,
    DefaultValuedAttr<MXFP4_RoundingAttr, "::mlir::mxfp4::Rounding::nearest_even">:$rounding
  );
  let results = (outs MXFP4_ValuesTensor:$values, MXFP4_ScalesTensor:$scales);

  let assemblyFormat = [{
    $input `axis` `=` $axis
    (`block_size` `=` $block_size^)?
    (`scale_rule` `=` `` $scale_rule^)?
    (`rounding` `=` `` $rounding^)?
    (`seed` `(` $seed^ `)`)?
    (`counter` `(` $counter^ `)`)?
    attr-dict `:` type($input) `->` type($values) `,` type($scales)
  }];

  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "int64_t":$axis,
                   "::mlir::mxfp4::ScaleRule":$scaleRule)>
  ];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// DequantizeOp
//===----------------------------------------------------------------------===//

def MXFP4_DequantizeOp : MXFP4_Op<"dequantize", [Pure]> {
  let summary = "expand E2M1 values and E8M0 block scales to f32 or bf16";
  let description = [{
    The inverse of `mxfp4.quantize`: every element becomes its E2M1 value times
    2^(scale - 127) of its block, where blocks are `block_size` (32) consecutive
    elements along `axis`. The result is exact in f32 and in bf16 (values of
    2^128 and above, possible only for scale bytes >= 253, overflow to +-Inf).
    A block whose scale byte is 0xFF (NaN) yields NaN in every element.

    Example:

    ```mlir
    %x = mxfp4.dequantize %v scale %s axis = 1
        : tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU> -> tensor<4x64xbf16>
    ```
  }];

  let arguments = (ins
    MXFP4_ValuesTensor:$values,
    MXFP4_ScalesTensor:$scales,
    I64Attr:$axis,
    DefaultValuedAttr<I64Attr, "32">:$block_size
  );
  let results = (outs MXFP4_HighPrecisionTensor:$result);

  let assemblyFormat = [{
    $values `scale` $scales `axis` `=` $axis
    (`block_size` `=` $block_size^)?
    attr-dict `:` type($values) `,` type($scales) `->` type($result)
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// HadamardOp
//===----------------------------------------------------------------------===//

def MXFP4_HadamardOp : MXFP4_Op<"hadamard",
    [Pure, AttrSizedOperandSegments, AllTypesMatch<["input", "result"]>]> {
  let summary = "block-diagonal normalized Walsh-Hadamard rotation along an axis";
  let description = [{
    Splits `input` into tiles of `size` (16, 32, 64 or 128) consecutive
    elements along `axis`, aligned to multiples of `size`, and replaces every
    tile x (a row vector) by x * D * H / sqrt(size), where H is the Sylvester
    Walsh-Hadamard matrix in natural order, H[i][j] = (-1)^popcount(i & j),
    and D = diag(d) holds one sign per tile position, the same for every tile:
    - `deterministic` (default): d = +1 everywhere, no operands;
    - `random_fixed`: d drawn from Philox4x32-10 keyed on `seed`, one vector
      for the whole run;
    - `random_per_step`: d drawn from `seed` and `step`, redrawn every step.

    The `inverse` form computes y * H / sqrt(size) * D, which undoes the forward
    rotation with the same kind, seed and step: rotating both operands of a GEMM
    along its reduction axis with the same forward rotation leaves the product
    unchanged, since (X D H)(W D H)^T = X W^T for orthogonal H/sqrt(size).

    The transform is computed in f32 (a bf16 input is extended first and the
    result rounded back to bf16); the butterfly order is fixed so every target
    gives the same bits (see `docs/Semantics.md`).

    Example:

    ```mlir
    %y = mxfp4.hadamard %x axis = 1 size = 16 : tensor<8x64xbf16>
    %z = mxfp4.hadamard %y axis = 0 size = 32 kind = random_per_step
        seed(%seed) step(%step) : tensor<128x64xf32>
    %x2 = mxfp4.hadamard inverse %y axis = 1 size = 16 : tensor<8x64xbf16>
    ```
  }];

  let arguments = (ins
    MXFP4_HighPrecisionTensor:$input,
    Optional<I64>:$seed,
    Optional<I64>:$step,
    I64Attr:$axis,
    I64Attr:$size,
    DefaultValuedAttr<MXFP4_HadamardKindAttr,
                      "::mlir::mxfp4::HadamardKind::deterministic">:$kind,
    UnitAttr:$inverse
  );
  let results = (outs MXFP4_HighPrecisionTensor:$result);

  let assemblyFormat = [{
    (`inverse` $inverse^)? $input `axis` `=` $axis `size` `=` $size
    (`kind` `=` `` $kind^)?
    (`seed` `(` $seed^ `)`)?
    (`step` `(` $step^ `)`)?
    attr-dict `:` type($input)
  }];

  let extraClassDeclaration = [{
    /// Returns true if `other` applies the same rotation matrix (axis, size,
    /// kind, seed and step), regardless of direction.
    bool hasSameRotation(HadamardOp other);
  }];

  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// ScaledMatmulOp
//===----------------------------------------------------------------------===//

def MXFP4_ScaledMatmulOp : MXFP4_Op<"scaled_matmul", [Pure,
    OptionalTypesMatchWith<"accumulator type matches result type",
                           "result", "acc", "$_self">]> {
  let summary = "C = A * B^T on MXFP4 operands blocked along K";
  let description = [{
    Computes C[m, n] = acc[m, n] + sum_k a[m, k] * b[n, k] where
    a[m, k] = lhs[m, k] * 2^(lhs_scale[m, k / 32] - 127) and
    b[n, k] = rhs[n, k] * 2^(rhs_scale[n, k / 32] - 127), accumulating in f32
    and rounding the result to the element type of `result` (f32 or bf16).

    Both operands are in the canonical K-major form the gfx950 scaled MFMA
    wants: `lhs` is [M, K] and `rhs` is [N, K], each blocked along its last
    dimension K, so `lhs_scale` is [M, K/32] and `rhs_scale` is [N, K/32].
    GEMMs whose reduction axis is not the last axis of the high-precision
    tensor (Dgrad reduces over N, Wgrad over tokens) transpose the
    high-precision tensor before `mxfp4.hadamard`/`mxfp4.quantize` along its
    last axis; FP4 data is never transposed. `docs/Rationale.md` lists the
    three canonical forms.

    Products of E2M1 values are exact, so each 32-element block sum is exact;
    the order in which the block sums are added is documented per target in
    `docs/Semantics.md`.

    Example:

    ```mlir
    %c = mxfp4.scaled_matmul %a scale %as, %b scale %bs
        : tensor<128x256xf4E2M1FN>, tensor<128x8xf8E8M0FNU>,
          tensor<64x256xf4E2M1FN>, tensor<64x8xf8E8M0FNU> -> tensor<128x64xbf16>
    %d = mxfp4.scaled_matmul %a scale %as, %b scale %bs acc(%c0)
        : tensor<128x256xf4E2M1FN>, tensor<128x8xf8E8M0FNU>,
          tensor<64x256xf4E2M1FN>, tensor<64x8xf8E8M0FNU> -> tensor<128x64xf32>
    ```
  }];

  let arguments = (ins
    MXFP4_MatrixValues:$lhs,
    MXFP4_MatrixScales:$lhs_scale,
    MXFP4_MatrixValues:$rhs,
    MXFP4_MatrixScales:$rhs_scale,
    Optional<MXFP4_MatrixResult>:$acc
  );
  let results = (outs MXFP4_MatrixResult:$result);

  let assemblyFormat = [{
    $lhs `scale` $lhs_scale `,` $rhs `scale` $rhs_scale
    (`acc` `(` $acc^ `)`)?
    attr-dict `:` type($lhs) `,` type($lhs_scale) `,` type($rhs) `,`
    type($rhs_scale) `->` type($result)
  }];

  let hasVerifier = 1;
}

#endif // MXFP4_DIALECT_MXFP4_IR_MXFP4OPS_TD
