"""scripts/check-layers.py on small temporary trees: each rule of
docs/architecture.md, broken once, makes the lint fail and name the file and
line; the same tree without the breaking include passes."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
LINT = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(HERE, "../../scripts/check-layers.py")

# A tree that obeys every rule: each room includes only rooms below it.
GOOD = {
    "support/Status.h": "#include <string>\n",
    "isa/HwConfig.h": '#include "support/Status.h"\n',
    "arith/IntArith.h": '#include "isa/Opcodes.h"\n',
    "memory/Memory.h": '#include "arith/IntArith.h"\n',
    "timing/TiuTiming.h": '#include "memory/GdmaAccess.h"\n',
    "simulator/semantics/TiuExec.h": '#include "timing/TiuTiming.h"\n',
    "simulator/systemc/Engine.h": '#include <systemc>\n#include "simulator/semantics/TiuExec.h"\n',
    "runtime/Runtime.h": '#include "simulator/systemc/Simulator.h"\n',
    "compiler/Backend/CodeGen.cpp": '#include "timing/TiuTiming.h"\n#include "arith/IntArith.h"\n',
    "compiler/Flow/Deploy.cpp": '#include "runtime/Runtime.h"\n#include "mlir/IR/BuiltinOps.h"\n',
    "tools/tpuc/main.cpp": '#include "compiler/Flow/Deploy.h"\n#include "simulator/systemc/Simulator.h"\n',
    "tests/anything/AnyTest.cpp": '#include "compiler/Flow/Deploy.h"\n#include <systemc>\n',
}

# (file, added include, words the violation line must contain)
VIOLATIONS = [
    ("compiler/Backend/CodeGen.cpp", '#include "simulator/semantics/TiuExec.h"',
     "compiler/ must not include simulator/"),
    ("isa/HwConfig.h", '#include "runtime/Runtime.h"', "isa/ must not include runtime/"),
    ("arith/IntArith.h", '#include "memory/Memory.h"', "arith/ must not include memory/"),
    ("timing/TiuTiming.h", '#include "simulator/semantics/TiuExec.h"', "timing/ must not include simulator/"),
    ("simulator/semantics/TiuExec.h", '#include "runtime/Runtime.h"', "simulator/ must not include runtime/"),
    ("runtime/Runtime.h", '#include "compiler/Flow/Deploy.h"', "runtime/ must not include compiler/"),
    ("support/Status.h", '#include "isa/HwConfig.h"', "support/ must not include isa/"),
    ("simulator/semantics/TiuExec.h", '#include "simulator/systemc/Engine.h"', "must not include the SystemC model"),
    ("compiler/Backend/CodeGen.cpp", '#include "mlir/IR/Operation.h"', "only compiler/ outside Backend/ uses MLIR"),
    ("runtime/Runtime.h", '#include "llvm/ADT/StringRef.h"', "only compiler/ outside Backend/ uses MLIR"),
    ("timing/TiuTiming.h", "#include <systemc>", "only simulator/systemc/ uses SystemC"),
]


def write_tree(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)


def lint(root):
    return subprocess.run([sys.executable, LINT, root], capture_output=True, text=True)


class CheckLayersTest(unittest.TestCase):
    def test_good_tree_passes(self):
        with tempfile.TemporaryDirectory() as root:
            write_tree(root, GOOD)
            r = lint(root)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertEqual(r.stdout, "")

    def test_each_violation_fails_naming_file_and_line(self):
        for path, include, words in VIOLATIONS:
            with self.subTest(path=path, include=include), tempfile.TemporaryDirectory() as root:
                files = dict(GOOD)
                files[path] = files[path] + include + "\n"
                write_tree(root, files)
                r = lint(root)
                self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
                line = files[path].count("\n")
                lines = r.stdout.splitlines()
                self.assertEqual(len(lines), 1, r.stdout)
                self.assertTrue(lines[0].startswith(f"{path}:{line}: "), lines[0])
                self.assertIn(words, lines[0])
                self.assertIn("1 layering violation(s)", r.stderr)

    def test_not_a_tree_is_an_error(self):
        with tempfile.TemporaryDirectory() as root:
            r = lint(os.path.join(root, "missing"))
            self.assertEqual(r.returncode, 2)
            self.assertIn("not a source tree", r.stderr)


if __name__ == "__main__":
    unittest.main()
