// Every input the gfx950 conversion cannot lower is a located error.
// RUN: mxfp4-opt %s --split-input-file --verify-diagnostics --convert-mxfp4-to-amdgpu

func.func @not_mxfp4(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %e = tensor.empty() : tensor<64x64xf32>
  // expected-error @+1 {{gfx950: 'linalg.matmul' has no gfx950 lowering}}
  %c = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}

// -----

// expected-error @+1 {{gfx950: arguments must be tensors of static shape or i64}}
func.func @dynamic(%x: tensor<?x64xf32>) -> tensor<?x2xf8E8M0FNU> {
  %v, %s = mxfp4.quantize %x axis = 1 : tensor<?x64xf32> -> tensor<?x64xf4E2M1FN>, tensor<?x2xf8E8M0FNU>
  return %s : tensor<?x2xf8E8M0FNU>
}

// -----

func.func @leading_axis(%x: tensor<64x64xf32>) -> tensor<2x64xf8E8M0FNU> {
  // expected-error @+1 {{gfx950: quantize along a leading axis; quantize the transpose along its last axis instead}}
  %v, %s = mxfp4.quantize %x axis = 0 : tensor<64x64xf32> -> tensor<64x64xf4E2M1FN>, tensor<2x64xf8E8M0FNU>
  return %s : tensor<2x64xf8E8M0FNU>
}

// -----

func.func @big_rotation(%x: tensor<64x128xf32>) -> tensor<64x4xf8E8M0FNU> {
  // expected-error @+1 {{gfx950: hadamard size 64 is not supported by the fused quantize kernel (16 and 32 are)}}
  %h = mxfp4.hadamard %x axis = 1 size = 64 : tensor<64x128xf32>
  %v, %s = mxfp4.quantize %h axis = 1 : tensor<64x128xf32> -> tensor<64x128xf4E2M1FN>, tensor<64x4xf8E8M0FNU>
  return %s : tensor<64x4xf8E8M0FNU>
}

// -----

func.func @standalone_rotation(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{gfx950: a hadamard must feed quantize ops only (it is fused into them)}}
  %h = mxfp4.hadamard %x axis = 1 size = 16 : tensor<64x64xf32>
  return %h : tensor<64x64xf32>
}

// -----

func.func @transpose_elsewhere(%x: tensor<32x64xf32>) -> tensor<64x32xf32> {
  %e = tensor.empty() : tensor<64x32xf32>
  // expected-error @+1 {{gfx950: a transpose must feed quantize ops (possibly through a hadamard)}}
  %t = linalg.transpose ins(%x : tensor<32x64xf32>) outs(%e : tensor<64x32xf32>) permutation = [1, 0]
  return %t : tensor<64x32xf32>
}
