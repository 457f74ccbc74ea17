"""Edits the FlatBuffers part of a bmodel (docs/bmodel.md) through flatc's
JSON, for tests that need a corrupt or unusual container the tools never write.
  edit_bmodel.py in.bmodel out.bmodel 'PYTHON'
PYTHON runs with `m` bound to the root Model table as a dict (flatc
--strict-json --defaults-json, so fields at their default are present),
`subnets(i)`, the sub-net list of net 0's stage i, and `blob`, the binary
part as a bytearray (Binary ranges are relative to it; keep its size).
`cpu_param(s)` is the byte range [start, end) of CPU sub-net s's parameters."""
import json
import os
import struct
import subprocess
import sys
import tempfile

src, dst, code = sys.argv[1:4]
schema = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "isa", "bmodel", "bmodel.fbs")
data = open(src, "rb").read()
magic, header_size, fb_size, bin_size = struct.unpack_from("<4I", data, 0)
assert magic == 0xFF55AAEE and header_size == 64, "not a bmodel"
fb, blob = data[64:64 + fb_size], bytearray(data[64 + fb_size:])
with tempfile.TemporaryDirectory() as tmp:
    with open(os.path.join(tmp, "m.bin"), "wb") as f:
        f.write(fb)
    subprocess.run(["flatc", "--json", "--strict-json", "--defaults-json", "--raw-binary", "-o", tmp, schema, "--",
                    os.path.join(tmp, "m.bin")], check=True)
    m = json.load(open(os.path.join(tmp, "m.json")))

    def subnets(stage=0):
        return m["net"][0]["parameter"][stage]["sub_net"]

    def cpu_param(s):
        b = s["cpu_param"][0]["binary_param"]
        return b["start"], b["start"] + b["size"]

    exec(code, {"m": m, "subnets": subnets, "blob": blob, "cpu_param": cpu_param})
    json.dump(m, open(os.path.join(tmp, "e.json"), "w"))
    subprocess.run(["flatc", "--binary", "-o", tmp, schema, os.path.join(tmp, "e.json")], check=True)
    fb = open(os.path.join(tmp, "e.bin"), "rb").read()
# The blob starts 8-byte aligned, as the writer leaves it.
fb += b"\0" * (-len(fb) % 8)
with open(dst, "wb") as f:
    f.write(struct.pack("<4I", magic, 64, len(fb), len(blob)) + b"\0" * 48 + fb + bytes(blob))
