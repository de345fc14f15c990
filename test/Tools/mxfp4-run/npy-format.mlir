// .npy files of format versions 1.0, 2.0 and 3.0 are read; outputs are
// version 1.0 with the data aligned to 64 bytes, as numpy.save writes them.

// RUN: %PYTHON -c "import numpy as np, numpy.lib.format as f; a = np.arange(6, dtype=np.float32).reshape(2, 3); f.write_array(open('%t.v1.npy', 'wb'), a, version=(1, 0)); f.write_array(open('%t.v2.npy', 'wb'), a, version=(2, 0)); f.write_array(open('%t.v3.npy', 'wb'), a, version=(3, 0)); np.save('%t.u8.npy', np.array([[1, 200]], np.uint8)); np.save('%t.scalar.npy', np.float32(0.5))"

// RUN: mxfp4-run exec %s --function=add3 --input=@%t.v1.npy --input=@%t.v2.npy --input=@%t.v3.npy --input=@%t.scalar.npy --input=@%t.u8.npy --output=@%t.sum.npy --output=@%t.bytes.npy --output=@%t.scalar-out.npy
// RUN: %PYTHON -c "import numpy as np; r = np.load('%t.sum.npy'); assert r.dtype == np.float32 and (r == 3 * np.arange(6).reshape(2, 3) + 0.5).all(), r; b = np.load('%t.bytes.npy'); assert b.dtype == np.uint8 and b.tolist() == [[1, 200]], b; s = np.load('%t.scalar-out.npy'); assert s.dtype == np.float32 and s.shape == () and s == 0.5, s"
// RUN: %PYTHON -c "d = open('%t.sum.npy', 'rb').read(); n = int.from_bytes(d[8:10], 'little'); assert d[:8] == b'\x93NUMPY\x01\x00', d[:8]; assert (10 + n) %% 64 == 0 and d[9 + n:10 + n] == b'\n', n; assert len(d) == 10 + n + 24, len(d)"

#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @add3(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<2x3xf32>,
                %d: f32, %bytes: tensor<1x2xi8>)
    -> (tensor<2x3xf32>, tensor<1x2xi8>, f32) {
  %init = tensor.empty() : tensor<2x3xf32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map, #map],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a, %b, %c : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
      outs(%init : tensor<2x3xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    %t = arith.addf %s, %z : f32
    %u = arith.addf %t, %d : f32
    linalg.yield %u : f32
  } -> tensor<2x3xf32>
  return %r, %bytes, %d : tensor<2x3xf32>, tensor<1x2xi8>, f32
}
