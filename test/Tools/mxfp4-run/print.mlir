// The layout of --print: nested rows as NumPy prints them, long rows
// wrapped, big arrays summarized with "...", special values spelled out.

// RUN: %PYTHON -c "import numpy as np; a = np.arange(24, dtype=np.float32).reshape(2, 3, 4); a[0, 0, :3] = [np.nan, -np.inf, 0.1]; np.save('%t.3d.npy', a); np.save('%t.big.npy', np.arange(2000, dtype=np.int32).reshape(50, 40)); np.save('%t.scales.npy', np.array([0, 1, 127, 254, 255], np.uint8)); np.save('%t.codes.npy', np.arange(16, dtype=np.uint8)); np.save('%t.i8.npy', np.array([0, 127, 128, 255], np.uint8))"

// RUN: mxfp4-run exec %s --function=id3 --input=@%t.3d.npy | FileCheck %s --check-prefix=RANK3
// RANK3:      result #0: tensor<2x3x4xf32>
// RANK3-NEXT: {{^\[\[\[}} nan, -inf, 0.100000001, 3],
// RANK3-NEXT: {{^}}  [ 4, 5, 6, 7],
// RANK3-NEXT: {{^}}  [ 8, 9, 10, 11]],
// RANK3-EMPTY:
// RANK3-NEXT: {{^}} {{\[\[}} 12, 13, 14, 15],
// RANK3-NEXT: {{^}}  [ 16, 17, 18, 19],
// RANK3-NEXT: {{^}}  [ 20, 21, 22, 23]]]

// RUN: mxfp4-run exec %s --function=big --input=@%t.big.npy | FileCheck %s --check-prefix=BIG
// BIG:      result #0: tensor<50x40xi32>
// BIG-NEXT: {{^\[\[}} 0, 1, 2, ..., 37, 38, 39],
// BIG-NEXT: {{^}} [ 40, 41, 42, ..., 77, 78, 79],
// BIG-NEXT: {{^}} [ 80, 81, 82, ..., 117, 118, 119],
// BIG-NEXT: {{^}} ...,
// BIG-NEXT: {{^}} [1880, 1881, 1882, ..., 1917, 1918, 1919],
// BIG-NEXT: {{^}} [1920, 1921, 1922, ..., 1957, 1958, 1959],
// BIG-NEXT: {{^}} [1960, 1961, 1962, ..., 1997, 1998, 1999]]

// RUN: mxfp4-run exec %s --function=scales --input=@%t.scales.npy | FileCheck %s --check-prefix=SCALES
// SCALES:      result #0: tensor<5xf8E8M0FNU>
// SCALES-NEXT: {{^}}[2^-127, 2^-126, 2^0, 2^127, NaN]

// RUN: mxfp4-run exec %s --function=codes --input=@%t.codes.npy | FileCheck %s --check-prefix=CODES
// CODES:      result #0: tensor<16xf4E2M1FN>
// CODES-NEXT: {{^}}[ 0, 0.5, 1, 1.5, 2, 3, 4, 6, -0, -0.5, -1, -1.5,
// CODES-NEXT: {{^}} -2, -3, -4, -6]

// i8 tensors travel as uint8 and print unsigned.
// RUN: mxfp4-run exec %s --function=bytes --input=@%t.i8.npy | FileCheck %s --check-prefix=BYTES
// BYTES:      result #0: tensor<4xi8>
// BYTES-NEXT: {{^}}[ 0, 127, 128, 255]

// RUN: mxfp4-run exec %s --function=empty --print | FileCheck %s --check-prefix=EMPTY
// EMPTY:      result #0: tensor<0x3xf32>
// EMPTY-NEXT: {{^}}[]
// EMPTY-NEXT: result #1: tensor<f32>
// EMPTY-NEXT: {{^}}2.5

func.func @id3(%a: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  return %a : tensor<2x3x4xf32>
}

func.func @big(%a: tensor<50x40xi32>) -> tensor<50x40xi32> {
  return %a : tensor<50x40xi32>
}

func.func @scales(%a: tensor<5xf8E8M0FNU>) -> tensor<5xf8E8M0FNU> {
  return %a : tensor<5xf8E8M0FNU>
}

func.func @codes(%a: tensor<16xf4E2M1FN>) -> tensor<16xf4E2M1FN> {
  return %a : tensor<16xf4E2M1FN>
}

func.func @bytes(%a: tensor<4xi8>) -> tensor<4xi8> {
  return %a : tensor<4xi8>
}

func.func @empty() -> (tensor<0x3xf32>, tensor<f32>) {
  %e = tensor.empty() : tensor<0x3xf32>
  %c = arith.constant dense<2.5> : tensor<f32>
  return %e, %c : tensor<0x3xf32>, tensor<f32>
}
