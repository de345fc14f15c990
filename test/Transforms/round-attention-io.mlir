// RUN: mxfp4-opt %s --split-input-file --mxfp4-round-attention-io | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>

// Operands are rounded where they are made: q after the elementwise op
// that computes it (the reshape replayed on bf16), k, v and dO where they
// come in. The forward and backward calls share the roundings, and the
// backward reads the forward's bf16 o. Results are read as bf16: a generic
// reader (through a reshape) widens in its body, a return through a shared
// widening. The log-sum-exp stays f32; the f32 composites, no longer
// called, go.
// CHECK-LABEL: func.func @layer
// CHECK-SAME: (%[[X:[^:]*]]: tensor<256x256xf32>, %[[K:[^:]*]]: tensor<2x128x2x64xf32>, %[[V:[^:]*]]: tensor<2x128x2x64xf32>, %[[DO:[^:]*]]: tensor<2x128x4x64xf32>)
// CHECK-DAG: %[[DOH:.*]] = linalg.generic {{.*}} ins(%[[DO]] : tensor<2x128x4x64xf32>) outs(%{{.*}} : tensor<2x128x4x64xbf16>)
// CHECK-DAG: %[[KH:.*]] = linalg.generic {{.*}} ins(%[[K]] : tensor<2x128x2x64xf32>) outs(%{{.*}} : tensor<2x128x2x64xbf16>)
// CHECK-DAG: %[[VH:.*]] = linalg.generic {{.*}} ins(%[[V]] : tensor<2x128x2x64xf32>) outs(%{{.*}} : tensor<2x128x2x64xbf16>)
// CHECK: %[[QX:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<256x256xf32>)
// CHECK: arith.negf
// CHECK: %[[QH:.*]] = linalg.generic {{.*}} ins(%[[QX]] : tensor<256x256xf32>) outs(%{{.*}} : tensor<256x256xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[Q:.*]] = tensor.expand_shape %[[QH]] {{\[}}[0, 1], [2, 3]] output_shape [2, 128, 4, 64] : tensor<256x256xbf16> into tensor<2x128x4x64xbf16>
// CHECK: %[[O:.*]]:2 = call @attn_bf16io(%[[Q]], %[[KH]], %[[VH]]) : (tensor<2x128x4x64xbf16>, tensor<2x128x2x64xbf16>, tensor<2x128x2x64xbf16>) -> (tensor<2x128x4x64xbf16>, tensor<2x4x128xf32>)
// CHECK: %[[OR:.*]] = tensor.collapse_shape %[[O]]#0 {{.*}} : tensor<2x128x4x64xbf16> into tensor<256x256xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[OR]] : tensor<256x256xbf16>) outs(%{{.*}} : tensor<256x256xf32>)
// CHECK-NEXT: ^bb0(%[[E:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT: %[[EW:.*]] = arith.extf %[[E]] : bf16 to f32
// CHECK-NEXT: arith.mulf %[[EW]], %[[EW]] : f32
// CHECK: %[[G:.*]]:3 = call @attn_bwd_bf16io(%[[Q]], %[[KH]], %[[VH]], %[[O]]#0, %[[O]]#1, %[[DOH]]) : (tensor<2x128x4x64xbf16>, tensor<2x128x2x64xbf16>, tensor<2x128x2x64xbf16>, tensor<2x128x4x64xbf16>, tensor<2x4x128xf32>, tensor<2x128x4x64xbf16>) -> (tensor<2x128x4x64xbf16>, tensor<2x128x2x64xbf16>, tensor<2x128x2x64xbf16>)
// CHECK: %[[DQ:.*]] = linalg.generic {{.*}} ins(%[[G]]#0 : tensor<2x128x4x64xbf16>) outs(%{{.*}} : tensor<2x128x4x64xf32>)
// CHECK: arith.extf
// CHECK: return %{{.*}}, %[[DQ]]
// CHECK-NOT: func.func private @attn(
// CHECK-LABEL: func.func private @attn_bf16io
// CHECK-SAME: (%[[BQ:[^:]*]]: tensor<2x128x4x64xbf16>, %{{[^:]*}}: tensor<2x128x2x64xbf16>, %{{[^:]*}}: tensor<2x128x2x64xbf16>) -> (tensor<2x128x4x64xbf16>, tensor<2x4x128xf32>) attributes {mxfp4.composite = "causal_attention"}
// CHECK: %[[BQF:.*]] = linalg.generic {{.*}} ins(%[[BQ]] : tensor<2x128x4x64xbf16>) outs(%{{.*}} : tensor<2x128x4x64xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[BO:.*]] = linalg.generic {{.*}} ins(%[[BQF]] : tensor<2x128x4x64xf32>) outs(%{{.*}} : tensor<2x128x4x64xbf16>)
// CHECK: return %[[BO]], %{{.*}} : tensor<2x128x4x64xbf16>, tensor<2x4x128xf32>
// CHECK-NOT: func.func private @attn_bwd(
// CHECK-LABEL: func.func private @attn_bwd_bf16io
// CHECK-SAME: attributes {mxfp4.composite = "causal_attention_backward"}
func.func @layer(%x: tensor<256x256xf32>, %k: tensor<2x128x2x64xf32>, %v: tensor<2x128x2x64xf32>, %dout: tensor<2x128x4x64xf32>) -> (tensor<256x256xf32>, tensor<2x128x4x64xf32>) {
  %e = tensor.empty() : tensor<256x256xf32>
  %qx = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<256x256xf32>) outs(%e : tensor<256x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<256x256xf32>
  %q = tensor.expand_shape %qx [[0, 1], [2, 3]] output_shape [2, 128, 4, 64] : tensor<256x256xf32> into tensor<2x128x4x64xf32>
  %o, %lse = call @attn(%q, %k, %v) : (tensor<2x128x4x64xf32>, tensor<2x128x2x64xf32>, tensor<2x128x2x64xf32>) -> (tensor<2x128x4x64xf32>, tensor<2x4x128xf32>)
  %orows = tensor.collapse_shape %o [[0, 1], [2, 3]] : tensor<2x128x4x64xf32> into tensor<256x256xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%orows : tensor<256x256xf32>) outs(%e : tensor<256x256xf32>) {
  ^bb0(%a: f32, %o2: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<256x256xf32>
  %dq, %dk, %dv = call @attn_bwd(%q, %k, %v, %o, %lse, %dout) : (tensor<2x128x4x64xf32>, tensor<2x128x2x64xf32>, tensor<2x128x2x64xf32>, tensor<2x128x4x64xf32>, tensor<2x4x128xf32>, tensor<2x128x4x64xf32>) -> (tensor<2x128x4x64xf32>, tensor<2x128x2x64xf32>, tensor<2x128x2x64xf32>)
  return %sq, %dq : tensor<256x256xf32>, tensor<2x128x4x64xf32>
}
// Stand-in bodies.
func.func private @attn(%q: tensor<2x128x4x64xf32>, %k: tensor<2x128x2x64xf32>, %v: tensor<2x128x2x64xf32>) -> (tensor<2x128x4x64xf32>, tensor<2x4x128xf32>) attributes {mxfp4.composite = "causal_attention"} {
  %lse = tensor.empty() : tensor<2x4x128xf32>
  return %q, %lse : tensor<2x128x4x64xf32>, tensor<2x4x128xf32>
}
func.func private @attn_bwd(%q: tensor<2x128x4x64xf32>, %k: tensor<2x128x2x64xf32>, %v: tensor<2x128x2x64xf32>, %o: tensor<2x128x4x64xf32>, %lse: tensor<2x4x128xf32>, %do: tensor<2x128x4x64xf32>) -> (tensor<2x128x4x64xf32>, tensor<2x128x2x64xf32>, tensor<2x128x2x64xf32>) attributes {mxfp4.composite = "causal_attention_backward"} {
  return %do, %k, %v : tensor<2x128x4x64xf32>, tensor<2x128x2x64xf32>, tensor<2x128x2x64xf32>
}

// -----

// Calls of other functions, and calls inside composites, stay.
// CHECK-LABEL: func.func @other
// CHECK: call @plain(%arg0)
// CHECK: func.func private @outer
// CHECK: call @attn(%arg0, %arg1, %arg2)
func.func @other(%q: tensor<2x128x4x64xf32>) -> tensor<2x128x4x64xf32> {
  %r = call @plain(%q) : (tensor<2x128x4x64xf32>) -> tensor<2x128x4x64xf32>
  return %r : tensor<2x128x4x64xf32>
}
func.func private @plain(%q: tensor<2x128x4x64xf32>) -> tensor<2x128x4x64xf32>
func.func private @outer(%q: tensor<2x128x4x64xf32>, %k: tensor<2x128x2x64xf32>, %v: tensor<2x128x2x64xf32>) -> (tensor<2x128x4x64xf32>, tensor<2x4x128xf32>) attributes {mxfp4.composite = "outer"} {
  %o, %lse = call @attn(%q, %k, %v) : (tensor<2x128x4x64xf32>, tensor<2x128x2x64xf32>, tensor<2x128x2x64xf32>) -> (tensor<2x128x4x64xf32>, tensor<2x4x128xf32>)
  return %o, %lse : tensor<2x128x4x64xf32>, tensor<2x4x128xf32>
}
func.func private @attn(%q: tensor<2x128x4x64xf32>, %k: tensor<2x128x2x64xf32>, %v: tensor<2x128x2x64xf32>) -> (tensor<2x128x4x64xf32>, tensor<2x4x128xf32>) attributes {mxfp4.composite = "causal_attention"} {
  %lse = tensor.empty() : tensor<2x4x128xf32>
  return %q, %lse : tensor<2x128x4x64xf32>, tensor<2x4x128xf32>
}

// -----

#id = affine_map<(a, b, c, d) -> (a, b, c, d)>

// A model that already holds q, k, v as bf16 and wants o as bf16 (the
// benchmark's wrapper): the widening of q goes (the call reads the bf16
// argument), and so does the rounding of o (the call's bf16 result is
// returned); k and v are rounded where they come in.
// CHECK-LABEL: func.func @narrow
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<2x128x4x64xbf16>, %[[K:[^:]*]]: tensor<2x128x2x64xf32>, %[[V:[^:]*]]: tensor<2x128x2x64xf32>)
// CHECK-NOT: ins(%[[Q]]
// CHECK: %[[O:.*]]:2 = call @attn_bf16io(%[[Q]], %{{.*}}, %{{.*}}) : (tensor<2x128x4x64xbf16>, tensor<2x128x2x64xbf16>, tensor<2x128x2x64xbf16>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[O]]#0, %[[O]]#1 : tensor<2x128x4x64xbf16>, tensor<2x4x128xf32>
func.func @narrow(%qh: tensor<2x128x4x64xbf16>, %k: tensor<2x128x2x64xf32>, %v: tensor<2x128x2x64xf32>) -> (tensor<2x128x4x64xbf16>, tensor<2x4x128xf32>) {
  %e = tensor.empty() : tensor<2x128x4x64xf32>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%qh : tensor<2x128x4x64xbf16>) outs(%e : tensor<2x128x4x64xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %w = arith.extf %a : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<2x128x4x64xf32>
  %o, %lse = call @attn(%q, %k, %v) : (tensor<2x128x4x64xf32>, tensor<2x128x2x64xf32>, tensor<2x128x2x64xf32>) -> (tensor<2x128x4x64xf32>, tensor<2x4x128xf32>)
  %eh = tensor.empty() : tensor<2x128x4x64xbf16>
  %oh = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%o : tensor<2x128x4x64xf32>) outs(%eh : tensor<2x128x4x64xbf16>) {
  ^bb0(%a: f32, %b: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x128x4x64xbf16>
  return %oh, %lse : tensor<2x128x4x64xbf16>, tensor<2x4x128xf32>
}
func.func private @attn(%q: tensor<2x128x4x64xf32>, %k: tensor<2x128x2x64xf32>, %v: tensor<2x128x2x64xf32>) -> (tensor<2x128x4x64xf32>, tensor<2x4x128xf32>) attributes {mxfp4.composite = "causal_attention"} {
  %lse = tensor.empty() : tensor<2x4x128xf32>
  return %q, %lse : tensor<2x128x4x64xf32>, tensor<2x4x128xf32>
}
