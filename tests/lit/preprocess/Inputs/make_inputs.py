# Writes into argv[1]: tiny ONNX models that return relu(input) for an NCHW
# 1x3x12x16, an NHWC 1x12x16x3 and a gray 1x1x12x16 input, PNG images (RGB,
# RGBA, gray, palette), a JPEG, a corrupt PNG and an empty .jpg (fixed seed).
import os
import sys

import numpy as np
from onnx import TensorProto, helper
from PIL import Image
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
rng = np.random.default_rng(5)


def relu_model(name, shape):
    node = helper.make_node("Relu", ["input"], ["output"])
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("input", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, shape)])
    save_model(graph, os.path.join(out, name + ".onnx"), ir_version=8)


relu_model("nchw", [1, 3, 12, 16])
relu_model("nhwc", [1, 12, 16, 3])
relu_model("gray", [1, 1, 12, 16])
relu_model("batch2", [2, 3, 12, 16])

images = os.path.join(out, "images")
os.makedirs(images, exist_ok=True)
rgb = rng.integers(0, 256, (29, 37, 3), dtype=np.uint8)
Image.fromarray(rgb, "RGB").save(os.path.join(images, "a_rgb.png"))
rgba = rng.integers(0, 256, (9, 31, 4), dtype=np.uint8)
Image.fromarray(rgba, "RGBA").save(os.path.join(images, "b_rgba.png"))
gray = rng.integers(0, 256, (40, 20), dtype=np.uint8)
Image.fromarray(gray, "L").save(os.path.join(images, "c_gray.png"))
Image.fromarray(rgb, "RGB").convert("P", palette=Image.ADAPTIVE, colors=16).save(os.path.join(images, "d_palette.png"))
Image.fromarray(rgb, "RGB").save(os.path.join(images, "e_photo.jpg"), quality=95)
# Small enough to be upsampled.
Image.fromarray(rng.integers(0, 256, (5, 7, 3), dtype=np.uint8), "RGB").save(os.path.join(images, "f_small.png"))
with open(os.path.join(out, "corrupt.png"), "wb") as f:
    f.write(open(os.path.join(images, "a_rgb.png"), "rb").read()[:60])
open(os.path.join(out, "empty.jpg"), "wb").close()
