module attributes {gpu.container_module} {
  gpu.module @gemm_lds [#rocdl.target<chip = "gfx950", abi = "500">] {
    // A 4-wave workgroup computes a 32x32 tile of C = A * B^T with 16x16x128
    // scaled MFMAs; each K step of 256 stages A and B (32 rows x 128 bytes) in
    // LDS with direct-to-LDS loads, then each wave reads its fragments back.
    gpu.func @lds_tile_32x32(%A: memref<1048576xi8, #gpu.address_space<global>>,
                             %B: memref<1048576xi8, #gpu.address_space<global>>,
                             %SA: memref<65536xi8, #gpu.address_space<global>>,
                             %SB: memref<65536xi8, #gpu.address_space<global>>,
                             %C: memref<1048576xf32, #gpu.address_space<global>>,
                             %K: i32)
        workgroup(%la : memref<4096xi8, #gpu.address_space<workgroup>>,
                  %lb : memref<4096xi8, #gpu.address_space<workgroup>>)
        kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %c64 = arith.constant 64 : index
      %c128 = arith.constant 128 : index
      %c256 = arith.constant 256 : index
      %c1024 = arith.constant 1024 : index
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %wave = arith.divui %tid, %c64 : index
      %lane = arith.remui %tid, %c64 : index
      %Ki = arith.index_cast %K : i32 to index
      %rowBytes = arith.divui %Ki, %c2 : index
      %nsteps = arith.divui %Ki, %c256 : index
      // Gather addressing: thread t copies 16 bytes of row t/8 at byte (t%8)*16.
      %grow = arith.divui %tid, %c8 : index
      %gcol0 = arith.remui %tid, %c8 : index
      %gcol = arith.muli %gcol0, %c16 : index
      %rowBase = arith.muli %bid, %c16 : index
      %growAbs = arith.addi %rowBase, %grow : index
      %gsrc0 = arith.muli %growAbs, %rowBytes : index
      %gsrc = arith.addi %gsrc0, %gcol : index
      %gdst = arith.muli %wave, %c1024 : index
      // Fragment addressing: wave (wm, wn), lane row l%16, K group l/16.
      %wm = arith.divui %wave, %c2 : index
      %wn = arith.remui %wave, %c2 : index
      %fr = arith.remui %lane, %c16 : index
      %fk0 = arith.divui %lane, %c16 : index
      %fk = arith.muli %fk0, %c16 : index
      %wm16 = arith.muli %wm, %c16 : index
      %wn16 = arith.muli %wn, %c16 : index
      %ar = arith.addi %wm16, %fr : index
      %br = arith.addi %wn16, %fr : index
      %ar128 = arith.muli %ar, %c128 : index
      %br128 = arith.muli %br, %c128 : index
      %aoff = arith.addi %ar128, %fk : index
      %boff = arith.addi %br128, %fk : index
      %aoff1 = arith.addi %aoff, %c64 : index
      %boff1 = arith.addi %boff, %c64 : index
      %so1 = arith.muli %tid, %c4 : index
      %zero = arith.constant dense<0.0> : vector<4xf32>
      %res = scf.for %i = %c0 to %nsteps step %c1 iter_args(%acc = %zero) -> vector<4xf32> {
        %ko = arith.muli %i, %c128 : index
        %src = arith.addi %gsrc, %ko : index
        amdgpu.gather_to_lds %A[%src], %la[%gdst] : vector<4xi32>, memref<1048576xi8, #gpu.address_space<global>>, memref<4096xi8, #gpu.address_space<workgroup>>
        amdgpu.gather_to_lds %B[%src], %lb[%gdst] : vector<4xi32>, memref<1048576xi8, #gpu.address_space<global>>, memref<4096xi8, #gpu.address_space<workgroup>>
        %so0 = arith.muli %i, %c1024 : index
        %so = arith.addi %so0, %so1 : index
        %sa8 = vector.load %SA[%so] : memref<65536xi8, #gpu.address_space<global>>, vector<4xi8>
        %sa = vector.bitcast %sa8 : vector<4xi8> to vector<4xf8E8M0FNU>
        %sb8 = vector.load %SB[%so] : memref<65536xi8, #gpu.address_space<global>>, vector<4xi8>
        %sb = vector.bitcast %sb8 : vector<4xi8> to vector<4xf8E8M0FNU>
        amdgpu.memory_counter_wait load(0)
        gpu.barrier
        %a0b = vector.load %la[%aoff] : memref<4096xi8, #gpu.address_space<workgroup>>, vector<16xi8>
        %b0b = vector.load %lb[%boff] : memref<4096xi8, #gpu.address_space<workgroup>>, vector<16xi8>
        %a1b = vector.load %la[%aoff1] : memref<4096xi8, #gpu.address_space<workgroup>>, vector<16xi8>
        %b1b = vector.load %lb[%boff1] : memref<4096xi8, #gpu.address_space<workgroup>>, vector<16xi8>
        gpu.barrier
        %a0 = vector.bitcast %a0b : vector<16xi8> to vector<32xf4E2M1FN>
        %b0 = vector.bitcast %b0b : vector<16xi8> to vector<32xf4E2M1FN>
        %a1 = vector.bitcast %a1b : vector<16xi8> to vector<32xf4E2M1FN>
        %b1 = vector.bitcast %b1b : vector<16xi8> to vector<32xf4E2M1FN>
        %d0 = amdgpu.scaled_mfma 16x16x128 (%sa[0] * %a0) * (%sb[0] * %b0) + %acc : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf32>
        %d1 = amdgpu.scaled_mfma 16x16x128 (%sa[1] * %a1) * (%sb[1] * %b1) + %d0 : vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf32>
        scf.yield %d1 : vector<4xf32>
      }
      %co = arith.muli %tid, %c4 : index
      vector.store %res, %C[%co] : memref<1048576xf32, #gpu.address_space<global>>, vector<4xf32>
      gpu.return
    }
  }
}
