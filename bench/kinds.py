"""Which questions want an explanation: the question's form alone, against its form and the
question-kind model (``models/minilm-kinds``).

Two labelled sets: the development questions of the real-document benchmark (their writers
marked each one factoid or non-factoid; yes/no questions, which the form decides, and
unanswerable ones are left out) and, with ``--trec``, TREC's question-classification test
file (``TREC_10.label``: 500 questions, its description class as the explanatory one; the
model is trained on the other file, ``train_5500.label``); and 1,000 questions of SQuAD's
development articles (``../shared``), every one of which wants a span. Counted: the share labelled
right, and of the explanatory questions, how many each way finds (found) and how many
factoid questions it takes for one (taken).

    python bench/kinds.py [--trec TREC_10.label]

Prints a table and writes bench/results/kinds.json.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.benchmark import SETS, spec_of
from bench.common import print_table, save


def dev_questions() -> list[tuple[str, bool]]:
    """(question, wants an explanation) of the benchmark's development sets."""
    out = []
    for name in SETS:
        if not name.endswith("-dev"):
            continue
        for q in spec_of(name)["questions"]:
            text = q.get("q") or q.get("question")
            answers = [a.lower() for a in q.get("answers") or []]
            if q["kind"] not in ("factoid", "non-factoid") or answers in (["yes"], ["no"]):
                continue
            out.append((text, q["kind"] == "non-factoid"))
    return out


def measure(questions: list[tuple[str, bool]], said: list[bool]) -> dict[str, Any]:
    gold = [g for _, g in questions]
    return {"n": len(gold), "explanatory": sum(gold),
            "right": round(sum(s == g for s, g in zip(said, gold, strict=True)) / len(gold), 4),
            "found": sum(s and g for s, g in zip(said, gold, strict=True)),
            "taken": sum(s and not g for s, g in zip(said, gold, strict=True))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trec", type=Path, help="TREC_10.label, the test questions")
    ap.add_argument("--name", default="kinds")
    args = ap.parse_args()
    from ragctl.ask.question import question_type
    from ragctl.config import load_settings
    from ragctl.models import registry as models
    from ragctl.training.kinds import read_trec

    settings = load_settings()
    model = models.load("kinds", settings.kinds, settings)
    if model is None:
        sys.exit("bench: no question-kind model is installed")
    embedder = models.load("embedder", settings.embedder, settings, light=True)
    sets = {"dev": dev_questions()}
    squad = Path(__file__).resolve().parents[1].parent / "shared/data/squad/dev-v1.1.json"
    if squad.exists():
        import random

        from bench.common import squad_articles

        asked = [qa["question"] for a in squad_articles("dev") for p in a["paragraphs"]
                 for qa in p["qas"]]
        sets["squad-dev"] = [(q, False) for q in random.Random(0).sample(asked, 1000)]
    if args.trec:
        sets["trec-test"] = [(e.question, e.kind == "explanatory") for e in read_trec(args.trec)]
    results: dict[str, Any] = {"model": model.name, "threshold": model.threshold}
    rows = []
    for name, questions in sets.items():
        texts = [q for q, _ in questions]
        vectors = embedder.embed(texts)
        form = [question_type(q).kind == "quote" for q in texts]
        learned = [model.explanatory(q, v) >= model.threshold for q, v in
                   zip(texts, vectors, strict=True)]
        both = [f or (question_type(q).kind == "factoid" and m)
                for q, f, m in zip(texts, form, learned, strict=True)]
        results[name] = {way: measure(questions, said) for way, said in
                         (("form", form), ("model", learned), ("form+model", both))}
        for way, m in results[name].items():
            rows.append((f"{name}: {way}", f"{m['right']:.1%} right; found {m['found']} of "
                         f"{m['explanatory']}, took {m['taken']} of {m['n'] - m['explanatory']}",
                         ""))
    print_table("Which questions want an explanation", rows)
    print(f"wrote {save(args.name, results)}")


if __name__ == "__main__":
    main()
