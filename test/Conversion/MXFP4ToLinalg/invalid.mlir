// RUN: mxfp4-opt %s -split-input-file -convert-mxfp4-to-linalg -verify-diagnostics

// Quantized tensors may only flow into mxfp4 ops, calls and returns.
func.func @slice_of_codes(%v: tensor<4x64xf4E2M1FN>) -> tensor<2x64xf4E2M1FN> {
  // expected-error @+1 {{cannot lower 'tensor.extract_slice' on f4E2M1FN or f8E8M0FNU tensors: only mxfp4 ops, calls, returns, constants and scf control flow may carry quantized data}}
  %s = tensor.extract_slice %v[0, 0] [2, 64] [1, 1] : tensor<4x64xf4E2M1FN> to tensor<2x64xf4E2M1FN>
  return %s : tensor<2x64xf4E2M1FN>
}
