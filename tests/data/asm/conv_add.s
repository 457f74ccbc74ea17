# conv_add: a hand-written BM1684 program, fp32, batch 1.
#   z = conv3x3(x, W) + bias + y      x [1,8,10,10], W [16,8,3,3], y/z [1,16,8,8]
# Four S2L loads (x, W, bias, y), one conv, one ar.add, one L2S store. The conv
# waits only for the first three loads (deps %D3), so the load of y (%D4)
# overlaps it; the add waits for y, the store waits for the add.
# Field meanings: docs/isa.md (TIU commands, GDMA commands). Operands are fp32
# (prec code 3) in the aligned LMEM layout; GDMA moves use explicit strides.
#
# Device memory: x at 0x100000000, y at 0x100001000, z at 0x100002000
# (activations, "ctx"); coefficients at 0x100100000: W as [oc][ic][kh][kw]
# (4608 bytes, conv_add_weights.bin, uniform in [-0.5, 0.5), seed 1684),
# then the 16 biases (fp32, inline hex).
# LMEM (offsets in each lane, one bank each): x 0x0, W 0x10000, bias 0x20000,
# y 0x30000, conv result 0x40000, sum 0x50000.
.model type="tpuc asm" version=1
.net conv_add
.ctx addr=0x100000000 size=12288
.input x fp32 [1,8,10,10] addr=0x100000000 mode=1N
.input y fp32 [1,16,8,8] addr=0x100001000 mode=1N
.output z fp32 [1,16,8,8] addr=0x100002000 mode=1N
.coeff addr=0x100100000 size=4672
.coeff_file conv_add_weights.bin
.coeff_data 28458cbe807a5ebb18fdba3d583e143e5654c13e3f47cabe345cc1bec0f0b9bd
.coeff_data 701aff3d85c795be08d4943eb07620bebaf88e3e747a37bef0a398bcc0ab8f3c
.group
.layer conv1
%D1 = gdma.s2l.copy pio_gdma_enable=1 stride_enable=1 src_nstride=800 src_cstride=100 src_hstride=10 src_wstride=1 dst_nstride=128 dst_cstride=128 dst_hstride=10 dst_wstride=1 src_nsize=1 src_csize=8 src_hsize=10 src_wsize=10 dst_nsize=1 dst_csize=8 dst_hsize=10 dst_wsize=10 src_start_addr_h8=0x1 localmem_mask_l32=0xffffffff localmem_mask_h32=0xffffffff
%D2 = gdma.s2l.copy pio_gdma_enable=1 stride_enable=1 src_nstride=9 src_cstride=72 src_hstride=3 src_wstride=1 dst_nstride=32 dst_cstride=32 dst_hstride=3 dst_wstride=1 src_nsize=8 src_csize=16 src_hsize=3 src_wsize=3 dst_nsize=8 dst_csize=16 dst_hsize=3 dst_wsize=3 src_start_addr_l32=0x100000 dst_start_addr_l32=0x10000 src_start_addr_h8=0x1 localmem_mask_l32=0xffffffff localmem_mask_h32=0xffffffff
%D3 = gdma.s2l.copy pio_gdma_enable=1 stride_enable=1 src_nstride=16 src_cstride=1 src_hstride=1 src_wstride=1 dst_nstride=1 dst_cstride=1 dst_hstride=1 dst_wstride=1 src_nsize=1 src_csize=16 src_hsize=1 src_wsize=1 dst_nsize=1 dst_csize=16 dst_hsize=1 dst_wsize=1 src_start_addr_l32=0x101200 dst_start_addr_l32=0x20000 src_start_addr_h8=0x1 localmem_mask_l32=0xffffffff localmem_mask_h32=0xffffffff
.layer add1
%D4 = gdma.s2l.copy pio_gdma_enable=1 stride_enable=1 src_nstride=1024 src_cstride=64 src_hstride=8 src_wstride=1 dst_nstride=64 dst_cstride=64 dst_hstride=8 dst_wstride=1 src_nsize=1 src_csize=16 src_hsize=8 src_wsize=8 dst_nsize=1 dst_csize=16 dst_hsize=8 dst_wsize=8 src_start_addr_l32=0x1000 dst_start_addr_l32=0x30000 src_start_addr_h8=0x1 localmem_mask_l32=0xffffffff localmem_mask_h32=0xffffffff
.layer conv1
%B1 = conv.mac cmd_en=1 cmd_id_en=1 tsk_opd_num=3 opt_opd0_sign=1 opt_opd1_sign=1 opt_opd2_sign=1 opt_res0_prec=2 opt_opd0_prec=2 opt_opd1_prec=2 opt_opd2_prec=2 short_opd2_str=2 res_op_x_str=1 res_op_y_str=1 res0_n=1 res0_c=16 res0_h=8 res0_w=8 opd0_n=1 opd0_c=8 opd0_h=10 opd0_w=10 opd1_n=8 opd1_c=16 opd1_h=3 opd1_w=3 opt_res_add_sign=1 res0_addr=0x40000 opd1_addr=0x10000 opd2_addr=0x20000 deps %D3
.layer add1
%B2 = ar.add cmd_en=1 cmd_id_en=1 tsk_opd_num=2 opt_opd0_sign=1 opt_opd1_sign=1 opt_opd2_sign=1 opt_res0_prec=2 opt_opd0_prec=2 opt_opd1_prec=2 res0_n=1 res0_c=16 res0_h=8 res0_w=8 opd0_n=1 opd0_c=16 opd0_h=8 opd0_w=8 opd1_n=1 opd1_c=16 opd1_h=8 opd1_w=8 opt_res_add_sign=1 res0_addr=0x50000 opd0_addr=0x40000 opd1_addr=0x30000 deps %D4
%D5 = gdma.l2s.copy pio_gdma_enable=1 stride_enable=1 src_nstride=64 src_cstride=64 src_hstride=8 src_wstride=1 dst_nstride=1024 dst_cstride=64 dst_hstride=8 dst_wstride=1 src_nsize=1 src_csize=16 src_hsize=8 src_wsize=8 dst_nsize=1 dst_csize=16 dst_hsize=8 dst_wsize=8 src_start_addr_l32=0x50000 dst_start_addr_l32=0x2000 dst_start_addr_h8=0x1 localmem_mask_l32=0xffffffff localmem_mask_h32=0xffffffff deps %B2
