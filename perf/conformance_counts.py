#!/usr/bin/python3
"""The conformance suites' pinned counts as tables in docs/validation.md, with their provenance.

    /usr/bin/python3 perf/conformance_counts.py [--check]

Reads tests/interp/conformance_counts.txt (the Top-interpreter ONNX conformance test) and
tests/conformance/expected-counts.txt (the chip-path shards); the tests fail when a run's counts
differ from these files, so the tables say what every passing CI run measured. Writes the blocks
between the onnx-conformance and chip-conformance markers; refuses while the counts files have
uncommitted changes. --check writes nothing and exits 1 when a committed table differs.
"""
import argparse
import os
import sys

import provenance

ROOT = provenance.ROOT
ONNX_COUNTS = os.path.join(ROOT, "tests", "interp", "conformance_counts.txt")
CHIP_COUNTS = os.path.join(ROOT, "tests", "conformance", "expected-counts.txt")
CHIP_COLUMNS = (("considered", "cases"), ("skip", "skipped (not float, not imported)"),
                ("top-fail", "fail on the Top interpreter"), ("pass", "pass on the chip path"),
                ("excluded", "excluded (no lowering)"))


def rows_of(path):
    """The non-comment lines of a counts file, split into fields."""
    with open(path) as f:
        return [line.split("#")[0].split() for line in f if line.split("#")[0].strip()]


def onnx_table():
    c = {name: int(value) for name, value in rows_of(ONNX_COUNTS)}
    return ("| cases | selected | passed | excluded with a reason | use ops the importer does not cover |\n"
            "|---|---|---|---|---|\n"
            f"| {c['cases']} | {c['selected']} | {c['passed']} | {c['excluded']} | {c['uncovered']} |")


def chip_table():
    shards = [(fields[1], dict(f.split("=") for f in fields[2:])) for fields in rows_of(CHIP_COUNTS)]
    lines = ["| shard | " + " | ".join(h for _, h in CHIP_COLUMNS) + " |", "|---" * (len(CHIP_COLUMNS) + 1) + "|"]
    lines += [f"| {shard} | " + " | ".join(c[k] for k, _ in CHIP_COLUMNS) + " |" for shard, c in shards]
    total = {k: sum(int(c[k]) for _, c in shards) for k, _ in CHIP_COLUMNS}
    return "\n".join(lines + ["| all | " + " | ".join(str(total[k]) for k, _ in CHIP_COLUMNS) + " |"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when a committed table differs; write nothing")
    a = ap.parse_args()
    tables = {"onnx-conformance": onnx_table(), "chip-conformance": chip_table()}
    if a.check:
        with open(os.path.join(ROOT, "docs", "validation.md")) as f:
            text = f.read()
        lines = [line for table_id, body in tables.items() for line in provenance.compare_tables(
            "docs/validation.md", table_id, provenance.block_of(text, table_id) or "", body)]
        for line in lines:
            print(line)
        print("conformance_counts --check: the tables " + ("differ from" if lines else "are") + " the pinned counts")
        return 1 if lines else 0
    for table_id, body in tables.items():
        stamp = provenance.stamp_or_exit(table_id)
        provenance.write_block(table_id, body, [stamp.line(table_id)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
