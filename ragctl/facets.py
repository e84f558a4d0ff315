"""Long answers, stages 2–3: cluster nuggets into facets, and rank the facets (GINGER §3).

Clustering is average-linkage agglomerative clustering of the nugget embeddings with a
cosine-distance threshold (the sensitivity setting): near-duplicate nuggets from
different documents fall into one facet and keep all their sources. With fewer than
four nuggets each nugget is its own facet, as GINGER does. Facets are ranked against
the question by the relevance estimator over their joined nuggets, or by BM25.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .nuggets import Nugget


@dataclass(frozen=True)
class Facet:
    nuggets: tuple[Nugget, ...]
    score: float = 0.0

    @property
    def text(self) -> str:
        return " ".join(n.text for n in self.nuggets)


def cluster(vectors: np.ndarray, *, threshold: float = 0.35, min_items: int = 4) -> list[list[int]]:
    """Average-linkage clusters of unit vectors; merge while mean distance < threshold."""
    n = len(vectors)
    if n < min_items:
        return [[i] for i in range(n)]
    dist = 1.0 - np.clip(vectors @ vectors.T, -1.0, 1.0)
    clusters: list[list[int]] = [[i] for i in range(n)]
    while len(clusters) > 1:
        best, pair = math.inf, (0, 0)
        for a in range(len(clusters)):
            for b in range(a + 1, len(clusters)):
                d = float(dist[np.ix_(clusters[a], clusters[b])].mean())
                if d < best:
                    best, pair = d, (a, b)
        if best >= threshold:
            break
        a, b = pair
        clusters[a] = sorted(clusters[a] + clusters[b])
        del clusters[b]
    return clusters


def _terms(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def bm25_scores(question: str, docs: Sequence[str], *, k1: float = 1.2,
                b: float = 0.75) -> np.ndarray:
    """Okapi BM25 of each doc against the question, IDF over these docs."""
    tokenized = [_terms(d) for d in docs]
    n = len(docs)
    avg = sum(len(t) for t in tokenized) / n if n else 0.0
    df = Counter(w for t in tokenized for w in set(t))
    scores = np.zeros(n, dtype=np.float32)
    for i, t in enumerate(tokenized):
        tf = Counter(t)
        for w in set(_terms(question)):
            if w not in tf:
                continue
            idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
            scores[i] += idf * tf[w] * (k1 + 1) / (tf[w] + k1 * (1 - b + b * len(t) / avg))
    return scores
