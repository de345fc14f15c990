// RUN: mxfp4-opt %s -split-input-file -mxfp4-annotate-roles -verify-diagnostics

// Every contraction that reads a parameter (through views: casts,
// transposes, reshapes, broadcasts) or is shaped like one and gets no role
// is named in a remark with the reason; require-roles.mlir makes these
// errors.

// A product of two weights.
func.func @two_parameters(%a: tensor<32x64xf32> {mxfp4.parameter = "a.weight"}, %b: tensor<64x64xf32> {mxfp4.parameter = "b.weight"}) -> tensor<32x64xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  // expected-remark @+1 {{contraction not classified as a linear layer's GEMM (reads parameter "a.weight" and parameter "b.weight"; a linear layer's GEMM reads one weight): left in high precision}}
  %y = linalg.matmul ins(%a, %b : tensor<32x64xf32>, tensor<64x64xf32>) outs(%z : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}

// -----

// Shaped like a weight gradient, but no Fprop or Dgrad of that weight here.
func.func @orphan_wgrad(%w: tensor<32x64xf32> {mxfp4.parameter = "l.weight"}, %dy: tensor<128x32xf32>, %x: tensor<128x64xf32>) -> tensor<32x64xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  // expected-remark @+1 {{contraction not classified as a linear layer's GEMM (shaped like parameter "l.weight", but its operands are no layer's Fprop input or Dgrad output gradient): left in high precision}}
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%dy, %x : tensor<128x32xf32>, tensor<128x64xf32>) outs(%z : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %dw : tensor<32x64xf32>
}

// -----

// Expert weights W[E, N, K]: a grouped GEMM, not a linear layer's.
func.func @expert_weights(%x: tensor<2x64x64xf32>, %w: tensor<2x32x64xf32> {mxfp4.parameter = "experts.weight"}) -> tensor<2x64x32xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x64x32xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
  // expected-remark @+1 {{contraction not classified as a linear layer's GEMM (reads parameter "experts.weight" of rank 3; linear layers have 2-D weights): left in high precision}}
  %y = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>] ins(%x, %w : tensor<2x64x64xf32>, tensor<2x32x64xf32>) outs(%z : tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}

// -----

// A 2-D weight split into a batch: each batch entry reads other rows of W.
func.func @weight_split_into_batch(%x: tensor<2x64x64xf32>, %w: tensor<32x64xf32> {mxfp4.parameter = "l.weight"}) -> tensor<2x64x16xf32> {
  %c0 = arith.constant 0.0 : f32
  %w3 = tensor.expand_shape %w [[0, 1], [2]] output_shape [2, 16, 64] : tensor<32x64xf32> into tensor<2x16x64xf32>
  %e = tensor.empty() : tensor<2x64x16xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<2x64x16xf32>) -> tensor<2x64x16xf32>
  // expected-remark @+1 {{contraction not classified as a linear layer's GEMM (reads parameter "l.weight" with a batch dimension it does not broadcast (a batched GEMM, not a linear layer's)): left in high precision}}
  %y = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>] ins(%x, %w3 : tensor<2x64x64xf32>, tensor<2x16x64xf32>) outs(%z : tensor<2x64x16xf32>) -> tensor<2x64x16xf32>
  return %y : tensor<2x64x16xf32>
}

// -----

// A weight reshaped so that the contracted axis mixes its rows and columns.
func.func @weight_reshaped(%x: tensor<64x32xf32>, %w: tensor<32x64xf32> {mxfp4.parameter = "layers.0.w"}) -> tensor<64x64xf32> {
  %c0 = arith.constant 0.0 : f32
  %flat = tensor.collapse_shape %w [[0, 1]] : tensor<32x64xf32> into tensor<2048xf32>
  %w2 = tensor.expand_shape %flat [[0, 1]] output_shape [64, 32] : tensor<2048xf32> into tensor<64x32xf32>
  %e = tensor.empty() : tensor<64x64xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  // expected-remark @+1 {{contraction not classified as a linear layer's GEMM (reads parameter "layers.0.w" but contracts neither exactly its dimension 1 (an Fprop) nor exactly its dimension 0 (a Dgrad)): left in high precision}}
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w2 : tensor<64x32xf32>, tensor<64x32xf32>) outs(%z : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}

// -----

// A convolution's filter: a contraction, but not a GEMM.
func.func @convolution(%x: tensor<1x66x32xf32>, %w: tensor<3x32x64xf32> {mxfp4.parameter = "conv.weight"}) -> tensor<1x64x64xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x64xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<1x64x64xf32>) -> tensor<1x64x64xf32>
  // expected-remark @+1 {{contraction not classified as a linear layer's GEMM (reads parameter "conv.weight" in a contraction whose indexing maps are not a matrix product's): left in high precision}}
  %y = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>} ins(%x, %w : tensor<1x66x32xf32>, tensor<3x32x64xf32>) outs(%z : tensor<1x64x64xf32>) -> tensor<1x64x64xf32>
  return %y : tensor<1x64x64xf32>
}

// -----

// Attention reads no parameter and is not shaped like one: no remark.
func.func @attention_scores(%q: tensor<4x16x32xf32>, %k: tensor<4x16x32xf32>, %w: tensor<32x64xf32> {mxfp4.parameter = "l.weight"}) -> tensor<4x16x16xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16x16xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>] ins(%q, %k : tensor<4x16x32xf32>, tensor<4x16x32xf32>) outs(%z : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  return %s : tensor<4x16x16xf32>
}

// -----

// Two layers read one X and one dY with weights of one shape: their Wgrads
// cannot be told apart.
func.func @twins(%x: tensor<64x64xf32>, %a: tensor<32x64xf32> {mxfp4.parameter = "a.weight"}, %b: tensor<32x64xf32> {mxfp4.parameter = "b.weight"}, %dy: tensor<64x32xf32>) -> (tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<32x64xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<64x32xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %ya = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %a : tensor<64x64xf32>, tensor<32x64xf32>) outs(%z0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %yb = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %b : tensor<64x64xf32>, tensor<32x64xf32>) outs(%z0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %e1 = tensor.empty() : tensor<64x64xf32>
  %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dxa = linalg.matmul ins(%dy, %a : tensor<64x32xf32>, tensor<32x64xf32>) outs(%z1 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dxb = linalg.matmul ins(%dy, %b : tensor<64x32xf32>, tensor<32x64xf32>) outs(%z1 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %e2 = tensor.empty() : tensor<32x64xf32>
  %z2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<32x64xf32>) -> tensor<32x64xf32>
  // expected-remark @+1 {{contraction not classified as a linear layer's GEMM (shaped like a weight gradient of layers "a", "b", which its operands match equally): left in high precision}}
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%dy, %x : tensor<64x32xf32>, tensor<64x64xf32>) outs(%z2 : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %ya, %yb, %dxa, %dxb, %dw : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<32x64xf32>
}
