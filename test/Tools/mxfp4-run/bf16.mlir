// bf16 tensors travel as uint16 bit patterns, read and written as they are,
// and print as their values.

// RUN: %PYTHON -c "import numpy as np; np.save('%t.bits.npy', np.array([[0x3F80, 0x3DCD, 0xC040], [0x7FC0, 0x8000, 0x0001]], dtype=np.uint16)); np.save('%t.f32.npy', np.array([1.0, 1.00390625, 1.01171875, -3.1415927], dtype=np.float32))"

// RUN: mxfp4-run exec %s --function=passthrough --input=@%t.bits.npy --output=@%t.out.npy --print | FileCheck %s
// RUN: %PYTHON -c "import numpy as np; r = np.load('%t.out.npy'); assert r.dtype == np.uint16 and (r == np.load('%t.bits.npy')).all(), r"
// CHECK:      result #0: tensor<2x3xbf16>
// CHECK-NEXT: {{^\[\[}} 1, 0.100097656, -3],
// CHECK-NEXT: {{^}} [ nan, -0, 9.18354962e-41]]

// Truncation to bf16 rounds to nearest even: 1 + 2^-8 is a tie (down to 1),
// 1 + 3 * 2^-8 a tie (up to 1 + 2^-6).
// RUN: mxfp4-run exec %s --function=round_trip --input=@%t.f32.npy --output=@%t.bf16.npy --output=@%t.back.npy
// RUN: %PYTHON -c "import numpy as np; r = np.load('%t.bf16.npy'); assert r.dtype == np.uint16 and r.tolist() == [0x3F80, 0x3F80, 0x3F82, 0xC049], [hex(v) for v in r]; b = np.load('%t.back.npy'); assert b.tolist() == [1.0, 1.0, 1.015625, -3.140625], b"

func.func @passthrough(%a: tensor<2x3xbf16>) -> tensor<2x3xbf16> {
  return %a : tensor<2x3xbf16>
}

func.func @round_trip(%a: tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xbf16>
  %b = linalg.map { arith.truncf } ins(%a : tensor<4xf32>) outs(%e : tensor<4xbf16>)
  %f = tensor.empty() : tensor<4xf32>
  %c = linalg.map { arith.extf } ins(%b : tensor<4xbf16>) outs(%f : tensor<4xf32>)
  return %b, %c : tensor<4xbf16>, tensor<4xf32>
}
