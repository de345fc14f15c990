	.amdgcn_target "amdgcn-amd-amdhsa--gfx950"
	.amdhsa_code_object_version 5
	.text
	.globl	wave_tile_32x32
	.p2align	8
	.type	wave_tile_32x32,@function
wave_tile_32x32:
	s_load_dword s14, s[0:1], 0x28
	s_load_dwordx2 s[2:3], s[0:1], 0x20
	s_load_dwordx8 s[4:11], s[0:1], 0x0
	v_mov_b32_e32 v17, 0
	s_mov_b64 s[0:1], 0
	s_waitcnt lgkmcnt(0)
	s_ashr_i32 s15, s14, 31
	s_lshr_b64 s[12:13], s[14:15], 8
	s_cmp_eq_u64 s[12:13], 0
	s_cbranch_scc1 .LBB0_3
	s_lshr_b64 s[14:15], s[14:15], 1
	v_lshrrev_b32_e32 v2, 1, v0
	v_and_b32_e32 v1, 31, v0
	s_and_b32 s14, s14, -8
	v_and_b32_e32 v16, 16, v2
	v_lshlrev_b32_e32 v2, 2, v0
	v_mov_b32_e32 v3, v17
	v_lshl_add_u64 v[18:19], s[8:9], 0, v[2:3]
	v_lshl_add_u64 v[20:21], s[10:11], 0, v[2:3]
	v_mad_u64_u32 v[2:3], s[8:9], s14, v1, v[16:17]
	v_mov_b32_e32 v4, v3
	v_mad_u64_u32 v[4:5], s[8:9], s15, v1, v[4:5]
	v_mov_b32_e32 v3, v4
	s_lshl_b64 s[12:13], s[12:13], 7
	v_lshl_add_u64 v[22:23], s[4:5], 0, v[2:3]
	v_lshl_add_u64 v[24:25], s[6:7], 0, v[2:3]
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
	s_mov_b64 s[4:5], 0x100
.LBB0_2:
	global_load_dword v1, v[18:19], off
	global_load_dword v30, v[20:21], off
	v_lshl_add_u64 v[26:27], v[22:23], 0, s[0:1]
	v_lshl_add_u64 v[28:29], v[24:25], 0, s[0:1]
	global_load_dwordx4 v[32:35], v[26:27], off
	global_load_dwordx4 v[36:39], v[28:29], off
	global_load_dwordx4 v[40:43], v[26:27], off offset:32
	global_load_dwordx4 v[44:47], v[28:29], off offset:32
	global_load_dwordx4 v[48:51], v[26:27], off offset:64
	s_add_u32 s0, s0, 0x80
	s_addc_u32 s1, s1, 0
	v_lshl_add_u64 v[18:19], v[18:19], 0, s[4:5]
	s_cmp_lg_u64 s[12:13], s[0:1]
	v_lshl_add_u64 v[20:21], v[20:21], 0, s[4:5]
	s_waitcnt vmcnt(3)
	v_mfma_scale_f32_32x32x64_f8f6f4 v[2:17], v[32:35], v[36:39], v[2:17], v1, v30 op_sel_hi:[0,0,0] cbsz:4 blgp:4
	global_load_dwordx4 v[32:35], v[28:29], off offset:64
	global_load_dwordx4 v[36:39], v[26:27], off offset:96
	s_nop 0
	global_load_dwordx4 v[26:29], v[28:29], off offset:96
	s_waitcnt vmcnt(4)
	v_mfma_scale_f32_32x32x64_f8f6f4 v[2:17], v[40:43], v[44:47], v[2:17], v1, v30 op_sel:[1,1,0] op_sel_hi:[0,0,0] cbsz:4 blgp:4
	s_waitcnt vmcnt(2)
	v_mfma_scale_f32_32x32x64_f8f6f4 v[2:17], v[48:51], v[32:35], v[2:17], v1, v30 op_sel_hi:[1,1,0] cbsz:4 blgp:4
	s_waitcnt vmcnt(0)
	v_mfma_scale_f32_32x32x64_f8f6f4 v[2:17], v[36:39], v[26:29], v[2:17], v1, v30 op_sel:[1,1,0] op_sel_hi:[1,1,0] cbsz:4 blgp:4
	s_cbranch_scc1 .LBB0_2
	s_branch .LBB0_4
.LBB0_3:
	v_mov_b32_e32 v16, 0
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
.LBB0_4:
	v_lshlrev_b32_e32 v0, 6, v0
	s_nop 8
	global_store_dwordx4 v0, v[14:17], s[2:3] offset:48
	global_store_dwordx4 v0, v[10:13], s[2:3] offset:32
	global_store_dwordx4 v0, v[6:9], s[2:3] offset:16
	global_store_dwordx4 v0, v[2:5], s[2:3]
	s_endpgm
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel wave_tile_32x32
		.amdhsa_group_segment_fixed_size 0
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
		.amdhsa_next_free_vgpr 52
		.amdhsa_next_free_sgpr 16
		.amdhsa_accum_offset 52
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
	.size	wave_tile_32x32, .Lfunc_end0-wave_tile_32x32

	.set wave_tile_32x32.num_vgpr, 52
	.set wave_tile_32x32.num_agpr, 0
	.set wave_tile_32x32.numbered_sgpr, 16
	.set wave_tile_32x32.num_named_barrier, 0
	.set wave_tile_32x32.private_seg_size, 0
	.set wave_tile_32x32.uses_vcc, 0
	.set wave_tile_32x32.uses_flat_scratch, 0
	.set wave_tile_32x32.has_dyn_sized_stack, 0
	.set wave_tile_32x32.has_recursion, 0
	.set wave_tile_32x32.has_indirect_call, 0
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
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 44
    .max_flat_workgroup_size: 64
    .name:           wave_tile_32x32
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 64
      - 1
      - 1
    .sgpr_count:     22
    .sgpr_spill_count: 0
    .symbol:         wave_tile_32x32.kd
    .uniform_work_group_size: 1
    .uses_dynamic_stack: false
    .vgpr_count:     52
    .vgpr_spill_count: 0
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa--gfx950
amdhsa.version:
  - 1
  - 2
...

	.end_amdgpu_metadata
