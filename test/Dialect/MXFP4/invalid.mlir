// RUN: mxfp4-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// quantize
//===----------------------------------------------------------------------===//

func.func @quantize_axis_out_of_range(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'mxfp4.quantize' op axis 2 is out of range for a tensor of rank 2}}
  %v, %s = mxfp4.quantize %x axis = 2 : tensor<4x64xf32> -> tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
  return
}

// -----

func.func @quantize_axis_negative(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'mxfp4.quantize' op axis -1 is out of range for a tensor of rank 2}}
  %v, %s = mxfp4.quantize %x axis = -1 : tensor<4x64xf32> -> tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
  return
}

// -----

func.func @quantize_rank_zero(%x: tensor<f32>) {
  // expected-error @+1 {{'mxfp4.quantize' op needs a tensor of rank at least 1}}
  %v, %s = mxfp4.quantize %x axis = 0 : tensor<f32> -> tensor<f4E2M1FN>, tensor<f8E8M0FNU>
  return
}

// -----

func.func @quantize_block_not_multiple(%x: tensor<4x48xf32>) {
  // expected-error @+1 {{'mxfp4.quantize' op dimension 1 (size 48) is not a multiple of the block size 32}}
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<4x48xf32> -> tensor<4x48xf4E2M1FN>, tensor<4x1xf8E8M0FNU>
  return
}

// -----

func.func @quantize_blocked_dim_dynamic(%x: tensor<4x?xf32>) {
  // expected-error @+1 {{'mxfp4.quantize' op dimension 1 is blocked and must be static}}
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<4x?xf32> -> tensor<4x?xf4E2M1FN>, tensor<4x?xf8E8M0FNU>
  return
}

// -----

func.func @quantize_unsupported_block_size(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'mxfp4.quantize' op block_size 16 is not supported; MXFP4 blocks have 32 elements}}
  %v, %s = mxfp4.quantize %x axis = 1 block_size = 16 : tensor<4x64xf32> -> tensor<4x64xf4E2M1FN>, tensor<4x4xf8E8M0FNU>
  return
}

// -----

func.func @quantize_values_shape(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'mxfp4.quantize' op values shape [4, 32] does not match input shape [4, 64]}}
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<4x64xf32> -> tensor<4x32xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
  return
}

// -----

func.func @quantize_scales_shape(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'mxfp4.quantize' op scales shape [4, 3] does not match [4, 2] (dimension 1 divided by the block size 32)}}
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<4x64xf32> -> tensor<4x64xf4E2M1FN>, tensor<4x3xf8E8M0FNU>
  return
}

// -----

// Scales blocked along the wrong axis.
func.func @quantize_scales_wrong_axis(%x: tensor<64x64xf32>) {
  // expected-error @+1 {{'mxfp4.quantize' op scales shape [2, 64] does not match [64, 2] (dimension 1 divided by the block size 32)}}
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<64x64xf32> -> tensor<64x64xf4E2M1FN>, tensor<2x64xf8E8M0FNU>
  return
}

// -----

func.func @quantize_input_type(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{'mxfp4.quantize' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type values, but got 'tensor<4x64xf16>'}}
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<4x64xf16> -> tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
  return
}

// -----

func.func @quantize_values_type(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'mxfp4.quantize' op result #0 must be ranked tensor of f4E2M1FN type values, but got 'tensor<4x64xi4>'}}
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<4x64xf32> -> tensor<4x64xi4>, tensor<4x2xf8E8M0FNU>
  return
}

// -----

func.func @quantize_scales_type(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'mxfp4.quantize' op result #1 must be ranked tensor of f8E8M0FNU type values, but got 'tensor<4x2xi8>'}}
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<4x64xf32> -> tensor<4x64xf4E2M1FN>, tensor<4x2xi8>
  return
}

// -----

func.func @quantize_stochastic_without_seed(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'mxfp4.quantize' op stochastic rounding needs seed and counter operands}}
  %v, %s = mxfp4.quantize %x axis = 1 rounding = stochastic : tensor<4x64xf32> -> tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
  return
}

// -----

func.func @quantize_stochastic_without_counter(%x: tensor<4x64xf32>, %seed: i64) {
  // expected-error @+1 {{'mxfp4.quantize' op stochastic rounding needs seed and counter operands}}
  %v, %s = mxfp4.quantize %x axis = 1 rounding = stochastic seed(%seed) : tensor<4x64xf32> -> tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
  return
}

// -----

func.func @quantize_seed_without_stochastic(%x: tensor<4x64xf32>, %seed: i64) {
  // expected-error @+1 {{'mxfp4.quantize' op seed and counter are only allowed with stochastic rounding}}
  %v, %s = mxfp4.quantize %x axis = 1 seed(%seed) counter(%seed) : tensor<4x64xf32> -> tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
  return
}

// -----

func.func @quantize_seed_type(%x: tensor<4x64xf32>, %seed: i32) {
  // expected-error @+1 {{'mxfp4.quantize' op operand #1 must be 64-bit signless integer, but got 'i32'}}
  %v:2 = "mxfp4.quantize"(%x, %seed, %seed) <{axis = 1 : i64, rounding = #mxfp4<rounding stochastic>, operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<4x64xf32>, i32, i32) -> (tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>)
  return
}

// -----

func.func @quantize_unknown_scale_rule(%x: tensor<4x64xf32>) {
  // expected-error @+2 {{expected ::mlir::mxfp4::ScaleRule to be one of: floor, even, ceil, rceil}}
  // expected-error @+1 {{failed to parse MXFP4_ScaleRuleAttr}}
  %v, %s = mxfp4.quantize %x axis = 1 scale_rule = nearest : tensor<4x64xf32> -> tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU>
  return
}

// -----

//===----------------------------------------------------------------------===//
// dequantize
//===----------------------------------------------------------------------===//

func.func @dequantize_axis_out_of_range(%v: tensor<4x64xf4E2M1FN>, %s: tensor<4x2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxfp4.dequantize' op axis 5 is out of range for a tensor of rank 2}}
  %x = mxfp4.dequantize %v scale %s axis = 5 : tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU> -> tensor<4x64xf32>
  return
}

// -----

func.func @dequantize_block_not_multiple(%v: tensor<4x40xf4E2M1FN>, %s: tensor<4x1xf8E8M0FNU>) {
  // expected-error @+1 {{'mxfp4.dequantize' op dimension 1 (size 40) is not a multiple of the block size 32}}
  %x = mxfp4.dequantize %v scale %s axis = 1 : tensor<4x40xf4E2M1FN>, tensor<4x1xf8E8M0FNU> -> tensor<4x40xf32>
  return
}

// -----

func.func @dequantize_unsupported_block_size(%v: tensor<4x64xf4E2M1FN>, %s: tensor<4x1xf8E8M0FNU>) {
  // expected-error @+1 {{'mxfp4.dequantize' op block_size 64 is not supported; MXFP4 blocks have 32 elements}}
  %x = mxfp4.dequantize %v scale %s axis = 1 block_size = 64 : tensor<4x64xf4E2M1FN>, tensor<4x1xf8E8M0FNU> -> tensor<4x64xf32>
  return
}

// -----

func.func @dequantize_scales_shape(%v: tensor<64x8xf4E2M1FN>, %s: tensor<64x1xf8E8M0FNU>) {
  // expected-error @+1 {{'mxfp4.dequantize' op scales shape [64, 1] does not match [2, 8] (dimension 0 divided by the block size 32)}}
  %x = mxfp4.dequantize %v scale %s axis = 0 : tensor<64x8xf4E2M1FN>, tensor<64x1xf8E8M0FNU> -> tensor<64x8xf32>
  return
}

// -----

func.func @dequantize_result_shape(%v: tensor<4x64xf4E2M1FN>, %s: tensor<4x2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxfp4.dequantize' op result shape [64, 4] does not match values shape [4, 64]}}
  %x = mxfp4.dequantize %v scale %s axis = 1 : tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU> -> tensor<64x4xf32>
  return
}

// -----

func.func @dequantize_result_type(%v: tensor<4x64xf4E2M1FN>, %s: tensor<4x2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxfp4.dequantize' op result #0 must be ranked tensor of 32-bit float or bfloat16 type values, but got 'tensor<4x64xf64>'}}
  %x = mxfp4.dequantize %v scale %s axis = 1 : tensor<4x64xf4E2M1FN>, tensor<4x2xf8E8M0FNU> -> tensor<4x64xf64>
  return
}

// -----

func.func @dequantize_values_type(%v: tensor<4x64xf8E4M3FN>, %s: tensor<4x2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxfp4.dequantize' op operand #0 must be ranked tensor of f4E2M1FN type values, but got 'tensor<4x64xf8E4M3FN>'}}
  %x = mxfp4.dequantize %v scale %s axis = 1 : tensor<4x64xf8E4M3FN>, tensor<4x2xf8E8M0FNU> -> tensor<4x64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// hadamard
//===----------------------------------------------------------------------===//

func.func @hadamard_unsupported_size(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'mxfp4.hadamard' op size 8 is not supported; expected 16, 32, 64 or 128}}
  %y = mxfp4.hadamard %x axis = 1 size = 8 : tensor<4x64xf32>
  return
}

// -----

func.func @hadamard_axis_out_of_range(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'mxfp4.hadamard' op axis 2 is out of range for a tensor of rank 2}}
  %y = mxfp4.hadamard %x axis = 2 size = 16 : tensor<4x64xf32>
  return
}

// -----

func.func @hadamard_not_multiple(%x: tensor<4x96xf32>) {
  // expected-error @+1 {{'mxfp4.hadamard' op dimension 1 (size 96) is not a multiple of the Hadamard size 64}}
  %y = mxfp4.hadamard %x axis = 1 size = 64 : tensor<4x96xf32>
  return
}

// -----

func.func @hadamard_dynamic_axis(%x: tensor<4x?xbf16>) {
  // expected-error @+1 {{'mxfp4.hadamard' op dimension 1 is blocked and must be static}}
  %y = mxfp4.hadamard %x axis = 1 size = 16 : tensor<4x?xbf16>
  return
}

// -----

func.func @hadamard_deterministic_with_seed(%x: tensor<4x64xf32>, %seed: i64) {
  // expected-error @+1 {{'mxfp4.hadamard' op a deterministic rotation takes no seed or step}}
  %y = mxfp4.hadamard %x axis = 1 size = 16 seed(%seed) : tensor<4x64xf32>
  return
}

// -----

func.func @hadamard_random_fixed_without_seed(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'mxfp4.hadamard' op a random_fixed rotation needs a seed and takes no step}}
  %y = mxfp4.hadamard %x axis = 1 size = 16 kind = random_fixed : tensor<4x64xf32>
  return
}

// -----

func.func @hadamard_random_fixed_with_step(%x: tensor<4x64xf32>, %seed: i64) {
  // expected-error @+1 {{'mxfp4.hadamard' op a random_fixed rotation needs a seed and takes no step}}
  %y = mxfp4.hadamard %x axis = 1 size = 16 kind = random_fixed seed(%seed) step(%seed) : tensor<4x64xf32>
  return
}

// -----

func.func @hadamard_random_per_step_without_step(%x: tensor<4x64xf32>, %seed: i64) {
  // expected-error @+1 {{'mxfp4.hadamard' op a random_per_step rotation needs a seed and a step}}
  %y = mxfp4.hadamard %x axis = 1 size = 16 kind = random_per_step seed(%seed) : tensor<4x64xf32>
  return
}

// -----

func.func @hadamard_element_type(%x: tensor<4x64xf16>) {
  // expected-error @+1 {{'mxfp4.hadamard' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type values, but got 'tensor<4x64xf16>'}}
  %y = mxfp4.hadamard %x axis = 1 size = 16 : tensor<4x64xf16>
  return
}

// -----

func.func @hadamard_result_type(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'mxfp4.hadamard' op failed to verify that all of {input, result} have same type}}
  %y = "mxfp4.hadamard"(%x) <{axis = 1 : i64, size = 16 : i64, operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<4x64xf32>) -> tensor<4x64xbf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// scaled_matmul
//===----------------------------------------------------------------------===//

func.func @scaled_matmul_k_mismatch(%a: tensor<16x64xf4E2M1FN>, %as: tensor<16x2xf8E8M0FNU>, %b: tensor<8x96xf4E2M1FN>, %bs: tensor<8x3xf8E8M0FNU>) {
  // expected-error @+1 {{'mxfp4.scaled_matmul' op K mismatch: lhs is [16, 64] and rhs is [8, 96]; both operands must be [rows, K] with the same K}}
  %c = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<16x64xf4E2M1FN>, tensor<16x2xf8E8M0FNU>, tensor<8x96xf4E2M1FN>, tensor<8x3xf8E8M0FNU> -> tensor<16x8xf32>
  return
}

// -----

func.func @scaled_matmul_k_not_multiple(%a: tensor<16x48xf4E2M1FN>, %as: tensor<16x1xf8E8M0FNU>, %b: tensor<8x48xf4E2M1FN>, %bs: tensor<8x1xf8E8M0FNU>) {
  // expected-error @+1 {{'mxfp4.scaled_matmul' op K = 48 is not a multiple of the block size 32}}
  %c = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<16x48xf4E2M1FN>, tensor<16x1xf8E8M0FNU>, tensor<8x48xf4E2M1FN>, tensor<8x1xf8E8M0FNU> -> tensor<16x8xf32>
  return
}

// -----

func.func @scaled_matmul_k_dynamic(%a: tensor<16x?xf4E2M1FN>, %as: tensor<16x2xf8E8M0FNU>, %b: tensor<8x?xf4E2M1FN>, %bs: tensor<8x2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxfp4.scaled_matmul' op the reduction dimension K must be static}}
  %c = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<16x?xf4E2M1FN>, tensor<16x2xf8E8M0FNU>, tensor<8x?xf4E2M1FN>, tensor<8x2xf8E8M0FNU> -> tensor<16x8xf32>
  return
}

// -----

// The lhs scales are blocked along M, not K: a Dgrad/Wgrad operand that was
// not put in canonical form.
func.func @scaled_matmul_lhs_scale_wrong_axis(%a: tensor<64x64xf4E2M1FN>, %as: tensor<2x64xf8E8M0FNU>, %b: tensor<8x64xf4E2M1FN>, %bs: tensor<8x2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxfp4.scaled_matmul' op lhs_scale shape [2, 64] does not match [64, 2] ([rows, K/32]: operands are blocked along K)}}
  %c = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<64x64xf4E2M1FN>, tensor<2x64xf8E8M0FNU>, tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU> -> tensor<64x8xf32>
  return
}

// -----

func.func @scaled_matmul_rhs_scale_shape(%a: tensor<16x64xf4E2M1FN>, %as: tensor<16x2xf8E8M0FNU>, %b: tensor<8x64xf4E2M1FN>, %bs: tensor<8x1xf8E8M0FNU>) {
  // expected-error @+1 {{'mxfp4.scaled_matmul' op rhs_scale shape [8, 1] does not match [8, 2] ([rows, K/32]: operands are blocked along K)}}
  %c = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<16x64xf4E2M1FN>, tensor<16x2xf8E8M0FNU>, tensor<8x64xf4E2M1FN>, tensor<8x1xf8E8M0FNU> -> tensor<16x8xf32>
  return
}

// -----

func.func @scaled_matmul_result_shape(%a: tensor<16x64xf4E2M1FN>, %as: tensor<16x2xf8E8M0FNU>, %b: tensor<8x64xf4E2M1FN>, %bs: tensor<8x2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxfp4.scaled_matmul' op result shape [8, 16] does not match [M, N] = [16, 8]}}
  %c = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<16x64xf4E2M1FN>, tensor<16x2xf8E8M0FNU>, tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU> -> tensor<8x16xf32>
  return
}

// -----

func.func @scaled_matmul_result_type(%a: tensor<16x64xf4E2M1FN>, %as: tensor<16x2xf8E8M0FNU>, %b: tensor<8x64xf4E2M1FN>, %bs: tensor<8x2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxfp4.scaled_matmul' op result #0 must be 2D tensor of 32-bit float or bfloat16 type values, but got 'tensor<16x8xf16>'}}
  %c = "mxfp4.scaled_matmul"(%a, %as, %b, %bs) : (tensor<16x64xf4E2M1FN>, tensor<16x2xf8E8M0FNU>, tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU>) -> tensor<16x8xf16>
  return
}

// -----

func.func @scaled_matmul_operand_rank(%a: tensor<2x16x64xf4E2M1FN>, %as: tensor<2x16x2xf8E8M0FNU>, %b: tensor<8x64xf4E2M1FN>, %bs: tensor<8x2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxfp4.scaled_matmul' op operand #0 must be 2D tensor of f4E2M1FN type values, but got 'tensor<2x16x64xf4E2M1FN>'}}
  %c = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<2x16x64xf4E2M1FN>, tensor<2x16x2xf8E8M0FNU>, tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU> -> tensor<16x8xf32>
  return
}

// -----

func.func @scaled_matmul_scale_type(%a: tensor<16x64xf4E2M1FN>, %as: tensor<16x2xi8>, %b: tensor<8x64xf4E2M1FN>, %bs: tensor<8x2xf8E8M0FNU>) {
  // expected-error @+1 {{'mxfp4.scaled_matmul' op operand #1 must be 2D tensor of f8E8M0FNU type values, but got 'tensor<16x2xi8>'}}
  %c = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<16x64xf4E2M1FN>, tensor<16x2xi8>, tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU> -> tensor<16x8xf32>
  return
}

// -----

func.func @scaled_matmul_acc_type(%a: tensor<16x64xf4E2M1FN>, %as: tensor<16x2xf8E8M0FNU>, %b: tensor<8x64xf4E2M1FN>, %bs: tensor<8x2xf8E8M0FNU>, %c: tensor<16x8xbf16>) {
  // expected-error @+1 {{'mxfp4.scaled_matmul' op failed to verify that accumulator type matches result type}}
  %d = "mxfp4.scaled_matmul"(%a, %as, %b, %bs, %c) : (tensor<16x64xf4E2M1FN>, tensor<16x2xf8E8M0FNU>, tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU>, tensor<16x8xbf16>) -> tensor<16x8xf32>
  return
}

//===----------------------------------------------------------------------===//
// Discardable attributes
//===----------------------------------------------------------------------===//

func.func @gemm_not_a_gemm_attr(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'linalg.matmul' op attribute 'mxfp4.gemm' must be a #mxfp4.gemm, got "fprop"}}
  %0 = linalg.matmul {mxfp4.gemm = "fprop"} ins(%a, %b : tensor<4x8xf32>, tensor<8x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// expected-error @+1 {{'func.func' op attribute 'mxfp4.composite' must be a string, got 3 : i64}}
func.func private @composite_not_a_string() attributes {mxfp4.composite = 3}

// -----

// expected-error @+1 {{'func.func' op attribute 'mxfp4.recipe' must not be empty}}
func.func private @recipe_empty() attributes {mxfp4.recipe = ""}

// -----

func.func @composite_not_on_a_function() {
  // expected-error @+1 {{'arith.constant' op attribute 'mxfp4.composite' belongs on a function}}
  %0 = arith.constant {mxfp4.composite = "causal_attention"} 0 : i32
  return
}

// -----

// expected-error @+1 {{'func.func' op attribute 'mxfp4.telemetry' has 1 names for the rows of the telemetry table, the last result 'tensor<2x7xf32>'}}
func.func private @telemetry_rows() -> tensor<2x7xf32> attributes {mxfp4.telemetry = ["layers.0.fprop"]}

// -----

// expected-error @+1 {{'func.func' op attribute 'mxfp4.telemetry_fields' must be an array of strings}}
func.func private @telemetry_fields_not_strings() -> tensor<1x1xf32> attributes {mxfp4.telemetry_fields = [1]}

// -----

func.func @parallel_not_on_a_loop() {
  // expected-error @+1 {{'arith.constant' op attribute 'mxfp4.parallel' belongs on a loop}}
  %0 = arith.constant {mxfp4.parallel} 0 : i32
  return
}

// -----

// expected-error @+1 {{'func.func' op attribute 'mxfp4.gemm_shape' must be three positive sizes [M, N, K]}}
func.func private @gemm_shape_two_sizes() attributes {mxfp4.gemm_shape = array<i64: 64, 64>}

// -----

// expected-error @+1 {{'func.func' op attribute 'mxfp4.steady_iterations' must be a float of at least 1 (the mean iterations of the kernel's loop)}}
func.func private @steady_iterations_zero() attributes {mxfp4.steady_iterations = 0.0 : f64}

// -----

// expected-error @+1 {{'func.func' op attribute 'mxfp4.steady_iterations' must be a float of at least 1 (the mean iterations of the kernel's loop)}}
func.func private @steady_iterations_integer() attributes {mxfp4.steady_iterations = 3 : i64}

// -----

func.func @steady_iterations_not_on_a_function() {
  // expected-error @+1 {{'arith.constant' op attribute 'mxfp4.steady_iterations' belongs on a function}}
  %0 = arith.constant {mxfp4.steady_iterations = 2.0 : f64} 0 : i32
  return
}

// -----

// expected-error @+1 {{'func.func' op attribute 'mxfp4.parameter' belongs on a function argument}}
func.func private @parameter_on_the_function() attributes {mxfp4.parameter = "w"}

// -----

// expected-error @+1 {{'func.func' op unknown attribute 'mxfp4.gemms' of the mxfp4 dialect}}
func.func private @unknown_attribute() attributes {mxfp4.gemms = 1}

// -----

// expected-error @+1 {{'func.func' op argument attribute 'mxfp4.parameter' must be a parameter's name}}
func.func private @parameter_empty(%w: tensor<4x4xf32> {mxfp4.parameter = ""})

// -----

// expected-error @+1 {{'func.func' op argument attribute 'mxfp4.step' marks the step counter, an integer, not 'f32'}}
func.func private @step_not_an_integer(%s: f32 {mxfp4.step})

// -----

// expected-error @+1 {{'func.func' op argument attribute 'mxfp4.tensor' must be a ranked tensor type}}
func.func private @tensor_not_a_tensor(%b: memref<16xf32> {mxfp4.tensor = f32})

// -----

// expected-error @+1 {{'func.func' op result attribute 'mxfp4.parameter' is not a result attribute of the mxfp4 dialect}}
func.func private @parameter_on_a_result() -> (tensor<4xf32> {mxfp4.parameter = "w"})
