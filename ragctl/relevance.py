"""Stage 7: the relevance estimator (RE-RAG) — P(relevant | question, passage).

RE = P(true) / (P(true) + P(false)) (RE-RAG eq. 3) from an exported CTranslate2 model,
or, until one is trained, the retriever's cosine similarity mapped to [0, 1] by a
logistic curve fitted on the SQuAD development split (``bench/calibrate.py``).
The scores rerank the retrieved passages, weight answers (eq. 4–6) and decide when the
documents do not hold an answer.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .retrieve import Hit
from .text import passage_text

# Fitted by bench/calibrate.py on the SQuAD dev split (even articles): P(passage holds
# the answer | cosine similarity) ≈ sigmoid((cos - CENTER) / SCALE).
SIMILARITY_CENTER = 0.799
SIMILARITY_SCALE = 0.142
# The abstention threshold on the best kept passage's probability, chosen by
# bench/calibrate.py as the largest that wrongly abstains on ≤ 3% of answerable dev
# questions; a trained model carries its own (``abstain_threshold`` in its manifest).
SIMILARITY_THRESHOLD = 0.05


class RelevanceEstimator(ABC):
    """Scores (question, passage) pairs with a probability of relevance."""

    name: str
    threshold: float = SIMILARITY_THRESHOLD  # abstain below this best probability

    @abstractmethod
    def score(self, question: str, hits: Sequence[Hit]) -> np.ndarray:
        """One probability in [0, 1] per hit."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release native resources."""


class SimilarityRelevance(RelevanceEstimator):
    """The fallback: the retriever's cosine similarity through a fitted logistic curve."""

    name = "similarity"

    def __init__(self, *, center: float = SIMILARITY_CENTER,
                 scale: float = SIMILARITY_SCALE) -> None:
        self.center = center
        self.scale = scale

    def score(self, question: str, hits: Sequence[Hit]) -> np.ndarray:
        sims = np.array([h.similarity if h.similarity is not None else 0.0 for h in hits],
                        dtype=np.float64)
        return np.asarray(1.0 / (1.0 + np.exp(-(sims - self.center) / self.scale)),
                          dtype=np.float32)


class CT2Relevance(RelevanceEstimator):
    """An exported cross-encoder, seq2seq or decoder model (see ``ragctl.ct2``)."""

    def __init__(self, path: Path, **kwargs: Any) -> None:
        from .ct2 import CT2Scorer

        self.scorer = CT2Scorer(path, **kwargs)
        self.name = str(self.scorer.manifest.get("name", Path(path).name))
        self.threshold = float(self.scorer.manifest.get("abstain_threshold",
                                                        SIMILARITY_THRESHOLD))

    def score(self, question: str, hits: Sequence[Hit]) -> np.ndarray:
        if not hits:
            return np.zeros(0, dtype=np.float32)
        return self.scorer.predict([(question, passage_text(h.title, h.text)) for h in hits],
                                   refine=True)

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
