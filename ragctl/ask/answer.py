"""Choosing the answer span: the reader's spans of the evidence, ranked, judged and completed.

- **A span of the evidence** (:func:`choose`): the exported span reader reads the
  question with each of the best passages (:class:`Context`) and proposes answer spans
  with a start + end score, and a null score ("this passage does not hold the answer").
  The answer is a verbatim span of one stored sentence (:class:`Choice`), widened to the
  words it cuts (:func:`whole_words`), cited to it with the span's own source offsets.
- **Answerability**: whether to answer at all is decided from the evidence itself — the
  reader's span score over its null score, the relevance of the passage it came from and
  of the best passage, the context filter's score of its sentence, and whether the span
  is of the type the question asks for — combined by a logistic model fitted on
  development questions the reader's training held out (answerable, on-topic
  unanswerable, off-topic; ``bench/reader.py``) and stored in the reader's manifest with
  its threshold. Some spans are no answer whatever the model says
  (:func:`~ragctl.ask.rules.vetoed`).
- **Completed** (:func:`completed`): a bare number for "how large …" keeps its unit, a
  question for two or three things gets the span that lists them, a name loses the role
  before it, one of several sums or counts is the first.

The question's form is :mod:`ragctl.ask.question`, what it names :mod:`ragctl.ask.documents`,
the vetoes :mod:`ragctl.ask.rules`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import numpy as np

from ragctl.ask.cells import Cell, names_counted, row_cells, word_key
from ragctl.ask.documents import (
    _SUM,
    document_name,
    place_dates,
)
from ragctl.ask.question import (
    _PRICE_QUESTION,
    QuestionType,
    main_clause,
)
from ragctl.ask.rules import (
    DEFAULT_ANSWERABILITY,
    DEFAULT_RANKING,
    echo,
    fits,
    header_line,
    logistic,
    logit,
    measured,
    missing_dates,
    missing_names,
    missing_numbers,
    ruled_out,
    type_agreement,
    vetoed,
)
from ragctl.ask.switches import fired, on
from ragctl.models.reader import Reader
from ragctl.records import Sentence
from ragctl.text import STOPWORDS, content_words, overlap

# --------------------------------------------------------------------- choosing


@dataclass(frozen=True)
class Choice:
    """The chosen answer span: its sentence, offsets inside the sentence's text, the
    features answerability was judged on, and the probability that the documents answer."""

    text: str
    sentence: Sentence
    start: int  # in sentence.text
    end: int
    features: dict[str, float] = field(default_factory=dict)
    probability: float = 0.0  # that the documents answer, this span being the answer
    rank: float = 0.0  # that this span is the right one (orders the spans)


@dataclass(frozen=True)
class Context:
    """One passage as the reader reads it: "title. text", and where each sentence is."""

    text: str
    sentences: tuple[tuple[int, int, Sentence], ...]  # (start, end in text, sentence)
    relevance: float

    @classmethod
    def of(cls, title: str, sentences: Sequence[Sentence], relevance: float) -> Context:
        prefix = f"{title}. " if title else ""
        spans, pos = [], len(prefix)
        for s in sentences:
            spans.append((pos, pos + len(s.text), s))
            pos += len(s.text) + 1
        return cls(prefix + " ".join(s.text for s in sentences), tuple(spans), relevance)

    def locate(self, start: int, end: int) -> tuple[Sentence, int, int] | None:
        """The sentence holding ``text[start:end]`` and the offsets inside it (None when
        the span is in the title or crosses sentences)."""
        for a, b, s in self.sentences:
            if a <= start and end <= b:
                return s, start - a, end - a
        return None


def bridge_context(scored: Sequence[Any], relevance: dict[int, float]) -> Context | None:
    """The two best sentences of the filter from two different passages, read together:
    the context of a question that needs a bridge between two documents."""
    ranked = sorted(scored, key=lambda s: -s.score)
    if not ranked:
        return None
    first = ranked[0].sentence
    second = next((s.sentence for s in ranked[1:] if s.sentence.passage_id != first.passage_id),
                  None)
    if second is None:
        return None
    rel = min(relevance.get(first.passage_id, 0.0), relevance.get(second.passage_id, 0.0))
    return Context.of("", [first, second], rel)


_MEASURE = re.compile(r"^(how (large|long|tall|far|big|high|wide|deep|heavy|old|fast|thick)|"
                      r"what (is|was|are|were) the (size|length|height|width|depth|weight|area|"
                      r"distance|speed|capacity))\b", re.I)
_BARE_NUMBER = re.compile(r"[~≈]?\d[\d.,–-]*")
_UNIT = re.compile(
    r"(?:[ -]?(?:(?:square|sq\.?|cubic)[ -])?(?:feet|foot|ft|meters?|metres?|kilometers?|"
    r"kilometres?|km|cm|mm|m|miles?|inch(?:es)?|yards?|acres?|hectares?|bytes?|[KMGT]i?B|kB|"
    r"years?|months?|weeks?|days?|hours?|minutes?|seconds?|kg|grams?|g|lbs?|pounds?|tons?|"
    r"tonnes?|mph|degrees?|percent|characters?|words?|storeys?|stories|floors|pages?)\b|"
    r"\s?%|\s?°\s?[CF]\b)")


def with_unit(question: str, choice: Choice) -> Choice:
    """A bare number answering "how large / long / tall …" with the unit that follows it
    in its sentence ("10,000" → "10,000 square foot"): without it the answer says little.
    (In SQuAD's dev questions of this kind whose answer starts with a number, giving the
    bare number and extending it matches the gold answer 30 times of 39, against 17.)"""
    if not _MEASURE.match(question.strip()) or not _BARE_NUMBER.fullmatch(choice.text):
        return choice
    m = _UNIT.match(choice.sentence.text, choice.end)
    if m is None:
        return choice
    end = m.end()
    return replace(choice, text=choice.sentence.text[choice.start:end], end=end)


_HOW_MANY = re.compile(r"\bhow (many|much)\b", re.I)


def without_asked_unit(question: str, choice: Choice) -> Choice:
    """A number and the unit the question already names, as the bare number: "how many
    square kilometres …" → "587,000", not "587,000 square kilometres". (In SQuAD's dev
    questions "how many/much <unit>" whose answer is a number followed by that unit, the
    bare number matches the gold answer 25 times of 27, the number with its unit 12.)"""
    if not _HOW_MANY.search(question):
        return choice
    number = _BARE_NUMBER.match(choice.text)
    if number is None or number.end() == len(choice.text):
        return choice
    unit = choice.text[number.end():]
    named = {w[:5] for w in content_words(unit)}
    if _UNIT.fullmatch(unit) is None or not named \
            or not named <= {w[:5] for w in content_words(question)}:
        return choice
    value = number.group().rstrip(".,–-")
    return replace(choice, text=value, end=choice.start + len(value))


_SEVERAL = re.compile(r"^(which|what|name|list|who (are|were)( the)?) (two|three|four|five)\b",
                      re.I)
_LIST = re.compile(r",\s|\s(and|or|&)\s")


def one_amount(question: str, choice: Choice) -> Choice:
    """For "how much …", the first sum of money of a span that holds several ("Rs 1939 x 1
    Night x 1 Room Rs 1939 Grand Total Rs 1939": a span across a receipt's cells). None of
    the 74 such questions of SQuAD's dev split has an answer with two sums."""
    if not _PRICE_QUESTION.match(question.strip()):
        return choice
    sums = list(_SUM.finditer(choice.text))
    if len(sums) < 2:
        return choice
    start = choice.start + sums[0].start()
    return replace(choice, text=sums[0].group(), start=start, end=start + len(sums[0].group()))


_WHO = re.compile(r"^(?:who|whom|whose)\b", re.I)
_WHICH = re.compile(r"^(?:\w+ )?(?:which|what) ((?:\S+ ){1,4})", re.I)
# a role before a name: one to three lowercase words, then capitalized words (a particle
# such as "de" or "van" between them, an initial such as "B.")
_TITLED = re.compile(r"((?:[a-z][a-z-]*\s+){1,3})([A-Z][\w'’.-]*(?:\s+(?:(?:de|da|di|del|der|"
                     r"van|von|du|la|le|bin|ibn|al|el)\s+)?[A-Z][\w'’.-]*)*)")
_PARTICLES = frozenset("de da di del der van von du la le bin ibn al el".split())


def without_title(question: str, choice: Choice) -> Choice:
    """A name without the role before it, for "who …" ("linebacker Shaq Thompson" → "Shaq
    Thompson", "staff writer David Emery" → "David Emery") and for "which <role> …" when
    the role is the question's own word ("Which Snopes writer …"). In SQuAD's dev questions
    "who …" whose answer is a name that a lowercase role word precedes in the paragraph, the
    gold answer leaves the role out 132 times of 134 (scratch count over the even
    articles); "the", "a", a preposition or a particle ("von Braun") is no role."""
    m = _TITLED.fullmatch(choice.text)
    if m is None:
        return choice
    role = m.group(1).split()
    if any(w in STOPWORDS or w in _PARTICLES for w in role):
        return choice
    q = question.strip()
    if not _WHO.match(q):
        which = _WHICH.match(q)
        if which is None or role[-1][:5] not in {w[:5] for w in content_words(which.group(1))}:
            return choice
    start = choice.start + m.start(2)
    return replace(choice, text=m.group(2), start=start, end=start + len(m.group(2)))


def completed(question: str, choices: Sequence[Choice]) -> Choice:
    """The first choice, completed: a question that asks for two or three things gets the
    span that lists them, when the reader found it and rates it nearly as well ("Arduino
    LLC" → "Arduino LLC and Arduino SRL"; every such question of SQuAD's dev split has a
    list for its answer), a bare number for a measure its unit (``with_unit``), a number
    with the unit the question names no unit (``without_asked_unit``), a name no role
    before it (``without_title``) and a span of several sums the first (``one_amount``)."""
    first = choices[0]
    if on("list_answer") and _SEVERAL.match(question.strip()) and not _LIST.search(first.text):
        key = first.text.lower()
        listed = next((c for c in choices[1:5] if _LIST.search(c.text)
                       and key in c.text.lower() and c.probability >= first.probability - 0.05),
                      first)
        if listed is not first:
            fired("list_answer")
            first = listed
    for name, step in COMPLETIONS:
        if on(name):
            done = step(question, first)
            if done is not first:
                fired(name)
                first = done
    return first


# The completions of a span, in the order they apply (each a rule of ragctl.ask.ruletable).
COMPLETIONS: tuple[tuple[str, Callable[[str, Choice], Choice]], ...] = (
    ("with_unit", with_unit), ("without_asked_unit", without_asked_unit),
    ("without_title", without_title), ("one_amount", one_amount))


def one_cell(question: str, text: str, a: int, b: int) -> tuple[int, int]:
    """``text[a:b]`` within one cell of a table row ("Notice Date: 12/11/2015; Effective:
    02/10/2016"): a span that runs over from one cell's value into the next is cut to the
    cell whose header the question names ("effective date"), else to the cell that holds
    most of it. A span is one value, never two and a header."""
    if not on("one_cell") or "; " not in text[a:b]:
        return a, b
    cells = [c for c in row_cells(text) if c.start < b and a < c.end]
    if len(cells) < 2:
        return a, b
    asked = {word_key(w) for w in content_words(question)}

    def named(c: Cell) -> float:  # the share of the header's words that the question uses
        words = {word_key(w) for w in content_words(c.column)}
        return len(words & asked) / len(words) if words else 0.0

    cell = max(cells, key=lambda c: (named(c), min(b, c.end) - max(a, c.start)))
    fired("one_cell")
    return max(a, cell.start), min(b, cell.end)


def whole_words(text: str, a: int, b: int) -> tuple[int, int]:
    """``text[a:b]`` widened to the words and numbers it cuts: the reader's word pieces can
    start or end a span inside a word ("Lad" of "Ladner"; SQuAD's dev answers cut a word
    0.4% of the time) or a number ("399" of "399,00"; none of SQuAD's dev answers does)."""

    if not on("whole_words"):
        return a, b
    a0, b0 = a, b

    def digit(i: int) -> bool:
        return 0 <= i < len(text) and text[i].isdigit()

    def joint(i: int) -> bool:  # text[i - 1] and text[i] belong to one word or one number
        return 0 < i < len(text) and (
            (text[i - 1].isalnum() and text[i].isalnum())
            or (text[i] in ",." and digit(i - 1) and digit(i + 1))
            or (text[i - 1] in ",." and digit(i) and digit(i - 2)))

    # an e-mail address or a web address cut anywhere ("@djangoproject.com" of
    # "conduct@djangoproject.com"): the whole address
    for m in _ADDRESS.finditer(text):
        if m.start() <= a < m.end() or m.start() < b <= m.end():
            a, b = min(a, m.start()), max(b, m.end())
            fired("whole_words")
            return a, b
    while joint(a):
        a -= 1
    while joint(b):
        b += 1
    a, b = whole_code(text, a, b)
    # an operator or option cut at its start or end (":=" of "NAME := expr" read as "= expr",
    # "--disable-gil" as "disable-gil"): the whole run of operator signs up to a space; no
    # answer of SQuAD's dev split starts or ends inside one
    k = a
    while k > 0 and text[k - 1] in _OPERATOR:
        k -= 1
    if k < a < len(text) and (k == 0 or text[k - 1].isspace()) and not text[a].isspace():
        a = k
    k = b
    while k < len(text) and text[k] in _OPERATOR:
        k += 1
    if 0 < b < k and (k == len(text) or text[k].isspace()) and text[b - 1] in _OPERATOR:
        b = k
    if (a, b) != (a0, b0):
        fired("whole_words")
    return a, b


def whole_code(text: str, a: int, b: int) -> tuple[int, int]:
    """``text[a:b]`` widened to a code it cuts at a hyphen, dash or slash: "23–51" of
    "AD 2018–23–51", "MBL-SF424FAMILY" of "MBL-SF424FAMILY-ALLFORMS". A code is a run
    without spaces whose parts (between hyphens, dashes and slashes) mix letters and
    digits, or are three numbers, or capitals and a number ("SK-107"); a range of two
    numbers ("1995–2005"), a number and a word ("5-person") or a hyphenated word
    ("well-known") is not one."""
    if a > 1 and text[a - 1] in _JOINS and text[a - 2].isalnum():
        code = _code_at(text, a - 1)
        a = code[0] if code else a
    if b + 1 < len(text) and text[b] in _JOINS and text[b + 1].isalnum():
        code = _code_at(text, b)
        b = code[1] if code else b
    return a, b


def _code_at(text: str, i: int) -> tuple[int, int] | None:
    """The start and end of the code around ``text[i]`` (:func:`whole_code`), or None."""
    s = i
    while s > 0 and not text[s - 1].isspace():
        s -= 1
    e = i
    while e < len(text) and not text[e].isspace():
        e += 1
    while s < e and text[s] in _AROUND:
        s += 1
    while e > s and text[e - 1] in _AROUND:
        e -= 1
    run = text[s:e]
    parts = [p for p in re.split(r"[-–/]", run) if p]
    mixed = any(re.search(r"\d", p) and re.search(r"[^\W\d_]", p) for p in parts)
    numbers = sum(1 for p in parts if p.isdigit())
    capitals = any(len(p) >= 2 and p.isalpha() and p.isupper() for p in parts)
    if s <= i < e and (mixed or numbers >= 3 or (capitals and numbers >= 1)):
        return s, e
    return None


_JOINS = frozenset("-–/")
_AROUND = frozenset("()[]<>\"'“”‘’.,;:!?")
_OPERATOR = frozenset(":=<>!+-*/%&|^~")
_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|https?://[^\s<>()\[\]]+[^\s<>()\[\].,;:!?'\"]")


def trimmed(span: str) -> str:
    """A span without the spaces, commas, semicolons and lone colons at its ends (":=" is
    kept whole)."""
    span = span.strip(" ,;")
    if span.startswith(":") and span[1:2] not in _OPERATOR:
        span = span[1:].lstrip(" ,;")
    if span.endswith(":") and span[-2:-1] not in _OPERATOR:
        span = span[:-1].rstrip(" ,;")
    return span


def features_of(margin: float, relevance: float, filter_score: float, type_score: float,
                re_best: float, overlap: float = 0.0, missing: float = 0.0,
                dates: float = 0.0, names: float = 0.0, wrong: float = 0.0
                ) -> dict[str, float]:
    return {"margin": float(np.clip(margin, -20, 20)), "relevance": logit(relevance),
            "filter": float(filter_score), "type": type_score - 0.5, "re_best": logit(re_best),
            "overlap": float(overlap), "missing_numbers": float(missing),
            "missing_dates": float(dates), "missing_names": float(names),
            "ruled_out": float(wrong)}


def choose(reader: Reader, question: str, qtype: QuestionType, contexts: Sequence[Context],
           filter_scores: dict[int, float], *, re_best: float,
           ranking: dict[str, Any] | None = None, answerable: dict[str, Any] | None = None,
           passages: dict[int, str] | None = None) -> list[Choice]:
    """The answer spans found in ``contexts``, most probably right first (one per distinct
    text), each with the probability that the documents answer if it is the one chosen;
    empty when no context yields a span inside one sentence."""
    ranking = ranking or DEFAULT_RANKING
    answerable = answerable or DEFAULT_ANSWERABILITY
    if not contexts:
        return []
    best: dict[str, tuple[float, Choice]] = {}
    # what depends on the context or the sentence alone, once, not for every span in it
    # a year or a month in a passage's place (a sheet "2025 Schedule", a section "Results
    # 2023 > Revenue") is the passage's: "the game on the 4th of July 2025" of its rows
    held = [f"{c.text} {place_dates(s for _, _, s in c.sentences)}" for c in contexts]
    lacks = [(missing_numbers(question, text, " ".join(dict.fromkeys(
                  document_name(s) for _, _, s in c.sentences))),
              missing_dates(question, text)) for c, text in zip(contexts, held, strict=True)]
    # the names are looked for in the span's own passage: in the bridge context a span of
    # one invoice would borrow the names of the other invoice's sentence beside it
    # (``passages``: passage id → the text of its document's passages at hand, as the reader
    # reads them: a name can be in the passage before, as in a transcript's header; and a
    # span of the bridge context has its passage there)
    whole = {c.sentences[0][2].passage_id: c.text for c in contexts
             if c.sentences and len({s.passage_id for _, _, s in c.sentences}) == 1}
    whole.update(passages or {})
    # "how many <things>" of a table row that names none of them (``typed_answer``)
    things = qtype.measure == "things" and on("typed_answer")
    clause = main_clause(question) if things else ""
    counted: dict[int, bool] = {}
    names: dict[int, float] = {}
    overlaps: dict[int, float] = {}
    for cands in reader.read(question, [c.text for c in contexts]):
        for cand in cands:
            ctx = contexts[cand.context]
            where = ctx.locate(cand.start, cand.end)
            if where is None:
                continue
            sentence, a, b = where
            a, b = whole_words(sentence.text, a, b)
            a, b = one_cell(question, sentence.text, a, b)
            text = trimmed(sentence.text[a:b])
            if not text or (not content_words(text) and not any(ch.isdigit() for ch in text)):
                continue
            a = sentence.text.find(text, a)
            if qtype.measure:  # "120" of "120 days" for "how long": the unit taken in
                text = measured(qtype.measure, text, sentence.text[a + len(text):]) or text
            if id(sentence) not in overlaps:
                overlaps[id(sentence)] = overlap(question, sentence.text)
            pid = sentence.passage_id
            if pid not in names:
                names[pid] = missing_names(question, whole.get(pid, sentence.text))
            feats = features_of(cand.margin, ctx.relevance, filter_scores.get(sentence.id, 0.0),
                                type_agreement(qtype.expects, text), re_best,
                                overlaps[id(sentence)], *lacks[cand.context], names[pid],
                                ruled_out(qtype.expects, text, sentence.text[a + len(text):],
                                          sentence.text))
            if things and id(sentence) not in counted:
                counted[id(sentence)] = names_counted(clause, sentence)
            feats["fits"] = float(fits(qtype.expects, text, qtype.measure,
                                       sentence.text[a + len(text):], qtype.dimension) and (
                not things or counted[id(sentence)]))
            feats["header_line"] = header_line(question, sentence.text)
            feats["echo"] = echo(question, text)
            rank = logistic(feats, ranking)
            key = " ".join(text.lower().split())
            if key not in best or rank > best[key][0]:
                p = 0.0 if vetoed(feats) else logistic(feats, answerable)
                best[key] = (rank, Choice(text, sentence, a, a + len(text), feats, p, rank))
    # the most probably answerable first: a span from a passage that answers the question
    # beats a better-ranked one from a passage that does not; then the ranking
    ordered = [c for _, c in sorted(best.values(), key=lambda rc: (-rc[1].probability, -rc[0]))]
    return shortest_of_near_ties(ordered, lambda c: c.probability, lambda c: c.text)


# Among near-ties, the shortest: when spans inside the best one, or holding it, are almost
# as probably right (within NEAR_TIE on the logit scale: "Johann Tetzel" / "Tetzel"), the
# reader's scores cannot tell them apart and the shortest is the better bet — SQuAD's
# answers are minimal spans. On the held-out dev questions, answering every one (the fit of
# the time): EM 49.8 against 48.4 (bench/reader.py).
NEAR_TIE = 0.1
T = TypeVar("T")


def shortest_of_near_ties(ordered: list[T], probability: Callable[[T], float],
                          text: Callable[[T], str]) -> list[T]:
    """``ordered`` (most probable first) with the shortest near-tie of the first in front."""
    if not ordered or probability(ordered[0]) <= 0.0 or not on("shortest_near_tie"):
        return ordered
    top, z = text(ordered[0]), logit(probability(ordered[0]))
    ties = [c for c in ordered if probability(c) > 0.0 and logit(probability(c)) >= z - NEAR_TIE
            and (text(c) in top or top in text(c))]
    # words, not signs (":= expr" is as long as "expr"); the first of equals: the likeliest
    pick = min(ties, key=lambda c: sum(any(ch.isalnum() for ch in w) for w in text(c).split()))
    if pick is not ordered[0]:
        fired("shortest_near_tie")
    return [pick, *(c for c in ordered if c is not pick)]
