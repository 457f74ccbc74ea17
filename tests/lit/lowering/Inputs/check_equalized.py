# Checks an equalized Top module (argv[1]): for each conv -> relu -> conv
# pair of make_levers.py's net, output channel i of the first filter and
# input channel i of the second have the same largest |weight| (to 1e-4).
import os
import re
import sys

import numpy as np

text = open(sys.argv[1]).read()
# The weight file is named relative to the module's directory.
weights = np.load(os.path.join(os.path.dirname(sys.argv[1]), re.search(r'top.weight_file = "([^"]+)"', text).group(1)))
names = {}
for m in re.finditer(r'(%\w+) = top.weight "([^"]+)"', text):
    names[m.group(1)] = m.group(2)
convs = re.findall(r'"top.conv"\((%\w+), (%\w+)', text)
filters = [weights[names[f]] for _, f in convs]
for first, second in zip(filters, filters[1:]):
    r1 = np.abs(first).reshape(first.shape[0], -1).max(axis=1)
    if second.shape[1] == 1:  # depthwise: input channel i is filter i
        r2 = np.abs(second).reshape(second.shape[0], -1).max(axis=1)
    else:
        r2 = np.abs(second).transpose(1, 0, 2, 3).reshape(second.shape[1], -1).max(axis=1)
    if not np.allclose(r1, r2, rtol=1e-4):
        sys.exit(f"check_equalized: ranges differ: {r1} vs {r2}")
print("check_equalized: ranges equal")
