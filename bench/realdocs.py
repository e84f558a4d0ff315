"""Ask bench/realdocs.json's questions through the CLI, as a user would, and judge them.

The documents are real files from public repositories (see "sources" in the JSON); put
them in one folder, index it (`RAGCTL_HOME=H ragctl index FOLDER`), then run
`python bench/realdocs.py --home H`. Each question is one `ragctl ask --json` process, so
the times include loading the models. A factoid answer is right when it contains a gold
answer and is short (at most 12 words) or its F1 with one reaches 0.6; a non-factoid
answer when it contains the expected words; an unanswerable question when ragctl says
"Not found" (exit 3). Prints a table and writes bench/results/realdocs.json.

A questions file whose "split" is "test" (bench/realdocs-test.json) is reported in totals
only — per kind, per detail and per file type, as right / partly / wrong / wrongly refused
for answerable questions and rightly refused / answered for not-stated ones — with the
commit its questions were frozen at: no answer of a test question is printed or saved, so
none can be read to write a rule (read one, and its source moves to dev).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, median, print_table, save

QUESTIONS = ROOT / "bench" / "realdocs.json"


def judge(q: dict[str, Any], answer: dict[str, Any], code: int) -> str:
    """right / partly / wrong / missed. A computed answer is judged by its result, not
    by the working shown after it ("10 (10 invoices: a.pdf, b.pdf, …)" is "10")."""
    from ragctl.text import contains_answer, max_f1

    abstained = code == 3
    text = answer.get("answer_text") or answer.get("answer") or ""
    if answer.get("kind") == "computed" and answer.get("raw_answer"):
        text = answer["raw_answer"]
    if q["kind"] == "unanswerable":
        return "right" if abstained else "wrong"
    if abstained:
        return "missed"
    if not text.strip():
        return "wrong"  # an empty answer printed as an answer
    if [a.lower() for a in q.get("answers", [])] in (["yes"], ["no"]):
        # yes/no: the first word, whatever sentence it quotes
        first = text.strip().split()[0].strip(".,:;!").lower()
        return "right" if first == q["answers"][0].lower() else "wrong"
    if q["kind"] == "non-factoid":
        return "right" if any(c.lower() in text.lower() for c in q["contains"]) else "wrong"
    # an answer of signs alone (":="), or of an article and signs (a grade "A+"),
    # normalizes to nothing: it is looked for as written
    from ragctl.text import normalize_answer

    signs = [g for g in q["answers"] if not normalize_answer(g)]
    if contains_answer(text, q["answers"]) or any(g in text for g in signs):
        return "right" if len(text.split()) <= 12 or max_f1(text, q["answers"]) >= 0.6 \
            else "partly"
    return "right" if max_f1(text, q["answers"]) >= 0.6 else "wrong"


def ask(ragctl: str, home: str, question: str
        ) -> tuple[dict[str, Any], subprocess.CompletedProcess[str], float]:
    """One `ragctl ask --json` process: its JSON answer (or the last line of its errors),
    the finished process and its wall time."""
    t = time.perf_counter()
    out = subprocess.run([ragctl, "ask", question, "--json"], capture_output=True, text=True,
                         env={**os.environ, "RAGCTL_HOME": home})
    wall = time.perf_counter() - t
    try:
        answer = json.loads(out.stdout)
    except ValueError:
        answer = {"error": out.stderr.strip().splitlines()[-1:] or ["?"]}
    return answer, out, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", required=True, help="RAGCTL_HOME holding the indexed folder")
    ap.add_argument("--ragctl", default=str(ROOT / ".venv" / "bin" / "ragctl"))
    ap.add_argument("--name", default="realdocs", help="results file name")
    ap.add_argument("--only", type=int, nargs="*", help="question numbers (1-based)")
    ap.add_argument("--questions", type=Path, default=QUESTIONS,
                    help="the questions file (default bench/realdocs.json, the dev split)")
    args = ap.parse_args()
    spec = json.loads(args.questions.read_text())
    questions = spec["questions"]
    if spec.get("split") == "test":
        if args.only:
            sys.exit("bench: the test split is run whole (--only is for dev questions)")
        return test_totals(args, spec)
    rows, verdicts, walls = [], [], []
    for n, q in enumerate(questions, start=1):
        if args.only and n not in args.only:
            continue
        answer, out, wall = ask(args.ragctl, args.home, q["q"])
        verdict = judge(q, answer, out.returncode)
        text = answer.get("answer", "") if out.returncode != 3 else "(not found)"
        sources = [f"{Path(c['path']).name}" for c in answer.get("sources", [])]
        rows.append({"n": n, "question": q["q"], "kind": q["kind"], "verdict": verdict,
                     "exit": out.returncode, "answer": text, "sources": sources,
                     "wall_s": round(wall, 2), "load_s": answer.get("timings", {}).get("load"),
                     "stderr": out.stderr.strip()[-300:]})
        verdicts.append(verdict)
        walls.append(wall)
        print(f"{n:>2} {verdict:<7} {wall:5.1f}s  {q['q'][:60]:<60} → {text[:70]}",
              file=sys.stderr)
    counts = {v: verdicts.count(v) for v in ("right", "partly", "wrong", "missed")}
    kinds: dict[str, list[str]] = {}
    for r in rows:
        kinds.setdefault(r["kind"], []).append(r["verdict"])
    table = [(k, f"{v.count('right')} of {len(v)} right", "") for k, v in kinds.items()]
    table.append(("all", f"{counts['right']} of {len(rows)} right, {counts['partly']} partly, "
                  f"{counts['wrong']} wrong, {counts['missed']} missed", ""))
    table.append(("wall time per question, p50", f"{median(walls):.1f} s", ""))
    print_table(f"{len(rows)} questions about real documents, through the CLI", table)
    print(f"\nwrote {save(args.name, {'counts': counts, 'questions': rows})}")


OUTCOME = {"right": "right", "partly": "partly", "wrong": "wrong", "missed": "wrongly refused"}


def test_totals(args: argparse.Namespace, spec: dict[str, Any]) -> None:
    """Ask every test question; keep and print nothing but totals."""
    totals: dict[str, dict[str, dict[str, int]]] = {"kind": {}, "detail": {}, "type": {},
                                                   "all": {}}
    walls = []
    for q in spec["questions"]:
        answer, out, wall = ask(args.ragctl, args.home, q["q"])
        walls.append(wall)
        verdict = judge(q, answer, out.returncode)
        if q["kind"] == "unanswerable":
            outcome = "rightly refused" if verdict == "right" else "answered not-stated"
        else:
            outcome = OUTCOME[verdict]
        source = q.get("source") or q.get("file", "")  # realdocs-test / sheets-test
        keys = {"kind": q["kind"], "detail": q.get("detail", "?"),
                "type": Path(source).suffix.lstrip(".") or "?", "all": "all"}
        for axis, key in keys.items():
            cell = totals[axis].setdefault(key, {})
            cell[outcome] = cell.get(outcome, 0) + 1
    commit = subprocess.run(["git", "log", "-1", "--format=%H", "--", str(args.questions)],
                            capture_output=True, text=True, cwd=ROOT).stdout.strip()
    right = sum(v for k, v in totals["all"]["all"].items()
                if k in ("right", "rightly refused"))
    n = len(spec["questions"])
    table = [(f"{axis}: {key}", ", ".join(f"{v} {k}" for k, v in sorted(cell.items())), "")
             for axis in ("kind", "detail", "type") for key, cell in sorted(totals[axis].items())]
    table.append(("right or rightly refused", f"{right} of {n} ({100 * right / n:.0f}%)",
                  "≥ 85%"))
    table.append(("wall time per question, p50", f"{median(walls):.1f} s", ""))
    print_table(f"test split, {n} questions (frozen at {commit[:12] or 'uncommitted'})", table)
    name = "realdocs-test" if args.name == "realdocs" else args.name
    path = save(name, {"split": "test", "questions_commit": commit, "n": n,
                       "right_or_rightly_refused": right, "totals": totals})
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
