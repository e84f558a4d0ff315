"""Stage 10: resolve citations and check that each answer sentence is supported.

Every ``[n]`` in the generated answer must name one of the numbered sentences the model
was given; other numbers are removed and reported. Each answer sentence is then scored
against the sentences it cites: the share of its content words found there (lexical)
blended with embedding similarity. A cited sentence that does not support the claim is
dropped from its citations; a claim left with no supporting citation is attributed to
the given sentence that supports it best, if one does, and otherwise marked unsupported.
The checker is a class of its own so a better one (an NLI model) can replace it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ragctl.models.backends import Embedder, SupportChecker
from ragctl.records import AnswerSentence, Citation, Sentence
from ragctl.text import STOPWORDS, normalize_answer, strip_citations

_CITE = re.compile(r"\s*\[(\d{1,3})\]")


@dataclass
class Verified:
    text: str
    sentences: list[AnswerSentence] = field(default_factory=list)
    removed_citations: list[int] = field(default_factory=list)
    unsupported_citations: list[int] = field(default_factory=list)

    @property
    def support_rate(self) -> float:
        if not self.sentences:
            return 0.0
        return sum(s.supported for s in self.sentences) / len(self.sentences)

    def notes(self) -> list[str]:
        """What the checker changed, in words (for --explain and --json)."""
        out = []
        if self.removed_citations:
            out.append("removed citations to sentences never given: "
                       + ", ".join(f"[{n}]" for n in self.removed_citations))
        for s in self.sentences:
            if not s.supported:
                out.append(f"dropped, not supported by the sentences given: {s.text}")
            elif s.attributed:
                out.append(f"cited [{', '.join(map(str, s.citations))}] for: {s.text}")
        return out


def _claim_words(text: str) -> list[str]:
    words = normalize_answer(text).split()
    content = [w for w in words if w not in STOPWORDS]
    return content or words


class LexicalEmbeddingSupport(SupportChecker):
    """0.7 · share of the claim's content words in the evidence + 0.3 · cosine."""

    def __init__(self, embedder: Embedder | None = None, *, lexical_weight: float = 0.7) -> None:
        self.embedder = embedder
        self.lexical_weight = lexical_weight

    def support(self, claim: str, evidence: Sequence[str]) -> np.ndarray:
        if not evidence:
            return np.zeros(0, dtype=np.float32)
        words = _claim_words(claim)
        lex = np.zeros(len(evidence), dtype=np.float32)
        if words:
            for i, e in enumerate(evidence):
                have = set(normalize_answer(e).split())
                lex[i] = sum(w in have for w in words) / len(words)
        if self.embedder is None:
            return lex
        vecs = self.embedder.embed([claim, *evidence])
        cos = np.clip(vecs[1:] @ vecs[0], 0.0, 1.0)
        w = self.lexical_weight
        return np.asarray(w * lex + (1 - w) * cos, dtype=np.float32)


def split_answer(text: str) -> list[str]:
    """Answer sentences, each with its trailing citation markers."""
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"'])", text.strip())
    return [p for p in (x.strip() for x in parts) if p]


def verify(answer: str, context: Sequence[Sentence], checker: SupportChecker, *,
           threshold: float = 0.5) -> Verified:
    """Check ``answer`` against the numbered ``context`` (1-based, in prompt order)."""
    result = Verified(text=answer.strip())
    evidence = [s.text for s in context]
    for raw in split_answer(answer):
        claim, numbers = strip_citations(raw)
        if not claim:
            continue
        valid = []
        for n in numbers:
            if 1 <= n <= len(context):
                if n not in valid:
                    valid.append(n)
            else:
                result.removed_citations.append(n)
        scores = checker.support(claim, evidence)
        supporting = [n for n in valid if scores[n - 1] >= threshold]
        result.unsupported_citations.extend(n for n in valid if n not in supporting)
        attributed = False
        if not supporting and len(scores):
            best = int(np.argmax(scores))
            if scores[best] >= threshold:
                supporting, attributed = [best + 1], True
        support = max((float(scores[n - 1]) for n in supporting), default=(
            float(scores.max()) if len(scores) else 0.0))
        result.sentences.append(AnswerSentence(
            text=claim, citations=tuple(supporting), support=round(support, 4),
            supported=bool(supporting), attributed=attributed))
    return result


def citation_support_rate(answer: str, sources: Sequence[Citation], checker: SupportChecker, *,
                          threshold: float = 0.5) -> float:
    """Share of answer sentences that at least one of their own citations supports."""
    by_number = {c.number: c.text for c in sources}
    parts = split_answer(answer)
    if not parts:
        return 0.0
    ok = 0
    for raw in parts:
        claim, numbers = strip_citations(raw)
        evidence = [by_number[n] for n in numbers if n in by_number]
        if claim and evidence and float(checker.support(claim, evidence).max()) >= threshold:
            ok += 1
    return ok / len(parts)
