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

#endif // MXFP4_CONVERSION_PASSES_TD
