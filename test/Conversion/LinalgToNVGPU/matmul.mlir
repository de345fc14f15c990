// RUN: mxfp4-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(convert-linalg-matmul-to-nvgpu{tma=false},cse))" | FileCheck %s

// The register-staged kernel (`tma=false`), which also takes the
// contractions that tensor maps cannot describe; tma.mlir has the TMA
// kernel.

// A linear layer's GEMM (weights [out, in]): each f32 operand is first
// rounded to a bf16 copy (8 elements a thread), then K contiguous in both
// operands, 8 elements a thread and chunk into two core-matrix stages,
// warpgroup MMAs, the accumulators added to the output in pairs.
// CHECK-LABEL: func.func @linear
// CHECK: %[[XH:.*]] = memref.alloc() : memref<512x256xbf16>
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c64, %{{.*}} = %c1, %{{.*}} = %c1)
// CHECK: vector.load %{{.*}} : memref<512x256xf32>, vector<8xf32>
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: vector.store %{{.*}}, %[[XH]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<512x256xbf16>, vector<8xbf16>
// CHECK: %[[WH:.*]] = memref.alloc() : memref<512x256xbf16>
// CHECK: gpu.launch
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c16, %{{.*}} = %c1, %{{.*}} = %c1) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c256,
// CHECK-SAME: workgroup(%[[A:.*]] : memref<10752xbf16, #gpu.address_space<workgroup>>, %[[B:.*]] : memref<10752xbf16, #gpu.address_space<workgroup>>)
// CHECK: vector.load %[[XH]][%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<512x256xbf16>, vector<8xbf16>
// CHECK: vector.store %{{.*}}, %[[A]][%{{.*}}] {alignment = 16 : i64} : memref<10752xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: scf.for
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-2: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: vector.store %{{.*}}, %[[A]][%{{.*}}] {alignment = 16 : i64} : memref<10752xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: gpu.barrier
// CHECK: scf.yield
// CHECK: vector.load %{{.*}} : memref<512x512xf32>, vector<2xf32>
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK-NOT: linalg.matmul
func.func @linear(%x: memref<512x256xf32>, %w: memref<512x256xf32>, %y: memref<512x512xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<512x256xf32>, memref<512x256xf32>) outs(%y : memref<512x512xf32>)
  return
}

// -----

// Attention's P V (batched, V's rows contiguous): stmatrix.trans stores the
// B tile K-major.
// CHECK-LABEL: func.func @pv
// CHECK: gpu.launch
// CHECK: gpu.launch
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c4, %{{.*}} = %c16, %{{.*}} = %c1)
// CHECK-SAME: workgroup(%{{.*}} : memref<10752xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<10752xbf16, #gpu.address_space<workgroup>>)
// CHECK: nvvm.stmatrix %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
func.func @pv(%p: memref<16x512x512xf32>, %v: memref<16x512x64xf32>, %o: memref<16x512x64xf32>) {
  linalg.batch_matmul ins(%p, %v : memref<16x512x512xf32>, memref<16x512x64xf32>) outs(%o : memref<16x512x64xf32>)
  return
}

// -----

// Left for the generic lowering: an odd N.
// CHECK-LABEL: func.func @odd
// CHECK-NOT: gpu.launch
// CHECK: linalg.matmul
func.func @odd(%a: memref<64x64xf32>, %b: memref<64x17xf32>, %c: memref<64x17xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x17xf32>) outs(%c : memref<64x17xf32>)
  return
}

// -----

// A weight gradient (small output, K = tokens): too few tiles to fill the
// device, so K is split; the splits' partial sums go to a workspace and a
// second launch adds them to the output in order, a pair an 8-byte access.
// CHECK-LABEL: func.func @wgrad
// CHECK: %[[WS:.*]] = memref.alloc() : memref<32x1x256x256xf32>
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %[[SPLIT:[^)]*]]) in (%{{.*}} = %c4, %{{.*}} = %c1, %{{.*}} = %c32)
// CHECK: vector.store %{{.*}}, %[[WS]][%[[SPLIT]], %{{.*}}, %{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<32x1x256x256xf32>, vector<2xf32>
// CHECK: gpu.launch
// CHECK-COUNT-32: vector.load %[[WS]][%{{.*}}] {alignment = 8 : i64}
// CHECK: vector.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : memref<256x256xf32>, vector<2xf32>
func.func @wgrad(%dy: memref<8192x256xf32>, %x: memref<8192x256xf32>, %dw: memref<256x256xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%dy, %x : memref<8192x256xf32>, memref<8192x256xf32>) outs(%dw : memref<256x256xf32>)
  return
}

// -----

// Bufferization gives GEMMs one shared zero buffer and a copy of it into
// each output: the copies and the fill go, and each GEMM writes its output
// (no read of C); a split GEMM's ordered sum starts from zeros.
// CHECK-LABEL: func.func @zero_init
// CHECK-NOT: linalg.fill
// CHECK-NOT: memref.copy
// CHECK: gpu.launch
// CHECK-NOT: vector.load %{{.*}} : memref<512x512xf32>, vector<2xf32>
// CHECK: vector.store %{{.*}}, %{{.*}} : memref<512x512xf32>, vector<2xf32>
// CHECK: gpu.launch
// CHECK: gpu.launch
// CHECK: arith.constant dense<0.000000e+00> : vector<2xf32>
// CHECK-NOT: vector.load %{{.*}} : memref<512x512xf32>, vector<2xf32>
// CHECK: vector.store %{{.*}}, %{{.*}} : memref<512x512xf32>, vector<2xf32>
func.func @zero_init(%x: memref<512x256xf32>, %w: memref<512x256xf32>, %dy: memref<8192x512xf32>, %a: memref<8192x512xf32>) -> (memref<512x512xf32>, memref<512x512xf32>) {
  %zero = arith.constant 0.0 : f32
  %zeros = memref.alloc() : memref<512x512xf32>
  linalg.fill ins(%zero : f32) outs(%zeros : memref<512x512xf32>)
  %y = memref.alloc() : memref<512x512xf32>
  memref.copy %zeros, %y : memref<512x512xf32> to memref<512x512xf32>
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<512x256xf32>, memref<512x256xf32>) outs(%y : memref<512x512xf32>)
  %dw = memref.alloc() : memref<512x512xf32>
  memref.copy %zeros, %dw : memref<512x512xf32> to memref<512x512xf32>
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%dy, %a : memref<8192x512xf32>, memref<8192x512xf32>) outs(%dw : memref<512x512xf32>)
  return %y, %dw : memref<512x512xf32>, memref<512x512xf32>
}

// -----

// A buffer that something besides a zero fill writes is a real initial
// value: the copy stays and the GEMM adds to its output.
// CHECK-LABEL: func.func @real_init
// CHECK: memref.copy
// CHECK: gpu.launch
// CHECK: vector.load %{{.*}} : memref<512x512xf32>, vector<2xf32>
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<2xf32>
func.func @real_init(%x: memref<512x256xf32>, %w: memref<512x256xf32>, %init: memref<512x512xf32>) -> memref<512x512xf32> {
  %y = memref.alloc() : memref<512x512xf32>
  memref.copy %init, %y : memref<512x512xf32> to memref<512x512xf32>
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<512x256xf32>, memref<512x256xf32>) outs(%y : memref<512x512xf32>)
  return %y : memref<512x512xf32>
}

// -----

// A GEMM writing a freshly zeroed buffer (the shared zero buffer's last
// GEMM) overwrites it: the fill is dead.
// CHECK-LABEL: func.func @in_place
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK-NOT: vector.load %{{.*}} : memref<512x512xf32>, vector<2xf32>
// CHECK: vector.store %{{.*}}, %{{.*}} : memref<512x512xf32>, vector<2xf32>
func.func @in_place(%x: memref<512x256xf32>, %w: memref<512x256xf32>) -> memref<512x512xf32> {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<512x512xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<512x512xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<512x256xf32>, memref<512x256xf32>) outs(%y : memref<512x512xf32>)
  return %y : memref<512x512xf32>
}

// -----

// Two GEMMs reading one activation (q and k projections) share its bf16
// copy; once the activation is written again, the next GEMM makes a new
// one.
// CHECK-LABEL: func.func @shared_copy
// CHECK-COUNT-1: memref.alloc() : memref<512x256xbf16>
// CHECK-NOT: memref.alloc() : memref<512x256xbf16>
// CHECK: linalg.fill
// CHECK: memref.alloc() : memref<512x256xbf16>
func.func @shared_copy(%x: memref<512x256xf32>, %wq: memref<256x256xbf16>, %wk: memref<256x256xbf16>, %q: memref<512x256xf32>, %k: memref<512x256xf32>, %k2: memref<512x256xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wq : memref<512x256xf32>, memref<256x256xbf16>) outs(%q : memref<512x256xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wk : memref<512x256xf32>, memref<256x256xbf16>) outs(%k : memref<512x256xf32>)
  linalg.fill ins(%one : f32) outs(%x : memref<512x256xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wk : memref<512x256xf32>, memref<256x256xbf16>) outs(%k2 : memref<512x256xf32>)
  return
}

// -----

// The zeros are read before the GEMM: the fill stays.
// CHECK-LABEL: func.func @zeros_read
// CHECK: linalg.fill
// CHECK: memref.copy
// CHECK: gpu.launch
// CHECK-NOT: vector.load %{{.*}} : memref<512x512xf32>, vector<2xf32>
// CHECK: vector.store %{{.*}}, %{{.*}} : memref<512x512xf32>, vector<2xf32>
func.func @zeros_read(%x: memref<512x256xf32>, %w: memref<512x256xf32>, %snapshot: memref<512x512xf32>) -> memref<512x512xf32> {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<512x512xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<512x512xf32>)
  memref.copy %y, %snapshot : memref<512x512xf32> to memref<512x512xf32>
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<512x256xf32>, memref<512x256xf32>) outs(%y : memref<512x512xf32>)
  return %y : memref<512x512xf32>
}

