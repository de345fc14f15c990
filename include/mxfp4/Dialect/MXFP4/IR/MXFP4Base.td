//===- MXFP4Base.td - mxfp4 dialect definition ------------*- tablegen -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_DIALECT_MXFP4_IR_MXFP4BASE_TD
#define MXFP4_DIALECT_MXFP4_IR_MXFP4BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def MXFP4_Dialect : Dialect {
  let name = "mxfp4";
  let cppNamespace = "::mlir::mxfp4";
  let summary = "OCP microscaling FP4 (MXFP4) quantization for training GEMMs";
  let description = [{
    The `mxfp4` dialect expresses the quantization of training GEMMs to the OCP
    MX format MXFP4: E2M1 elements (builtin `f4E2M1FN`) that share one E8M0
    power-of-two scale (builtin `f8E8M0FNU`) per block of 32 elements along the
    GEMM's reduction axis.

    What goes here: the four operations a quantized linear layer needs and that
    no upstream dialect provides with exact, target-independent semantics:
    `mxfp4.hadamard` (the rotation that spreads outliers before quantizing),
    `mxfp4.quantize`, `mxfp4.dequantize` and `mxfp4.scaled_matmul`. Everything
    else a training step uses (elementwise math, transposes, reductions,
    contractions in high precision) stays in upstream dialects.

    Every op works on ranked tensors. Quantized data is carried as two tensors,
    never as a packed type: values have the logical shape of the source tensor
    and scales have the same shape with the blocked axis divided by the block
    size. How the codes are packed in memory is a lowering decision; the data
    ABI is written down in `docs/Semantics.md`.

    The exact bit-level semantics of every op and attribute are in
    `docs/Semantics.md`; the reasons for the op set and for the axis
    conventions of the three GEMM roles are in `docs/Rationale.md`.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 0;

  // The discardable attributes the project's passes put on upstream ops,
  // function arguments and results; MXFP4Dialect.cpp verifies their types
  // and where they may appear, so a hand-written or corrupted one is a
  // located error, not a silent skip.
  let discardableAttrs = (ins
    // On a linear-layer contraction: its role and layer (AnnotateRoles,
    // builders).
    "::mlir::mxfp4::GemmAttr":$gemm,
    // On a function argument: the parameter's Hugging Face name.
    "::mlir::StringAttr":$parameter,
    // On a function argument: the step counter stochastic rounding seeds
    // from.
    "::mlir::UnitAttr":$step,
    // On a function: the composite operation its body computes.
    "::mlir::StringAttr":$composite,
    // On a function: the recipe it was compiled with, printed.
    "::mlir::StringAttr":$recipe,
    // On a function: the rows and the columns of its telemetry result.
    "::mlir::ArrayAttr":$telemetry,
    "::mlir::ArrayAttr":$telemetry_fields,
    // On an scf.for whose iterations are independent.
    "::mlir::UnitAttr":$parallel,
    // On a host function's argument or result: the tensor type its flat
    // device buffer holds.
    "::mlir::TypeAttr":$tensor,
    // On a gfx950 GEMM kernel: its M, N and K.
    "::mlir::DenseI64ArrayAttr":$gemm_shape,
    // On a GPU kernel whose loop bounds depend on the workgroup (causal
    // attention): the mean number of iterations of its steady-state loop a
    // wave runs, which the gfx950 step model cannot read from the bounds.
    "::mlir::FloatAttr":$steady_iterations
  );
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
}

/// Base class of every mxfp4 op.
class MXFP4_Op<string mnemonic, list<Trait> traits = []>
    : Op<MXFP4_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Enumerations
//===----------------------------------------------------------------------===//

def MXFP4_ScaleRule : I32EnumAttr<"ScaleRule",
    "how a block's E8M0 scale is derived from its largest magnitude", [
      I32EnumAttrCase<"floor", 0>,
      I32EnumAttrCase<"even", 1>,
      I32EnumAttrCase<"ceil", 2>,
      I32EnumAttrCase<"rceil", 3>
    ]> {
  let cppNamespace = "::mlir::mxfp4";
  let genSpecializedAttr = 0;
}
def MXFP4_ScaleRuleAttr : EnumAttr<MXFP4_Dialect, MXFP4_ScaleRule, "scale_rule">;

def MXFP4_Rounding : I32EnumAttr<"Rounding",
    "how a scaled element is rounded onto the E2M1 grid", [
      I32EnumAttrCase<"nearest_even", 0>,
      I32EnumAttrCase<"stochastic", 1>
    ]> {
  let cppNamespace = "::mlir::mxfp4";
  let genSpecializedAttr = 0;
}
def MXFP4_RoundingAttr : EnumAttr<MXFP4_Dialect, MXFP4_Rounding, "rounding">;

def MXFP4_HadamardKind : I32EnumAttr<"HadamardKind",
    "which sign vector multiplies a Walsh-Hadamard rotation", [
      I32EnumAttrCase<"deterministic", 0>,
      I32EnumAttrCase<"random_fixed", 1>,
      I32EnumAttrCase<"random_per_step", 2>
    ]> {
  let cppNamespace = "::mlir::mxfp4";
  let genSpecializedAttr = 0;
}
def MXFP4_HadamardKindAttr
    : EnumAttr<MXFP4_Dialect, MXFP4_HadamardKind, "hadamard_kind">;

def MXFP4_GemmRole : I32EnumAttr<"GemmRole",
    "which of a linear layer's three GEMMs a contraction is", [
      I32EnumAttrCase<"fprop", 0>,
      I32EnumAttrCase<"dgrad", 1>,
      I32EnumAttrCase<"wgrad", 2>
    ]> {
  let cppNamespace = "::mlir::mxfp4";
  let genSpecializedAttr = 0;
}
def MXFP4_GemmRoleAttr : EnumAttr<MXFP4_Dialect, MXFP4_GemmRole, "gemm_role">;

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def MXFP4_GemmAttr : AttrDef<MXFP4_Dialect, "Gemm"> {
  let mnemonic = "gemm";
  let summary = "the role and layer of a linear-layer GEMM";
  let description = [{
    Tags a 2-D contraction (`linalg.matmul`) of a training step as one of the
    three GEMMs of a linear layer, so the recipe passes know which operand is
    which without guessing:

    | role    | computes          | lhs           | rhs        | reduction |
    |---------|-------------------|---------------|------------|-----------|
    | `fprop` | Y = X * W^T       | input X       | weight W   | K         |
    | `dgrad` | dX = dY * W       | grad output dY| weight W   | N         |
    | `wgrad` | dW = dY^T * X     | grad output dY| input X    | tokens    |

    `layer` names the linear layer (Hugging Face module path); it keys the
    seeds of stochastic rounding and random rotations, so it must be unique
    per layer. Builders attach it as the discardable attribute `mxfp4.gemm`:

    ```mlir
    %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                        affine_map<(m, n, k) -> (n, k)>,
                                        affine_map<(m, n, k) -> (m, n)>]
        {mxfp4.gemm = #mxfp4.gemm<fprop, "layers.0.mlp.up_proj">}
        ins(%x, %w : tensor<64x128xf32>, tensor<256x128xf32>)
        outs(%zero : tensor<64x256xf32>) -> tensor<64x256xf32>
    ```
  }];
  let parameters = (ins EnumParameter<MXFP4_GemmRole>:$role,
                        StringRefParameter<"layer name">:$layer);
  let assemblyFormat = "`<` $role `,` $layer `>`";
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def MXFP4_HighPrecisionTensor : RankedTensorOf<[F32, BF16]>;
def MXFP4_ValuesTensor : RankedTensorOf<[F4E2M1FN]>;
def MXFP4_ScalesTensor : RankedTensorOf<[F8E8M0FNU]>;
def MXFP4_MatrixValues : 2DTensorOf<[F4E2M1FN]>;
def MXFP4_MatrixScales : 2DTensorOf<[F8E8M0FNU]>;
def MXFP4_MatrixResult : 2DTensorOf<[F32, BF16]>;

#endif // MXFP4_DIALECT_MXFP4_IR_MXFP4BASE_TD
