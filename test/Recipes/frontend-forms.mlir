// One untagged linear layer (X[T,K] or X[B,S,K], W[N,K] = "layers.0.w.weight",
// dY[T,N] or dY[B,S,N]; T = B*S = 256, K = 512, N = 1024) written the ways
// frontends other than this project's write its Fprop, Dgrad and Wgrad.
// Role inference must find all three GEMMs of every function, and the recipe
// must rewrite each into the scaled_matmul of the canonical form: both
// operands quantized along the GEMM's reduction axis, rotated by the same
// Hadamard. frontend-forms-execution.py runs these functions and checks that
// they compute what @canonical computes, bit for bit, under each recipe.
//
// MLIR 22 has no linalg.matmul_transpose_a / linalg.matmul_transpose_b (they
// do not parse); their replacement, linalg.matmul with indexing_maps, is
// covered here in all four transposition forms.

// RUN: mxfp4-opt %s --mxfp4-annotate-roles | FileCheck %s --check-prefix=ROLES
// RUN: mxfp4-opt %s --mxfp4-apply-recipe=recipe=fp4-all-dht16 --mxfp4-check-rotations --canonicalize --cse | FileCheck %s
// Every contraction is a linear layer's GEMM here: nothing is left for a
// remark, and require-roles accepts the file.
// RUN: mxfp4-opt %s --mxfp4-apply-recipe="recipe=fp4-all-dht16 require-roles=true" -o /dev/null 2>&1 | count 0
// wgrad_input=forward_quantized finds every form's Fprop copy of X: the
// Wgrads read through their own transposes and collapse_shapes of X.
// RUN: mxfp4-opt %s --mxfp4-apply-recipe="recipe=fp4-all-dht16,wgrad_input=forward_quantized" --mxfp4-check-rotations | grep -c mxfp4.dequantize | FileCheck %s --check-prefix=FWD
// FWD: 9
// No high-precision contraction is left (transposes and reshapes remain).
// RUN: mxfp4-opt %s --mxfp4-apply-recipe=recipe=fp4-all-dht16 --canonicalize --cse | FileCheck %s --check-prefix=GONE
// GONE-NOT: linalg.matmul
// GONE-NOT: linalg.batch_matmul
// GONE-NOT: linalg.contract
// GONE-NOT: linalg.generic

// The canonical form all others must match: quantized [T,K] x [N,K],
// [T,N] x [K,N] and [N,T] x [K,T].
// CHECK-LABEL: func.func @canonical(
// CHECK: mxfp4.quantize {{.*}} : tensor<256x512xf32> -> tensor<256x512xf4E2M1FN>
// CHECK: mxfp4.quantize {{.*}} : tensor<1024x512xf32> -> tensor<1024x512xf4E2M1FN>
// CHECK: mxfp4.scaled_matmul {{.*}}<fprop, "layers.0.w">{{.*}} -> tensor<256x1024xf32>
// CHECK: mxfp4.quantize {{.*}} : tensor<256x1024xf32> -> tensor<256x1024xf4E2M1FN>
// CHECK: mxfp4.quantize {{.*}} : tensor<512x1024xf32> -> tensor<512x1024xf4E2M1FN>
// CHECK: mxfp4.scaled_matmul {{.*}}<dgrad, "layers.0.w">{{.*}} -> tensor<256x512xf32>
// CHECK: mxfp4.quantize {{.*}} : tensor<1024x256xf32> -> tensor<1024x256xf4E2M1FN>
// CHECK: mxfp4.quantize {{.*}} : tensor<512x256xf32> -> tensor<512x256xf4E2M1FN>
// CHECK: mxfp4.scaled_matmul {{.*}}<wgrad, "layers.0.w">{{.*}} -> tensor<1024x512xf32>
// ROLES-LABEL: func.func @canonical(
// ROLES: linalg.matmul {{.*}}<fprop, "layers.0.w">
// ROLES: linalg.matmul {{.*}}<dgrad, "layers.0.w">
// ROLES: linalg.matmul {{.*}}<wgrad, "layers.0.w">
func.func @canonical(%x: tensor<256x512xf32>, %w: tensor<1024x512xf32> {mxfp4.parameter = "layers.0.w.weight"}, %dy: tensor<256x1024xf32>, %step: i64 {mxfp4.step}) -> (tensor<256x1024xf32>, tensor<256x512xf32>, tensor<1024x512xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<256x1024xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w : tensor<256x512xf32>, tensor<1024x512xf32>) outs(%z0 : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %e1 = tensor.empty() : tensor<256x512xf32>
  %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<256x512xf32>) -> tensor<256x512xf32>
  %dx = linalg.matmul ins(%dy, %w : tensor<256x1024xf32>, tensor<1024x512xf32>) outs(%z1 : tensor<256x512xf32>) -> tensor<256x512xf32>
  %e2 = tensor.empty() : tensor<1024x512xf32>
  %z2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%dy, %x : tensor<256x1024xf32>, tensor<256x512xf32>) outs(%z2 : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  return %y, %dx, %dw : tensor<256x1024xf32>, tensor<256x512xf32>, tensor<1024x512xf32>
}

// The issue's graph: the Wgrad is an explicit transpose of dY and a plain
// matmul. It used to stay f32 without a word.
// CHECK-LABEL: func.func @transposed_wgrad(
// CHECK: mxfp4.scaled_matmul {{.*}}<fprop, "layers.0.w">
// CHECK: mxfp4.scaled_matmul {{.*}}<dgrad, "layers.0.w">
// CHECK: %[[DYT:.*]] = linalg.transpose ins(%arg2 : tensor<256x1024xf32>) {{.*}} permutation = [1, 0]
// CHECK: %[[XT:.*]] = linalg.transpose ins(%arg0 : tensor<256x512xf32>) {{.*}} permutation = [1, 0]
// CHECK: %[[HDY:.*]] = mxfp4.hadamard %[[DYT]] axis = 1 size = 16 : tensor<1024x256xf32>
// CHECK: %[[QDY:.*]], %[[SDY:.*]] = mxfp4.quantize %[[HDY]] axis = 1 : tensor<1024x256xf32> -> tensor<1024x256xf4E2M1FN>, tensor<1024x8xf8E8M0FNU>
// CHECK: %[[HX:.*]] = mxfp4.hadamard %[[XT]] axis = 1 size = 16 : tensor<512x256xf32>
// CHECK: %[[QX:.*]], %[[SX:.*]] = mxfp4.quantize %[[HX]] axis = 1 : tensor<512x256xf32> -> tensor<512x256xf4E2M1FN>, tensor<512x8xf8E8M0FNU>
// CHECK: mxfp4.scaled_matmul %[[QDY]] scale %[[SDY]], %[[QX]] scale %[[SX]] {mxfp4.gemm = #mxfp4.gemm<wgrad, "layers.0.w">} {{.*}} -> tensor<1024x512xf32>
// ROLES-LABEL: func.func @transposed_wgrad(
// ROLES: linalg.matmul {{.*}}<fprop, "layers.0.w">
// ROLES: linalg.matmul {{.*}}<dgrad, "layers.0.w">
// ROLES: linalg.transpose
// ROLES: linalg.matmul {mxfp4.gemm = #mxfp4.gemm<wgrad, "layers.0.w">}
func.func @transposed_wgrad(%x: tensor<256x512xf32>, %w: tensor<1024x512xf32> {mxfp4.parameter = "layers.0.w.weight"}, %dy: tensor<256x1024xf32>, %step: i64 {mxfp4.step}) -> (tensor<256x1024xf32>, tensor<256x512xf32>, tensor<1024x512xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<256x1024xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w : tensor<256x512xf32>, tensor<1024x512xf32>) outs(%z0 : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %e1 = tensor.empty() : tensor<256x512xf32>
  %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<256x512xf32>) -> tensor<256x512xf32>
  %dx = linalg.matmul ins(%dy, %w : tensor<256x1024xf32>, tensor<1024x512xf32>) outs(%z1 : tensor<256x512xf32>) -> tensor<256x512xf32>
  %et = tensor.empty() : tensor<1024x256xf32>
  %dyt = linalg.transpose ins(%dy : tensor<256x1024xf32>) outs(%et : tensor<1024x256xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<1024x512xf32>
  %z2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  %dw = linalg.matmul ins(%dyt, %x : tensor<1024x256xf32>, tensor<256x512xf32>) outs(%z2 : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  return %y, %dx, %dw : tensor<256x1024xf32>, tensor<256x512xf32>, tensor<1024x512xf32>
}

// Transposes on every operand, torch-mlir style: Y = X (W^T) as a plain
// matmul of a transposed weight, dX = dY (W^T)^T with transpose_b maps, and
// the Wgrad as dW^T = X^T dY (activation first, result transposed back).
// CHECK-LABEL: func.func @transposed_operands(
// CHECK: mxfp4.quantize {{.*}} : tensor<256x512xf32> -> tensor<256x512xf4E2M1FN>
// CHECK: mxfp4.quantize {{.*}} : tensor<1024x512xf32> -> tensor<1024x512xf4E2M1FN>
// CHECK: mxfp4.scaled_matmul {{.*}}<fprop, "layers.0.w">{{.*}} -> tensor<256x1024xf32>
// CHECK: mxfp4.quantize {{.*}} : tensor<256x1024xf32> -> tensor<256x1024xf4E2M1FN>
// CHECK: mxfp4.quantize {{.*}} : tensor<512x1024xf32> -> tensor<512x1024xf4E2M1FN>
// CHECK: mxfp4.scaled_matmul {{.*}}<dgrad, "layers.0.w">{{.*}} -> tensor<256x512xf32>
// CHECK: mxfp4.quantize {{.*}} : tensor<1024x256xf32> -> tensor<1024x256xf4E2M1FN>
// CHECK: mxfp4.quantize {{.*}} : tensor<512x256xf32> -> tensor<512x256xf4E2M1FN>
// The product comes back as dW^T and the graph's own transpose turns it into
// dW again; canonicalization folds the two.
// CHECK: %[[DW:.*]] = mxfp4.scaled_matmul {{.*}}<wgrad, "layers.0.w">{{.*}} -> tensor<1024x512xf32>
// CHECK: return {{.*}}, %[[DW]] :
// ROLES-LABEL: func.func @transposed_operands(
// ROLES: linalg.matmul {mxfp4.gemm = #mxfp4.gemm<fprop, "layers.0.w">}
// ROLES: linalg.matmul {{.*}}<dgrad, "layers.0.w">
// ROLES: linalg.matmul {mxfp4.gemm = #mxfp4.gemm<wgrad, "layers.0.w">}
func.func @transposed_operands(%x: tensor<256x512xf32>, %w: tensor<1024x512xf32> {mxfp4.parameter = "layers.0.w.weight"}, %dy: tensor<256x1024xf32>, %step: i64 {mxfp4.step}) -> (tensor<256x1024xf32>, tensor<256x512xf32>, tensor<1024x512xf32>) {
  %c0 = arith.constant 0.0 : f32
  %ew = tensor.empty() : tensor<512x1024xf32>
  %wt = linalg.transpose ins(%w : tensor<1024x512xf32>) outs(%ew : tensor<512x1024xf32>) permutation = [1, 0]
  %e0 = tensor.empty() : tensor<256x1024xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<256x512xf32>, tensor<512x1024xf32>) outs(%z0 : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %e1 = tensor.empty() : tensor<256x512xf32>
  %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<256x512xf32>) -> tensor<256x512xf32>
  %dx = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%dy, %wt : tensor<256x1024xf32>, tensor<512x1024xf32>) outs(%z1 : tensor<256x512xf32>) -> tensor<256x512xf32>
  %ex = tensor.empty() : tensor<512x256xf32>
  %xt = linalg.transpose ins(%x : tensor<256x512xf32>) outs(%ex : tensor<512x256xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<512x1024xf32>
  %z2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<512x1024xf32>) -> tensor<512x1024xf32>
  %dwt = linalg.matmul ins(%xt, %dy : tensor<512x256xf32>, tensor<256x1024xf32>) outs(%z2 : tensor<512x1024xf32>) -> tensor<512x1024xf32>
  %e3 = tensor.empty() : tensor<1024x512xf32>
  %dw = linalg.transpose ins(%dwt : tensor<512x1024xf32>) outs(%e3 : tensor<1024x512xf32>) permutation = [1, 0]
  return %y, %dx, %dw : tensor<256x1024xf32>, tensor<256x512xf32>, tensor<1024x512xf32>
}

// linalg.matmul with indexing_maps in the forms that replaced
// matmul_transpose_a and matmul_transpose_b: Y = X W^T (transpose_b),
// dX = (dY^T)^T W (transpose_a, of a transposed dY) and dW = (dY^T) (X^T)^T
// (both transposed, of a transposed X).
// CHECK-LABEL: func.func @matmul_maps(
// CHECK: mxfp4.scaled_matmul {{.*}}<fprop, "layers.0.w">{{.*}} -> tensor<256x1024xf32>
// CHECK: mxfp4.quantize {{.*}} : tensor<256x1024xf32> -> tensor<256x1024xf4E2M1FN>
// CHECK: mxfp4.quantize {{.*}} : tensor<512x1024xf32> -> tensor<512x1024xf4E2M1FN>
// CHECK: mxfp4.scaled_matmul {{.*}}<dgrad, "layers.0.w">{{.*}} -> tensor<256x512xf32>
// CHECK: mxfp4.quantize {{.*}} : tensor<1024x256xf32> -> tensor<1024x256xf4E2M1FN>
// CHECK: mxfp4.quantize {{.*}} : tensor<512x256xf32> -> tensor<512x256xf4E2M1FN>
// CHECK: mxfp4.scaled_matmul {{.*}}<wgrad, "layers.0.w">{{.*}} -> tensor<1024x512xf32>
// ROLES-LABEL: func.func @matmul_maps(
// ROLES: linalg.matmul {{.*}}<fprop, "layers.0.w">
// ROLES: linalg.matmul {{.*}}<dgrad, "layers.0.w">
// ROLES: linalg.matmul {{.*}}<wgrad, "layers.0.w">
func.func @matmul_maps(%x: tensor<256x512xf32>, %w: tensor<1024x512xf32> {mxfp4.parameter = "layers.0.w.weight"}, %dy: tensor<256x1024xf32>, %step: i64 {mxfp4.step}) -> (tensor<256x1024xf32>, tensor<256x512xf32>, tensor<1024x512xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<256x1024xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w : tensor<256x512xf32>, tensor<1024x512xf32>) outs(%z0 : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %edy = tensor.empty() : tensor<1024x256xf32>
  %dyt = linalg.transpose ins(%dy : tensor<256x1024xf32>) outs(%edy : tensor<1024x256xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<256x512xf32>
  %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<256x512xf32>) -> tensor<256x512xf32>
  %dx = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%dyt, %w : tensor<1024x256xf32>, tensor<1024x512xf32>) outs(%z1 : tensor<256x512xf32>) -> tensor<256x512xf32>
  %ex = tensor.empty() : tensor<512x256xf32>
  %xt = linalg.transpose ins(%x : tensor<256x512xf32>) outs(%ex : tensor<512x256xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<1024x512xf32>
  %z2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%dy, %xt : tensor<256x1024xf32>, tensor<512x256xf32>) outs(%z2 : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  return %y, %dx, %dw : tensor<256x1024xf32>, tensor<256x512xf32>, tensor<1024x512xf32>
}

// 2-D linalg.generic contractions with permuted loops and the weight first:
// the Fprop loops are (k, n, m), the Wgrad reads X before dY and iterates
// (t, k, n).
// CHECK-LABEL: func.func @generic_permuted(
// CHECK: mxfp4.quantize {{.*}} : tensor<256x512xf32> -> tensor<256x512xf4E2M1FN>
// CHECK: mxfp4.quantize {{.*}} : tensor<1024x512xf32> -> tensor<1024x512xf4E2M1FN>
// CHECK: mxfp4.scaled_matmul {{.*}}<fprop, "layers.0.w">{{.*}} -> tensor<256x1024xf32>
// CHECK: mxfp4.quantize {{.*}} : tensor<256x1024xf32> -> tensor<256x1024xf4E2M1FN>
// CHECK: mxfp4.quantize {{.*}} : tensor<512x1024xf32> -> tensor<512x1024xf4E2M1FN>
// CHECK: mxfp4.scaled_matmul {{.*}}<dgrad, "layers.0.w">{{.*}} -> tensor<256x512xf32>
// CHECK: mxfp4.quantize {{.*}} : tensor<1024x256xf32> -> tensor<1024x256xf4E2M1FN>
// CHECK: mxfp4.quantize {{.*}} : tensor<512x256xf32> -> tensor<512x256xf4E2M1FN>
// CHECK: mxfp4.scaled_matmul {{.*}}<wgrad, "layers.0.w">{{.*}} -> tensor<1024x512xf32>
// ROLES-LABEL: func.func @generic_permuted(
// ROLES: linalg.generic {{.*}}mxfp4.gemm = #mxfp4.gemm<fprop, "layers.0.w">
// ROLES: linalg.generic {{.*}}mxfp4.gemm = #mxfp4.gemm<dgrad, "layers.0.w">
// ROLES: linalg.generic {{.*}}mxfp4.gemm = #mxfp4.gemm<wgrad, "layers.0.w">
func.func @generic_permuted(%x: tensor<256x512xf32>, %w: tensor<1024x512xf32> {mxfp4.parameter = "layers.0.w.weight"}, %dy: tensor<256x1024xf32>, %step: i64 {mxfp4.step}) -> (tensor<256x1024xf32>, tensor<256x512xf32>, tensor<1024x512xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<256x1024xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(k, n, m) -> (n, k)>, affine_map<(k, n, m) -> (m, k)>, affine_map<(k, n, m) -> (m, n)>], iterator_types = ["reduction", "parallel", "parallel"]} ins(%w, %x : tensor<1024x512xf32>, tensor<256x512xf32>) outs(%z0 : tensor<256x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<256x1024xf32>
  %e1 = tensor.empty() : tensor<256x512xf32>
  %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<256x512xf32>) -> tensor<256x512xf32>
  %dx = linalg.generic {indexing_maps = [affine_map<(t, k, n) -> (n, k)>, affine_map<(t, k, n) -> (t, n)>, affine_map<(t, k, n) -> (t, k)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%w, %dy : tensor<1024x512xf32>, tensor<256x1024xf32>) outs(%z1 : tensor<256x512xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %b, %a : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<256x512xf32>
  %e2 = tensor.empty() : tensor<1024x512xf32>
  %z2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  %dw = linalg.generic {indexing_maps = [affine_map<(t, k, n) -> (t, k)>, affine_map<(t, k, n) -> (t, n)>, affine_map<(t, k, n) -> (n, k)>], iterator_types = ["reduction", "parallel", "parallel"]} ins(%x, %dy : tensor<256x512xf32>, tensor<256x1024xf32>) outs(%z2 : tensor<1024x512xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1024x512xf32>
  return %y, %dx, %dw : tensor<256x1024xf32>, tensor<256x512xf32>, tensor<1024x512xf32>
}

// 3-D activations: X[B,S,K] and dY[B,S,N] are collapsed to tokens for the
// 2-D GEMMs and the results expanded back. The Wgrad collapses X and dY once
// more, with collapse_shape ops of its own.
// CHECK-LABEL: func.func @reshaped_3d(
// CHECK: %[[X2:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<2x128x512xf32> into tensor<256x512xf32>
// CHECK: mxfp4.scaled_matmul {{.*}}<fprop, "layers.0.w">{{.*}} -> tensor<256x1024xf32>
// CHECK: tensor.expand_shape {{.*}} : tensor<256x1024xf32> into tensor<2x128x1024xf32>
// CHECK: mxfp4.scaled_matmul {{.*}}<dgrad, "layers.0.w">{{.*}} -> tensor<256x512xf32>
// CHECK: tensor.expand_shape {{.*}} : tensor<256x512xf32> into tensor<2x128x512xf32>
// CHECK: mxfp4.quantize {{.*}} : tensor<1024x256xf32> -> tensor<1024x256xf4E2M1FN>
// CHECK: mxfp4.quantize {{.*}} : tensor<512x256xf32> -> tensor<512x256xf4E2M1FN>
// CHECK: mxfp4.scaled_matmul {{.*}}<wgrad, "layers.0.w">{{.*}} -> tensor<1024x512xf32>
// ROLES-LABEL: func.func @reshaped_3d(
// ROLES: linalg.matmul {{.*}}<fprop, "layers.0.w">
// ROLES: linalg.matmul {{.*}}<dgrad, "layers.0.w">
// ROLES: linalg.matmul {{.*}}<wgrad, "layers.0.w">
func.func @reshaped_3d(%x: tensor<2x128x512xf32>, %w: tensor<1024x512xf32> {mxfp4.parameter = "layers.0.w.weight"}, %dy: tensor<2x128x1024xf32>, %step: i64 {mxfp4.step}) -> (tensor<2x128x1024xf32>, tensor<2x128x512xf32>, tensor<1024x512xf32>) {
  %c0 = arith.constant 0.0 : f32
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x128x512xf32> into tensor<256x512xf32>
  %e0 = tensor.empty() : tensor<256x1024xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %y2 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x2, %w : tensor<256x512xf32>, tensor<1024x512xf32>) outs(%z0 : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %y = tensor.expand_shape %y2 [[0, 1], [2]] output_shape [2, 128, 1024] : tensor<256x1024xf32> into tensor<2x128x1024xf32>
  %dy2 = tensor.collapse_shape %dy [[0, 1], [2]] : tensor<2x128x1024xf32> into tensor<256x1024xf32>
  %e1 = tensor.empty() : tensor<256x512xf32>
  %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<256x512xf32>) -> tensor<256x512xf32>
  %dx2 = linalg.matmul ins(%dy2, %w : tensor<256x1024xf32>, tensor<1024x512xf32>) outs(%z1 : tensor<256x512xf32>) -> tensor<256x512xf32>
  %dx = tensor.expand_shape %dx2 [[0, 1], [2]] output_shape [2, 128, 512] : tensor<256x512xf32> into tensor<2x128x512xf32>
  %gw = tensor.collapse_shape %dy [[0, 1], [2]] : tensor<2x128x1024xf32> into tensor<256x1024xf32>
  %xw = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x128x512xf32> into tensor<256x512xf32>
  %e2 = tensor.empty() : tensor<1024x512xf32>
  %z2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%gw, %xw : tensor<256x1024xf32>, tensor<256x512xf32>) outs(%z2 : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  return %y, %dx, %dw : tensor<2x128x1024xf32>, tensor<2x128x512xf32>, tensor<1024x512xf32>
}

// Batch-matmul-shaped: the Fprop is a linalg.batch_matmul of X[B,S,K] and W
// broadcast over the batch with linalg.broadcast, the Dgrad a batch_matmul
// whose 2-D map reads W itself, the Wgrad a linalg.contract over (b, s).
// The batch becomes part of the token axis: [B*S, K] x [N, K] etc.
// CHECK-LABEL: func.func @batch_broadcast(
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<2x128x512xf32> into tensor<256x512xf32>
// CHECK: mxfp4.quantize {{.*}} : tensor<256x512xf32> -> tensor<256x512xf4E2M1FN>
// CHECK: mxfp4.quantize {{.*}} : tensor<1024x512xf32> -> tensor<1024x512xf4E2M1FN>
// CHECK: mxfp4.scaled_matmul {{.*}}<fprop, "layers.0.w">{{.*}} -> tensor<256x1024xf32>
// CHECK: mxfp4.quantize {{.*}} : tensor<256x1024xf32> -> tensor<256x1024xf4E2M1FN>
// CHECK: mxfp4.quantize {{.*}} : tensor<512x1024xf32> -> tensor<512x1024xf4E2M1FN>
// CHECK: mxfp4.scaled_matmul {{.*}}<dgrad, "layers.0.w">{{.*}} -> tensor<256x512xf32>
// CHECK: mxfp4.quantize {{.*}} : tensor<1024x256xf32> -> tensor<1024x256xf4E2M1FN>
// CHECK: mxfp4.quantize {{.*}} : tensor<512x256xf32> -> tensor<512x256xf4E2M1FN>
// CHECK: mxfp4.scaled_matmul {{.*}}<wgrad, "layers.0.w">{{.*}} -> tensor<1024x512xf32>
// ROLES-LABEL: func.func @batch_broadcast(
// ROLES: linalg.batch_matmul {{.*}}<fprop, "layers.0.w">
// ROLES: linalg.batch_matmul {{.*}}<dgrad, "layers.0.w">
// ROLES: linalg.contract {{.*}}<wgrad, "layers.0.w">
func.func @batch_broadcast(%x: tensor<2x128x512xf32>, %w: tensor<1024x512xf32> {mxfp4.parameter = "layers.0.w.weight"}, %dy: tensor<2x128x1024xf32>, %step: i64 {mxfp4.step}) -> (tensor<2x128x1024xf32>, tensor<2x128x512xf32>, tensor<1024x512xf32>) {
  %c0 = arith.constant 0.0 : f32
  %eb = tensor.empty() : tensor<2x1024x512xf32>
  %wb = linalg.broadcast ins(%w : tensor<1024x512xf32>) outs(%eb : tensor<2x1024x512xf32>) dimensions = [0]
  %e0 = tensor.empty() : tensor<2x128x1024xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<2x128x1024xf32>) -> tensor<2x128x1024xf32>
  %y = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>] ins(%x, %wb : tensor<2x128x512xf32>, tensor<2x1024x512xf32>) outs(%z0 : tensor<2x128x1024xf32>) -> tensor<2x128x1024xf32>
  %e1 = tensor.empty() : tensor<2x128x512xf32>
  %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<2x128x512xf32>) -> tensor<2x128x512xf32>
  %dx = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>] ins(%dy, %w : tensor<2x128x1024xf32>, tensor<1024x512xf32>) outs(%z1 : tensor<2x128x512xf32>) -> tensor<2x128x512xf32>
  %e2 = tensor.empty() : tensor<1024x512xf32>
  %z2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  %dw = linalg.contract indexing_maps = [affine_map<(b, s, n, k) -> (b, s, n)>, affine_map<(b, s, n, k) -> (b, s, k)>, affine_map<(b, s, n, k) -> (n, k)>] ins(%dy, %x : tensor<2x128x1024xf32>, tensor<2x128x512xf32>) outs(%z2 : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  return %y, %dx, %dw : tensor<2x128x1024xf32>, tensor<2x128x512xf32>, tensor<1024x512xf32>
}

// linalg.generic with a batch dimension and a 2-D parameter map for Fprop and
// Dgrad; the Wgrad is a generic with two reduction loops (b, s).
// CHECK-LABEL: func.func @generic_batch(
// CHECK: mxfp4.scaled_matmul {{.*}}<fprop, "layers.0.w">{{.*}} -> tensor<256x1024xf32>
// CHECK: mxfp4.scaled_matmul {{.*}}<dgrad, "layers.0.w">{{.*}} -> tensor<256x512xf32>
// CHECK: mxfp4.quantize {{.*}} : tensor<1024x256xf32> -> tensor<1024x256xf4E2M1FN>
// CHECK: mxfp4.quantize {{.*}} : tensor<512x256xf32> -> tensor<512x256xf4E2M1FN>
// CHECK: mxfp4.scaled_matmul {{.*}}<wgrad, "layers.0.w">{{.*}} -> tensor<1024x512xf32>
// ROLES-LABEL: func.func @generic_batch(
// ROLES: linalg.generic {{.*}}<fprop, "layers.0.w">
// ROLES: linalg.generic {{.*}}<dgrad, "layers.0.w">
// ROLES: linalg.generic {{.*}}<wgrad, "layers.0.w">
func.func @generic_batch(%x: tensor<2x128x512xf32>, %w: tensor<1024x512xf32> {mxfp4.parameter = "layers.0.w.weight"}, %dy: tensor<2x128x1024xf32>, %step: i64 {mxfp4.step}) -> (tensor<2x128x1024xf32>, tensor<2x128x512xf32>, tensor<1024x512xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x128x1024xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<2x128x1024xf32>) -> tensor<2x128x1024xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(b, s, n, k) -> (b, s, k)>, affine_map<(b, s, n, k) -> (n, k)>, affine_map<(b, s, n, k) -> (b, s, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<2x128x512xf32>, tensor<1024x512xf32>) outs(%z0 : tensor<2x128x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x128x1024xf32>
  %e1 = tensor.empty() : tensor<2x128x512xf32>
  %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<2x128x512xf32>) -> tensor<2x128x512xf32>
  %dx = linalg.generic {indexing_maps = [affine_map<(b, s, k, n) -> (b, s, n)>, affine_map<(b, s, k, n) -> (n, k)>, affine_map<(b, s, k, n) -> (b, s, k)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%dy, %w : tensor<2x128x1024xf32>, tensor<1024x512xf32>) outs(%z1 : tensor<2x128x512xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x128x512xf32>
  %e2 = tensor.empty() : tensor<1024x512xf32>
  %z2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  %dw = linalg.generic {indexing_maps = [affine_map<(n, k, b, s) -> (b, s, n)>, affine_map<(n, k, b, s) -> (b, s, k)>, affine_map<(n, k, b, s) -> (n, k)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%dy, %x : tensor<2x128x1024xf32>, tensor<2x128x512xf32>) outs(%z2 : tensor<1024x512xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1024x512xf32>
  return %y, %dx, %dw : tensor<2x128x1024xf32>, tensor<2x128x512xf32>, tensor<1024x512xf32>
}

// The weight first, as a column-major frontend writes the layer: it
// computes Y^T = W X^T and dX^T = W^T dY^T from the gradient of Y^T. The
// roles follow the weight's contracted dimension, whichever side it is on;
// the canonical product is transposed back into the written result.
// CHECK-LABEL: func.func @weight_first(
// CHECK: mxfp4.quantize {{.*}} : tensor<256x512xf32> -> tensor<256x512xf4E2M1FN>
// CHECK: mxfp4.quantize {{.*}} : tensor<1024x512xf32> -> tensor<1024x512xf4E2M1FN>
// CHECK: %[[Y:.*]] = mxfp4.scaled_matmul {{.*}}<fprop, "layers.0.w">{{.*}} -> tensor<256x1024xf32>
// CHECK: linalg.transpose ins(%[[Y]] : tensor<256x1024xf32>) {{.*}} permutation = [1, 0]
// CHECK: mxfp4.quantize {{.*}} : tensor<256x1024xf32> -> tensor<256x1024xf4E2M1FN>
// CHECK: mxfp4.quantize {{.*}} : tensor<512x1024xf32> -> tensor<512x1024xf4E2M1FN>
// CHECK: %[[DX:.*]] = mxfp4.scaled_matmul {{.*}}<dgrad, "layers.0.w">{{.*}} -> tensor<256x512xf32>
// CHECK: linalg.transpose ins(%[[DX]] : tensor<256x512xf32>) {{.*}} permutation = [1, 0]
// CHECK: mxfp4.quantize {{.*}} : tensor<1024x256xf32> -> tensor<1024x256xf4E2M1FN>
// CHECK: mxfp4.quantize {{.*}} : tensor<512x256xf32> -> tensor<512x256xf4E2M1FN>
// CHECK: mxfp4.scaled_matmul {{.*}}<wgrad, "layers.0.w">{{.*}} -> tensor<1024x512xf32>
// ROLES-LABEL: func.func @weight_first(
// ROLES: linalg.matmul {{.*}}<fprop, "layers.0.w">} ins(%arg1, %arg0
// ROLES: linalg.matmul {{.*}}<dgrad, "layers.0.w">} ins(%arg1, %arg2
// ROLES: linalg.matmul {mxfp4.gemm = #mxfp4.gemm<wgrad, "layers.0.w">} ins(%arg2, %arg0
func.func @weight_first(%x: tensor<256x512xf32>, %w: tensor<1024x512xf32> {mxfp4.parameter = "layers.0.w.weight"}, %dyt: tensor<1024x256xf32>, %step: i64 {mxfp4.step}) -> (tensor<1024x256xf32>, tensor<512x256xf32>, tensor<1024x512xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1024x256xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<1024x256xf32>) -> tensor<1024x256xf32>
  %yt = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%w, %x : tensor<1024x512xf32>, tensor<256x512xf32>) outs(%z0 : tensor<1024x256xf32>) -> tensor<1024x256xf32>
  %e1 = tensor.empty() : tensor<512x256xf32>
  %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<512x256xf32>) -> tensor<512x256xf32>
  %dxt = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%w, %dyt : tensor<1024x512xf32>, tensor<1024x256xf32>) outs(%z1 : tensor<512x256xf32>) -> tensor<512x256xf32>
  %e2 = tensor.empty() : tensor<1024x512xf32>
  %z2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  %dw = linalg.matmul ins(%dyt, %x : tensor<1024x256xf32>, tensor<256x512xf32>) outs(%z2 : tensor<1024x512xf32>) -> tensor<1024x512xf32>
  return %yt, %dxt, %dw : tensor<1024x256xf32>, tensor<512x256xf32>, tensor<1024x512xf32>
}
