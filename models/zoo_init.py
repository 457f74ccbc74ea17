"""Initialisations of seeded zoo networks that BatchNorm re-estimation alone
does not make input-sensitive (models/zoo.py runs them before re-estimating the BatchNorms).

A model's stamp includes this file only when it uses one of these, so tuning one
initialisation re-exports that model alone."""
import numpy as np
import torch
from torchvision.ops.misc import SqueezeExcitation

import inputs

# Std of each squeeze-excitation logit over the seeded images (EfficientNet-B1; docs/models.md
# has the measurements behind the value).
SE_LOGIT_STD = 0.03


class _Reached(Exception):
    """Stops a forward pass once the layer being initialised has produced its output."""


def centre_se_gates(model, rng, size, batch=16, logit_std=SE_LOGIT_STD):
    """Layer-sequential, data-dependent initialisation of every squeeze-excitation block.

    In forward order, each SE conv (fc1, then fc2: the gate logits) is rescaled and its bias
    set so that, per output channel, its output over `batch` seeded images has mean 0 and
    standard deviation `logit_std` (BatchNorms in train mode meanwhile, so every layer sees
    normalised inputs; the statistics are re-estimated afterwards). Each gate then starts at
    sigmoid(0) = 0.5 and varies a little with the image. With seeded weights the SE gates
    otherwise act as detectors of the image's overall contrast: an image with larger
    activations moves its gates further from 0.5, which raises the energy the block passes on
    (E[g^2] grows with the gate's spread), and the next block's gates move further still.
    Over EfficientNet-B1's 23 blocks that feedback multiplies the activations of
    high-contrast images by hundreds and leaves every output pointing the same way."""
    x = torch.from_numpy(inputs.imagenet_batch(rng, batch, size, size))
    model.eval()
    for bn in model.modules():
        if isinstance(bn, torch.nn.modules.batchnorm._BatchNorm):
            bn.train()
    layers = [conv for se in model.modules() if isinstance(se, SqueezeExcitation) for conv in (se.fc1, se.fc2)]
    for conv in layers:
        seen = {}

        def stop(module, args, out):
            seen["out"] = out
            raise _Reached

        hook = conv.register_forward_hook(stop)
        try:
            with torch.no_grad():
                model(x)
        except _Reached:
            pass
        finally:
            hook.remove()
        y = seen["out"].flatten(2).mean(2)  # [batch, channels]: the SE convs see 1x1 maps
        mean, std = y.mean(0), y.std(0).clamp_min(1e-12)
        with torch.no_grad():
            conv.weight.mul_((logit_std / std).view(-1, 1, 1, 1))
            conv.bias.copy_((conv.bias - mean) * (logit_std / std))
    model.eval()
    return f"{len(layers) // 2} SE blocks centred (logit std {logit_std})"


def seed_zero_head(model, rng, size):
    """torchvision zero-initialises ViT's classifier (heads.head: fine-tuning starts from zero
    logits), so a seeded ViT gives zeros for every image (and its two-input cosine, 0, hides
    that). Give the head nn.Linear's default initialisation from torch's seeded generator; the
    classifier centring then treats it like any other head. Not data-dependent: rng and size
    are unused."""
    model.heads.head.reset_parameters()
    return "zero-initialised classifier head seeded"
