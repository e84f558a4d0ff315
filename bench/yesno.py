"""Yes/no and "A or B" questions on the SQuAD development split: how many ask gets right.

The yes/no questions (bench/yesno-dev.json) were written by reading the first paragraphs
of development-split articles, half of them answered "no"; the "not stated" ones ask
about those articles what none of their paragraphs says (ask should answer "Not found in
your documents", and a "No" there is wrong); the "A or B" questions are the
development split's own questions of that form (their gold answer is one of the two, or
the question is answered by the reader). Prints a table and writes
bench/results/yesno.json. Usage: python bench/yesno.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import save
from bench.squad_index import squad_index

HERE = Path(__file__).resolve().parent


def main() -> None:
    name, articles = squad_index("dev")
    from ragctl.ask.pipeline import AskOptions, Pipeline
    from ragctl.ask.question import question_type
    from ragctl.config import load_settings
    from ragctl.store.collection import Collection
    from ragctl.text import exact_match

    dev = json.loads((HERE / "yesno-dev.json").read_text())
    yes_no = dev["questions"]
    choice = [(q["question"], [a["text"] for a in q["answers"]])
              for a_ in articles for p in a_["paragraphs"] for q in p["qas"]
              if question_type(q["question"]).kind == "choice"]
    settings = load_settings(index=name)
    rows: list[dict[str, object]] = []
    with Collection.open(settings) as c, Pipeline(c) as pipe:
        opts = AskOptions.from_settings(settings)
        for q in yes_no:
            a = pipe.ask(q["q"], opts)
            rows.append({"set": "yes/no", "question": q["q"], "gold": q["a"],
                         "answer": a.answer_text, "right": a.answer_text.lower() == q["a"],
                         "rule": (a.candidates[0].get("rule") if a.candidates else None)})
        # yes/no questions the documents do not answer: right only when ask says so
        for q in dev.get("not_stated", []):
            a = pipe.ask(q["q"], opts)
            rows.append({"set": "not stated", "question": q["q"], "gold": q["a"],
                         "answer": "" if a.abstained else a.answer_text, "right": a.abstained,
                         "rule": (a.candidates[0].get("rule") if a.candidates else None)})
        for question, golds in choice:
            a = pipe.ask(question, opts)
            rows.append({"set": "A or B", "question": question, "gold": golds[0],
                         "answer": a.answer_text, "right": bool(exact_match(a.answer_text, golds)),
                         "rule": (a.candidates[0].get("rule") if a.candidates else None)})
    summary = {}
    print(f"{'set':<10} {'questions':>9} {'right':>6} {'said yes':>9}")
    for part in ("yes/no", "not stated", "A or B"):
        mine = [r for r in rows if r["set"] == part]
        said_yes = sum(1 for r in mine if str(r["answer"]).lower() == "yes")
        right = sum(1 for r in mine if r["right"])
        summary[part] = {"questions": len(mine), "right": right, "said_yes": said_yes}
        print(f"{part:<10} {len(mine):>9} {right:>6} {said_yes:>9}")
    print(f"wrote {save('yesno', {'summary': summary, 'rows': rows})}")


if __name__ == "__main__":
    main()
