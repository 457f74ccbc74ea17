# lit configuration: every .mlir/.s/.test file under tests/lit is a test.
import os
import lit.formats

config.name = "bm1684sim"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".mlir", ".s", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tpu_obj_root, "tests", "lit")
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in"]

tool_dirs = [
    os.path.join(config.tpu_obj_root, "tools", "tpuc"),
    os.path.join(config.tpu_obj_root, "compiler", "tools", "tpuc-opt"),
    os.path.join(config.tpu_obj_root, "perf"),
    os.path.join(config.tpu_obj_root, "runtime", "examples"),
    config.filecheck_dir,
]
config.environment["PATH"] = os.pathsep.join(tool_dirs + [config.environment.get("PATH", os.environ["PATH"])])
config.substitutions.append(("%data", os.path.join(config.tpu_src_root, "tests", "data")))

# onnxruntime reference (tools/ort, installed by scripts/models.sh): tests that
# compare with it say REQUIRES: onnxruntime.
import shutil
if shutil.which("node") and os.path.isdir(os.path.join(config.tpu_src_root, "tools", "ort", "node_modules",
                                                       "onnxruntime-node")):
    config.available_features.add("onnxruntime")
