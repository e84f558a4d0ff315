"""Long answers (`ask --long`) against one prompt over the top-5 passages, on HotpotQA.

The 100 HotpotQA distractor questions' paragraphs (10 each, 2 gold) are indexed together
as one corpus, one Markdown file per paragraph titled by its article. For each question
and word budget, both methods answer, and we measure:
- supporting-fact recall: the share of gold supporting sentences that the answer both
  includes (an answer sentence its citation supports) and cites (a source sentence that
  matches the gold sentence);
- citation support rate: the share of answer sentences their own citations support;
- words, and per-stage latency of the long pipeline.

Prints a table and writes bench/results/long.json. Usage: python bench/long.py [-n 100]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import SHARED, median, print_table, save
from bench.squad_index import BENCH_HOME, use_bench_home

BASELINE_SHOT = (
    "Context: [1] The Nile is about 6,650 km long. [2] It flows north through eleven "
    "countries. [3] Cairo lies on its banks.\n"
    "Question: What do we know about the Nile?\n"
    "Answer: The Nile is about 6,650 km long [1] and flows north through eleven countries "
    "[2]. Cairo lies on its banks [3].\n\n"
)


def load_hotpot() -> list[dict[str, Any]]:
    path = SHARED / "data" / "hotpotqa" / "hotpot_dev_distractor_100.json"
    if not path.exists():
        sys.exit(f"bench: {path} not found")
    return list(json.loads(path.read_text()))


def write_corpus(rows: list[dict[str, Any]], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for row in rows:
        for title, sents in zip(row["context"]["title"], row["context"]["sentences"],
                                strict=True):
            name = re.sub(r"[^\w.-]+", "_", title)[:80] + ".md"
            f = out / name
            if not f.exists():
                f.write_text(f"# {title}\n\n" + "".join(sents).strip() + "\n")


def gold_sentences(row: dict[str, Any]) -> list[str]:
    ctx = dict(zip(row["context"]["title"], row["context"]["sentences"], strict=True))
    out = []
    for title, k in zip(row["supporting_facts"]["title"], row["supporting_facts"]["sent_id"],
                        strict=True):
        if title in ctx and k < len(ctx[title]):
            out.append(ctx[title][k].strip())
    return out


def score(answer: str, sources: dict[int, str], golds: list[str], checker: Any
          ) -> tuple[float, float]:
    """(supporting-fact recall, citation support rate): the same measure as ragctl eval."""
    from ragctl.eval.evaluate import supporting_fact_recall

    return supporting_fact_recall(answer, sources, golds, checker)


def baseline(pipe: Any, question: str, words: int) -> tuple[str, dict[int, str], float]:
    """One prompt over the top-5 passages (reranked), capped at the word budget."""
    import numpy as np

    from ragctl.ask.longform import clip_words
    from ragctl.ask.verify import verify

    t = time.perf_counter()
    hits = pipe.retriever.search(question, limit=20)
    probs = pipe.relevance.score(question, hits)
    kept = [hits[i] for i in np.argsort(-probs, kind="stable")[:5]]
    per = pipe.collection.store.sentences_of([h.passage_id for h in kept])
    context = [s for h in kept for s in per[h.passage_id]]
    numbered = " ".join(f"[{i}] {s.text}" for i, s in enumerate(context, 1))
    prompt = BASELINE_SHOT + f"Context: {numbered}\nQuestion: {question}\nAnswer:"
    out = pipe.generator.complete(prompt, max_tokens=min(2 * words, 600)).text.strip()
    out = clip_words(out, words)
    checked = verify(out, context, pipe.checker)
    text = " ".join(s.text + "".join(f" [{n}]" for n in s.citations) for s in checked.sentences)
    sources = {i: s.text for i, s in enumerate(context, 1)}
    return text, sources, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--questions", type=int, default=100)
    ap.add_argument("--budgets", type=int, nargs="*", default=[100, 400])
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip the one-prompt baseline (its numbers do not change with ragctl)")
    args = ap.parse_args()

    use_bench_home()
    rows = load_hotpot()[: args.questions]
    corpus = BENCH_HOME / "corpora" / "hotpot100"
    write_corpus(rows, corpus)
    from ragctl.ask.pipeline import LongOptions, Pipeline
    from ragctl.config import load_settings
    from ragctl.index.indexer import Indexer
    from ragctl.store.collection import Collection

    settings = load_settings(index="hotpot100")
    with Collection.open(settings, create=True) as c:
        c.lock()
        Indexer(c).run([corpus])
    result: dict[str, Any] = {"dataset": "HotpotQA dev distractor, first 100", "budgets": {}}
    t0 = time.perf_counter()
    with Collection.open(settings) as c, Pipeline(c) as pipe:
        pipe.load()
        result["generator"] = pipe.generator.name
        for words in args.budgets:
            rec_l, sup_l, rec_b, sup_b, w_l, w_b = [], [], [], [], [], []
            facets: list[float] = []
            nuggets: list[float] = []
            stages: dict[str, list[float]] = {}
            fallbacks = 0
            for i, row in enumerate(rows):
                golds = gold_sentences(row)
                la = pipe.ask_long(row["question"], LongOptions(words=words, abstain=False))
                srcs = {s.number: s.text for s in la.sources}
                r, s = score(la.answer, srcs, golds, pipe.checker)
                rec_l.append(r)
                sup_l.append(s)
                w_l.append(la.words)
                facets.append(len(la.facets))
                nuggets.append(len(la.nuggets))
                fallbacks += la.fallbacks
                for k, v in la.timings.items():
                    stages.setdefault(k, []).append(v)
                if not args.no_baseline:
                    text, srcs, secs = baseline(pipe, row["question"], words)
                    r, s = score(text, srcs, golds, pipe.checker)
                    rec_b.append(r)
                    sup_b.append(s)
                    w_b.append(len(re.sub(r"\[\d+\]", "", text).split()))
                    stages.setdefault("baseline_total", []).append(secs)
                if (i + 1) % 20 == 0:
                    print(f"{words} words: {i + 1}/{len(rows)}, "
                          f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)

            def mean(xs: list[float]) -> float:
                return sum(xs) / len(xs) if xs else 0.0

            result["budgets"][str(words)] = {
                "long": {"supporting_fact_recall": mean(rec_l), "citation_support": mean(sup_l),
                         "words": mean(w_l), "fallback_facets": fallbacks,
                         "facets_median": median(facets), "nuggets_median": median(nuggets)},
                "latency_p50_ms": {k: median(v) * 1e3 for k, v in stages.items()},
            }
            if not args.no_baseline:
                result["budgets"][str(words)]["baseline_top5"] = {
                    "supporting_fact_recall": mean(rec_b), "citation_support": mean(sup_b),
                    "words": mean(w_b)}
    rows_out = []
    for words, b in result["budgets"].items():
        for name in ("long", "baseline_top5"):
            if name not in b:
                continue
            v = b[name]
            facets = (f"  facets {v['facets_median']:.0f} (median), nuggets "
                      f"{v['nuggets_median']:.0f}") if "facets_median" in v else ""
            rows_out.append((f"{name}, {words} words",
                             f"recall {100 * v['supporting_fact_recall']:.1f}  "
                             f"citation support {100 * v['citation_support']:.1f}  "
                             f"words {v['words']:.0f}{facets}", ""))
    print_table(f"HotpotQA supporting facts, {len(rows)} questions ({result['generator']})",
                rows_out)
    for words, b in result["budgets"].items():
        lat = ", ".join(f"{k} {v:.0f}" for k, v in b["latency_p50_ms"].items())
        print(f"latency p50 ms at {words} words: {lat}")
    print(f"\nwrote {save('long', result)}")


if __name__ == "__main__":
    main()
