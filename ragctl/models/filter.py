"""Stage 8: the context filter (FilCo) — keep the sentences that support an answer.

Backends score every sentence of the kept passages against the question:
- the fallback: question–sentence embedding similarity plus the share of the
  question's content words the sentence contains;
- an exported CTranslate2 sentence scorer (the shipped ``minilm-filter``), extractive, so
  that every kept sentence is a real sentence of a real document and citations stay exact.
The top ``top_m`` sentences whose score reaches ``threshold`` are kept (at least one;
:meth:`ragctl.models.backends.ContextFilter.select`). Before scoring, near-duplicate passages are
collapsed into one (:func:`collapse_duplicates`) and overlong sentences are windowed
(:func:`split_long`), so the context can hold the answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragctl.models.backends import ContextFilter, Embedder
from ragctl.records import Sentence
from ragctl.text import overlap

SIMILARITY_WEIGHT = 0.7  # the fallback's share of cosine similarity (the rest: word overlap)


class SimilarityFilter(ContextFilter):
    """The fallback: w · cos(question, sentence) + (1 − w) · content-word overlap."""

    name = "similarity"

    def __init__(self, embedder: Embedder, *, weight: float = SIMILARITY_WEIGHT) -> None:
        self.embedder = embedder
        self.weight = weight

    def score(self, question: str, sentences: Sequence[Sentence]) -> np.ndarray:
        vecs = self.embedder.embed([question] + [s.text for s in sentences])
        cos = vecs[1:] @ vecs[0]
        lex = np.array([overlap(question, s.text) for s in sentences], dtype=np.float32)
        return np.asarray(self.weight * cos + (1 - self.weight) * lex, dtype=np.float32)


class CT2Filter(ContextFilter):
    """An exported CTranslate2 sentence scorer: P(sentence supports the answer)."""

    def __init__(self, path: Path, **kwargs: Any) -> None:
        from ragctl.models.ct2 import CT2Scorer

        self.scorer = CT2Scorer(path, **kwargs)
        self.name = str(self.scorer.manifest.get("name", Path(path).name))

    def score(self, question: str, sentences: Sequence[Sentence]) -> np.ndarray:
        return self.scorer.predict([(question, s.text) for s in sentences], refine=True)

    def close(self) -> None:
        self.scorer.close()


# ------------------------------------------------------------------ preparing the context

def _shingles(text: str, n: int = 3) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", text.lower())
    return {tuple(words[i:i + n]) for i in range(max(1, len(words) - n + 1))}


def collapse_duplicates(texts: Sequence[str], k: int, *, threshold: float = 0.8
                        ) -> tuple[list[int], dict[int, int]]:
    """The first ``k`` texts that do not repeat an earlier kept one (word-trigram Jaccard
    ≥ ``threshold``: the same mail quoted twice, a page saved in two formats), and for each
    repeat met on the way, the kept text it repeats."""
    kept: list[int] = []
    shingles: list[set[tuple[str, ...]]] = []
    dups: dict[int, int] = {}
    for i, text in enumerate(texts):
        if len(kept) >= k:
            break
        sh = _shingles(text)
        same = next((kept[j] for j, other in enumerate(shingles)
                     if sh and len(sh & other) / len(sh | other) >= threshold), None)
        if same is None:
            kept.append(i)
            shingles.append(sh)
        else:
            dups[i] = same
    return kept, dups


def split_long(sentences: Sequence[Sentence], *, max_words: int = 40, size: int = 30,
               stride: int = 15) -> list[Sentence]:
    """Sentences of more than ``max_words`` words (table dumps, receipts, run-on text) as
    overlapping windows of ``size`` words, each with its own source offsets, so a short
    line inside them can be found and cited."""
    out: list[Sentence] = []
    for s in sentences:
        words = list(re.finditer(r"\S+", s.text))
        if len(words) <= max_words:
            out.append(s)
            continue
        starts = [*range(0, len(words) - size, stride), max(0, len(words) - size)]
        for k in dict.fromkeys(starts):
            out.append(s.part(words[k].start(), words[min(k + size, len(words)) - 1].end()))
    return out


def joined(pieces: Sequence[Sentence], whole: dict[int, Sentence]) -> list[Sentence]:
    """``pieces`` with the windows of one stored sentence (``split_long``) made one piece,
    from the first window's start to the last one's end, in place of the first: quoted
    together they would repeat the words they share. ``whole``: sentence id → the stored
    sentence."""
    out: list[Sentence] = []
    for p in pieces:
        s = whole.get(p.id)
        same = next((i for i, q in enumerate(out) if q.id == p.id), None)
        if same is None or s is None:
            out.append(p)
            continue
        at = [(i, i + len(x.text)) for x in (out[same], p) for i in [s.text.find(x.text)]]
        if all(i >= 0 for i, _ in at):
            out[same] = s.part(min(i for i, _ in at), max(j for _, j in at))
    return out
