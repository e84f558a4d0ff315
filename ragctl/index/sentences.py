"""Stage 2: split text into sentences with spaCy, keeping character offsets.

The default is a blank English pipeline with the rule-based ``sentencizer``: fast, no
model download, and good enough on prose. Paragraph breaks (blank lines) and list items
(a line starting with a bullet or "1.", left out of the sentence) always end a sentence,
and a run-on "sentence" longer than ``max_words`` (tables, logs) is cut at
word boundaries so that no passage grows without bound.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ragctl.errors import missing_dependency
from ragctl.records import Span
from ragctl.text import normalize_space

_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
# a list item: a line that starts with a marker — a bullet, "1." / "2)", "(1)", "a)" /
# "(a)" — which the sentence leaves out (spaCy would make "1." a sentence of its own), then
# a word, a number or a quote (not "- - - - x": a transcript caption's rule); never a
# number that is content ("(212) 555-0147", a telephone number at the start of a line)
_ITEM = re.compile(r"[ \t]*(?:[-*+•▪‣◦]|\d{1,3}[.)]|\((?:\d{1,2}|[a-z])\)|[a-z]\))[ \t]+"
                   r"(?=[\w\"'“‘(\[$€£¥₹])")
# a table row as indexed, one line: "Header: value; Header: value; …" (ingest.table_lines,
# sheet_lines), with two labelled cells or more, after up to three cells of no column's
# name ("Sales Tax; FY 18 PLANNED: …; VS. FY 17 DIFFERENCE: …": a label column unnamed)
# ("L;11 In." inside a cell: a semicolon that no space follows)
_VALUE = r"(?:[^\n;]|;(?! ))*"
_KEYED_ROW = re.compile(rf"(?:[^\n;:]{{1,80}}; ){{0,3}}[^\n;:]{{1,60}}: {_VALUE}(?:; {_VALUE})*; "
                        rf"[^\n;:]{{1,60}}: {_VALUE}(?:; {_VALUE})*\s*\Z")
_WORD = re.compile(r"\S+")
_NEWLINE = re.compile(r"\n")


class SentenceSplitter:
    """Split texts into sentences. The spaCy pipeline is loaded on first use."""

    def __init__(self, *, max_words: int = 200, model: str | None = None) -> None:
        self.max_words = max_words
        self.model = model
        self._nlp: Any = None

    @property
    def nlp(self) -> Any:
        if self._nlp is None:
            try:
                import spacy
            except ImportError:
                raise missing_dependency("spacy") from None
            if self.model:
                nlp = spacy.load(self.model, exclude=["ner", "lemmatizer", "tagger"])
            else:
                nlp = spacy.blank("en")
            if "sentencizer" not in nlp.pipe_names and "parser" not in nlp.pipe_names \
                    and "senter" not in nlp.pipe_names:
                nlp.add_pipe("sentencizer")
            nlp.max_length = 50_000_000
            self._nlp = nlp
        return self._nlp

    def split(self, text: str) -> list[Span]:
        return self.split_many([text])[0]

    def split_many(self, texts: Sequence[str]) -> list[list[Span]]:
        """Sentences of each text, with offsets relative to that text."""
        paragraphs: list[tuple[int, int, str]] = []  # (text index, offset, paragraph)
        for i, text in enumerate(texts):
            pos = 0
            for m in _PARAGRAPH.finditer(text):
                paragraphs.extend(_blocks(i, text, pos, m.start()))
                pos = m.end()
            paragraphs.extend(_blocks(i, text, pos, len(text)))
        out: list[list[Span]] = [[] for _ in texts]
        rows = [bool(_KEYED_ROW.match(p)) for _, _, p in paragraphs]
        docs = iter(self.nlp.pipe(p for (_, _, p), row in zip(paragraphs, rows, strict=True)
                                  if not row))
        for (i, offset, para), row in zip(paragraphs, rows, strict=True):
            if row:  # a table row is one sentence, whatever full stops its cells hold
                out[i].extend(self._cap(para, 0, len(para.rstrip()), offset))
                continue
            bounds: list[tuple[int, int]] = []
            for sent in next(docs).sents:
                start = sent.start_char
                end = sent.end_char
                raw = para[start:end]
                lead = len(raw) - len(raw.lstrip())
                trail = len(raw) - len(raw.rstrip())
                start, end = start + lead, end - trail
                if end <= start:
                    continue
                if bounds and _figures_only(para[start:end]) and \
                        "\n" not in para[bounds[-1][1]:start]:
                    # figures alone after a full stop in the same line ("Town Clock Maint.
                    # $1,000 $0 0%"): the line's values, which say nothing without its label
                    bounds[-1] = (bounds[-1][0], end)
                    continue
                bounds.append((start, end))
            for start, end in bounds:
                out[i].extend(self._cap(para, start, end, offset))
        return out

    def _cap(self, para: str, start: int, end: int, offset: int) -> list[Span]:
        words = list(_WORD.finditer(para, start, end))
        if len(words) <= self.max_words:
            return [_span(para, start, end, offset)]
        spans = []
        for k in range(0, len(words), self.max_words):
            group = words[k:k + self.max_words]
            s, e = group[0].start(), group[-1].end()
            spans.append(_span(para, s, e, offset))
        return spans


def _blocks(i: int, text: str, start: int, end: int) -> list[tuple[int, int, str]]:
    """``text[start:end]``, a paragraph, as blocks that no sentence crosses: a list item
    starts one ("consists of: * Barry Warsaw * Donghee Na" is three sentences, not a
    sentence of names run together), without its bullet or number; each line of a
    paragraph written line by line (:func:`line_based`: a receipt, a form, an address)
    is one."""
    lines = [start, *(m.end() for m in _NEWLINE.finditer(text, start, end))]
    items = [_ITEM.match(text, a, end) for a in lines]
    if line_based(text[start:end]):  # every line, its bullet left out
        cuts = [(m.start(), m.end()) if m else (a, a) for a, m in zip(lines, items, strict=True)]
    else:  # a list item, a line of a run of labelled figures, and the line after the run
        cuts = sorted({(m.start(), m.end()) for m in items if m} | {
            (a, a) for a in _figure_lines(text, lines, end)})
    out, pos = [], start
    for a, b in cuts:
        if text[pos:a].strip():
            out.append((i, pos, text[pos:a]))
        pos = b
    if text[pos:end].strip():
        out.append((i, pos, text[pos:end]))
    return out


LINE_WORDS = 8  # words in a typical line of a receipt, a form or an address, at most
LONG_LINES = 0.1  # the share of its lines an invoice may have over twice that (its footer)
_FIELD_LINE = re.compile(r"\s*[A-Z][\w -]{0,30}:\s")
# a line that runs on into the next: no stop at its end, and the next one starts in lower
# case or with a bracket, but not with an address ("sav@example.net", "www.example.org")
# nor a telephone number ("(870)-931-0505")
_CONTINUED = re.compile(r"[^.!?:;]\s*\n\s*(?![\w.+-]+@|www\.|https?:)(?:[a-z]|\((?!\d))")


def line_based(para: str) -> bool:
    """Whether a paragraph is written line by line, not as wrapped prose: two lines or
    more, short ones (half of them at most :data:`LINE_WORDS` words, few over twice that:
    :data:`LONG_LINES`, an invoice's footer), and no line that runs on into the next (a
    line ending without a stop before one that starts in lower case is wrapped prose). A
    header block, every line a field ("PEP: 8" / "Status: Active", a mail's From: and
    Date:), stays one sentence. A receipt read by OCR ("Sub-Total $2,297.97" / "Tax
    $218.31"), a form's labelled lines, an address."""
    lines = [ln for ln in para.strip().split("\n") if ln.strip()]
    if len(lines) < 2 or all(_FIELD_LINE.match(ln) for ln in lines):
        return False  # one line, or a header block ("PEP: 8", "Status: Active"): one sentence
    words = sorted(len(ln.split()) for ln in lines)
    long = sum(w > 2 * LINE_WORDS for w in words)
    if words[len(words) // 2] > LINE_WORDS or long > LONG_LINES * len(words):
        return False
    return not _CONTINUED.search("\n".join(lines))


# A run of FIGURE_RUN lines or more, each a label and the figure it names ("Hall hire
# 60.64", "Total Expenditure 206.62", "Current Assets £411.30"), in a paragraph of prose:
# a page's accounts or price list that no ruled table holds, written under its prose. Each
# such line is a sentence of its own, as a table's row is, not one run-on sentence.
FIGURE_RUN = 3
_LABELLED_FIGURE = re.compile(  # a line, stripped: a word, then a figure at its end
    r"(?=.*[^\W\d_]{2}).{1,80}?[ \t][-–(]?[$€£¥]?\d[\d,]*(?:\.\d+)?%?\)?")
HEADING_WORDS = 4
_HEADING = re.compile(r"[^\W\d_][^\d\n]*[^\W\d]")  # words alone, no figure, no stop at the end


def _figure_lines(text: str, lines: list[int], end: int) -> list[int]:
    """Where each line of a run of labelled figures (:data:`FIGURE_RUN` or more lines of
    :data:`LINE_WORDS` words at most, each ending with a figure and holding a word before
    it, and the headings among them: "Assets", "Expenditure") starts in ``text``, and where
    the line after such a run starts."""
    kinds = []  # 2: a labelled figure, 1: a heading, 0: neither
    for a, b in zip(lines, [*lines[1:], end], strict=True):
        line = text[a:b].strip()
        words = len(line.split())
        kinds.append(2 if words <= LINE_WORDS and _LABELLED_FIGURE.fullmatch(line) else
                     1 if 0 < words <= HEADING_WORDS and _HEADING.fullmatch(line) else 0)
    starts: list[int] = []
    k = 0
    while k < len(lines):
        n = next((j for j in range(k, len(lines)) if not kinds[j]), len(lines)) - k
        if kinds[k:k + n].count(2) >= FIGURE_RUN:
            starts.extend(lines[k:k + n + 1])
        k += max(n, 1)
    return [a for a in starts if a < end]


def _figures_only(text: str) -> bool:
    """Whether a text holds figures and no word: a digit, and no letter."""
    return any(ch.isdigit() for ch in text) and not any(ch.isalpha() for ch in text)


def _span(text: str, start: int, end: int, offset: int) -> Span:
    raw = text[start:end]
    norm = normalize_space(raw)
    return Span(offset + start, offset + end, norm, raw if raw != norm else None)
