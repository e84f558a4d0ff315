"""Follow-up questions in `ragctl chat`: is the answer still found after the rewrite?

Pairs come from the SQuAD dev split (never the report split): two questions about the same
paragraph that name the same proper-noun phrase; the second one becomes a follow-up by
putting a pronoun in the phrase's place ("When did the Normans conquer England?" then
"Who led the Normans?" -> "Who led them?"). For each pair, the gold answer must be in
the top 5 passages retrieved for: the original second question (the ceiling), the bare
follow-up (no rewrite), and the follow-up rewritten from the first question
(``ragctl.app.chat.rewrite``). Also: how often the rewrite gives back the original question.

Prints a table and writes bench/results/chat.json. Usage: python bench/chat.py [-n 200]
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import print_table, save
from bench.squad_index import squad_index

_RUN = re.compile(r"[A-Z][\w-]*(?:(?: of| the| and| de)* [A-Z0-9][\w-]*)*")
_BEFORE = {"the", "of", "in", "for", "to", "did", "does", "do", "was", "is", "were", "are",
           "by", "at", "on", "with", "about", "from", "during", "after", "before", "has",
           "have", "had", "when", "where", "why", "how", "what", "which", "who"}
_AFTER = {"in", "on", "at", "for", "to", "of", "with", "by", "from", "during", "after",
          "before", "and", "or", "was", "is", "were", "are", "did", "have", "has", "had",
          "do", "does", "use", "play", "win", "become", "get", "make", "take", "first"}


def _follow_up(question: str, phrase_start: int, phrase_end: int, plural: bool) -> str | None:
    """``question`` with the phrase at [start, end) made a pronoun, when it is a whole
    noun phrase: after a determiner, preposition or verb, before a preposition, verb or
    the end ("the" before it goes too; "X's" becomes "its")."""
    before = question[:phrase_start].rstrip()
    prev = before.rsplit(" ", 1)[-1].lower() if before else ""
    if not before or prev not in _BEFORE:
        return None
    after = question[phrase_end:]
    possessive = after.startswith("'s ")
    nxt = after[3:] if possessive else after
    word = re.match(r"\s*([\w?,]+)", nxt)
    if word is not None and word.group(1) not in ("?", ",") and \
            word.group(1).lower() not in _AFTER and not possessive:
        return None
    if prev == "the":
        before = before[: -len("the")].rstrip()
    pronoun = ("their" if plural else "its") if possessive else ("them" if plural else "it")
    if prev in ("did", "does", "do", "was", "is", "were", "are", "has", "have", "had",
                "when", "where", "why", "how", "what", "which", "who") and not possessive:
        pronoun = "they" if plural else "it"
    return f"{before} {pronoun} {nxt}" if possessive else f"{before} {pronoun}{after}"


def pairs(articles: list[dict[str, Any]], n: int, seed: int = 0) -> list[dict[str, Any]]:
    out = []
    for a in articles:
        for p in a["paragraphs"]:
            qs = p["qas"]
            for i, q1 in enumerate(qs):
                for q2 in qs[i + 1:]:
                    for m in _RUN.finditer(q2["question"]):
                        phrase = m.group(0)
                        if m.start() == 0 or len(phrase) < 3 or phrase not in q1["question"]:
                            continue
                        plural = phrase.endswith("s") and not phrase.endswith("ss")
                        follow = _follow_up(q2["question"], m.start(), m.end(), plural)
                        if follow is None:
                            continue
                        out.append({"first": q1["question"], "first_answer":
                                    q1["answers"][0]["text"], "second": q2["question"],
                                    "follow_up": follow,
                                    "answers": [x["text"] for x in q2["answers"]]})
                        break
    rng = random.Random(seed)
    return rng.sample(out, min(n, len(out)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=200)
    args = ap.parse_args()
    index, articles = squad_index("dev")
    from ragctl.app.chat import Turn, rewrite
    from ragctl.ask.retrieve import Retriever
    from ragctl.config import load_settings
    from ragctl.store.collection import Collection

    sample = pairs(articles, args.n)
    found = {"original": 0, "follow-up": 0, "rewritten": 0}
    same = 0
    rows = []
    with Collection.open(load_settings(index=index)) as c:
        retriever = Retriever(c)
        for p in sample:
            new = rewrite(p["follow_up"], [Turn(p["first"], p["first_answer"])])
            same += new.rstrip("?") .lower() == p["second"].rstrip("?").lower()
            row = {**p, "rewritten": new}
            for key, q in (("original", p["second"]), ("follow-up", p["follow_up"]),
                           ("rewritten", new)):
                hits = retriever.search(q, limit=5)
                ok = any(a.lower() in h.text.lower() for h in hits for a in p["answers"])
                found[key] += ok
                row[key] = ok
            rows.append(row)
    n = len(sample)
    print_table(f"follow-up questions, answer in the top 5 passages ({n} pairs, SQuAD dev)", [
        ("original question (ceiling)", f"{100 * found['original'] / n:.1f}%", ""),
        ("follow-up as typed", f"{100 * found['follow-up'] / n:.1f}%", ""),
        ("follow-up rewritten", f"{100 * found['rewritten'] / n:.1f}%", "≈ ceiling"),
        ("rewrite = original question", f"{100 * same / n:.1f}%", "")])
    save("chat", {"n": n, "found": {k: v / n for k, v in found.items()},
                  "rewrite_equals_original": same / n, "rows": rows})


if __name__ == "__main__":
    main()
