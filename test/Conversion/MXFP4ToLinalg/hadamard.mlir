// RUN: mxfp4-opt %s -split-input-file -convert-mxfp4-to-linalg | FileCheck %s

// One loop per dimension, the blocked one stepping by the tile size; each
// tile is one vector, rotated by log2(16) = 4 butterfly stages.
// CHECK-LABEL: func.func @hadamard_h16(
// CHECK-SAME: %[[X:.*]]: tensor<8x64xf32>)
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: scf.for
// CHECK: scf.for {{.*}} step %[[C16]]
// CHECK: vector.transfer_read %[[X]]{{.*}} {in_bounds = [true]} : tensor<8x64xf32>, vector<16xf32>
// Each stage: swap partners, then fma(own value, +-1, partner).
// CHECK-COUNT-4: vector.fma {{.*}} : vector<16xf32>
// CHECK-NOT: vector.fma
// CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: vector.transfer_write
func.func @hadamard_h16(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %y = mxfp4.hadamard %x axis = 1 size = 16 : tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// Along axis 0 the tile is read through a permutation map.
// CHECK-LABEL: func.func @hadamard_axis0_bf16
// CHECK: vector.transfer_read {{.*}} permutation_map = #{{.*}}} : tensor<32x4xbf16>, vector<32xbf16>
// CHECK: arith.extf {{.*}} : vector<32xbf16> to vector<32xf32>
// CHECK-COUNT-5: vector.fma {{.*}} : vector<32xf32>
// CHECK: arith.bitcast {{.*}} : vector<32xi16> to vector<32xbf16>
func.func @hadamard_axis0_bf16(%x: tensor<32x4xbf16>) -> tensor<32x4xbf16> {
  %y = mxfp4.hadamard %x axis = 0 size = 32 : tensor<32x4xbf16>
  return %y : tensor<32x4xbf16>
}

// -----

// Random signs come from one Philox call outside the loops; the inverse
// applies them after the butterflies.
// CHECK-LABEL: func.func @hadamard_random_inverse
// CHECK-COUNT-20: arith.mului_extended
// CHECK: vector.from_elements
// CHECK: scf.for
// CHECK: vector.transfer_read
// CHECK-COUNT-4: vector.fma
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK: vector.transfer_write
func.func @hadamard_random_inverse(%x: tensor<2x16xf32>, %seed: i64, %step: i64) -> tensor<2x16xf32> {
  %y = mxfp4.hadamard inverse %x axis = 1 size = 16 kind = random_per_step seed(%seed) step(%step) : tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}
