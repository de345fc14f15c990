	.amdgcn_target "amdgcn-amd-amdhsa--gfx950"
	.amdhsa_code_object_version 5
	.text
	.globl	quantize_mxfp4
	.p2align	8
	.type	quantize_mxfp4,@function
quantize_mxfp4:
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_load_dwordx2 s[8:9], s[0:1], 0x10
	s_ashr_i32 s3, s2, 31
	s_lshl_b64 s[0:1], s[2:3], 8
	v_or_b32_e32 v36, s0, v0
	v_mov_b32_e32 v37, s1
	v_lshlrev_b64 v[0:1], 7, v[36:37]
	s_waitcnt lgkmcnt(0)
	v_lshl_add_u64 v[32:33], s[4:5], 0, v[0:1]
	global_load_dwordx4 v[0:3], v[32:33], off
	global_load_dwordx4 v[4:7], v[32:33], off offset:16
	global_load_dwordx4 v[8:11], v[32:33], off offset:32
	global_load_dwordx4 v[12:15], v[32:33], off offset:48
	global_load_dwordx4 v[16:19], v[32:33], off offset:64
	global_load_dwordx4 v[20:23], v[32:33], off offset:80
	global_load_dwordx4 v[24:27], v[32:33], off offset:96
	global_load_dwordx4 v[28:31], v[32:33], off offset:112
	s_movk_i32 s0, 0xff
	v_mov_b32_e32 v35, 23
	v_mov_b32_e32 v32, 0
	v_mov_b32_e32 v33, 0
	v_mov_b32_e32 v34, 0
	s_waitcnt vmcnt(7)
	v_max_f32_e64 v38, |v1|, |v1|
	v_max_f32_e64 v39, |v0|, |v0|
	v_max_f32_e32 v38, v39, v38
	v_max3_f32 v38, v38, |v2|, |v3|
	s_waitcnt vmcnt(6)
	v_max3_f32 v38, v38, |v4|, |v5|
	v_max3_f32 v38, v38, |v6|, |v7|
	s_waitcnt vmcnt(5)
	v_max3_f32 v38, v38, |v8|, |v9|
	v_max3_f32 v38, v38, |v10|, |v11|
	s_waitcnt vmcnt(4)
	v_max3_f32 v38, v38, |v12|, |v13|
	v_max3_f32 v38, v38, |v14|, |v15|
	s_waitcnt vmcnt(3)
	v_max3_f32 v38, v38, |v16|, |v17|
	v_max3_f32 v38, v38, |v18|, |v19|
	s_waitcnt vmcnt(2)
	v_max3_f32 v38, v38, |v20|, |v21|
	v_max3_f32 v38, v38, |v22|, |v23|
	s_waitcnt vmcnt(1)
	v_max3_f32 v38, v38, |v24|, |v25|
	v_max3_f32 v38, v38, |v26|, |v27|
	s_waitcnt vmcnt(0)
	v_max3_f32 v38, v38, |v28|, |v29|
	v_max3_f32 v38, v38, |v30|, |v31|
	v_bfe_u32 v38, v38, 23, 8
	v_max_u32_e32 v38, 3, v38
	v_add_u16_e32 v38, -2, v38
	v_lshlrev_b32_sdwa v35, v35, v38 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:BYTE_0
	v_cmp_ne_u16_sdwa vcc, v38, s0 src0_sel:BYTE_0 src1_sel:DWORD
	s_movk_i32 s0, 0xf0
	s_nop 0
	v_cndmask_b32_e32 v35, -1, v35, vcc
	v_cvt_scalef32_pk_fp4_f32 v32, v0, v1, v35
	v_cvt_scalef32_pk_fp4_f32 v33, v8, v9, v35
	v_cvt_scalef32_pk_fp4_f32 v34, v16, v17, v35
	v_cvt_scalef32_pk_fp4_f32 v32, v2, v3, v35 op_sel:[0,0,1,0]
	v_cvt_scalef32_pk_fp4_f32 v33, v10, v11, v35 op_sel:[0,0,1,0]
	v_cvt_scalef32_pk_fp4_f32 v34, v18, v19, v35 op_sel:[0,0,1,0]
	v_cvt_scalef32_pk_fp4_f32 v32, v4, v5, v35 op_sel:[0,0,0,1]
	v_cvt_scalef32_pk_fp4_f32 v33, v12, v13, v35 op_sel:[0,0,0,1]
	v_cvt_scalef32_pk_fp4_f32 v34, v20, v21, v35 op_sel:[0,0,0,1]
	v_cvt_scalef32_pk_fp4_f32 v32, v6, v7, v35 op_sel:[0,0,1,1]
	v_cvt_scalef32_pk_fp4_f32 v33, v14, v15, v35 op_sel:[0,0,1,1]
	v_cvt_scalef32_pk_fp4_f32 v34, v22, v23, v35 op_sel:[0,0,1,1]
	scratch_store_dwordx4 off, v[32:35], off
	scratch_load_dwordx2 v[2:3], off, off
	scratch_load_dword v1, off, off offset:8
	v_mov_b32_e32 v0, 0
	v_cvt_scalef32_pk_fp4_f32 v0, v24, v25, v35
	v_cvt_scalef32_pk_fp4_f32 v0, v26, v27, v35 op_sel:[0,0,1,0]
	s_waitcnt vmcnt(1)
	v_and_b32_e32 v5, 15, v2
	v_cvt_scalef32_pk_fp4_f32 v0, v28, v29, v35 op_sel:[0,0,0,1]
	s_waitcnt vmcnt(0)
	v_and_b32_e32 v6, 15, v1
	v_cvt_scalef32_pk_fp4_f32 v0, v30, v31, v35 op_sel:[0,0,1,1]
	scratch_store_dwordx4 off, v[0:3], off offset:16
	scratch_load_dword v0, off, off offset:16
	v_and_b32_e32 v13, 0xf000, v1
	v_and_b32_e32 v14, 0xf00, v1
	v_and_b32_e32 v15, 0xf00000, v1
	v_and_b32_e32 v16, 0xf0000, v1
	v_and_b32_e32 v17, 0xf0000000, v1
	v_and_b32_e32 v18, 0xf000000, v1
	v_and_or_b32 v1, v1, s0, v6
	v_bfe_u32 v12, v3, 4, 4
	v_and_b32_e32 v19, 0xf000, v2
	v_and_b32_e32 v20, 0xf00, v2
	v_and_b32_e32 v21, 0xf00000, v2
	v_and_b32_e32 v22, 0xf0000, v2
	v_and_b32_e32 v23, 0xf0000000, v2
	v_and_b32_e32 v24, 0xf000000, v2
	v_and_or_b32 v2, v2, s0, v5
	v_or3_b32 v1, v1, v14, v13
	v_and_b32_e32 v4, 15, v3
	v_lshlrev_b32_e32 v5, 4, v12
	v_or3_b32 v2, v2, v20, v19
	v_or3_b32 v1, v1, v16, v15
	v_bfe_u32 v10, v3, 8, 4
	v_bfe_u32 v11, v3, 12, 4
	v_or3_b32 v4, 0, v4, v5
	v_or3_b32 v2, v2, v22, v21
	v_or3_b32 v1, v1, v18, v17
	v_bfe_u32 v8, v3, 16, 4
	v_bfe_u32 v9, v3, 20, 4
	v_lshlrev_b32_e32 v11, 12, v11
	v_lshlrev_b32_e32 v10, 8, v10
	v_or3_b32 v2, v2, v24, v23
	v_bfe_u32 v7, v3, 24, 4
	v_lshlrev_b32_e32 v9, 20, v9
	v_lshlrev_b32_e32 v8, 16, v8
	v_or3_b32 v4, v4, v10, v11
	v_and_b32_e32 v3, 0xf0000000, v3
	v_lshlrev_b32_e32 v7, 24, v7
	v_or3_b32 v4, v4, v8, v9
	v_or3_b32 v3, v4, v7, v3
	s_waitcnt vmcnt(0)
	v_and_b32_e32 v25, 15, v0
	v_and_b32_e32 v6, 0xf0, v0
	v_and_b32_e32 v26, 0xf000, v0
	v_and_b32_e32 v27, 0xf00, v0
	v_or3_b32 v6, 0, v25, v6
	v_and_b32_e32 v28, 0xf00000, v0
	v_and_b32_e32 v29, 0xf0000, v0
	v_or3_b32 v5, v6, v27, v26
	v_and_b32_e32 v30, 0xf0000000, v0
	v_and_b32_e32 v0, 0xf000000, v0
	v_or3_b32 v5, v5, v29, v28
	v_or3_b32 v6, v1, 0, 0
	v_or3_b32 v1, v5, v0, v30
	v_or3_b32 v0, v2, 0, 0
	v_or3_b32 v2, v6, 0, 0
	v_or3_b32 v0, v0, 0, 0
	v_or3_b32 v2, v2, 0, 0
	v_or3_b32 v4, v0, 0, 0
	v_or3_b32 v0, v2, 0, 0
	v_or3_b32 v2, v4, 0, 0
	scratch_store_dwordx2 off, v[0:1], off offset:40
	scratch_store_dwordx2 off, v[2:3], off offset:32
	scratch_load_dwordx4 v[4:7], off, off offset:32
	v_mov_b32_e32 v0, s6
	v_mov_b32_e32 v1, s7
	v_lshl_add_u64 v[0:1], v[36:37], 4, v[0:1]
	v_lshl_add_u64 v[2:3], s[8:9], 0, v[36:37]
	s_waitcnt vmcnt(0)
	global_store_dwordx4 v[0:1], v[4:7], off
	global_store_byte v[2:3], v38, off
	s_endpgm
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel quantize_mxfp4
		.amdhsa_group_segment_fixed_size 0
		.amdhsa_private_segment_fixed_size 64
		.amdhsa_kernarg_size 24
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
		.amdhsa_next_free_vgpr 40
		.amdhsa_next_free_sgpr 10
		.amdhsa_accum_offset 40
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
	.size	quantize_mxfp4, .Lfunc_end0-quantize_mxfp4

	.set quantize_mxfp4.num_vgpr, 40
	.set quantize_mxfp4.num_agpr, 0
	.set quantize_mxfp4.numbered_sgpr, 10
	.set quantize_mxfp4.num_named_barrier, 0
	.set quantize_mxfp4.private_seg_size, 64
	.set quantize_mxfp4.uses_vcc, 1
	.set quantize_mxfp4.uses_flat_scratch, 0
	.set quantize_mxfp4.has_dyn_sized_stack, 0
	.set quantize_mxfp4.has_recursion, 0
	.set quantize_mxfp4.has_indirect_call, 0
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
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 24
    .max_flat_workgroup_size: 256
    .name:           quantize_mxfp4
    .private_segment_fixed_size: 64
    .reqd_workgroup_size:
      - 256
      - 1
      - 1
    .sgpr_count:     16
    .sgpr_spill_count: 0
    .symbol:         quantize_mxfp4.kd
    .uniform_work_group_size: 1
    .uses_dynamic_stack: false
    .vgpr_count:     40
    .vgpr_spill_count: 0
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa--gfx950
amdhsa.version:
  - 1
  - 2
...

	.end_amdgpu_metadata
