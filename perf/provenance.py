#!/usr/bin/python3
"""Provenance of the generated doc tables: the commit, date and command that made each figure.

Every generated table is registered in TABLES (its doc, its markers, the generator and the paths
whose code it measures). Before it measures, a generator calls stamp(table_id): that refuses (one
line, exit 2) when the measured paths differ from HEAD, so the commit it records is the code that
made the figures. The stamp is written beside the table as one line:

    Provenance (latency-set): commit <40 hex digits>, 2026-12-04 19:20 UTC, `<command line>`

A table whose cells can come from different runs marks each cell (or row) with its run's key,
" [a]", and has one line per key: `Provenance (int8-ablation) [a]: commit ...`. When every cell
comes from one run the marks are left out and the line has no key.

    /usr/bin/python3 perf/provenance.py stale [--root DIR]

prints one line per table that has no stamp, a cell without its run's key, a stamp whose commit is
not an ancestor of HEAD, or a stamp older than a commit that changed the code the table measures
(`git log <commit>..HEAD -- <measured paths>`), unless that commit's message declares, in a
`Figures-unchanged: <evidence>` trailer, that it changes no figure of that table (a
`Figures-changed: <table ids>` trailer names the tables whose figures it does change), or a
later commit vouches for it with a `Figures-unchanged-in: <hash> <evidence>` trailer (a message
cannot be amended once a stamp names a later commit). Exit 1 when it prints any, 2 on bad input.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import asdict, dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass(frozen=True)
class Table:
    doc: str           # file holding the table, relative to the repository root
    begin: str         # marker lines around the generated block ("" = the whole file)
    end: str
    generator: str
    measures: tuple    # paths whose code the figures depend on (the generator included)
    keyed: str = ""    # "row" / "cell": which part carries a run's key when runs are mixed


# What each kind of figure depends on. A simulated time: the compiler (it decides the commands and,
# through the cost model, the layer groups), the timing library and SystemC engines, the hardware
# config, the runtime's sim backend, tpuc and the exported models. A cosine: the compiler, the
# integer arithmetic the Tpu interpreter shares with the simulator, the runtime's func backend.
_BUILD = ("compiler/", "isa/", "support/", "runtime/", "tools/tpuc/")
_LATENCY = _BUILD + ("timing/", "simulator/systemc/", "simulator/semantics/", "perf/TimingFit.cpp",
                     "models/latency/", "perf/validate_latency.py")
_LATENCY_BM1684X = _BUILD + ("timing/", "simulator/systemc/", "simulator/semantics/", "perf/TimingFit.cpp",
                             "models/latency/", "perf/validate_latency_bm1684x.py")
_RESNET50 = _BUILD + ("simulator/", "models/export_torchvision.py", "models/inputs.py", "perf/validate_resnet50.py")
_ZOO = _BUILD + ("simulator/", "tools/ort/", "models/zoo.py", "models/zoo_init.py", "models/inputs.py",
                 "scripts/models.sh", "perf/zoo_table.py")
_ABLATION = ("compiler/", "support/", "tools/tpuc/", "simulator/semantics/", "models/render_text_pages.py",
             "models/prepare_ppocr.py", "scripts/models.sh", "scripts/models-tflite.sh", "perf/int8_ablation.py")
_LAYER = _BUILD + ("timing/", "simulator/", "perf/layer_bench.py")
_RECIPE_COST = _BUILD + ("simulator/", "models/export_torchvision.py", "models/inputs.py", "perf/int8_recipe_bench.py")
# The conformance counts: the pinned files (the tests fail when a run's counts differ from them).
_ONNX_COUNTS = ("tests/interp/conformance_counts.txt", "perf/conformance_counts.py")
_CHIP_COUNTS = ("tests/conformance/expected-counts.txt", "perf/conformance_counts.py")

TABLES = {
    "latency-set": Table("docs/validation.md", "<!-- latency-set begin (perf/validate_latency.py) -->",
                         "<!-- latency-set end -->", "perf/validate_latency.py", _LATENCY),
    "work-report": Table("docs/validation.md", "<!-- work-report begin (perf/validate_latency.py) -->",
                         "<!-- work-report end -->", "perf/validate_latency.py", _LATENCY),
    "latency-scatter": Table("docs/latency_scatter.svg", "", "", "perf/validate_latency.py", _LATENCY),
    "timing-causes": Table("docs/timing.md", "<!-- timing-causes begin (perf/validate_latency.py --stages) -->",
                           "<!-- timing-causes end -->", "perf/validate_latency.py", _LATENCY),
    "overlap-bounds": Table("docs/timing.md", "<!-- overlap-bounds begin (perf/validate_latency.py --stages) -->",
                            "<!-- overlap-bounds end -->", "perf/validate_latency.py", _LATENCY),
    "resnet50-latency": Table("docs/validation.md", "<!-- resnet50-latency begin (perf/validate_resnet50.py) -->",
                              "<!-- resnet50-latency end -->", "perf/validate_resnet50.py", _RESNET50),
    "resnet50-stages": Table("docs/validation.md", "<!-- resnet50-stages begin (perf/validate_resnet50.py) -->",
                             "<!-- resnet50-stages end -->", "perf/validate_resnet50.py", _RESNET50),
    "zoo": Table("docs/models.md", "<!-- zoo table: generated by perf/zoo_table.py, do not edit -->",
                 "<!-- end of zoo table -->", "perf/zoo_table.py", _ZOO, keyed="row"),
    "int8-ablation": Table("docs/quantization.md", "<!-- int8-ablation:begin -->", "<!-- int8-ablation:end -->",
                           "perf/int8_ablation.py", _ABLATION, keyed="cell"),
    "int8-recipe-cost": Table("docs/quantization.md", "<!-- int8-recipe-cost begin (perf/int8_recipe_bench.py) -->",
                              "<!-- int8-recipe-cost end -->", "perf/int8_recipe_bench.py", _RECIPE_COST),
    "layer-bench": Table("docs/timing.md", "<!-- layer-bench begin (perf/layer_bench.py) -->",
                         "<!-- layer-bench end -->", "perf/layer_bench.py", _LAYER),
    "onnx-conformance": Table("docs/validation.md", "<!-- onnx-conformance begin (perf/conformance_counts.py) -->",
                              "<!-- onnx-conformance end -->", "perf/conformance_counts.py", _ONNX_COUNTS),
    "bm1684x-latency": Table("docs/bm1684x.md", "<!-- bm1684x-latency begin (perf/validate_latency_bm1684x.py) -->",
                             "<!-- bm1684x-latency end -->", "perf/validate_latency_bm1684x.py", _LATENCY_BM1684X),
    "chip-conformance": Table("docs/validation.md", "<!-- chip-conformance begin (perf/conformance_counts.py) -->",
                              "<!-- chip-conformance end -->", "perf/conformance_counts.py", _CHIP_COUNTS),
}

STAMP = re.compile(r"Provenance \((?P<table>[\w.-]+)\)(?: \[(?P<key>[a-z]+)\])?: commit (?P<commit>[0-9a-f]{40}), "
                   r"(?P<date>[^,`]+), `(?P<command>[^`]*)`")
MARK = re.compile(r" \[([a-z]+)\]$")


class ProvenanceError(Exception):
    pass


def fail(msg):
    print(f"provenance: error: {msg}", file=sys.stderr)
    sys.exit(2)


@dataclass(frozen=True)
class Stamp:
    commit: str
    date: str
    command: str

    def line(self, table, key=""):
        return f"Provenance ({table})" + (f" [{key}]" if key else "") + \
            f": commit {self.commit}, {self.date}, `{self.command}`"

    def to_json(self):
        return asdict(self)

    @staticmethod
    def from_json(d):
        return Stamp(d["commit"], d["date"], d["command"])


def git(root, *args, check=True):
    p = subprocess.run(["git", "-C", root, *args], capture_output=True, text=True)
    if check and p.returncode:
        raise ProvenanceError(f"git {' '.join(args)}: {p.stderr.strip() or f'exit {p.returncode}'}")
    return p


def command_line(argv, root=ROOT):
    """The command as one would type it in the repository root: paths under the root made relative."""
    def rel(arg):
        flag, eq, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
        path = os.path.abspath(value) if value and (os.path.isabs(value) or os.path.exists(value)) else ""
        if path == root or path.startswith(root + os.sep):
            value = os.path.relpath(path, root)
        return flag + eq + value
    if not argv:
        return ""
    return shlex.join(["/usr/bin/python3", rel(argv[0])] + [rel(a) for a in argv[1:]])


def dirty(paths, root=ROOT):
    """The files under `paths` that differ from HEAD (untracked files included)."""
    out = git(root, "status", "--porcelain", "--untracked-files=all", "--", *paths).stdout
    return [line[3:] for line in out.splitlines() if line.strip()]


def stamp(table_id, argv=None, root=ROOT, require_clean=True):
    """The stamp of a run about to measure table_id; ProvenanceError when its measured code is not HEAD's
    (unless require_clean is off: a run that only prints)."""
    table = TABLES[table_id]
    changed = dirty(table.measures, root) if require_clean else []
    if changed:
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        raise ProvenanceError(f"refusing to stamp {table_id}: uncommitted changes in the code it measures: "
                              f"{', '.join(changed[:3])}{more} (commit them first, or run without writing the doc)")
    commit = git(root, "rev-parse", "HEAD").stdout.strip()
    return Stamp(commit, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                 command_line(argv if argv is not None else sys.argv, root))


def stamp_or_exit(table_id, argv=None, root=ROOT, require_clean=True):
    try:
        return stamp(table_id, argv, root, require_clean)
    except ProvenanceError as e:
        fail(str(e))


def confirm_or_exit(stamp_, table_id, root=ROOT):
    """Before the doc is written: the measured code is still the stamped commit's (nothing was committed or
    edited there while the generator ran)."""
    now = stamp_or_exit(table_id, [], root)
    if now.commit != stamp_.commit:
        fail(f"HEAD moved from {stamp_.commit[:12]} to {now.commit[:12]} while {table_id} was measured: run again")


class Keys:
    """Footnote keys of the runs a table's cells come from: a, b, ... in the order given; none when one run
    made every cell (then the table has one stamp line without a key)."""

    def __init__(self, stamps):
        self.order = list(dict.fromkeys(stamps))

    def mark(self, stamp):
        if stamp is None or len(self.order) < 2:
            return ""
        return f" [{chr(ord('a') + self.order.index(stamp))}]"

    def lines(self, table):
        if len(self.order) == 1:
            return [self.order[0].line(table)]
        return [s.line(table, chr(ord("a") + i)) for i, s in enumerate(self.order)]


def parse(text):
    """[(table, key, Stamp)] for every stamp line in text."""
    return [(m["table"], m["key"] or "", Stamp(m["commit"], m["date"].strip(), m["command"]))
            for m in STAMP.finditer(text)]


def block_of(text, table_id):
    """The text between the table's markers (all of it for a whole-file table); None when they are missing."""
    t = TABLES[table_id]
    if not t.begin:
        return text
    if t.begin not in text or t.end not in text:
        return None
    return text[text.index(t.begin) + len(t.begin):text.index(t.end)]


def write_block(table_id, body, stamp_lines, root=ROOT, path=None):
    """Replaces the table's block in its doc (or `path`) by body followed by its stamp lines."""
    t = TABLES[table_id]
    path = path or os.path.join(root, t.doc)
    with open(path) as f:
        text = f.read()
    if block_of(text, table_id) is None:
        fail(f"{path}: the markers '{t.begin}' ... '{t.end}' are missing")
    block = f"{t.begin}\n{body.rstrip()}\n\n" + "\n".join(stamp_lines) + f"\n{t.end}"
    text = text[:text.index(t.begin)] + block + text[text.index(t.end) + len(t.end):]
    with open(path, "w") as f:
        f.write(text)


def strip_mark(cell):
    return MARK.sub("", cell.strip())


def markdown_tables(text):
    """[(headers, rows)] of the pipe tables in text; rows are lists of cells (a `\\|` stays inside a cell)."""
    tables, current = [], None
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            if current is None:
                current = (cells, [])
                tables.append(current)
            elif not all(re.fullmatch(r":?-+:?", c) for c in cells):
                current[1].append(cells)
        else:
            current = None
    return tables


def differs(doc, table, cell, committed, now):
    """The one line check-docs prints for a figure the current code does not reproduce."""
    return f"{doc}: {table}: {cell}: committed {committed}, now {now}"


def compare_tables(doc, table, committed_text, fresh_text, keys=1, ignore=(), absent=("–", "-")):
    """One line per cell of each table in fresh_text that differs from the committed table with the same headers
    (rows matched by their first `keys` cells, marks stripped); columns in `ignore` and fresh cells in `absent`
    (not computed by this run) are not compared."""
    committed = {tuple(h): rows for h, rows in markdown_tables(committed_text)}
    lines = []
    for headers, rows in markdown_tables(fresh_text):
        old_rows = committed.get(tuple(headers))
        if old_rows is None:
            lines.append(f"{doc}: {table}: no committed table with the columns {' | '.join(headers)}")
            continue
        by_key = {tuple(strip_mark(c) for c in r[:keys]): r for r in old_rows}
        for row in rows:
            key = tuple(strip_mark(c) for c in row[:keys])
            name = " ".join(key)
            old = by_key.get(key)
            if old is None:
                lines.append(f"{doc}: {table}: row {name}: not in the committed table")
                continue
            for h, new, was in zip(headers[keys:], row[keys:], old[keys:]):
                if h in ignore or new in absent:
                    continue
                if strip_mark(new) != strip_mark(was):
                    lines.append(differs(doc, table, f"row {name}, column '{h}'", strip_mark(was), strip_mark(new)))
    return lines


# A commit that changes measured code without changing any figure (a reformat, a refactor whose bmodels stay
# byte-identical by scripts/bmodel-sums.sh, an op no table's model uses) says so in a trailer line of its
# message, with its evidence: `Figures-unchanged: bmodel-sums identical (46 bmodels)`. It does not age the
# stamps, except those of the tables a `Figures-changed: <table id>, ...` trailer of the same message names
# (the figures it does change: a new op's conformance counts). check-docs' quick re-runs still test the claim.
# A commit whose message lacks the trailer can be vouched for by a later one:
# `Figures-unchanged-in: <hash> <evidence>` (the tables its own Figures-changed names stay aged).
FIGURES_UNCHANGED = re.compile(r"^Figures-unchanged: \S", re.M)
FIGURES_CHANGED = re.compile(r"^Figures-changed: (.+)$", re.M)
FIGURES_UNCHANGED_IN = re.compile(r"^Figures-unchanged-in: ([0-9a-f]{7,40}) \S", re.M)


def declares_unchanged(message, table_id, vouched=False):
    """Whether a commit message declares (or a later commit, `vouched`, declares for it) that the commit
    leaves table_id's figures as they were."""
    if not (vouched or FIGURES_UNCHANGED.search(message)):
        return False
    changed = {t for m in FIGURES_CHANGED.finditer(message) for t in re.split(r"[,\s]+", m.group(1)) if t}
    return table_id not in changed


def changes_since(commit, paths, root=ROOT, table_id=None):
    """The commits after `commit` (to HEAD) that touch paths, newest first, as 'hash subject' lines; with
    table_id, without those that declare they leave its figures unchanged."""
    out = git(root, "log", "--format=%h %s%x00%B%x1e", f"{commit}..HEAD", "--", *paths).stdout
    vouched = FIGURES_UNCHANGED_IN.findall(git(root, "log", "--format=%B", f"{commit}..HEAD").stdout)
    lines = []
    for entry in out.split("\x1e"):
        head, _, body = entry.strip("\n").partition("\x00")
        short = head.strip().split(" ")[0]
        later = any(v.startswith(short) or short.startswith(v) for v in vouched)
        if head.strip() and not (table_id and declares_unchanged(body, table_id, later)):
            lines.append(head.strip())
    return lines


def has_figure(cell):
    return bool(re.search(r"\d", strip_mark(cell)))


def stale(root=ROOT):
    """One line per problem of every registered table (see the module docstring)."""
    lines = []
    shallow = git(root, "rev-parse", "--is-shallow-repository").stdout.strip() == "true"
    for table_id, t in TABLES.items():
        path = os.path.join(root, t.doc)
        where = f"{t.doc}: {table_id}"
        if not os.path.exists(path):
            lines.append(f"{where}: the file is missing")
            continue
        block = block_of(open(path).read(), table_id)
        if block is None:
            lines.append(f"{where}: the markers of the generated block are missing")
            continue
        stamps = [(key, s) for table, key, s in parse(block) if table == table_id]
        if not stamps:
            lines.append(f"{where}: no provenance stamp (regenerate it with {t.generator})")
            continue
        keys = {key for key, _ in stamps}
        if t.keyed and keys != {""}:
            lines += unkeyed_cells(where, block, keys, t.keyed)
        for key, s in stamps:
            label = where + (f" [{key}]" if key else "")
            if git(root, "cat-file", "-e", f"{s.commit}^{{commit}}", check=False).returncode:
                lines.append(f"{label}: commit {s.commit[:12]} is not in this clone's history"
                             + (" (a shallow clone: fetch the full history)" if shallow else ""))
                continue
            if git(root, "merge-base", "--is-ancestor", s.commit, "HEAD", check=False).returncode:
                lines.append(f"{label}: commit {s.commit[:12]} is not an ancestor of HEAD (made on another branch)")
                continue
            newer = changes_since(s.commit, t.measures, root, table_id)
            if newer:
                lines.append(f"{label}: made at {s.commit[:12]} ({s.date}); {len(newer)} later commit(s) change the "
                             f"code it measures, newest {newer[0]} (regenerate with {t.generator})")
    return lines


def unkeyed_cells(where, block, keys, keyed):
    """Cells (or rows) with figures but without a key of this table's stamps, and keys without a stamp."""
    lines = []
    for headers, rows in markdown_tables(block):
        for row in rows:
            parts = [row[0]] if keyed == "row" else row[1:]
            has_figures = any(has_figure(c) for c in row[1:])
            for cell in parts:
                m = MARK.search(cell.strip())
                if m and m.group(1) not in keys:
                    lines.append(f"{where}: row {strip_mark(row[0])}: key [{m.group(1)}] has no provenance line")
                elif not m and (has_figures if keyed == "row" else has_figure(cell)):
                    lines.append(f"{where}: row {strip_mark(row[0])}: '{cell}' carries no run key")
    return lines


def record_work(work, stamp_):
    """Notes in a work folder which commit made what is in it (for --reuse)."""
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "provenance.json"), "w") as f:
        json.dump(stamp_.to_json(), f)


def check_reuse(work, table_id, root=ROOT):
    """Reusing a work folder's products in a stamped table is honest only when no commit since the one that made
    them changed the code the table measures; ProvenanceError otherwise."""
    path = os.path.join(work, "provenance.json")
    if not os.path.exists(path):
        raise ProvenanceError(f"{work} records no commit (provenance.json): its products cannot go into a "
                              "stamped table; run without reuse")
    with open(path) as f:
        made = Stamp.from_json(json.load(f))
    newer = changes_since(made.commit, TABLES[table_id].measures, root, table_id)
    if newer:
        raise ProvenanceError(f"{work} was made at {made.commit[:12]}; {len(newer)} later commit(s) change what "
                              f"{table_id} measures (newest {newer[0]}): run without reuse")
    return made


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=["stale"])
    ap.add_argument("--root", default=ROOT, help="the repository (default: this checkout)")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    try:
        lines = stale(root)
    except ProvenanceError as e:
        fail(str(e))
    for line in lines:
        print(line)
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
