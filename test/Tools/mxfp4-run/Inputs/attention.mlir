// Causal attention forward and backward (batch 1, 2 KV heads of 2 query
// heads, seq 256, head dim 128) as the Llama builder's composites; their
// bodies are stand-ins, since under --gemm-precision=bf16 the fused kernels
// of convert-attention-to-amdgpu replace the calls.
func.func @attention(%q: tensor<1x256x4x128xf32>, %k: tensor<1x256x2x128xf32>, %v: tensor<1x256x2x128xf32>, %do: tensor<1x256x4x128xf32>) -> (tensor<1x256x4x128xf32>, tensor<1x256x4x128xf32>, tensor<1x256x2x128xf32>, tensor<1x256x2x128xf32>) {
  %o, %lse = call @fwd(%q, %k, %v) : (tensor<1x256x4x128xf32>, tensor<1x256x2x128xf32>, tensor<1x256x2x128xf32>) -> (tensor<1x256x4x128xf32>, tensor<1x4x256xf32>)
  %dq, %dk, %dv = call @bwd(%q, %k, %v, %o, %lse, %do) : (tensor<1x256x4x128xf32>, tensor<1x256x2x128xf32>, tensor<1x256x2x128xf32>, tensor<1x256x4x128xf32>, tensor<1x4x256xf32>, tensor<1x256x4x128xf32>) -> (tensor<1x256x4x128xf32>, tensor<1x256x2x128xf32>, tensor<1x256x2x128xf32>)
  return %o, %dq, %dk, %dv : tensor<1x256x4x128xf32>, tensor<1x256x4x128xf32>, tensor<1x256x2x128xf32>, tensor<1x256x2x128xf32>
}
func.func private @fwd(%q: tensor<1x256x4x128xf32>, %k: tensor<1x256x2x128xf32>, %v: tensor<1x256x2x128xf32>) -> (tensor<1x256x4x128xf32>, tensor<1x4x256xf32>) attributes {mxfp4.composite = "causal_attention"} {
  %e = tensor.empty() : tensor<1x4x256xf32>
  return %q, %e : tensor<1x256x4x128xf32>, tensor<1x4x256xf32>
}
func.func private @bwd(%q: tensor<1x256x4x128xf32>, %k: tensor<1x256x2x128xf32>, %v: tensor<1x256x2x128xf32>, %o: tensor<1x256x4x128xf32>, %lse: tensor<1x4x256xf32>, %do: tensor<1x256x4x128xf32>) -> (tensor<1x256x4x128xf32>, tensor<1x256x2x128xf32>, tensor<1x256x2x128xf32>) attributes {mxfp4.composite = "causal_attention_backward"} {
  return %do, %k, %v : tensor<1x256x4x128xf32>, tensor<1x256x2x128xf32>, tensor<1x256x2x128xf32>
}
