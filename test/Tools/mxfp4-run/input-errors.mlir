// Every problem with the inputs and outputs is one "error:" line that names
// the argument (its index and where it came from), and exit code 1.

// RUN: %PYTHON -c "import numpy as np; np.save('%t.a.npy', np.ones((2, 3), np.float32)); np.save('%t.i32.npy', np.ones((2, 3), np.int32)); np.save('%t.shape.npy', np.ones((3, 2), np.float32)); np.save('%t.fortran.npy', np.asfortranarray(np.ones((2, 3), np.float32))); np.save('%t.big-endian.npy', np.ones((2, 3), '>f4')); np.save('%t.f16.npy', np.ones((2, 3), np.float16)); np.save('%t.bool.npy', np.ones(4, bool)); open('%t.text.npy', 'w').write('not an array'); d = open('%t.a.npy', 'rb').read(); open('%t.truncated.npy', 'wb').write(d[:-4])"

// RUN: not mxfp4-run exec %s --function=add --input=@%t.a.npy --input=@%t.missing.npy --input=1 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: argument #1 (@{{.*}}missing.npy): '{{.*}}missing.npy': cannot read: No such file or directory

// RUN: not mxfp4-run exec %s --function=add --input=@%t.text.npy --input=@%t.a.npy --input=1 2>&1 | FileCheck %s --check-prefix=MAGIC
// MAGIC: error: argument #0 (@{{.*}}text.npy): '{{.*}}text.npy': not a .npy file (bad magic)

// RUN: not mxfp4-run exec %s --function=add --input=@%t.a.npy --input=@%t.truncated.npy --input=1 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// TRUNCATED: error: argument #1 (@{{.*}}truncated.npy): '{{.*}}truncated.npy': truncated data: shape (2, 3) of float32 needs 24 bytes, the file has 20

// RUN: not mxfp4-run exec %s --function=add --input=@%t.fortran.npy --input=@%t.a.npy --input=1 2>&1 | FileCheck %s --check-prefix=FORTRAN
// FORTRAN: error: argument #0 (@{{.*}}fortran.npy): '{{.*}}fortran.npy': Fortran-order arrays are not supported

// RUN: not mxfp4-run exec %s --function=add --input=@%t.big-endian.npy --input=@%t.a.npy --input=1 2>&1 | FileCheck %s --check-prefix=BIG-ENDIAN
// BIG-ENDIAN: error: argument #0 (@{{.*}}big-endian.npy): '{{.*}}big-endian.npy': big-endian data ('>f4') is not supported

// RUN: not mxfp4-run exec %s --function=add --input=@%t.f16.npy --input=@%t.a.npy --input=1 2>&1 | FileCheck %s --check-prefix=DTYPE-UNKNOWN
// DTYPE-UNKNOWN: error: argument #0 (@{{.*}}f16.npy): '{{.*}}f16.npy': unsupported dtype '<f2' (supported: float32 '<f4', float64 '<f8', int32 '<i4', int64 '<i8', uint8 '|u1', uint16 '<u2')

// RUN: not mxfp4-run exec %s --function=add --input=@%t.a.npy --input=@%t.i32.npy --input=1 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: error: argument #1 (@{{.*}}i32.npy): expected tensor<2x3xf32> (dtype float32, shape (2, 3)), got dtype int32 shape (2, 3)

// RUN: not mxfp4-run exec %s --function=add --input=@%t.shape.npy --input=@%t.a.npy --input=1 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: error: argument #0 (@{{.*}}shape.npy): expected tensor<2x3xf32> (dtype float32, shape (2, 3)), got dtype float32 shape (3, 2)

// RUN: not mxfp4-run exec %s --function=add --input=@%t.a.npy --input=@%t.a.npy 2>&1 | FileCheck %s --check-prefix=TOO-FEW
// TOO-FEW: error: @add takes 3 arguments (tensor<2x3xf32>, tensor<2x3xf32>, f32), got 2

// RUN: not mxfp4-run exec %s --function=add --input=@%t.a.npy --input=@%t.a.npy --input=1 --input=2 2>&1 | FileCheck %s --check-prefix=TOO-MANY
// TOO-MANY: error: @add takes 3 arguments (tensor<2x3xf32>, tensor<2x3xf32>, f32), got 4

// RUN: not mxfp4-run exec %s --function=add --input=@%t.a.npy --input=2 --input=1 2>&1 | FileCheck %s --check-prefix=SCALAR-FOR-TENSOR
// SCALAR-FOR-TENSOR: error: argument #1 (2): expected tensor<2x3xf32> (dtype float32, shape (2, 3)), got a scalar

// RUN: not mxfp4-run exec %s --function=add --input=@%t.a.npy --input=@%t.a.npy --input=@%t.a.npy 2>&1 | FileCheck %s --check-prefix=TENSOR-FOR-SCALAR
// TENSOR-FOR-SCALAR: error: argument #2 (@{{.*}}a.npy): expected f32 (a scalar or a 0-d float32 array), got dtype float32 shape (2, 3)

// RUN: not mxfp4-run exec %s --function=add --input=@%t.a.npy --input=@%t.a.npy --input=one 2>&1 | FileCheck %s --check-prefix=NOT-A-NUMBER
// NOT-A-NUMBER: error: argument #2 (one): 'one' is neither a number nor '@FILE.npy'

// RUN: not mxfp4-run exec %s --function=count --input=1.5 2>&1 | FileCheck %s --check-prefix=NOT-AN-INTEGER
// NOT-AN-INTEGER: error: argument #0 (1.5): expected an integer for i32

// RUN: not mxfp4-run exec %s --function=count --input=0x100000000 2>&1 | FileCheck %s --check-prefix=I32-RANGE
// I32-RANGE: error: argument #0 (0x100000000): 4294967296 does not fit in i32

// RUN: not mxfp4-run exec %s --function=count --input=99999999999999999999 2>&1 | FileCheck %s --check-prefix=I64-RANGE
// I64-RANGE: error: argument #0 (99999999999999999999): the integer '99999999999999999999' does not fit in 64 bits

// RUN: not mxfp4-run exec %s --function=bools --input=@%t.bool.npy 2>&1 | FileCheck %s --check-prefix=I1
// I1: error: argument #0 (@{{.*}}bool.npy): '{{.*}}bool.npy': unsupported dtype '|b1'

// RUN: not mxfp4-run exec %s --function=bools --input=@%t.a.npy 2>&1 | FileCheck %s --check-prefix=I1-TYPE
// I1-TYPE: error: argument #0 (@{{.*}}a.npy): type tensor<4xi1> is not supported by exec

// RUN: not mxfp4-run exec %s --function=dynamic --input=@%t.a.npy 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// DYNAMIC: error: result #0: type tensor<?x3xf32>: dynamic result shapes are not supported by exec

// RUN: not mxfp4-run exec %s --function=nope 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: no public function @nope in '{{.*}}input-errors.mlir' (public functions: @add, @count, @bools, @dynamic, @dynamic_input)

// RUN: not mxfp4-run exec %s --function=hidden --input=1 2>&1 | FileCheck %s --check-prefix=PRIVATE
// PRIVATE: error: no public function @hidden in

// RUN: not mxfp4-run exec %s 2>&1 | FileCheck %s --check-prefix=AMBIGUOUS
// AMBIGUOUS: error: '{{.*}}input-errors.mlir' has 5 public functions; choose one with --function (public functions: @add, @count, @bools, @dynamic, @dynamic_input)

// RUN: not mxfp4-run exec %s --function=add --input=@%t.a.npy --input=@%t.a.npy --input=1 --output=@%t.missing-dir/out.npy 2>&1 | FileCheck %s --check-prefix=UNWRITABLE
// UNWRITABLE: error: result #0: '{{.*}}missing-dir/out.npy': cannot write: No such file or directory

// RUN: not mxfp4-run exec %s --function=add --input=@%t.a.npy --input=@%t.a.npy --input=1 --output=%t.out.npy 2>&1 | FileCheck %s --check-prefix=NO-AT
// NO-AT: error: output #0: expected @FILE.npy, got '{{.*}}out.npy'

// RUN: not mxfp4-run exec %s --function=add --input=@%t.a.npy --input=@%t.a.npy --input=1 --output=@%t.o1.npy --output=@%t.o2.npy 2>&1 | FileCheck %s --check-prefix=OUTPUTS
// OUTPUTS: error: 2 outputs given, but @add has 1 result{{$}}

// Dynamic sizes of arguments match any size.
// RUN: mxfp4-run exec %s --function=dynamic_input --input=@%t.a.npy | FileCheck %s --check-prefix=DYNAMIC-INPUT
// DYNAMIC-INPUT: result #0: index
// DYNAMIC-INPUT-NEXT: {{^}}2

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

func.func @count(%n: i32) -> i32 {
  return %n : i32
}

func.func @bools(%a: tensor<4xi1>) -> tensor<4xi1> {
  return %a : tensor<4xi1>
}

func.func @dynamic(%a: tensor<?x3xf32>) -> tensor<?x3xf32> {
  return %a : tensor<?x3xf32>
}

func.func @dynamic_input(%a: tensor<?x3xf32>) -> index {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %a, %c0 : tensor<?x3xf32>
  return %d : index
}

func.func private @hidden(%n: i32) -> i32 {
  return %n : i32
}
