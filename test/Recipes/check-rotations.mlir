// RUN: mxfp4-opt %s -split-input-file -mxfp4-check-rotations -verify-diagnostics

// Only one operand rotated.
func.func @one_side(%a: tensor<16x64xf32>, %b: tensor<8x64xf32>) -> tensor<16x8xf32> {
  // expected-note @+1 {{rotation here}}
  %ha = mxfp4.hadamard %a axis = 1 size = 16 : tensor<16x64xf32>
  %qa, %sa = mxfp4.quantize %ha axis = 1 : tensor<16x64xf32> -> tensor<16x64xf4E2M1FN>, tensor<16x2xf8E8M0FNU>
  %qb, %sb = mxfp4.quantize %b axis = 1 : tensor<8x64xf32> -> tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU>
  // expected-error @+1 {{the rotations of the operands do not cancel: lhs is rotated by a deterministic H16, rhs is not rotated}}
  %c = mxfp4.scaled_matmul %qa scale %sa, %qb scale %sb : tensor<16x64xf4E2M1FN>, tensor<16x2xf8E8M0FNU>, tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU> -> tensor<16x8xf32>
  return %c : tensor<16x8xf32>
}

// -----

// Different sizes.
func.func @sizes(%a: tensor<16x64xf32>, %b: tensor<8x64xf32>) -> tensor<16x8xf32> {
  // expected-note @+1 {{rotation here}}
  %ha = mxfp4.hadamard %a axis = 1 size = 16 : tensor<16x64xf32>
  // expected-note @+1 {{rotation here}}
  %hb = mxfp4.hadamard %b axis = 1 size = 32 : tensor<8x64xf32>
  %qa, %sa = mxfp4.quantize %ha axis = 1 : tensor<16x64xf32> -> tensor<16x64xf4E2M1FN>, tensor<16x2xf8E8M0FNU>
  %qb, %sb = mxfp4.quantize %hb axis = 1 : tensor<8x64xf32> -> tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU>
  // expected-error @+1 {{the rotations of the operands do not cancel: lhs is rotated by a deterministic H16, rhs is rotated by a deterministic H32}}
  %c = mxfp4.scaled_matmul %qa scale %sa, %qb scale %sb : tensor<16x64xf4E2M1FN>, tensor<16x2xf8E8M0FNU>, tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU> -> tensor<16x8xf32>
  return %c : tensor<16x8xf32>
}

// -----

// Same kind and size, different seeds.
func.func @seeds(%a: tensor<16x64xf32>, %b: tensor<8x64xf32>, %s0: i64, %s1: i64) -> tensor<16x8xf32> {
  // expected-note @+1 {{rotation here}}
  %ha = mxfp4.hadamard %a axis = 1 size = 16 kind = random_fixed seed(%s0) : tensor<16x64xf32>
  // expected-note @+1 {{rotation here}}
  %hb = mxfp4.hadamard %b axis = 1 size = 16 kind = random_fixed seed(%s1) : tensor<8x64xf32>
  %qa, %sa = mxfp4.quantize %ha axis = 1 : tensor<16x64xf32> -> tensor<16x64xf4E2M1FN>, tensor<16x2xf8E8M0FNU>
  %qb, %sb = mxfp4.quantize %hb axis = 1 : tensor<8x64xf32> -> tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU>
  // expected-error @+1 {{the rotations of the operands do not cancel: lhs is rotated by a random_fixed H16 (seed and step values of their own), rhs is rotated by a random_fixed H16 (seed and step values of their own) (their seed or step operands differ)}}
  %c = mxfp4.scaled_matmul %qa scale %sa, %qb scale %sb : tensor<16x64xf4E2M1FN>, tensor<16x2xf8E8M0FNU>, tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU> -> tensor<16x8xf32>
  return %c : tensor<16x8xf32>
}

// -----

// Rotated along the row axis instead of K.
func.func @wrong_axis(%a: tensor<32x64xf32>, %b: tensor<8x64xf32>) -> tensor<32x8xf32> {
  %ha = mxfp4.hadamard %a axis = 0 size = 16 : tensor<32x64xf32>
  %qa, %sa = mxfp4.quantize %ha axis = 1 : tensor<32x64xf32> -> tensor<32x64xf4E2M1FN>, tensor<32x2xf8E8M0FNU>
  %qb, %sb = mxfp4.quantize %b axis = 1 : tensor<8x64xf32> -> tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU>
  // expected-error @+1 {{the lhs operand is rotated along axis 0, not the contraction axis 1: the rotation does not cancel in the product}}
  %c = mxfp4.scaled_matmul %qa scale %sa, %qb scale %sb : tensor<32x64xf4E2M1FN>, tensor<32x2xf8E8M0FNU>, tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU> -> tensor<32x8xf32>
  return %c : tensor<32x8xf32>
}

// -----

// Pre-quantized operands cannot be checked.
func.func @external(%qa: tensor<16x64xf4E2M1FN>, %sa: tensor<16x2xf8E8M0FNU>, %b: tensor<8x64xf32>) -> tensor<16x8xf32> {
  %qb, %sb = mxfp4.quantize %b axis = 1 : tensor<8x64xf32> -> tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU>
  // expected-error @+1 {{cannot prove that the rotations cancel: the lhs values do not come from an mxfp4.quantize in this function (pass allow-external-operands to accept it)}}
  %c = mxfp4.scaled_matmul %qa scale %sa, %qb scale %sb : tensor<16x64xf4E2M1FN>, tensor<16x2xf8E8M0FNU>, tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU> -> tensor<16x8xf32>
  return %c : tensor<16x8xf32>
}

// -----

// Values from one quantization, scales from another.
func.func @mixed(%a: tensor<16x64xf32>, %a2: tensor<16x64xf32>, %b: tensor<8x64xf32>) -> tensor<16x8xf32> {
  %qa, %sa = mxfp4.quantize %a axis = 1 : tensor<16x64xf32> -> tensor<16x64xf4E2M1FN>, tensor<16x2xf8E8M0FNU>
  %qa2, %sa2 = mxfp4.quantize %a2 axis = 1 : tensor<16x64xf32> -> tensor<16x64xf4E2M1FN>, tensor<16x2xf8E8M0FNU>
  %qb, %sb = mxfp4.quantize %b axis = 1 : tensor<8x64xf32> -> tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU>
  // expected-error @+1 {{the lhs values and scales come from different quantizations}}
  %c = mxfp4.scaled_matmul %qa scale %sa2, %qb scale %sb : tensor<16x64xf4E2M1FN>, tensor<16x2xf8E8M0FNU>, tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU> -> tensor<16x8xf32>
  return %c : tensor<16x8xf32>
}
