// RUN: mxfp4-opt %s -mxfp4-to-cpu | FileCheck %s

// Everything reaches the LLVM dialect; results become caller-allocated
// out-parameters after the arguments, and the C interface takes one
// descriptor pointer per tensor.
// CHECK-NOT: mxfp4.
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.
// CHECK-NOT: memref.
// CHECK-NOT: vector.
// CHECK-NOT: scf.
// CHECK-LABEL: llvm.func @quantize_matmul(
// CHECK-LABEL: llvm.func @_mlir_ciface_quantize_matmul(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-SAME: llvm.emit_c_interface
func.func @quantize_matmul(%x: tensor<16x64xf32>, %w: tensor<8x64xf32>) -> (tensor<16x8xf32>, tensor<16x2xf8E8M0FNU>) {
  %hx = mxfp4.hadamard %x axis = 1 size = 32 : tensor<16x64xf32>
  %hw = mxfp4.hadamard %w axis = 1 size = 32 : tensor<8x64xf32>
  %a, %as = mxfp4.quantize %hx axis = 1 : tensor<16x64xf32> -> tensor<16x64xf4E2M1FN>, tensor<16x2xf8E8M0FNU>
  %b, %bs = mxfp4.quantize %hw axis = 1 : tensor<8x64xf32> -> tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU>
  %c = mxfp4.scaled_matmul %a scale %as, %b scale %bs : tensor<16x64xf4E2M1FN>, tensor<16x2xf8E8M0FNU>, tensor<8x64xf4E2M1FN>, tensor<8x2xf8E8M0FNU> -> tensor<16x8xf32>
  return %c, %as : tensor<16x8xf32>, tensor<16x2xf8E8M0FNU>
}

// With parallel=true the lowerings' independent outer loops become OpenMP
// parallel regions: the two quantizations (each absorbing its rotation) and
// the matmul.
// RUN: mxfp4-opt %s -mxfp4-to-cpu=parallel=true | FileCheck %s --check-prefix=PAR
// PAR-COUNT-3: omp.parallel
// PAR-NOT: omp.parallel
// PAR-NOT: scf.
