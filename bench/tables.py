"""Questions whose answer is a table cell of real web pages, before/after table rows.

Indexes ``/work/realdocs/web``-style folders (``--docs``: Wikipedia pages with infoboxes,
a chapter of the SRE book with a symptom/cause table, ...) in a fresh home with the
ragctl source tree given by ``--src`` (another checkout for a before/after comparison),
asks each question of ``bench/tables.json`` through the CLI and checks the answer.
Prints a table and writes bench/results/tables-<name>.json.
Usage: python bench/tables.py --docs DIR... [--questions bench/tables-pdf.json] [--src TREE]
       [--name after]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, print_table, save

QUESTIONS = ROOT / "bench" / "tables.json"


def matches(answer: str, gold: str, *, extra: int = 3) -> bool:
    """The gold answer's words, in order, inside an answer of at most ``extra`` more
    words ("Rs 1939" for "1939" is right; "9 / 2 8 / 2 0 15" for "15" is not)."""
    import re

    def words(t: str) -> list[str]:
        return re.findall(r"[\w.,$€£%/-]+", re.sub(r"\[\d+\]", " ", t.lower()))

    a, g = ([w.strip(".,$€£") for w in words(t)] for t in (answer, gold))
    if not g or len(a) > len(g) + extra:
        return False
    return any(a[i:i + len(g)] == g for i in range(len(a) - len(g) + 1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", required=True, nargs="+")
    ap.add_argument("--questions", default=str(QUESTIONS), help="a JSON question set")
    ap.add_argument("--src", default=str(ROOT), help="the ragctl source tree to run")
    ap.add_argument("--name", default="after")
    args = ap.parse_args()
    questions = json.loads(Path(args.questions).read_text())["questions"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="ragctl-tables-") as home:
        env = {**os.environ, "RAGCTL_HOME": home, "HF_HUB_OFFLINE": "1",
               "PYTHONPATH": args.src}
        cmd = [sys.executable, "-m", "ragctl"]
        subprocess.run([*cmd, "index", *args.docs, "-q"], env=env, cwd=args.src, check=True,
                       capture_output=True)
        for q in questions:
            r = subprocess.run([*cmd, "ask", q["q"], "--json", "--no-log"], env=env,
                               cwd=args.src, capture_output=True, text=True)
            a = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
            answer = "" if a.get("abstained") else a.get("answer", "")
            right = matches(answer, q["a"])
            rows.append({"question": q["q"], "gold": q["a"], "answer": answer, "right": right})
            print(f"{'right' if right else 'wrong':6} {q['q'][:50]:50} → {answer[:60]}")
    n = sum(r["right"] for r in rows)
    print_table(f"table-cell questions ({args.name})", [("right", f"{n} of {len(rows)}", "")])
    save(f"tables-{args.name}", {"docs": args.docs, "right": n, "rows": rows})


if __name__ == "__main__":
    main()
