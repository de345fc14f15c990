// End to end through the mxfp4 lowering: quantize known blocks with the
// floor scale rule, then dequantize. Codes come back one per uint8 (sign in
// bit 3) and scales as E8M0 bytes (docs/Semantics.md section 2.5).
//
// Row 0: amax 5, E(5) = 2, so the scale is 2^0 (byte 127) and the elements
// round to nearest even on the E2M1 grid: 0.25 -> 0, 0.75 -> 1, 1.25 -> 1,
// 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4, 4 -> 4.
// Row 1: row 0 times -8: scale 2^3 (byte 130), the same codes negated,
// zeros included (-0.0 has code 8).
// Row 2: a NaN makes the block's scale NaN (byte 255) and every code 0.

// RUN: %PYTHON -c "import numpy as np; x = np.zeros((3, 32), np.float32); x[0, :8] = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 4]; x[1] = -8 * x[0]; x[2, :3] = [1, np.nan, 2]; np.save('%t.x.npy', x)"
// RUN: mxfp4-run exec %s --function=quantize --input=@%t.x.npy --output=@%t.codes.npy --output=@%t.scales.npy --print | FileCheck %s
// RUN: %PYTHON -c "import numpy as np; c = np.load('%t.codes.npy'); s = np.load('%t.scales.npy'); assert c.dtype == np.uint8 and c.shape == (3, 32), c; want = [0, 2, 2, 4, 4, 6, 6, 6] + [0] * 24; assert c[0].tolist() == want, c[0]; assert c[1].tolist() == [v | 8 for v in want], c[1]; assert c[2].tolist() == [0] * 32, c[2]; assert s.dtype == np.uint8 and s.tolist() == [[127], [130], [255]], s"

// CHECK:      result #0: tensor<3x32xf4E2M1FN>
// CHECK-NEXT: {{^\[\[}} 0, 1, 1, 2, 2, 4, 4, 4, 0, 0,
// CHECK-NEXT: {{^}} 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
// CHECK-NEXT: {{^}} [-0, -1, -1, -2, -2, -4, -4, -4, -0, -0,
// CHECK:      result #1: tensor<3x1xf8E8M0FNU>
// CHECK-NEXT: {{^\[\[}}2^0],
// CHECK-NEXT: {{^}} [2^3],
// CHECK-NEXT: {{^}} [NaN]]

// RUN: mxfp4-run exec %s --function=round_trip --input=@%t.x.npy --output=@%t.y.npy
// RUN: %PYTHON -c "import numpy as np; y = np.load('%t.y.npy'); assert y.dtype == np.float32 and y.shape == (3, 32), y; want = np.zeros(32, np.float32); want[:8] = [0, 1, 1, 2, 2, 4, 4, 4]; assert (y[0] == want).all(), y[0]; assert (y[1] == -8 * want).all(), y[1]; assert np.isnan(y[2]).all(), y[2]"

// Codes given to a function are checked: 16 is not an E2M1 code.
// RUN: %PYTHON -c "import numpy as np; c = np.zeros((3, 32), np.uint8); c[1, 5] = 16; np.save('%t.bad-codes.npy', c); np.save('%t.ones.npy', np.full((3, 1), 127, np.uint8))"
// RUN: not mxfp4-run exec %s --function=dequantize --input=@%t.bad-codes.npy --input=@%t.ones.npy 2>&1 | FileCheck %s --check-prefix=BAD-CODE
// BAD-CODE: error: argument #0 (@{{.*}}bad-codes.npy): element (1, 5) is 16, not an f4E2M1FN code (0 to 15, sign in bit 3)

func.func @quantize(%x: tensor<3x32xf32>)
    -> (tensor<3x32xf4E2M1FN>, tensor<3x1xf8E8M0FNU>) {
  %v, %s = mxfp4.quantize %x axis = 1 scale_rule = floor
      : tensor<3x32xf32> -> tensor<3x32xf4E2M1FN>, tensor<3x1xf8E8M0FNU>
  return %v, %s : tensor<3x32xf4E2M1FN>, tensor<3x1xf8E8M0FNU>
}

func.func @dequantize(%v: tensor<3x32xf4E2M1FN>, %s: tensor<3x1xf8E8M0FNU>)
    -> tensor<3x32xf32> {
  %x = mxfp4.dequantize %v scale %s axis = 1
      : tensor<3x32xf4E2M1FN>, tensor<3x1xf8E8M0FNU> -> tensor<3x32xf32>
  return %x : tensor<3x32xf32>
}

func.func @round_trip(%x: tensor<3x32xf32>) -> tensor<3x32xf32> {
  %v, %s = mxfp4.quantize %x axis = 1 scale_rule = floor
      : tensor<3x32xf32> -> tensor<3x32xf4E2M1FN>, tensor<3x1xf8E8M0FNU>
  %y = mxfp4.dequantize %v scale %s axis = 1
      : tensor<3x32xf4E2M1FN>, tensor<3x1xf8E8M0FNU> -> tensor<3x32xf32>
  return %y : tensor<3x32xf32>
}
