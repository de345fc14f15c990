// A deterministic rotation and its inverse are the same arithmetic, so the
// two results share one buffer after CSE; each still gets its own output.
// RUN: %PYTHON -c "import numpy as np; np.save('%t.x.npy', np.eye(16, dtype=np.float32))"
// RUN: mxfp4-run exec %s --input=@%t.x.npy --output=@%t.a.npy --output=@%t.b.npy
// RUN: %PYTHON -c "import numpy as np; a = np.load('%t.a.npy'); b = np.load('%t.b.npy'); assert (a == b).all() and abs(a[0, 0] - 0.25) < 1e-7, (a, b)"
func.func @twice(%x: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  %h = mxfp4.hadamard %x axis = 1 size = 16 : tensor<16x16xf32>
  %i = mxfp4.hadamard inverse %x axis = 1 size = 16 : tensor<16x16xf32>
  return %h, %i : tensor<16x16xf32>, tensor<16x16xf32>
}
