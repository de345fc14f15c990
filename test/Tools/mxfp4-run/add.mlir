// Two f32 tensors and an f32 scalar through a linalg.generic: the result is
// printed and written to a .npy file that NumPy reads back.

// RUN: %PYTHON -c "import numpy as np; np.save('%t.a.npy', np.arange(6, dtype=np.float32).reshape(2, 3)); np.save('%t.b.npy', np.full((2, 3), 0.25, dtype=np.float32))"
// RUN: mxfp4-run exec %s --function=add --input=@%t.a.npy --input=@%t.b.npy --input=10 --output=@%t.out.npy --print | FileCheck %s
// RUN: %PYTHON -c "import numpy as np; r = np.load('%t.out.npy'); assert r.dtype == np.float32 and r.shape == (2, 3), r; assert (r == np.arange(6, dtype=np.float32).reshape(2, 3) + 10.25).all(), r"

// The only public function is the default; without --output the results are
// printed.
// RUN: mxfp4-run exec %s --input=@%t.a.npy --input=@%t.b.npy --input=-0.5 | FileCheck %s --check-prefix=DEFAULT

// CHECK:      result #0: tensor<2x3xf32>
// CHECK-NEXT: {{^\[\[}}10.25, 11.25, 12.25],
// CHECK-NEXT: {{^}} [13.25, 14.25, 15.25]]

// DEFAULT:      result #0: tensor<2x3xf32>
// DEFAULT-NEXT: {{^\[\[}}-0.25,  0.75,  1.75],
// DEFAULT-NEXT: {{^}} [ 2.75,  3.75,  4.75]]

#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @add(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: f32) -> tensor<2x3xf32> {
  %init = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%init : tensor<2x3xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    %t = arith.addf %s, %c : f32
    linalg.yield %t : f32
  } -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

func.func private @helper(%a: f32) -> f32 {
  return %a : f32
}
