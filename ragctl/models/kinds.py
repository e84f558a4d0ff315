"""The question-kind model: whether a question wants a short answer (a name, a date, a
number: a span) or an explanation (how something is done, why, what something is or
does: whole sentences), from its embedding and its words (``models/minilm-kinds``,
trained by :mod:`ragctl.training.kinds` on a public question-classification set). NumPy
only (:class:`~ragctl.models.softmax.SoftmaxHead`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ragctl.models.softmax import SoftmaxHead

KINDS: tuple[str, ...] = ("factoid", "explanatory")


@dataclass(eq=False)
class KindModel(SoftmaxHead):
    """P(explanatory) of a question; ``threshold``: from this probability on, the question
    is answered with sentences."""

    name: str = "minilm-kinds"
    kind = "kinds"

    def explanatory(self, question: str, vector: np.ndarray) -> float:
        """The probability that ``question`` (embedded as ``vector``) wants an
        explanation."""
        p = self.probabilities(self.features([question], vector[None, :]))[0]
        return float(p[self.labels.index("explanatory")])
