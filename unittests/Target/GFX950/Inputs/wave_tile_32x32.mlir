module attributes {gpu.container_module} {
  gpu.module @gemm [#rocdl.target<chip = "gfx950", abi = "500">] {
    // One wave computes a 32x32 tile of C = A * B^T, A: [32][K/2] fp4, B: [32][K/2],
    // pre-shuffled scales: 256 bytes per (32-row, 256-K) chunk.
    gpu.func @wave_tile_32x32(%A: memref<1048576xi8, #gpu.address_space<global>>,
                              %B: memref<1048576xi8, #gpu.address_space<global>>,
                              %SA: memref<65536xi8, #gpu.address_space<global>>,
                              %SB: memref<65536xi8, #gpu.address_space<global>>,
                              %C: memref<1024xf32, #gpu.address_space<global>>,
                              %K: i32) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c16 = arith.constant 16 : index
      %c8 = arith.constant 8 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %c256 = arith.constant 256 : index
      %tid = gpu.thread_id x
      %row = arith.remui %tid, %c32 : index
      %kh = arith.divui %tid, %c32 : index
      %Ki = arith.index_cast %K : i32 to index
      %rowBytes = arith.divui %Ki, %c16 : index
      %rowBytes2 = arith.muli %rowBytes, %c8 : index
      %nchunks = arith.divui %Ki, %c256 : index
      %base0 = arith.muli %row, %rowBytes2 : index
      %khoff = arith.muli %kh, %c16 : index
      %base = arith.addi %base0, %khoff : index
      %zero = arith.constant dense<0.0> : vector<16xf32>
      %res = scf.for %i = %c0 to %nchunks step %c1 iter_args(%acc = %zero) -> vector<16xf32> {
        %so0 = arith.muli %i, %c256 : index
        %so1 = arith.muli %tid, %c4 : index
        %so = arith.addi %so0, %so1 : index
        %sa8 = vector.load %SA[%so] : memref<65536xi8, #gpu.address_space<global>>, vector<4xi8>
        %sa = vector.bitcast %sa8 : vector<4xi8> to vector<4xf8E8M0FNU>
        %sb8 = vector.load %SB[%so] : memref<65536xi8, #gpu.address_space<global>>, vector<4xi8>
        %sb = vector.bitcast %sb8 : vector<4xi8> to vector<4xf8E8M0FNU>
        %ko = arith.muli %i, %c128 : index
        %o0 = arith.addi %base, %ko : index
        %o1 = arith.addi %o0, %c32 : index
        %o2x = arith.addi %o1, %c32 : index
        %o3 = arith.addi %o2x, %c32 : index
        %a0b = vector.load %A[%o0] : memref<1048576xi8, #gpu.address_space<global>>, vector<16xi8>
        %b0b = vector.load %B[%o0] : memref<1048576xi8, #gpu.address_space<global>>, vector<16xi8>
        %a1b = vector.load %A[%o1] : memref<1048576xi8, #gpu.address_space<global>>, vector<16xi8>
        %b1b = vector.load %B[%o1] : memref<1048576xi8, #gpu.address_space<global>>, vector<16xi8>
        %a2b = vector.load %A[%o2x] : memref<1048576xi8, #gpu.address_space<global>>, vector<16xi8>
        %b2b = vector.load %B[%o2x] : memref<1048576xi8, #gpu.address_space<global>>, vector<16xi8>
        %a3b = vector.load %A[%o3] : memref<1048576xi8, #gpu.address_space<global>>, vector<16xi8>
        %b3b = vector.load %B[%o3] : memref<1048576xi8, #gpu.address_space<global>>, vector<16xi8>
        %a0 = vector.bitcast %a0b : vector<16xi8> to vector<32xf4E2M1FN>
        %b0 = vector.bitcast %b0b : vector<16xi8> to vector<32xf4E2M1FN>
        %a1 = vector.bitcast %a1b : vector<16xi8> to vector<32xf4E2M1FN>
        %b1 = vector.bitcast %b1b : vector<16xi8> to vector<32xf4E2M1FN>
        %a2 = vector.bitcast %a2b : vector<16xi8> to vector<32xf4E2M1FN>
        %b2 = vector.bitcast %b2b : vector<16xi8> to vector<32xf4E2M1FN>
        %a3 = vector.bitcast %a3b : vector<16xi8> to vector<32xf4E2M1FN>
        %b3 = vector.bitcast %b3b : vector<16xi8> to vector<32xf4E2M1FN>
        %d0 = amdgpu.scaled_mfma 32x32x64 (%sa[0] * %a0) * (%sb[0] * %b0) + %acc : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<16xf32>
        %d1 = amdgpu.scaled_mfma 32x32x64 (%sa[1] * %a1) * (%sb[1] * %b1) + %d0 : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<16xf32>
        %d2 = amdgpu.scaled_mfma 32x32x64 (%sa[2] * %a2) * (%sb[2] * %b2) + %d1 : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<16xf32>
        %d3 = amdgpu.scaled_mfma 32x32x64 (%sa[3] * %a3) * (%sb[3] * %b3) + %d2 : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<16xf32>
        scf.yield %d3 : vector<16xf32>
      }
      %co = arith.muli %tid, %c16 : index
      vector.store %res, %C[%co] : memref<1024xf32, #gpu.address_space<global>>, vector<16xf32>
      gpu.return
    }
  }
}
