"""The records the stages hand on: a text with the place it came from, and what was
found there.

Every record that points into a document is a :class:`SourceSpan` (file, title, place,
character offsets, text); the others add their own fields to it, so a source is declared
once and copied with :meth:`SourceSpan.span` instead of field by field. All are frozen
and keyword-only; ``dataclasses.asdict`` gives the flat JSON the CLI prints.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass(frozen=True, kw_only=True)
class SourceSpan:
    """A text and where it is: ``start_char``/``end_char`` point into the source file (the
    decoded file for plain-text formats, the page or extracted text otherwise)."""

    path: str
    title: str = ""
    place: str = ""
    start_char: int = 0
    end_char: int = 0
    text: str = ""

    def span(self) -> dict[str, Any]:
        """The source fields alone, to build another record on the same text."""
        return {f.name: getattr(self, f.name) for f in fields(SourceSpan)}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class Passage(SourceSpan):
    """A stored passage (~100 words of one section of one document)."""

    id: int
    document_id: int = 0


@dataclass(frozen=True, kw_only=True)
class Sentence(SourceSpan):
    """A stored sentence, with everything a citation needs."""

    id: int
    passage_id: int
    seq: int = 0
    raw: str | None = None  # the source text, when it differs from ``text``

    def source_offsets(self, start: int, end: int) -> tuple[int, int]:
        """Source offsets of ``text[start:end]`` (a part of this sentence)."""
        from .text import raw_offsets

        a, b = raw_offsets(self.raw if self.raw is not None else self.text, start, end)
        return self.start_char + a, self.start_char + b


@dataclass(frozen=True, kw_only=True)
class Hit(SourceSpan):
    """A retrieved passage: its fused score, cosine similarity and the ranks behind it."""

    passage_id: int
    score: float = 0.0
    similarity: float | None = None
    vector_rank: int | None = None
    bm25_rank: int | None = None


@dataclass(frozen=True, kw_only=True)
class PassageScore(SourceSpan):
    """A retrieved passage as ``ask`` reports it: retrieval rank and score, relevance, kept."""

    passage_id: int
    retrieval_rank: int
    retrieval_score: float
    similarity: float | None
    relevance: float
    kept: bool
    duplicate_of: int | None = None  # a kept passage with (nearly) the same text


@dataclass(frozen=True)
class ScoredSentence:
    """A sentence with the context filter's score, and whether the filter kept it."""

    sentence: Sentence
    score: float
    kept: bool


@dataclass(frozen=True, kw_only=True)
class Citation(SourceSpan):
    """A numbered source of an answer: one stored sentence. ``answer_start`` and
    ``answer_end``, when set, are the source offsets of the answer quoted from it."""

    number: int
    sentence_id: int
    passage_id: int
    answer_start: int | None = None
    answer_end: int | None = None
    also_in: tuple[str, ...] = ()  # other files holding the same passage

    @classmethod
    def of(cls, number: int, sentence: Sentence, *, answer: tuple[int, int] | None = None,
           also_in: tuple[str, ...] = ()) -> Citation:
        start, end = answer if answer is not None else (None, None)
        return cls(number=number, sentence_id=sentence.id, passage_id=sentence.passage_id,
                   answer_start=start, answer_end=end, also_in=also_in, **sentence.span())
