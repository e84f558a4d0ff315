"""Answerable, on-topic unanswerable and off-topic questions over one SQuAD split.

The on-topic unanswerable questions are made by deleting, from the indexed corpus, every
sentence that holds the answer of a sample of the split's questions (and keeping only
those whose answer then appears nowhere in the corpus): the documents still talk about
the subject, but no longer say the answer. The answerable questions come from paragraphs
left whole. The off-topic questions are NQ-open questions, which the SQuAD corpus does not
cover (first 2,000 lines for dev, the last 655 for report).

``holes_index(split)`` builds and indexes that corpus as ``squad-<split>-holes``;
``question_sets(split)`` gives the three sets. Used by bench/calibrate.py --reader (dev)
and bench/ask.py (report).

The span reader trains on the dev split's questions, holes included (the answer's
paragraph with its answer sentences deleted, as a no-answer example), so on the dev sets
above its scores are those of questions it has learnt. ``held_out(...)`` gives the dev
questions its training held out (``val_fraction`` of them, by question); with ``only=``
the sets and the index are built from those alone (``squad-dev-heldout-all-holes``, and
the whole dev index for the answerable ones), which is what bench/reader.py fits
answerability on.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from bench.common import squad_articles
from bench.squad_index import BENCH_HOME, nq_questions, use_bench_home

UNANSWERABLE = 300  # questions whose answer sentences are deleted, per split


@dataclass(frozen=True)
class HeldOut:
    """The questions a model's training did not see: SQuAD question ids, NQ question texts."""

    squad: frozenset[str]
    nq: frozenset[str]


def held_out(data: list[str], *, seed: int = 0, val_fraction: float = 0.05) -> HeldOut:
    """The dev questions that ``ragctl train reader`` held out for validation, rebuilt the
    way the trainer builds them (same data, seed and fraction)."""
    from pathlib import Path

    from bench.common import SHARED
    from ragctl.eval.datasets import load
    from ragctl.training.reader import SPANS_SUFFIXES, span_examples, split_by_group

    paths = [Path(p) for p in data]
    _, val = split_by_group(span_examples(paths, split="dev", seed=seed), val_fraction, seed)
    ids = {ex.id.split("-neg")[0] for ex in val}
    squad: set[str] = set()
    nq: set[str] = set()
    sources = [p for p in paths if not str(p).endswith(SPANS_SUFFIXES)]
    if len(sources) < len(paths):  # examples from bench/reader_data.py: the shared dev files'
        sources += [SHARED / "data" / "squad" / "dev-v1.1.json",
                    SHARED / "data" / "nq_oracle" / "nq-open-oracle.jsonl.gz"]
    for path in dict.fromkeys(sources):
        ds = load(path, split="dev")
        for ex in ds.examples:
            if ex.id in ids:
                (squad.add(ex.id) if ds.name == "squad" else nq.add(ex.question))
    return HeldOut(frozenset(squad), frozenset(nq))


def _plan(split: str, seed: int = 0, only: HeldOut | None = None
          ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """(articles with the answer sentences deleted, answerable questions, unanswerable);
    with ``only``, from those questions alone: every paragraph holding one gets a hole for
    one of them, and all of them are the answerable questions, asked of the split's
    whole index (``answerable_index``): the more of each, the steadier the threshold."""
    from ragctl.index.sentences import SentenceSplitter
    from ragctl.text import contains_answer

    articles = squad_articles(split)
    rng = random.Random(seed)
    paragraphs = [(ai, pi) for ai, a in enumerate(articles) for pi in range(len(a["paragraphs"]))]
    if only is not None:
        paragraphs = [(ai, pi) for ai, pi in paragraphs
                      if any(q["id"] in only.squad for q in articles[ai]["paragraphs"][pi]["qas"])]
    holes = rng.sample(paragraphs, min(UNANSWERABLE, len(paragraphs))) if only is None \
        else paragraphs
    splitter = SentenceSplitter()
    texts = {(ai, pi): p["context"] for ai, a in enumerate(articles)
             for pi, p in enumerate(a["paragraphs"])}
    chosen: list[tuple[tuple[int, int], dict[str, Any]]] = []
    for key in holes:
        qas = articles[key[0]]["paragraphs"][key[1]]["qas"]
        qa = rng.choice([q for q in qas if only is None or q["id"] in only.squad])
        answers = [a["text"] for a in qa["answers"]]
        kept = [s.text for s in splitter.split(texts[key]) if not contains_answer(s.text, answers)]
        texts[key] = " ".join(kept)
        chosen.append((key, {"question": qa["question"], "answers": answers,
                             "title": articles[key[0]]["title"]}))
    corpus_text = list(texts.values())
    unanswerable = [q for _, q in chosen
                    if not any(contains_answer(t, q["answers"]) for t in corpus_text)]
    whole = {k for k, _ in chosen} if only is None else set()
    answerable = [{"question": q["question"], "answers": [a["text"] for a in q["answers"]],
                   "title": articles[ai]["title"]}
                  for (ai, pi) in paragraphs if (ai, pi) not in whole
                  for q in articles[ai]["paragraphs"][pi]["qas"]
                  if only is None or q["id"] in only.squad]
    edited = []
    for ai, a in enumerate(articles):
        paras = [{"context": texts[(ai, pi)]} for pi in range(len(a["paragraphs"]))
                 if texts[(ai, pi)].strip()]
        edited.append({"title": a["title"], "paragraphs": paras})
    return edited, answerable, unanswerable


def holes_index(split: str, only: HeldOut | None = None) -> str:
    """Index the split with the answer sentences of its unanswerable questions deleted."""
    use_bench_home()
    from bench.common import write_paragraphs
    from ragctl.config import load_settings
    from ragctl.index.indexer import Indexer
    from ragctl.store.collection import Collection

    name = f"squad-{split}-holes" if only is None else f"squad-{split}-heldout-all-holes"
    corpus = BENCH_HOME / "corpora" / name
    if not corpus.exists():
        edited, _, _ = _plan(split, only=only)
        write_paragraphs(edited, corpus)
    with Collection.open(load_settings(index=name), create=True) as c:
        c.lock()
        Indexer(c).run([corpus])
    return name


def answerable_index(split: str, only: HeldOut | None = None) -> str:
    """The index the answerable questions are asked of: the holes index, or with ``only``
    (whose holes are in every paragraph of those questions) the split's whole index."""
    if only is None:
        return holes_index(split)
    from bench.squad_index import squad_index

    return squad_index(split)[0]


def question_sets(split: str, n: int = 300, seed: int = 0, only: HeldOut | None = None
                  ) -> dict[str, list[dict[str, Any]]]:
    """{"answerable": …, "on-topic": …, "off-topic": …}, ``n`` of each at most."""
    _, answerable, unanswerable = _plan(split, only=only)
    rng = random.Random(seed)
    nq = nq_questions("train" if split == "dev" else "report", 10_000 if only else n, seed=seed)
    if only is not None:
        nq = [r for r in nq if r["question"] in only.nq][:n]
    return {"answerable": rng.sample(answerable, min(n, len(answerable))),
            "on-topic": unanswerable[:n],
            "off-topic": [{"question": r["question"], "answers": r["answers"], "title": ""}
                          for r in nq]}
