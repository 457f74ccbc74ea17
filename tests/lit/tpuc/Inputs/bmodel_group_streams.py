"""Writes group 0's TIU and DMA command streams of a bmodel's first net to PREFIX.tiu.bin / PREFIX.dma.bin,
read straight from the file (64-byte header, FlatBuffers part, binary blob) without this project's reader:
the CmdGroup's binary_bdc / binary_gdma offsets are found by walking the FlatBuffers tables by hand.
Usage: bmodel_group_streams.py MODEL PREFIX"""
import struct
import sys


def table(buf, pos):
    """A FlatBuffers table at pos: its vtable and a field reader."""
    vt = pos - struct.unpack_from('<i', buf, pos)[0]
    vt_len = struct.unpack_from('<H', buf, vt)[0]

    def field(i):
        off = vt + 4 + 2 * i
        if off >= vt + vt_len:
            return None
        rel = struct.unpack_from('<H', buf, off)[0]
        return pos + rel if rel else None
    return field


def deref(buf, at):
    return at + struct.unpack_from('<I', buf, at)[0]


def vector(buf, at):
    start = deref(buf, at)
    n = struct.unpack_from('<I', buf, start)[0]
    return [start + 4 + 4 * i for i in range(n)]


def main(path, prefix):
    data = open(path, 'rb').read()
    magic, header, fb_size, _ = struct.unpack_from('<IIII', data, 0)
    assert magic == 0xFF55AAEE, 'not a bmodel'
    fb = data[header:header + fb_size]
    blob = data[header + fb_size:]
    model = table(fb, deref(fb, 0))
    # Model: type 0, version 1, time 2, chip 3, net 4. Net: name 0, net_static 1, net_dynamic 2, parameter 3.
    net = table(fb, deref(fb, vector(fb, model(4))[0]))
    param = table(fb, deref(fb, vector(fb, net(3))[0]))
    # NetParameter: ... cmd_group 8 (input 0, output 1, ctx_addr 2, ctx_size 3, coeff_mem 4, is_dynamic 5,
    # n_dynamic 6, h_w_dynamic 7, cmd_group 8).
    group = table(fb, deref(fb, vector(fb, param(8))[0]))
    # CmdGroup: bdc_num 0, gdma_num 1, binary_bdc 2, binary_gdma 3 (Binary structs: start u64, size u64).
    for index, suffix in ((2, '.tiu.bin'), (3, '.dma.bin')):
        start, size = struct.unpack_from('<QQ', fb, group(index))
        open(prefix + suffix, 'wb').write(blob[start:start + size])


if __name__ == '__main__':
    main(*sys.argv[1:])
