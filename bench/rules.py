"""What each answer rule gains: a question set answered with every rule on, then with each
rule off (ragctl/ask/ruletable.py), in one process.

A rule changes an answer only where it fires (each rule records itself when it changes
something), so with a rule off only the questions it fired on are asked again. A question
counts when it is right or rightly refused (bench/realdocs.py's judge); the gain of a rule
is that count with it on minus with it off; its exact gain, the same for answers equal
to an expected one (SQuAD's convention: what a span completion or trim changes). A
questions file whose "split" is "test" is reported in totals only, as bench/realdocs.py
does. ``--squad N``: N questions of the SQuAD dev split (even articles; the index
bench/squad_index.py builds) instead.
Prints a table and writes bench/results/rules-<name>.json.

Usage: RAGCTL_HOME=H python bench/rules.py --questions bench/realdocs.json --name dev
       python bench/rules.py --squad 300 --name squad-dev
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import print_table, save
from bench.realdocs import judge


def _questions(args: argparse.Namespace) -> tuple[list[dict[str, Any]], str, str | None]:
    """The questions (realdocs' shape), the split and the index name (None: the default)."""
    if args.squad:
        from bench.common import squad_articles
        from bench.squad_index import squad_index, squad_questions, use_bench_home

        use_bench_home()
        index, _ = squad_index("dev")
        qs = squad_questions(squad_articles("dev"), args.squad, seed=1)
        return ([{"q": q["question"], "kind": "factoid", "answers": q["answers"]} for q in qs],
                "dev", index)
    import json

    spec = json.loads(Path(args.questions).read_text())
    # a long answer is judged by the facts it states (bench/benchmark.py), not by a span
    return ([q for q in spec["questions"] if q["kind"] != "long"], spec.get("split", "dev"),
            None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", default="bench/realdocs.json")
    ap.add_argument("--squad", type=int, default=0, help="N SQuAD dev-split questions")
    ap.add_argument("--name", required=True)
    args = ap.parse_args()
    questions, split, index = _questions(args)

    from ragctl.ask.pipeline import AskOptions, Pipeline
    from ragctl.ask.ruletable import RULES
    from ragctl.config import load_settings
    from ragctl.store.collection import Collection
    from ragctl.text import exact_match

    settings = load_settings(index=index) if index else load_settings()
    t0 = time.perf_counter()
    with Collection.open(settings) as c, Pipeline(c) as pipe:
        base = AskOptions.from_settings(settings)

        def verdict(q: dict[str, Any], off: frozenset[str]) -> tuple[bool, bool, list[str]]:
            a = pipe.ask(q["q"], replace(base, rules_off=off))
            v = judge(q, {"answer_text": a.answer_text}, 3 if a.abstained else 0)
            exact = not a.abstained and bool(q.get("answers")) and \
                bool(exact_match(a.answer_text, q["answers"]))
            return v == "right", exact, a.rules

        baseline = [verdict(q, frozenset()) for q in questions]
        rows = []
        for rule in RULES:
            where = [i for i, (_, _, fired) in enumerate(baseline) if rule.name in fired]
            off = [verdict(questions[i], frozenset({rule.name})) for i in where]
            on_right = sum(baseline[i][0] for i in where)
            on_exact = sum(baseline[i][1] for i in where)
            rows.append({"rule": rule.name, "stage": rule.stage, "fired": len(where),
                         "right_on": on_right, "right_off": sum(v[0] for v in off),
                         "gain": on_right - sum(v[0] for v in off),
                         "exact_gain": on_exact - sum(v[1] for v in off)})
    right = sum(ok for ok, _, _ in baseline)
    print_table(f"rules on {len(questions)} questions ({split}): {right} right or rightly "
                "refused with all on (gain: right or rightly refused; exact: answers equal "
                "to an expected one)", [
                    (r["rule"], f"fired {r['fired']}, gain {r['gain']:+d}, exact "
                                f"{r['exact_gain']:+d}", "") for r in rows])
    save(f"rules-{args.name}", {"split": split, "questions": len(questions),
                                "right_all_on": right, "rules": rows,
                                "seconds": round(time.perf_counter() - t0, 1)})


if __name__ == "__main__":
    main()
