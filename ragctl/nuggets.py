"""Long answers, stage 1: information nuggets (GINGER §3).

A nugget is a sentence the context filter keeps from the top passages, tied to its
source sentence and offsets. Optionally the local model marks the nugget span inside a
kept sentence; the span must be copied verbatim from the sentence, otherwise it is
dropped and the whole sentence stays the nugget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .filter import ScoredSentence, SentenceRef


@dataclass(frozen=True)
class Nugget:
    id: int
    text: str
    sentence: SentenceRef
    score: float
    passage_relevance: float
    span: tuple[int, int] | None = None  # character span inside the sentence, if marked


def nuggets_from_filter(scored: Sequence[ScoredSentence], relevance: dict[int, float],
                        *, limit: int = 40) -> list[Nugget]:
    """Kept sentences, best first. Repeats from other documents stay: clustering puts them
    into one facet, which then cites every source."""
    out: list[Nugget] = []
    for s in sorted((s for s in scored if s.kept), key=lambda s: -s.score):
        out.append(Nugget(len(out), s.sentence.text, s.sentence, s.score,
                          relevance.get(s.sentence.passage_id, 0.0)))
        if len(out) >= limit:
            break
    return out


def verify_span(sentence: str, marked: str) -> tuple[int, int] | None:
    """Where ``marked`` occurs verbatim (modulo spaces) in ``sentence``, or None."""
    marked = " ".join(marked.split()).strip(" \"'")
    if len(marked.split()) < 3:
        return None
    norm = " ".join(sentence.split())
    i = norm.find(marked)
    if i < 0:
        return None
    return i, i + len(marked)


def mark_span(generator: object, question: str, nugget: Nugget) -> Nugget:
    """Ask the model to copy the part of the sentence that answers the question."""
    from .generate import LlamaGenerator

    assert isinstance(generator, LlamaGenerator)
    prompt = (f"Copy the part of the sentence that answers the question. Do not change "
              f"any word.\nSentence: {nugget.text}\nQuestion: {question}\nPart:")
    marked = generator.complete(prompt, max_tokens=60).text
    span = verify_span(nugget.text, marked)
    if span is None:
        return nugget
    text = " ".join(nugget.text.split())[span[0]:span[1]]
    return Nugget(nugget.id, text, nugget.sentence, nugget.score, nugget.passage_relevance,
                  span)
