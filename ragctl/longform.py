"""Long answers, stages 4–6: summarize the top facets, verify, and optionally smooth.

Each of the top facets becomes one sentence of at most ~35 words written by the local
model from that facet's nuggets only, carrying the citations of its nuggets. A summary
its nuggets do not support is replaced by the facet's best nugget, verbatim (the
extractive fallback), so the answer stays grounded even with a very small model. The
optional fluency pass rewrites the whole answer once and is kept only if it preserves
every citation marker exactly.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .facets import Facet
from .nuggets import Nugget
from .verify import SupportChecker, strip_citations

SUMMARY_WORDS = 35

SUMMARY_SHOT = (
    "Facts: The Nile is about 6,650 km long. The Nile flows north through eleven countries.\n"
    "Question: What do we know about the Nile?\n"
    "Summary: The Nile, about 6,650 km long, flows north through eleven countries.\n\n"
)

FLUENCY_SHOT = (
    "Text: Paris is the capital of France [1]. Paris has 2.1 million inhabitants [2].\n"
    "Rewritten: Paris, the capital of France [1], has 2.1 million inhabitants [2].\n\n"
)


@dataclass
class FacetSummary:
    rank: int
    text: str
    citations: list[int]
    nugget_ids: list[int]
    score: float
    support: float
    fallback: bool
    generated: str


@dataclass
class LongResult:
    text: str
    facets: list[FacetSummary] = field(default_factory=list)
    fluent: bool = False
    fluency_rejected: str | None = None
    words: int = 0


def summary_prompt(question: str, facet: Facet) -> str:
    facts = " ".join(" ".join(n.text.split()) for n in facet.nuggets)
    return (SUMMARY_SHOT + f"Facts: {facts}\nQuestion: {' '.join(question.split())}\n"
            "Summary:")


def clip_words(text: str, n: int) -> str:
    words = text.split()
    return text if len(words) <= n else " ".join(words[:n]).rstrip(",;:") + "…"


def summarize_facets(generator: Any, checker: SupportChecker, question: str,
                     facets: Sequence[Facet], numbers: dict[int, int], *, words: int,
                     support_threshold: float = 0.5) -> list[FacetSummary]:
    """One verified sentence per facet, in rank order, until the word budget is spent."""
    out: list[FacetSummary] = []
    used = 0
    for rank, facet in enumerate(facets, start=1):
        if used >= words:
            break
        raw = generator.complete(summary_prompt(question, facet), max_tokens=60).text
        text, _ = strip_citations(raw.strip())
        text = clip_words(text, SUMMARY_WORDS)
        evidence = [n.text for n in facet.nuggets]
        scores = checker.support(text, evidence) if text else np.zeros(0)
        support = float(scores.max()) if len(scores) else 0.0
        fallback = support < support_threshold
        cited: list[Nugget] = list(facet.nuggets)
        if fallback:
            best = max(facet.nuggets, key=lambda n: n.score)
            text, cited, support = " ".join(best.text.split()), [best], 1.0
        budget = words - used
        text = clip_words(text, budget)
        used += len(text.split())
        out.append(FacetSummary(
            rank=rank, text=text,
            citations=sorted({numbers[n.id] for n in cited}),
            nugget_ids=[n.id for n in facet.nuggets], score=round(facet.score, 4),
            support=round(support, 4), fallback=fallback, generated=raw.strip()))
    return out


def render(summaries: Sequence[FacetSummary]) -> str:
    parts = []
    for s in summaries:
        body = s.text.rstrip()
        end = body[-1] if body.endswith((".", "!", "?")) else "."
        body = body.rstrip(".!?")
        parts.append(body + "".join(f" [{n}]" for n in s.citations) + end)
    return " ".join(parts)


_MARK = re.compile(r"\[(\d{1,3})\]")


def fluency_pass(generator: Any, text: str) -> tuple[str, str | None]:
    """Rewrite once; keep the rewrite only if it has exactly the same citation markers."""
    prompt = FLUENCY_SHOT + f"Text: {text}\nRewritten:"
    budget = int(len(text.split()) * 2) + 20
    out = generator.complete(prompt, max_tokens=budget).text.strip()
    if not out:
        return text, "the rewrite was empty"
    if Counter(_MARK.findall(out)) != Counter(_MARK.findall(text)):
        return text, "the rewrite dropped or invented a citation marker"
    return out, None
