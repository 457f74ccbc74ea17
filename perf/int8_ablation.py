#!/usr/bin/python3
"""INT8 ablation on the trained models (thresholds and lowering levers), written into docs/quantization.md.

    /usr/bin/python3 perf/int8_ablation.py --tpuc build/tools/tpuc/tpuc [--work DIR] [--cali 32] [--test 6] [--select 3]
        [--tune-samples 2] [--models ppocr_det,blazeface,face_short,face_full,selfie,face_mesh,hand,pose] [--qtable-samples 2]
        [--qtable greedy,prefix|none] [--columns KEYS] [--no-docs] [--reuse] [--merge]

Per trained model: calibration inputs and disjoint test inputs (PP-OCRv4 det:
rendered text pages, models/render_text_pages.py; the face detectors:
synthetic face scenes; selfie segmentation: synthetic portraits; the face,
hand and pose landmark models: a synthetic face, hand or person filling the
crop as their detector's box would; all but the pages drawn here), `tpuc import` with the model's preprocessing, then one INT8
deployment per column:

  max, kl, kl + --tune 5, --search-threshold   thresholds (all --no-max-fallback
                                               but the default), every activation
                                               signed int8 (--no-uint8)
  default                                      no calibration flag (kl checked
                                               against max), signed int8
  +UINT8, +equalization, +bias correction,     each lever alone on the default
  +rounding, +per-channel weights              calibration (equalization: the
                                               equalized module recalibrated)
  +int16 pointwise                             per-channel weights, and a conv
                                               read only by a 1x1 conv hands it
                                               its int16 accumulator
  all combined                                 every lever, on the equalized module's
                                               default calibration made with the lever
                                               flags (its max check scores KL and max
                                               with every lever, as tpuc flow does)
  hand-off + bias correction, KL+tune 3 on it  per-channel weights, int16 hand-off,
                                               bias correction (8 samples), UINT8, on
                                               KL+--tune 3 thresholds scored with those
                                               levers (one tune sample)

Each cell is the output cosine against the Top interpreter's fp32: per test
input the smallest over the model's outputs, then the mean over the test
inputs (Tpu interpreter = bmodel bit for bit); for the detector also the IoU
of the binary maps at the DB threshold 0.3, for the landmark models the mean
distance of the (x, y) landmarks from fp32's in input pixels. The model's best column is chosen
on --select held-back calibration inputs (drawn like the calibration inputs,
after them, and not calibrated on), never on the test inputs; the headline
columns give its name and its mean and minimum over the test inputs. Then `tpuc qtable --expected-cos
0.99` on the all-combined setting, greedy (each tensor alone in FP32, ranked on
one sample, at most 5 kept) and by prefix: how many FP32 layers 0.99 needs,
with the cosine after each addition. A model that does not deploy gets a row
saying why. With --columns only those columns are computed (and the
mixed-precision searches only when --qtable names them); with --reuse the
other columns whose outputs are already in --work are read back, the rest
shown as "–" (so a slow model's row can be completed column by column).
With --merge the cells, minimums and notes this run does not compute are
taken from the table docs/quantization.md holds (an earlier run's), and the
rows of models not run stay. The table replaces the block between the
int8-ablation markers of docs/quantization.md, with its provenance (perf/provenance.py): one line
when every cell comes from this run, else one line per run and each cell marked with its run's
key ([a], [b], ...; a merged cell keeps the run that computed it). It refuses to write the doc
when the code the table measures has uncommitted changes. --check (with --models and --columns,
the committed run's --cali/--test/--tune-samples) writes nothing and exits 1 when a cell it computes
differs from the committed table's (deterministic: no noise allowed). Exit 2 with one line on bad input.
"""
import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np

import provenance

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "quantization.md")
BEGIN, END = "<!-- int8-ablation:begin -->", "<!-- int8-ablation:end -->"
DB_THRESHOLD = 0.3
REUSE = False
IMAGENET_SCALE = ",".join(repr(1 / (255 * s)) for s in (0.229, 0.224, 0.225))
# MediaPipe's face detectors read [-1, 1] NHWC RGB, its selfie segmentation and landmark models [0, 1].
MINUS1_1 = ["--mean", "127.5,127.5,127.5", "--scale", ",".join([repr(1 / 127.5)] * 3), "--channel-format", "nhwc"]
ZERO_1 = ["--mean", "0,0,0", "--scale", ",".join([repr(1 / 255)] * 3), "--channel-format", "nhwc"]
MODELS = {
    # PaddleOCR's det preprocessing: (x / 255 - ImageNet mean) / ImageNet std, RGB.
    "ppocr_det": dict(label="PP-OCRv4 det", path="models/out/ppocr_det.onnx", shapes="[[1,3,640,640]]",
                      flags=["--mean", "123.675,116.28,103.53", "--scale", IMAGENET_SCALE], data="pages",
                      iou=True),
    "blazeface": dict(label="BlazeFace front (ONNX)", path="models/out/zoo/blazeface.onnx", shapes=None,
                      flags=MINUS1_1, data="faces", size=128),
    "face_short": dict(label="MediaPipe face short range (TFLite)",
                       path="models/out/mediapipe/face_detection_short_range.tflite", shapes=None,
                       flags=MINUS1_1, data="faces", size=128),
    "face_full": dict(label="MediaPipe face full range (TFLite)",
                      path="models/out/mediapipe/face_detection_full_range.tflite", shapes=None,
                      flags=MINUS1_1, data="faces", size=192),
    "selfie": dict(label="MediaPipe selfie segmentation (TFLite)",
                   path="models/out/mediapipe/selfie_segmentation.tflite", shapes=None,
                   flags=ZERO_1, data="portraits", size=256),
    # Landmark models: task metric = distance of the (x, y) landmarks from fp32's, in input pixels
    # (landmarks=(output, values per landmark)).
    "face_mesh": dict(label="MediaPipe face landmark (TFLite)", path="models/out/mediapipe/face_landmark.tflite",
                      shapes=None, flags=ZERO_1, data="face_crops", size=192, landmarks=("conv2d_21", 3)),
    "hand": dict(label="MediaPipe hand landmark full (TFLite)", path="models/out/mediapipe/hand_landmark_full.tflite",
                 shapes=None, flags=ZERO_1, data="hands", size=224, landmarks=("Identity", 3)),
    "pose": dict(label="MediaPipe pose landmark full (TFLite)", path="models/out/mediapipe/pose_landmark_full.tflite",
                 shapes=None, flags=ZERO_1, data="bodies", size=256, landmarks=("Identity", 5)),
}
THRESHOLD_COLUMNS = [  # (key, header, calibrate flags); max and kl come from one statistics pass
    ("max", "max", None),
    ("kl", "KL", None),
    ("kl_tune", "KL+tune 5", ["--calibration-method", "kl", "--tune", "5", "--no-max-fallback"]),
    ("search", "search-threshold", ["--search-threshold", "--no-max-fallback"]),
    ("default", "default calibration", []),
]
# (key, header, calibration key, equalized module, deploy flags)
AUTO_HEADER = "auto (the default)"
ALL_LEVERS = ["--bias-correction", "--round-weights", "--per-channel-weights", "--int16-pointwise"]
HANDOFF_BC = ["--per-channel-weights", "--int16-pointwise", "--bias-correction"]
LEVER_COLUMNS = [
    ("uint8", "+UINT8", "default", False, []),
    ("equalize", "+equalization", "eq_default", True, ["--no-uint8"]),
    ("biascorr", "+bias correction", "default", False, ["--no-uint8", "--bias-correction"]),
    ("rounding", "+rounding", "default", False, ["--no-uint8", "--round-weights"]),
    ("perchannel", "+per-channel weights", "default", False, ["--no-uint8", "--per-channel-weights"]),
    ("int16pw", "+int16 pointwise", "default", False, ["--no-uint8", "--per-channel-weights", "--int16-pointwise"]),
    ("all", "all combined", "eq_levers", True, ALL_LEVERS),
    ("tuned", "hand-off + bias correction, KL+tune 3 on it", "tuned_handoff", False, [*HANDOFF_BC, "--input-num", "8"]),
    # What a user gets: tpuc calibrate's default recipe search, deployed with the table's recipe.
    ("auto", AUTO_HEADER, "auto", False, []),
]
# The tuned column's thresholds: --tune scores each candidate on the INT8 Tpu
# interpreter of the lowering it is deployed with (levers included), one sample.
TUNED_CALIBRATION = ["--calibration-method", "kl", "--tune", "3", "--tune-samples", "1", *HANDOFF_BC]


# The two mixed-precision searches on the all-combined setting: greedy (each
# tensor alone in FP32, ranked on one sample, best first, at most 5) and
# prefix bisection.
QTABLE_SEARCHES = {"greedy": ["--max-float-layers", "5", "--rank-samples", "1"], "prefix": ["--rank", "prefix"]}


def recently_written(path, seconds=1800):
    """A log another (interrupted) run of this script is still writing."""
    return os.path.exists(path) and time.time() - os.path.getmtime(path) < seconds


def fail(msg):
    print(f"int8_ablation: error: {msg}", file=sys.stderr)
    sys.exit(2)


def run(cmd, log, product=None, check=True):
    """Runs cmd (output appended to log); with --reuse, not when `product` exists. Returns the exit code."""
    if REUSE and product and os.path.exists(product):
        return 0
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode != 0 and check:
        fail(f"{' '.join(cmd[:2])} failed (exit {r.returncode}), see {log}")
    return r.returncode


def last_error(log):
    lines = [l.strip() for l in open(log) if "error" in l]
    return lines[-1] if lines else "failed"


def draw_face(d, x, y, w, h, skin):
    """A face in the box (x, y, w, h): skin ellipse, eyes, nose, mouth."""
    d.ellipse([x, y, x + w, y + h], fill=skin)
    ey = y + h * 0.4
    for ex in (x + w * 0.3, x + w * 0.7):
        d.ellipse([ex - w * 0.08, ey - w * 0.05, ex + w * 0.08, ey + w * 0.05], fill=(245, 245, 245))
        d.ellipse([ex - w * 0.035, ey - w * 0.035, ex + w * 0.035, ey + w * 0.035], fill=(40, 25, 20))
    d.line([x + w * 0.5, y + h * 0.45, x + w * 0.46, y + h * 0.62], fill=tuple(int(c * 0.7) for c in skin), width=2)
    d.ellipse([x + w * 0.35, y + h * 0.72, x + w * 0.65, y + h * 0.8], fill=(150, 60, 60))


def backdrop(rng, size):
    """A vertical colour gradient with a few random rectangles (the clutter behind a subject)."""
    from PIL import Image, ImageDraw
    top, bottom = rng.integers(40, 240, 3), rng.integers(20, 200, 3)
    ramp = np.linspace(0, 1, size)[:, None, None]
    img = Image.fromarray((top * (1 - ramp) + bottom * ramp + np.zeros((size, size, 3))).astype(np.uint8), "RGB")
    d = ImageDraw.Draw(img)
    for _ in range(int(rng.integers(0, 5))):
        x, y = (int(v) for v in rng.integers(0, size, 2))
        r = int(rng.integers(size // 16, size // 4))
        d.rectangle([x, y, x + r, y + r], fill=tuple(int(v) for v in rng.integers(0, 256, 3)))
    return img, d


def skin_tone(rng):
    return tuple(int(v) for v in np.minimum(255, np.array([224, 172, 140]) * rng.uniform(0.45, 1.1)))


def noisy(img, rng, amplitude):
    from PIL import Image
    size = img.size[0]
    arr = np.asarray(img, np.int16) + rng.integers(-amplitude, amplitude + 1, (size, size, 3))
    return Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8), "RGB")


def limb(d, points, width, fill):
    """A chain of thick segments with round joints (a finger, an arm, a leg)."""
    for p, q in zip(points, points[1:]):
        d.line([tuple(p), tuple(q)], fill=fill, width=int(width))
    for p in points:
        d.ellipse([p[0] - width / 2, p[1] - width / 2, p[0] + width / 2, p[1] + width / 2], fill=fill)


def chain(start, angles, lengths):
    """The joints of a chain from `start`, each segment at its absolute angle (radians, 0 = up)."""
    pts = [np.asarray(start, float)]
    for t, l in zip(angles, lengths):
        pts.append(pts[-1] + l * np.array([np.sin(t), -np.cos(t)]))
    return pts


def face_crop(seed, size):
    """A face landmark model's input: one face filling most of the crop (as the detector's enlarged box gives
    it), slightly turned and off-centre, with hair, brows, eyes, nose, lips and ears."""
    rng = np.random.default_rng(seed)
    img, d = backdrop(rng, size)
    w = size * rng.uniform(0.5, 0.68)
    h = w * rng.uniform(1.2, 1.35)
    x, y = (size - w) / 2 + size * rng.uniform(-0.06, 0.06), (size - h) / 2 + size * rng.uniform(-0.04, 0.08)
    skin = skin_tone(rng)
    hair = tuple(int(v) for v in rng.integers(10, 140, 3))
    d.ellipse([x - w * 0.08, y - h * 0.1, x + w * 1.08, y + h * 0.6], fill=hair)
    for ex in (x - w * 0.06, x + w * 0.94):  # ears
        d.ellipse([ex, y + h * 0.38, ex + w * 0.12, y + h * 0.58], fill=skin)
    draw_face(d, x, y, w, h, skin)
    brow = tuple(int(c * 0.45) for c in hair)
    for ex in (x + w * 0.3, x + w * 0.7):
        d.line([ex - w * 0.1, y + h * 0.33, ex + w * 0.1, y + h * (0.33 + rng.uniform(-0.03, 0.03))], fill=brow,
               width=max(2, int(w * 0.03)))
    return noisy(img.rotate(float(rng.uniform(-20, 20)), resample=2, fillcolor=hair), rng, 6)


def hand_crop(seed, size):
    """A hand landmark model's input: one hand (palm, four fingers of three phalanges, a thumb) filling the
    crop, turned, its fingers spread and bent at random."""
    rng = np.random.default_rng(seed)
    img, d = backdrop(rng, size)
    skin = skin_tone(rng)
    shade = tuple(int(c * 0.8) for c in skin)
    turn = rng.uniform(-0.6, 0.6)
    palm = size * rng.uniform(0.22, 0.3)
    wrist = np.array([size * rng.uniform(0.42, 0.58), size * rng.uniform(0.78, 0.9)])
    centre = chain(wrist, [turn], [palm * 0.9])[1]
    corners = [centre + palm * 0.55 * np.array([np.cos(turn + a), np.sin(turn + a)]) * s
               for a, s in ((0, 1), (np.pi, 1))]
    knuckles = [chain(centre, [turn + o], [palm * 0.55])[1] + (i - 1.5) * palm * 0.32 * np.array([np.cos(turn), np.sin(turn)])
                for i, o in enumerate((0, 0, 0, 0))]
    d.polygon([tuple(p) for p in [wrist - [palm * 0.4, 0], wrist + [palm * 0.4, 0], corners[0], *knuckles[::-1],
                                  corners[1]]], fill=skin)
    d.ellipse([centre[0] - palm * 0.6, centre[1] - palm * 0.6, centre[0] + palm * 0.6, centre[1] + palm * 0.6],
              fill=skin)
    for i, k in enumerate(knuckles):
        spread = turn + (i - 1.5) * rng.uniform(0.05, 0.3)
        bend = rng.uniform(0, 0.7)
        lengths = palm * np.array([0.5, 0.32, 0.26]) * (0.85 if i in (0, 3) else 1.0)
        limb(d, chain(k, [spread, spread + bend * rng.choice([-1, 1]) * 0.5, spread + bend], lengths),
             palm * 0.22, skin)
        d.line([tuple(k - [palm * 0.08, 0]), tuple(k + [palm * 0.08, 0])], fill=shade, width=2)
    side = rng.choice([-1, 1])
    base = centre + side * palm * 0.5 * np.array([np.cos(turn), np.sin(turn)]) + [0, palm * 0.2]
    out = turn + side * rng.uniform(0.6, 1.3)
    limb(d, chain(base, [out, out - side * 0.3], palm * np.array([0.45, 0.35])), palm * 0.25, skin)
    return noisy(img, rng, 6)


def body_crop(seed, size):
    """A pose landmark model's input: a person (head, torso, arms, legs of two segments each) standing,
    walking or reaching, centred with the hips near the middle as the pose detector's box puts them."""
    rng = np.random.default_rng(seed)
    img, d = backdrop(rng, size)
    skin, shirt, trousers = skin_tone(rng), *(tuple(int(v) for v in rng.integers(0, 256, 3)) for _ in range(2))
    unit = size * rng.uniform(0.085, 0.11)  # head height
    hip = np.array([size * rng.uniform(0.45, 0.55), size * rng.uniform(0.5, 0.56)])
    lean = rng.uniform(-0.25, 0.25)
    neck = chain(hip, [lean], [3 * unit])[1]
    across = np.array([np.cos(lean), np.sin(lean)])
    shoulders = [neck + s * 1.0 * unit * across for s in (-1, 1)]
    hips = [hip + s * 0.7 * unit * across for s in (-1, 1)]
    for s, hp in zip((-1, 1), hips):  # legs
        a = np.pi - s * rng.uniform(0, 0.5)
        limb(d, chain(hp, [a, a - s * rng.uniform(0, 0.6)], [2.0 * unit, 1.9 * unit]), unit * 0.55, trousers)
    d.polygon([tuple(p) for p in (shoulders[0], shoulders[1], hips[1], hips[0])], fill=shirt)
    for s, sh in zip((-1, 1), shoulders):  # arms
        a = np.pi - s * rng.uniform(0.1, 2.6)
        pts = chain(sh, [a, a + s * rng.uniform(-1.2, 1.2)], [1.5 * unit, 1.3 * unit])
        limb(d, pts[:2], unit * 0.45, shirt)
        limb(d, pts[1:], unit * 0.38, skin)
    head = chain(neck, [lean + rng.uniform(-0.3, 0.3)], [0.75 * unit])[1]
    draw_face(d, head[0] - 0.4 * unit, head[1] - 0.5 * unit, 0.8 * unit, unit, skin)
    return noisy(img, rng, 6)


def face_scene(seed, size):
    """A synthetic scene: a tinted, noisy background with 1-3 faces (skin ellipse, eyes, nose, mouth)."""
    from PIL import Image, ImageDraw
    rng = np.random.default_rng(seed)
    img = Image.new("RGB", (size, size), tuple(int(v) for v in rng.integers(30, 220, 3)))
    d = ImageDraw.Draw(img)
    for _ in range(int(rng.integers(0, 6))):  # clutter
        x, y = rng.integers(0, size, 2)
        r = int(rng.integers(4, size // 4))
        d.rectangle([int(x), int(y), int(x) + r, int(y) + r], fill=tuple(int(v) for v in rng.integers(0, 256, 3)))
    for _ in range(int(rng.integers(1, 4))):
        w = int(rng.integers(size // 5, size // 2))
        h = int(w * rng.uniform(1.1, 1.4))
        x, y = int(rng.integers(0, size - w)), int(rng.integers(0, max(1, size - h)))
        skin = tuple(int(v) for v in np.array([224, 172, 140]) * rng.uniform(0.45, 1.1))
        draw_face(d, x, y, w, h, tuple(min(255, c) for c in skin))
    return noisy(img, rng, 8)


def portrait(seed, size):
    """A synthetic head-and-shoulders picture: a background with a gradient and clutter, a person (skin
    ellipse with hair, eyes and mouth, neck, shirt-coloured shoulders) at a random place and size."""
    rng = np.random.default_rng(seed)
    img, d = backdrop(rng, size)
    cx, cy = size * rng.uniform(0.35, 0.65), size * rng.uniform(0.3, 0.5)
    head = size * rng.uniform(0.12, 0.2)
    skin = skin_tone(rng)
    shirt = tuple(int(v) for v in rng.integers(0, 256, 3))
    d.ellipse([cx - 2.4 * head, cy + 1.3 * head, cx + 2.4 * head, cy + 5 * head], fill=shirt)
    d.rectangle([cx - 0.4 * head, cy + 0.8 * head, cx + 0.4 * head, cy + 1.6 * head], fill=skin)
    d.ellipse([cx - head * 1.05, cy - head * 1.35, cx + head * 1.05, cy + head * 0.4],
              fill=tuple(int(v) for v in rng.integers(10, 120, 3)))  # hair
    d.ellipse([cx - head * 0.85, cy - head * 1.1, cx + head * 0.85, cy + head * 1.1], fill=skin)
    for ex in (cx - head * 0.35, cx + head * 0.35):
        d.ellipse([ex - head * 0.12, cy - head * 0.25, ex + head * 0.12, cy - head * 0.1], fill=(40, 30, 30))
    d.ellipse([cx - head * 0.3, cy + head * 0.45, cx + head * 0.3, cy + head * 0.6], fill=(150, 60, 60))
    return noisy(img, rng, 6)


DRAWINGS = {"faces": face_scene, "portraits": portrait, "face_crops": face_crop, "hands": hand_crop,
            "bodies": body_crop}


def make_data(model, work, a, log):
    """The calibration folder, the test inputs and the held-back calibration inputs (the next --select draws of
    the calibration set's generator, kept out of its folder)."""
    out = os.path.join(work, "data")
    held_dir = os.path.join(out, "held")
    if model["data"] == "pages":
        # Each page is drawn from its own seed: pages a.cali.. of a longer calibration set are the held-back ones.
        if not (REUSE and os.path.isdir(held_dir)):
            run(["/usr/bin/python3", os.path.join(ROOT, "models", "render_text_pages.py"), out,
                 "--cali", str(a.cali + a.select), "--test", str(a.test)], log)
            os.makedirs(held_dir, exist_ok=True)
            for f in sorted(os.listdir(os.path.join(out, "cali")))[a.cali:]:
                os.replace(os.path.join(out, "cali", f), os.path.join(held_dir, f))
    elif not (REUSE and os.path.isdir(held_dir)):
        for sub, count, base in (("cali", a.cali, 0), ("held", a.select, a.cali), ("test", a.test, 10000)):
            os.makedirs(os.path.join(out, sub), exist_ok=True)
            for i in range(count):
                DRAWINGS[model["data"]](base + i, model["size"]).save(os.path.join(out, sub, f"scene_{i:03d}.png"))
    listed = lambda sub: sorted(os.path.join(out, sub, f) for f in os.listdir(os.path.join(out, sub)))  # noqa: E731
    return os.path.join(out, "cali"), listed("test"), listed("held")


def outputs_of(npz):
    """The model's outputs by name, flattened."""
    d = np.load(npz)
    return {k: d[k].astype(np.float64).ravel() for k in sorted(d.files)}


def cosine(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30))


def min_cosine(ref, got):
    """The smallest cosine over the outputs (a detector's scores count as much as its boxes); a single value
    (a landmark model's presence score) has no cosine but its sign."""
    return min(cosine(ref[k], got[k]) for k in ref if ref[k].size > 1)


def iou(ref, got):
    (a,), (b,) = ref.values(), got.values()
    ma, mb = a > DB_THRESHOLD, b > DB_THRESHOLD
    union = np.logical_or(ma, mb).sum()
    return float(np.logical_and(ma, mb).sum() / union) if union else 1.0


def landmark_px(ref, got, spec):
    """Mean distance (input pixels) of the (x, y) landmarks from fp32's."""
    name, stride = spec
    a, b = ref[name].reshape(-1, stride)[:, :2], got[name].reshape(-1, stride)[:, :2]
    return float(np.linalg.norm(a - b, axis=1).mean())


def ablate(key, model, a, tpuc, tpuc_opt):
    work = os.path.join(a.work, key)
    os.makedirs(work, exist_ok=True)
    log = os.path.join(work, "log.txt")
    open(log, "a" if REUSE else "w").close()
    path = os.path.join(ROOT, model["path"])
    if not os.path.exists(path):
        return dict(model=model, blocked=f"{model['path']} not found (scripts/models.sh)")
    cali_dir, tests, held = make_data(model, work, a, log)
    top = os.path.join(work, "m.top.mlir")
    shapes = ["--input-shapes", model["shapes"]] if model["shapes"] else []
    if run([tpuc, "import", path, *shapes, *model["flags"], "-o", top], log, top, check=False):
        return dict(model=model, blocked="import: " + last_error(log).replace(work + "/", ""))
    probe = os.path.join(work, "f32.bmodel")
    if run([tpuc, "deploy", top, "--quantize", "F32", "-o", probe], log, probe, check=False):
        return dict(model=model, blocked="deploy F32: " + last_error(log).replace(work + "/", ""))
    eq_top = os.path.join(work, "m_eq.top.mlir")
    run([tpuc_opt, top, "--top-equalize-weights", "--mlir-print-debuginfo", "-o", eq_top], log, eq_top)
    ref, ref_held = [], []
    for i, img in enumerate(held):
        out = os.path.join(work, f"fp32_held{i}.npz")
        run([tpuc, "run", top, "--image", img, "-o", out], log, out)
        ref_held.append(outputs_of(out))
    for i, img in enumerate(tests):
        out = os.path.join(work, f"fp32_{i}.npz")
        run([tpuc, "run", top, "--image", img, "-o", out], log, out)
        ref.append(outputs_of(out))
        eq_out = os.path.join(work, f"fp32_eq_{i}.npz")
        run([tpuc, "run", eq_top, "--image", img, "-o", eq_out], log, eq_out)
        ref_eq = min_cosine(ref[-1], outputs_of(eq_out))
        if ref_eq < 0.99999:
            fail(f"{key}: equalization changed the fp32 output (cosine {ref_eq:.7f}) on {img}")

    # The calibrations are independent: they run at the same time (each
    # one statistics pass over the calibration inputs, then its tuning).
    tables, times = {}, {}
    # Every column but auto names its levers: --int8-recipe none (no search).
    common = ["--dataset", cali_dir, "--tune-samples", str(a.tune_samples)]
    fixed = ["--int8-recipe", "none"]
    tables["max"], tables["kl"] = os.path.join(work, "max.cali"), os.path.join(work, "kl.cali")
    jobs = [("max,kl", [tpuc, "calibrate", top, *common, *fixed, "--calibration-method", "max,kl", "--no-max-fallback",
                        "-o", os.path.join(work, "%m.cali")], tables["kl"])]
    for ck, _, flags in THRESHOLD_COLUMNS:
        if flags is not None:
            tables[ck] = os.path.join(work, ck + ".cali")
            jobs.append((ck, [tpuc, "calibrate", top, *common, *fixed, *flags, "-o", tables[ck]], tables[ck]))
    tables["eq_default"] = os.path.join(work, "eq_default.cali")
    jobs.append(("equalized default", [tpuc, "calibrate", eq_top, *common, *fixed, "-o", tables["eq_default"]],
                 tables["eq_default"]))
    # All combined: the default calibration told the levers, so that its max
    # check scores KL and max on the arithmetic that is deployed (as tpuc
    # flow does with the same flags).
    tables["eq_levers"] = os.path.join(work, "eq_levers.cali")
    jobs.append(("equalized levers", [tpuc, "calibrate", eq_top, *common, *fixed, *ALL_LEVERS, "-o", tables["eq_levers"]],
                 tables["eq_levers"]))
    tables["auto"] = os.path.join(work, "auto.cali")
    jobs.append(("auto", [tpuc, "calibrate", top, *common, "-o", tables["auto"]], tables["auto"]))
    tables["tuned_handoff"] = os.path.join(work, "tuned_handoff.cali")
    jobs.append(("tuned hand-off", [tpuc, "calibrate", top, *common, *fixed, *TUNED_CALIBRATION, "-o", tables["tuned_handoff"]],
                 tables["tuned_handoff"]))
    # With --columns: only the tables those columns read (max comes with kl).
    needed = {calib for lk, _, calib, *_ in LEVER_COLUMNS if lk in a.columns} | \
        {ck for ck, *_ in THRESHOLD_COLUMNS if ck in a.columns}
    needed = {tables["kl"] if ck == "max" else tables[ck] for ck in needed}
    if a.qtable_given:
        needed.add(tables["eq_levers"])
    procs = {}  # product -> (name, process, start, log file)
    for name, cmd, product in jobs:
        if a.columns and product not in needed:
            continue
        log_path = os.path.join(work, f"calibrate_{name.replace(',', '_').replace(' ', '_')}.log")
        if REUSE and (os.path.exists(product) or recently_written(log_path)):
            continue  # done, or still running from an interrupted run (waited for by its product)
        f = open(log_path, "w")
        procs[product] = (name, subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT), time.time(), f)

    def table(ck):
        """The calibration table of column ck, once its job has written it."""
        product = tables[ck]
        if product in procs:
            name, proc, t0, f = procs.pop(product)
            if proc.wait() != 0:
                fail(f"{key}: tpuc calibrate ({name}) failed (exit {proc.returncode}), see {f.name}")
            times[name] = time.time() - t0
            f.close()
        while not os.path.exists(product):
            time.sleep(10)
        return product

    def scored(name):
        """Whether column `name`'s outputs are all in --work (--reuse reads them back)."""
        return REUSE and all(os.path.exists(os.path.join(work, f)) for f in
                             [f"{name}.bmodel"] + [f"{name}_{i}.npz" for i in range(len(tests))] +
                             [f"{name}_held{i}.npz" for i in range(len(held))])

    def score(name, module, cali, flags):
        bmodel = os.path.join(work, f"{name}.bmodel")
        t0 = time.time()
        # Bias correction and rounding read --tune-samples samples unless the column names its own count
        # (auto: the table's recipe may hold them).
        run([tpuc, "deploy", module, "--quantize", "INT8", "--calibration-table", cali, *flags,
             *(["--calibration-data", cali_dir] + ([] if "--input-num" in flags else ["--input-num", str(a.tune_samples)])
               if {"--bias-correction", "--round-weights"} & set(flags) or name == "auto" else []),
             "-o", bmodel], log, bmodel)
        times[name + " deploy"] = time.time() - t0
        def outputs(tag, i, img):
            out = os.path.join(work, f"{name}_{tag}{i}.npz")
            run([tpuc, "run", bmodel[:-len(".bmodel")] + ".tpu.mlir", "--image", img, "-o", out], log, out)
            return outputs_of(out)
        cos, ious, pxs = [], [], []
        for i, img in enumerate(tests):
            got = outputs("", i, img)
            cos.append(min_cosine(ref[i], got))
            if model.get("iou"):
                ious.append(iou(ref[i], got))
            if model.get("landmarks"):
                pxs.append(landmark_px(ref[i], got, model["landmarks"]))
        held_cos = [min_cosine(ref_held[i], outputs("held", i, img)) for i, img in enumerate(held)]
        cell = dict(cos=float(np.mean(cos)), cos_min=float(np.min(cos)), iou=float(np.mean(ious or [0])),
                    iou_min=float(np.min(ious or [0])), px=float(np.mean(pxs or [0])), px_max=float(np.max(pxs or [0])),
                    held=float(np.mean(held_cos)))
        print(f"int8_ablation: {key} {name}: cosine {cell['cos']:.4f} (min {cell['cos_min']:.4f})" +
              (f", IoU@0.3 {cell['iou']:.3f} (min {cell['iou_min']:.3f})" if ious else "") +
              (f", landmarks {cell['px']:.2f} px (worst {cell['px_max']:.2f})" if pxs else "") +
              f"; held-back calibration inputs {cell['held']:.4f}", flush=True)
        return cell

    # Mixed precision needs only the all-combined table: it runs while the
    # columns are scored (with --columns only when --qtable names it;
    # otherwise an earlier result is read).
    qprocs = []
    searches = a.qtable if not a.columns or a.qtable_given else []
    if searches:
        table("eq_levers")
    for name in searches:
        qt = os.path.join(work, f"{name}.qtable")
        if REUSE and (os.path.exists(qt) or recently_written(os.path.join(work, f"qtable_{name}.log"))):
            continue
        f = open(os.path.join(work, f"qtable_{name}.log"), "w")
        cmd = [tpuc, "qtable", eq_top, "--calibration-table", tables["eq_levers"], "--dataset", cali_dir,
               "--input-num", str(a.qtable_samples), "--expected-cos", "0.99", *QTABLE_SEARCHES[name], *ALL_LEVERS,
               "--int8-budget", "1000000",  # the searches run to their end (tpuc qtable's default stops at 600 s)
               "-o", qt]
        qprocs.append((name, subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT), time.time(), f))
    # Columns whose tables come first are scored first (the tuned ones last).
    cells = {}
    columns = [(ck, top, ck, ["--no-uint8"]) for ck, _, _ in THRESHOLD_COLUMNS] + \
              [(lk, eq_top if eq else top, calib, flags) for lk, _, calib, eq, flags in LEVER_COLUMNS]
    columns.sort(key=lambda c: c[2] in ("kl_tune", "search", "tuned_handoff"))
    for name, module, ck, flags in columns:
        if a.columns and name not in a.columns:
            if scored(name):
                cells[name] = score(name, module, None, flags)
            continue
        cells[name] = score(name, module, table(ck), flags)
    def method(ck):
        lines = [l.strip("# \n") for l in open(tables[ck]) if l.startswith("# method")] \
            if os.path.exists(tables[ck]) else []
        return lines[0] if lines else "?"
    result = dict(model=model, cells=cells, times=times, default_method=method("default"),
                  all_method=method("eq_levers"))
    for name, proc, t0, f in qprocs:
        if proc.wait() not in (0, 1):
            fail(f"{key}: tpuc qtable ({name}) failed (exit {proc.returncode}), see {f.name}")
        times[f"qtable {name}"] = time.time() - t0
    for name in a.qtable:
        qt = os.path.join(work, f"{name}.qtable")
        while not os.path.exists(qt) and searches:
            time.sleep(10)
        if not os.path.exists(qt):
            continue
        steps = [l.strip() for l in open(qt) if l.strip() and not l.startswith("#")]
        notes = [l.strip("# \n") for l in open(qt) if l.startswith("#")]
        result[f"qtable {name}"] = dict(layers=len(steps), lines=steps, notes=notes)
    return result


GREEDY_HEADER, PREFIX_HEADER = "greedy, <= 5 FP32 layers", "prefix: FP32 tensors for 0.99"
BEST_HEADER, BEST_FIGURES_HEADER = "best (chosen on held-back calibration inputs)", "best: test mean (min)"


def best_column(cells, keys, headers):
    """(header, cell) of the column with the highest mean cosine on the held-back calibration inputs."""
    scored = [(cells[k]["held"], h, cells[k]) for k, h in zip(keys, headers) if k in cells]
    if not scored:
        return None
    _, header, cell = max(scored, key=lambda t: t[0])
    return header, cell


def read_doc():
    """docs/quantization.md and the span of its ablation block (from BEGIN to the end of END)."""
    doc = open(DOC).read()
    if BEGIN not in doc or END not in doc:
        fail(f"{DOC}: the markers {BEGIN} / {END} are missing")
    return doc, doc.index(BEGIN), doc.index(END) + len(END)


def parse_docs_table(headers):
    """The table docs/quantization.md holds now: per model label its row (the
    line and each cell by header) and its note lines."""
    doc, begin, end = read_doc()
    block = doc[begin:end].splitlines()
    table = [l for l in block if l.startswith("| ")]
    if not table:
        return {}, {}
    old_headers = [c.strip() for c in table[0].strip("|").split(" | ")][1:]
    rows, notes = {}, {}
    for line in table[1:]:
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) != len(old_headers) + 1:
            fail(f"{DOC}: a row of the ablation table does not have {len(old_headers) + 1} cells: {line[:60]}")
        rows[cells[0]] = dict(zip(old_headers, cells[1:]), line=line)
    for line in block:
        for label in rows:
            if line.startswith(f"- {label}: "):
                notes.setdefault(label, []).append(line)
    return rows, notes


def old_minimums(note_lines, headers):
    """Per column header, the minimum an earlier run's note gives ("h 0.9478/0.889")."""
    text = " ".join(n for n in note_lines if "minimum over the test inputs:" in n)
    found = {}
    for h in headers:
        hit = re.search(r"(?:: |, )" + re.escape(h) + r" ([0-9.]+(?:/[0-9.]+(?: px)?)?(?: \[[a-z]+\])?)[,.]", text)
        if hit:
            found[h] = hit.group(1).rstrip(".")
    return found


def old_methods(note_lines):
    """The default and all-combined methods an earlier run's note names."""
    for n in note_lines:
        hit = re.search(r"Default calibration wrote `([^`]*)`, all combined's `([^`]*)`", n)
        if hit:
            return hit.group(1), hit.group(2)
    return ()


class RunMarks:
    """Each figure of the block is written with a placeholder of the run that computed it; once every cell is
    known, the placeholders become the runs' keys (none when one run made them all)."""

    def __init__(self, this_run, old_block):
        self.this_run = this_run
        old = [(key, stamp) for table, key, stamp in provenance.parse(old_block) if table == "int8-ablation"]
        self.old = dict(old)
        self.stamps = []

    def _token(self, stamp):
        self.stamps.append(stamp)
        return f"\0{len(self.stamps) - 1}\0"

    def new(self, text):
        return text + self._token(self.this_run)

    def kept(self, text):
        """An earlier run's figure, marked with that run's key (or its table's single stamp)."""
        if not provenance.has_figure(text):
            return text
        mark = provenance.MARK.search(text)
        stamp = self.old.get(mark.group(1) if mark else "")
        return provenance.strip_mark(text) + self._token(stamp)

    def resolve(self, block):
        """The block with each figure's key, and the provenance lines. A figure kept from a table without
        provenance gets a key whose line says so (provenance.py stale reports it until it is recomputed)."""
        unknown = provenance.Stamp("", "", "")
        stamps = [unknown if s is None else s for s in self.stamps]
        keys = provenance.Keys(stamps)
        block = re.sub("\0([0-9]+)\0", lambda m: keys.mark(stamps[int(m.group(1))]), block)
        lines = [line if stamp != unknown else
                 line.split(":")[0] + ": unknown (figures kept from a table made before provenance stamps)"
                 for stamp, line in zip(keys.order, keys.lines("int8-ablation"))]
        return block, lines


def task_figure(model, cell, worst=False, sep=" / "):
    """The task metric after the cosine: the detector's IoU (worst: the smallest), a landmark model's
    distance in pixels (worst: the largest); nothing for the other models."""
    if model.get("iou"):
        return f"{sep}{cell['iou_min' if worst else 'iou']:.3f}"
    if model.get("landmarks"):
        return f"{sep}{cell['px_max' if worst else 'px']:.2f} px"
    return ""


def fmt(cell, model, with_min=False):
    if cell is None:
        return "–"
    s = f"{cell['cos']:.4f}" + task_figure(model, cell)
    if not with_min:
        return s
    return s + f" ({cell['cos_min']:.4f}" + task_figure(model, cell, worst=True) + ")"


def render_block(results, a, stamp):
    """The text between the markers: the table, its caption, the notes (with a.merge, what docs/quantization.md
    holds fills in the models and columns `results` lack, each such figure marked with its run) and the
    provenance lines."""
    doc, begin, end = read_doc()
    marks = RunMarks(stamp, doc[begin:end] if a.merge else "")
    headers = [h for _, h, _ in THRESHOLD_COLUMNS] + [h for _, h, *_ in LEVER_COLUMNS]
    ckeys = [k for k, *_ in THRESHOLD_COLUMNS] + [k for k, *_ in LEVER_COLUMNS]
    lines = [BEGIN,
             f"INT8 (Tpu interpreter = bmodel) against the Top interpreter's fp32, mean over {a.test} test inputs "
             f"after calibration on {a.cali} others (cosine of the outputs, the smallest over a model's outputs; "
             f"PP-OCR: cosine / IoU of the binary maps at 0.3; landmark models: cosine / mean distance of the (x, y) "
             f"landmarks from fp32's in input pixels, and in the minimum notes the worst input's, the largest). `/usr/bin/python3 perf/int8_ablation.py --tpuc "
             f"build/tools/tpuc/tpuc --cali {a.cali} --test {a.test} --tune-samples {a.tune_samples}`. Threshold "
             f"columns: signed int8 everywhere (`--no-uint8`); lever columns: one lever on the default calibration; "
             f"all combined: every lever (UINT8, equalization, bias correction, rounding, per-channel weights, int16 "
             f"pointwise), calibrated with the lever flags (the default method's max check scores KL and max with "
             f"every lever); hand-off + bias correction, KL+tune 3 on it: per-channel weights, int16 pointwise, bias "
             f"correction (8 samples) and UINT8 on `tpuc calibrate --calibration-method kl --tune 3 --tune-samples 1 "
             f"--per-channel-weights --int16-pointwise --bias-correction` (each tensor's 3 candidate thresholds "
             f"scored on that lowering); {AUTO_HEADER}: `tpuc calibrate` with no lever flag (`--int8-recipe auto`: the "
             f"levers chosen greedily on the last quarter of the calibration inputs, at most 4, within the default "
             f"budget, docs/quantization.md \"The INT8 recipe\"), deployed with the table's recipe. "
             f"Mixed precision on the all-combined setting ({a.qtable_samples} calibration samples, min cosine): "
             f"`tpuc qtable --expected-cos 0.99 --max-float-layers 5` (greedy: each tensor alone in FP32, ranked "
             f"on one sample, added best first) and `--rank prefix` (the first k tensors, k by bisection).",
             "",
             f"{BEST_HEADER}: the column with the highest mean cosine on {a.select} calibration inputs held back "
             f"from calibration (never the test inputs; among the columns this run scored, auto left out: it is "
             f"the candidate the best is compared with); {BEST_FIGURES_HEADER}: "
             "its mean and minimum over the test inputs.",
             "",
             "| model | " + " | ".join(headers) + f" | {GREEDY_HEADER} | {PREFIX_HEADER} | {BEST_HEADER} | "
             f"{BEST_FIGURES_HEADER} |",
             "|---" * (len(headers) + 5) + "|"]
    old_rows, old_notes = parse_docs_table(headers) if a.merge else ({}, {})
    notes = []
    by_label = {r["model"]["label"]: r for r in results}
    for m in MODELS.values():
        label = m["label"]
        r = by_label.get(label)
        if r is None:
            if label in old_rows:  # not run now: the docs' row and notes stay, each cell with its run
                old = old_rows[label]
                lines.append(f"| {label} | " + " | ".join(marks.kept(old.get(h, "–")) for h in
                                                          headers + [GREEDY_HEADER, PREFIX_HEADER, BEST_HEADER,
                                                                     BEST_FIGURES_HEADER]) + " |")
                notes += old_notes.get(label, [])
            continue
        if "blocked" in r:
            lines.append(f"| {m['label']} | " + " | ".join("–" for _ in headers) + " | – | – | – | – |")
            notes.append(f"- {m['label']}: not measured: {r['blocked']}")
            continue
        old = old_rows.get(label, {})
        old_note = old_notes.get(label, [])

        def qcell(q):
            if not q:
                return "not run"
            reached = not any("not reached" in n for n in q["notes"])
            # The cosine after the last FP32 addition, or all-int8's when none was kept.
            last = [l.split("cosine")[1].split()[0] for l in q["lines"] if "cosine" in l] or \
                [n.split("cosine")[1].split()[0].rstrip(";") for n in q["notes"] if n.startswith("all int8: cosine")]
            return (f"{q['layers']}" + (f" (cosine {last[-1]})" if last else "") +
                    ("" if reached else ", 0.99 not reached"))
        def cell(k, h):
            c = r["cells"].get(k)
            return marks.new(fmt(c, m)) if c else marks.kept(old[h]) if h in old else "–"

        def qtable_cell(name, h):
            q = r.get(f"qtable {name}")
            return marks.new(qcell(q)) if q or h not in old else marks.kept(old[h])
        best = best_column(r["cells"], [k for k in ckeys if k != "auto"], [h for h in headers if h != AUTO_HEADER])
        # With no column of this run to choose from, a merged table keeps its earlier choice.
        best_cells = f"{marks.new(best[0])} | {marks.new(fmt(best[1], m, with_min=True))}" if best \
            else " | ".join(marks.kept(old[h]) if h in old else "–" for h in (BEST_HEADER, BEST_FIGURES_HEADER))
        lines.append(f"| {m['label']} | " + " | ".join(cell(k, h) for k, h in zip(ckeys, headers)) +
                     f" | {qtable_cell('greedy', GREEDY_HEADER)} | {qtable_cell('prefix', PREFIX_HEADER)} | "
                     f"{best_cells} |")
        old_mins = old_minimums(old_note, headers)
        mins = ", ".join(f"{h} " + (marks.new(f"{r['cells'][k]['cos_min']:.4f}" +
                                              task_figure(m, r['cells'][k], worst=True, sep="/"))
                                    if k in r["cells"] else marks.kept(old_mins[h]))
                         for h, k in zip(headers, ckeys) if k in r["cells"] or h in old_mins)
        methods = old_methods(old_note)
        default_method = r["default_method"] if r["default_method"] != "?" or not methods else methods[0]
        all_method = r["all_method"] if r["all_method"] != "?" or not methods else methods[1]
        notes.append(f"- {m['label']}: minimum over the test inputs: {mins}. Default calibration wrote "
                     f"`{default_method}`, all combined's `{all_method}`.")
        q = r.get("qtable greedy")
        if q:
            steps = ", ".join(f"`{l.split()[0]}` {l.split('cosine')[1].split()[0]}" for l in q["lines"] if "cosine" in l)
            notes.append(f"- {m['label']}: greedy qtable: " + "; ".join(n for n in q["notes"] if "all int8" in n) +
                         (f"; cosine after each FP32 addition: {steps}" if steps else ""))
        else:
            notes += [n for n in old_note if n.startswith(f"- {label}: greedy qtable:")]
        # Wall times of this run, and an earlier run's of the jobs not run now.
        slow = [f"{k} {v:.0f} s" for k, v in r["times"].items() if v > 20]
        timed = set(r["times"])
        for n in old_note:
            if n.startswith(f"- {label}: wall time (2 shared cores): "):
                slow += [t for t in n.split(": ", 2)[2].split(", ") if t.rsplit(" ", 2)[0] not in timed]
        if slow:
            notes.append(f"- {m['label']}: wall time (2 shared cores): " + ", ".join(slow))
    block, stamp_lines = marks.resolve("\n".join(lines + [""] + notes))
    return "\n".join([block, ""] + stamp_lines + [END])


def check_committed(block):
    """Exit status of --check: 1 when a cell this run computed differs from the committed one (the search and
    best columns depend on which columns a run scores: not compared)."""
    doc, begin, end = read_doc()
    lines = provenance.compare_tables("docs/quantization.md", "int8-ablation", doc[begin:end], block,
                                      ignore=(GREEDY_HEADER, PREFIX_HEADER, BEST_HEADER, BEST_FIGURES_HEADER))
    for line in lines:
        print(line)
    print("int8_ablation --check: " + ("differs from" if lines else "reproduces") + " the committed table")
    return 1 if lines else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tpuc", required=True)
    p.add_argument("--tpuc-opt", help="default: tpuc-opt beside --tpuc's build tree")
    p.add_argument("--work", default=os.path.join(ROOT, "build", "int8_ablation"))
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--cali", type=int, default=32)
    p.add_argument("--test", type=int, default=6)
    p.add_argument("--select", type=int, default=3,
                   help="held-back calibration inputs the best column is chosen on (not calibrated on, not tested)")
    p.add_argument("--tune-samples", type=int, default=2)
    p.add_argument("--qtable-samples", type=int, default=2)
    p.add_argument("--qtable", default=None,
                   help="mixed-precision searches to run: greedy (--max-float-layers 5), prefix, or none (default: "
                        "greedy,prefix; with --columns only those named here)")
    p.add_argument("--columns", default="", help="score only these columns (comma-separated keys; split a run "
                                                   "over several processes, then run again with --reuse)")
    p.add_argument("--no-docs", action="store_true", help="print the table only")
    p.add_argument("--check", action="store_true",
                   help="print only, and exit 1 when a computed cell differs from docs/quantization.md's")
    p.add_argument("--reuse", action="store_true",
                   help="keep the inputs, tables, bmodels and outputs already in --work (after an interrupted run)")
    p.add_argument("--merge", action="store_true",
                   help="keep what docs/quantization.md's table already has (an earlier run of this script) for the "
                        "models and columns this run does not compute")
    a = p.parse_args()
    a.qtable_given = a.qtable is not None
    a.qtable = [q for q in (a.qtable or "greedy,prefix").split(",") if q and q != "none"]
    a.columns = [c for c in a.columns.split(",") if c]
    known = [k for k, *_ in THRESHOLD_COLUMNS] + [k for k, *_ in LEVER_COLUMNS]
    if any(c not in known for c in a.columns):
        fail(f"--columns: known columns are {', '.join(known)}")
    if any(q not in ("greedy", "prefix") for q in a.qtable):
        fail("--qtable takes greedy, prefix or none")
    global REUSE
    REUSE = a.reuse
    tpuc = os.path.abspath(a.tpuc)
    tpuc_opt = os.path.abspath(a.tpuc_opt or os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(tpuc))),
                                                          "compiler", "tools", "tpuc-opt", "tpuc-opt"))
    for exe in (tpuc, tpuc_opt):
        if not os.access(exe, os.X_OK):
            fail(f"{exe}: not an executable")
    if min(a.cali, a.test, a.select, a.tune_samples, a.qtable_samples) < 1:
        fail("--cali, --test, --select, --tune-samples and --qtable-samples must be >= 1")
    keys = a.models.split(",")
    for k in keys:
        if k not in MODELS:
            fail(f"--models: unknown model '{k}' (known: {', '.join(MODELS)})")
    a.no_docs = a.no_docs or a.check
    stamp = provenance.stamp_or_exit("int8-ablation", require_clean=not a.no_docs)
    results = [ablate(k, MODELS[k], a, tpuc, tpuc_opt) for k in keys]

    block = render_block(results, a, stamp)
    print(block)
    if a.check:
        sys.exit(check_committed(block))
    if a.no_docs:
        return
    provenance.confirm_or_exit(stamp, "int8-ablation")
    doc, begin, end = read_doc()
    doc = doc[:begin] + block + doc[end:]
    with open(DOC, "w") as f:
        f.write(doc)


if __name__ == "__main__":
    main()
