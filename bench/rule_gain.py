"""What one answer rule gains on the benchmark's dev questions where it can act: each set's
questions (long ones left out) asked in one process per set with every rule on, and again
with the rule off where it fired; judged as bench/rules.py judges (bench/realdocs.py's
judge). The questions: those whose text names a source phrase
(ragctl.ask.documents.source_spans), or those matching ``--match``, or those about
``--files``, or ``--all``. With ``--rule none`` it only answers them (two runs, two codes or
two homes, are then compared by their JSON).

Prints a table and writes bench/results/rule-gain-<name>.json.

Usage: python bench/rule_gain.py --out /tmp/bench --home home-f --rule source_phrase \
           --name s45-source
       python bench/rule_gain.py --out /tmp/bench --rule header_prefix --all \
           --sets tables-dev sheets-dev --name s45-prefix
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.benchmark import SETS, spec_of, split_of
from bench.common import print_table, save
from bench.realdocs import judge


def chosen(q: dict[str, Any], args: argparse.Namespace) -> bool:
    from ragctl.ask.documents import source_spans

    if q["kind"] == "long":
        return False
    if args.all:
        return True
    if args.files:
        source = str(q.get("source") or q.get("file") or "")
        return any(f in source for f in args.files)
    if args.match:
        return re.search(args.match, q["q"], re.I) is not None
    return bool(source_spans(q["q"]))


def _ask(pipe: Any, opts: Any, q: dict[str, Any]) -> tuple[str, str, list[str]]:
    """The verdict on an answer, its text (or why it was refused) and the rules fired."""
    a = pipe.ask(q["q"], opts)
    verdict = judge(q, {"answer_text": a.answer_text}, 3 if a.abstained else 0)
    text = f"(refused) {a.abstain_reason or ''}" if a.abstained else a.answer_text
    return verdict, text, a.rules


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="each set's home: OUT/<set>/HOME")
    ap.add_argument("--home", default="home")
    ap.add_argument("--rule", required=True,
                    help="a rule's name, several joined by commas (each turned off alone), or none")
    ap.add_argument("--sets", nargs="*", choices=list(SETS))
    ap.add_argument("--split", choices=("dev",), default="dev")
    ap.add_argument("--all", action="store_true", help="every question of the sets")
    ap.add_argument("--match", default="", help="questions whose text matches this")
    ap.add_argument("--files", nargs="*", help="questions about files named so (in part)")
    ap.add_argument("--name", required=True)
    args = ap.parse_args()

    from ragctl.ask.pipeline import AskOptions, Pipeline
    from ragctl.config import load_settings
    from ragctl.store.collection import Collection

    rules = [r for r in args.rule.split(",") if r and r != "none"]
    rows: list[dict[str, Any]] = []
    for name in args.sets or SETS:
        if split_of(name) != args.split:
            continue
        questions = [(n, q) for n, q in enumerate(spec_of(name)["questions"], start=1)
                     if chosen(q, args)]
        if not questions:
            continue
        os.environ["RAGCTL_HOME"] = str(args.out / name / args.home)
        settings = load_settings()
        with Collection.open(settings) as c, Pipeline(c) as pipe:
            base = AskOptions.from_settings(settings)
            for n, q in questions:
                on, text, fired = _ask(pipe, replace(base), q)
                row: dict[str, Any] = {"set": name, "n": n, "question": q["q"], "on": on,
                                       "answer": text, "fired": [r for r in rules if r in fired]}
                for rule in row["fired"]:
                    row[f"off {rule}"], row[f"answer off {rule}"], _ = _ask(
                        pipe, replace(base, rules_off=frozenset({rule})), q)
                rows.append(row)
    right_on = sum(r["on"] == "right" for r in rows)

    def off(r: dict[str, Any], rule: str) -> str:  # the verdict with the rule off
        return str(r.get(f"off {rule}", r["on"]))

    print_table(f"{len(rows)} dev questions, right or rightly refused: {right_on}", [
        (rule, f"fired {sum(rule in r['fired'] for r in rows)}",
         f"off → on {sum(off(r, rule) == 'right' for r in rows)} → {right_on}; "
         f"gained {sum(r['on'] == 'right' != off(r, rule) for r in rows)}, "
         f"lost {sum(off(r, rule) == 'right' != r['on'] for r in rows)}")
        for rule in rules] or [("answered", str(len(rows)), "")])
    path = save(f"rule-gain-{args.name}", {"rule": args.rule, "home": args.home,
                                            "questions": rows})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
