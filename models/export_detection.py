#!/usr/bin/python3
"""Export detectors whose ONNX graph ends in real post-processing (NMS and what feeds it),
to see how far `tpuc` gets on them unmodified (issue 33, "models with post-processing
compile unmodified"). Findings: docs/models.md, "Detectors with post-processing".

    /usr/bin/python3 models/export_detection.py OUT_DIR [--models yolov8n_nms,...] [--size 320]

Seeded random weights (weights=None, weights_backbone=None; no network). Writes per model M:
  OUT_DIR/M.onnx     opset 17 (the ops and patterns that result are the point)
  OUT_DIR/M_in.npz   a seeded synthetic image in [0, 1], keyed by the ONNX input name
  OUT_DIR/M.ops.txt  the op histogram of the exported graph, subgraphs included
  OUT_DIR/M.blockers.txt  its nodes classified by how they meet shapes that come from the data
                     (also: export_detection.py --analyse M.onnx)

Models:
  yolov8n_nms       YOLOv8 (models/latency/yolov8.py at width 0.25 = "n") + the ultralytics
                    export head: DFL decode, anchors, sigmoid scores, class max, confidence
                    filter (boolean mask -> NonZero), torchvision.ops.batched_nms, keep[:max_det]
  yolov8n_nms_plain the same net, decode + class-agnostic torchvision.ops.nms over all anchors
                    and Gathers of the kept rows, no confidence filter, no max_det slice
                    (the smallest graph with NMS a real exporter emits)
  ssdlite320        torchvision ssdlite320_mobilenet_v3_large (transform + postprocess inside)
  retinanet         torchvision retinanet_resnet50_fpn (min_size = max_size = --size)
  fcos              torchvision fcos_resnet50_fpn (min_size = max_size = --size)
"""
import argparse
import collections
import os
import sys
import traceback

import numpy as np
import onnx
import torch
import torchvision
from torch import nn

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "latency"))

OPSET = 17


# --- (a) YOLOv8 with its post-processing -------------------------------------------------

class YoloPost(nn.Module):
    """YOLOv8 body (raw head maps) + the decode and NMS of ultralytics' exporter."""

    def __init__(self, size, plain=False, nc=80, reg_max=16, conf=0.25, iou=0.45, max_det=100):
        super().__init__()
        import yolov8
        self.body = yolov8.YOLOv8(depth=0.33, width=0.25, nc=nc)
        self.nc, self.reg_max, self.plain = nc, reg_max, plain
        self.conf, self.iou, self.max_det = conf, iou, max_det
        anchors, strides = [], []
        for s in (8, 16, 32):
            h = w = size // s
            sy, sx = torch.meshgrid(torch.arange(h) + 0.5, torch.arange(w) + 0.5, indexing="ij")
            anchors.append(torch.stack((sx, sy), -1).view(-1, 2))
            strides.append(torch.full((h * w, 1), float(s)))
        self.register_buffer("anchors", torch.cat(anchors).t().unsqueeze(0))  # 1 x 2 x A
        self.register_buffer("strides", torch.cat(strides).t().unsqueeze(0))  # 1 x 1 x A
        self.register_buffer("proj", torch.arange(reg_max, dtype=torch.float32).view(1, reg_max, 1, 1))

    def forward(self, x):
        maps = self.body(x)
        b = x.shape[0]
        y = torch.cat([m.view(b, 4 * self.reg_max + self.nc, -1) for m in maps], 2)  # b x 144 x A
        box, cls = y.split((4 * self.reg_max, self.nc), 1)
        a = box.shape[-1]
        # DFL: softmax over 16 bins, expectation
        dist = (box.view(b, 4, self.reg_max, a).transpose(2, 1).softmax(1) * self.proj).sum(1)  # b x 4 x A
        lt, rb = dist.chunk(2, 1)
        x1y1 = self.anchors - lt
        x2y2 = self.anchors + rb
        boxes = (torch.cat((x1y1, x2y2), 1) * self.strides)[0].t()  # A x 4 (batch 1)
        scores = cls.sigmoid()[0].t()  # A x nc
        conf, label = scores.max(1)
        if self.plain:
            keep = torchvision.ops.nms(boxes, conf, self.iou)
            return boxes[keep], conf[keep], label[keep]
        mask = conf > self.conf
        boxes, conf, label = boxes[mask], conf[mask], label[mask]
        keep = torchvision.ops.batched_nms(boxes, conf, label, self.iou)[: self.max_det]
        return boxes[keep], conf[keep], label[keep]


def reestimate_batchnorm(model, size, batches=4):
    """weights=None nets with default BatchNorm statistics shrink the activations layer by layer
    (YOLOv8n's head sees std 1e-6: every score ties, NMS order is then arbitrary). Re-estimate
    each BatchNorm's statistics on seeded synthetic images, as models/export_torchvision.py does."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None
        bn.train()
    with torch.no_grad():
        for i in range(batches):
            if isinstance(model, TvDet):  # two images a batch: SSD's extra layers end at 1x1
                model.model([torch.from_numpy(image(100 + 2 * i + j, size))[0] for j in range(2)])
            else:
                model(torch.from_numpy(image(100 + i, size)))
    for bn in bns:
        bn.eval()


def yolo(size, plain):
    torch.manual_seed(8)
    m = YoloPost(size, plain=plain).eval()
    reestimate_batchnorm(m, size)
    # Scale each level's last class conv to logits of std 1.5 around -3, so that a few per cent
    # of the anchors pass the 0.25 confidence filter (a trained net's picture), without ties.
    with torch.no_grad():
        maps = m.body(torch.from_numpy(image(99, size)))
        for seq, y in zip(m.body.detect.cls, maps):
            std = y[:, 4 * m.reg_max:].std().item()
            seq[-1].weight.mul_(1.5 / std)
            seq[-1].bias.mul_(1.5 / std).sub_(3.0)
    return m, ["images"], ["boxes", "scores", "labels"]


# --- (b), (c) torchvision detection models ------------------------------------------------

class TvDet(nn.Module):
    """A torchvision detector on one image tensor [1,3,H,W], returning boxes, scores, labels."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        out = self.model([x[0]])[0]
        return out["boxes"], out["scores"], out["labels"]


def tv(name, size):
    torch.manual_seed({"ssdlite320": 320, "retinanet": 50, "fcos": 51}[name])
    det = torchvision.models.detection
    kw = dict(weights=None, weights_backbone=None)
    if name == "ssdlite320":
        model = det.ssdlite320_mobilenet_v3_large(**kw)  # its transform resizes to 320x320
    elif name == "retinanet":
        model = det.retinanet_resnet50_fpn(min_size=size, max_size=size, **kw)
        # the head's prior bias (-4.6, scores ~0.01) keeps no box above score_thresh 0.05
        # with random weights: raise it so the post-processing has rows to work on
        with torch.no_grad():
            model.head.classification_head.cls_logits.bias.fill_(-1.0)
    else:
        model = det.fcos_resnet50_fpn(min_size=size, max_size=size, **kw)
    net = TvDet(model.eval()).eval()
    reestimate_batchnorm(net, size)
    return net, ["images"], ["boxes", "scores", "labels"]


MODELS = ["yolov8n_nms", "yolov8n_nms_plain", "ssdlite320", "retinanet", "fcos"]


def build(name, size):
    if name.startswith("yolov8n"):
        return yolo(size, plain=name.endswith("plain"))
    return tv(name, size)


def image(seed, size):
    """A smooth synthetic image in [0, 1]: a few coloured rectangles on a gradient."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:size, 0:size] / size
    img = np.stack([0.5 * xx + 0.2, 0.5 * yy + 0.2, 0.3 + 0.2 * xx * yy]).astype(np.float32)
    for _ in range(6):
        x0, y0 = rng.integers(0, size - 32, 2)
        w, h = rng.integers(16, size // 2, 2)
        img[:, y0:y0 + h, x0:x0 + w] = rng.uniform(0, 1, (3, 1, 1))
    img += rng.normal(0, 0.02, img.shape).astype(np.float32)
    return np.clip(img, 0, 1)[None].astype(np.float32)


def op_histogram(path):

    model = onnx.load(path)
    hist = collections.Counter()

    def walk(graph, prefix=""):
        for n in graph.node:
            hist[prefix + n.op_type] += 1
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g, prefix + n.op_type + "/")
                for g in a.graphs:
                    walk(g, prefix + n.op_type + "/")
    walk(model.graph)
    return hist


# inputs of each op that give the result's shape (not its data)
SHAPE_INPUTS = {"Reshape": [1], "Expand": [1], "ConstantOfShape": [0], "Range": [0, 1, 2],
                "Slice": [1, 2, 3, 4], "TopK": [1], "Tile": [1], "Resize": [1, 2, 3], "Squeeze": [1],
                "Unsqueeze": [1], "Pad": [1], "OneHot": [1], "Split": [1], "ReduceMax": [1], "ReduceMin": [1],
                "ReduceSum": [1], "ReduceProd": [1], "ReduceMean": [1]}
SOURCES = {"NonZero", "NonMaxSuppression"}
HOST = {"ArgMax", "ArgMin", "Cast", "TopK", "Gather", "GatherElements", "GatherND", "ScatterND",
        "ScatterElements", "NonMaxSuppression", "NonZero", "RoiAlign"}


def analyse(path, inline_if=True):
    """Per node: (name, op, input kinds, output kind, blocker class or None). Kinds: C constant,
    A static-shaped activation, DV integer value computed from a data-dependent shape,
    DS tensor whose shape comes from the data. The If of batched_nms is walked into its
    else branch (the non-empty case)."""
    m = onnx.load(path)
    g = m.graph
    kind = {}
    for i in g.initializer:
        kind[i.name] = "C"
    for i in g.input:
        if i.name not in kind:
            kind[i.name] = "A"
    kind[""] = "C"

    def flat(graph, prefix):
        for n in graph.node:
            if n.op_type == "If" and inline_if:
                # the If of torchvision's batched_nms: then = empty (no boxes), else = NMS path
                yield (n, prefix)
                for a in n.attribute:
                    if a.name == "else_branch":
                        for i in a.g.initializer:
                            kind[i.name] = "C"
                        yield from flat(a.g, prefix + "If/")
            else:
                yield (n, prefix)
    rows = []
    for n, prefix in flat(g, ""):
        op = n.op_type
        ins = [kind.get(x, "A") for x in n.input]  # subgraph outer-scope names resolve to the outer kinds
        if op == "Constant":
            out = "C"
        elif op == "If":
            # the branch's outputs alias else_branch outputs; cond kind decides
            out = "IF"  # its outputs: DS (their shape depends on the branch taken)
        elif op in ("Shape", "Size"):
            out = "DV" if ins[0] == "DS" else "C"
        elif all(k == "C" for k in ins):
            out = "C"
        elif op in SOURCES:
            out = "DS"
        elif "DS" in ins:
            out = "DS"
        elif any(ins[i] in ("DV", "A") for i in SHAPE_INPUTS.get(op, []) if i < len(ins)):
            out = "DS"   # result shape set by a run-time value
        elif "DV" in ins:
            out = "DV"
        else:
            out = "A"
        for o in n.output:
            kind[o] = out if out != "IF" else "DS"
        shape_in = [ins[i] for i in SHAPE_INPUTS.get(op, []) if i < len(ins)]
        data_in = [k for i, k in enumerate(ins) if i not in SHAPE_INPUTS.get(op, [])]
        if op == "If":
            cls = "If (control flow)"
        elif op in ("Shape", "Size") and ins[0] == "DS":
            cls = "Shape/Size of a DS tensor (folds to the bound today)"
        elif op in SOURCES and "DS" not in ins:
            cls = "source (host, shape from data)"
        elif out == "C" or (out == "A" and "DV" not in ins):
            cls = None
        elif any(k in ("DV", "DS", "A") for k in shape_in) and op in SHAPE_INPUTS:
            cls = "shape operand computed at run time"
        elif "DS" in data_in:
            cls = "reads DS (host op exists)" if op in HOST else "reads DS (chip op: needs a host version)"
        elif out == "DV" or "DV" in ins:
            cls = "shape arithmetic on DV (host integer math)"
        else:
            cls = "?"
        rows.append((prefix + n.name, op, ins, out, cls))
    return rows



def blockers(path):
    hist = collections.defaultdict(collections.Counter)
    for _, op, _, _, cls in analyse(path):
        if cls:
            hist[cls][op] += 1
    return [f"{cls}: {sum(c.values())}: " + ", ".join(f"{op} {n}" for op, n in c.most_common())
            for cls, c in hist.items()]


def export(name, size, out):
    model, inputs, outputs = build(name, size)
    x = torch.from_numpy(image(MODELS.index(name) + 1, size))
    with torch.no_grad():
        ref = model(x)
    path = os.path.join(out, name + ".onnx")
    torch.onnx.export(model, (x,), path, opset_version=OPSET, input_names=inputs,
                      output_names=outputs, do_constant_folding=True)
    np.savez(os.path.join(out, name + "_in.npz"), **{inputs[0]: x.numpy()})
    np.savez(os.path.join(out, name + "_torch_out.npz"),
             **{k: v.numpy().astype(np.float32) for k, v in zip(outputs, ref)})
    hist = op_histogram(path)
    with open(os.path.join(out, name + ".ops.txt"), "w") as f:
        for op, n in sorted(hist.items()):
            f.write(f"{n:5d} {op}\n")
    with open(os.path.join(out, name + ".blockers.txt"), "w") as f:
        f.write("\n".join(blockers(path)) + "\n")
    rows = ref[0].shape[0]
    print(f"{name}: {path}, {sum(hist.values())} nodes, torch keeps {rows} boxes")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="output folder; with --analyse, an .onnx file to classify")
    ap.add_argument("--analyse", action="store_true",
                    help="print how the nodes of the ONNX file OUT meet data-dependent shapes, and exit")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--size", type=int, default=320)
    args = ap.parse_args()
    if args.analyse:
        print("\n".join(blockers(args.out)))
        return
    os.makedirs(args.out, exist_ok=True)
    failed = 0
    for name in args.models.split(","):
        if name not in MODELS:
            print(f"export_detection: error: unknown model '{name}' (have {', '.join(MODELS)})", file=sys.stderr)
            sys.exit(2)
        try:
            export(name, args.size, args.out)
        except Exception as e:  # report and go on: which exports fail is part of the finding
            failed += 1
            traceback.print_exc(limit=2)
            print(f"export_detection: error: {name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
                  file=sys.stderr)
    sys.exit(2 if failed else 0)


if __name__ == "__main__":
    main()
