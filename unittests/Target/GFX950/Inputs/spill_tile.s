	.amdgcn_target "amdgcn-amd-amdhsa--gfx950"
	.amdhsa_code_object_version 5
	.text
	.globl	spill_tile
	.p2align	8
	.type	spill_tile,@function
spill_tile:
	s_load_dword s2, s[0:1], 0x10
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	v_lshlrev_b32_e32 v16, 4, v0
	v_mov_b32_e32 v17, 0
	s_waitcnt lgkmcnt(0)
	s_ashr_i32 s3, s2, 31
	s_lshr_b64 s[0:1], s[2:3], 7
	s_cmp_eq_u64 s[0:1], 0
	s_cbranch_scc1 .LBB0_4
	v_mov_b32_e32 v0, v16
	scratch_store_dwordx2 off, v[0:1], off offset:512
	v_lshl_add_u64 v[0:1], s[4:5], 0, v[16:17]
	v_mov_b32_e32 v2, 0
	v_mov_b32_e32 v3, 0
	v_mov_b32_e32 v4, 0
	v_mov_b32_e32 v5, 0
	v_mov_b32_e32 v6, 0
	v_mov_b32_e32 v7, 0
	v_mov_b32_e32 v8, 0
	v_mov_b32_e32 v9, 0
	v_mov_b32_e32 v10, 0
	v_mov_b32_e32 v11, 0
	v_mov_b32_e32 v12, 0
	v_mov_b32_e32 v13, 0
	v_mov_b32_e32 v14, 0
	v_mov_b32_e32 v15, 0
	v_mov_b32_e32 v16, 0
	v_mov_b32_e32 v17, 0
	scratch_store_dwordx4 off, v[2:5], off offset:384
	s_nop 0
	scratch_store_dwordx4 off, v[6:9], off offset:400
	scratch_store_dwordx4 off, v[10:13], off offset:416
	scratch_store_dwordx4 off, v[14:17], off offset:432
	v_mov_b32_e32 v2, 0
	v_mov_b32_e32 v3, 0
	v_mov_b32_e32 v4, 0
	v_mov_b32_e32 v5, 0
	v_mov_b32_e32 v6, 0
	v_mov_b32_e32 v7, 0
	v_mov_b32_e32 v8, 0
	v_mov_b32_e32 v9, 0
	v_mov_b32_e32 v10, 0
	v_mov_b32_e32 v11, 0
	v_mov_b32_e32 v12, 0
	v_mov_b32_e32 v13, 0
	v_mov_b32_e32 v14, 0
	v_mov_b32_e32 v15, 0
	v_mov_b32_e32 v16, 0
	v_mov_b32_e32 v17, 0
	scratch_store_dwordx4 off, v[2:5], off offset:448
	s_nop 0
	scratch_store_dwordx4 off, v[6:9], off offset:464
	scratch_store_dwordx4 off, v[10:13], off offset:480
	scratch_store_dwordx4 off, v[14:17], off offset:496
	v_mov_b32_e32 v2, 0
	v_mov_b32_e32 v3, 0
	v_mov_b32_e32 v4, 0
	v_mov_b32_e32 v5, 0
	v_mov_b32_e32 v6, 0
	v_mov_b32_e32 v7, 0
	v_mov_b32_e32 v8, 0
	v_mov_b32_e32 v9, 0
	v_mov_b32_e32 v10, 0
	v_mov_b32_e32 v11, 0
	v_mov_b32_e32 v12, 0
	v_mov_b32_e32 v13, 0
	v_mov_b32_e32 v14, 0
	v_mov_b32_e32 v15, 0
	v_mov_b32_e32 v16, 0
	v_mov_b32_e32 v17, 0
	scratch_store_dwordx4 off, v[2:5], off
	s_nop 0
	scratch_store_dwordx4 off, v[6:9], off offset:16
	scratch_store_dwordx4 off, v[10:13], off offset:32
	scratch_store_dwordx4 off, v[14:17], off offset:48
	v_mov_b32_e32 v2, 0
	v_mov_b32_e32 v3, 0
	v_mov_b32_e32 v4, 0
	v_mov_b32_e32 v5, 0
	v_mov_b32_e32 v6, 0
	v_mov_b32_e32 v7, 0
	v_mov_b32_e32 v8, 0
	v_mov_b32_e32 v9, 0
	v_mov_b32_e32 v10, 0
	v_mov_b32_e32 v11, 0
	v_mov_b32_e32 v12, 0
	v_mov_b32_e32 v13, 0
	v_mov_b32_e32 v14, 0
	v_mov_b32_e32 v15, 0
	v_mov_b32_e32 v16, 0
	v_mov_b32_e32 v17, 0
	scratch_store_dwordx4 off, v[2:5], off offset:64
	s_nop 0
	scratch_store_dwordx4 off, v[6:9], off offset:80
	scratch_store_dwordx4 off, v[10:13], off offset:96
	scratch_store_dwordx4 off, v[14:17], off offset:112
	v_mov_b32_e32 v2, 0
	v_mov_b32_e32 v3, 0
	v_mov_b32_e32 v4, 0
	v_mov_b32_e32 v5, 0
	v_mov_b32_e32 v6, 0
	v_mov_b32_e32 v7, 0
	v_mov_b32_e32 v8, 0
	v_mov_b32_e32 v9, 0
	v_mov_b32_e32 v10, 0
	v_mov_b32_e32 v11, 0
	v_mov_b32_e32 v12, 0
	v_mov_b32_e32 v13, 0
	v_mov_b32_e32 v14, 0
	v_mov_b32_e32 v15, 0
	v_mov_b32_e32 v16, 0
	v_mov_b32_e32 v17, 0
	scratch_store_dwordx4 off, v[2:5], off offset:256
	s_nop 0
	scratch_store_dwordx4 off, v[6:9], off offset:272
	scratch_store_dwordx4 off, v[10:13], off offset:288
	scratch_store_dwordx4 off, v[14:17], off offset:304
	v_mov_b32_e32 v2, 0
	v_mov_b32_e32 v3, 0
	v_mov_b32_e32 v4, 0
	v_mov_b32_e32 v5, 0
	v_mov_b32_e32 v6, 0
	v_mov_b32_e32 v7, 0
	v_mov_b32_e32 v8, 0
	v_mov_b32_e32 v9, 0
	v_mov_b32_e32 v10, 0
	v_mov_b32_e32 v11, 0
	v_mov_b32_e32 v12, 0
	v_mov_b32_e32 v13, 0
	v_mov_b32_e32 v14, 0
	v_mov_b32_e32 v15, 0
	v_mov_b32_e32 v16, 0
	v_mov_b32_e32 v17, 0
	s_mov_b64 s[2:3], 0x8000
	scratch_store_dwordx4 off, v[2:5], off offset:320
	s_nop 0
	scratch_store_dwordx4 off, v[6:9], off offset:336
	scratch_store_dwordx4 off, v[10:13], off offset:352
	scratch_store_dwordx4 off, v[14:17], off offset:368
	v_lshl_add_u64 v[0:1], v[0:1], 0, s[2:3]
	v_mov_b32_e32 v18, 0
	v_mov_b32_e32 v19, 0
	v_mov_b32_e32 v20, 0
	v_mov_b32_e32 v21, 0
	v_mov_b32_e32 v22, 0
	v_mov_b32_e32 v23, 0
	v_mov_b32_e32 v24, 0
	v_mov_b32_e32 v25, 0
	v_mov_b32_e32 v26, 0
	v_mov_b32_e32 v27, 0
	v_mov_b32_e32 v28, 0
	v_mov_b32_e32 v29, 0
	v_mov_b32_e32 v30, 0
	v_mov_b32_e32 v31, 0
	v_mov_b32_e32 v32, 0
	v_mov_b32_e32 v33, 0
	v_mov_b32_e32 v34, 0
	v_mov_b32_e32 v35, 0
	v_mov_b32_e32 v36, 0
	v_mov_b32_e32 v37, 0
	v_mov_b32_e32 v38, 0
	v_mov_b32_e32 v39, 0
	v_mov_b32_e32 v40, 0
	v_mov_b32_e32 v41, 0
	v_mov_b32_e32 v42, 0
	v_mov_b32_e32 v43, 0
	v_mov_b32_e32 v44, 0
	v_mov_b32_e32 v45, 0
	v_mov_b32_e32 v46, 0
	v_mov_b32_e32 v47, 0
	v_mov_b32_e32 v48, 0
	v_mov_b32_e32 v49, 0
	s_movk_i32 s4, 0xa000
	s_movk_i32 s5, 0xc000
	s_movk_i32 s8, 0xe000
	s_mov_b64 s[2:3], 0x80
	v_mov_b32_e32 v2, 0x7f7f7f7f
.LBB0_2:
	s_nop 10
	scratch_store_dwordx4 off, v[34:37], off offset:192
	s_nop 0
	scratch_store_dwordx4 off, v[38:41], off offset:208
	scratch_store_dwordx4 off, v[42:45], off offset:224
	scratch_store_dwordx4 off, v[46:49], off offset:240
	scratch_store_dwordx4 off, v[18:21], off offset:128
	s_nop 0
	scratch_store_dwordx4 off, v[22:25], off offset:144
	scratch_store_dwordx4 off, v[26:29], off offset:160
	scratch_store_dwordx4 off, v[30:33], off offset:176
	global_load_dwordx4 v[4:7], v[0:1], off offset:-4096
	global_load_dwordx4 v[8:11], v[0:1], off
	s_nop 0
	scratch_load_dwordx4 v[12:15], off, off offset:256
	scratch_load_dwordx4 v[16:19], off, off offset:272
	scratch_load_dwordx4 v[20:23], off, off offset:288
	scratch_load_dwordx4 v[24:27], off, off offset:304
	s_add_u32 s0, s0, -1
	s_addc_u32 s1, s1, -1
	s_cmp_lg_u64 s[0:1], 0
	s_waitcnt vmcnt(0)
	v_mfma_scale_f32_32x32x64_f8f6f4 v[12:27], v[4:7], v[8:11], v[12:27], v2, v2 op_sel_hi:[0,0,0] cbsz:4 blgp:4
	s_nop 11
	scratch_store_dwordx4 off, v[12:15], off offset:256
	s_nop 0
	scratch_store_dwordx4 off, v[16:19], off offset:272
	scratch_store_dwordx4 off, v[20:23], off offset:288
	scratch_store_dwordx4 off, v[24:27], off offset:304
	v_add_co_u32_e32 v12, vcc, s4, v0
	s_nop 1
	v_addc_co_u32_e32 v13, vcc, -1, v1, vcc
	global_load_dwordx4 v[14:17], v[12:13], off offset:-4096
	scratch_load_dwordx4 v[18:21], off, off offset:320
	scratch_load_dwordx4 v[22:25], off, off offset:336
	scratch_load_dwordx4 v[26:29], off, off offset:352
	scratch_load_dwordx4 v[30:33], off, off offset:368
	s_waitcnt vmcnt(0)
	v_mfma_scale_f32_32x32x64_f8f6f4 v[18:33], v[8:11], v[14:17], v[18:33], v2, v2 op_sel_hi:[0,0,0] cbsz:4 blgp:4
	v_add_co_u32_e32 v8, vcc, s5, v0
	s_nop 10
	scratch_store_dwordx4 off, v[18:21], off offset:320
	s_nop 0
	scratch_store_dwordx4 off, v[22:25], off offset:336
	scratch_store_dwordx4 off, v[26:29], off offset:352
	scratch_store_dwordx4 off, v[30:33], off offset:368
	global_load_dwordx4 v[10:13], v[12:13], off
	s_nop 0
	scratch_load_dwordx4 v[34:37], off, off offset:384
	scratch_load_dwordx4 v[38:41], off, off offset:400
	scratch_load_dwordx4 v[42:45], off, off offset:416
	scratch_load_dwordx4 v[46:49], off, off offset:432
	v_addc_co_u32_e32 v9, vcc, -1, v1, vcc
	global_load_dwordx4 v[24:27], v[8:9], off offset:-4096
	s_waitcnt vmcnt(1)
	v_mfma_scale_f32_32x32x64_f8f6f4 v[34:49], v[14:17], v[10:13], v[34:49], v2, v2 op_sel_hi:[0,0,0] cbsz:4 blgp:4
	s_nop 11
	scratch_store_dwordx4 off, v[34:37], off offset:384
	s_nop 0
	scratch_store_dwordx4 off, v[38:41], off offset:400
	scratch_store_dwordx4 off, v[42:45], off offset:416
	scratch_store_dwordx4 off, v[46:49], off offset:432
	scratch_load_dwordx4 v[34:37], off, off offset:448
	s_nop 0
	scratch_load_dwordx4 v[38:41], off, off offset:464
	scratch_load_dwordx4 v[42:45], off, off offset:480
	scratch_load_dwordx4 v[46:49], off, off offset:496
	s_waitcnt vmcnt(0)
	v_mfma_scale_f32_32x32x64_f8f6f4 v[34:49], v[10:13], v[24:27], v[34:49], v2, v2 op_sel_hi:[0,0,0] cbsz:4 blgp:4
	s_nop 11
	scratch_store_dwordx4 off, v[34:37], off offset:448
	s_nop 0
	scratch_store_dwordx4 off, v[38:41], off offset:464
	scratch_store_dwordx4 off, v[42:45], off offset:480
	scratch_store_dwordx4 off, v[46:49], off offset:496
	global_load_dwordx4 v[28:31], v[8:9], off
	s_nop 0
	scratch_load_dwordx4 v[8:11], off, off
	scratch_load_dwordx4 v[12:15], off, off offset:16
	scratch_load_dwordx4 v[16:19], off, off offset:32
	scratch_load_dwordx4 v[20:23], off, off offset:48
	s_waitcnt vmcnt(0)
	v_mfma_scale_f32_32x32x64_f8f6f4 v[8:23], v[24:27], v[28:31], v[8:23], v2, v2 op_sel_hi:[0,0,0] cbsz:4 blgp:4
	s_nop 11
	scratch_store_dwordx4 off, v[8:11], off
	s_nop 0
	scratch_store_dwordx4 off, v[12:15], off offset:16
	scratch_store_dwordx4 off, v[16:19], off offset:32
	scratch_store_dwordx4 off, v[20:23], off offset:48
	v_add_co_u32_e32 v8, vcc, s8, v0
	s_nop 1
	v_addc_co_u32_e32 v9, vcc, -1, v1, vcc
	global_load_dwordx4 v[14:17], v[8:9], off offset:-4096
	scratch_load_dwordx4 v[34:37], off, off offset:64
	scratch_load_dwordx4 v[38:41], off, off offset:80
	scratch_load_dwordx4 v[42:45], off, off offset:96
	scratch_load_dwordx4 v[46:49], off, off offset:112
	v_lshl_add_u64 v[0:1], v[0:1], 0, s[2:3]
	s_waitcnt vmcnt(0)
	v_mfma_scale_f32_32x32x64_f8f6f4 v[34:49], v[28:31], v[14:17], v[34:49], v2, v2 op_sel_hi:[0,0,0] cbsz:4 blgp:4
	s_nop 11
	scratch_store_dwordx4 off, v[34:37], off offset:64
	s_nop 0
	scratch_store_dwordx4 off, v[38:41], off offset:80
	scratch_store_dwordx4 off, v[42:45], off offset:96
	scratch_store_dwordx4 off, v[46:49], off offset:112
	scratch_load_dwordx4 v[34:37], off, off offset:192
	s_nop 0
	scratch_load_dwordx4 v[38:41], off, off offset:208
	scratch_load_dwordx4 v[42:45], off, off offset:224
	scratch_load_dwordx4 v[46:49], off, off offset:240
	scratch_load_dwordx4 v[18:21], off, off offset:128
	scratch_load_dwordx4 v[22:25], off, off offset:144
	scratch_load_dwordx4 v[26:29], off, off offset:160
	scratch_load_dwordx4 v[30:33], off, off offset:176
	s_nop 0
	global_load_dwordx4 v[8:11], v[8:9], off
	s_waitcnt vmcnt(0)
	v_mfma_scale_f32_32x32x64_f8f6f4 v[18:33], v[14:17], v[8:11], v[18:33], v2, v2 op_sel_hi:[0,0,0] cbsz:4 blgp:4
	v_mfma_scale_f32_32x32x64_f8f6f4 v[34:49], v[8:11], v[4:7], v[34:49], v2, v2 op_sel_hi:[0,0,0] cbsz:4 blgp:4
	s_cbranch_scc1 .LBB0_2
	s_nop 10
	scratch_store_dwordx4 off, v[34:37], off offset:192
	s_nop 0
	scratch_store_dwordx4 off, v[38:41], off offset:208
	scratch_store_dwordx4 off, v[42:45], off offset:224
	scratch_store_dwordx4 off, v[46:49], off offset:240
	scratch_store_dwordx4 off, v[18:21], off offset:128
	s_nop 0
	scratch_store_dwordx4 off, v[22:25], off offset:144
	scratch_store_dwordx4 off, v[26:29], off offset:160
	scratch_store_dwordx4 off, v[30:33], off offset:176
	scratch_load_dwordx4 v[34:37], off, off offset:448
	scratch_load_dwordx4 v[38:41], off, off offset:464
	scratch_load_dwordx4 v[42:45], off, off offset:480
	scratch_load_dwordx4 v[46:49], off, off offset:496
	s_nop 0
	scratch_load_dwordx4 v[18:21], off, off offset:384
	scratch_load_dwordx4 v[22:25], off, off offset:400
	scratch_load_dwordx4 v[26:29], off, off offset:416
	scratch_load_dwordx4 v[30:33], off, off offset:432
	scratch_load_dwordx2 v[16:17], off, off offset:512
	s_branch .LBB0_5
.LBB0_4:
	v_mov_b32_e32 v15, 0
	v_mov_b32_e32 v14, 0
	v_mov_b32_e32 v13, 0
	v_mov_b32_e32 v12, 0
	v_mov_b32_e32 v11, 0
	v_mov_b32_e32 v10, 0
	v_mov_b32_e32 v9, 0
	v_mov_b32_e32 v8, 0
	v_mov_b32_e32 v7, 0
	v_mov_b32_e32 v6, 0
	v_mov_b32_e32 v5, 0
	v_mov_b32_e32 v4, 0
	v_mov_b32_e32 v3, 0
	v_mov_b32_e32 v2, 0
	v_mov_b32_e32 v1, 0
	v_mov_b32_e32 v0, 0
	v_mov_b64_e32 v[48:49], v[14:15]
	v_mov_b64_e32 v[46:47], v[12:13]
	v_mov_b64_e32 v[44:45], v[10:11]
	v_mov_b64_e32 v[42:43], v[8:9]
	v_mov_b64_e32 v[40:41], v[6:7]
	v_mov_b64_e32 v[38:39], v[4:5]
	v_mov_b64_e32 v[36:37], v[2:3]
	v_mov_b64_e32 v[34:35], v[0:1]
	v_mov_b32_e32 v15, 0
	v_mov_b32_e32 v14, 0
	v_mov_b32_e32 v13, 0
	v_mov_b32_e32 v12, 0
	v_mov_b32_e32 v11, 0
	v_mov_b32_e32 v10, 0
	v_mov_b32_e32 v9, 0
	v_mov_b32_e32 v8, 0
	v_mov_b32_e32 v7, 0
	v_mov_b32_e32 v6, 0
	v_mov_b32_e32 v5, 0
	v_mov_b32_e32 v4, 0
	v_mov_b32_e32 v3, 0
	v_mov_b32_e32 v2, 0
	v_mov_b32_e32 v1, 0
	v_mov_b32_e32 v0, 0
	scratch_store_dwordx4 off, v[0:3], off
	s_nop 0
	scratch_store_dwordx4 off, v[4:7], off offset:16
	scratch_store_dwordx4 off, v[8:11], off offset:32
	scratch_store_dwordx4 off, v[12:15], off offset:48
	v_mov_b32_e32 v7, 0
	v_mov_b32_e32 v11, 0
	v_mov_b32_e32 v15, 0
	v_mov_b32_e32 v14, 0
	v_mov_b32_e32 v13, 0
	v_mov_b32_e32 v12, 0
	v_mov_b32_e32 v10, 0
	v_mov_b32_e32 v9, 0
	v_mov_b32_e32 v8, 0
	v_mov_b32_e32 v6, 0
	v_mov_b32_e32 v5, 0
	v_mov_b32_e32 v4, 0
	v_mov_b32_e32 v3, 0
	v_mov_b32_e32 v2, 0
	v_mov_b32_e32 v1, 0
	v_mov_b32_e32 v0, 0
	scratch_store_dwordx4 off, v[0:3], off offset:64
	s_nop 0
	scratch_store_dwordx4 off, v[4:7], off offset:80
	scratch_store_dwordx4 off, v[8:11], off offset:96
	scratch_store_dwordx4 off, v[12:15], off offset:112
	v_mov_b32_e32 v7, 0
	v_mov_b32_e32 v11, 0
	v_mov_b32_e32 v15, 0
	v_mov_b32_e32 v14, 0
	v_mov_b32_e32 v13, 0
	v_mov_b32_e32 v12, 0
	v_mov_b32_e32 v10, 0
	v_mov_b32_e32 v9, 0
	v_mov_b32_e32 v8, 0
	v_mov_b32_e32 v6, 0
	v_mov_b32_e32 v5, 0
	v_mov_b32_e32 v4, 0
	v_mov_b32_e32 v3, 0
	v_mov_b32_e32 v2, 0
	v_mov_b32_e32 v1, 0
	v_mov_b32_e32 v0, 0
	scratch_store_dwordx4 off, v[0:3], off offset:128
	s_nop 0
	scratch_store_dwordx4 off, v[4:7], off offset:144
	scratch_store_dwordx4 off, v[8:11], off offset:160
	scratch_store_dwordx4 off, v[12:15], off offset:176
	v_mov_b32_e32 v7, 0
	v_mov_b32_e32 v11, 0
	v_mov_b32_e32 v15, 0
	v_mov_b32_e32 v14, 0
	v_mov_b32_e32 v13, 0
	v_mov_b32_e32 v12, 0
	v_mov_b32_e32 v10, 0
	v_mov_b32_e32 v9, 0
	v_mov_b32_e32 v8, 0
	v_mov_b32_e32 v6, 0
	v_mov_b32_e32 v5, 0
	v_mov_b32_e32 v4, 0
	v_mov_b32_e32 v3, 0
	v_mov_b32_e32 v2, 0
	v_mov_b32_e32 v1, 0
	v_mov_b32_e32 v0, 0
	scratch_store_dwordx4 off, v[0:3], off offset:192
	s_nop 0
	scratch_store_dwordx4 off, v[4:7], off offset:208
	scratch_store_dwordx4 off, v[8:11], off offset:224
	scratch_store_dwordx4 off, v[12:15], off offset:240
	v_mov_b32_e32 v7, 0
	v_mov_b32_e32 v11, 0
	v_mov_b32_e32 v15, 0
	v_mov_b32_e32 v14, 0
	v_mov_b32_e32 v13, 0
	v_mov_b32_e32 v12, 0
	v_mov_b32_e32 v10, 0
	v_mov_b32_e32 v9, 0
	v_mov_b32_e32 v8, 0
	v_mov_b32_e32 v6, 0
	v_mov_b32_e32 v5, 0
	v_mov_b32_e32 v4, 0
	v_mov_b32_e32 v3, 0
	v_mov_b32_e32 v2, 0
	v_mov_b32_e32 v1, 0
	v_mov_b32_e32 v0, 0
	scratch_store_dwordx4 off, v[0:3], off offset:256
	s_nop 0
	scratch_store_dwordx4 off, v[4:7], off offset:272
	scratch_store_dwordx4 off, v[8:11], off offset:288
	scratch_store_dwordx4 off, v[12:15], off offset:304
	v_mov_b32_e32 v7, 0
	v_mov_b32_e32 v11, 0
	v_mov_b32_e32 v15, 0
	v_mov_b32_e32 v14, 0
	v_mov_b32_e32 v13, 0
	v_mov_b32_e32 v12, 0
	v_mov_b32_e32 v10, 0
	v_mov_b32_e32 v9, 0
	v_mov_b32_e32 v8, 0
	v_mov_b32_e32 v6, 0
	v_mov_b32_e32 v5, 0
	v_mov_b32_e32 v4, 0
	v_mov_b32_e32 v3, 0
	v_mov_b32_e32 v2, 0
	v_mov_b32_e32 v1, 0
	v_mov_b32_e32 v0, 0
	v_mov_b32_e32 v33, 0
	v_mov_b32_e32 v32, 0
	v_mov_b32_e32 v31, 0
	v_mov_b32_e32 v30, 0
	v_mov_b32_e32 v29, 0
	v_mov_b32_e32 v28, 0
	v_mov_b32_e32 v27, 0
	v_mov_b32_e32 v26, 0
	v_mov_b32_e32 v25, 0
	v_mov_b32_e32 v24, 0
	v_mov_b32_e32 v23, 0
	v_mov_b32_e32 v22, 0
	v_mov_b32_e32 v21, 0
	v_mov_b32_e32 v20, 0
	v_mov_b32_e32 v19, 0
	v_mov_b32_e32 v18, 0
	scratch_store_dwordx4 off, v[0:3], off offset:320
	s_nop 0
	scratch_store_dwordx4 off, v[4:7], off offset:336
	scratch_store_dwordx4 off, v[8:11], off offset:352
	scratch_store_dwordx4 off, v[12:15], off offset:368
.LBB0_5:
	s_waitcnt vmcnt(0)
	v_lshlrev_b32_e32 v0, 2, v16
	global_store_dwordx4 v0, v[30:33], s[6:7] offset:48
	global_store_dwordx4 v0, v[26:29], s[6:7] offset:32
	global_store_dwordx4 v0, v[22:25], s[6:7] offset:16
	global_store_dwordx4 v0, v[18:21], s[6:7]
	scratch_load_dwordx4 v[6:9], off, off
	s_nop 0
	scratch_load_dwordx4 v[10:13], off, off offset:16
	scratch_load_dwordx4 v[14:17], off, off offset:32
	scratch_load_dwordx4 v[18:21], off, off offset:48
	v_mov_b32_e32 v1, 0
	v_lshl_add_u64 v[0:1], s[6:7], 0, v[0:1]
	s_mov_b64 s[0:1], 0x1000
	v_lshl_add_u64 v[2:3], v[0:1], 0, s[0:1]
	s_movk_i32 s0, 0x2000
	global_store_dwordx4 v[2:3], v[46:49], off offset:48
	global_store_dwordx4 v[2:3], v[42:45], off offset:32
	global_store_dwordx4 v[2:3], v[38:41], off offset:16
	v_add_co_u32_e32 v2, vcc, s0, v0
	s_mov_b64 s[0:1], 0x2000
	v_lshl_add_u64 v[4:5], v[0:1], 0, s[0:1]
	v_addc_co_u32_e32 v3, vcc, 0, v1, vcc
	s_mov_b64 s[0:1], 0x3000
	global_store_dwordx4 v[2:3], v[34:37], off offset:-4096
	s_waitcnt vmcnt(4)
	global_store_dwordx4 v[4:5], v[18:21], off offset:48
	global_store_dwordx4 v[4:5], v[14:17], off offset:32
	global_store_dwordx4 v[4:5], v[10:13], off offset:16
	global_store_dwordx4 v[2:3], v[6:9], off
	scratch_load_dwordx4 v[4:7], off, off offset:64
	s_nop 0
	scratch_load_dwordx4 v[8:11], off, off offset:80
	scratch_load_dwordx4 v[12:15], off, off offset:96
	scratch_load_dwordx4 v[16:19], off, off offset:112
	v_lshl_add_u64 v[2:3], v[0:1], 0, s[0:1]
	s_movk_i32 s0, 0x4000
	s_waitcnt vmcnt(0)
	global_store_dwordx4 v[2:3], v[16:19], off offset:48
	global_store_dwordx4 v[2:3], v[12:15], off offset:32
	global_store_dwordx4 v[2:3], v[8:11], off offset:16
	v_add_co_u32_e32 v2, vcc, s0, v0
	s_mov_b64 s[0:1], 0x4000
	s_nop 0
	v_addc_co_u32_e32 v3, vcc, 0, v1, vcc
	global_store_dwordx4 v[2:3], v[4:7], off offset:-4096
	scratch_load_dwordx4 v[6:9], off, off offset:128
	s_nop 0
	scratch_load_dwordx4 v[10:13], off, off offset:144
	scratch_load_dwordx4 v[14:17], off, off offset:160
	scratch_load_dwordx4 v[18:21], off, off offset:176
	v_lshl_add_u64 v[4:5], v[0:1], 0, s[0:1]
	s_mov_b64 s[0:1], 0x5000
	s_waitcnt vmcnt(0)
	global_store_dwordx4 v[4:5], v[18:21], off offset:48
	global_store_dwordx4 v[4:5], v[14:17], off offset:32
	global_store_dwordx4 v[4:5], v[10:13], off offset:16
	global_store_dwordx4 v[2:3], v[6:9], off
	scratch_load_dwordx4 v[4:7], off, off offset:192
	s_nop 0
	scratch_load_dwordx4 v[8:11], off, off offset:208
	scratch_load_dwordx4 v[12:15], off, off offset:224
	scratch_load_dwordx4 v[16:19], off, off offset:240
	v_lshl_add_u64 v[2:3], v[0:1], 0, s[0:1]
	s_movk_i32 s0, 0x6000
	s_waitcnt vmcnt(0)
	global_store_dwordx4 v[2:3], v[16:19], off offset:48
	global_store_dwordx4 v[2:3], v[12:15], off offset:32
	global_store_dwordx4 v[2:3], v[8:11], off offset:16
	v_add_co_u32_e32 v2, vcc, s0, v0
	s_mov_b64 s[0:1], 0x6000
	s_nop 0
	v_addc_co_u32_e32 v3, vcc, 0, v1, vcc
	global_store_dwordx4 v[2:3], v[4:7], off offset:-4096
	scratch_load_dwordx4 v[6:9], off, off offset:256
	s_nop 0
	scratch_load_dwordx4 v[10:13], off, off offset:272
	scratch_load_dwordx4 v[14:17], off, off offset:288
	scratch_load_dwordx4 v[18:21], off, off offset:304
	v_lshl_add_u64 v[4:5], v[0:1], 0, s[0:1]
	s_mov_b64 s[0:1], 0x7000
	s_waitcnt vmcnt(0)
	global_store_dwordx4 v[4:5], v[18:21], off offset:48
	global_store_dwordx4 v[4:5], v[14:17], off offset:32
	global_store_dwordx4 v[4:5], v[10:13], off offset:16
	global_store_dwordx4 v[2:3], v[6:9], off
	scratch_load_dwordx4 v[4:7], off, off offset:320
	s_nop 0
	scratch_load_dwordx4 v[8:11], off, off offset:336
	scratch_load_dwordx4 v[12:15], off, off offset:352
	scratch_load_dwordx4 v[16:19], off, off offset:368
	v_lshl_add_u64 v[2:3], v[0:1], 0, s[0:1]
	v_add_co_u32_e32 v0, vcc, 0x7000, v0
	s_waitcnt vmcnt(0)
	global_store_dwordx4 v[2:3], v[16:19], off offset:48
	global_store_dwordx4 v[2:3], v[12:15], off offset:32
	global_store_dwordx4 v[2:3], v[8:11], off offset:16
	v_addc_co_u32_e32 v1, vcc, 0, v1, vcc
	global_store_dwordx4 v[0:1], v[4:7], off
	s_endpgm
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel spill_tile
		.amdhsa_group_segment_fixed_size 0
		.amdhsa_private_segment_fixed_size 524
		.amdhsa_kernarg_size 20
		.amdhsa_user_sgpr_count 2
		.amdhsa_user_sgpr_dispatch_ptr 0
		.amdhsa_user_sgpr_queue_ptr 0
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_user_sgpr_dispatch_id 0
		.amdhsa_user_sgpr_kernarg_preload_length 0
		.amdhsa_user_sgpr_kernarg_preload_offset 0
		.amdhsa_user_sgpr_private_segment_size 0
		.amdhsa_uses_dynamic_stack 0
		.amdhsa_enable_private_segment 1
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_sgpr_workgroup_id_y 0
		.amdhsa_system_sgpr_workgroup_id_z 0
		.amdhsa_system_sgpr_workgroup_info 0
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 50
		.amdhsa_next_free_sgpr 9
		.amdhsa_accum_offset 52
		.amdhsa_reserve_vcc 1
		.amdhsa_reserve_xnack_mask 1
		.amdhsa_float_round_mode_32 0
		.amdhsa_float_round_mode_16_64 0
		.amdhsa_float_denorm_mode_32 3
		.amdhsa_float_denorm_mode_16_64 3
		.amdhsa_dx10_clamp 1
		.amdhsa_ieee_mode 1
		.amdhsa_fp16_overflow 0
		.amdhsa_tg_split 0
		.amdhsa_exception_fp_ieee_invalid_op 0
		.amdhsa_exception_fp_denorm_src 0
		.amdhsa_exception_fp_ieee_div_zero 0
		.amdhsa_exception_fp_ieee_overflow 0
		.amdhsa_exception_fp_ieee_underflow 0
		.amdhsa_exception_fp_ieee_inexact 0
		.amdhsa_exception_int_div_zero 0
	.end_amdhsa_kernel
	.text
.Lfunc_end0:
	.size	spill_tile, .Lfunc_end0-spill_tile

	.set spill_tile.num_vgpr, 50
	.set spill_tile.num_agpr, 0
	.set spill_tile.numbered_sgpr, 9
	.set spill_tile.num_named_barrier, 0
	.set spill_tile.private_seg_size, 524
	.set spill_tile.uses_vcc, 1
	.set spill_tile.uses_flat_scratch, 0
	.set spill_tile.has_dyn_sized_stack, 0
	.set spill_tile.has_recursion, 0
	.set spill_tile.has_indirect_call, 0
	.p2alignl 6, 3212836864
	.fill 256, 4, 3212836864
	.section	.AMDGPU.gpr_maximums,"",@progbits
	.set amdgpu.max_num_vgpr, 0
	.set amdgpu.max_num_agpr, 0
	.set amdgpu.max_num_sgpr, 0
	.set amdgpu.max_num_named_barrier, 0
	.text
	.section	".note.GNU-stack","",@progbits
	.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     0
    .args:
      - .address_space:  global
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         8
        .size:           8
        .value_kind:     global_buffer
      - .offset:         16
        .size:           4
        .value_kind:     by_value
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 20
    .max_flat_workgroup_size: 64
    .name:           spill_tile
    .private_segment_fixed_size: 524
    .reqd_workgroup_size:
      - 64
      - 1
      - 1
    .sgpr_count:     15
    .sgpr_spill_count: 0
    .symbol:         spill_tile.kd
    .uniform_work_group_size: 1
    .uses_dynamic_stack: false
    .vgpr_count:     50
    .vgpr_spill_count: 354
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa--gfx950
amdhsa.version:
  - 1
  - 2
...

	.end_amdgpu_metadata
