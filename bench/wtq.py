"""Questions over one table (WikiTableQuestions), asked of ragctl as a user would.

WikiTableQuestions' questions about Wikipedia tables, from a held-out part of its training
file (``random-split-1-dev.tsv``: ragctl's operation model is trained on
``random-split-1-train.tsv``; the release's test file is never opened). Each question's
table is indexed on its own, as the CSV file it is (``ragctl index`` reads it like any
spreadsheet), and the question asked through the pipeline ``ask`` runs. An answer is right
when it is the expected value: the same number, or the same words (SQuAD's normalization);
a list answer when every expected item is in the answer. Questions are told apart as
**lookups** (the answer is a cell of the table) and **computed** (it is not, or an
operation gives it: a count, a sum, the row with the most, …), and counted as right,
wrong, refused, and computed questions answered with one of the table's cells.

    python bench/wtq.py --root WTQ -n 200   # WTQ: a copy of ppasupat/WikiTableQuestions

Prints a table and writes bench/results/wtq.json.
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import median, print_table, save


def right(answer: str, expected: list[str]) -> bool:
    from ragctl.ask.compute import number
    from ragctl.text import normalize_answer

    if len(expected) > 1:
        return all(normalize_answer(e) in normalize_answer(answer) for e in expected)
    want = expected[0]
    a, b = number(answer), number(want)
    if b is not None and a is not None:
        return abs(a - b) <= 1e-6 * max(1.0, abs(b))
    return normalize_answer(answer) == normalize_answer(want)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, required=True,
                    help="a copy of the WikiTableQuestions release (data/, csv/)")
    ap.add_argument("--split", default="data/random-split-1-dev.tsv")
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--name", default="wtq")
    ap.add_argument("--rules-off", default="", help="rules of ragctl/ask/ruletable.py off, "
                    "comma-separated (what each gains)")
    args = ap.parse_args()
    if "pristine-unseen" in args.split:
        sys.exit("bench: the test file is reserved for evaluation outside the project")
    with (args.root / args.split).open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    random.Random(args.seed).shuffle(rows)
    rows = rows[:args.n]

    from ragctl.ask.pipeline import AskOptions, Pipeline
    from ragctl.config import load_settings
    from ragctl.index.indexer import Indexer
    from ragctl.models import registry as models
    from ragctl.store.collection import Collection
    from ragctl.training.tableops import read_table

    models.keep_loaded()
    off = frozenset(x for x in args.rules_off.split(",") if x)
    home = Path(tempfile.mkdtemp(prefix="ragctl-wtq-"))
    os.environ["RAGCTL_HOME"] = str(home)
    tally: dict[str, dict[str, int]] = {}
    walls, out = [], []
    try:
        for n, r in enumerate(rows, start=1):
            expected = [a.replace("\\n", " ").strip() for a in r["targetValue"].split("|")]
            table = read_table(args.root / r["context"])
            cells = {c.value for row in table.rows for c in row.cells}
            from ragctl.text import normalize_answer

            lookup = len(expected) == 1 and any(
                normalize_answer(c) == normalize_answer(expected[0]) for c in cells)
            kind = "lookup" if lookup else "computed"
            folder = home / "docs" / str(n)
            folder.mkdir(parents=True)
            shutil.copy(args.root / r["context"], folder / Path(r["context"]).name)
            settings = load_settings(index=f"t{n}")
            with Collection.open(settings, create=True) as c:
                c.lock()
                Indexer(c).run([folder])
            t = time.perf_counter()
            with Collection.open(settings) as c, Pipeline(c) as p:
                a = p.ask(r["utterance"], replace(AskOptions.from_settings(settings),
                                                  rules_off=off))
            walls.append(time.perf_counter() - t)
            text = a.raw_answer or a.answer_text
            if a.abstained:
                verdict = "refused"
            elif right(text, expected):
                verdict = "right"
            elif kind == "computed" and text in cells:
                verdict = "an input printed"
            else:
                verdict = "wrong"
            tally.setdefault(kind, {}).setdefault(verdict, 0)
            tally[kind][verdict] += 1
            out.append({"question": r["utterance"], "expected": expected, "kind": kind,
                        "answer": text, "verdict": verdict, "answer_kind": a.kind,
                        "operation": (a.computation or {}).get("operation"),
                        "reason": a.abstain_reason or "",
                        "rule": (a.candidates or [{}])[0].get("rule", "")})
            print(f"{n:>3} {kind:<8} {verdict:<16} {r['utterance'][:60]:<60} → {text[:40]}",
                  file=sys.stderr)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    table_rows: list[tuple[str, str, str]] = []
    for kind, goal in (("lookup", "≥ 85%"), ("computed", "≥ 55%")):
        t = tally.get(kind, {})
        total = sum(t.values())
        table_rows.append((f"{kind} ({total})", ", ".join(f"{v} {k}" for k, v in
                                                           sorted(t.items())), ""))
        table_rows.append((f"{kind}: right", f"{t.get('right', 0)} of {total} "
                           f"({100 * t.get('right', 0) / max(1, total):.0f}%)", goal))
    table_rows.append(("computed answered with one of the table's cells",
                       str(tally.get("computed", {}).get("an input printed", 0)), "0"))
    table_rows.append(("ask p50 (models loaded)", f"{median(walls):.2f} s", ""))
    print_table(f"WikiTableQuestions, {len(rows)} questions of {args.split}", table_rows)
    result: dict[str, Any] = {"split": args.split, "n": len(rows), "tally": tally,
                              "questions": out}
    print(f"\nwrote {save(args.name, result)}")


if __name__ == "__main__":
    main()
