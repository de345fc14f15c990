// Several results, written to as many --output files as given (fewer than
// the results is fine), and results that copy between strided views (which
// the lowering turns into calls of memrefCopy from the C runner utilities).

// RUN: %PYTHON -c "import numpy as np; np.save('%t.a.npy', np.arange(4, dtype=np.float64)); np.save('%t.small.npy', np.ones((2, 2), np.float32)); np.save('%t.big.npy', np.arange(16, dtype=np.float32).reshape(4, 4))"

// RUN: mxfp4-run exec %s --function=two --input=@%t.a.npy --output=@%t.first.npy --output=@%t.second.npy
// RUN: %PYTHON -c "import numpy as np; a = np.load('%t.first.npy'); b = np.load('%t.second.npy'); assert a.dtype == np.float64 and a.tolist() == [0, 1, 2, 3], a; assert b.dtype == np.int64 and b.tolist() == [4], b"

// RUN: rm -f %t.only.npy
// RUN: mxfp4-run exec %s --function=two --input=@%t.a.npy --output=@%t.only.npy --print | FileCheck %s --check-prefix=TWO
// RUN: %PYTHON -c "import numpy as np; assert np.load('%t.only.npy').tolist() == [0, 1, 2, 3]"
// TWO:      result #0: tensor<4xf64>
// TWO-NEXT: {{^}}[0, 1, 2, 3]
// TWO-NEXT: result #1: tensor<1xi64>
// TWO-NEXT: {{^}}[4]

// RUN: mxfp4-run exec %s --function=insert --input=@%t.small.npy --input=@%t.big.npy | FileCheck %s --check-prefix=INSERT
// INSERT:      result #0: tensor<4x4xf32>
// INSERT-NEXT: {{^\[\[}} 0, 1, 2, 3],
// INSERT-NEXT: {{^}} [ 4, 1, 1, 7],
// INSERT-NEXT: {{^}} [ 8, 1, 1, 11],
// INSERT-NEXT: {{^}} [12, 13, 14, 15]]

// RUN: mxfp4-run exec %s --function=extract --input=@%t.big.npy | FileCheck %s --check-prefix=EXTRACT
// EXTRACT:      result #0: tensor<2x2xf32>
// EXTRACT-NEXT: {{^\[\[}} 5, 6],
// EXTRACT-NEXT: {{^}} [ 9, 10]]

func.func @two(%a: tensor<4xf64>) -> (tensor<4xf64>, tensor<1xi64>) {
  %n = arith.constant dense<4> : tensor<1xi64>
  return %a, %n : tensor<4xf64>, tensor<1xi64>
}

func.func @insert(%a: tensor<2x2xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = tensor.insert_slice %a into %b[1, 1] [2, 2] [1, 1]
      : tensor<2x2xf32> into tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

func.func @extract(%b: tensor<4x4xf32>) -> tensor<2x2xf32> {
  %r = tensor.extract_slice %b[1, 1] [2, 2] [1, 1]
      : tensor<4x4xf32> to tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
