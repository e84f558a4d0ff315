"""The records the stages hand on: a text with the place it came from, and what was
found there.

Every record that points into a document is a :class:`SourceSpan` (file, title, place,
character offsets, text); the others add their own fields to it, so a source is declared
once and copied with :meth:`SourceSpan.span` instead of field by field. All are frozen
and keyword-only; ``dataclasses.asdict`` gives the flat JSON the CLI prints.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
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
        from ragctl.text import raw_offsets

        a, b = raw_offsets(self.raw if self.raw is not None else self.text, start, end,
                          self.text)
        return self.start_char + a, self.start_char + b

    def part(self, start: int, end: int) -> Sentence:
        """``text[start:end]`` as a sentence of its own (the same id), with its own source
        offsets and source text."""
        a, b = self.source_offsets(start, end)
        text = self.text[start:end]
        raw = self.raw[a - self.start_char:b - self.start_char] if self.raw is not None else None
        return replace(self, text=text, start_char=a, end_char=b,
                       raw=raw if raw != text else None)


@dataclass(frozen=True, kw_only=True)
class DocField:
    """A field a document states about itself (its author, sender, date, title, subject
    or status), read when it is indexed: ``start_char``/``end_char`` are the source
    offsets of its value, in the section at ``place``."""

    name: str
    value: str
    place: str = ""
    start_char: int = 0
    end_char: int = 0


# a line's label (lower case, spaces single) → the field it states ("From: …" → sender)
FIELD_LABELS: dict[str, str] = {
    "author": "author", "authors": "author", "written by": "author", "by": "author",
    "from": "sender", "sender": "sender", "sent by": "sender",
    "to": "recipient",
    "date": "date", "sent": "date", "created": "date", "published": "date",
    "posted": "date", "last updated": "date", "updated": "date", "last modified": "date",
    "modified": "date", "last revised": "date", "revised": "date", "last changed": "date",
    "subject": "subject", "title": "title", "status": "status",
}


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
    ``answer_end``, when set, are the source offsets of the answer quoted from it; ``line``
    the line of a text file it starts on (``path:line``), ``row`` and ``column`` a table
    cell's."""

    number: int
    sentence_id: int
    passage_id: int
    answer_start: int | None = None
    answer_end: int | None = None
    also_in: tuple[str, ...] = ()  # other files holding the same passage
    line: int | None = None  # the file's line of the answer (or the sentence): path:line
    row: str | None = None  # a table cell's row (the values the question named) ...
    column: str | None = None  # ... and column

    @classmethod
    def of(cls, number: int, sentence: Sentence, *, answer: tuple[int, int] | None = None,
           also_in: tuple[str, ...] = ()) -> Citation:
        start, end = answer if answer is not None else (None, None)
        return cls(number=number, sentence_id=sentence.id, passage_id=sentence.passage_id,
                   answer_start=start, answer_end=end, also_in=also_in, **sentence.span())


@dataclass(frozen=True)
class AnswerSentence:
    """One sentence of an answer with the citations it carries and how well the cited
    sentences support it."""

    text: str
    citations: tuple[int, ...]
    support: float
    supported: bool
    attributed: bool = False  # citations added by the checker, not written by the model


@dataclass
class Answer:
    question: str
    answer: str = ""
    raw_answer: str = ""
    abstained: bool = False
    abstain_reason: str | None = None
    kind: str = ""  # span, quote or free (the generator's words)
    question_type: str = ""
    context_mode: str = "filtered"
    sentences: list[AnswerSentence] = field(default_factory=list)
    sources: list[Citation] = field(default_factory=list)
    context: list[Citation] = field(default_factory=list)
    passages: list[PassageScore] = field(default_factory=list)
    filtered: list[dict[str, Any]] = field(default_factory=list)
    removed_citations: list[int] = field(default_factory=list)
    unsupported_citations: list[int] = field(default_factory=list)
    tokens: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)
    confidence: float | None = None
    candidates: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the checker changed
    rules: list[str] = field(default_factory=list)  # the rules that fired (ask/ruletable.py)
    # a computed answer's operation, arguments and cells (ask/compute.py), else None
    computation: dict[str, Any] | None = None

    @property
    def answer_text(self) -> str:
        """What the generator answered, without citation markers."""
        from ragctl.text import strip_citations

        return strip_citations(self.raw_answer)[0]

    @property
    def support_rate(self) -> float:
        if not self.sentences:
            return 0.0
        return sum(s.supported for s in self.sentences) / len(self.sentences)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["support_rate"] = round(self.support_rate, 4)
        d["schema"] = "ragctl.answer/1"
        return d


def from_dict(cls: type[Any], data: dict[str, Any]) -> Any:
    """Rebuild a record (or a result such as ``Answer``) from its ``to_dict`` form, nested
    records included: what a client of ``ragctl serve`` receives as JSON becomes the
    object the renderers take. Keys the class does not have are ignored."""
    import dataclasses
    import typing

    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name not in data or not f.init:
            continue
        kwargs[f.name] = _value(hints.get(f.name), data[f.name])
    return cls(**kwargs)


def _value(hint: Any, value: Any) -> Any:
    import dataclasses
    import typing

    if value is None or hint is None:
        return value
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if dataclasses.is_dataclass(hint) and isinstance(value, dict):
        return from_dict(hint, value)  # type: ignore[arg-type]
    if origin in (list, tuple) and args and isinstance(value, list):
        if origin is tuple:
            return tuple(_value(args[0], v) for v in value)
        return [_value(args[0], v) for v in value]
    if args and origin is not dict:  # X | None
        for a in args:
            if a is not type(None) and dataclasses.is_dataclass(a) and isinstance(value, dict):
                return from_dict(a, value)  # type: ignore[arg-type]
    return value


# Sentences and passages as the write path makes them (index.sentences, index.chunk),
# before they are stored.

@dataclass(frozen=True)
class Span:
    """A sentence: ``text`` is whitespace-normalized, offsets point into the source;
    ``raw`` is the source between them when it differs from ``text`` (line breaks, runs of
    spaces), so that places inside the sentence can be mapped back to the source."""

    start: int
    end: int
    text: str
    raw: str | None = None

    @property
    def n_words(self) -> int:
        return len(self.text.split())


@dataclass(frozen=True)
class Chunk:
    """A passage: its place, absolute offsets and the sentences it is made of."""

    place: str
    start: int
    end: int
    sentences: tuple[Span, ...]

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.sentences)

    @property
    def n_words(self) -> int:
        return sum(s.n_words for s in self.sentences)
