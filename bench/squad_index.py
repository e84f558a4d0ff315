"""Build (or reuse) a ragctl index of one SQuAD split, written out one paragraph per file."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

from bench.common import ROOT, squad_articles, write_paragraphs

BENCH_HOME = ROOT / "bench" / ".home"


def use_bench_home() -> Path:
    os.environ["RAGCTL_HOME"] = str(BENCH_HOME)
    os.environ["HF_HUB_OFFLINE"] = "1"
    BENCH_HOME.mkdir(parents=True, exist_ok=True)
    return BENCH_HOME


def squad_index(split: str) -> tuple[str, list[dict[str, Any]]]:
    """Index the split's paragraphs as index ``squad-<split>``; returns (name, articles)."""
    use_bench_home()
    from ragctl.config import load_settings
    from ragctl.index.indexer import Indexer
    from ragctl.store.collection import Collection

    articles = squad_articles(split)
    corpus = BENCH_HOME / "corpora" / f"squad-{split}"
    if not corpus.exists():
        write_paragraphs(articles, corpus)
    name = f"squad-{split}"
    with Collection.open(load_settings(index=name), create=True) as c:
        c.lock()
        Indexer(c).run([corpus])
    return name, articles


def squad_questions(articles: list[dict[str, Any]], n: int, seed: int = 0
                    ) -> list[dict[str, Any]]:
    """A fixed-seed sample of questions: {question, answers, title}."""
    qs = [{"question": q["question"], "answers": [a["text"] for a in q["answers"]],
           "title": a_["title"]}
          for a_ in articles for p in a_["paragraphs"] for q in p["qas"]]
    rng = random.Random(seed)
    return rng.sample(qs, min(n, len(qs)))


def nq_questions(part: str, n: int, seed: int = 0) -> list[dict[str, Any]]:
    """NQ-open oracle questions: 'train' = first 2,000 lines, 'report' = last 655."""
    import gzip
    import json

    from bench.common import SHARED

    path = SHARED / "data" / "nq_oracle" / "nq-open-oracle.jsonl.gz"
    with gzip.open(path, "rt") as f:
        rows = [json.loads(line) for line in f]
    rows = rows[:2000] if part == "train" else rows[2000:]
    rng = random.Random(seed)
    return rng.sample(rows, min(n, len(rows)))
