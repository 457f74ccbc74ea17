# One group, no coefficients: the blob starts with the TIU queue (2 commands
# = 256 bytes), then the GDMA queue (blob offset 256).
.net tiny
.input x int8 [4,3,2,2] addr=0x100000000 mode=4N scale=0.25
.output y int8 [4,3,2,2] addr=0x100001000 mode=4N scale=0.5
.group
.layer l1
%D1 = gdma.s2l.copy src_nsize=1 src_start_addr_h8=0x1
%B1 = ar.add res0_c=3 deps %D1
.layer l2
%B2 = ar.copy res0_c=3
%D2 = gdma.l2s.copy dst_start_addr_h8=0x1 deps %B2
