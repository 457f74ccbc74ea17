#!/usr/bin/python3
"""Export the latency validation set (reference §8 and §10: models whose BM1684 times are published)
to ONNX at the published input sizes, after checking each architecture against its
published parameter count and MACs (within 1 %).

    /usr/bin/python3 models/latency/export.py [--models yolov8s,...] [--batch 1,4]
                                              [--out models/out/latency] [--check-only]

Weights are seeded (latency does not depend on them); BatchNorm statistics keep their
defaults. Writes per model M and batch B (suffix "" for 1, "_b<B>" else):
  M<sfx>.onnx, M<sfx>_in.npz (a seeded input), cali/M/sample_XX.npz (batch 1).
"""
import argparse
import importlib
import os
import sys

import numpy as np
import torch
import torchvision

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import blocks  # noqa: E402

TOLERANCE = 0.01
OPSET = 13


def resnet50():
    return torchvision.models.resnet50(weights=None)


RESNET50 = {"params": 25_557_032, "macs": 4.09e9, "input": (1, 3, 224, 224),
            "source": "torchvision resnet50 (25,557,032 params, 4.09 GMAC at 224)"}


def vgg19():
    return torchvision.models.vgg19(weights=None)


VGG19 = {"params": 143_667_240, "macs": 19.63e9, "input": (1, 3, 224, 224),
         "source": "torchvision vgg19 (143,667,240 params, 19.63 GMAC at 224)"}

# name -> (spec, seed); spec: a module of this folder (its build() and PUBLISHED), "module:builder:FIGURES" (a
# builder and published figures of that module by name) or a (builder, published) pair.
MODELS = {
    "resnet50": ((resnet50, RESNET50), 50),
    "yolov8s": ("yolov8", 8),
    "yolox_s": ("yolox", 9),
    "retinaface_mnet025": ("retinaface", 25),
    "lprnet": ("lprnet", 94),
    "centernet_dlav0": ("centernet", 34),
    "openpose_coco": ("openpose", 19),
    "yolov4": ("yolov4", 4),
    "yolov8s_seg": ("yolov8_seg", 81),
    "yolov9s": ("yolov9", 90),
    "vgg19": ((vgg19, VGG19), 190),
    "unet": ("unet", 64),
    "yolov9c_seg": ("yolov9:yolov9c_seg:PUBLISHED_C_SEG", 93),
    "yolact": ("yolact", 55),
    "efficientnetv2": ("efficientnetv2", 288),
    "c3d": ("c3d", 3),
}


def load(name):
    spec, seed = MODELS[name]
    if isinstance(spec, tuple):
        build, published = spec
    elif ":" in spec:
        module, builder, figures = spec.split(":")
        mod = importlib.import_module(module)
        build, published = getattr(mod, builder), getattr(mod, figures)
    else:
        mod = importlib.import_module(spec)
        build, published = mod.build, mod.PUBLISHED
    torch.manual_seed(seed)
    return build().eval(), published, seed


def check(name, model, published):
    example = torch.zeros(*published["input"])
    params, macs = blocks.count_params(model), blocks.count_macs(model, example)
    errors, deviations = [], []
    for what, got in (("params", params), ("macs", macs)):
        want = published.get(what)
        if want:
            deviations.append(f"{what} {100 * (got - want) / want:+.2f} %")
        if want and abs(got - want) / want > TOLERANCE:
            errors.append(f"{what} {got:,} vs published {want:,.0f} ({100 * (got - want) / want:+.2f} %)")
    line = f"{name}: {params / 1e6:.3f} M params, {macs / 1e9:.3f} GMAC at {'x'.join(map(str, published['input'][1:]))}"
    if errors:
        print(f"latency export: error: {name}: " + "; ".join(errors), file=sys.stderr)
        sys.exit(2)
    print(line + (f" ({', '.join(deviations)}: matches {published['source']})" if deviations
                  else f" (no published count to check: {published['source']})"))
    return params, macs


def export(name, model, published, seed, batches, out):
    rng = np.random.default_rng(seed)
    shape = published["input"]
    x = rng.uniform(-1, 1, size=(max(batches),) + tuple(shape[1:])).astype(np.float32)
    with torch.no_grad():
        outs = model(torch.from_numpy(x[:1]))
    n_out = len(outs) if isinstance(outs, (tuple, list)) else 1
    out_names = ["output"] if n_out == 1 else [f"output{i}" for i in range(n_out)]
    for b in batches:
        sfx = "" if b == 1 else f"_b{b}"
        path = os.path.join(out, f"{name}{sfx}.onnx")
        torch.onnx.export(model, torch.from_numpy(x[:b]), path + ".tmp", opset_version=OPSET,
                          input_names=["input"], output_names=out_names, do_constant_folding=True)
        os.replace(path + ".tmp", path)
        np.savez(os.path.join(out, f"{name}{sfx}_in.npz"), input=x[:b])
    cali = os.path.join(out, "cali", name)
    os.makedirs(cali, exist_ok=True)
    for i in range(8):
        np.savez(os.path.join(cali, f"sample_{i:02d}.npz"),
                 input=rng.uniform(-1, 1, size=(1,) + tuple(shape[1:])).astype(np.float32))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--batch", default="1,4")
    p.add_argument("--out", default=os.path.join(here, "..", "out", "latency"))
    p.add_argument("--check-only", action="store_true", help="only check parameters and MACs")
    args = p.parse_args()
    names = [m for m in args.models.split(",") if m]
    unknown = [m for m in names if m not in MODELS]
    if unknown:
        print(f"latency export: error: unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}",
              file=sys.stderr)
        sys.exit(2)
    batches = sorted({int(b) for b in args.batch.split(",")})
    os.makedirs(args.out, exist_ok=True)
    for name in names:
        model, published, seed = load(name)
        check(name, model, published)
        if not args.check_only:
            export(name, model, published, seed, batches, args.out)


if __name__ == "__main__":
    main()
