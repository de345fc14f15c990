// RUN: mxfp4-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(convert-linalg-to-gpu-launch,canonicalize))' | FileCheck %s

// Elementwise: one work-item per element, 256 a workgroup, guarded tail
// (1001 elements: not a multiple of the 4 a work-item takes below).
// CHECK-LABEL: func.func @elementwise
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C4]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C256]],
// CHECK: %[[BASE:.*]] = arith.muli %[[BX]], %{{.*}} : index
// CHECK: %[[ID:.*]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[ID]], %{{.*}} : index
// CHECK: scf.if %[[IN]] {
// CHECK: %[[X:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<1001xf32>
// CHECK: %[[E:.*]] = math.exp %[[X]] : f32
// CHECK: memref.store %[[E]], %{{.*}}[%{{.*}}] : memref<1001xf32>
// CHECK: gpu.terminator
func.func @elementwise(%a: memref<1001xf32>, %b: memref<1001xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%a : memref<1001xf32>) outs(%b : memref<1001xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A large elementwise op (2^18 runs of 4 elements or more) with an
// innermost loop of a multiple of 4 elements: a work-item takes 4
// consecutive ones. An operand along that loop is one
// 16-byte load or store (aligned: the buffers are), one that does not vary along it (the bias) one
// load, one that runs along it in another dimension (the transposed
// operand) four; the payload runs four times, linalg.index at each element.
// CHECK-LABEL: func.func @elementwise_vectors
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1024,
// CHECK: %[[ROW:.*]] = arith.remui %{{.*}}, %c1024 : index
// CHECK: %[[FIRST:.*]] = arith.muli %{{.*}}, %c4 : index
// CHECK: %[[X:.*]] = vector.load %arg0[%[[ROW]], %[[FIRST]]] {alignment = 16 : i64} : memref<1024x1024xf32>, vector<4xf32>
// CHECK-COUNT-4: vector.extract %[[X]]
// CHECK: %[[BIAS:.*]] = memref.load %arg1[%[[ROW]]] : memref<1024xf32>
// CHECK-COUNT-4: memref.load %arg2[%{{.*}}, %[[ROW]]] : memref<1024x1024xf32>
// CHECK-COUNT-4: arith.addf %{{.*}}, %[[BIAS]] : f32
// CHECK: %[[Y:.*]] = vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: vector.store %[[Y]], %arg3[%[[ROW]], %[[FIRST]]] {alignment = 16 : i64} : memref<1024x1024xf32>, vector<4xf32>
func.func @elementwise_vectors(%x: memref<1024x1024xf32>, %bias: memref<1024xf32>,
                               %t: memref<1024x1024xf32>, %y: memref<1024x1024xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %bias, %t : memref<1024x1024xf32>, memref<1024xf32>, memref<1024x1024xf32>) outs(%y : memref<1024x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %out: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %0 = arith.mulf %a, %c : f32
    %1 = arith.addf %0, %jf : f32
    %2 = arith.addf %1, %b : f32
    linalg.yield %2 : f32
  }
  return
}

// -----

// The cross-entropy gradient's shape: the labels, a view one token on (a
// strided layout), do not vary along the vocabulary and are read once a
// run, so the logits and the gradient still move 16 bytes at a time. A
// strided operand read along the innermost loop keeps one element a
// work-item.
// CHECK-LABEL: func.func @strided_invariant
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1024,
// CHECK: vector.load %arg0[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<1024x1024xf32>, vector<4xf32>
// CHECK: memref.load %arg1[%{{.*}}] : memref<1024xi32, strided<[1], offset: 1>>
// CHECK: vector.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<1024x1024xbf16>, vector<4xbf16>
// CHECK-LABEL: func.func @strided_vector
// CHECK-NOT: vector.load
// CHECK: memref.load %{{.*}} : memref<1024x1024xf32, strided<[1025, 1], offset: 1>>
func.func @strided_invariant(%logits: memref<1024x1024xf32>, %labels: memref<1024xi32, strided<[1], offset: 1>>, %grad: memref<1024x1024xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%logits, %labels : memref<1024x1024xf32>, memref<1024xi32, strided<[1], offset: 1>>) outs(%grad : memref<1024x1024xbf16>) {
  ^bb0(%x: f32, %label: i32, %out: bf16):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %hit = arith.cmpi eq, %ji, %label : i32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %t = arith.select %hit, %one, %zero : f32
    %d = arith.subf %x, %t : f32
    %r = arith.truncf %d : f32 to bf16
    linalg.yield %r : bf16
  }
  return
}
func.func @strided_vector(%x: memref<1024x1024xf32, strided<[1025, 1], offset: 1>>, %y: memref<1024x1024xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<1024x1024xf32, strided<[1025, 1], offset: 1>>) outs(%y : memref<1024x1024xf32>) {
  ^bb0(%a: f32, %out: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// A row reduction: one work-item per row, the reduction dimension a loop
// carrying the accumulator (read from the output first).
// CHECK-LABEL: func.func @row_sum
// CHECK: gpu.launch
// CHECK-NOT: scf.if
// CHECK: %[[INIT:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<512xf32>
// CHECK: %[[SUM:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK: %[[V:.*]] = memref.load %{{.*}}[%{{.*}}, %[[K]]] : memref<512x64xf32>
// CHECK: %[[NEW:.*]] = arith.addf %[[V]], %[[ACC]] : f32
// CHECK: scf.yield %[[NEW]] : f32
// CHECK: memref.store %[[SUM]], %{{.*}}[%{{.*}}] : memref<512xf32>
func.func @row_sum(%a: memref<512x64xf32>, %b: memref<512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<512x64xf32>) outs(%b : memref<512xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Named ops are generalized; a batch matmul gets one work-item per output
// element and a K loop. memref.copy becomes a copy kernel.
// CHECK-LABEL: func.func @named
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: gpu.launch
// CHECK: memref.load %{{.*}} : memref<2x16x8xf32>
// CHECK: memref.store %{{.*}} : memref<2x16x8xf32>
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.
func.func @named(%a: memref<2x16x32xf32>, %b: memref<2x32x8xf32>, %c: memref<2x16x8xf32>, %d: memref<2x16x8xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x16x32xf32>, memref<2x32x8xf32>) outs(%c : memref<2x16x8xf32>)
  memref.copy %c, %d : memref<2x16x8xf32> to memref<2x16x8xf32>
  return
}

// -----

// A scalar read from memory and used by a later kernel (the global gradient
// norm) is computed by a one-work-item launch and passed through a 0-d
// buffer.
// CHECK-LABEL: func.func @device_scalar
// CHECK: %[[SLOT:.*]] = memref.alloc() : memref<f32>
// CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c1
// CHECK: %[[N:.*]] = memref.load %{{.*}}[] : memref<f32>
// CHECK: %[[S:.*]] = math.sqrt %[[N]] : f32
// CHECK: memref.store %[[S]], %[[SLOT]][] : memref<f32>
// CHECK: gpu.launch
// CHECK: %[[R:.*]] = memref.load %[[SLOT]][] : memref<f32>
// CHECK: arith.divf %{{.*}}, %[[R]] : f32
func.func @device_scalar(%norm: memref<f32>, %g: memref<64xf32>, %out: memref<64xf32>) {
  %n = memref.load %norm[] : memref<f32>
  %s = math.sqrt %n : f32
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%g : memref<64xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%x: f32, %y: f32):
    %q = arith.divf %x, %s : f32
    linalg.yield %q : f32
  }
  return
}

// -----

// Every intermediate is freed after its last use (through its views); what
// the function returns is not.
// CHECK-LABEL: func.func @lifetimes
// CHECK: %[[T:.*]] = memref.alloc() : memref<64xf32>
// CHECK: %[[R:.*]] = memref.alloc() : memref<64xf32>
// CHECK: gpu.launch
// CHECK: gpu.launch
// CHECK: memref.dealloc %[[T]] : memref<64xf32>
// CHECK-NOT: memref.dealloc
// CHECK: return %[[R]]
func.func @lifetimes(%a: memref<64xf32>) -> memref<64xf32> {
  %t = memref.alloc() : memref<64xf32>
  %r = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%a : memref<64xf32>) outs(%t : memref<64xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  %v = memref.expand_shape %t [[0, 1]] output_shape [8, 8] : memref<64xf32> into memref<8x8xf32>
  %w = memref.collapse_shape %v [[0, 1]] : memref<8x8xf32> into memref<64xf32>
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%w : memref<64xf32>) outs(%r : memref<64xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.log %x : f32
    linalg.yield %e : f32
  }
  return %r : memref<64xf32>
}

// -----

// A sum over a large space into many points (a bias gradient): split into
// slices that write partial sums, then a second launch adds them to the
// output in slice order.
// CHECK-LABEL: func.func @bias_gradient
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<64x512xf32>
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c128,
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f32) {
// CHECK: arith.mulf
// CHECK: memref.store %{{.*}}, %[[PARTIAL]][%{{.*}}, %{{.*}}] : memref<64x512xf32>
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c2,
// CHECK: %[[INIT:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<512xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args(%{{.*}} = %[[INIT]]) -> (f32) {
// CHECK: memref.load %[[PARTIAL]]
// CHECK: memref.dealloc %[[PARTIAL]]
func.func @bias_gradient(%x: memref<4096x512xf32>, %y: memref<512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<4096x512xf32>) outs(%y : memref<512xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A sum of squares into one scalar (a gradient norm): 1024 workgroups, each
// striding its 8192-element slice, combine through a workgroup tree into
// partials; one workgroup strides the 1024 partials, combines them the same
// way, and its work-item 0 adds the total to the output.
// CHECK-LABEL: func.func @scalar_sum_of_squares
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<1024x1xf32>
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c1024, %{{.*}} = %c1, %{{.*}} = %c1) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256, %{{.*}} = %c1, %{{.*}} = %c1) workgroup(%[[WG:.*]] : memref<256xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[FIRST:.*]] = arith.muli %[[B]], %c8192 : index
// CHECK: %[[NEXT:.*]] = arith.addi %[[FIRST]], %c8192 : index
// CHECK: %[[LAST:.*]] = arith.minui %[[NEXT]], %c8388608 : index
// CHECK: %[[START:.*]] = arith.addi %[[FIRST]], %[[T]] : index
// CHECK: %[[SUM:.*]] = scf.for %{{.*}} = %[[START]] to %[[LAST]] step %c256 iter_args(%{{.*}} = %cst) -> (f32) {
// CHECK: arith.mulf
// CHECK: memref.store %[[SUM]], %[[WG]][%[[T]]] : memref<256xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[LOW:.*]] = arith.cmpi ult, %[[T]], %c128 : index
// CHECK-NEXT: scf.if %[[LOW]] {
// CHECK-NEXT: %[[OTHER:.*]] = arith.addi %[[T]], %c128 : index
// CHECK-NEXT: %[[MINE:.*]] = memref.load %[[WG]][%[[T]]]
// CHECK-NEXT: %[[THEIRS:.*]] = memref.load %[[WG]][%[[OTHER]]]
// CHECK-NEXT: %[[BOTH:.*]] = arith.addf %[[MINE]], %[[THEIRS]] : f32
// CHECK-NEXT: memref.store %[[BOTH]], %[[WG]][%[[T]]]
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-6: gpu.barrier
// CHECK: arith.cmpi ult, %[[T]], %c1 : index
// CHECK-NOT: gpu.barrier
// CHECK: %[[ZERO:.*]] = arith.cmpi eq, %[[T]], %c0 : index
// CHECK-NEXT: scf.if %[[ZERO]] {
// CHECK-NEXT: %[[TOTAL:.*]] = memref.load %[[WG]][%c0]
// CHECK-NEXT: memref.store %[[TOTAL]], %[[PARTIAL]][%[[B]], %c0] : memref<1024x1xf32>
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1, %{{.*}} = %c1, %{{.*}} = %c1) threads(%[[T2:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256, %{{.*}} = %c1, %{{.*}} = %c1) workgroup(%[[WG2:.*]] : memref<256xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[PARTIALS:.*]] = scf.for %[[S:.*]] = %[[T2]] to %c1024 step %c256 iter_args(%[[ACC:.*]] = %cst) -> (f32) {
// CHECK-NEXT: %[[P:.*]] = memref.load %[[PARTIAL]][%[[S]], %c0] : memref<1024x1xf32>
// CHECK-NEXT: arith.addf %[[ACC]], %[[P]] : f32
// CHECK: memref.store %[[PARTIALS]], %[[WG2]][%[[T2]]]
// CHECK-COUNT-7: gpu.barrier
// CHECK: %[[ZERO2:.*]] = arith.cmpi eq, %[[T2]], %c0 : index
// CHECK-NEXT: scf.if %[[ZERO2]] {
// CHECK-NEXT: %[[TOTAL2:.*]] = memref.load %[[WG2]][%c0]
// CHECK-NEXT: %[[OUT:.*]] = memref.load %{{.*}}[] : memref<f32>
// CHECK-NEXT: %[[RESULT:.*]] = arith.addf %[[OUT]], %[[TOTAL2]] : f32
// CHECK-NEXT: memref.store %[[RESULT]], %{{.*}}[] : memref<f32>
// CHECK: memref.dealloc %[[PARTIAL]]
func.func @scalar_sum_of_squares(%x: memref<2048x4096xf32>, %y: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<2048x4096xf32>) outs(%y : memref<f32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Too short to split (8 elements a work-item at least): one workgroup
// strides the whole space, and its work-item 0 combines the tree's total
// with the output.
// CHECK-LABEL: func.func @scalar_max
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1, %{{.*}} = %c1, %{{.*}} = %c1) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256, %{{.*}} = %c1, %{{.*}} = %c1) workgroup(%[[WG:.*]] : memref<256xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for %{{.*}} = %[[T]] to %c2048 step %c256 iter_args(%{{.*}} = %cst) -> (f32) {
// CHECK: arith.maximumf
// CHECK-COUNT-7: gpu.barrier
// CHECK: scf.if
// CHECK: %[[TOTAL:.*]] = memref.load %[[WG]][%c0]
// CHECK-NEXT: %[[OUT:.*]] = memref.load %{{.*}}[] : memref<f32>
// CHECK-NEXT: %[[RESULT:.*]] = arith.maximumf %[[OUT]], %[[TOTAL]] : f32
// CHECK-NEXT: memref.store %[[RESULT]], %{{.*}}[] : memref<f32>
// CHECK-NOT: gpu.launch
func.func @scalar_max(%x: memref<2048xf32>, %y: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%x : memref<2048xf32>) outs(%y : memref<f32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %o, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The embedding gradient's scatter-add into an argument (chunks and the
// sorted form below need a buffer the function allocates): one work-item
// per column, each looping over the tokens in order (the sequential
// result, in parallel).
// CHECK-LABEL: func.func @scatter_add
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c1, %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256,
// CHECK: scf.for %[[T:.*]] = %c0 to %c2048 step %c1 {
// CHECK: %[[ROW:.*]] = arith.index_cast
// CHECK: memref.load %{{.*}}[%[[ROW]], %[[TX]]] : memref<256x256xf32>
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[ROW]], %[[TX]]] : memref<256x256xf32>
func.func @scatter_add(%tok: memref<2048xi32>, %dx: memref<2048x256xf32>, %de: memref<256x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2048 = arith.constant 2048 : index
  %c256 = arith.constant 256 : index
  scf.for %t = %c0 to %c2048 step %c1 {
    %v = memref.load %tok[%t] : memref<2048xi32>
    %i = arith.index_cast %v : i32 to index
    scf.for %d = %c0 to %c256 step %c1 {
      %a = memref.load %de[%i, %d] : memref<256x256xf32>
      %b = memref.load %dx[%t, %d] : memref<2048x256xf32>
      %s = arith.addf %a, %b : f32
      memref.store %s, %de[%i, %d] : memref<256x256xf32>
    }
  }
  return
}

// -----

// A long scatter-add (8192 tokens): 32 chunks of 256 tokens times 256
// columns, each work-item zeroing its column of its chunk's workspace slice
// and accumulating its tokens there in order; then a work-item an element
// adds the 32 slices to the output in chunk order.
// CHECK-LABEL: func.func @scatter_add_chunks
// CHECK: %[[DE:.*]] = memref.alloc() : memref<256x256xf32>
// CHECK: %[[WS:.*]] = memref.alloc() : memref<32x256x256xf32>
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c32,
// CHECK: %[[ID:.*]] = arith.addi
// CHECK: %[[CHUNK:.*]] = arith.divui %[[ID]], %c256 : index
// CHECK: %[[COL:.*]] = arith.remui %[[ID]], %c256 : index
// CHECK: scf.for %[[R:.*]] = %c0 to %c256 step %c1 {
// CHECK-NEXT: memref.store %cst, %[[WS]][%[[CHUNK]], %[[R]], %[[COL]]] : memref<32x256x256xf32>
// CHECK: %[[FIRST:.*]] = arith.muli %[[CHUNK]], %c256 : index
// CHECK: %[[NEXT:.*]] = arith.addi %[[FIRST]], %c256 : index
// CHECK: %[[LAST:.*]] = arith.minui %[[NEXT]], %c8192 : index
// CHECK: scf.for %[[T:.*]] = %[[FIRST]] to %[[LAST]] step %c1 {
// CHECK: %[[ROW:.*]] = arith.index_cast
// CHECK: %[[OLD:.*]] = memref.load %[[WS]][%[[CHUNK]], %[[ROW]], %[[COL]]] : memref<32x256x256xf32>
// CHECK: %[[X:.*]] = memref.load %{{.*}}[%[[T]], %[[COL]]] : memref<8192x256xf32>
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[X]] : f32
// CHECK: memref.store %[[NEW]], %[[WS]][%[[CHUNK]], %[[ROW]], %[[COL]]] : memref<32x256x256xf32>
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256,
// CHECK: %[[INIT:.*]] = memref.load %[[DE]][%[[I:.*]], %[[J:.*]]] : memref<256x256xf32>
// CHECK: %[[SUM:.*]] = scf.for %[[C:.*]] = %c0 to %c32 step %c1 iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT: %[[P:.*]] = memref.load %[[WS]][%[[C]], %[[I]], %[[J]]] : memref<32x256x256xf32>
// CHECK-NEXT: arith.addf %[[ACC]], %[[P]] : f32
// CHECK: memref.store %[[SUM]], %[[DE]][%[[I]], %[[J]]] : memref<256x256xf32>
// CHECK: memref.dealloc %[[WS]]
// CHECK: return %[[DE]]
func.func @scatter_add_chunks(%tok: memref<8192xi32>, %dx: memref<8192x256xf32>) -> memref<256x256xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8192 = arith.constant 8192 : index
  %c256 = arith.constant 256 : index
  %de = memref.alloc() : memref<256x256xf32>
  scf.for %t = %c0 to %c8192 step %c1 {
    %v = memref.load %tok[%t] : memref<8192xi32>
    %i = arith.index_cast %v : i32 to index
    scf.for %d = %c0 to %c256 step %c1 {
      %a = memref.load %de[%i, %d] : memref<256x256xf32>
      %b = memref.load %dx[%t, %d] : memref<8192x256xf32>
      %s = arith.addf %a, %b : f32
      memref.store %s, %de[%i, %d] : memref<256x256xf32>
    }
  }
  return %de : memref<256x256xf32>
}

// -----

// A scatter-add into a vocabulary too large for chunked copies (131072 x
// 256 rows): keys row << 13 | token; a work-item a (key tile, token)
// counts the keys of its tile below its key and below the next row's first
// key; a work-item a token sums the 32 tiles' counts and stores its key and
// its row's end at its position in the sorted order; a work-item a
// (position, pair of columns c and c + 128) at a row's first position adds
// the row's tokens in order, 32 keys at a time, then the tail 8 at a time
// with selects dropping the positions past the row's end.
// CHECK-LABEL: func.func @scatter_add_sorted
// CHECK: %[[DE:.*]] = memref.alloc() : memref<131072x256xf32>
// CHECK: %[[KEYS:.*]] = memref.alloc() : memref<8192xi32>
// CHECK: %[[COUNTS:.*]] = memref.alloc() : memref<2x32x8192xi32>
// CHECK: %[[SORTED:.*]] = memref.alloc() : memref<8192xi32>
// CHECK: %[[ENDS:.*]] = memref.alloc() : memref<8192xi32>
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c32,
// CHECK: %[[J:.*]] = arith.addi
// CHECK: %[[ID:.*]] = memref.load %{{.*}}[%[[J]]] : memref<8192xi32>
// CHECK: %[[ROW:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[ROW]], %c131072 : index
// CHECK: %[[VALID:.*]] = arith.select %[[IN]], %[[ROW]], %c131072 : index
// CHECK: %[[HIGH:.*]] = arith.shli %{{.*}}, %c13_i32 : i32
// CHECK: %[[KEY:.*]] = arith.ori %[[HIGH]], %{{.*}} : i32
// CHECK: memref.store %[[KEY]], %[[KEYS]][%[[J]]] : memref<8192xi32>
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1024,
// CHECK: %[[TILE:.*]] = arith.divui %{{.*}}, %c8192 : index
// CHECK: %[[TOKEN:.*]] = arith.remui %{{.*}}, %c8192 : index
// CHECK: %[[MINE:.*]] = memref.load %[[KEYS]][%[[TOKEN]]] : memref<8192xi32>
// CHECK: %[[NEXT:.*]] = arith.shli %{{.*}}, %c13_i32 : i32
// CHECK: %[[FIRST:.*]] = arith.muli %[[TILE]], %c256 : index
// CHECK: %[[C:.*]]:2 = scf.for %[[K:.*]] = %[[FIRST]] to %{{.*}} step %c1 iter_args({{.*}}) -> (i32, i32) {
// CHECK-NEXT: %[[OTHER:.*]] = memref.load %[[KEYS]][%[[K]]] : memref<8192xi32>
// CHECK-NEXT: arith.cmpi ult, %[[OTHER]], %[[MINE]] : i32
// CHECK-NEXT: arith.cmpi ult, %[[OTHER]], %[[NEXT]] : i32
// CHECK: memref.store %[[C]]#0, %[[COUNTS]][%c0, %[[TILE]], %[[TOKEN]]]
// CHECK: memref.store %[[C]]#1, %[[COUNTS]][%c1, %[[TILE]], %[[TOKEN]]]
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c32,
// CHECK: %[[S:.*]]:2 = scf.for %{{.*}} = %c0 to %c32 step %c1
// CHECK: %[[POS:.*]] = arith.index_castui %[[S]]#0 : i32 to index
// CHECK: %[[K2:.*]] = memref.load %[[KEYS]]
// CHECK: memref.store %[[K2]], %[[SORTED]][%[[POS]]] : memref<8192xi32>
// CHECK: memref.store %[[S]]#1, %[[ENDS]][%[[POS]]] : memref<8192xi32>
// CHECK: memref.dealloc %[[COUNTS]]
// CHECK: memref.dealloc %[[KEYS]]
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c4096,
// CHECK: %[[P:.*]] = arith.divui %{{.*}}, %c128 : index
// CHECK: %[[COL:.*]] = arith.remui %{{.*}}, %c128 : index
// CHECK: %[[R:.*]] = arith.shrui %{{.*}}, %c13_i32 : i32
// CHECK: %[[BEFORE:.*]] = arith.shrui %{{.*}}, %c13_i32 : i32
// CHECK: %[[NEW:.*]] = arith.cmpi ne, %[[BEFORE]], %[[R]] : i32
// CHECK: scf.if
// CHECK: %[[RI:.*]] = arith.index_castui %[[R]] : i32 to index
// CHECK: %[[INIT0:.*]] = memref.load %[[DE]][%[[RI]], %[[COL]]] : memref<131072x256xf32>
// CHECK: %[[COL1:.*]] = arith.addi %[[COL]], %c128 : index
// CHECK: %[[INIT1:.*]] = memref.load %[[DE]][%[[RI]], %[[COL1]]] : memref<131072x256xf32>
// CHECK: %[[END:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK: %[[WHOLE:.*]] = arith.addi %[[P]], %{{.*}} : index
// CHECK: %[[MAIN:.*]]:2 = scf.for %{{.*}} = %[[P]] to %[[WHOLE]] step %c32 iter_args(%[[A0:.*]] = %[[INIT0]], %[[A1:.*]] = %[[INIT1]]) -> (f32, f32) {
// CHECK: %[[K0:.*]] = memref.load %[[SORTED]]
// CHECK: arith.andi %[[K0]], %c8191_i32 : i32
// CHECK: %[[X0:.*]] = memref.load %{{.*}}[%{{.*}}, %[[COL]]] : memref<8192x256xf32>
// CHECK: %[[X1:.*]] = memref.load %{{.*}}[%{{.*}}, %[[COL1]]] : memref<8192x256xf32>
// CHECK-COUNT-62: memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<8192x256xf32>
// CHECK: arith.addf %[[A0]], %[[X0]] : f32
// CHECK-NEXT: arith.addf %[[A1]], %[[X1]] : f32
// CHECK-NOT: arith.select
// CHECK: scf.yield
// CHECK: %[[SUM:.*]]:2 = scf.for %[[Q:.*]] = %[[WHOLE]] to %[[END]] step %c8 iter_args(%[[T0:.*]] = %[[MAIN]]#0, %[[T1:.*]] = %[[MAIN]]#1) -> (f32, f32) {
// CHECK: %[[S0:.*]] = arith.addf %[[T0]], %{{.*}} : f32
// CHECK-NEXT: %[[S1:.*]] = arith.addf %[[T1]], %{{.*}} : f32
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[S0]], %{{.*}} : f32
// CHECK-NEXT: arith.select %{{.*}}, %[[S2]], %[[S0]] : f32
// CHECK-COUNT-13: arith.select
// CHECK: memref.store %[[SUM]]#0, %[[DE]][%[[RI]], %[[COL]]] : memref<131072x256xf32>
// CHECK: memref.store %[[SUM]]#1, %[[DE]][%[[RI]], %[[COL1]]] : memref<131072x256xf32>
// CHECK: return %[[DE]]
func.func @scatter_add_sorted(%tok: memref<8192xi32>, %dx: memref<8192x256xf32>) -> memref<131072x256xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8192 = arith.constant 8192 : index
  %c256 = arith.constant 256 : index
  %de = memref.alloc() : memref<131072x256xf32>
  scf.for %t = %c0 to %c8192 step %c1 {
    %v = memref.load %tok[%t] : memref<8192xi32>
    %i = arith.index_cast %v : i32 to index
    scf.for %d = %c0 to %c256 step %c1 {
      %a = memref.load %de[%i, %d] : memref<131072x256xf32>
      %b = memref.load %dx[%t, %d] : memref<8192x256xf32>
      %s = arith.addf %a, %b : f32
      memref.store %s, %de[%i, %d] : memref<131072x256xf32>
    }
  }
  return %de : memref<131072x256xf32>
}

// -----

// Zeroed accumulators cost no launch: a copy of a buffer that a fill has
// made zero (a bufferized shared fill) into a reduction's output folds into
// the reduction, which starts from the constant instead of loading it, as
// long as the copy comes before anything else writes the filled buffer
// (here the last reduction, which accumulates into it in place, keeps its
// loads). The fill itself stays.
// CHECK-LABEL: func.func @constant_inits
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[ZEROS:.*]][%{{.*}}] : memref<256xf32>
// CHECK: gpu.launch
// CHECK-NOT: memref.load %[[ZEROS]]
// CHECK: %[[SUM:.*]] = scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args(%{{.*}} = %cst{{.*}}) -> (f32) {
// CHECK: memref.store %[[SUM]], %[[A:.*]][%{{.*}}] : memref<256xf32>
// CHECK: gpu.launch
// CHECK: %[[OLD:.*]] = memref.load %[[ZEROS]][%{{.*}}] : memref<256xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args(%{{.*}} = %[[OLD]]) -> (f32) {
// CHECK: gpu.launch
// CHECK: memref.load %[[ZEROS]]
// CHECK-NOT: gpu.launch
// CHECK: return %[[A]], %{{.*}}, %[[ZEROS]]
func.func @constant_inits(%x: memref<256x64xf32>) -> (memref<256xf32>, memref<256xf32>, memref<256xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %zeros = memref.alloc() : memref<256xf32>
  linalg.fill ins(%zero : f32) outs(%zeros : memref<256xf32>)
  %a = memref.alloc() : memref<256xf32>
  memref.copy %zeros, %a : memref<256xf32> to memref<256xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<256x64xf32>) outs(%a : memref<256xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<256x64xf32>) outs(%zeros : memref<256xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  %b = memref.alloc() : memref<256xf32>
  memref.copy %zeros, %b : memref<256xf32> to memref<256xf32>
  return %a, %b, %zeros : memref<256xf32>, memref<256xf32>, memref<256xf32>
}

// -----

// A chain of loads and scalar ops spread between launches (the gradient
// norm's sum: a load and an add after each parameter's sum of squares)
// moves next to its end: one one-work-item launch, not one a link.
// CHECK-LABEL: func.func @scalar_chain
// CHECK-COUNT-2: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1, %{{.*}} = %c1, %{{.*}} = %c1) threads({{.*}}) in (%{{.*}} = %c256,
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1, %{{.*}} = %c1, %{{.*}} = %c1) threads({{.*}}) in (%{{.*}} = %c1,
// CHECK: memref.load
// CHECK: memref.load
// CHECK: arith.addf
// CHECK: math.sqrt
// CHECK: memref.store
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @scalar_chain(%x: memref<64xf32>, %y: memref<64xf32>, %sx: memref<f32>, %sy: memref<f32>, %norm: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%x : memref<64xf32>) outs(%sx : memref<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  %a = memref.load %sx[] : memref<f32>
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%y : memref<64xf32>) outs(%sy : memref<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  %b = memref.load %sy[] : memref<f32>
  %t = arith.addf %a, %b : f32
  %r = math.sqrt %t : f32
  memref.store %r, %norm[] : memref<f32>
  return
}
