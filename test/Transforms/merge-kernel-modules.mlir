// RUN: mxfp4-opt %s --mxfp4-merge-kernel-modules | FileCheck %s

// Two outlined copies of one kernel and a different one: one module, two
// kernels, every launch pointing at its copy; an existing module keeps its
// kernels and target.
// CHECK-LABEL: func.func @f
// CHECK: gpu.launch_func @mxfp4_kernels::@kernel_0
// CHECK: gpu.launch_func @mxfp4_kernels::@kernel_0
// CHECK: gpu.launch_func @mxfp4_kernels::@kernel_1
// CHECK: gpu.launch_func @mxfp4_kernels::@quantize
// CHECK: gpu.module @mxfp4_kernels [#rocdl.target<chip = "gfx950">]
// CHECK: gpu.func @quantize
// CHECK: gpu.func @kernel_0
// CHECK: math.exp
// CHECK: gpu.func @kernel_1
// CHECK: math.log
// CHECK-NOT: gpu.module

module attributes {gpu.container_module} {
  func.func @f(%a: memref<16xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @f_kernel::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32>)
    gpu.launch_func @f_kernel_0::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32>)
    gpu.launch_func @f_kernel_1::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32>)
    gpu.launch_func @mxfp4_kernels::@quantize blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<16xf32>)
    return
  }
  gpu.module @f_kernel {
    gpu.func @f_kernel(%a: memref<16xf32>) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %a[%c0] : memref<16xf32>
      %e = math.exp %x : f32
      memref.store %e, %a[%c0] : memref<16xf32>
      gpu.return
    }
  }
  gpu.module @f_kernel_0 {
    gpu.func @f_kernel(%a: memref<16xf32>) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %a[%c0] : memref<16xf32>
      %e = math.exp %x : f32
      memref.store %e, %a[%c0] : memref<16xf32>
      gpu.return
    }
  }
  gpu.module @f_kernel_1 {
    gpu.func @f_kernel(%a: memref<16xf32>) kernel {
      %c0 = arith.constant 0 : index
      %x = memref.load %a[%c0] : memref<16xf32>
      %e = math.log %x : f32
      memref.store %e, %a[%c0] : memref<16xf32>
      gpu.return
    }
  }
  gpu.module @mxfp4_kernels [#rocdl.target<chip = "gfx950">] {
    gpu.func @quantize(%a: memref<16xf32>) kernel {
      gpu.return
    }
  }
}
