"""Copies a bmodel with its chip string BM1684 replaced by another 6-letter name."""
import sys

src, dst, chip = sys.argv[1:4]
data = open(src, "rb").read()
assert len(chip) == 6 and data.count(b"BM1684") == 1
open(dst, "wb").write(data.replace(b"BM1684", chip.encode()))
