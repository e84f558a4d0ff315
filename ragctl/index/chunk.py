"""Stage 3: group sentences into passages of about ``target_words`` words.

A passage never cuts a sentence and never crosses a section (so it has one place:
one page, one heading path, one message). A short tail is merged into the passage
before it rather than left as a fragment.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragctl.index.ingest import Section
from ragctl.records import Chunk, Span


def chunk_section(section: Section, sentences: Sequence[Span], *,
                  target_words: int = 100) -> list[Chunk]:
    """Passages of one section; sentence offsets become absolute (section offset added)."""
    absolute = [Span(s.start + section.offset, s.end + section.offset, s.text, s.raw)
                for s in sentences]
    groups: list[list[Span]] = []
    current: list[Span] = []
    words = 0
    for sent in absolute:
        n = sent.n_words
        if current and words + n > target_words:
            groups.append(current)
            current, words = [], 0
        current.append(sent)
        words += n
    if current:
        if groups and words < target_words // 4:
            groups[-1].extend(current)
        else:
            groups.append(current)
    return [Chunk(section.place, g[0].start, g[-1].end, tuple(g)) for g in groups]


def chunk_sections(sections: Sequence[Section], sentences: Sequence[Sequence[Span]], *,
                   target_words: int = 100) -> list[Chunk]:
    chunks: list[Chunk] = []
    for section, spans in zip(sections, sentences, strict=True):
        chunks.extend(chunk_section(section, spans, target_words=target_words))
    return chunks
