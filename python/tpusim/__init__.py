"""tpusim: the BM1684 and BM1684X simulators from Python.

Run compiled models (the runtime library, in process):
    cfg = tpusim.config(ddrBandwidthGBs=16)          # HwConfig keys, docs/timing.md
    model = tpusim.Model("resnet18.bmodel", backend="sim", config=cfg)
    outputs, report = model.run({"input": x})        # numpy in, numpy out
    report.time_us, report.tiu_utilization, report.stats["layers"]
A BM1684X bmodel (tpuc deploy --chip bm1684x) runs the same way; model.chip says which chip, and its
config starts from the BM1684X's preset: tpuc.config(chip="bm1684x", ddrBandwidthGBs=34).

Compile models (the same tpuc import / calibrate / deploy that the command
line runs; paths as in docs/exploration.md):
    top = tpusim.import_onnx("resnet18.onnx", "work/resnet18.top.mlir", input_shapes=[[1, 3, 224, 224]])
    bmodel = tpusim.deploy(top, "work/resnet18.bmodel", quantize="F32", layer_group=False)
"""
import json
import os
import subprocess

import numpy as np

from . import _tpusim
from ._paths import TPUC as _BUILT_TPUC

__all__ = ["config", "Model", "Report", "import_onnx", "calibrate", "deploy", "compile_onnx", "tpuc_path"]


def tpuc_path():
    """The tpuc binary the compile helpers run: $TPUC, else the one built with this module."""
    return os.environ.get("TPUC", _BUILT_TPUC)


def config(base=None, chip="bm1684", **overrides):
    """A validated HwConfig as a dict: the chip's preset (BM1684 defaults; or `base`, a dict or JSON file)
    plus overrides."""
    if isinstance(base, str):
        with open(base) as f:
            cfg = json.load(f)
    else:
        cfg = dict(base or {})
    cfg.update(overrides)
    return json.loads(_tpusim.check_config_json(json.dumps(cfg), chip))


class Report:
    """What one run did: backend, commands, wall time and, on sim, cycles, utilization, per-layer times and stats."""

    def __init__(self, raw):
        self._raw = raw
        stats = raw.get("stats_json") or ""
        self.stats = json.loads(stats) if stats else None
        trace = raw.get("trace_json") or ""
        self.trace = json.loads(trace) if trace else None

    def __getattr__(self, name):
        try:
            return self._raw[name]
        except KeyError:
            raise AttributeError(name) from None

    def as_dict(self):
        return {k: v for k, v in self._raw.items() if k not in ("stats_json", "trace_json")}


class Model:
    """A bmodel loaded into its own simulated chip (the bmodel's: BM1684 or BM1684X)."""

    def __init__(self, bmodel, backend="sim", config=None, net=None):
        cfg = "" if config is None else json.dumps(config)
        self._rt = _tpusim.Runtime(backend, cfg)
        self._rt.load(os.fspath(bmodel))
        names = self._rt.net_names()
        self.net = net if net is not None else names[0]
        desc = self._rt.describe(self.net)
        self.inputs = desc["inputs"]
        self.outputs = desc["outputs"]
        # The input tensors of each stage (one stage unless tpuc combine joined several shapes); run() picks
        # the stage whose input shapes the arrays have.
        self.stages = desc["stages"]
        self.backend = self._rt.backend
        self.chip = self._rt.chip

    def run(self, inputs, trace=False):
        """inputs: {name: array} (float32, or the tensor's own dtype), or one array for a one-input net.
        Returns ({output name: float32 array}, Report)."""
        if not isinstance(inputs, dict):
            if len(self.inputs) != 1:
                raise ValueError("net '%s' has %d inputs: pass a dict" % (self.net, len(self.inputs)))
            inputs = {self.inputs[0]["name"]: inputs}
        arrays = {k: np.ascontiguousarray(v) for k, v in inputs.items()}
        outputs, raw = self._rt.run(self.net, arrays, trace)
        return outputs, Report(raw)


def _tpuc(*args):
    proc = subprocess.run([tpuc_path(), *map(str, args)], capture_output=True, text=True)
    if proc.returncode != 0:
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        raise RuntimeError(lines[-1] if lines else "tpuc %s failed with exit code %d" % (args[0], proc.returncode))
    return proc


def import_onnx(onnx, output, input_shapes=None):
    """ONNX -> Top dialect (.mlir + weights beside it). Returns the .mlir path."""
    args = ["import", onnx, "-o", output]
    if input_shapes is not None:
        args += ["--input-shapes", json.dumps(input_shapes).replace(" ", "")]
    _tpuc(*args)
    return output


def calibrate(top, dataset, output, input_num=None):
    """Calibration table for INT8 from a directory of .npz samples."""
    args = ["calibrate", top, "--dataset", dataset, "-o", output]
    if input_num is not None:
        args += ["--input-num", input_num]
    _tpuc(*args)
    return output


def deploy(top, output, quantize="F32", calibration_table=None, layer_group=True, chip=None):
    """Top module -> bmodel (for `chip`, "bm1684" unless named). Returns the bmodel path."""
    args = ["deploy", top, "--quantize", quantize, "-o", output]
    if chip:
        args += ["--chip", chip]
    if calibration_table:
        args += ["--calibration-table", calibration_table]
    if not layer_group:
        args.append("--no-layer-group")
    _tpuc(*args)
    return output


def compile_onnx(onnx, workdir, quantize="F32", layer_group=True, input_shapes=None, calibration=None):
    """import + (calibrate) + deploy into `workdir`; returns the bmodel path."""
    os.makedirs(workdir, exist_ok=True)
    stem = os.path.join(workdir, os.path.splitext(os.path.basename(onnx))[0])
    top = import_onnx(onnx, stem + ".top.mlir", input_shapes)
    table = None
    if quantize == "INT8":
        if calibration is None:
            raise ValueError("INT8 needs a calibration directory of .npz samples")
        table = calibrate(top, calibration, stem + ".cali")
    tag = "%s_%s" % (quantize, "lg" if layer_group else "nolg")
    return deploy(top, "%s_%s.bmodel" % (stem, tag), quantize, table, layer_group)
