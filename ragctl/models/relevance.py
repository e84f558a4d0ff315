"""Stage 7: the relevance estimator (RE-RAG) — P(relevant | question, passage).

RE = P(true) / (P(true) + P(false)) (RE-RAG eq. 3) from an exported CTranslate2 model
(the shipped ``minilm-re``), or the fallback: the retriever's cosine similarity mapped to
[0, 1] by a logistic curve fitted on the SQuAD development split (``bench/calibrate.py``).
The scores rerank the retrieved passages, weight answers (eq. 4–6) and decide when the
documents do not hold an answer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragctl.errors import RagctlError
from ragctl.models.backends import Embedder, RelevanceEstimator
from ragctl.records import Hit

# Fitted by bench/calibrate.py on the SQuAD dev split (even articles): P(passage holds
# the answer | cosine similarity) ≈ sigmoid((cos - CENTER) / SCALE).
SIMILARITY_CENTER = 0.799
SIMILARITY_SCALE = 0.142
# The abstention threshold on the best kept passage's probability, chosen by
# bench/calibrate.py as the largest that wrongly abstains on ≤ 3% of answerable dev
# questions; a trained model carries its own (``abstain_threshold`` in its manifest).
SIMILARITY_THRESHOLD = 0.05


class SimilarityRelevance(RelevanceEstimator):
    """The fallback: the retriever's cosine similarity through a fitted logistic curve."""

    name = "similarity"
    threshold = SIMILARITY_THRESHOLD

    def __init__(self, *, center: float = SIMILARITY_CENTER, scale: float = SIMILARITY_SCALE,
                 embedder: Embedder | None = None) -> None:
        self.center = center
        self.scale = scale
        self.embedder = embedder  # only needed to score texts that are not retrieved hits

    def _curve(self, sims: Sequence[float]) -> np.ndarray:
        s = np.asarray(sims, dtype=np.float64)
        return np.asarray(1.0 / (1.0 + np.exp(-(s - self.center) / self.scale)),
                          dtype=np.float32)

    def score(self, question: str, hits: Sequence[Hit]) -> np.ndarray:
        return self._curve([h.similarity if h.similarity is not None else 0.0 for h in hits])

    def score_texts(self, question: str, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0, dtype=np.float32)
        if self.embedder is None:
            raise RagctlError("the similarity relevance estimator needs an embedder "
                              "to score texts")
        vecs = self.embedder.embed([question, *texts])
        return self._curve((vecs[1:] @ vecs[0]).tolist())


class CT2Relevance(RelevanceEstimator):
    """An exported bi-encoder, seq2seq or decoder model (see ``ragctl.ct2``)."""

    def __init__(self, path: Path, **kwargs: Any) -> None:
        from ragctl.models.ct2 import CT2Scorer

        self.scorer = CT2Scorer(path, **kwargs)
        self.name = str(self.scorer.manifest.get("name", Path(path).name))
        self.threshold = float(self.scorer.manifest.get("abstain_threshold",
                                                        SIMILARITY_THRESHOLD))

    def score_texts(self, question: str, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0, dtype=np.float32)
        return self.scorer.predict([(question, t) for t in texts], refine=True)

    def close(self) -> None:
        self.scorer.close()


def re_logit(p: float) -> float:
    """σ(RE) = log(RE / (1 - RE)) (RE-RAG eq. 4), clipped away from 0 and 1."""
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def re_weights(probs: Sequence[float]) -> np.ndarray:
    """P_RE over a question's passages: softmax of the RE logits (RE-RAG eq. 5)."""
    z = np.array([re_logit(p) for p in probs], dtype=np.float64)
    if z.size == 0:
        return z
    z -= z.max()
    w = np.exp(z)
    return w / w.sum()
