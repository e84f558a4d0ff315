"""A table's cell: "what is the ⟨column⟩ of ⟨row⟩?" answered from the row the question names.

Tables and spreadsheets are indexed one row a line that keeps its header ("Club: Bergen;
Members: 250; Founded: 1921": :func:`ragctl.index.ingest.table_lines`,
:func:`~ragctl.index.ingest.sheet_lines`). A question names its row by one of the row's
values ("the Bergen club") and its column by an attribute ("how many members"), often in
other words than the header. So:

- **the row** (:func:`matched_rows`) is the row, in the documents retrieved, whose cells
  the question names the most of — looked for in the passages kept and, by the question's
  names and numbers, in the whole of those documents, since one row of a long sheet is
  seldom among the passages a search returns;
- **the column** (:func:`column_scores`) is the one of the row's other cells whose header
  is nearest the question without the row's words, by the index's own embedder, with the
  header's words that the question uses and the cell's fit to the answer's type
  (:data:`COLUMN_WEIGHTS`);
- **the answer** is that cell, cited by its offsets. When no header comes near enough
  (:data:`MIN_COLUMN_SCORE`), the table has no such column: an answer the reader would take
  from the row (a neighbouring cell) is refused, and the row's columns are named
  (:func:`refuse_neighbour`). When the rows the question names equally give different
  values, nothing is chosen: the reader answers as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ragctl.ask.documents import _YEAR, document_name, question_names, unsourced
from ragctl.ask.question import counted_noun
from ragctl.ask.rules import answer_types, fits
from ragctl.ask.switches import fired, on
from ragctl.records import AnswerSentence, Citation, Sentence
from ragctl.text import (
    CURRENCY_CODES,
    CURRENCY_SIGNS,
    ENGLISH_MONTHS,
    STOPWORDS,
    CalendarDate,
    blank,
    calendar_dates,
    content_words,
    dated_spans,
    same_date,
    tokens,
)

if TYPE_CHECKING:
    from ragctl.ask.question import Expected
    from ragctl.ask.stages import Evidence, LoadedStages
    from ragctl.records import Answer

MAX_LABEL_CHARS = 72  # a column header longer than this is prose before a colon
MAX_LABEL_WORDS = 10  # (a header of several rows: "Year over Year Difference from October 2022 …")
MAX_KEY_WORDS = 8  # a cell longer than this names no row (a comment, a description)
ROW_DOCUMENTS = 3  # the retrieved documents whose rows are searched by the question's names
ROW_SEARCH_LIMIT = 200  # rows read from one document for one word of the question
MAX_TABLE_ROWS = 20000  # rows of one table read (a computation, rows named alike told apart)
MAX_ANCHORS = 8  # words of the question a row is looked up by
# How a header is scored against the question: cosine of the embeddings, the share of the
# header's words the question uses, and the cell's fit to the answer's type (+fit, -misfit).
COLUMN_WEIGHTS = {"embedding": 1.0, "words": 0.5, "fit": 0.1, "misfit": -0.3, "form": 0.3,
                  "year": 0.3, "other_year": -0.3}  # a header's year, asked or not
# The column a question's form asks of a row, whatever its other words ("How many AES/EBU
# XLR cables …" of "Component | Unit price | Units | Price", "What share of Microsoft does
# BlackRock hold" of "Shareholder name | Percentage"): a header holding one of the words of
# the form's kind scores COLUMN_WEIGHTS["form"] more (rule ``form_column``). "How much" and
# an amount's headers (Amount, Price, Total) were tried: +1 −2 on the dev sets (a row's
# "VAT amount" then answered a receipt's VAT the documents do not give).
FORM_COLUMNS: tuple[tuple[str, frozenset[str]], ...] = (
    (r"^how many\b", frozenset(
        "units qty quantity quantities count number nb pcs pieces items menge anzahl "
        "stück qté quantité cantidad quantità aantal".split())),
    (r"^what (?:share|percentage|percent|proportion|fraction|part)\b", frozenset(
        "percentage percent pct share proportion % stake".split())),
    # "how much did the Online Course Fee come to": its line's total, not its unit price
    (r"^how much\b.*\b(?:come|came|comes|amount|amounted|add|added|adds) (?:up )?to\b|"
     r"^how much\b.*\b(?:in total|altogether|all told)\b", frozenset(
        "total subtotal totals sum amount betrag gesamt montant importe totale".split())),
)
MIN_COLUMN_SCORE = 0.35  # below it no header is near enough: the table has no such column
# a header so named is one value among others, not an attribute ("Notes: …"), never answered
_NOT_COLUMNS = frozenset({"", "notes", "note", "comments", "comment", "remarks", "description"})
# a column of codes ("Region Code: 142", "Customer ID"): its numbers count or measure
# nothing, so they answer no "how many" or "how much"
_CODE_HEADERS = frozenset({"code", "codes", "id", "ids", "identifier"})

_TOKEN = re.compile(r"[^\W_]+(?:[.,]\d+)*")
_NUMERIC = re.compile(r"^[-+(]?[$€£¥]?\s*\d[\d,.]*\s*(%|[a-z]{0,3}\)?)?$", re.I)
_FULL_DATE = re.compile(r"\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}|\b\d{1,2}:\d{2}\b|\b(jan|feb|mar|apr|may|"
                        r"jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d|\d (jan|feb|mar|apr|may|"
                        r"jun|jul|aug|sep|oct|nov|dec)", re.I)  # a day, not a year alone
_DATE_LIKE = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b|\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}|"
                        r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|"
                        r"\b\d{1,2}:\d{2}\b", re.I)


@dataclass(frozen=True)
class Cell:
    """One cell of a row as indexed: its column's header, its value, and the value's
    offsets in the row's sentence text."""

    column: str
    value: str
    start: int
    end: int


@dataclass(frozen=True)
class Row:
    sentence: Sentence
    cells: tuple[Cell, ...]
    key: tuple[int, ...]  # the cells the question names (indexes in ``cells``)
    score: float  # how much of the row the question names
    named: frozenset[str] = frozenset()  # the question's names and numbers it holds
    # it holds one of the question's names, when it names any: else it is a row of another
    # subject ("1990" of a table without Nigeria)
    of_subject: bool = True


@dataclass(frozen=True)
class CellChoice:
    """The cell chosen: the row, the cell, and how near its header came."""

    row: Row
    cell: Cell
    score: float


def row_cells(text: str) -> list[Cell]:
    """The cells of a table row as indexed, "Header: value; Header: value", or [] for a
    line that is not one (prose, a list, a single "Label: value"): two or more labelled
    cells, a label short and without a full stop, no cell opening a bracket it does not
    close; a value without a label (a column with no header) is kept, with an empty
    header."""
    cells: list[Cell] = []
    pos = 0
    labelled = 0
    for part in text.split("; "):
        if part.count("(") != part.count(")") or part.count("[") != part.count("]"):
            return []  # a parenthesis of prose ("The Normans (Norman: Nourmands; …)")
        i = part.find(": ")
        label = part[:i] if i > 0 else ""
        if label and (len(label) > MAX_LABEL_CHARS or len(label.split()) > MAX_LABEL_WORDS
                      or label.rstrip().endswith(".") or "|" in label):
            return []
        if label:
            labelled += 1
            value = part[i + 2:]
            start = pos + i + 2
        else:
            value, start = part, pos
        stripped = value.rstrip(" .")
        if stripped.strip():
            lead = len(value) - len(value.lstrip())
            cells.append(Cell(label.strip(), stripped.strip(), start + lead,
                              start + len(stripped)))
        pos += len(part) + 2
    return cells if labelled >= 2 and labelled * 2 >= len(cells) else []


def _tokens(text: str) -> list[str]:
    return [t.replace(",", "") for t in _TOKEN.findall(text.lower())]


def _stem(token: str) -> str:
    """A word without a plural's "s"; one ending in "ss" is none ("Hass", "class")."""
    return token[:-1] if len(token) > 3 and token.endswith("s") and not token.endswith(
        "ss") else token


# a month's key: the first three letters of its name ("sep" of "Sept")
_MONTH_KEYS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
               "dec")


def word_key(word: str) -> str:
    """A word as a header and a question are compared by it: its first five letters, a
    plural's without its "s" ("generate" and "net_generation", "clubs" and "Club"); a
    month's first three, however written ("October" and "Oct - Dec")."""
    low = word.lower()
    if (month := ENGLISH_MONTHS.get(low.removesuffix("."))) is not None:
        return _MONTH_KEYS[month - 1]
    return _stem(low)[:5]


# each form's kinds of column by their first five letters, for the longer words
_FORM_KEYS = tuple(frozenset(word_key(k) for k in kinds if len(k) > 5)
                   for _, kinds in FORM_COLUMNS)


# a run of capitalised words, "of" or "the" between them: "City of Philadelphia General Fund
# Obligation History" (the first word of a question is none)
_NAME_RUN = re.compile(r"(?<=\s)[A-Z][\w&.-]*(?:\s+(?:(?:of|the|and|for|de)\s+)*[A-Z][\w&.-]*)+")
_POSSESSIVE = re.compile(r"['’]s\b")
_REFERENCE = re.compile(r"\b(?:table|figure|fig\.|section|page|p\.|appendix|chapter|exhibit)"
                        r"\s+[A-Z]?\d+(?:[.-]\d+)*\b", re.I)


# what a question sets aside: "(not tentative)", "excluding the Pool fund", "other than
# water" (the word or two after)
_SET_ASIDE = re.compile(r"\b(?:not|excluding|except|other than|rather than|instead of)\s+"
                        r"(?:the\s+|a\s+|an\s+)?(?P<what>[^\W\d_][\w-]*(?:\s+[A-Z][\w-]*)?)")


@dataclass(frozen=True)
class Asked:
    """A question's words as a row's cells are compared with them, worked out once."""

    words: frozenset[str]  # every word, stemmed
    names: frozenset[str]  # the words of its names ("Bergen", "BRQ-M-L102")
    wanted: frozenset[str]  # its names and numbers: what names a row
    # the dates it names, each with its words ("June 2009": (2009, 6, None), {june, 2009})
    dates: tuple[tuple[CalendarDate, frozenset[str]], ...] = ()
    # the words of each name of two words or more ("General Fund Obligation History")
    phrases: tuple[frozenset[str], ...] = ()
    # its names that only name its document ("City of Melbourne" of "in the City of
    # Melbourne bars and pubs dataset", :func:`~ragctl.ask.documents.source_spans`)
    sourced: frozenset[str] = frozenset()
    # the words it sets aside ("tentative" of "the adopted (not tentative) budget")
    negated: frozenset[str] = frozenset()

    @classmethod
    def of(cls, question: str) -> Asked:
        names, numbers = _names_and_numbers(question)
        dates = tuple((d, frozenset(_stem(t) for t in _tokens(question[a:b])))
                      for d, a, b in dated_spans(question))
        phrases = tuple(words for m in _NAME_RUN.finditer(_POSSESSIVE.sub("", question))
                        if len(words := frozenset(_stem(t) for t in _tokens(m.group())
                                                  if t not in STOPWORDS)) >= 2)
        sourced: frozenset[str] = frozenset()
        if on("source_phrase"):
            sourced = (names | numbers) - frozenset().union(
                *_names_and_numbers(unsourced(question)))
        negated = frozenset(_stem(t) for m in _SET_ASIDE.finditer(question)
                            for t in _tokens(m.group("what")) if t not in STOPWORDS)
        return cls(frozenset(_stem(t) for t in _tokens(_without_days(question))), names,
                   names | numbers, dates, phrases, sourced, negated)


def _names_and_numbers(question: str) -> tuple[frozenset[str], frozenset[str]]:
    """A question's names' words, stemmed, and its numbers, but for the number of a table
    or page it points to ("in Table 4") and the day of a date it names ("30" of "on 30
    June 2016", which a row's cell of 30 does not name; a date cell does, by its date):
    no row's name."""
    names = frozenset(_stem(t) for n in question_names(question) for t in _tokens(n))
    plain = _without_days(_REFERENCE.sub(" ", question))
    return names, frozenset(t for t in _tokens(plain) if any(ch.isdigit() for ch in t))


def _without_days(question: str) -> str:
    """The question with each date it names to the day written as its month's name and
    its year ("30 June 2016" as "June 2016"): a cell of 30 is not named by it (a date
    cell is, by its date: :func:`date_named`)."""
    for (_, _, day), a, b in reversed(dated_spans(question)):
        if day is not None:
            kept = [w for w in re.findall(r"[^\W\d_]+|\d+", question[a:b])
                    if not w.isdigit() or _YEAR.fullmatch(w)]
            question = f"{question[:a]} {' '.join(kept)} {question[b:]}"
    return question


def date_named(value: str, q: Asked) -> tuple[CalendarDate, frozenset[str]] | None:
    """The question's date that a cell holding one date alone ("2009-06-01") falls in
    ("June 2009", "in 2009"), the most precise first; None when none does."""
    if not q.dates:
        return None
    found = dated_spans(value)
    if len(found) != 1 or len(value.strip()) > found[0][2] - found[0][1] + 9:  # a time
        return None
    given = found[0][0]
    fits = [d for d in q.dates if same_date(d[0], given)]
    return max(fits, key=lambda d: sum(x is not None for x in d[0]), default=None)


_FOOTNOTE_MARK = re.compile(r"(?<=[^\W\d_])\s*(?:\(\w{1,2}\)|\[\w{1,2}\]|[*†‡¹²³⁴⁵]+)$")


def key_cells(cells: Sequence[Cell], question: str | Asked) -> tuple[tuple[int, ...], float]:
    """The cells of a row that the question names, and how much of it: the question's
    words that cells it names whole hold (one each), and half a word for each of its
    names that only a longer cell holds ("Harvard" of "Harvard University"), less a tenth
    for each such cell (a row of many "Series X" cells is no better named than the row of
    Series EE), and less one for each cell of what it sets aside ("not tentative")."""
    q = question if isinstance(question, Asked) else Asked.of(question)
    asked, names = q.words, q.names
    key: list[int] = []
    whole: set[str] = set()
    partly: set[str] = set()
    partial = 0
    aside = 0  # cells of what the question sets aside ("not tentative")
    for i, c in enumerate(cells):
        # a footnote's mark after a label says nothing of the row: "Total net sales (1)"
        words = [_stem(t) for t in _tokens(_FOOTNOTE_MARK.sub("", c.value))]
        if len(words) > MAX_KEY_WORDS and ("," in c.value or " (" in c.value):
            # a long cell is named by its head: "DeWalt Cordless Drill, 12 Volt, 2
            # Batteries" (a name, then what it is), "… Demonstration Project (京能…)" (a
            # name, then the same in another language)
            head = c.value.split(",")[0] if "," in c.value else c.value
            words = [_stem(t) for t in _tokens(head.split(" (")[0])]
        if not words or len(words) > MAX_KEY_WORDS or all(w in STOPWORDS for w in words):
            continue
        found = [w for w in words if w in asked]
        if len(found) == len(words) and set(words) <= q.negated and on("set_aside"):
            aside += 1  # the row of another kind than the one asked of
        elif len(found) == len(words):
            key.append(i)
            whole.update(words)
        elif (dated := date_named(c.value, q)) is not None:  # "June 2009" of 2009-06-01
            key.append(i)
            whole.update(dated[1])
        elif any(w in names and len(w) >= 3 and not w.isdigit() for w in found):  # a word of
            # a name ("Harvard"), not a number that is part of one ("2017" of FA-2017-0009)
            key.append(i)
            partly.update(w for w in found if w not in STOPWORDS)  # not "of the" of "Office
            # of the Inspector General"
            partial += 1
    if aside:
        fired("set_aside")
    return tuple(key), len(whole) + 0.5 * len(partly - whole) - 0.1 * partial - aside


def matched_rows(question: str, sentences: Sequence[Sentence]) -> list[Row]:
    """The rows among ``sentences`` that the question names, the most named first (each
    sentence read once, however many of the question's words found it)."""
    rows: dict[int, Row] = {}
    q = Asked.of(question)
    seen: set[int] = set()
    document_names: dict[str, frozenset[str]] = {}  # path → the question's names it holds
    for s in sentences:
        if s.id in seen:
            continue
        seen.add(s.id)
        cells = row_cells(s.text)
        if not cells:
            continue
        key, score = key_cells(cells, q)
        if s.path not in document_names:
            document_names[s.path] = frozenset(
                _stem(t) for t in _tokens(document_name(s))) & q.names
        # a row named only by a word of a name the question gives its document ("World"
        # of "the World Economic Outlook Update"), no cell of it named whole, is not named
        stems = [{_stem(t) for t in _tokens(cells[i].value)} for i in key]
        keyed = set().union(*stems)
        by_names = keyed & q.names
        if by_names and on("most_named_rows") and by_names <= document_names[s.path] and \
                not any(w <= q.words for w in stems):
            continue
        if key and len(key) < len(cells):
            held = keyed & q.wanted
            # a name of several words the row holds less than half of it is not the row's:
            # "General Fund" of "the City's General Fund Obligation History", the title of
            # its report, which no other row need hold too (:func:`_verdict_in`)
            for words in q.phrases:
                if 2 * len(words & held) < len(words):
                    held -= words
            for i in key:  # a date cell holds the words of the question's date
                if (dated := date_named(cells[i].value, q)) is not None:
                    held |= dated[1] & q.wanted
            # the names of its document hold for every row ("Iowa" of iowa-electricity.csv);
            # those the question names its document by ("the F1 … workbook") name no row
            held = (held | document_names[s.path]) - q.sourced
            if q.sourced:
                fired("source_phrase")
            # the question's names, but for those naming a column ("the NSN of …") or its
            # document
            subject = q.names - q.sourced - {_stem(t) for c in cells for t in _tokens(c.column)}
            rows[s.id] = Row(s, tuple(cells), key, score, frozenset(held),
                             not subject or bool((held | keyed) & subject))
    return sorted(rows.values(), key=lambda r: -r.score)


def _anchors(question: str) -> list[str]:
    """What to look a row up by in a document: the question's names and numbers, then
    its other words of four letters or more ("fiberscope")."""
    out = [n for n in question_names(question) if len(n) >= 3]
    out += [t for t in re.findall(r"\b[\w-]*\d[\w.,/-]*\b", question) if len(t) >= 2]
    out += [w for w in content_words(question) if len(w) >= 4 and w.isalpha()]
    return list(dict.fromkeys(w.lower() for w in out))[:MAX_ANCHORS]


def candidate_rows(stages: LoadedStages, ev: Evidence) -> list[Row]:
    """The rows of the retrieved documents that the question names: in the passages kept,
    then in the first :data:`ROW_DOCUMENTS` documents retrieved, by its names and
    numbers."""
    kept = [s for h in ev.kept for s in ev.per_passage.get(h.passage_id, [])]
    found = list(kept)
    anchors = _anchors(ev.question)
    if anchors:
        paths: list[str] = []
        for h in [*ev.kept, *ev.hits]:
            if h.path not in paths:
                paths.append(h.path)
        store = stages.collection.store
        for path in paths[:ROW_DOCUMENTS]:
            for a in anchors:  # one by one: a common word must not crowd out a rare one
                found += store.sentences_like(path, [f"%{a}%"], limit=ROW_SEARCH_LIMIT)
    return matched_rows(ev.question, found)


def _fits(expects: Expected, value: str) -> bool | None:
    """Whether a cell's value is of the type the question asks for; None when it does not
    say. A count or a sum is a number that is no date ("06/30/2015" is not how many)."""
    if expects in ("number", "money"):
        return "number" in answer_types(value) and not _FULL_DATE.search(value)
    if expects == "date":
        return bool(_DATE_LIKE.search(value))
    if expects in ("person", "place"):
        return not _NUMERIC.match(value.strip())
    if expects == "thing":  # a name in words: not "41,18 €"
        return fits("thing", value)
    return None


# words headers abbreviate, as a question spells them out ("MAX" of "the maximum …")
HEADER_ABBREVIATIONS = {
    "max": "maximum", "min": "minimum", "typ": "typical", "avg": "average",
    "qty": "quantity", "amt": "amount", "pct": "percent", "temp": "temperature",
    "yr": "year", "yrs": "years", "mo": "month", "hrs": "hours", "mins": "minutes",
    "approx": "approximate", "est": "estimated", "dept": "department", "addr": "address",
    "tel": "telephone", "desc": "description", "ref": "reference", "cust": "customer",
    "inv": "invoice", "govt": "government", "intl": "international", "natl": "national",
    "q1": "first quarter", "q2": "second quarter", "q3": "third quarter",
    "q4": "fourth quarter", "yoy": "year over year", "y/y": "year over year"}


def spoken(header: str) -> str:
    """A column's header as words ("net_generation", "netGeneration" → "net generation";
    "MAX" → "maximum", :data:`HEADER_ABBREVIATIONS`), the way a question names it."""
    words = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", header).replace("_", " ").split()
    return " ".join([*(HEADER_ABBREVIATIONS.get(w.lower().rstrip("."), w) for w in words),
                     *_span_words(header)])


# a change between two months a header names ("May 2023 vs. May 2022") as a question says
# it, by how far apart they are
SPAN_WORDS = {12: "annual", 1: "monthly", 3: "quarterly"}
_VERSUS = re.compile(r"\s*(?:vs\.?|versus|compared (?:with|to)|over|on)\s*", re.I)


# a statement's period as a question says it: "Twelve Months Ended September 30, 2023" is
# the fiscal year, "Three Months Ended …" a quarter
PERIOD_WORDS = (("twelve|12", "fiscal full year annual"), ("three|3", "quarter quarterly"),
                ("six|6", "half year"), ("nine|9", "nine months"))
_MONTHS_ENDED = re.compile(r"\b(twelve|three|six|nine|12|3|6|9)[- ]months?\s+ended\b|"
                           r"\b(?:fiscal\s+)?(year)\s+ended\b|\b(quarter)\s+ended\b", re.I)


def _span_words(header: str) -> list[str]:
    """What a header that sets one month against another says of the change
    (:data:`SPAN_WORDS`): "annual" for "May 2023 vs. May 2022"; and what a statement's
    period is (:data:`PERIOD_WORDS`): "fiscal full year annual" for "Twelve Months Ended
    September 30, 2023"."""
    m = _MONTHS_ENDED.search(header)
    if m is not None:
        length = "three" if m.group(3) else (m.group(1) or "twelve").lower() \
            if m.group(2) is None else "twelve"
        return [next(w for ks, w in PERIOD_WORDS if length in ks.split("|"))]
    found = dated_spans(header)
    if len(found) != 2 or not _VERSUS.fullmatch(header[found[0][2]:found[1][1]]):
        return []
    (a, _, _), (b, _, _) = found
    if a[1] is None or b[1] is None:
        return []
    apart = abs((a[0] * 12 + a[1]) - (b[0] * 12 + b[1]))
    return [SPAN_WORDS[apart]] if apart in SPAN_WORDS else []


# headers of this many words or fewer are read with the acronyms the question spells out
ACRONYM_HEADER_WORDS = 2
# words an acronym may pass over ("YTD" year to date, "GST" goods and services tax)
_ACRONYM_SKIPS = frozenset("and of to the for in on &".split())
_ACRONYM = re.compile(r"([A-Z]{2,6})s?")  # "HR", "HRs", "YTD", "GST"


def spelled_out(header: str, question: str) -> str:
    """A column's header as words (:func:`spoken`), each acronym in it that the question
    spells out written as the question writes it: "HRs" for "home runs", "YTD" for "year
    to date", "GST" for "goods and services tax"; "hrs" alone is "hours". A longer header
    (:data:`ACRONYM_HEADER_WORDS`) is as :func:`spoken` gives it: its other words say what
    it holds."""
    qwords = re.findall(r"[^\W\d_]+", question)
    words = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", header).replace("_", " ").split()
    if len(words) > ACRONYM_HEADER_WORDS:  # "Difference from October 2022 WEO Projections":
        # its other words say what it is; "WEO" names the report
        return " ".join(_written_out(w, qwords) for w in spoken(header).split())
    out = []
    for word in words:
        m = _ACRONYM.fullmatch(word.rstrip(".:"))
        found = _spelled(m.group(1).lower(), qwords) if m else None
        out.append(found or " ".join(_written_out(w, qwords) for w in spoken(word).split()))
    return " ".join(out)


SHORTENED = (2, 4)  # letters of a header's word that may be a longer word cut short
SHORTENED_CUT = 3  # letters at least that the question's word goes on past it


def _written_out(word: str, qwords: Sequence[str]) -> str:
    """A header's short word as the question writes it whole, when the question has a
    word that starts with it and goes on for :data:`SHORTENED_CUT` letters or more:
    "Int" of "URBAN AREA Int." for "interstate", "Coef" for "coefficient" (rule
    ``header_prefix``); else the word."""
    bare = word.rstrip(".:").lower()
    if not (SHORTENED[0] <= len(bare) <= SHORTENED[1] and bare.isalpha()) or \
            bare in STOPWORDS or not on("header_prefix"):
        return word
    found = min((q for q in qwords if len(q) >= len(bare) + SHORTENED_CUT
                 and q.lower().startswith(bare)), key=len, default=None)
    if found is None:
        return word
    fired("header_prefix")
    return found.lower()


def _spelled(acronym: str, words: Sequence[str]) -> str | None:
    """The run of ``words`` whose initials are ``acronym`` (words that say something, not
    "is" or "the"; joining words such as "and", "to" counted or passed over), or None."""
    for joiners in (True, False):
        for i in range(len(words)):
            n, j = 0, i
            while j < len(words) and n < len(acronym):
                w = words[j].lower()
                joiner = w in _ACRONYM_SKIPS
                if w[0] == acronym[n] and (w not in STOPWORDS or (joiner and joiners and n)):
                    n += 1
                elif not (n and joiner):
                    break
                j += 1
            if n == len(acronym) >= 2:
                return " ".join(words[i:j])
    return None


def said_share(header: str, asked: set[str]) -> float:
    """The share of a header's words (keyed, less stopwords) that ``asked`` holds."""
    words = {word_key(t) for t in _tokens(header) if t not in STOPWORDS}
    return len(words & asked) / len(words) if words else 0.0


def column_scores(vectors: Callable[[Sequence[str]], np.ndarray], question: str, row: Row,
                  expects: Expected) -> list[tuple[float, Cell]]:
    """Each answerable cell of ``row`` (not one the question names) with how near its
    header comes to what the question asks, best first (:data:`COLUMN_WEIGHTS`);
    ``vectors`` embeds texts with the index's embedder."""
    # a code the question writes as it is ("DS1631Z+") is the row's key: cells that share
    # a word of it ("DS1631Z (See Note)") are answers, not keys
    code = [i for i in row.key if written_code(row.cells[i].value, question)]
    code_words = {t for i in code for t in _tokens(row.cells[i].value)}
    key = [*code, *(i for i in row.key if i not in code
                    and not code_words & set(_tokens(row.cells[i].value)))]
    key_words = {t for i in key for t in _tokens(row.cells[i].value)}
    # not the words that name its document ("fatal crash report"): they name no column
    asking = unsourced(question) if on("source_phrase") else question
    if asking != question:
        fired("source_phrase")
    rest = " ".join(w for w in asking.split()
                    if not set(_tokens(w)) or not set(_tokens(w)) <= key_words)
    options = [c for i, c in enumerate(row.cells)
               if i not in key and c.column.lower() not in _NOT_COLUMNS]
    if expects in ("number", "money") and on("typed_answer"):
        coded = [c for c in options if _coded(c.column)]
        if coded:
            fired("typed_answer")
            options = [c for c in options if c not in coded]
    if not options:
        return []
    fitted = [(c, _fits(expects, c.value)) for c in options]
    if any(fit for _, fit in fitted):  # a cell of the type asked: none of another is
        fitted = [(c, fit) for c, fit in fitted if fit is not False]  # the answer
    said = [spelled_out(c.column, question) for c, _ in fitted]
    vecs = vectors([rest, *said])
    asked = {word_key(t) for t in _tokens(rest) if t not in STOPWORDS}
    w = COLUMN_WEIGHTS
    out = []
    for (c, fit), header, vec in zip(fitted, said, vecs[1:], strict=True):
        # as said ("third quarter" of "Q3") or as written ("Q3 FY24" of "in Q3 FY24")
        share = max(said_share(h, asked) for h in (header, c.column))
        score = float(vecs[0] @ vec) * w["embedding"] + share * w["words"] \
            + (0.0 if fit is None else w["fit"] if fit else w["misfit"]) \
            + year_weight(question, c.column, row.sentence) + form_weight(question, c.column)
        out.append((score, c))
    out.sort(key=lambda x: -x[0])
    return out


def _coded(header: str) -> bool:
    """Whether a header names a column of codes (:data:`_CODE_HEADERS`, its last word)."""
    words = _tokens(spoken(header))
    return bool(words) and words[-1].lower() in _CODE_HEADERS


def form_weight(question: str, header: str) -> float:
    """:data:`COLUMN_WEIGHTS` "form" when the question's form asks for the kind of column
    ``header`` names (:data:`FORM_COLUMNS`: "how many" a count, "what share" a percentage),
    else 0."""
    if not on("form_column"):
        return 0.0
    low = " ".join(question.lower().split())
    words = {t.lower() for t in re.findall(r"[^\W_]+|%", spoken(header))}
    keys = {word_key(w) for w in words if len(w) > 5}  # "Quantitiy" as written, "Totals"
    for (form, kinds), kind_keys in zip(FORM_COLUMNS, _FORM_KEYS, strict=True):
        if re.match(form, low) and (words & kinds or keys & kind_keys):
            fired("form_column")
            return COLUMN_WEIGHTS["form"]
    return 0.0


# a header's span of years in two digits: "fatalities_85_99", "incidents 00-14"
_SHORT_YEARS = re.compile(r"(?<![\d.])(\d\d)[_–-](\d\d)(?![\d.])")


def header_years(header: str) -> set[str]:
    """The years a header names: written whole ("2023 cvap_turnout"), or as a span in two
    digits ("fatalities_85_99": 1985 to 1999; a year from 50 is of the 1900s)."""
    years = set(_YEAR.findall(header))
    for m in _SHORT_YEARS.finditer(header):
        a, b = (int(x) + (1900 if int(x) >= 50 else 2000) for x in m.groups())
        if a < b:
            years.update(str(y) for y in range(a, b + 1))
    return years


def year_weight(question: str, header: str, document: Sentence | None = None) -> float:
    """What a header's year says of it, when the question names a year: "2023
    cvap_turnout" for "the 2023 turnout" (:data:`COLUMN_WEIGHTS` "year"), not "Change in
    % turnout from 2021" ("other_year"); nothing when either names none. A year that
    names the ``document`` (a sentence of it: in its title or file name, "the IMF January
    2023 Outlook") picks no column, when the question names another."""
    asked, held = set(_YEAR.findall(question)), header_years(header)
    if document is not None and len(asked) > 1:
        naming = {y for y in asked if y in f"{document.title} {Path(document.path).name}"}
        asked = asked - naming or asked
    if not asked or not held:
        return 0.0
    return COLUMN_WEIGHTS["year"] if asked & held else COLUMN_WEIGHTS["other_year"]


# "How many men aged 65+ with no qualification rated their sense of purpose 0-6?" of a row
# "Sex: Male; Age group: 65+; Highest qualification: No Qualification; Sense of purpose:
# 0 - 6; Value: 9000": a table of counts by several dimensions (a statistics office's
# long format) names its dimensions' values in the question and heads its one measure
# with a word that says nothing ("Value", "net_generation", "No. Of"). When the question
# names at least SOLE_MEASURE_KEYS of a row's cells and asks how many or how much, and one
# cell of the row is left that holds a number, that cell is the answer.
SOLE_MEASURE_KEYS = 2


def sole_measure(row: Row, scored: Sequence[tuple[float, Cell]], expects: Expected,
                 question: str = "") -> Cell | None:
    """The one cell of the measure asked for: for "how much", the row's one cell that
    holds an amount of money ("£80.99" of a statement's row named by its payee); when ``row`` is
    named by :data:`SOLE_MEASURE_KEYS` or more of its cells: for a number or an amount, the one
    other cell (``scored``: its :func:`column_scores`) when it holds one; for a question
    of no type whose "what …" the row's own cells name, the one other cell that holds a
    number ("what thermometer error …": "MAX: ±1.5" of a datasheet row named by its
    parameter, Thermometer Error, and its condition, beside "SYMBOL: T ERR")."""
    money = [c for _, c in scored if _CURRENCY.search(c.value)]
    if expects in ("number", "money") and len(money) == 1 and _HOW_MUCH.match(question):
        return money[0]  # "how much … for Next Directory": the row's one amount
    if len(row.key) < SOLE_MEASURE_KEYS:
        return None
    if expects in ("number", "money"):
        return scored[0][1] if len(scored) == 1 and _fits(
            expects, scored[0][1].value) is True else None
    m = _WHAT.search(question)
    if expects != "any" or m is None:
        return None
    asked = {_stem(t) for t in _tokens(m.group("what"))} - STOPWORDS
    keyed = {_stem(t) for i in row.key for t in _tokens(row.cells[i].value)}
    numbers = [c for _, c in scored if _fits("number", c.value)]
    return numbers[0] if asked and asked <= keyed and len(numbers) == 1 else None


_CURRENCY = re.compile(rf"{CURRENCY_SIGNS}|\b(?:{CURRENCY_CODES})\b")
_HOW_MUCH = re.compile(r"\s*how much\b", re.I)
# "what thermometer error does …": what the question asks, before its verb
_WHAT = re.compile(r"\b(?:what|which)\s+(?P<what>(?:[\w-]+\s+){0,3}?[\w-]+)\s+(?:is|are|was|"
                   r"were|does|do|did|has|have|had|can|will|would)\b", re.I)


@dataclass(frozen=True)
class CellVerdict:
    """What the table says: the cell chosen, or the row found with no column near enough
    (``columns``: the row's headers, for the refusal), or neither."""

    choice: CellChoice | None = None
    row: Row | None = None
    columns: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()  # names the table holds, but never in one row
    path: str = ""
    empty: CellChoice | None = None  # the cell that answers holds nothing ("-", "n/a")


def named_place(question: str, places: Iterable[str]) -> str | None:
    """The longest of ``places`` (a document's sections: a workbook's sheets) whose words
    the question all names ("March", "Kentucky"), else the one section whose own heading
    it names ("… in the Theory section"), or None."""
    asked = set(tokens(question))
    named = [p for p in places if (words := set(tokens(p)) - STOPWORDS) and words <= asked]
    if not named:  # a section by its own heading ("the Theory section" of "Computer
        # Science - Great Courses > Theory"), when one place alone has it
        own = [p for p in places if (words := set(tokens(p.split(" > ")[-1])) - STOPWORDS)
               and words <= asked and " > " in p]
        return own[0] if len(own) == 1 else None
    return max(named, key=len)


def find(stages: LoadedStages, ev: Evidence, expects: Expected) -> CellVerdict:
    """The cell that answers, from the rows the question names best (:func:`candidate_rows`);
    an empty verdict when no row is named, or the best-named rows disagree."""
    rows = candidate_rows(stages, ev)
    if not rows:
        return CellVerdict()
    # the rows of the documents that name the most of the question's names: "South Africa
    # … according to Stats SA's May 2023 CPI release" is of the release, not of another
    # report's table with a row for South Africa
    if on("most_named_rows") and ev.grounding.documents:
        most_named = max(ev.grounding.documents.values())
        rows = [r for r in rows if ev.grounding.documents.get(r.sentence.path, 0) == most_named]
        if not rows:
            return CellVerdict()
    # a sheet or section the question names ("P8.3 in the AXISDEF sheet"): its rows
    place = named_place(ev.question, {r.sentence.place for r in rows if r.sentence.place})
    if place is not None:
        rows = [r for r in rows if r.sentence.place == place]
    # when no row names the question's subject: the rows of the one document that names
    # most of its names elsewhere ("Galaxy Gaming" in the text of a 10-K whose rows never
    # say it)
    subject = [r for r in rows if r.of_subject]
    named_by = {r.sentence.path: ev.grounding.documents.get(r.sentence.path, 0) for r in rows}
    most = max(named_by.values(), default=0)
    naming = [p for p, n in named_by.items() if n == most]
    if not subject and most and len(naming) == 1:  # the one document that names the most
        subject = [r for r in rows if r.sentence.path == naming[0]]
    if not subject:
        return CellVerdict()
    # the question's names and numbers that this table holds: the row it asks about holds
    # them all ("France" and "1973"), or the table has no such row
    # the documents whose rows the question names best, in turn (two statements with a
    # row "Mac" each): the one whose cell answers best, told by its column's header
    best_score = max(r.score for r in subject)
    paths = list(dict.fromkeys(r.sentence.path for r in subject if r.score == best_score))
    verdicts = [_verdict_in(stages, ev, expects, rows, subject, p) for p in paths]
    chosen = [v for v in verdicts if v.choice is not None]
    if len(chosen) > 1:
        return max(chosen, key=lambda v: v.choice.score if v.choice else 0.0)
    return chosen[0] if chosen else verdicts[0]


def _verdict_in(stages: LoadedStages, ev: Evidence, expects: Expected, rows: list[Row],
                subject: list[Row], path: str) -> CellVerdict:
    """What the rows of the document ``path`` say (:func:`find`)."""
    # a name or number that heads one of the row's columns ("1990") is what it asks of it
    headers = {_stem(t) for r in rows if r.sentence.path == path for c in r.cells
               for t in _tokens(c.column)}  # of every row of its document found
    named = frozenset().union(*(r.named for r in rows if r.sentence.path == path)) - headers
    # of the rows of its own table (headers mostly shared): a list of exhibits that names
    # "Gaming" is another table than the revenue by region
    rows = [r for r in subject if r.sentence.path == path and r.named >= frozenset().union(
        *(o.named for o in rows if o.sentence.path == path and _same_columns(o, r))) - headers]
    if not rows:
        return CellVerdict(absent=tuple(sorted(named)), path=path) if len(named) >= 2 \
            else CellVerdict()
    top = [r for r in rows if r.score == rows[0].score]
    if on("year_not_in_table") and (year := year_not_held(stages, ev.question, top[0])
                                    or month_not_held(ev.question, top[0])
                                    or day_not_held(stages, ev.question, top[0])):
        fired("year_not_in_table")  # "in the 2012 survey" of a table of 2014, "June 2023"
        return CellVerdict(absent=(year,), path=path)  # of a table of months to May 2023
    # "DS1631Z+": the one row whose code the question writes as it is, not "DS1631Z" or
    # "DS1631Z+T&R"
    exact = [r for r in rows if any(written_code(r.cells[i].value, ev.question) for i in r.key)]
    top = exact if len({r.sentence.id for r in exact}) == 1 else top
    vectors = _embedded(stages)  # the rows of one table share their headers
    if len(top) > 1 and on("nearest_row"):
        table = table_sentences(stages, top[0].sentence)
        nearest = nearest_row(vectors, ev.question, top, table)
        if nearest is not None:
            top = [nearest]
            fired("nearest_row")
    picks: list[CellChoice] = []
    lone = 0  # the rows picked whose one cell left is the measure asked for
    for row in top[:5]:
        scored = column_scores(vectors, ev.question, row, expects)
        if scored:
            measure = sole_measure(row, scored, expects, ev.question)
            picks.append(CellChoice(row, measure if measure is not None and scored[0][0] <
                                    MIN_COLUMN_SCORE else scored[0][1], scored[0][0]))
            lone += measure is not None
    if not picks:
        return CellVerdict()
    best = max(picks, key=lambda p: p.score)
    # the one value that rows of named dimensions hold (rows named alike agree on it)
    sole = best.score < MIN_COLUMN_SCORE and on("sole_measure") and len(
        {p.cell.value for p in picks}) == 1 and lone == len(picks)
    if sole:
        fired("sole_measure")
    elif best.score < MIN_COLUMN_SCORE:
        return CellVerdict(row=best.row, columns=tuple(
            c.column for c in best.row.cells if c.column))
    same = [p for p in picks if p.cell.column == best.cell.column]
    if len({_as_value(p.cell.value) for p in same}) > 1:
        return CellVerdict()  # several rows named alike, with different values
    if not measure_named(stages, ev.question, best):
        return CellVerdict()  # "Spain's GDP in 2010" from a table of child mortality
    if blank(best.cell.value):  # the table's "-": it gives no value, and no neighbour's
        return CellVerdict(empty=best)
    return CellVerdict(choice=best)


def _same_columns(a: Row, b: Row) -> bool:
    """Whether two rows are of one table: more than half the headers of the one with fewer
    are the other's too."""
    ca, cb = {c.column for c in a.cells}, {c.column for c in b.cells}
    return 2 * len(ca & cb) > min(len(ca), len(cb))


def written_code(value: str, question: str) -> bool:
    """Whether a cell holds a code (it has a digit) that the question writes as the cell
    does, signs and all, not as part of a longer code ("DS1631Z+" in "… number
    DS1631Z+?", not "DS1631Z+T&R"); a count of three digits or fewer is none ("2" of
    "Option 2")."""
    v = value.strip()
    if re.fullmatch(r"\d{1,3}", v):
        return False
    return any(ch.isdigit() for ch in v) and re.search(
        rf"(?<![\w+&/.-]){re.escape(v)}(?![\w+&/-])", question, re.I) is not None


def _as_value(text: str) -> str:
    """A cell's value as rows that agree write it alike: "$19,984,378" is "19,984,378",
    "$2,856.00" is "2856" (a number with its thousands marked, or its cents, is the number)."""
    value = re.sub(r"^[$€£¥₹]\s*|\s+", "", text.strip())
    if re.fullmatch(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?", value):
        return str(Decimal(value.replace(",", "")).normalize())
    return value


def table_sentences(stages: LoadedStages, seed: Sentence) -> list[Sentence]:
    """The rows ("Header: value; …" sentences) of ``seed``'s document and section, in
    order, at most :data:`MAX_TABLE_ROWS`: the table ``seed`` is a row of."""
    return [s for s in stages.collection.store.sentences_like(seed.path, ["%: %"],
                                                              limit=MAX_TABLE_ROWS)
            if s.place == seed.place]


def year_not_held(stages: LoadedStages, question: str, row: Row) -> str | None:
    """A year the question names that neither the row (its headers' spans of years
    among it: :func:`header_years`) nor its document (its title, file name, section or
    any of its sentences: a sheet's notes) holds, or None."""
    s = row.sentence
    around = f"{s.text} {s.title} {Path(s.path).name} {s.place}"
    spans = set().union(*(header_years(c.column) for c in row.cells))
    store = stages.collection.store
    for year in dict.fromkeys(_YEAR.findall(question)):
        if year not in around and year not in spans and not store.sentences_like(
                s.path, [f"%{year}%"], limit=1):
            return year
    return None


def month_not_held(question: str, row: Row) -> str | None:
    """A month the question names ("for June 2023") that none of the row's headers holds,
    when they name months ("May 2023 vs. May 2022"), nor its cells, nor its document's
    title or file name; None when it holds each."""
    if not any(d[1] is not None for c in row.cells for d in calendar_dates(c.column)):
        return None
    # the months of its headers and of its cells (a row of that month, "2009-06-01")
    held = {d[:2] for c in row.cells for text in (c.column, c.value)
            for d in calendar_dates(text)}
    s = row.sentence
    around = f"{s.title} {Path(s.path).name}".lower()
    for (year, month, _), a, b in dated_spans(question):
        said = question[a:b]
        if month is not None and (year, month) not in held and not (
                said[:3].lower() in around and str(year) in around):
            return said
    return None


DAY_LOOKED = 200  # sentences of a document naming a date's year, read for the date


def day_not_held(stages: LoadedStages, question: str, row: Row) -> str | None:
    """A day the question names ("for the week ended February 18, 2026") that none of the
    row's headers holds, when they name days ("Week ended Mar 4, 2026"), nor its cells,
    nor any sentence of its document that writes the day's year (a release's own date,
    "of March 5, 2026", names no column); None when each is held."""
    headers = [d for c in row.cells for d in calendar_dates(c.column)]
    if not any(d[2] is not None for d in headers):
        return None
    held = [*headers, *(d for c in row.cells for d in calendar_dates(c.value))]
    store = stages.collection.store
    for day, a, b in dated_spans(question):
        if day[2] is None or any(same_date(day, d) for d in held if d[2] is not None):
            continue
        written = store.sentences_like(row.sentence.path, [f"%{day[0]}%"], limit=DAY_LOOKED)
        if not any(same_date(day, d) for s in written for d, _, _ in dated_spans(s.text)
                   if d[2] is not None):
            return question[a:b]
    return None


# Rows the question names equally ("How many men aged 45-64 …" of the rows for Male and
# for Female, 45 - 64): the row whose own words (its cells in the columns in which the rows
# differ, not numbers) come nearest the question by the index's embedder, nearer than the
# next by NEAREST_ROW_MARGIN ("men": Male 0.29, Female 0.15), and nearer than those of
# any other row of the table ("droughts in 1930" of a table with no drought in 1930 is
# none of that year's rows).
NEAREST_ROW_MARGIN = 0.05
NEAREST_ROW_OTHERS = 300  # other rows' words weighed against them


def nearest_row(vectors: Callable[[Sequence[str]], np.ndarray], question: str,
                rows: Sequence[Row], table: Sequence[Sentence]) -> Row | None:
    """Of ``rows`` named equally by the question, the one whose distinguishing words come
    nearest it (:data:`NEAREST_ROW_MARGIN`), when no other row of ``table`` (the sentences
    of its document and section) has words nearer still; or None."""
    columns = [c.column for c in rows[0].cells]
    if any([c.column for c in row.cells] != columns for row in rows):
        return None
    differ = [i for i in range(len(columns)) if i not in rows[0].key
              and len({r.cells[i].value for r in rows}) > 1
              and not any(_NUMERIC.match(r.cells[i].value.strip()) for r in rows)]

    def words(cells: Sequence[Cell]) -> str:
        return " ".join(cells[i].value for i in differ)

    texts = [words(r.cells) for r in rows]
    if not differ or len(set(texts)) < len(texts):
        return None
    others: list[str] = []
    for s in table:
        cells = row_cells(s.text)
        if [c.column for c in cells] == columns and (w := words(cells)) not in texts:
            others.append(w)
    others = list(dict.fromkeys(others))[:NEAREST_ROW_OTHERS]
    vecs = vectors([question, *texts, *others])
    sims = vecs[1:] @ vecs[0]
    order = np.argsort(-sims)
    if order[0] >= len(texts):  # another row of the table is nearer: not one of these
        return None
    runner_up = max(float(x) for i, x in enumerate(sims) if i != order[0])
    if float(sims[order[0]]) - runner_up < NEAREST_ROW_MARGIN:
        return None
    return rows[int(order[0])]


def _embedded(stages: LoadedStages) -> Callable[[Sequence[str]], np.ndarray]:
    """The index's embedder, each text embedded once however often it is asked for."""
    seen: dict[str, np.ndarray] = {}

    def vectors(texts: Sequence[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in seen]
        if new:
            seen.update(zip(new, stages.retriever.embedder.embed(new), strict=True))
        return np.stack([seen[t] for t in texts])

    return vectors


def measure_named(stages: LoadedStages, question: str, choice: CellChoice) -> bool:
    """Whether the table the cell comes from names what the question asks, when its column
    is headed by a number ("2010") that says nothing of it: one of the question's other
    words (not the row's, not the column's) in the document's title, file name, section
    or text ("mortality" in the page of an under-five mortality table, not "GDP")."""
    column = choice.cell.column
    if not _NUMERIC.match(column.strip()):
        return True
    s = choice.row.sentence
    named = {t for i in choice.row.key for t in _tokens(choice.row.cells[i].value)}
    asked = [w for w in content_words(question) if w.isalpha() and len(w) >= 3
             and w not in named and w not in _QUESTION_WORDS]
    if not asked:
        return True
    around = f"{s.title} {Path(s.path).stem} {s.place}".lower()
    if any(w[:5] in around for w in asked):
        return True
    return bool(stages.collection.store.sentences_like(
        s.path, [f"%{w[:5]}%" for w in asked], limit=1))


def names_counted(question: str, sentence: Sentence) -> bool:
    """Whether a table row can answer "how many <things>": it names them (the word's
    first five letters) in a cell or a header, or its section, title or path does
    ("how many employees" is no row "Total income from operations"). Prose, and other
    questions, always can."""
    noun = counted_noun(" ".join(question.split()).lower())
    if noun is None or not row_cells(sentence.text):
        return True
    key = noun[:5]
    return key in f"{sentence.text} {sentence.place} {sentence.title} {sentence.path}".lower()


# words of a question that ask, not name what is asked
_QUESTION_WORDS = frozenset({"many", "much", "what", "which", "when", "where", "who", "how",
                             "was", "were", "value", "number", "amount"})


def cite(ans: Answer, ev: Evidence, choice: CellChoice) -> None:
    """The chosen cell as the answer, cited by its offsets, with its row and column."""
    s, cell = choice.row.sentence, choice.cell
    key = _row_key(choice)
    ans.kind = "cell"
    ans.candidates = [{"answer": cell.value, "rule": "table cell", "row": key,
                       "column": cell.column, "score": round(choice.score, 4)}]
    unit = row_unit(choice.row, cell)
    ans.raw_answer = f"{cell.value} {unit}" if unit else cell.value
    ans.answer = f"{ans.raw_answer} [1]"
    ans.sources = [replace(Citation.of(1, s, answer=s.source_offsets(cell.start, cell.end),
                                       also_in=tuple(ev.also.get(s.passage_id, ()))),
                           row=key, column=cell.column)]
    ans.sentences = [AnswerSentence(cell.value, (1,), 1.0, True)]
    ans.confidence = round(min(1.0, max(0.0, choice.score)), 4)


_UNIT_HEADERS = frozenset({"unit", "units", "uom"})


def row_unit(row: Row, cell: Cell) -> str:
    """The unit a row gives its numbers in a column of their own ("UNITS: ms" beside
    "MAX: 187.5"), for a number cell that writes none; else "" (a column "Units" of
    numbers counts things: "Units: 2")."""
    if not re.fullmatch(r"[-+±−]?[\d.,]+", cell.value.strip()):
        return ""
    unit = next((c.value.strip() for c in row.cells
                 if spoken(c.column).lower() in _UNIT_HEADERS), "")
    return unit if 0 < len(unit) <= 12 and any(ch.isalpha() for ch in unit) else ""


def _row_key(choice: CellChoice) -> str:
    """A row's key cells, each once (a sheet that repeats its labels right of its figures:
    "Sales Tax", not "Sales Tax; Sales Tax; Sales Tax")."""
    return "; ".join(dict.fromkeys(choice.row.cells[i].value for i in choice.row.key))


def refuse_empty(ans: Answer, choice: CellChoice) -> None:
    """Refuse the question whose cell holds nothing ("-", "n/a"), naming the cell."""
    key = _row_key(choice)
    ans.abstained = True
    ans.abstain_reason = (f"the table's row for {key} gives no {choice.cell.column} "
                          f"({choice.cell.value!r} in {Path(choice.row.sentence.path).name})")


def refuse_neighbour(ans: Answer, verdict: CellVerdict) -> bool:
    """Refuse an answer taken from a table row when the table has no column for what the
    question asks (a neighbouring cell), naming the row's columns; a refusal already made
    says so too. True when an answer was refused."""
    if verdict.row is None and not verdict.absent:
        return False
    if not ans.abstained and (not ans.sources or not row_cells(ans.sources[0].text)):
        return False  # the reader found it in prose
    refused = not ans.abstained
    ans.abstained = True
    if verdict.row is not None:
        key = "; ".join(verdict.row.cells[i].value for i in verdict.row.key)
        ans.abstain_reason = (f"the table's row for {key} has no column that answers it "
                              f"(its columns: {', '.join(verdict.columns)})")
    else:
        together = " together" if len(verdict.absent) > 1 else ""
        ans.abstain_reason = (f"no row of {Path(verdict.path).name} holds "
                              f"{' and '.join(verdict.absent)}{together}")
    if refused:
        ans.answer = ans.raw_answer = ""
        ans.sources, ans.sentences = [], []
    return refused

