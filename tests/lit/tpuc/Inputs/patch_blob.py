"""Corrupts a bmodel for the lit tests: ORs masks into bytes of its binary blob.

usage: patch_blob.py IN OUT OFFSET:MASK [OFFSET:MASK ...]
OFFSET is relative to the start of the blob (after the 64-byte header and the
FlatBuffers part, whose size is the header's third u32); MASK is hex.
"""
import struct
import sys

data = bytearray(open(sys.argv[1], "rb").read())
blob = 64 + struct.unpack_from("<I", data, 8)[0]
for spec in sys.argv[3:]:
    offset, mask = spec.split(":")
    data[blob + int(offset, 0)] |= int(mask, 16)
open(sys.argv[2], "wb").write(data)
