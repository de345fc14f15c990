	.amdgcn_target "amdgcn-amd-amdhsa--gfx950"
	.amdhsa_code_object_version 5
	.text
	.globl	lds_tile_32x32
	.p2align	8
	.type	lds_tile_32x32,@function
lds_tile_32x32:
	s_load_dword s14, s[0:1], 0x28
	s_load_dwordx2 s[12:13], s[0:1], 0x20
	s_load_dwordx8 s[4:11], s[0:1], 0x0
	v_mov_b32_e32 v5, 0
	v_lshlrev_b32_e32 v4, 2, v0
	s_waitcnt lgkmcnt(0)
	s_ashr_i32 s15, s14, 31
	s_lshr_b64 s[0:1], s[14:15], 8
	s_cmp_eq_u64 s[0:1], 0
	s_cbranch_scc1 .LBB0_4
	s_ashr_i32 s3, s2, 31
	v_lshrrev_b32_e32 v2, 3, v0
	v_mov_b32_e32 v3, v5
	v_lshlrev_b32_e32 v1, 4, v0
	v_lshl_add_u64 v[8:9], s[2:3], 4, v[2:3]
	v_lshrrev_b32_e32 v3, 2, v0
	v_and_b32_e32 v10, 15, v0
	s_lshr_b64 s[16:17], s[14:15], 1
	v_and_b32_e32 v6, 0x70, v1
	v_mov_b32_e32 v7, v5
	v_and_or_b32 v3, v3, 16, v10
	v_and_b32_e32 v0, 48, v0
	v_and_or_b32 v2, v2, 16, v10
	s_lshr_b32 s2, s15, 1
	v_lshl_or_b32 v14, v3, 7, v0
	v_lshl_or_b32 v15, v2, 7, v0
	v_and_b32_e32 v16, 0xc00, v1
	v_mul_lo_u32 v2, s16, v9
	v_mul_lo_u32 v3, s2, v8
	v_mad_u64_u32 v[0:1], s[2:3], s16, v8, v[6:7]
	v_add3_u32 v1, v3, v1, v2
	v_lshl_add_u64 v[6:7], s[6:7], 0, v[0:1]
	v_lshl_add_u64 v[8:9], s[4:5], 0, v[0:1]
	v_lshl_add_u64 v[10:11], s[8:9], 0, v[4:5]
	v_lshl_add_u64 v[12:13], s[10:11], 0, v[4:5]
	v_mov_b32_e32 v0, 0
	v_mov_b32_e32 v1, 0
	v_mov_b32_e32 v2, 0
	v_mov_b32_e32 v3, 0
	v_or_b32_e32 v5, 0x1000, v16
	s_mov_b64 s[2:3], 0x80
	s_mov_b64 s[4:5], 0x400
.LBB0_2:
	v_readfirstlane_b32 s6, v16
	v_readfirstlane_b32 s7, v5
	s_mov_b32 m0, s6
	global_load_dword v17, v[10:11], off
	global_load_dword v18, v[12:13], off
	s_add_u32 s0, s0, -1
	global_load_lds_dwordx4 v[8:9], off
	s_mov_b32 m0, s7
	s_addc_u32 s1, s1, -1
	global_load_lds_dwordx4 v[6:7], off
	s_waitcnt vmcnt(0) lgkmcnt(0)
	s_barrier
	ds_read_b128 v[20:23], v15
	ds_read_b128 v[24:27], v15 offset:64
	ds_read_b128 v[28:31], v14 offset:4096
	ds_read_b128 v[32:35], v14 offset:4160
	v_lshl_add_u64 v[10:11], v[10:11], 0, s[4:5]
	v_lshl_add_u64 v[12:13], v[12:13], 0, s[4:5]
	v_lshl_add_u64 v[8:9], v[8:9], 0, s[2:3]
	s_cmp_lg_u64 s[0:1], 0
	v_lshl_add_u64 v[6:7], v[6:7], 0, s[2:3]
	s_waitcnt lgkmcnt(1)
	v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[20:23], v[28:31], v[0:3], v17, v18 op_sel_hi:[0,0,0] cbsz:4 blgp:4
	s_waitcnt lgkmcnt(0)
	v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[24:27], v[32:35], v[0:3], v17, v18 op_sel:[1,1,0] op_sel_hi:[0,0,0] cbsz:4 blgp:4
	s_barrier
	s_cbranch_scc1 .LBB0_2
	s_nop 5
	v_mov_b32_e32 v5, v3
	s_branch .LBB0_5
.LBB0_4:
	v_mov_b32_e32 v2, 0
	v_mov_b32_e32 v1, 0
	v_mov_b32_e32 v0, 0
.LBB0_5:
	v_lshlrev_b32_e32 v4, 2, v4
	v_mov_b32_e32 v3, v5
	global_store_dwordx4 v4, v[0:3], s[12:13]
	s_endpgm
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel lds_tile_32x32
		.amdhsa_group_segment_fixed_size 8192
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_kernarg_size 44
		.amdhsa_user_sgpr_count 2
		.amdhsa_user_sgpr_dispatch_ptr 0
		.amdhsa_user_sgpr_queue_ptr 0
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_user_sgpr_dispatch_id 0
		.amdhsa_user_sgpr_kernarg_preload_length 0
		.amdhsa_user_sgpr_kernarg_preload_offset 0
		.amdhsa_user_sgpr_private_segment_size 0
		.amdhsa_uses_dynamic_stack 0
		.amdhsa_enable_private_segment 0
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_sgpr_workgroup_id_y 0
		.amdhsa_system_sgpr_workgroup_id_z 0
		.amdhsa_system_sgpr_workgroup_info 0
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 36
		.amdhsa_next_free_sgpr 18
		.amdhsa_accum_offset 36
		.amdhsa_reserve_vcc 0
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
	.size	lds_tile_32x32, .Lfunc_end0-lds_tile_32x32

	.set lds_tile_32x32.num_vgpr, 36
	.set lds_tile_32x32.num_agpr, 0
	.set lds_tile_32x32.numbered_sgpr, 18
	.set lds_tile_32x32.num_named_barrier, 0
	.set lds_tile_32x32.private_seg_size, 0
	.set lds_tile_32x32.uses_vcc, 0
	.set lds_tile_32x32.uses_flat_scratch, 0
	.set lds_tile_32x32.has_dyn_sized_stack, 0
	.set lds_tile_32x32.has_recursion, 0
	.set lds_tile_32x32.has_indirect_call, 0
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
      - .address_space:  global
        .offset:         16
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         24
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         32
        .size:           8
        .value_kind:     global_buffer
      - .offset:         40
        .size:           4
        .value_kind:     by_value
    .group_segment_fixed_size: 8192
    .kernarg_segment_align: 8
    .kernarg_segment_size: 44
    .max_flat_workgroup_size: 256
    .name:           lds_tile_32x32
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 256
      - 1
      - 1
    .sgpr_count:     24
    .sgpr_spill_count: 0
    .symbol:         lds_tile_32x32.kd
    .uniform_work_group_size: 1
    .uses_dynamic_stack: false
    .vgpr_count:     36
    .vgpr_spill_count: 0
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa--gfx950
amdhsa.version:
  - 1
  - 2
...

	.end_amdgpu_metadata
