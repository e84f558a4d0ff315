"""What each kind of model must do, in one place.

The stages call models only through these small abstract classes; the registry in
:mod:`ragctl.models` maps names to implementations (the shipped ones, the similarity
fallbacks, exported CTranslate2 models, and the fakes the tests register). Each has one
batch method; the base class does the batching and the bookkeeping around it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ragctl.records import Hit, ScoredSentence, Sentence
from ragctl.text import passage_text


class Backend(ABC):  # noqa: B024 - the kinds below add the abstract methods
    """Anything the registry loads: it has a name and may hold native resources."""

    name: str = ""

    def close(self) -> None:  # noqa: B027 - most backends hold nothing
        """Release native resources (llama.cpp, CTranslate2); nothing by default."""

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Embedder(Backend):
    """Maps texts to L2-normalized float32 vectors of a fixed dimension."""

    dim: int

    @abstractmethod
    def _embed(self, texts: list[str]) -> np.ndarray:
        """Embed one batch; may return unnormalized vectors."""

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i in range(0, len(texts), batch_size):
            out[i:i + batch_size] = self._embed(list(texts[i:i + batch_size]))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return (out / norms).astype(np.float32)


class RelevanceEstimator(Backend):
    """P(relevant | question, passage) (RE-RAG); ``threshold`` is where ask abstains."""

    threshold: float = 0.05

    @abstractmethod
    def score_texts(self, question: str, texts: Sequence[str]) -> np.ndarray:
        """One probability in [0, 1] per text."""

    def score(self, question: str, hits: Sequence[Hit]) -> np.ndarray:
        """One probability per retrieved passage (its title, then its text)."""
        if not hits:
            return np.zeros(0, dtype=np.float32)
        return self.score_texts(question, [passage_text(h.title, h.text) for h in hits])


class ContextFilter(Backend):
    """Scores sentences by how well they support an answer (FilCo) and keeps the best."""

    @abstractmethod
    def score(self, question: str, sentences: Sequence[Sentence]) -> np.ndarray:
        """A support score per sentence (higher keeps)."""

    def select(self, question: str, sentences: Sequence[Sentence], *, threshold: float,
               top_m: int) -> list[ScoredSentence]:
        """Score all sentences and mark the kept ones (the top ``top_m`` reaching
        ``threshold``, at least one); the input order is preserved."""
        if not sentences:
            return []
        scores = self.score(question, sentences)
        order = np.argsort(-scores, kind="stable")
        keep = {int(i) for i in order[:top_m] if scores[i] >= threshold}
        if not keep:
            keep = {int(order[0])}
        return [ScoredSentence(s, float(scores[i]), i in keep)
                for i, s in enumerate(sentences)]


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    first_token_seconds: float

    @property
    def tokens_per_second(self) -> float:
        gen = self.seconds - self.first_token_seconds
        return (self.completion_tokens - 1) / gen if gen > 0 and self.completion_tokens > 1 \
            else 0.0


class Generator(Backend):
    """A language model that completes prompts greedily and scores continuations."""

    @abstractmethod
    def complete(self, prompt: str, *, max_tokens: int = 48, stop: Sequence[str] = ("\n",),
                 on_token: Callable[[str], None] | None = None) -> Completion:
        """Greedy completion, streamed piece by piece to ``on_token``."""

    @abstractmethod
    def logprob(self, prompt: str, continuation: str) -> float:
        """log P(continuation | prompt), summed over the continuation's tokens."""

    @abstractmethod
    def count_tokens(self, text: str) -> int:
        """How many tokens ``text`` is to this model."""


class SupportChecker(Backend):
    """How well each evidence sentence supports a claim."""

    @abstractmethod
    def support(self, claim: str, evidence: Sequence[str]) -> np.ndarray:
        """A support score in [0, 1] of ``claim`` by each evidence sentence."""


class Entailment(Backend):
    """Whether each premise entails, is neutral to, or contradicts a hypothesis (a
    statement, or a yes/no question: entailed is "yes", contradicted is "no")."""

    labels = ("entailment", "neutral", "contradiction")

    @abstractmethod
    def _probs(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """Probabilities, one row of three per (premise, hypothesis) pair."""

    def probs(self, premises: Sequence[str], hypothesis: str, *, batch_size: int = 16
              ) -> np.ndarray:
        """P(entailment), P(neutral), P(contradiction) of ``hypothesis`` given each premise."""
        out = np.zeros((len(premises), 3), dtype=np.float32)
        for i in range(0, len(premises), batch_size):
            chunk = [(p, hypothesis) for p in premises[i:i + batch_size]]
            out[i:i + len(chunk)] = self._probs(chunk)
        return out
