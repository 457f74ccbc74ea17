"""perf/int8_ablation.py's table: the committed one in docs/quantization.md is
complete (a cell per model and column) and reads back; --merge keeps what a
run does not compute (other models' rows, other columns' cells, minimums and
notes) and replaces what it does, each cell marked with the run that computed it
(the kept cells get the key of the committed table's run: its stamp, or a line saying it had none).

    check_ablation_merge.py <repo root>"""
import argparse
import os
import re
import sys

root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "perf"))
import int8_ablation as ab  # noqa: E402
import provenance  # noqa: E402

headers = [h for _, h, _ in ab.THRESHOLD_COLUMNS] + [h for _, h, *_ in ab.LEVER_COLUMNS]
rows, notes = ab.parse_docs_table(headers)
labels = [m["label"] for m in ab.MODELS.values()]
assert list(rows) == labels, f"docs rows {list(rows)} != models {labels}"
for label, row in rows.items():
    missing = [h for h in headers + [ab.GREEDY_HEADER, ab.PREFIX_HEADER] if row.get(h, "–") == "–"]
    assert not missing, f"{label}: no value for {missing}"
    mins = ab.old_minimums(notes[label], headers)
    assert set(mins) == set(headers), f"{label}: no minimum for {set(headers) - set(mins)}"
    assert len(ab.old_methods(notes[label])) == 2, f"{label}: the note names no methods"

a = argparse.Namespace(test=6, cali=32, select=3, tune_samples=2, qtable_samples=2, merge=True)
cell = dict(cos=0.5, cos_min=0.4, iou=0.3, iou_min=0.2, held=0.45)
stamp = provenance.Stamp("0" * 40, "2026-01-01 00:00 UTC", "test")
ppocr = ab.MODELS["ppocr_det"]
result = dict(model=ppocr, cells={"kl_tune": cell}, times={}, default_method="?", all_method="?")
block = ab.render_block([result], a, stamp).splitlines()
# The kept cells' key [b] names the committed table's run: its stamp, or a line saying it had none.
committed = [st for table, _, st in provenance.parse(provenance.block_of(open(os.path.join(
    root, provenance.TABLES["int8-ablation"].doc)).read(), "int8-ablation")) if table == "int8-ablation"]
if not committed:
    kept_lines = ["Provenance (int8-ablation) [b]: unknown (figures kept from a table made before provenance stamps)"]
else:  # each committed run keeps a line of its own, under a key after this run's [a]
    kept_lines = [next((l for l in block if l.startswith("Provenance (int8-ablation) [") and st.commit in l), st.commit)
                  for st in committed]
for line in kept_lines:
    assert line in block, line
assert stamp.line("int8-ablation", "a") in block
KEPT = re.compile(r" \[[b-z]\]$")  # a kept figure: an earlier run's key
table = [l for l in block if l.startswith("| ")]
new_rows = {l.strip("| ").split(" | ")[0]: l for l in table[1:]}
assert list(new_rows) == labels
cells_of = lambda line: [c.strip() for c in line.strip().strip("|").split(" | ")][1:]  # noqa: E731
for label in labels[1:]:  # not run: the same cells, each kept from the unstamped table
    kept = cells_of(new_rows[label])
    assert [provenance.strip_mark(c) for c in kept[:len(headers) + 2]] == \
        [provenance.strip_mark(rows[label][h]) for h in headers + [ab.GREEDY_HEADER, ab.PREFIX_HEADER]], label
    assert all(KEPT.search(c) for c in kept if provenance.has_figure(c)), label
cells = cells_of(new_rows[ppocr["label"]])
for h, c in zip(headers + [ab.GREEDY_HEADER, ab.PREFIX_HEADER], cells):
    if h == "KL+tune 5":
        assert c == "0.5000 / 0.300 [a]", f"{h}: {c}"
    else:
        assert provenance.strip_mark(c) == provenance.strip_mark(rows[ppocr["label"]][h]) and KEPT.search(c), \
            f"{h}: {c}"
# The best column is chosen among this run's cells on the held-back inputs, with its test mean and minimum.
assert cells[-2:] == ["KL+tune 5 [a]", "0.5000 / 0.300 (0.4000 / 0.200) [a]"], cells[-2:]
note = next(l for l in block if l.startswith(f"- {ppocr['label']}: minimum"))
assert "KL+tune 5 0.4000/0.200 [a], " in note
assert re.search(re.escape("max " + provenance.strip_mark(ab.old_minimums(notes[ppocr["label"]], headers)["max"])) +
                 r" \[[b-z]\]", note)
assert "Default calibration wrote `" + ab.old_methods(notes[ppocr["label"]])[0] + "`" in note
assert sum(l.startswith(f"- {ppocr['label']}: greedy qtable:") for l in block) == 1

a.merge = False  # without --merge: only what was computed
block = ab.render_block([result], a, stamp).splitlines()
assert stamp.line("int8-ablation") in block  # one run: one line, no keys
table = [l for l in block if l.startswith("| ")]
assert len(table) == 2, table
assert table[1].count("| – ") == len(headers) - 1, table[1]
assert table[1].endswith("| not run | not run | KL+tune 5 | 0.5000 / 0.300 (0.4000 / 0.200) |"), table[1]
print("ablation table: complete, merge keeps and replaces as it should")
