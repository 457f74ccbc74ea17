#!/usr/bin/python3
"""tpusim bindings: the conv_add program (assembled by tpuc asm) runs on func
and sim with numpy arrays; sim equals func bit for bit and equals tpuc sim's
output file; a slower DDR makes the run longer; stats and per-layer times are
there; bad inputs raise RuntimeError with the runtime's message. A BM1684X
bmodel runs through the same Model, its config over the BM1684X's preset.
Usage: test_tpusim.py <tpuc> <source dir> <work dir>   (PYTHONPATH has tpusim)"""
import os
import subprocess
import sys
import unittest

import numpy as np

import tpusim

TPUC, SRC, WORK = sys.argv[1:4]
del sys.argv[1:4]


class TpusimTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)
        cls.bmodel = os.path.join(WORK, "conv_add.bmodel")
        subprocess.run([TPUC, "asm", os.path.join(SRC, "tests/data/asm/conv_add.s"), "-o", cls.bmodel], check=True)
        rng = np.random.default_rng(5)
        cls.inputs = {"x": rng.standard_normal((1, 8, 10, 10)).astype(np.float32),
                      "y": rng.standard_normal((1, 16, 8, 8)).astype(np.float32)}

    def test_func_and_sim_agree_with_tpuc_sim(self):
        func = tpusim.Model(self.bmodel, backend="func")
        self.assertEqual(func.net, "conv_add")
        self.assertEqual([t["name"] for t in func.inputs], ["x", "y"])
        self.assertEqual(func.outputs[0]["shape"], [1, 16, 8, 8])
        self.assertEqual([[t["shape"] for t in stage] for stage in func.stages], [[[1, 8, 10, 10], [1, 16, 8, 8]]])
        out_f, rep_f = func.run(self.inputs)
        self.assertFalse(rep_f.timed)
        self.assertEqual((rep_f.cpu_subnets, rep_f.host_seconds), (0, 0.0))
        sim = tpusim.Model(self.bmodel, backend="sim")
        out_s, rep_s = sim.run(self.inputs, trace=True)
        self.assertEqual(out_f["z"].dtype, np.float32)
        np.testing.assert_array_equal(out_f["z"], out_s["z"])
        # The same run through the command line gives the same bytes.
        np.savez(os.path.join(WORK, "in.npz"), **self.inputs)
        subprocess.run([TPUC, "sim", self.bmodel, "--input", os.path.join(WORK, "in.npz"),
                        "-o", os.path.join(WORK, "out.npz"), "--stats", os.path.join(WORK, "stats.json")],
                       check=True, capture_output=True)
        np.testing.assert_array_equal(np.load(os.path.join(WORK, "out.npz"))["z"], out_s["z"])
        with open(os.path.join(WORK, "stats.json")) as f:
            import json
            self.assertEqual(json.load(f)["total_cycles"], rep_s.total_cycles)
        # Stats, trace and per-layer times.
        self.assertTrue(rep_s.timed)
        self.assertGreater(rep_s.time_us, 0)
        self.assertEqual(rep_s.tiu_commands, 2)
        self.assertEqual(rep_s.gdma_commands, 5)
        self.assertEqual([l["name"] for l in rep_s.stats["layers"]], ["conv1", "add1"])
        self.assertEqual([l["name"] for l in rep_s.layers], ["conv1", "add1"])
        self.assertTrue(any(e.get("cat") == "tiu" for e in rep_s.trace["traceEvents"]))
        # A single array for a one-input net is refused here (two inputs).
        with self.assertRaises(ValueError):
            sim.run(self.inputs["x"])

    def test_config_changes_timing_not_data(self):
        fast, rep_fast = tpusim.Model(self.bmodel, config=tpusim.config(ddrBandwidthGBs=64)).run(self.inputs)
        slow, rep_slow = tpusim.Model(self.bmodel, config=tpusim.config(ddrBandwidthGBs=4)).run(self.inputs)
        np.testing.assert_array_equal(fast["z"], slow["z"])
        self.assertGreater(rep_slow.total_cycles, rep_fast.total_cycles)
        self.assertEqual(tpusim.config(npuLanes=32)["npuLanes"], 32)

    def test_errors_are_runtime_errors_with_the_message(self):
        with self.assertRaisesRegex(RuntimeError, "npuLane"):
            tpusim.config(npuLane=32)
        with self.assertRaisesRegex(RuntimeError, "missing.bmodel"):
            tpusim.Model(os.path.join(WORK, "missing.bmodel"))
        model = tpusim.Model(self.bmodel, backend="func")
        with self.assertRaisesRegex(RuntimeError, "input 'x' of net 'conv_add': shape 1x8x10x9 given"):
            model.run({"x": np.zeros((1, 8, 10, 9), np.float32), "y": self.inputs["y"]})
        with self.assertRaisesRegex(RuntimeError, "input 'y' of net 'conv_add' is missing"):
            model.run({"x": self.inputs["x"]})
        with self.assertRaisesRegex(RuntimeError, "backend"):
            tpusim.Model(self.bmodel, backend="gpu")
        with self.assertRaisesRegex(RuntimeError, "tpuc import: error: .*nothing.onnx"):
            tpusim.import_onnx(os.path.join(WORK, "nothing.onnx"), os.path.join(WORK, "x.top.mlir"))


class TpusimBm1684xTest(unittest.TestCase):
    """A BM1684X bmodel (the lit tests' conv/pool/add/gemm net) through the same Model: func and sim give the
    same bytes as tpuc run, sim is timed at the BM1684X's clock, a config goes over the BM1684X's preset."""

    @classmethod
    def setUpClass(cls):
        inputs = os.path.join(SRC, "tests/lit/compiler/tpu/Inputs")
        cls.work = os.path.join(WORK, "bm1684x")
        os.makedirs(cls.work, exist_ok=True)
        top = os.path.join(cls.work, "net.top.mlir")
        with open(os.path.join(inputs, "net.top.mlir")) as f, open(top, "w") as g:
            g.write(f.read())
        subprocess.run(["/usr/bin/python3", os.path.join(inputs, "make_net.py"), cls.work], check=True)
        os.environ["TPUC"] = TPUC
        cls.bmodel = tpusim.deploy(top, os.path.join(cls.work, "net.bmodel"), chip="bm1684x")
        cls.inputs = dict(np.load(os.path.join(cls.work, "in.npz")))

    def test_func_and_sim_equal_tpuc_run(self):
        func = tpusim.Model(self.bmodel, backend="func")
        self.assertEqual(func.chip, "bm1684x")
        out_f, rep_f = func.run(self.inputs)
        self.assertFalse(rep_f.timed)
        out_s, rep_s = tpusim.Model(self.bmodel, backend="sim").run(self.inputs, trace=True)
        self.assertEqual(sorted(out_f), sorted(out_s))
        for k in out_f:
            np.testing.assert_array_equal(out_f[k], out_s[k])
        self.assertTrue(rep_s.timed)
        self.assertEqual(rep_s.clock_mhz, 1000)
        self.assertGreater(rep_s.time_us, 0)
        self.assertIsNotNone(rep_s.trace)
        subprocess.run([TPUC, "run", self.bmodel, "--backend", "func", "--input", os.path.join(self.work, "in.npz"),
                        "-o", os.path.join(self.work, "out.npz")], check=True, capture_output=True)
        ref = np.load(os.path.join(self.work, "out.npz"))
        for k in ref.files:
            np.testing.assert_array_equal(ref[k], out_f[k])

    def test_config_goes_over_the_preset(self):
        cfg = tpusim.config(chip="bm1684x", ddrBandwidthGBs=4)
        self.assertEqual((cfg["euBytes"], cfg["clockMhz"], cfg["ddrBandwidthGBs"]), (64, 1000, 4))
        slow = tpusim.Model(self.bmodel, config={"ddrBandwidthGBs": 4}).run(self.inputs)[1]
        fast = tpusim.Model(self.bmodel).run(self.inputs)[1]
        self.assertGreater(slow.total_cycles, fast.total_cycles)
        with self.assertRaisesRegex(RuntimeError, "unknown hardware parameter 'lanes'"):
            tpusim.Model(self.bmodel, config={"lanes": 2})
        with self.assertRaisesRegex(RuntimeError, "func or sim backend"):
            tpusim.Model(self.bmodel, backend="device").run(self.inputs)


if __name__ == "__main__":
    unittest.main(verbosity=2)
