# An int8 4N tensor of 5 x 3 x 7 (two words of four batch items per position:
# 2 * 21 words) copied DDR to DDR as 32-bit words. Its output is its input
# quantized with scale 1/32 and dequantized again.
.net copy4n
.ctx addr=0x100000000 size=8192
.input in int8 [5,3,7] addr=0x100000000 mode=4N scale=0.03125
.output out int8 [5,3,7] addr=0x100001000 mode=4N scale=0.03125
.group
.layer copy
%D1 = gdma.s2s.copy pio_gdma_enable=1 src_nsize=1 src_csize=1 src_hsize=1 src_wsize=42 dst_nsize=1 dst_csize=1 dst_hsize=1 dst_wsize=42 src_start_addr_h8=0x1 dst_start_addr_l32=0x1000 dst_start_addr_h8=0x1
