# Writes the weights of small.top.mlir, inputs (good and bad) and the numpy
# reference of every tensor into the directory given as argv[1].
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(7)
w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
b = rng.standard_normal(3).astype(np.float32)
fc = rng.standard_normal((12, 5)).astype(np.float32)
x = rng.standard_normal((1, 2, 4, 4)).astype(np.float32)
np.savez(os.path.join(out, "small_weights.npz"), conv_w=w, conv_b=b, fc_w=fc)
np.savez(os.path.join(out, "in.npz"), image=x)
np.savez(os.path.join(out, "in_badname.npz"), img=x)
np.savez(os.path.join(out, "in_badshape.npz"), image=x.reshape(1, 2, 16))
np.savez(os.path.join(out, "in_baddtype.npz"), image=x.astype(np.float64))
np.savez(os.path.join(out, "in_extra.npz"), image=x, other=x)

xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
conv = np.zeros((1, 3, 4, 4))
for o in range(3):
    for i in range(4):
        for j in range(4):
            conv[0, o, i, j] = np.sum(xp[0, :, i:i + 3, j:j + 3] * w[o]) + b[o]
relu = np.maximum(conv, 0)
pool = relu.reshape(1, 3, 2, 2, 2, 2).mean(axis=(3, 5))
logits = pool.reshape(1, 12) @ fc
e = np.exp(logits - logits.max())
prob = e / e.sum()
f32 = lambda a: a.astype(np.float32)
np.savez(os.path.join(out, "expected.npz"), prob=f32(prob))
np.savez(os.path.join(out, "expected_all.npz"), image=x, conv=f32(conv), relu=f32(relu), pool=f32(pool),
         flat=f32(pool.reshape(1, 12)), logits=f32(logits), prob=f32(prob))
# A visibly different result and one with another shape, for tpuc compare.
np.savez(os.path.join(out, "wrong.npz"), prob=f32(prob[:, ::-1]))
np.savez(os.path.join(out, "wrong_shape.npz"), prob=f32(prob.reshape(5, 1)))
