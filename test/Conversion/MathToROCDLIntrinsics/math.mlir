// f32 math in gfx950 kernels goes to hardware instructions, never to ROCm
// device-library calls; f64 is computed in f32.
// RUN: mxfp4-opt %s --pass-pipeline='builtin.module(gpu.module(convert-math-to-rocdl-intrinsics))' | FileCheck %s

// CHECK-LABEL: gpu.func @f
// CHECK-SAME: (%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[H:.*]]: f64)
// exp(x) = 2^(x log2 e)
// CHECK: %[[L2E:.*]] = arith.constant 1.44269502 : f32
// CHECK: %[[T:.*]] = arith.mulf %[[X]], %[[L2E]] : f32
// CHECK: rocdl.exp2 %[[T]] f32 -> f32
// log(x) = log2(x) ln 2
// CHECK: %[[LG:.*]] = rocdl.log %[[X]] f32 -> f32
// CHECK: arith.mulf %[[LG]], %{{.*}} : f32
// rsqrt(x) = rcp(sqrt(x))
// CHECK: %[[S:.*]] = math.sqrt %[[X]] : f32
// CHECK: rocdl.rcp %[[S]] f32 -> f32
// x^y = 2^(y log2 x)
// CHECK: %[[LX:.*]] = rocdl.log %[[X]] f32 -> f32
// CHECK: %[[P:.*]] = arith.mulf %[[Y]], %[[LX]] : f32
// CHECK: rocdl.exp2 %[[P]] f32 -> f32
// tanh: a polynomial, no call
// CHECK-NOT: math.tanh
// f64 is computed in f32 (no f64 transcendental instruction)
// CHECK: %[[N:.*]] = arith.truncf %[[H]] : f64 to f32
// CHECK: %[[M:.*]] = arith.mulf %[[N]], %{{.*}} : f32
// CHECK: %[[E:.*]] = rocdl.exp2 %[[M]] f32 -> f32
// CHECK: arith.extf %[[E]] : f32 to f64
gpu.module @m {
  gpu.func @f(%x: f32, %y: f32, %h: f64) -> (f32, f32, f32, f32, f32, f64) {
    %e = math.exp %x : f32
    %l = math.log %x : f32
    %r = math.rsqrt %x : f32
    %p = math.powf %x, %y : f32
    %t = math.tanh %x : f32
    %d = math.exp %h : f64
    gpu.return %e, %l, %r, %p, %t, %d : f32, f32, f32, f32, f32, f64
  }
}
