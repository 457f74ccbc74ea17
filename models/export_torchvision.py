#!/usr/bin/python3
"""Export seeded, input-sensitive torchvision models to ONNX (opset 13, static batch).

    /usr/bin/python3 models/export_torchvision.py [--models resnet18,resnet50,mobilenet_v2]
                                                  [--batch 1,4] [--out models/out] [--force]

weights=None models with default BatchNorm statistics (mean 0, var 1) blow the
activations up layer by layer until the logits hardly depend on the input, so a
comparison against them proves nothing. We re-estimate every BatchNorm's running
statistics on a few seeded batches of smooth random images (train-mode forward
passes, momentum=None = cumulative average, no grad), switch to eval(), centre the
classifier's bias on the mean logits of a few more seeded batches, and check that
two different inputs give clearly different outputs before exporting.

Writes to --out, per model M and batch B (file suffix "" for B=1, "_b<B>" else):
  M<sfx>.onnx            the model, input "input", output "output"
  M<sfx>_in.npz          a seeded test input           {input: float32 [B,3,224,224]}
  M<sfx>_in2.npz         a second, different input     (for the sensitivity checks)
  M<sfx>_torch_out.npz   torch's eval output for M<sfx>_in.npz {output: float32 [B,1000]}
  cali/M/sample_XX.npz   calibration samples, batch 1
  M.stamp                what the outputs were made from; a matching stamp skips the model
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import inputs  # noqa: E402

MODELS = {  # name -> (constructor, seed)
    "resnet18": (torchvision.models.resnet18, 18),
    "resnet50": (torchvision.models.resnet50, 50),
    "mobilenet_v2": (torchvision.models.mobilenet_v2, 2),
}
OPSET = 13
MAX_COSINE = 0.95  # two different inputs must give outputs less similar than this


def fail(msg):
    print(f"export_torchvision: error: {msg}", file=sys.stderr)
    sys.exit(2)


def suffix(batch):
    return "" if batch == 1 else f"_b{batch}"


def reestimate_batchnorm(model, rng, batches, batch_size, size=(224, 224)):
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # cumulative moving average over all batches
    # Only the BatchNorms in train mode: dropout and stochastic depth (EfficientNet) would
    # otherwise change the statistics the eval-mode network sees.
    model.eval()
    for bn in bns:
        bn.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.from_numpy(inputs.imagenet_batch(rng, batch_size, *size)))
    model.eval()
    return len(bns)


def center_classifier(model, rng, batches, batch_size, size=(224, 224), head=None, drop_common_direction=False):
    """Subtract the mean logits over seeded images from the bias of head (default: the
    last Linear; a segmentation model's last 1x1 Conv2d, whose per-channel mean over the
    batch and the pixels is taken).

    Even with good BatchNorm statistics, the post-ReLU pooled features share a large
    positive mean, so an untrained classifier's logits share a common vector that
    dominates every output. Centring (a data-dependent init of one bias) leaves the
    input-dependent part, which is what a numeric comparison should test.

    Some untrained networks (MobileNetV3's hard-swish and squeeze-excite blocks) also
    share one direction whose length changes with the image's contrast: centred logits
    still point the same way. drop_common_direction also projects the largest principal
    direction of the centred logits out of the head's weights and bias."""
    fc = head or [m for m in model.modules() if isinstance(m, torch.nn.Linear)][-1]

    def channel_mean(y):  # [N, C] or [N, C, H, W] -> [C]
        return y.mean([d for d in range(y.dim()) if d != 1])

    with torch.no_grad():
        means, samples = [], []
        for _ in range(batches):
            y = model(torch.from_numpy(inputs.imagenet_batch(rng, batch_size, *size)))
            means.append(channel_mean(y))
            samples.append(y[:, :, ::8, ::8] if y.dim() == 4 else y)  # every 8th pixel is plenty
        mean = sum(means) / batches
        fc.bias -= mean
        if drop_common_direction:
            rows = torch.cat([y.movedim(1, -1).reshape(-1, y.shape[1]) for y in samples]) - mean
            u = torch.linalg.svd(rows, full_matrices=False).Vh[0]
            project = torch.eye(len(u)) - torch.outer(u, u)
            fc.weight.copy_((project @ fc.weight.reshape(len(u), -1)).reshape(fc.weight.shape))
            fc.bias.copy_(project @ fc.bias)


def stamp_text(name, args, scripts=("export_torchvision.py", "inputs.py")):
    """What a model's outputs are made from: the settings, the torch versions and the
    sha256 of every script (in models/) that shapes them."""
    here = os.path.dirname(os.path.abspath(__file__))
    return json.dumps({
        "model": name,
        "batches": args.batch,
        "cali": args.cali,
        "bn_batches": [args.bn_batches, args.center_batches, args.bn_batch_size],
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "scripts": [inputs.file_sha256(os.path.join(here, f)) for f in scripts],
    }, sort_keys=True)


def check_sensitivity(name, y1, y2, what):
    """Exit 2 unless two different input batches give clearly different outputs."""
    cos = inputs.cosine(y1[0], y2[0])
    ys = np.concatenate([y1, y2])
    pairs = [inputs.cosine(ys[i], ys[j]) for i in range(len(ys)) for j in range(i + 1, len(ys))]
    print(f"{name}: {what}; cosine between the outputs of "
          f"two inputs = {cos:.4f} (over {len(pairs)} pairs: mean {np.mean(pairs):.4f}, max {max(pairs):.4f})")
    if not cos < MAX_COSINE or not np.mean(pairs) < MAX_COSINE:
        fail(f"{name}: outputs are nearly input-independent (cosine {cos:.4f}, mean {np.mean(pairs):.4f}, "
             f"limit {MAX_COSINE})")


def export_one(name, args):
    ctor, seed = MODELS[name]
    out = args.out
    stamp_path = os.path.join(out, f"{name}.stamp")
    stamp = stamp_text(name, args)
    if not args.force and inputs.read_stamp(stamp_path) == stamp:
        print(f"{name}: up to date")
        return
    t0 = time.time()
    torch.manual_seed(seed)
    model = ctor(weights=None)
    rng = np.random.default_rng(seed)
    nbn = reestimate_batchnorm(model, rng, args.bn_batches, args.bn_batch_size)
    center_classifier(model, rng, args.center_batches, args.bn_batch_size)

    # Test inputs come from their own stream so the calibration count does not change them.
    test_rng = np.random.default_rng(seed + 1000)
    max_batch = max(args.batch)
    x1 = inputs.imagenet_batch(test_rng, max_batch)
    x2 = inputs.imagenet_batch(test_rng, max_batch)
    with torch.no_grad():
        y1 = model(torch.from_numpy(x1)).numpy()
        y2 = model(torch.from_numpy(x2)).numpy()
    check_sensitivity(name, y1, y2, f"{nbn} BatchNorms re-estimated, classifier centred")

    for b in args.batch:
        sfx = suffix(b)
        onnx_path = os.path.join(out, f"{name}{sfx}.onnx")
        tmp = onnx_path + ".tmp"
        torch.onnx.export(model, torch.from_numpy(x1[:b]), tmp, opset_version=OPSET,
                          input_names=["input"], output_names=["output"], do_constant_folding=True)
        os.replace(tmp, onnx_path)
        inputs.save_npz(os.path.join(out, f"{name}{sfx}_in.npz"), {"input": x1[:b]})
        inputs.save_npz(os.path.join(out, f"{name}{sfx}_in2.npz"), {"input": x2[:b]})
        inputs.save_npz(os.path.join(out, f"{name}{sfx}_torch_out.npz"), {"output": y1[:b]})

    cali_rng = np.random.default_rng(seed + 2000)
    cali_dir = os.path.join(out, "cali", name)
    os.makedirs(cali_dir, exist_ok=True)
    for i in range(args.cali):
        inputs.save_npz(os.path.join(cali_dir, f"sample_{i:02d}.npz"), {"input": inputs.imagenet_batch(cali_rng, 1)})
    with open(stamp_path, "w") as f:
        f.write(stamp)
    print(f"{name}: exported batch {','.join(map(str, args.batch))} in {time.time() - t0:.1f} s")


def add_recalibration_args(p):
    """The options every seeded, recalibrated export shares (this script and zoo.py)."""
    p.add_argument("--cali", type=int, default=8, help="number of calibration samples")
    p.add_argument("--bn-batches", type=int, default=4)
    p.add_argument("--bn-batch-size", type=int, default=8)
    p.add_argument("--center-batches", type=int, default=4)
    p.add_argument("--force", action="store_true", help="re-export even when the stamp matches")


def check_recalibration_args(args):
    if args.cali < 1 or args.bn_batches < 1 or args.center_batches < 1 or args.bn_batch_size < 2:
        fail("--cali, --bn-batches and --center-batches must be >= 1, --bn-batch-size >= 2")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--batch", default="1,4", help="comma-separated static batch sizes")
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "out"))
    add_recalibration_args(p)
    args = p.parse_args()
    names = [m for m in args.models.split(",") if m]
    unknown = [m for m in names if m not in MODELS]
    if unknown:
        fail(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    try:
        args.batch = sorted({int(b) for b in args.batch.split(",") if b})
    except ValueError:
        fail(f"--batch must be comma-separated integers, got '{args.batch}'")
    if not args.batch or min(args.batch) < 1 or max(args.batch) > 64:
        fail("--batch sizes must be between 1 and 64")
    check_recalibration_args(args)
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for name in names:
        export_one(name, args)


if __name__ == "__main__":
    main()
