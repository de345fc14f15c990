// Integer and f64 tensors, and scalars of every supported type given inline.

// RUN: %PYTHON -c "import numpy as np; np.save('%t.i64.npy', np.array([1, -2, 3, 1 << 40], dtype=np.int64)); np.save('%t.i32.npy', np.array([[7, -7]], dtype=np.int32)); np.save('%t.f64.npy', np.array([0.1, -2.5, 1e300], dtype=np.float64))"

// RUN: mxfp4-run exec %s --function=scale_i64 --input=@%t.i64.npy --input=-3 --output=@%t.i64.out.npy
// RUN: %PYTHON -c "import numpy as np; r = np.load('%t.i64.out.npy'); assert r.dtype == np.int64 and (r == np.array([-3, 6, -9, -3 << 40])).all(), r"

// RUN: mxfp4-run exec %s --function=add_i32 --input=@%t.i32.npy --input=0x10 --print | FileCheck %s --check-prefix=I32
// I32:      result #0: tensor<1x2xi32>
// I32-NEXT: {{^\[\[}}23,  9]]

// RUN: mxfp4-run exec %s --function=half_f64 --input=@%t.f64.npy --output=@%t.f64.out.npy --print | FileCheck %s --check-prefix=F64
// RUN: %PYTHON -c "import numpy as np; r = np.load('%t.f64.out.npy'); assert r.dtype == np.float64 and (r == np.array([0.1, -2.5, 1e300]) * 0.5).all(), r"
// F64:      result #0: tensor<3xf64>
// F64-NEXT: {{^}}[ 0.050000000000000003, -1.25, 5.0000000000000003e+299]

// Scalar results come back by value: one, or several through a struct.
// RUN: mxfp4-run exec %s --function=scalars --input=1.5 --input=-0.25 --input=0xFFFFFFFF --input=-9223372036854775808 --input=42 --print | FileCheck %s --check-prefix=SCALARS
// SCALARS:      result #0: f32
// SCALARS-NEXT: {{^}}1.5
// SCALARS-NEXT: result #1: f64
// SCALARS-NEXT: {{^}}-0.25
// SCALARS-NEXT: result #2: i32
// SCALARS-NEXT: {{^}}-1
// SCALARS-NEXT: result #3: i64
// SCALARS-NEXT: {{^}}-9223372036854775808
// SCALARS-NEXT: result #4: index
// SCALARS-NEXT: {{^}}42

// RUN: mxfp4-run exec %s --function=square --input=3 --print | FileCheck %s --check-prefix=SQUARE
// SQUARE:      result #0: i64
// SQUARE-NEXT: {{^}}9

// A 0-d array may stand for a scalar.
// RUN: %PYTHON -c "import numpy as np; np.save('%t.zero-d.npy', np.array(5, dtype=np.int64))"
// RUN: mxfp4-run exec %s --function=square --input=@%t.zero-d.npy | FileCheck %s --check-prefix=ZERO-D
// ZERO-D: {{^}}25

#map = affine_map<(d0) -> (d0)>
#map2 = affine_map<(d0, d1) -> (d0, d1)>

func.func @scale_i64(%a: tensor<4xi64>, %k: i64) -> tensor<4xi64> {
  %init = tensor.empty() : tensor<4xi64>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : tensor<4xi64>) outs(%init : tensor<4xi64>) {
  ^bb0(%x: i64, %out: i64):
    %y = arith.muli %x, %k : i64
    linalg.yield %y : i64
  } -> tensor<4xi64>
  return %r : tensor<4xi64>
}

func.func @add_i32(%a: tensor<1x2xi32>, %k: i32) -> tensor<1x2xi32> {
  %init = tensor.empty() : tensor<1x2xi32>
  %r = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<1x2xi32>) outs(%init : tensor<1x2xi32>) {
  ^bb0(%x: i32, %out: i32):
    %y = arith.addi %x, %k : i32
    linalg.yield %y : i32
  } -> tensor<1x2xi32>
  return %r : tensor<1x2xi32>
}

func.func @half_f64(%a: tensor<3xf64>) -> tensor<3xf64> {
  %half = arith.constant 0.5 : f64
  %init = tensor.empty() : tensor<3xf64>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : tensor<3xf64>) outs(%init : tensor<3xf64>) {
  ^bb0(%x: f64, %out: f64):
    %y = arith.mulf %x, %half : f64
    linalg.yield %y : f64
  } -> tensor<3xf64>
  return %r : tensor<3xf64>
}

func.func @scalars(%a: f32, %b: f64, %c: i32, %d: i64, %e: index)
    -> (f32, f64, i32, i64, index) {
  return %a, %b, %c, %d, %e : f32, f64, i32, i64, index
}

func.func @square(%a: i64) -> i64 {
  %r = arith.muli %a, %a : i64
  return %r : i64
}
