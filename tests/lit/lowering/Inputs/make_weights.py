# Writes the weight file of a Top module for the lowering lit tests: every
# fp32 top.weight "NAME" : tensor<AxBx...xf32> (or tensor<f32>) of the .mlir gets exact,
# deterministic values ((i * 37 + len(NAME)) % 19 - 9) / 8 (so the rshift and
# multipliers the tests pin do not depend on a random generator), written to
# the file the module's top.weight_file names, beside the .mlir.
#   make_weights.py model.mlir
import os
import re
import sys

import numpy as np

path = sys.argv[1]
text = open(path).read()
weight_file = re.search(r'top\.weight_file = "([^"]+)"', text).group(1)
arrays = {}
for name, dims in re.findall(r'top\.weight "([^"]+)" : tensor<((?:[0-9]+x)*)f32>', text):
    shape = tuple(int(d) for d in dims.split("x") if d)
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    arrays[name] = (((i * 37 + len(name)) % 19 - 9) / 8).astype(np.float32).reshape(shape)
np.savez(os.path.join(os.path.dirname(path), weight_file), **arrays)
