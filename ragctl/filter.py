"""Stage 8: the context filter (FilCo) — keep the sentences that support an answer.

Backends score every sentence of the kept passages against the question:
- the fallback: question–sentence embedding similarity plus the share of the
  question's content words the sentence contains;
- an exported CTranslate2 sentence scorer (the shipped ``minilm-filter``), extractive, so
  that every kept sentence is a real sentence of a real document and citations stay exact.
The top ``top_m`` sentences whose score reaches ``threshold`` are kept (at least one;
:meth:`ragctl.backends.ContextFilter.select`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .backends import ContextFilter, Embedder
from .records import Sentence
from .text import overlap

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
        from .ct2 import CT2Scorer

        self.scorer = CT2Scorer(path, **kwargs)
        self.name = str(self.scorer.manifest.get("name", Path(path).name))

    def score(self, question: str, sentences: Sequence[Sentence]) -> np.ndarray:
        return self.scorer.predict([(question, s.text) for s in sentences], refine=True)

    def close(self) -> None:
        self.scorer.close()
