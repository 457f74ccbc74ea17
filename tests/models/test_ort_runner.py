#!/usr/bin/python3
"""Tests of the onnxruntime reference runner tools/ort/run.js on small ONNX models
built here with onnx.helper: numeric results, .npz reading/writing, --all-outputs,
--bench, and one-line errors with exit code 2 for every kind of bad input.
Exit 77 (skipped) when node or tools/ort/node_modules is absent."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RUNNER = os.path.join(ROOT, "tools", "ort", "run.js")
sys.path.insert(0, os.path.join(ROOT, "models"))
import inputs  # noqa: E402

try:
    import onnx
    from onnx import TensorProto, helper
except ImportError:
    onnx = None


def add_relu_model(path):
    """y = Relu(x + b), with the sum kept as the named intermediate "sum"; also an
    int64 output "shape" (Shape of x) to test the float32 conversion."""
    b = helper.make_tensor("b", TensorProto.FLOAT, [1, 3], [0.5, -1.0, 2.0])
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "b"], ["sum"], name="add"),
         helper.make_node("Relu", ["sum"], ["y"], name="relu"),
         helper.make_node("Shape", ["x"], ["shape"], name="shape")],
        "add_relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)


class OrtRunnerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ort_runner_test_")
        cls.model = cls.path("m.onnx")
        add_relu_model(cls.model)
        cls.x = np.array([[1.0, 2.0, -3.0], [-0.25, 0.75, -5.0]], np.float32)
        inputs.save_npz(cls.path("in.npz"), {"x": cls.x})

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    @classmethod
    def path(cls, name):
        return os.path.join(cls.tmp, name)

    def run_node(self, *args):
        return subprocess.run(["node", RUNNER, *args], capture_output=True, text=True)

    def expect_error(self, args, *fragments):
        r = self.run_node(*args)
        self.assertEqual(r.returncode, 2, r.stderr)
        err = r.stderr.rstrip("\n")
        self.assertNotIn("\n", err, "error must be one line")
        self.assertTrue(err.startswith("ort-run: error: "), err)
        for f in fragments:
            self.assertIn(f, err)

    def test_outputs_match_numpy(self):
        out = self.path("out.npz")
        r = self.run_node(self.model, self.path("in.npz"), out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with np.load(out) as z:
            self.assertEqual(z.files, ["y", "shape"])
            np.testing.assert_array_equal(z["y"], np.maximum(self.x + np.array([0.5, -1.0, 2.0], np.float32), 0))
            self.assertEqual(z["y"].dtype, np.float32)
            np.testing.assert_array_equal(z["shape"], np.array([2, 3], np.float32))
        with zipfile.ZipFile(out) as zf:  # stored, uncompressed
            self.assertTrue(all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist()))

    def test_output_is_deterministic(self):
        a, b = self.path("d1.npz"), self.path("d2.npz")
        for o in (a, b):
            self.assertEqual(self.run_node(self.model, self.path("in.npz"), o, "--threads", "2").returncode, 0)
        self.assertEqual(Path(a).read_bytes(), Path(b).read_bytes())

    def test_compressed_input(self):
        np.savez_compressed(self.path("inc.npz"), x=self.x)
        out = self.path("outc.npz")
        self.assertEqual(self.run_node(self.model, self.path("inc.npz"), out).returncode, 0)
        with np.load(out) as z:
            np.testing.assert_array_equal(z["y"], np.maximum(self.x + np.array([0.5, -1.0, 2.0], np.float32), 0))

    def test_all_outputs_include_intermediates(self):
        out = self.path("all.npz")
        r = self.run_node(self.model, self.path("in.npz"), out, "--all-outputs")
        self.assertEqual(r.returncode, 0, r.stderr)
        with np.load(out) as z:
            self.assertEqual(sorted(z.files), ["shape", "sum", "y"])
            np.testing.assert_array_equal(z["sum"], self.x + np.array([0.5, -1.0, 2.0], np.float32))

    def test_bench_prints_mean_time(self):
        r = self.run_node(self.model, self.path("in.npz"), self.path("b.npz"), "--bench", "3")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"bench: 3 runs, mean [0-9.]+ ms per inference, 1 thread\(s\)")

    def test_wrong_dtype(self):
        np.savez(self.path("f64.npz"), x=self.x.astype(np.float64))
        self.expect_error([self.model, self.path("f64.npz"), self.path("o.npz")], "input 'x' is float64", "float32")

    def test_wrong_shape(self):
        np.savez(self.path("shape.npz"), x=np.zeros((3, 2), np.float32))
        self.expect_error([self.model, self.path("shape.npz"), self.path("o.npz")], "shape [3,2]", "[2,3]")

    def test_missing_input(self):
        np.savez(self.path("none.npz"), z=np.zeros((2, 3), np.float32))
        self.expect_error([self.model, self.path("none.npz"), self.path("o.npz")], "'z' is not a model input")
        np.savez(self.path("empty.npz"))
        self.expect_error([self.model, self.path("empty.npz"), self.path("o.npz")], "no array for model input 'x'")

    def test_truncated_and_corrupt_npz(self):
        data = Path(self.path("in.npz")).read_bytes()
        Path(self.path("trunc.npz")).write_bytes(data[: len(data) // 2])
        self.expect_error([self.model, self.path("trunc.npz"), self.path("o.npz")], "trunc.npz")
        bad = bytearray(data)
        bad[100] ^= 0xFF  # inside the array data: CRC must catch it
        Path(self.path("crc.npz")).write_bytes(bytes(bad))
        self.expect_error([self.model, self.path("crc.npz"), self.path("o.npz")], "CRC")
        Path(self.path("text.npz")).write_text("not a zip")
        self.expect_error([self.model, self.path("text.npz"), self.path("o.npz")], "not an .npz file")

    def test_fortran_order_rejected(self):
        np.savez(self.path("fortran.npz"), x=np.asfortranarray(self.x))
        self.expect_error([self.model, self.path("fortran.npz"), self.path("o.npz")], "Fortran-order")

    def test_corrupt_model(self):
        data = Path(self.model).read_bytes()
        Path(self.path("trunc.onnx")).write_bytes(data[: len(data) // 2])
        self.expect_error([self.path("trunc.onnx"), self.path("in.npz"), self.path("o.npz")], "trunc.onnx")
        self.expect_error([self.path("trunc.onnx"), self.path("in.npz"), self.path("o.npz"), "--all-outputs"],
                          "trunc.onnx")

    def test_missing_files_and_bad_flags(self):
        self.expect_error([self.path("nope.onnx"), self.path("in.npz"), self.path("o.npz")], "cannot read model")
        self.expect_error([self.model, self.path("nope.npz"), self.path("o.npz")], "cannot read input")
        self.expect_error([self.model, self.path("in.npz"), os.path.join(self.tmp, "no", "dir", "o.npz")],
                          "cannot write output")
        self.expect_error([self.model, self.path("in.npz")], "usage")
        self.expect_error([self.model, self.path("in.npz"), self.path("o.npz"), "--threads", "x"], "--threads")
        self.expect_error([self.model, self.path("in.npz"), self.path("o.npz"), "--frobnicate"], "unknown option")


if __name__ == "__main__":
    if shutil.which("node") is None or not os.path.isdir(os.path.join(ROOT, "tools", "ort", "node_modules", "onnxruntime-node")):
        print("test_ort_runner: SKIPPED: node or tools/ort/node_modules is absent (scripts/install-deps.sh installs them)")
        sys.exit(77)
    if onnx is None:
        print("test_ort_runner: SKIPPED: python3-onnx is absent (scripts/install-deps.sh installs it)")
        sys.exit(77)
    unittest.main(verbosity=2)
