"""Answers that take a computation over a table, with the working shown and every cell cited.

"How many more members does the Oslo club have than the Bergen club?", "Which month had the
highest use?", "Who finished after Ana Ruiz?", "What is the average price of the plans?":
the answer is no one cell. A table (the rows of one sheet or table as indexed, "Header:
value; Header: value", :class:`Table`) answers them by an operation over its typed
columns (:data:`~ragctl.models.tableops.OPERATIONS`, and the percentage change, which only
the question's form asks for): a count of the rows that hold a value the question names
(a date of the year it names, too), a sum, an average, the largest or smallest value of a
column, the row with the largest or smallest (or the second largest …), the difference of
two rows' values or its percentage of the first, the first or last row, the row after or
before the one the question names.

- **Which operation** is chosen by a model (:class:`OperationModel`, ``models/minilm-
  tableops``): a softmax over the question's embedding, trained by weak supervision on
  WikiTableQuestions' training file (the operations that give each question's answer on
  its table, :mod:`ragctl.training.tableops`). Lookups (one cell) stay with
  :mod:`ragctl.ask.cells`.
- **Its arguments**: the condition is the column and value of the cells the question names
  (:func:`conditions`); the column to add up, compare or take is the one whose header
  comes nearest the question, by the index's own embedder, among the columns of the right
  type (:func:`best_column`).
- **The working**: "97 (= 412 − 315: Oslo 412, Bergen 315)", each row used cited with the
  cell's column; ``--json`` gives the operation, its arguments and each cell.

When the model asks for an operation that the table cannot carry out (no number to add,
no row named), nothing is computed, and no cell of the table is printed in its place.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from dataclasses import replace as _replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragctl.ask.cells import (
    MAX_LABEL_CHARS,
    MAX_LABEL_WORDS,
    MAX_TABLE_ROWS,
    Cell,
    blank,
    candidate_rows,
    header_years,
    named_place,
    row_cells,
    spelled_out,
    spoken,
    word_key,
    year_weight,
)
from ragctl.ask.documents import _YEAR, unsourced
from ragctl.ask.question import main_clause
from ragctl.ask.switches import fired, on
from ragctl.records import AnswerSentence, Citation, Sentence
from ragctl.text import (
    PART_OF,
    STOPWORDS,
    CalendarDate,
    dated_spans,
    normalize_answer,
    same_date,
    tokens,
)

if TYPE_CHECKING:
    from ragctl.ask.stages import Evidence, LoadedStages
    from ragctl.records import Answer

SAYS = {"count": "rows", "sum": "sum", "average": "average", "max": "largest",
        "min": "smallest", "argmax": "the most", "argmin": "the least",
        "difference": "difference", "percent_change": "percentage change", "share": "share",
        "ratio": "ratio",
        "first": "first", "last": "last", "next": "next", "previous": "previous"}
TABLES_TRIED = 3  # tables among the passages kept that a computation is tried on
HITS_FOR_TABLES = 10  # passages retrieved whose rows are tables to try, after those kept
MAX_CITED = 6  # rows cited for a count or a sum (the rest are counted, not cited)

_NUMBER = re.compile(r"[-−–+]?\(?[$€£¥₹]?\s*\d[\d,]*(?:\.\d+)?")
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}


def number(text: str) -> float | None:
    """The number a cell holds, with its sign and scale ("$1,998.00" → 1998, "(3)" → -3,
    "1.2 million" → 1.2e6, "12%" → 12, "6,3" → 6.3), or None when it holds none or more
    than a number and a unit ("3–4", "12 of 20", a version "40.0.0")."""
    t = text.strip()
    m = _NUMBER.match(t)
    if m is None:
        return None
    rest = t[m.end():].strip().lower()
    raw = m.group()
    negative = raw.startswith(("-", "−", "–")) or (raw.lstrip("+-−–").startswith("(")
                                                 and rest.startswith(")"))
    if "." not in raw and re.search(r"\d,\d{1,2}$", raw) and raw.count(",") == 1:
        raw = raw.replace(",", ".")  # a decimal comma ("6,3", "100,00"): a thousands
        # comma has three digits after it
    digits = re.sub(r"[^\d.]", "", raw.replace(",", ""))
    if not digits or digits.count(".") > 1:
        return None
    value = float(digits)
    rest = rest.lstrip(")").strip()
    word = rest.split()[0] if rest.split() else ""
    if word in _SCALE:
        value *= _SCALE[word]
        rest = rest[len(word):].strip()
    if rest and (re.match(r"^(?:[\d–-]|\.\d)", rest) or len(rest.split()) > 2
                 or " of " in f" {rest} "):
        return None  # "3–4", "12 of 20", a version "40.0.0"
    return -value if negative else value


def shown(value: float) -> str:
    """A computed number as a person writes it: 97, 12.5, 1,250."""
    if math.isfinite(value) and value == int(value):
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class TableRow:
    cells: tuple[Cell, ...]
    sentence: Sentence | None = None  # where it is indexed, to cite it

    def cell(self, column: str) -> Cell | None:
        return next((c for c in self.cells if c.column == column), None)


@dataclass(frozen=True)
class Table:
    """The rows of one table, in order, and its columns."""

    columns: tuple[str, ...]
    rows: tuple[TableRow, ...]

    @classmethod
    def listed(cls, sentences: Sequence[Sentence], heading: str = "") -> Table:
        """A table of two columns from a list of labelled figures, one a sentence
        (:func:`labelled_value`), its figures under the list's heading ("EXPENDITURE"),
        else under :data:`LISTED_COLUMN`."""
        column = heading or LISTED_COLUMN
        rows = [TableRow((label, _replace(value, column=column)), s) for s in sentences
                if (cells := labelled_value(s.text)) is not None for label, value in [cells]]
        return cls(("", column) if rows else (), tuple(rows))

    @classmethod
    def of(cls, rows: Sequence[tuple[str, Sentence | None]]) -> Table:
        """A table from its rows' texts as indexed ("Header: value; …"), each with the
        sentence it is (or None); its columns are all its rows' headers, in the order
        they come (a row indexes no header for a blank cell)."""
        parsed = [(row_cells(text), s) for text, s in rows]
        parsed = [(c, s) for c, s in parsed if c]
        columns = tuple(dict.fromkeys(x.column for c, _ in parsed for x in c))
        return cls(columns, tuple(TableRow(tuple(c), s) for c, s in parsed))

    def values(self, column: str) -> list[str]:
        return [c.value if (c := r.cell(column)) else "" for r in self.rows]

    def numbers(self, column: str) -> list[float | None]:
        return [number(v) if v else None for v in self.values(column)]

    def numeric(self, column: str) -> bool:
        """Whether most of a column's filled cells are numbers (a "-" or "n/a" fills none)."""
        nums = self.numbers(column)
        filled = [v for v in self.values(column) if v and not blank(v)]
        return bool(filled) and sum(n is not None for n in nums) >= 0.7 * len(filled)

    def ordinal(self, column: str) -> bool:
        """Whether a column numbers its rows: 1, 2, 3 … down at least three rows (a rank,
        a row number), a few ties and gaps allowed. Its values order the rows; adding them up
        or counting by them measures nothing."""
        nums = [n for n in self.numbers(column) if n is not None]
        return len(nums) >= 3 and nums[0] == 1 and len(set(nums)) >= 0.8 * len(nums) and all(
            float(b).is_integer() and 0 <= b - a <= 2 for a, b in itertools.pairwise(nums))


_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "=": lambda a, b: a == b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b}


@dataclass(frozen=True)
class Condition:
    """Rows whose cell in ``column`` is ``value`` (a cell the question names), or, for a
    comparison (``op`` one of ``> >= < <=``, or ``=`` with ``number``), whose number
    compares so with ``value`` ("more than 15,000 births", "no fatal accidents": = 0), or
    with the row's own number in column ``value`` when ``against`` ("months where
    expenses exceeded income")."""

    column: str
    value: str
    op: str = ""  # "": the same words; else a comparison of numbers
    against: bool = False  # ``value`` names the column compared with

    def holds(self, row: TableRow) -> bool:
        c = row.cell(self.column)
        if self.op == "blank":  # "no alpha date": the cell left empty, or "--"
            return c is None or blank(c.value)
        if self.op == "not":  # "leaving salaries aside": not the cell named
            return not _replace(self, op="").holds(row)
        if self.op == "starts":  # "Day 1" of "Day 1 catering", "Day 1 pizza"
            return c is not None and f"{normalize_answer(c.value)} ".startswith(
                f"{normalize_answer(self.value)} ")
        if self.op == "year":  # "sessions in 2017": a date of that year
            return c is not None and any(d[0] == int(self.value) for d, _, _ in
                                         dated_spans(c.value))
        if self.op == "day":  # "processed on 12 December 2019": a date of that day
            asked = dated_spans(self.value)
            return c is not None and bool(asked) and any(
                same_date(asked[0][0], d) for d, _, _ in dated_spans(c.value))
        if not self.op or self.op == "is":  # a cell named, or a flag asked for
            if c is None:
                return False
            want = normalize_answer(self.value)  # "A+" normalizes to nothing: as written
            if not want:
                return c.value.strip() == self.value.strip()
            # a level of a category's path ("Travel" of "Expenses:Travel:Uber")
            return normalize_answer(c.value) == want or any(
                normalize_answer(p) == want for p in path_parts(c.value))
        if self.against:
            other = row.cell(self.value)
            b = number(other.value) if other is not None else None
        else:
            b = number(self.value)
        a = number(c.value) if c is not None else None
        return a is not None and b is not None and _COMPARE[self.op](a, b)

    def said(self) -> str:
        if self.op == "blank":
            return f"no {self.column}"
        if self.op == "not":
            return f"{self.column} not {self.value}"
        if self.op == "starts":
            return f"{self.column} {self.value} …"
        if self.op == "year":  # a column of row labels has no name: "in 2020"
            return f"{self.column} in {self.value}".strip()
        return f"{self.column} {self.value}" if self.op in ("", "is", "day") else \
            f"{self.column} {self.op} {self.value}"


# a category written as its path from the top: "Expenses:Travel:Uber" (a ledger's
# account), "Food > Groceries", "Home › Utilities"; each level a name of one to four words
_PATH_SEP = re.compile(r"(?<=[^\W\d_]):(?=[^\W\d_])|\s+[>›»]\s+")
PATH_WORDS = 4  # words of a level at most


def path_parts(value: str) -> list[str]:
    """The levels of a cell that is a category's path ("Expenses:Travel:Uber" →
    Expenses, Travel, Uber), top first; none for any other cell ("10:30", "Note: …")."""
    parts = [p.strip() for p in _PATH_SEP.split(value.strip())]
    if len(parts) < 2 or any(not p or len(p.split()) > PATH_WORDS
                             or not any(ch.isalpha() for ch in p) for p in parts):
        return []
    return parts


def selected(rows: Sequence[TableRow], conds: Sequence[Condition]
             ) -> tuple[list[TableRow], list[Condition]]:
    """The rows that hold what the question names, and the conditions used: one of the
    cells it names of a column ("east lothian, angus and dundee") and every comparison
    ("more than 10 and under 20"); across columns, all of them ("ERNIE results from 2019
    on CoLA"). A column's conditions that would leave no row are dropped (a cell that
    happens to repeat a word of the question), in the question's order, so the first
    named counts most."""
    used: list[Condition] = []
    pool = list(rows)
    by_column: dict[str, list[Condition]] = {}
    for c in conds:
        by_column.setdefault(c.column, []).append(c)
    for group in by_column.values():
        same = [c for c in group if not c.op or c.op == "starts"]
        compared = [c for c in group if c.op and c.op != "starts"]
        kept = [r for r in pool if (not same or any(c.holds(r) for c in same))
                and all(c.holds(r) for c in compared)]
        if kept:
            pool = kept
            used.extend(group)
    return pool, used


def _said(conds: Sequence[Condition]) -> str:
    """Conditions as the working says them: "Year 2019, Task CoLA"; "Region A or B";
    "births > 15,000"."""
    by_column: dict[str, list[Condition]] = {}
    for c in conds:
        by_column.setdefault(c.column, []).append(c)
    parts: list[str] = []
    for col, group in by_column.items():
        same = [c.value for c in group if not c.op]
        if same:
            parts.append(f"{col} {' or '.join(same)}")
        parts += [c.said() for c in group if c.op]
    return ", ".join(parts)


_words = tokens  # a text's words as answers are compared (ragctl.text.normalize_answer)


_STOP_KEYS = frozenset(word_key(w) for w in STOPWORDS)  # stopwords as word_key keys them


def _word_keys(text: str) -> set[str]:
    """The words of ``text`` (as answers are compared) as word_key keys them."""
    return {word_key(w) for w in _words(text)}


_FORM = re.compile(r"^(?:on |in |for )?(?:how (?:many|much)|what|which|who)\b")


_POSSESSIVE = re.compile(r"\S*\w['’]s\b")


def conditions(question: str, table: Table) -> list[Condition]:
    """The cells the question names, as conditions on their column, in the question's
    order: a cell whose words are all in the question, in order ("crettyard", "Los
    Angeles"); where two overlap, the longer ("Oslo Sailing Club", not "Oslo")."""
    # "o3-high's GPQA score" names o3-high (its words run together: "o3highs"); not the
    # document's owner ("the Hage PTA's deposits" of hage-pta-financials.pdf)
    document = _document_words(table)
    owners = {"".join(_words(m.group())) for m in _POSSESSIVE.finditer(question)
              if not _keys(re.sub(r"['’]s$", "", m.group())) <= document}
    # the question's form is none of its cells ("how many": not a town called Many)
    q = " " + _FORM.sub(lambda m: " " * len(m.group()), " ".join(_words(question))) + " "
    found: dict[str, tuple[int, int, Condition]] = {}
    depths: dict[str, int] = {}  # of a level of a category's path named, its depth
    tokens = question.replace("?", " ").split()
    for row in table.rows:
        for c in row.cells:
            words = _words(c.value)
            key = " ".join(words)
            value = c.value.strip()
            if not words and value not in found and 0 < len(value) <= 3 and any(
                    ch.isalnum() for ch in value) and value in tokens:
                # a grade ("A+", "B-"): no words, but named as written; placed where it
                # comes among the question's words, overlapping none
                at = len(" ".join(_words(question[:question.index(value)]))) + 1
                found[value] = (at, at, Condition(c.column, c.value))
                continue
            if not words or key in found or all(w in STOPWORDS for w in words):
                continue
            if len(key) < 3 and not key.isdigit():
                # a short code named after its column's name ("type H", "grade B")
                after = f" {' '.join(_words(c.column))} {key} "
                if (at := q.find(after)) >= 0 and after.strip() != key:
                    found[key] = (at, at + len(after) - 1, Condition(c.column, c.value))
                continue
            at = q.find(f" {key} ")
            if at >= 0:
                found[key] = (at, at + len(key) + 1, Condition(c.column, c.value))
            elif f"{words[-1]}s" in owners and (at := q.find(f" {key}s ")) >= 0:
                found[key] = (at, at + len(key) + 2, Condition(c.column, c.value))
            elif (span := _any_order(words, q)) is not None:
                found[key] = (*span, Condition(c.column, c.value))
            elif (bare := _without_initials(words)) and (at := q.find(f" {bare} ")) >= 0:
                # "Kathy DeMatteis" names "KATHY S. DEMATTEIS"
                found[key] = (at, at + len(bare) + 1, Condition(c.column, c.value))
            for depth, part in enumerate(path_parts(c.value)):  # "booked under travel":
                # a level of the rows' category paths, however inflected ("salaries" of
                # "Expenses:Salary:…")
                tag = f"\1{c.column}\1{normalize_answer(part)}"
                if tag not in found and (span := _keyed_at(part, q)) is not None:
                    found[tag] = (*span, Condition(c.column, part))
                    depths[tag] = depth
    for key, (column, prefix) in label_prefixes(table).items():  # "Day 1" of "Day 1
        # catering", "Day 1 pizza": the rows whose labels start so
        if key not in found and (at := q.find(f" {key} ")) >= 0:
            found[key] = (at, at + len(key) + 1, Condition(column, prefix, "starts"))
    named = {cond.column for _, _, cond in found.values()}
    for col in table.columns:  # "pollsters banned by 538": Banned by 538 = yes
        flag = None if col in named else flagged(q, col, table.values(col))
        if flag is not None:
            found[f"\0{col}"] = flag
    for year in dict.fromkeys(_YEAR.findall(question)):  # "sessions in 2017": a column of
        if year in found:  # dates, some of that year (a cell "2017" is named as it is)
            continue
        dated = dated_column(table, int(year))
        at = q.find(f" {year} ")
        if dated is not None and at >= 0:
            found[year] = (at, at + len(year) + 1, Condition(dated, year, "year"))
    for day, start, end in dated_spans(question):  # "processed on 12 December 2019": a
        said = question[start:end]  # column of dates, that day among others
        dated = day_column(table, day) if day[2] is not None else None
        if dated is not None and said not in found:
            at = len(" ".join(_words(question[:start]))) + 1
            found[said] = (at, at + len(" ".join(_words(said))) + 1,
                           Condition(dated, said, "day"))
    # of the levels of one column's paths named, the deepest: "expenses booked under
    # travel" are those under Expenses:Travel, not every expense (of the cells named
    # where none overlaps a longer one)
    taken: list[tuple[int, int, str]] = []
    for tag, (a, b, _) in sorted(found.items(), key=lambda x: -(x[1][1] - x[1][0])):
        if all(b <= x or a >= y for x, y, _ in taken):
            taken.append((a, b, tag))
    deepest: dict[str, int] = {}
    for _, _, tag in taken:
        if tag in depths:
            column = found[tag][2].column
            deepest[column] = max(deepest.get(column, 0), depths[tag])
    return [found[tag][2] for _, _, tag in sorted(taken, key=lambda x: x[0])
            if tag not in depths or depths[tag] == deepest[found[tag][2].column]]


PREFIX_WORDS = 3  # words of a label's start that name a group of rows: two to three (one
# word alone, "World" of "World Output", "CPI" of "CPI decile 1", is too loose a name)
# first words of labels that name no group: a total's, a subtotal's, a line's that adds
# or takes away, a small word's
_NO_GROUP = frozenset({"total", "totals", "subtotal", "sub", "grand", "net", "gross", "less",
                       "other", "add", "and", "the", "of"})


def label_prefixes(table: Table) -> dict[str, tuple[str, str]]:
    """The first words (two up to :data:`PREFIX_WORDS`) that two or more rows' labels
    (first cells) start with and go on past, as the question would say them → (the
    column, the words): "day 1" of "Day 1 catering" and "Day 1 pizza". Not the first words
    of a total ("Total income", "Total expenses"), nor the document's own name's."""
    column = table.columns[0] if table.columns else ""
    counts: Counter[str] = Counter()
    for row in table.rows:
        c = row.cell(column)
        words = _words(c.value) if c is not None else []
        if not words or words[0] in _NO_GROUP:
            continue
        for n in range(2, min(PREFIX_WORDS, len(words) - 1) + 1):
            counts[" ".join(words[:n])] += 1
    document = _document_words(table)
    return {key: (column, key) for key, n in counts.items() if n >= 2 and not all(
        w in STOPWORDS for w in key.split()) and not _keys(key) <= document}


_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})


def _without_initials(words: Sequence[str]) -> str:
    """A person's name as said without its middle initials and suffix ("kathy s
    dematteis jr" → "kathy dematteis"), when it has one and two words or more are left;
    else ""."""
    if len(words) < 3:
        return ""
    bare = [w for i, w in enumerate(words) if not (
        (len(w) == 1 and w.isalpha() and i > 0) or (w in _SUFFIXES and i >= 2))]
    return " ".join(bare) if 2 <= len(bare) < len(words) and all(
        len(w) > 1 for w in bare) else ""


def _keyed_at(name: str, q: str) -> tuple[int, int] | None:
    """Where the question (``q``, its words between spaces) names ``name``'s words in
    order, each however inflected (:func:`~ragctl.ask.cells.word_key`: "salaries" names
    "Salary"), or None."""
    want = [word_key(w) for w in _words(name)]
    if not want or all(w in _STOP_KEYS for w in want):
        return None
    spans = [(m.start(), m.end()) for m in re.finditer(r"\S+", q)]
    keys = [word_key(q[a:b]) for a, b in spans]
    for i in range(len(keys) - len(want) + 1):
        if keys[i:i + len(want)] == want:
            return spans[i][0] - 1, spans[i + len(want) - 1][1]
    return None


# what a question sets aside: "leaving salaries aside", "excluding refunds", "other than
# the United States", "apart from rent", "not counting tips"
_EXCLUDED = re.compile(r"\b(?:(?:leaving|setting|putting|laying) (?P<aside>[\w'’&-]+(?: [\w'’&-]+)"
                       r"{0,3}) aside|(?:excluding|except(?: for)?|other than|apart from|"
                       r"aside from|not counting|besides) (?P<what>(?:the )?[\w'’&-]+(?: (?!and\b|"
                       r"or\b|which\b|who\b|what\b)[\w'’&-]+){0,3}?))(?=\s*[,?;.]|$)", re.I)


def excluded(question: str, table: Table) -> tuple[list[Condition], str]:
    """The cells a question sets aside (:data:`_EXCLUDED`), as conditions that leave their
    rows out, and the question without the phrase (so that the cells it names are not
    read as the ones asked for)."""
    out: list[Condition] = []
    rest = question
    for m in _EXCLUDED.finditer(question):
        phrase = m.group("aside") or m.group("what")
        named = [c for c in conditions(phrase, table) if not c.op] or _keyed_cells(phrase, table)
        if not named:
            continue
        out += [_replace(c, op="not") for c in named]
        rest = rest[:m.start()] + " " * (m.end() - m.start()) + rest[m.end():]
    return out, rest


def _keyed_cells(phrase: str, table: Table) -> list[Condition]:
    """The cells a phrase names however inflected ("salaries" of "Salary"), as conditions."""
    q = f" {' '.join(_words(phrase))} "
    out: dict[tuple[str, str], Condition] = {}
    for row in table.rows:
        for c in row.cells:
            if c.value and number(c.value) is None and (c.column, c.value) not in out and \
                    _keyed_at(c.value, q) is not None:
                out[(c.column, c.value)] = Condition(c.column, c.value)
    return list(out.values())


def _any_order(words: Sequence[str], q: str) -> tuple[int, int] | None:
    """Where the question (``q``, its words between spaces) names a cell of two to four
    words in another order or run together ("the Domino's dinner" of "Dinner (Dominos)",
    "the McDonald's lunch" of "Lunch (MC Donald's)"), or None."""
    if not 2 <= len(words) <= 4 or sum(map(len, words)) < 6 or any(
            w in STOPWORDS for w in (words[0], words[-1])):
        return None
    joined = q.replace(" ", "")
    starts = [i for i, ch in enumerate(q) if ch != " "]  # q's index of each joined letter
    for order in itertools.permutations(words):
        at = q.find(f" {' '.join(order)} ")
        if at >= 0:
            return at, at + len(" ".join(order)) + 1
        glued = "".join(order)
        k = joined.find(glued)
        while k >= 0:
            a, b = starts[k], starts[k + len(glued) - 1] + 1
            if q[a - 1] == " " and b < len(q) and q[b] == " ":  # whole words only
                return a - 1, b
            k = joined.find(glued, k + 1)
    return None


def dated_column(table: Table, year: int) -> str | None:
    """The column of dates (nine in ten of its filled cells name a day or a month) that
    holds some of ``year`` and some of other years, or None."""
    for col in table.columns:
        values = [v for v in table.values(col) if v.strip()]
        dates = [d for v in values if (d := dated_spans(v)) and d[0][0][1] is not None]
        if len(values) >= 2 and len(dates) >= 0.9 * len(values):
            years = {d[0][0][0] for d in dates}
            if year in years and len(years) > 1:
                return col
    return None


def day_column(table: Table, day: CalendarDate) -> str | None:
    """The column of dates (half its filled cells or more name a day) that holds ``day``
    and other days too, or None."""
    for col in table.columns:
        values = [v for v in table.values(col) if v.strip()]
        days = [d[0][0] for v in values if (d := dated_spans(v)) and d[0][0][2] is not None]
        if len(days) >= 2 and 2 * len(days) >= len(values) and any(
                same_date(day, d) for d in days) and not all(same_date(day, d) for d in days):
            return col
    return None


# A column of flags ("Banned by 538: yes / no"): the question that names its header asks
# for the rows flagged, or, with a negation just before the header, for the others.
FLAGS = {"yes": True, "no": False, "true": True, "false": False, "y": True, "n": False,
         "✅": True, "✔": True, "✔️": True, "✓": True, "☑": True, "☑️": True,
         "❌": False, "✗": False, "✘": False, "🚫": False, "⛔": False, "✖": False, "✖️": False}
_NEGATION = frozenset({"not", "never", "no", "nt", "non", "without"})
MARKS = frozenset({"x", "✓", "✔", "✔️", "☑", "☑️", "yes", "y", "*", "•", "●", "✅"})


def flagged(q: str, column: str, values: Sequence[str]
            ) -> tuple[int, int, Condition] | None:
    """A condition on a column of flags (:data:`FLAGS`) whose header's words the
    normalized question ``q`` holds, in order: its place in ``q`` and the value asked."""
    said = {v.strip().lower(): v.strip() for v in values if v.strip()}
    words = [w for w in _words(column) if w not in STOPWORDS]
    # a column marked in some rows and left blank in the others ("Least Developed
    # Countries (LDC)": "x" or nothing)
    marked = len(said) == 1 and next(iter(said)) in MARKS and any(
        not v.strip() for v in values)
    if not said or not words or (not marked and (
            not set(said) <= set(FLAGS) or len(set(said)) < 2)):
        return None
    m = re.search(r" " + r" (?:\S+ ){0,2}?".join(map(re.escape, words)) + " ", q)
    if m is None:
        return None
    before = q[:m.start()].split()[-3:]
    want = not any(w in _NEGATION for w in before)
    if marked:
        cond = Condition(column, next(iter(said.values())), "is") if want else \
            Condition(column, "", "blank")
        return m.start(), m.end(), cond
    value = next((v for k, v in said.items() if FLAGS[k] == want), None)
    return (m.start(), m.end(), Condition(column, value, "is")) if value is not None else None


Embed = Callable[[Sequence[str]], np.ndarray]


# How a question compares a column's numbers with one it gives ("days with more than
# 15,000 births", "counties where turnout was above 50%", "items under $10", "5 or more
# goals"): the phrase before the number, or after it, and the comparison it makes. "No …"
# ("airlines that had no fatal accidents") is a count of zero.
COMPARATORS: tuple[tuple[str, str], ...] = (
    ("no more than|no greater than|not more than|at most|up to|a maximum of", "<="),
    ("no less than|no fewer than|not less than|at least|a minimum of", ">="),
    ("more than|greater than|higher than|larger than|bigger than|over|above|exceeding|"
     "exceeded|exceeds|exceed|surpassed|surpass|in excess of", ">"),
    ("less than|fewer than|lower than|smaller than|under|below", "<"),
    ("exactly|equal to", "="),
)
COMPARED_AFTER: tuple[tuple[str, str], ...] = (("or more|or above|or over|or higher", ">="),
                                               ("or less|or fewer|or below|or under", "<="))
YEAR_COMPARATORS: tuple[tuple[str, str], ...] = (("after|later than", ">"),
                                                 ("before|earlier than|prior to", "<"),
                                                 ("since", ">="))  # of a year only
_COMPARED_NUMBER = (r"(?P<number>[-−]?[$€£¥]?\s?\d[\d,]*(?:\.\d+)?\s?(?:%|percent\b|"
                    r"thousand\b|million\b|billion\b)?|half\b)")
_BEFORE = re.compile(r"\b(?P<phrase>" + "|".join(p for p, _ in COMPARATORS + YEAR_COMPARATORS)
                     + r")\s+(?:the\s+(?:[a-z][\w-]*\s+){1,3}?of\s+|the\s+)?" + _COMPARED_NUMBER,
                     re.I)  # "above 5%", "above the headline rate of 6,3%"
_AFTER = re.compile(_COMPARED_NUMBER + r"(?:\s+[a-z]+){0,2}?\s+(?P<phrase>"
                    + "|".join(p for p, _ in COMPARED_AFTER) + r")\b", re.I)
_NONE = re.compile(r"\b(?:no|zero)\s+(?!more\b|less\b|fewer\b|longer\b|later\b|earlier\b|"
                   r"one\b|other\b|such\b)(?P<what>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3})", re.I)
_SIGN = re.compile(r"\b(negative|positive)\b(?!\s+(?:and|or)\b)", re.I)
_YEARISH = re.compile(r"^(?:1[5-9]|20)\d\d$")
_WINDOW = 4  # words either side of a comparison that say which column it is of


def comparisons(question: str, table: Table, embed: Embed, *, versus: bool = False
                ) -> tuple[list[Condition], str]:
    """The comparisons the question makes (:data:`COMPARATORS`), each on the numeric column
    whose header comes nearest the words around it, and the question without them (so
    that their numbers are not read as cells it names). A year ("more than 2010") is
    compared only with a column of years, and a column of years only with a year.
    ``versus``: also those of two columns in each row (:func:`_columns_compared`), for an
    operation over the rows they choose (in "by how much did sales exceed costs", the
    comparison is the question, not a choice of rows)."""
    found: list[tuple[int, int, str, str, str]] = []  # start, end, op, value, around

    def around(a: int, b: int, number: str) -> str:
        # what is compared: the words after the number ("more than 15,000 births", "5
        # goals or more"), else those before ("turnout above 50%?")
        after = question[question.index(number, a) + len(number):b].split()[:-2] + \
            question[b:].split()[:_WINDOW]
        if any(re.match(r"[^\W\d_]", w) for w in after):
            return " ".join([question[a:b], *after])
        return " ".join([*question[:a].split()[-_WINDOW:], question[a:b]])

    for m in _BEFORE.finditer(question):
        phrase = " ".join(m.group("phrase").lower().split())
        op = next(o for p, o in COMPARATORS + YEAR_COMPARATORS if phrase in p.split("|"))
        if any(phrase in p.split("|") for p, _ in YEAR_COMPARATORS) and not _YEARISH.match(
                m.group("number").strip()):
            continue
        found.append((m.start(), m.end(), op, m.group("number"),
                      around(m.start(), m.end(), m.group("number"))))
    for m in _AFTER.finditer(question):
        phrase = " ".join(m.group("phrase").lower().split())
        op = next(o for p, o in COMPARED_AFTER if phrase in p.split("|"))
        found.append((m.start(), m.end(), op, m.group("number"),
                      " ".join(question[m.start():m.end()].split()[1:-2]) or
                      around(m.start(), m.end(), m.group("number"))))
    for m in _SIGN.finditer(question):  # "a negative population growth": < 0
        found.append((m.start(), m.end(), "<" if m.group(1).lower() == "negative" else ">",
                      "0", " ".join(question[m.start():].split()[:_WINDOW + 2])))
    nones: set[tuple[int, int]] = set()
    for m in _NONE.finditer(question):
        if not any(a <= m.start() < b for a, b, *_ in found):  # "no fatal accidents in 2010"
            found.append((m.start(), m.end(), "=", "0",
                          " ".join(question[m.start("what"):].split()[:_WINDOW + 4])))
            nones.add((m.start(), m.end()))
    out: list[Condition] = []
    rest = question
    for a, b, cond in _columns_compared(question, table, embed, found) if versus else ():
        out.append(cond)
        rest = rest[:a] + " " * (b - a) + rest[b:]
    for a, b, op, value, context in sorted(found):
        left = _left_blank(table, context) if (a, b) in nones else None
        if left is not None:  # "no alpha release date": the rows whose Alpha is "--"
            out.append(Condition(left, "", "blank"))
            rest = rest[:a] + " " * (b - a) + rest[b:]
            continue
        value = "50%" if value.lower() == "half" else value.strip()
        yearish = bool(_YEARISH.match(value))
        columns = [c for c in table.columns if c and table.numeric(c)
                   and _years(table, c) == yearish]
        if not columns:
            continue
        col = best_column(embed, context, Table(tuple(columns), table.rows), numeric=True)
        if col is None:
            continue
        out.append(Condition(col, value, op))
        rest = rest[:a] + " " * (b - a) + rest[b:]
    return out, rest


# Two of a row's own figures compared ("line items whose spending exceeded the budget",
# "players with more goals than assists"): a comparison's phrase with words, not a number,
# after it, each side naming one of the table's numeric columns by a word of its header
_VERSUS = re.compile(r"\b(?:(?P<more>more|fewer|less|higher|lower|greater|larger|smaller)"
                     r"\s+(?P<what>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s+than|(?P<phrase>"
                     r"more than|greater than|higher than|larger than|bigger than|above|"
                     r"exceeding|exceeded|exceeds|exceed|surpassed|surpass|in excess of|"
                     r"less than|fewer than|lower than|smaller than|below))\s+"
                     r"(?!(?:the\s+|a\s+)?(?:[-−$€£¥]\s?)?\d|half\b)"
                     r"(?P<other>(?:[\w'’-]+\s+){0,3}[\w'’-]+)", re.I)
_LESSER_SIDE = frozenset({"fewer", "less", "lower", "smaller", "below"})
_SIDE_STOPS = frozenset({"did", "do", "does", "was", "were", "is", "are", "had", "has",
                         "have", "where", "when", "which", "that", "whose", "with", "the",
                         "their", "its", "than", "in", "of", "for", "on", "at", "by"})


def _columns_compared(question: str, table: Table, embed: Embed,
                      found: Sequence[tuple[int, int, str, str, str]]
                      ) -> list[tuple[int, int, Condition]]:
    """The comparisons of two columns in each row the question makes (:data:`_VERSUS`),
    where they are, each as a condition on the first column against the second; none
    that overlaps a comparison with a number (``found``)."""
    numeric = [c for c in table.columns if c and table.numeric(c) and not _years(table, c)
               and not table.ordinal(c) and not _identifies(c)]
    out: list[tuple[int, int, Condition]] = []
    for m in _VERSUS.finditer(question):
        if any(a < m.end() and m.start() < b for a, b, *_ in found):
            continue
        other = _side(m.group("other").split(), from_end=False)
        if m.group("more"):
            one = m.group("what").split()
            op = "<" if m.group("more").lower() in _LESSER_SIDE else ">"
            start = m.start()
        else:
            one = _side(question[:m.start()].split(), from_end=True)
            op = "<" if m.group("phrase").split()[0].lower() in _LESSER_SIDE else ">"
            start = question.rfind(one[0], 0, m.start()) if one else m.start()
        first, second = _naming(one, numeric, embed), _naming(other, numeric, embed)
        if first and second and first != second:
            out.append((max(start, 0), m.end(), Condition(first, second, op, against=True)))
    for m in _CHANGED.finditer(question):  # "went up from FY 2015 to FY 2016": the later
        # column against the earlier
        taken = [(a, b) for a, b, *_ in found] + [(a, b) for a, b, _ in out]
        if any(a < m.end() and m.start() < b for a, b in taken):
            continue
        before, after = (_period_naming(m.group(k).split(), numeric, embed) for k in "ab")
        if before and after and before != after:
            op = ">" if m.group("verb").lower().split()[0] in _UP else "<"
            out.append((m.start(), m.end(), Condition(after, before, op, against=True)))
    return out


# a row's figure that changed from one column to another ("how many lines went up from
# FY 2015 to FY 2016", "the items whose cost fell between 2022 and 2023")
_CHANGED = re.compile(r"\b(?P<verb>went up|gone up|go(?:es)? up|rose|risen|rises?|increased|"
                      r"increases?|grew|grown|grows?|climbed|went down|gone down|go(?:es)? down|"
                      r"fell|fallen|falls?|decreased|decreases?|declined|declines?|dropped|"
                      r"drops?|shrank|shrunk|shrinks?)\s+(?:from|between)\s+(?P<a>[\w'’ .-]+?)"
                      r"\s+(?:to|and)\s+(?P<b>[\w'’ .-]+?)\s*(?=[?,;]|$)", re.I)
_UP = frozenset({"went", "gone", "go", "goes", "rose", "risen", "rise", "rises", "increased",
                 "increase", "increases", "grew", "grown", "grow", "grows", "climbed"})


def _period_naming(words: list[str], columns: list[str], embed: Embed) -> str | None:
    """The numeric column ``words`` name: the one whose header's words they all hold
    ("FY 2015"), or whose one year is theirs ("2015" of "FY 2015"); else as
    :func:`_naming` does."""
    said = _keys(" ".join(words)) - _STOP_KEYS
    whole = [c for c in columns if (k := _keys(c) - _STOP_KEYS) and k <= said]
    if len(whole) == 1:
        return whole[0]
    years = set(_YEAR.findall(" ".join(words)))
    dated = [c for c in columns if years and header_years(c) == years]
    if len(dated) == 1:
        return dated[0]
    return _naming(words, columns, embed)


def _side(words: list[str], *, from_end: bool) -> list[str]:
    """The words that name one side of a comparison: up to four next to its phrase (those
    before it, or after), up to a word that only joins ("did", "where", "the")."""
    words = [w.strip("?,.;:!") for w in (words[::-1] if from_end else words)]
    side: list[str] = []
    for w in words:
        if w.lower() in _SIDE_STOPS:
            if side:
                break
            continue
        side.append(w)
        if len(side) == _WINDOW:
            break
    return side[::-1] if from_end else side


def _naming(words: list[str], columns: list[str], embed: Embed) -> str | None:
    """The numeric column whose header shares a word with ``words`` (the nearest by the
    index's embedder when several do), or None."""
    said = " ".join(words)
    asked = _keys(said) - _STOP_KEYS
    named = [c for c in columns if (_keys(spoken(c)) - _STOP_KEYS) & asked]
    if len(named) <= 1:
        return named[0] if named else None
    return best_column(embed, said, Table(tuple(named), ()), numeric=None)


def _left_blank(table: Table, context: str) -> str | None:
    """The column that "no …" names by its header's words ("no alpha release date":
    Alpha) when some of its cells hold nothing (:data:`~ragctl.text.BLANKS`) and the
    others do: the column the most words name, or None."""
    asked = _keys(context)
    best, most = None, 0
    said = " ".join(_words(context))
    if any(v and said.startswith(" ".join(_words(v))) and _words(v)[:1] == ["no"]
           for col in table.columns for v in table.values(col)):
        return None  # "no qualification" is a value of the table ("No qualification")
    for col in table.columns:
        values = table.values(col)
        named = len(_keys(spoken(col)) & asked) if col else 0
        if named > most and any(blank(v) for v in values) and not all(
                blank(v) for v in values):
            best, most = col, named
    return best


def _years(table: Table, column: str) -> bool:
    """Whether a column's numbers are years (whole numbers from 1500 to 2099)."""
    nums = [n for n in table.numbers(column) if n is not None]
    return bool(nums) and all(n == int(n) and 1500 <= n <= 2099 for n in nums)


def _unnamed_rank(table: Table, column: str) -> bool:
    """Whether a column numbers its rows (:meth:`Table.ordinal`) under a header that does
    not say so ("Pollster" merged over a rank and a name): no measure to compare."""
    return table.ordinal(column) and not any(w in INDEX_HEADERS for w in _words(column))


# a column of identifiers ("Pollster Rating ID", "ZIP code"): numbers that measure nothing
IDENTIFIER_HEADERS = frozenset({"id", "code", "zip", "isbn", "ean", "sku", "fips"})


def _identifies(column: str) -> bool:
    return any(w in IDENTIFIER_HEADERS for w in _words(spoken(column)))


def best_column(embed: Embed, question: str, table: Table, *, numeric: bool | None,
                not_in: Sequence[str] = ()) -> str | None:
    """The column whose header, as spoken, comes nearest the question (the index's
    embedder; a word the header and the question share counts too), among the numeric
    ones (``numeric`` True; not a rank under another header, :func:`_unnamed_rank`, nor a
    column of identifiers), the others (False) or all (None)."""
    options = [c for c in table.columns if c and c not in not_in
               and (numeric is None or table.numeric(c) == numeric)
               and not (numeric and (_unnamed_rank(table, c) or _identifies(c)))]
    if not options:
        return None
    # each header as spoken ("MAX" is "maximum", "net_generation" "net generation", "HRs"
    # "home runs" when the question says so); the share of its words the question says
    # ("the most runs": Runs, not Runs Given)
    said = [spelled_out(c, question) for c in options]
    # not the words that name its document ("fatal crash report"): they name no column
    asking = unsourced(question) if on("source_phrase") else question
    vecs = embed([asking, *said])
    asked = {word_key(w) for w in _words(asking) if w not in STOPWORDS}
    scores = [float(vecs[0] @ v) + 0.5 * max(_held(_word_keys(x) - _STOP_KEYS, asked)
                                             for x in (h, c))
              + year_weight(question, c, table.rows[0].sentence if table.rows else None)
              for c, h, v in zip(options, said, vecs[1:], strict=True)]
    return options[int(np.argmax(scores))]


def _held(words: set[str], asked: set[str]) -> float:
    """The share of ``words`` that ``asked`` holds (0 when there are none)."""
    return len(words & asked) / len(words) if words else 0.0


@dataclass
class Computed:
    """A computation's result and its working: the operation, its arguments, the cells
    it used (row, column, value) and the rows they are in."""

    operation: str
    result: str
    working: str
    column: str = ""
    conditions: tuple[Condition, ...] = ()
    cells: list[tuple[TableRow, Cell]] = field(default_factory=list)
    count: int = 0  # rows counted or added, when more than are cited

    def to_dict(self) -> dict[str, Any]:
        return {"operation": self.operation, "result": self.result, "column": self.column,
                "conditions": [{"column": c.column, "value": c.value, **(
                    {"op": c.op} if c.op else {}), **({"against": True} if c.against else {})}
                    for c in self.conditions],
                "cells": [{"row": _label(r), "column": c.column, "value": c.value}
                          for r, c in self.cells], "rows": self.count or len(self.cells)}


def _label(row: TableRow) -> str:
    """A row as a person names it: its first cell."""
    return row.cells[0].value if row.cells else ""


ROWS_CHOSEN = frozenset({"count", "sum", "average"})  # operations over the rows a condition
# chooses, where two of a row's columns compared choose them


def execute(op: str, question: str, table: Table, embed: Embed) -> Computed | None:
    """Carry out ``op`` on ``table`` for ``question``; None when the table cannot (no
    numeric column, no row named, fewer than two values)."""
    if not table.rows or op == "lookup" or op not in _RUN:
        return None
    found, rest = comparisons(question, table, embed, versus=op in ROWS_CHOSEN)
    left_out, rest = excluded(rest, table)
    if not holds_years(rest, table):
        return None  # "births in 2015" of a table of 2000–2014 (not "after 1970")
    conds = conditions(rest, table) + found + left_out
    if op == "share":
        return _share(op, question, table, embed, conds)
    # a row of totals is no item: not the largest, nor counted or added again, unless
    # named (by a word that is not also a column's name: "the largest total"); two rows
    # set against each other are the two the question names, totals or not
    items = _items(table.rows, conds, {normalize_answer(c) for c in table.columns})
    if len(items) < len(table.rows) and op in ("argmax", "argmin") and _most_rows(
            op, question, table, conds) is None and (
            along := _along_row(op, question, table)) is not None:
        return along  # a measure's row labelled as a total ("Total Births", a column a
        # medical center) is compared along; it is no item of a column
    if len(items) < len(table.rows) and op != "count" and _RUN[op] is not _difference:
        table = _replace(table, rows=tuple(items))  # a count leaves it out of what it
        # counts, not of the table it reads
    run = _RUN[op]
    return run(op, question, table, embed, conds)


_TOTALS = re.compile(r"(?:grand |sub-?)?totals?\b.{0,30}|(?:sum|all|overall)\W*", re.I)


def totals_row(row: TableRow) -> bool:
    """Whether a row sums the others: its label (first filled cell) is "Total", "Grand
    total", "Subtotal", "Total net sales" (three words at most), or "Sum", "All" or
    "Overall" alone ("All Nippon Airways" is an item). A period or note in brackets after
    the label ("Total (Year Ended December 31, 2020)") is not part of it."""
    label = next((c.value for c in row.cells if c.value.strip()), "")
    label = re.sub(r"\s*\([^()]*\)$", "", label)
    return _TOTALS.fullmatch(label.strip()) is not None and len(label.split()) <= 3


def _items(rows: Sequence[TableRow], conds: Sequence[Condition],
           headers: frozenset[str] | set[str] = frozenset()) -> list[TableRow]:
    """``rows`` less its rows of totals (:func:`totals_row`) that no cell condition of
    ``conds`` names (a value among ``headers`` names none: "the largest total" names the
    column)."""
    return [r for r in rows if not totals_row(r) or any(
        c.holds(r) for c in conds if not c.op and normalize_answer(c.value) not in headers)]


def _share(op: str, question: str, table: Table, embed: Embed,
           conds: list[Condition]) -> Computed | None:
    """The named row's value as a percentage of the table's total: its row of totals
    when it has one, else the sum of the other rows' values."""
    named = [c for c in conds if not c.op]
    rows = [r for r in table.rows if not totals_row(r) and any(c.holds(r) for c in named)]
    part_words = _part_asked(question)
    if part_words:  # the row the part names, not one the whole's words name ("Expenditure"
        # of "what proportion of total expenditure went on footway lighting")
        rows = [r for r in rows if _word_keys(_label(r)) & part_words]
    if len(rows) != 1:
        return None
    col = best_column(embed, question, table, numeric=True,
                      not_in=list({c.column for c in named}))
    if col is None or table.ordinal(col):
        return None
    part = _values(table, rows, col)
    totals = [r for r in table.rows if totals_row(r)] or _unlabelled_total(table, col)
    named_totals = [r for r in totals if any(c.holds(r) for c in named)]
    if len(named_totals) == 1:
        totals = named_totals  # the total the question names ("… of total direct costs")
    whole = _values(table, totals[-1:], col)
    if not part or part[0][2] < 0:
        return None
    if whole:
        total, cited = whole[0][2], [(part[0][0], part[0][1]), (whole[0][0], whole[0][1])]
        said = whole[0][1].value
    else:
        vals = _values(table, [r for r in table.rows if not totals_row(r)], col)
        if len(vals) < 2:
            return None
        total, cited, said = sum(v for _, _, v in vals), [(part[0][0], part[0][1])], \
            f"{shown(sum(v for _, _, v in vals))} (the sum of {len(vals)} rows)"
    if total <= 0 or part[0][2] > total:
        return None
    return Computed(op, f"{shown(round(part[0][2] / total * 100, 2))}%",
                    f"= {part[0][1].value} / {said}: {_label(part[0][0])} {col}",
                    column=col, conditions=tuple(named[:1]), cells=cited)


# "what share of the budget went on rent": the share asked of, and the verb before its part
_SHARE_OF = r"(?:share|percentage|proportion|fraction|percent|part) of"
_SHARE_VERB = (r"(?:(?:came|comes?) from|went (?:on|to)|goes (?:on|to)|(?:is|was|are|were) "
               r"(?:taken up|accounted for|made up) by|(?:is|was|are|were) spent on)")
_PART_ASKED = re.compile(rf"\b{_SHARE_OF}\b.*?\b{_SHARE_VERB}\s+(?P<part>.+)$", re.I)


def _part_asked(question: str) -> set[str]:
    """The word keys of the part a share question names after its verb ("footway lighting"
    of "what proportion of the total expenditure went on footway lighting"), or none."""
    m = _PART_ASKED.search(main_clause(question).rstrip(" ?.!"))
    return _word_keys(m.group("part")) - {word_key(w) for w in STOPWORDS} if m else set()


def _unlabelled_total(table: Table, column: str) -> list[TableRow]:
    """The table's last row, when it names nothing in the first column and its figure in
    ``column`` is the sum of the labelled rows' above it ("Amount: £9,200.00" under five
    funders' amounts): a total without its label; else none."""
    first = table.columns[0] if table.columns else ""
    if len(table.rows) < 3 or _labelled(table.rows[-1], first):
        return []
    last = _values(table, table.rows[-1:], column)
    above = _values(table, [r for r in table.rows[:-1] if _labelled(r, first)], column)
    if not last or len(above) < 2 or abs(sum(v for _, _, v in above) - last[0][2]) > 0.005:
        return []
    return [table.rows[-1]]


def holds_years(question: str, table: Table) -> bool:
    """Whether the table holds every year the question names: in a cell, a header (a
    span "_85_99" among them), or its document's title, file name or section."""
    years = set(_YEAR.findall(question))
    if not years:
        return True
    seed = table.rows[0].sentence if table.rows else None
    held = set().union(*(header_years(c) for c in table.columns))
    around = "" if seed is None else f"{seed.title} {Path(seed.path).name} {seed.place}"
    for year in years - held:
        if year not in around and not any(year in c.value for r in table.rows
                                           for c in r.cells):
            return False
    return True


# "How many births …", "how many seat kilometres …", "what was the total number of
# births": what the question counts is a numeric column's (its values are added up, or
# the one row's is looked up), not the rows ("on how many days …" counts rows: a column
# "day" numbers the days, it does not measure them)
_HOW_MANY = re.compile(r"\b(?:how (?:many|much)|(?:total|combined) (?:number|amount) of)\s+"
                       r"(?P<what>(?:[\w-]+\s+){0,2}[\w-]+)", re.I)
_VERB = re.compile(r"\b(?:is|are|was|were|do|does|did|have|has|had|in|on|of|for|by|at|"
                   r"from|with|to)\b.*", re.I)
INDEX_HEADERS = frozenset({"day", "date", "week", "weekday", "month", "year", "quarter",
                           "rank", "position", "place", "id", "no", "number", "code"})


def counted_column(question: str, table: Table, not_in: Sequence[str] = ()) -> str | None:
    """The numeric column that the words after "how many" name (a word of its header,
    :func:`~ragctl.ask.cells.word_key`), or None when they name the rows. A column
    headed by a calendar or an index word (:data:`INDEX_HEADERS`) numbers rows, it
    measures nothing."""
    m = _HOW_MANY.search(question)
    if m is None:
        return None
    phrase = _VERB.sub("", m.group("what"))
    what = _word_keys(phrase) - _STOP_KEYS
    for col in table.columns:
        words = _words(spoken(col))
        if not col or col in not_in or not table.numeric(col) or _years(table, col) or \
                not words or any(w in INDEX_HEADERS for w in words) or table.ordinal(col):
            continue
        if what & {word_key(w) for w in words}:
            return col
    return None


def _apart(table: Table, column: str) -> bool:
    """Whether nine in ten of the table's rows hold a value of ``column`` of their own."""
    return len({v for v in table.values(column) if v}) >= 0.9 * len(table.rows)


def _names_the_rows(table: Table, column: str) -> bool:
    """Whether a column names the rows (:func:`_apart`: a county's name, not a model or
    a year that repeats), in a table of three rows or more."""
    return len(table.rows) >= 3 and _apart(table, column)


def _names_numeric(question: str, table: Table, not_in: Sequence[str]) -> bool:
    """Whether the question names a numeric column by a word of its header."""
    asked = _word_keys(question) - _STOP_KEYS
    return any(col and col not in not_in and table.numeric(col) and not _years(table, col)
               and not table.ordinal(col) and asked & _word_keys(spoken(col))
               for col in table.columns)


def _count_along(question: str, table: Table, conds: list[Condition]) -> Computed | None:
    """How many columns hold a number that compares as the question says in the one row
    it names by its label, of a table whose columns are the things counted and whose rows
    the measures ("how many of its medical centers ran above 85% occupancy of staffed
    beds": the row "Occupancy as % of Staffed Beds", a column a medical center). Columns
    of a period (a system's total "Three Months Ended March 31, 2026") are none of them;
    :data:`MIN_ALONG_COLUMNS` or more must be left."""
    compare = [c for c in conds if c.op in (">", ">=", "<", "<=") and not c.against]
    if len(compare) != 1 or (limit := number(compare[0].value)) is None:
        return None
    asked = _keys(question) - _STOP_KEYS
    first = table.columns[0] if table.columns else ""
    # "in how many years did stormwater spending exceed $10,000": the columns of years are
    # the things counted (those of the span named, "between 2020 and 2025"); else they are
    # periods, and none of them
    years = _YEARS_COUNTED.search(question) is not None
    span = _YEARS_BETWEEN.search(question)
    numeric = [c for c in table.columns if c and c not in (first, PART_OF)
               and table.numeric(c) and bool(y := _YEAR.search(c)) == years
               and (span is None or y is None or int(span.group(1)) <= int(y.group(0)) <=
                    int(span.group(2)))]
    named = [(len(words), r) for r in table.rows if (cell := r.cell(first)) is not None
             and (words := _measure_words(cell.value)) and words <= asked
             and not (years and totals_row(r))]  # "TOTAL OUTFLOW" of "stormwater outflow"
    top = max((n for n, _ in named), default=0)
    most = [r for n, r in named if n == top]
    if len(numeric) < MIN_ALONG_COLUMNS or len(most) != 1:
        return None  # of the rows named, the one named by most words ("Occupancy as % of
        # Staffed Beds", not "Staffed Beds")
    row = most[0]
    vals = [(c, v) for c in row.cells if c.column in numeric and (v := number(c.value))
            is not None]
    if len(vals) < MIN_ALONG_COLUMNS:
        return None
    op = compare[0].op
    hits = [(c, v) for c, v in vals if _COMPARE[op](v, limit)]
    return Computed("count", shown(len(hits)),
                    f"{len(hits)} of {len(vals)} with {_label(row)} {op} {compare[0].value}"
                    + (": " + ", ".join(f"{c.column} {c.value}" for c, _ in hits[:MAX_CITED])
                       if hits else ""),
                    column=_label(row), cells=[(row, c) for c, _ in hits[:1]],
                    count=len(hits), conditions=tuple(compare))


_YEARS_COUNTED = re.compile(r"\bhow many (?:of the |different )?(?:years|fiscal years|"
                            r"financial years)\b", re.I)
_YEARS_BETWEEN = re.compile(r"\b(?:between|from) ((?:19|20)\d\d) (?:and|to|through|until) "
                            r"((?:19|20)\d\d)\b", re.I)


def _count(op: str, question: str, table: Table, embed: Embed,
           conds: list[Condition]) -> Computed | None:
    if (along := _count_along(question, table, conds)) is not None:
        return along
    rows, used = selected(table.rows, conds)
    rows = of_kind(question, table, _items(rows, used))
    keys = [c.column for c in used if not c.op]
    col = counted_column(question, table, keys)
    if col is not None:  # a column's values, not the rows: their sum, or the one row's
        return _aggregate("sum", question, table, embed, conds, col) if len(rows) > 1 \
            else None
    if len(rows) == 1 and keys and not any(c.op for c in used) and (_names_numeric(
            question, table, keys) or any(_names_the_rows(table, k) for k in keys)):
        return None  # "how many Savings Notes have been redeemed", "how many people live in
        # Keya Paha County": the one row named holds the answer, it is not a count of one
    if not used:  # every row, each named by its first cell; a row without one (a
        # subtotal under a column of figures) is no item
        first = table.columns[0] if table.columns else ""
        rows = [r for r in rows if _labelled(r, first)]
        if not rows:
            return None
        return Computed(op, shown(len(rows)), f"{len(rows)} rows", column=first,
                        count=len(rows), cells=[(r, r.cells[0]) for r in rows[:MAX_CITED]])
    return Computed(op, shown(len(rows)), f"{len(rows)} rows with {_said(used)}",
                    conditions=tuple(used), count=len(rows),
                    cells=[(r, c) for r in rows[:MAX_CITED]
                           if (c := r.cell(used[0].column)) is not None])


def _values(table: Table, rows: Sequence[TableRow], column: str
            ) -> list[tuple[TableRow, Cell, float]]:
    return [(r, c, v) for r in rows if (c := r.cell(column)) is not None
            and (v := number(c.value)) is not None]


# a question that asks how much went out (a ledger may write it negative)
_SPENT = re.compile(r"\b(?:spent|spend|spending|paid|pay|cost|costs|charged|expensed|"
                    r"expenses?|outgoings?|payments?)\b", re.I)


def one_leg(vals: list[tuple[TableRow, Cell, float]]) -> list[tuple[TableRow, Cell, float]]:
    """The values of a double-entry ledger's rows, each entry once: where every amount
    taken out is put in again as much (an expense and the bank account it is paid from,
    "Expenses:Travel:Uber 7.88", "Assets:Bank -7.88"), the amounts put in alone; else all
    of them."""
    ins = sorted(v for _, _, v in vals if v > 0)
    outs = sorted(-v for _, _, v in vals if v < 0)
    if not outs or ins != outs:
        return vals
    return [x for x in vals if x[2] >= 0]


def _aggregate(op: str, question: str, table: Table, embed: Embed,
               conds: list[Condition], column: str | None = None) -> Computed | None:
    """sum, average: over the rows the conditions hold for (all rows without one), of
    ``column`` or the numeric column nearest the question; or of the two cells of the one
    row the question names, in the two columns it names ("the average iPhone net sales in
    fiscal 2023 and 2022")."""
    # one row's cells in the periods the question names: three or more, or two
    across = None
    if column is None:
        along = _row_along(question, table)
        across = along if along is not None and len(along[1]) > 2 else \
            _row_across(question, table) or along
    if across is not None and len(vals := [v for c in across[1] for v in _values(
            table, [across[0]], c)]) == len(across[1]):
        total = sum(v for _, _, v in vals)
        terms = " + ".join(c.value for _, c, _ in vals)
        return Computed(op, in_currency(shown(total if op == "sum" else total / len(vals)),
                                        [c.value for _, c, _ in vals]),
                        (f"= {terms}: " if op == "sum" else f"= ({terms}) / {len(vals)}: ")
                        + f"{_label(across[0])} {', '.join(c.column for _, c, _ in vals)}",
                        column=", ".join(across[1]), cells=[(r, c) for r, c, _ in vals],
                        count=len(vals))
    rows, used = selected(table.rows, conds)
    col = column or best_column(embed, question, table, numeric=True,
                                not_in=[c.column for c in used if not c.op])
    if col is None or table.ordinal(col):  # a rank added up is no measure
        return None
    vals = one_leg(_values(table, rows, col))
    if len(vals) < 2:
        return None
    total = sum(v for _, _, v in vals)
    result = total if op == "sum" else total / len(vals)
    terms = " + ".join(c.value for _, c, _ in vals[:MAX_CITED]) + \
        (" + …" if len(vals) > MAX_CITED else "")
    work = terms if op == "sum" else f"({terms}) / {len(vals)}"
    if result < 0 and all(v < 0 for _, _, v in vals) and _SPENT.search(question):
        result, work = -result, f"−({work})"  # "how much was spent on …" of a ledger that
        # writes what goes out as negative amounts: how much, not its sign
    return Computed(op, in_currency(shown(result), [c.value for _, c, _ in vals]),
                    f"= {work}", column=col, conditions=tuple(used),
                    cells=[(r, c) for r, c, _ in vals[:MAX_CITED]], count=len(vals))


# "which line increased the most between 2014 and 2015", "which region's sales fell the
# least from Q1 to Q2": the row whose figure changed the most from one column to another
_MOST_CHANGED = re.compile(
    r"\b(?P<verb>went up|rose|risen|increased|grew|grown|climbed|went down|fell|fallen|"
    r"decreased|declined|dropped|shrank)\s+(?:the\s+)?(?:most|least|fastest|slowest)\b"
    r"(?:\s+[\w'’]+){0,3}?\s+(?:from|between)\s+(?P<a>[\w'’ .-]+?)\s+(?:to|and)\s+"
    r"(?P<b>[\w'’ .-]+?)\s*(?=[?,;]|$)", re.I)


def _most_changed(op: str, question: str, table: Table, embed: Embed) -> Computed | None:
    """The row whose figure went up (down) the most from the earlier column the question
    names to the later (:data:`_MOST_CHANGED`): of the rows that name what they hold and
    are no totals, the one with the largest rise (fall); the least, for "least" (argmin
    of a rise is the most of a fall turned round)."""
    m = _MOST_CHANGED.search(question)
    if m is None:
        return None
    numeric = [c for c in table.columns if c and table.numeric(c)]
    before, after = (_period_naming(m.group(k).split(), numeric, embed) for k in "ab")
    if not before or not after or before == after:
        return None
    if kind_unnamed(question, table):
        return None  # "which player …" of a table of teams
    up = m.group("verb").lower().split()[0] in _UP
    rows = [r for r in _named_rows(table) if not totals_row(r)]
    changes = [(r, a, b, b[2] - a[2]) for r in rows
               if (a := next(iter(_values(table, [r], before)), None)) is not None
               and (b := next(iter(_values(table, [r], after)), None)) is not None]
    if len(changes) < 2:
        return None
    most = (op == "argmax") == up  # the most of a rise, or the least of a fall: the largest
    row, a, b, change = max(changes, key=lambda x: x[3] if most else -x[3])
    if sum(1 for x in changes if x[3] == change) > 1:
        return None  # a tie names no one
    sign = "+" if change >= 0 else "−"
    said = f"{m.group('verb').lower()} the {'most' if op == 'argmax' else 'least'}"
    return Computed(op, _label(row), f"{said} from {before} to {after} of {len(changes)}: "
                    f"{a[1].value} → {b[1].value} "
                    f"({sign}{shown(abs(change))})", column=f"{before}, {after}",
                    cells=[(row, a[1]), (row, b[1])], count=len(changes))


def _extreme(op: str, question: str, table: Table, embed: Embed,
             conds: list[Condition]) -> Computed | None:
    """max, min: the value; argmax, argmin: another cell of the row that holds it, or the
    value of the asked column that the most (fewest) rows hold (:func:`_most_rows`), or
    the row that changed the most between two columns (:func:`_most_changed`)."""
    if op in ("argmax", "argmin") and (changed := _most_changed(op, question, table, embed)):
        return changed
    if op in ("argmax", "argmin") and (most := _most_rows(op, question, table, conds)):
        return most
    if op in ("argmax", "argmin") and (along := _along_row(op, question, table)):
        return along
    col = best_column(embed, question, table, numeric=True)
    if col is None:
        return None
    # among the rows the question names ("which of Oslo and Bergen …", "… in 2019"),
    # when two or more of them hold a value; else among all
    named = _named_rows(table)
    # "which department has the largest total" of a budget whose rows are each department's
    # lines and total ("Total; Part of: Police"): the groups are what is asked for
    groups = op in ("argmax", "argmin") and PART_OF in table.columns and kind_unnamed(
        question, table)
    if groups:
        named = [r for r in named if r.cell(PART_OF)]
    elif op in ("argmax", "argmin"):
        named = of_kind(question, table, named)
    rows, used = selected(named, [c for c in conds if c.op or c.column != col])
    vals = _values(table, rows, col)
    if len(vals) < 2:
        used, vals = [], _values(table, named, col)
    if len(vals) < 2:
        return None
    among = f" of {len(vals)}" + (f" with {_said(used)}" if used else "")
    place = ranked(question)  # "the second-highest": the second in order
    if place > len(vals):
        return None
    order = sorted(vals, key=lambda x: x[2], reverse=op in ("max", "argmax"))
    row, cell, _ = order[place - 1]
    nth = f"{_ORDINALS[place - 1]} " if place > 1 else ""
    if op in ("max", "min"):
        return Computed(op, cell.value, f"the {nth}{SAYS[op]} {col}{among}: {_label(row)}",
                        column=col, conditions=tuple(used), cells=[(row, cell)],
                        count=len(vals))
    target = PART_OF if groups else asked_column(question, table, [col])
    if target is None and kind_unnamed(question, table):
        return None  # "which individual player …" of a table of teams: not its rows
    if target is None:
        target = best_column(embed, question, table, numeric=False, not_in=[col]) \
            or table.columns[0]
        if len({c.value for r, _, _ in vals if (c := r.cell(target))}) < 2:
            target = table.columns[0]  # the same in every row compared tells none apart
    other = row.cell(target)
    if other is None or not other.value:
        return None
    return Computed(op, other.value, f"{SAYS[op].replace('the ', 'the ' + nth)} {col}: "
                    f"{cell.value}{among}",
                    column=col, conditions=tuple(used), cells=[(row, cell), (row, other)],
                    count=len(vals))


MIN_ALONG_COLUMNS = 3  # columns of one measure a row must hold to be compared along


def _measure_words(label: str) -> set[str]:
    """The words of a measure's row label that the question must say to name it: "Total
    Births" is named by "the most births"."""
    words = _keys(label) - _STOP_KEYS
    return words - {"total"} or words  # "Total" alone is named by "total"


def _own_words(columns: Sequence[str]) -> dict[str, set[str]]:
    """Each header's words that most of the others lack: "which medical center …" names
    the kind of every column ("Presbyterian Medical Center", "Matthews Medical Center"),
    not one of them."""
    words = {c: _keys(spoken(c)) - _STOP_KEYS for c in columns}
    counts = Counter(w for ws in words.values() for w in ws)
    return {c: {w for w in ws if 2 * counts[w] <= len(columns)} for c, ws in words.items()}


def _along_row(op: str, question: str, table: Table) -> Computed | None:
    """"Who earned the most total points?" of a table whose columns are the people and
    whose rows the measures ("Total: 19 | 16 | 45 | …"): the header of the row's largest
    (smallest) cell, when the question names that row by its label and names none of the
    numeric columns, and the row holds :data:`MIN_ALONG_COLUMNS` numbers or more."""
    asked = _keys(question) - _STOP_KEYS
    first = table.columns[0] if table.columns else ""
    numeric = [c for c in table.columns if c and c != first and table.numeric(c)]
    undated = [c for c in numeric if not _YEAR.search(c)]
    if len(undated) >= MIN_ALONG_COLUMNS:
        numeric = undated  # the things compared, not a period's total beside them
    if len(numeric) < MIN_ALONG_COLUMNS or any(
            own & asked for own in _own_words(numeric).values()):
        return None
    named = [r for r in table.rows if (cell := r.cell(first)) is not None and (
        words := _measure_words(cell.value)) and words <= asked]
    if len(named) != 1:
        return None
    row = named[0]
    vals = [(c, v) for c in row.cells if c.column in numeric and (v := number(c.value))
            is not None]
    if len(vals) < MIN_ALONG_COLUMNS:
        return None
    order = sorted(vals, key=lambda x: x[1], reverse=op == "argmax")
    if order[0][1] == order[1][1]:
        return None  # a tie names no one
    cell = order[0][0]
    return Computed(op, cell.column, f"{SAYS[op]} {_label(row)}: {cell.value} of {len(vals)}",
                    column=_label(row), cells=[(row, cell)], count=len(vals))


def _named_rows(table: Table) -> list[TableRow]:
    """The rows that name what they hold in the table's first column; not a subtotal
    written under a column of figures with no label ("Euros: €87,047.00" under a budget's
    grants). All of them when fewer than two do."""
    first = table.columns[0] if table.columns else ""
    named = [r for r in table.rows if _labelled(r, first)]
    return named if len(named) >= 2 else list(table.rows)


def _labelled(row: TableRow, first: str) -> bool:
    """Whether a row holds a value in the column ``first`` that names the rows."""
    return (c := row.cell(first)) is not None and not blank(c.value)


_ORDINALS = ("first", "second", "third", "fourth", "fifth")
_RANKED = re.compile(r"\b(second|third|fourth|fifth|2nd|3rd|4th|5th)[- ]?(?:most|highest|"
                     r"largest|biggest|greatest|longest|lowest|least|fewest|smallest|"
                     r"shortest|cheapest)\b", re.I)


def ranked(question: str) -> int:
    """The place the question asks of an order: 2 for "the second-highest", else 1."""
    m = _RANKED.search(question)
    if m is None:
        return 1
    word = m.group(1).lower()
    return {"2nd": 2, "3rd": 3, "4th": 4, "5th": 5}.get(word) or _ORDINALS.index(word) + 1


# a superlative of one thing's size ("the single largest payment", "the biggest
# invoice"), not of how many ("the most proposals", "the highest number of wins")
_ONE_VALUE = re.compile(r"\b(?:single\s+)?(?:largest|biggest|highest|greatest|smallest|"
                        r"lowest|cheapest|costliest)\s+(?!number\b|count\b|share\b|"
                        r"amount of\b)[a-z]+(?<![^s]s)\b(?!\s+of\b)", re.I)


def _most_rows(op: str, question: str, table: Table, conds: list[Condition]
               ) -> Computed | None:
    """"Which expected publication year has the most proposals?": the value of the column
    "which" names by its header (one whose values repeat) that the most rows hold (the
    fewest, for argmin), when the words after the superlative name no numeric column (the
    rows themselves are counted); None on a tie."""
    if _ONE_VALUE.search(question):
        return None  # "which payee received the single largest payment": one row's value
    m = _WHICH.search(question)
    what = word_key(m.group("what")) if m is not None else ""
    target = next((c for c in table.columns if c and what in _word_keys(spoken(c))),
                  None)  # "which … year": a Year too
    if target is None or (table.numeric(target) and not _years(table, target)) or _apart(
            table, target) or any(_after_superlative(question, c) for c in table.columns
                                  if c and table.numeric(c) and c != target):
        return None
    rows, used = selected(table.rows, [c for c in conds if c.column != target])
    groups: dict[str, list[TableRow]] = {}
    for r in rows:
        cell = r.cell(target)
        if cell is not None and not blank(cell.value):
            groups.setdefault(cell.value, []).append(r)
    if len(groups) < 2:
        return None
    order = sorted(groups.items(), key=lambda g: len(g[1]), reverse=op == "argmax")
    (value, members), (_, runner) = order[0], order[1]
    if len(members) == len(runner):
        return None
    return Computed(op, value, f"{len(members)} of {len(rows)} rows, the {SAYS[op][4:]}",
                    column=target, conditions=tuple(used), count=len(members),
                    cells=[(r, c) for r in members[:MAX_CITED] if (c := r.cell(target))])


_WHICH_WORDS = re.compile(r"\b(?:which|what)\s+(?:of\s+(?:the\s+|its\s+|their\s+|"
                          r"[\w.&-]+'s\s+)?)?((?:[a-z][\w-]*\s*){1,3})", re.I)
# "how many of the ten expenditure deciles …": the kind counted
_HOW_MANY_WORDS = re.compile(r"\bhow many\s+(?:of\s+(?:the|these|those|its)\s+)?(?:(?:\d+|two|"
                             r"three|four|five|six|seven|eight|nine|ten|twelve)\s+)?"
                             r"((?:[a-z][\w-]*\s*){1,3})", re.I)


def _asked_kind(question: str) -> set[str]:
    """The words of the kind of thing "which X …" asks for, up to the first small word or
    superlative ("which individual player hit the most": individual, player)."""
    m = _WHICH_WORDS.search(main_clause(question)) or _HOW_MANY_WORDS.search(question)
    if m is None:
        return set()
    said: list[str] = []
    for w in m.group(1).lower().split():
        if w in STOPWORDS or re.fullmatch(rf"{_SUPERLATIVE_MOST}|{_SUPERLATIVE_LEAST}", w):
            break
        said.append(w)
    return _word_keys(" ".join(said)) - _STOP_KEYS


def of_kind(question: str, table: Table, rows: list[TableRow]) -> list[TableRow]:
    """The rows "which X …" keeps to: those with a cell of a column of groups (whose
    values repeat) that names X ("Part of: Geographic indices, CPI per province" for
    "which province"), when two or more rows have one and others not; else all of
    ``rows``, and all of them when the table's document or section names X (a list of
    them)."""
    asked = _asked_kind(question)
    first = table.columns[0] if table.columns else ""
    if not asked or asked & _document_words(table):
        return rows  # a list of them ("List of aerial tramways"): each row is one
    # a column of groups: its values repeat (a name column's do not)
    groups = {c for c in table.columns if c != first and len(
        set(filled := [v for v in table.values(c) if v])) * 2 <= len(filled)}
    keep = [r for r in rows if any(c.column in groups and number(c.value) is None
                                   and asked & _word_keys(c.value) for c in r.cells)]
    return keep if 2 <= len(keep) < len(rows) else rows


def kind_unnamed(question: str, table: Table) -> bool:
    """Whether "which X …" names a kind of thing (the words after "which", up to the first
    small word) that the table names nowhere: in no header, no cell that is not a number,
    and not in its document's title, file name or section ("which individual player hit
    the most home runs" of a table of teams' standings). Such a table's rows are not what
    is asked for, and its largest row answers nothing."""
    asked = _asked_kind(question)
    if not asked:
        return False
    known: set[str] = set()
    for col in table.columns:
        known |= _word_keys(spoken(col))
    for row in table.rows:
        for c in row.cells:
            if number(c.value) is None:
                known |= _word_keys(c.value)
    return not asked & (known | _document_words(table))


def _document_words(table: Table) -> set[str]:
    """The words of the title, section and file name of the document a table is of."""
    seed = table.rows[0].sentence if table.rows else None
    return set() if seed is None else _keys(f"{seed.title} {seed.place} {Path(seed.path).stem}")


# headers of a column that names its rows ("which item …": its Name)
NAME_HEADERS = frozenset({"name", "title", "item", "product", "description", "label"})
_WHICH = re.compile(r"\b(?:which|what)\s+(?:of\s+(?:the\s+|its\s+|their\s+|[\w.&-]+'s\s+)?)?"
                    r"(?:(?:single|one|[a-z]+est)\s+)?(?P<what>[a-z]+)", re.I)


def asked_column(question: str, table: Table, not_in: Sequence[str] = ()) -> str | None:
    """The column whose cells answer "which X …" of a row: one headed by X ("which
    airline": Airline), else one that names the rows, every cell different and not a
    number: headed by a name word (:data:`NAME_HEADERS`), or unheaded ("Pollster" merged
    over a rank and a name leaves the names without one); None when there is none."""
    m = _WHICH.search(question)
    if m is not None:
        what = word_key(m.group("what"))
        for col in table.columns:
            words = _words(spoken(col))
            if col not in not_in and not table.ordinal(col) and what in {
                    word_key(w) for w in words} and not (
                    table.numeric(col) and any(w in INDEX_HEADERS for w in words)):
                return col  # "which inhibitor concentration": a column of numbers too, but
                # not one that numbers the rows ("Pollster Rating ID")

    def names_rows(col: str) -> bool:  # two cells or more, of words, and apart
        return col not in not_in and not table.numeric(col) and len(
            [v for v in table.values(col) if v]) >= 2 and _apart(table, col)

    return next((c for c in table.columns if names_rows(c) and (
        not c or any(w in NAME_HEADERS for w in _words(c)))), None)


def _difference(op: str, question: str, table: Table, embed: Embed,
                conds: list[Condition]) -> Computed | None:
    """The larger less the smaller value of the two rows the question names (not by the
    document's own name: "… on the revenue estimate sheet" of revenue_estimate.xlsx names
    no row "REVENUE ESTIMATE"), else of one row's two periods (:func:`_across`)."""
    rows: list[TableRow] = []
    periods = [c for c in conds if c.op == "year"]
    document = _document_words(table)
    conds = [c for c in conds if not c.op and c.column != PART_OF  # a group names no row
             and not ((k := _keys(c.value) - _STOP_KEYS) and k <= document)]
    for cnd in conds:
        hit = next((r for r in table.rows if cnd.holds(r)), None)
        if hit is not None and hit not in rows:
            rows.append(hit)
    if len(rows) < 2 and len(periods) >= 2:
        rows, conds = _of_periods(question, table, periods[:2]), periods[:2]
    if len(rows) < 2:
        return _across(op, question, table)
    # of the columns both rows hold a number in (a totals row's own column is none)
    both = Table(tuple(c for c in table.columns if all(_values(table, [r], c)
                                                       for r in rows[:2])), table.rows)
    col = best_column(embed, question, both, numeric=True,
                      not_in=list({cnd.column for cnd in conds}))
    if col is None:
        return None
    two = _values(table, rows[:2], col)
    if len(two) < 2:
        return None
    if op == "percent_change":  # from the first named to the second
        return _percent(op, two[0], two[1], col, tuple(conds[:2]))
    return _set_apart(op, two, col, tuple(conds[:2]))


def _of_periods(question: str, table: Table, periods: Sequence[Condition]) -> list[TableRow]:
    """The row the question names of each of two periods, in a table whose rows are
    labelled with their period ("Total (Year Ended December 31, 2020)", "Total (… 2022)"):
    of the rows of each period, the one whose label shares the most words with the
    question besides the year (and, of those, has the fewest others); none unless both
    are found."""
    asked = _keys(question) - _STOP_KEYS
    out: list[TableRow] = []
    for period in periods:
        scored = []
        for row in table.rows:
            if not period.holds(row):
                continue
            words = _keys(_label(row)) - _STOP_KEYS - {period.value}
            if words & asked:
                scored.append((len(words & asked), -len(words - asked), row))
        if not scored:
            return []
        best = max(scored, key=lambda t: t[:2])
        out.append(best[2])
    return out if len(out) == 2 and out[0] is not out[1] else []


_SIGN_OF = re.compile(r"^[-−–+(\s]*([$€£¥₹])")


_SCALE_OF = re.compile(r"\d\s?([MKB]|bn|mn|m|k)\)?$")  # "$1,001M", "€3.2bn", "450k"


def in_currency(result: str, values: Sequence[str]) -> str:
    """A result with the currency sign its values all lead with ("£1,306.11" of "£1,183.23
    + £18.89 + …"), and the scale letter they all end with ("$41M" of "$1,001M − $960M"),
    as it is when they do not agree or have none."""
    scales = {m.group(1) if (m := _SCALE_OF.search(v.strip())) else "" for v in values}
    if len(scales) == 1 and (scale := scales.pop()):
        result = f"{result}{scale}"
    signs = {m.group(1) if (m := _SIGN_OF.match(v)) else "" for v in values}
    sign = signs.pop() if len(signs) == 1 else ""
    if not sign:
        return result
    if all(re.search(r"\.\d\d\)?$", v.strip()) for v in values) and (
            value := number(result)) is not None:
        result = f"{value:,.2f}"  # "£263.10", as the amounts are written
    return f"−{sign}{result[1:]}" if result.startswith("-") else f"{sign}{result}"


def _apart_by(op: str, big: tuple[TableRow, Cell, float], small: tuple[TableRow, Cell, float]
              ) -> tuple[str, str] | None:
    """How far apart two cells' values are (:func:`_values`' row, cell and number), and
    the sign the working writes between them: the difference (in their currency), or for
    "how many times higher" the ratio (None when the smaller is not above nought)."""
    a, b = big[2], small[2]
    if op != "ratio":
        return in_currency(shown(a - b), [big[1].value, small[1].value]), "−"
    return (times(a / b), "÷") if b > 0 else None


def _set_apart(op: str, two: Sequence[tuple[TableRow, Cell, float]], column: str,
               conditions: tuple[Condition, ...] = (),
               name: Callable[[TableRow], str] = _label) -> Computed | None:
    """Two rows' cells set apart (:func:`_apart_by`), the larger first, the working naming
    each row (by ``name``: its label, or its table's header and its label)."""
    big, small = sorted(two, key=lambda x: -x[2])
    apart = _apart_by(op, big, small)
    if apart is None:
        return None
    return Computed(op, apart[0], f"= {big[1].value} {apart[1]} {small[1].value}: "
                    f"{name(big[0])} {big[1].value}, {name(small[0])} {small[1].value}",
                    column=column, conditions=conditions,
                    cells=[(big[0], big[1]), (small[0], small[1])])


def times(value: float) -> str:
    """A ratio as a person says it: "4 times", "2,460 times", "1.5 times"."""
    return f"{shown(round(value, 2))} times"


def _percent(op: str, before: tuple[TableRow, Cell, float], after: tuple[TableRow, Cell, float],
             column: str, conds: tuple[Condition, ...] = ()) -> Computed | None:
    """The change from ``before`` to ``after`` as a percentage of ``before``."""
    if before[2] == 0:
        return None
    change = (after[2] - before[2]) / abs(before[2]) * 100
    return Computed(op, f"{shown(round(change, 2))}%",
                    f"= ({after[1].value} − {before[1].value}) / {before[1].value}: "
                    f"{_label(before[0])} {before[1].column} {before[1].value}, "
                    f"{_label(after[0])} {after[1].column} {after[1].value}",
                    column=column, conditions=conds,
                    cells=[(before[0], before[1]), (after[0], after[1])])


def _keys(text: str) -> set[str]:
    """The words of ``text`` as :func:`~ragctl.ask.cells.word_key` keys them, split at
    hyphens and apostrophes too ("licensing-fee" is "licensing fee")."""
    return {word_key(w) for w in re.findall(r"[^\W_]+", text.lower())}


_PERIOD = re.compile(r"\d+|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b")


def _written_in(header: str, question: str) -> bool:
    """Whether the question writes a header's words together, in its order ("Q4 FY24")."""
    words = re.findall(r"[^\W_]+", header.lower())
    return bool(words) and re.search(r"\b" + r"\W+".join(map(re.escape, words)) + r"\b",
                                     question.lower()) is not None


def _days(text: str) -> list[CalendarDate]:
    """The dates a text names to the day."""
    return [d for d, _, _ in dated_spans(text) if d[2] is not None]


def _dated(columns: list[str], question: str) -> list[str]:
    """Of more than two columns, those whose headers' dates, to the day, the question
    names too, however written, when two or more do ("between 31 December 2025 and March
    31, 2026" of a statement with "March 31, 2025" too, whose words it also holds); else
    all of them."""
    asked = _days(question)
    dated = [c for c in columns if (days := _days(c)) and all(d in asked for d in days)]
    if len(dated) < 2 and (quarters := _quarters_asked(question)):  # "from Q2 2025 to Q2
        # 2026": the quarters ended June 30 of each (a calendar year's quarters)
        dated = [c for c in columns if quarter_ended(c) in quarters]
    return dated if len(dated) >= 2 else columns


def quarter_ended(header: str) -> int | None:
    """The quarter a column of three months ends ("Quarter Ended June 30, 2025", "Three
    Months Ended March 31, 2026"), numbered as :func:`_quarter` numbers them, when it ends
    with a calendar quarter; else None."""
    if re.search(r"\b(?:quarter|three months)\b", header, re.I) is None:
        return None
    days = _days(header)
    if len(days) != 1 or days[0][1] not in (3, 6, 9, 12):
        return None
    return days[0][0] * 4 + days[0][1] // 3 - 1


def _across(op: str, question: str, table: Table) -> Computed | None:
    """The larger less the smaller of two cells of one row: the row the question names
    by its label, the columns it names by their headers ("licensing fees … from 2020 to
    2021" of a statement with a column a year)."""
    found = _row_across(question, table)
    if found is None:
        return None
    rows, columns = [found[0]], found[1]
    two = _values(table, rows, columns[0]) + _values(table, rows, columns[1])
    if len(two) != 2:
        return None
    if op == "percent_change":  # from the earlier period to the later
        periods = [[int(y) for y in _YEAR.findall(c)] for c in columns]
        if all(periods) and max(periods[0]) > max(periods[1]):
            two.reverse()
        return _percent(op, two[0], two[1], f"{columns[0]}, {columns[1]}")
    big, small = sorted(two, key=lambda x: -x[2])
    apart = _apart_by(op, big, small)
    if apart is None:
        return None
    return Computed(op, apart[0], f"= {big[1].value} {apart[1]} {small[1].value}: "
                    f"{_label(rows[0])} {big[1].column} {big[1].value}, {small[1].column} "
                    f"{small[1].value}", column=f"{columns[0]}, {columns[1]}",
                    cells=[(rows[0], big[1]), (rows[0], small[1])])


# two years joined as a span: "from FY 2014 to FY 2016", "2014–2016", "between 2019 and
# 2021", "2018 through 2020"
_YEAR_SPAN = re.compile(r"(?P<a>(?:1[5-9]|20)\d\d)\s*(?:-|–|—|to|through|thru|until)\s*"
                        r"(?:(?:FY|CY|fiscal(?: year)?|year)\s*)?(?P<b>(?:1[5-9]|20)\d\d)\b",
                        re.I)
_BETWEEN = re.compile(r"\bbetween\s+(?:(?:FY|CY|fiscal(?: year)?|year)\s*)?(?P<a>(?:1[5-9]|"
                      r"20)\d\d)\s+and\s+(?:(?:FY|CY|fiscal(?: year)?|year)\s*)?"
                      r"(?P<b>(?:1[5-9]|20)\d\d)\b", re.I)


def _years_asked(question: str) -> set[int]:
    """The years a question names, a span's ("from FY 2014 to FY 2016") each of them."""
    years = {int(y) for y in _YEAR.findall(question)}
    for m in [*_YEAR_SPAN.finditer(question), *_BETWEEN.finditer(question)]:
        a, b = int(m.group("a")), int(m.group("b"))
        if a < b <= a + 50:
            years.update(range(a, b + 1))
    return years


# a quarter of a year as a column or a question names it: "Q3 2025", "Q1 FY25", "Q2'26"
_QUARTER = re.compile(r"\bQ([1-4])\s?(?:FY|CY)?\s?'?((?:19|20)?\d\d)\b", re.I)
_QUARTER_SPAN = re.compile(rf"{_QUARTER.pattern}\s*(?:-|–|—|to|through|thru|until)\s*"
                           rf"{_QUARTER.pattern}", re.I)


def _quarter(m: re.Match[str], at: int = 1) -> int:
    """A quarter as a number that orders them: year × 4 + its quarter, less one."""
    year = int(m.group(at + 1))
    return (year + 2000 if year < 100 else year) * 4 + int(m.group(at)) - 1


def _quarters_asked(question: str) -> set[int]:
    """The quarters a question names, a span's ("from Q3 2025 through Q2 2026") each."""
    quarters = {_quarter(m) for m in _QUARTER.finditer(question)}
    for m in _QUARTER_SPAN.finditer(question):
        a, b = _quarter(m, 1), _quarter(m, 3)
        if a < b <= a + 40:
            quarters.update(range(a, b + 1))
    return quarters


def _row_along(question: str, table: Table) -> tuple[TableRow, list[str]] | None:
    """The one row the question names by its label and the three or more of its numeric
    columns, one a year (or a quarter), whose years the question names, each or as a
    span ("grants … over the fiscal years 2014, 2015 and 2016", "across FY 2014 to FY
    2016" of a summary with a column a fiscal year; "from Q3 2025 through Q2 2026"); or
    the two when they are all ("FY 2014" and "FY 2015" said "2014 and 2015"), or None."""
    numeric = [c for c in table.columns if c and table.numeric(c)]
    if len(quarters := _quarters_asked(question)) >= 2:
        of_quarter = {c: {_quarter(m) for m in _QUARTER.finditer(c)} for c in numeric}
        columns = [c for c in numeric if len(of_quarter[c]) == 1 and of_quarter[c] <= quarters]
        held = {q for c in columns for q in of_quarter[c]}
        if len(columns) < 2 or len(held) != len(columns) or held != quarters:
            return None
        row = _named_row(question, table, columns)
        return None if row is None else (row, columns)
    asked = _years_asked(question)
    if len(asked) < 2:
        return None
    of_year = {c: {int(y) for y in header_years(c)} for c in numeric}
    columns = [c for c in numeric if len(of_year[c]) == 1 and of_year[c] <= asked]
    if len(columns) < 2 or len({y for c in columns for y in of_year[c]}) != len(columns):
        return None  # a year with two columns ("2014 Budget", "2014 Actual"): which?
    if not asked <= {y for c in columns for y in of_year[c]}:
        return None  # a year asked that no column holds
    row = _named_row(question, table, columns)
    return None if row is None else (row, columns)


def _row_across(question: str, table: Table) -> tuple[TableRow, list[str]] | None:
    """The one row the question names by its label and the two numeric columns it names
    by their headers (or names the most of, when no third is named as much), or None."""
    stop = _STOP_KEYS
    asked = _keys(question) - stop
    numeric = [c for c in table.columns if c and table.numeric(c)]
    # a header as said or as written ("Q4 FY24" is "fourth quarter FY24")
    forms = {c: [_keys(x) - stop for x in (spoken(c), c)] for c in numeric}
    columns = [c for c in numeric if any(words and words <= asked for words in forms[c])]
    if len(columns) > 2:  # "from Q4 FY24 to Q1 FY25" names Q1 FY24's words too, not it
        written = [c for c in columns if _written_in(c, question)]
        columns = written if len(written) == 2 else _dated(columns, question)
    if len(columns) != 2:
        # the two numeric columns the question's words name the most of, when no third
        # is named as much ("the twelve months …" of a statement with two columns of three
        # months and two of twelve; the only two columns, "compared with a year earlier")
        # — of one measure over two periods: headers alike but for their dates ("Three
        # Months Ended December 31, 2022" and "… December 25, 2021")
        shared = {c: max(len(words & asked) for words in forms[c]) for c in numeric}
        most = max(shared.values(), default=0)
        columns = [c for c in numeric if shared[c] == most]
        if len(columns) > 2:  # a group of columns a period ("… 2026 Combined Group", "…
            # 2026 Total"): the periods' totals, when the question names no other part
            totals = [c for c in columns if "total" in _keys(c)]
            columns = _dated(totals if len(totals) >= 2 else columns, question)
        if len(columns) > 2:  # a statement read with another of other dates (a balance
            # sheet's "December 31, 2025" beside a quarter's "March 31, 2025"): the
            # columns the rows the question names fill
            labelled = [r for r in table.rows if r.cells and (
                words := _keys(r.cells[0].value) - stop) and words <= asked]
            held = [c for c in columns if any(_values(table, [r], c) for r in labelled)]
            columns = held if len(held) >= 2 else columns
        if len(columns) == 2 and len({frozenset(_keys(_PERIOD.sub(" ", c.lower())) - stop)
                                      for c in columns}) != 1:
            return None
    if len(columns) != 2:
        return None
    row = _named_row(question, table, columns)
    return None if row is None else (row, columns)


def _named_row(question: str, table: Table, columns: list[str]) -> TableRow | None:
    """The one row the question names by its label (its first cell of words outside
    ``columns``), that holds a value in each of ``columns`` when rows are named alike."""
    stop = _STOP_KEYS
    asked = _keys(question) - stop
    named: list[tuple[int, TableRow]] = []
    for row in table.rows:
        label = [c for c in row.cells if c.column not in columns and number(c.value) is None]
        words = _keys(label[0].value) - stop if label else set()
        if words and words <= asked:
            named.append((len(words), row))
    best = max((n for n, _ in named), default=0)
    rows = [r for n, r in named if n == best]
    if len(rows) > 1:  # rows named alike (a table a quarter): the one that holds both
        rows = [r for r in rows if all(_values(table, [r], c) for c in columns)]
    if len(rows) > 1:  # "Services" of net sales and of cost of sales: the one whose other
        # words ("Part of: Net sales") the question says the most of
        said = {id(r): len(_keys(" ".join(c.value for c in r.cells[1:] if number(
            c.value) is None)) & asked) for r in rows}
        most = max(said.values())
        rows = [r for r in rows if said[id(r)] == most]
    if len(rows) > 1 and len({tuple(v for c in columns for _, _, v in _values(table, [r], c))
                              for r in rows}) == 1:
        rows = rows[:1]  # the same figures said twice (net sales' "Services", and by category)
    if len(rows) != 1:
        return None
    return rows[0]


def _place(op: str, question: str, table: Table, embed: Embed,
           conds: list[Condition]) -> Computed | None:
    """first, last (of the rows the condition holds for), next, previous (to the row the
    question names): a row by its place, and its cell the question asks for."""
    cond = next((c for c in conds if not c.op), None)
    relative = op in ("next", "previous")
    # the column the question names by its header ("the opponent in the first game"), else
    # the named row's own column ("who finished after Ana Ruiz": another name), else the
    # nearest by the embedder; the named row's own column first when the question names
    # it too ("which country … right after Germany", though "M49" names another)
    asked = set(_words(question)) - STOPWORDS
    named = [c for c in table.columns if c and set(_words(c)) & asked
             and (cond is None or c != cond.column)]
    target = named[0] if named else cond.column if cond is not None and relative else \
        best_column(embed, question, table, numeric=None)
    if relative and cond is not None and set(_words(cond.column)) & asked:
        target = cond.column  # "which country … right after Germany": its own column
    if target is None:
        return None
    rows = list(table.rows)
    used: list[Condition] = [] if cond is None else [cond]
    if not relative:
        pool, used = selected(rows, conds)
        row = pool[0] if op == "first" else pool[-1]
    else:
        if cond is None:
            return None
        i = next((k for k, r in enumerate(rows) if cond.holds(r)), None)
        j = None if i is None else i + 1 if op == "next" else i - 1
        if j is None or not 0 <= j < len(rows):
            return None
        row = rows[j]
    cell = row.cell(target)
    if cell is None or not cell.value:
        return None
    where = f"the {SAYS[op]} row" + (f" after {cond.value}" if op == "next" and cond else
                                     f" before {cond.value}" if op == "previous" and cond
                                     else f" with {_said(used)}" if used else "")
    return Computed(op, cell.value, where, column=target, conditions=tuple(used),
                    cells=[(row, cell)])


_RUN: dict[str, Callable[[str, str, Table, Embed, list[Condition]], Computed | None]] = {
    "count": _count, "sum": _aggregate, "average": _aggregate, "max": _extreme,
    "min": _extreme, "argmax": _extreme, "argmin": _extreme, "difference": _difference,
    "percent_change": _difference, "ratio": _difference, "share": _share, "first": _place,
    "last": _place, "next": _place, "previous": _place}


# What the question's form says it asks of a table, when the operation model leaves it to
# a lookup (rule `operation_cue`): the weak labels it learned from call many a "which …
# has the most" a lookup, since the row's cell is the answer too. Tried in turn; a cue's
# computation that the table cannot carry out leaves the question to the lookup.
_SUPERLATIVE_MOST = (r"(?<!at )(?:highest|most|largest|biggest|greatest|longest|maximum|"
                     r"top)")  # not "at most": a comparison
_SUPERLATIVE_LEAST = r"(?<!at )(?:lowest|least|fewest|smallest|shortest|minimum|cheapest)"
OPERATION_CUES: tuple[tuple[str, str], ...] = (
    # "what is the highest turnout": the value; "which county had the highest": the row
    (r"^(?:what|how much) (?:is|was|were|are) the (?:single |very )?(?:highest|largest|"
     r"biggest|greatest|longest|maximum|top)\b", "max"),
    (rf"^(?:what|how much) (?:is|was|were|are) the (?:single |very )?{_SUPERLATIVE_LEAST}\b",
     "min"),
    (rf"^(?:which|who|what)\b.*\b{_SUPERLATIVE_MOST}\b", "argmax"),
    (rf"^(?:which|who|what)\b.*\b{_SUPERLATIVE_LEAST}\b", "argmin"),
    (r"^(?:on |in |for )?how many\b", "count"),
    # "in which year did the balance first fall below -10": the first row that does
    (r"\bfirst (?:fell|fall|dropped|drop|rose|rise|exceeded|exceed|reached|reach|went|go|"
     r"passed|pass|topped|top|surpassed|surpass|crossed|cross|hit)\b", "first"),
    (r"\blast (?:fell|fall|dropped|drop|rose|rise|exceeded|exceed|reached|reach|went|go|"
     r"passed|pass|topped|top|surpassed|surpass|crossed|cross|hit)\b", "last"),
    # "which session came right after 'Intro Blockchain'", "… is listed directly after
    # Germany": the next row of the table (not "who won after 2010")
    (r"\b(?:(?:right|directly|immediately|just) (?:after|below|under)|listed (?:after|below))\b",
     "next"),
    (r"\b(?:(?:right|directly|immediately|just) (?:before|above)|listed (?:before|above))\b",
     "previous"),
    (r"^(?:what (?:is|was|were|are) (?:the |[\w.&-]+'s\s+)?)?(?:total|combined|sum)\b",
     "sum"),  # "what were Alphabet's combined …"
    # "how much did it pay out in salaries in total", "what did it spend on grants in
    # total over the three years", "… ICO fees and hosting combined"
    (r"^(?:how much|what)\b.*\b(?:in total|altogether|all together|combined|together|"
     r"in all)\b", "sum"),
    # "what do the parts from Adafruit come to", "what did the three precept payments
    # bring in", "how much do the wages add up to"
    (r"^(?:how much|what)\b.*\b(?:(?:come|came|amount|amounted) to|add(?:ed)? up to|"
     r"(?:bring|brought) in)\b", "sum"),
    (r"\b(?:average|mean)\b", "average"),
    # "by how much did total assets grow from 2022 to 2023", "how much did revenue grow
    # from Q4 FY24 to Q1 FY25", "how much more … than …",
    # "what was the difference between …", "the change in revenue from 2020 to 2021",
    # "how much did cash fall between December 31, 2025 and March 31, 2026"
    (r"\bpercent(?:age)? (?:change|increase|decrease|growth|rise|drop|decline|fall)\b|"
     r"\bby what (?:percent|percentage)\b", "percent_change"),
    # "how many times higher is the fast mode's clock than the standard mode's": a ratio
    # (not "how many times did they win": a count)
    (r"\bhow many times (?:as\b|(?:more|higher|larger|greater|bigger|longer|faster|"
     r"heavier|older|wider|taller|deeper|costlier|dearer)\b)", "ratio"),
    # "what share of the total came from …", "what percentage of the grand total is …"
    # (of a total the question names: "what percentage of librarians are men" is a cell)
    (r"\b(?:what|which) (?:share|percentage|proportion|fraction|percent|part) of (?:the )?"
     r"(?:[\w'’-]+ ){0,6}?total\b", "share"),  # "… of the year's total payments"
    # "what percentage of its incoming funds came from the Turing Institute", "… of the
    # budget went on rent", "… is taken up by the motor": a part of the whole named
    (rf"\b(?:what|which) {_SHARE_OF}\b.*\b{_SHARE_VERB}\b", "share"),
    (r"\bas an? (?:share|percentage|proportion|fraction|percent) of (?:the )?(?:[\w'’-]+ ){0,4}?"
     r"total\b", "share"),  # "rent as a percentage of the total budget"
    (r"\bby how (?:much|many)\b|\bhow (?:much|many)(?: [a-z]+)? (?:more|less|fewer|higher|"
     r"lower|longer|shorter|bigger|smaller|larger|greater)\b|\bdifference (?:between|in)\b|"
     r"\b(?:change|increase|decrease|growth|rise|drop|decline) in\b.*\b"
     r"(?:from\b.*\bto|between\b.*\band)\b|"
     r"\bhow much (?:did|does|has|have|had)\b.*\b(?:grow|grown|increase|increased|rise|risen|"
     r"fall|fallen|drop|dropped|decline|declined|decrease|decreased|change|changed|shrink|"
     r"shrunk)\b.*\b(?:from\b.*\bto|between\b.*\band)\b",
     "difference"),
)


# cues no single cell answers: not the named row's own cell, for "next" and "previous"
BEFORE_LOOKUP = frozenset({"difference", "percent_change", "ratio", "share", "next",
                           "previous"})
# "which line item has the largest total", "who scored the most": a row, which the lookup
# would answer with the number it has the most of (rule `operation_cue`)
_ASKS_ROW = re.compile(r"^(?:which|who)\b", re.I)


def cued(question: str) -> list[str]:
    """The operations the question's form asks for (:data:`OPERATION_CUES`), in turn;
    after a leading phrase ("In the Lesson 1 table, how many …")."""
    q = " ".join(main_clause(question).lower().split())
    ops = list(dict.fromkeys(op for pattern, op in OPERATION_CUES if re.search(pattern, q)))
    if {"max", "min"} & set(ops):  # "what is the minimum boiling point of halogens" asks
        ops = [op for op in ops if op not in ("argmax", "argmin")]  # a value, not a row
    if {"percent_change", "ratio"} & set(ops):  # "the percentage change from 2012 to
        ops = [op for op in ops if op not in ("difference", "count")]  # 2015", "how many
        # times higher": neither the difference nor a count
    return ops


# A question the model is this sure needs a computation is refused when the table cannot
# carry it out, rather than answered with one of its cells.
REFUSE_ABOVE = 0.8


def tables_for(stages: LoadedStages, ev: Evidence) -> list[Table]:
    """The tables the question may be about, most likely first: that of the row it names
    best (in the documents retrieved), then that of each table row among the passages
    kept (at most :data:`TABLES_TRIED`); each with all its rows, in order
    (:func:`same_table`). A question that names another sheet (section) of a row's
    document ("… in March" of a workbook with a sheet a month) is about that sheet's.
    Only tables of documents that name what the question names
    (:meth:`~ragctl.ask.grounding.Grounding.grounded`) are tried."""
    named = candidate_rows(stages, ev)
    seeds: list[Sentence] = [named[0].sentence] if named else []
    # the rows of the passages kept, then of those retrieved but not kept (a table the
    # prose outranked)
    seeds += [s for found in stages.retrieved_sentences(ev, HITS_FOR_TABLES).values()
              for s in found if row_cells(s.text) or labelled_value(s.text)]
    out: list[Table] = []
    seen: set[int] = set()
    documents: dict[str, list[Sentence]] = {}
    every: dict[str, list[Sentence]] = {}  # of each document with a list of figures
    headers: dict[str, dict[int, set[str]]] = {}  # of each document, each page's
    for seed in seeds:
        if seed.id in seen or not ev.grounding.grounded(seed.path):
            continue  # a table of a document that names none of the question's names
        if not row_cells(seed.text):  # "Staff Costs: 5,360.00": a list of labelled figures
            if seed.path not in every:
                every[seed.path] = stages.collection.store.sentences_like(
                    seed.path, ["%"], limit=MAX_TABLE_ROWS)
            table = Table.listed(*labelled_run(every[seed.path], seed))
        else:
            if seed.path not in documents:
                documents[seed.path] = stages.collection.store.sentences_like(
                    seed.path, ["%: %"], limit=MAX_TABLE_ROWS)
                headers[seed.path] = page_headers(documents[seed.path])
            rows = documents[seed.path]
            place = named_place(ev.question, {s.place for s in rows})
            if place is not None and named_place(ev.question, {seed.place}) is None:
                seed = next((s for s in rows if s.place == place and row_cells(s.text)), seed)
            table = Table.of([(s.text, s) for s in same_table(
                [s for s in rows if s.place in pages_on(seed.place, headers[seed.path])],
                seed)])
        seen.update(r.sentence.id for r in table.rows if r.sentence is not None)
        seen.add(seed.id)
        if len(table.rows) >= 2 and table.rows[0].sentence not in [
                t.rows[0].sentence for t in out]:
            out.append(table)
        if len(out) >= TABLES_TRIED:
            break
    return out


_PAGE = re.compile(r"p\. (\d+)")


# A list of labelled figures, one a line ("Staff Costs: 5,360.00", "Donations: £1,275.00":
# a two-column table with no header, an account's lines): read as a table of two columns,
# the label naming the row and the figure under LISTED_COLUMN, the run of such lines
# around the one retrieved, one after the other in one section, up to its total's line.
LISTED_COLUMN = "Amount"


def labelled_value(text: str) -> tuple[Cell, Cell] | None:
    """A line "Label: figure" as a row's two cells (the label under no header, the figure
    under :data:`LISTED_COLUMN`), or None: a table row, prose, a value that is no number.
    A row's label may be twice as long as a header ("12/06/19 - Proceeds Whist Drive on
    29/05 and Bingo Night on 31/05")."""
    i = text.find(": ")
    label, value = text[:i].strip(), text[i + 2:].rstrip(" .")
    if i <= 0 or "; " in text or not label or len(label) > 2 * MAX_LABEL_CHARS or len(
            label.split()) > 2 * MAX_LABEL_WORDS or number(value) is None:
        return None
    start = i + 2 + len(text[i + 2:]) - len(text[i + 2:].lstrip())
    return (Cell("", label, text.find(label), text.find(label) + len(label)),
            Cell(LISTED_COLUMN, value.strip(), start, start + len(value.strip())))


def labelled_run(sentences: Sequence[Sentence], seed: Sentence) -> tuple[list[Sentence], str]:
    """The run of labelled figures (:func:`labelled_value`) that holds ``seed``, among its
    document's ``sentences``: the sentences of its section one right after the other (any
    other sentence ends a run), from after the total that closes the run before to the
    total that closes its own; and the heading right above the run ("EXPENDITURE": a
    short line of words alone), or ""."""
    order = [s for s in sentences if s.place == seed.place]
    at = next((k for k, s in enumerate(order) if s.id == seed.id), None)
    if at is None:
        return [], ""

    def listed(k: int) -> bool:
        return labelled_value(order[k].text) is not None

    def next_to(k: int) -> bool:  # the sentence k + 1 right after the sentence k
        return order[k + 1].id == order[k].id + 1

    lo = at
    while lo > 0 and next_to(lo - 1) and listed(lo - 1) and not _closes(order[lo - 1]):
        lo -= 1
    hi = at
    while hi + 1 < len(order) and next_to(hi) and listed(hi + 1) and not _closes(order[hi]):
        hi += 1
    above = order[lo - 1].text.strip() if lo > 0 and next_to(lo - 1) else ""
    heading = above if _LIST_HEADING.fullmatch(above) else ""
    return order[lo:hi + 1], heading


_LIST_HEADING = re.compile(r"[^\W\d_][^\d:;.!?]{0,40}")  # "EXPENDITURE", "Supplies"


def _closes(s: Sentence) -> bool:
    """Whether a labelled figure is a total, which closes its list."""
    got = labelled_value(s.text)
    return got is not None and totals_row(TableRow(got, s))


def page_headers(rows: Sequence[Sentence]) -> dict[int, set[str]]:
    """The headers of the rows on each page of a PDF (none for a sheet or section)."""
    headers: dict[int, set[str]] = {}
    for s in rows:
        if (p := _PAGE.fullmatch(s.place)) is not None:
            headers.setdefault(int(p.group(1)), set()).update(
                c.column for c in row_cells(s.text))
    return headers


def pages_on(place: str, headers: Mapping[int, set[str]]) -> set[str]:
    """The places of a table that starts or goes on at ``place``: a sheet or section is
    its own; a page of a PDF, with the pages before and after it that hold rows under
    the same headers (:func:`page_headers`: a budget's table over seven pages, each
    page's rows keyed alike)."""
    m = _PAGE.fullmatch(place)
    if m is None:
        return {place}
    page = int(m.group(1))
    own = headers.get(page, set())
    out = {page}
    for step in (-1, 1):
        k = page + step
        while own and 2 * len(headers.get(k, set()) & own) > len(own):
            out.add(k)
            k += step
    return {f"p. {k}" for k in out}


def same_table(sentences: Sequence[Sentence], seed: Sentence) -> list[Sentence]:
    """The rows among ``sentences`` (those of ``seed``'s document and section) that are of
    ``seed``'s table: rows whose headers are mostly the seed's, or the seed's mostly
    theirs (a row indexes no header for a blank cell; a second table below the first has
    headers of its own), and whose rows are named under the seed's first header."""
    cells = row_cells(seed.text)
    columns = {c.column for c in cells}
    first = cells[0].column if cells else ""
    out = []
    for s in sentences:
        own = row_cells(s.text)
        cols = {c.column for c in own}
        if own and first and own[0].column not in columns and first not in cols:
            continue  # its rows named under another header ("Grants - Funded but unpaid"
            # under "Other expected expenses", both over "Raw amount | Currency | Euros")
        if cols and 2 * len(cols & columns) > min(len(cols), len(columns)):
            out.append(s)
    return out


def cached(embed: Embed) -> Embed:
    """``embed`` that embeds each text once (a column's header is weighed many times)."""
    seen: dict[str, np.ndarray] = {}

    def vectors(texts: Sequence[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in seen]
        if new:
            seen.update(zip(new, embed(new), strict=True))
        return np.stack([seen[t] for t in texts])

    return vectors


def answer(stages: LoadedStages, ans: Answer, ev: Evidence) -> bool:
    """A computed answer, when the operation model says the question asks for one and the
    table the question is about can carry it out (:func:`execute`); a refusal when it
    surely does and the table cannot. False: nothing done (a lookup, no table, no model)."""
    model = stages.tableops
    if model is None:
        return False
    tables = tables_for(stages, ev)
    if not tables:
        return False
    embed = cached(stages.retriever.embedder.embed)
    op, p = model.predict(ev.question, stages.retriever.query_vector(ev.question))
    ans.models["tableops"] = model.name
    if op == "lookup" or p < model.threshold:
        return False
    first = execute(op, ev.question, tables[0], embed)
    done = best_done(ev.question, op, tables, embed, first)
    if done is None:
        # the question names neither the value counted by nor the column used
        if first is not None or p < REFUSE_ABOVE:
            return False
        seed = tables[0].rows[0].sentence
        ans.abstained = True
        ans.abstain_reason = (f"it asks for the {SAYS[op]} of a table, and the table found "
                              f"({Path(seed.path if seed else '').name}) cannot give it")
        return True
    cite(ans, ev, done, p)
    return True


def best_done(question: str, op: str, tables: Sequence[Table], embed: Embed,
              first: Computed | None = None) -> Computed | None:
    """``op`` carried out on each table that can for what the question names
    (:func:`tied`), and of those the one on the table whose headers hold most of the
    question's words (the first, of equals); ``first``: already carried out on the
    first table. A sum or an average over rows or cells the question names (by a
    condition, or one row's two periods) comes before one over every row of a table."""
    done: list[tuple[int, float, int, Computed]] = []
    for i, table in enumerate(tables):
        d = first if i == 0 and first is not None else execute(op, question, table, embed)
        if d is not None and tied(question, d, table):
            whole = op in ("sum", "average") and not d.conditions and not _one_rows(d)
            done.append((int(whole), -header_share(question, table), i, d))
    if not done and op in ("difference", "ratio"):
        return totals_apart(op, question, tables, embed)
    return min(done, key=lambda x: x[:3])[3] if done else None


def _grand_total(table: Table) -> TableRow | None:
    """A table's row of totals: its last, a grand total before a subtotal."""
    rows = [r for r in table.rows if totals_row(r)]
    whole = [r for r in rows if not re.match(r"\s*sub", _label(r), re.I)]
    last = whole or rows
    return last[-1] if last else None


def totals_apart(op: str, question: str, tables: Sequence[Table], embed: Embed
                 ) -> Computed | None:
    """The difference (or ratio) of the totals of two tables of one document that the
    question names by their first headers, in a period both give: "by how much did total
    expenses exceed total income in FY 2014" of a report's table of expenses ("Expenses |
    FY 2014 | …", its last row "Total, all sources") and its table of income ("Income
    source | FY 2014 | …"). Each table is named by a word of its header the other's does
    not hold; None unless exactly two are."""
    asked = _keys(question) - _STOP_KEYS
    named: list[tuple[Table, TableRow, set[str]]] = []
    for table in tables:
        total = _grand_total(table)
        if total is not None and table.columns:
            named.append((table, total, _keys(table.columns[0]) - _STOP_KEYS - NAME_HEADERS))
    if len(named) < 2 or len({total.sentence.path if total.sentence else ""
                              for _, total, _ in named}) != 1:
        return None
    picked = []
    for i, (table, total, words) in enumerate(named):
        others = set().union(*(w for j, (_, _, w) in enumerate(named) if j != i))
        if (words - others) & asked:
            picked.append((table, total))
    if len(picked) != 2:
        return None
    (ta, ra), (tb, rb) = picked
    common = tuple(c for c in ta.columns[1:] if c in tb.columns[1:]
                   and _values(ta, [ra], c) and _values(tb, [rb], c))
    if not common:
        return None
    col = best_column(embed, question, Table(common, (ra, rb)), numeric=True)
    if col is None:
        return None
    two = _values(ta, [ra], col) + _values(tb, [rb], col)
    if len(two) < 2:
        return None
    side = {id(ra): ta.columns[0], id(rb): tb.columns[0]}
    return _set_apart(op, two, col, name=lambda r: f"{side[id(r)]} {_label(r)}")


# words that make a sum or an average one over every row, without a comparison: "the
# combined number of home runs hit by all eight teams", "the total of all the invoices",
# "in total", "altogether"
WHOLE_TABLE = re.compile(r"\b(?:combined|altogether|in total|(?:all )?together|across all|"
                         r"all (?:the |of the )?(?:[a-z]+ )?[a-z]+s)\b", re.I)


def by_cue(stages: LoadedStages, ans: Answer, ev: Evidence, *, before_lookup: bool = False
           ) -> bool:
    """The computation the question's form asks for (:func:`cued`), on the first table
    that can carry it out for what the question names; False when none can. Asked when
    the operation model left the question to the lookup and no row's cell answered it;
    ``before_lookup``: asked before the lookup, for the operations that are never one
    cell (:data:`BEFORE_LOOKUP`)."""
    model = stages.tableops
    # "in how many counties was turnout above 50%": a count with a comparison, which no
    # one row's cell answers
    compares = _BEFORE.search(ev.question) is not None or _AFTER.search(ev.question) is not None
    # "the combined capacity of the planned projects": a sum over a group, no one cell
    whole = WHOLE_TABLE.search(ev.question) is not None
    ops = [op for op in cued(ev.question) if (op in BEFORE_LOOKUP or (
        op in ("argmax", "argmin") and _ASKS_ROW.match(main_clause(ev.question).strip())
        is not None) or (op == "count" and compares)) == before_lookup or (
        op in ("sum", "average") and (whole or op == "average"))]  # (before the lookup,
    # over a group, or over the two periods of one row, only)
    if model is None or not on("operation_cue") or not ops:
        return False
    tables = tables_for(stages, ev)
    embed = cached(stages.retriever.embedder.embed)
    for op in ops:
        done = best_done(ev.question, op, tables, embed)
        if done is None:
            continue
        compared = any(c.op and c.op not in ("day", "starts") for c in done.conditions)  # a
        # day, or the first words of a label, is named
        across = op != "count" and _one_rows(done)  # one row's periods the question names
        if before_lookup and op == "count" and not any(
                c.op and (_keys(spoken(c.column)) - _STOP_KEYS) & _keys(ev.question)
                for c in done.conditions):
            continue  # before the lookup, only a comparison of a column the question names
        grouped_rows = whole and done.count >= 2 and bool(done.conditions) and all(
            _names_a_word(c) for c in done.conditions)
        if before_lookup and op in ("sum", "average") and not (
                grouped_rows or (across and (op == "average" or whole))):
            continue  # before the lookup, only over the rows of a group the question
            # names, or the average of one row's periods, or their sum "in total"
        if op in ("first", "last") and not compared:
            continue  # "first exceed 5,000" with no comparison read: not the first row
        if (done.count == 1 and not (op == "count" and compared)) or (
                op in ("max", "min") and not _after_superlative(ev.question, done.column)):
            continue  # "the largest city": a row, not the largest value; a count of one
            # row is one only by a comparison
        if op in ("count", "sum", "average") and not compared and not across and not (
                (op != "count" or done.operation == "sum") and whole) and not grouped(
                op, done, ev.question) and not counts_rows(ev.question, done):
            # a count the lookup missed is no count without a comparison ("How many
            # Series EE bonds were outstanding …" is a cell, not a count of rows); a sum
            # or an average is one when the question says it is over every row
            continue
        fired("operation_cue")
        cite(ans, ev, done, 0.0)
        return True
    return False


def _one_rows(done: Computed) -> bool:
    """Whether a computation is over two or more cells of one row (its periods)."""
    return done.count >= 2 and len(done.cells) == done.count and len(
        {id(r) for r, _ in done.cells}) == 1


def grouped(op: str, done: Computed, question: str = "") -> bool:
    """Whether a count, sum or average is over the rows that share a value the question
    names, two rows or more, one value of each column named: a count of the rows that
    share a word ("the transactions still pending": Date Processed Pending; not a number
    or a year, "how many people died in droughts in 1930" of a table a disaster a row; nor
    a value the question makes do what no column says: "how many of its matches did SK
    Sturm Graz win" of a table of results is no count of its home games), a sum of those
    that share a word or a day ("processed on 12 December 2019")."""
    conds = done.conditions
    if done.count < 2 or not conds or len({c.column for c in conds}) != len(conds):
        return False
    if op == "count":
        return done.operation == "count" and all(
            _names_a_word(c) and not _does_unsaid(question, c.value, done) for c in conds)
    # a sum of the things the question names in the plural ("the total of the
    # transactions …"), not a document's own total ("the total at the Contoso restaurant");
    # an average is of several things however named ("the average cost of an Uber ride")
    return (op == "average" or _OF_ITEMS.search(question) is not None) and all(
        c.op == "day" or _names_a_word(c) for c in conds)


def _names_a_word(cond: Condition) -> bool:
    """Whether a condition is a cell the question names that is words: not a number or a
    date ("Pending", not "1930")."""
    return cond.op in ("", "starts") and number(cond.value) is None and not dated_spans(
        cond.value)


_OF_ITEMS = re.compile(r"\b(?:total|sum|average|mean)\s+(?:of|for)\s+(?:the\s+|all\s+(?:the\s+)?|"
                       r"its\s+|their\s+|my\s+)?(?:[a-z-]+\s+)?[a-z-]+s\b", re.I)


def _does_unsaid(question: str, value: str, done: Computed) -> bool:
    """Whether the words right after ``value`` in the question (up to a small word) say
    something that no header of the rows counted says ("did SK Sturm Graz *win*")."""
    words = _words(question)
    named = _words(value)
    at = next((i for i in range(len(words)) if words[i:i + len(named)] == named), None)
    if at is None:
        return False
    headers = set().union(*(_word_keys(spoken(c.column)) for r, _ in done.cells
                            for c in r.cells)) if done.cells else set()
    for w in words[at + len(named):]:
        if w in STOPWORDS:
            break
        if word_key(w) not in headers:
            return True
    return False


def counts_rows(question: str, done: Computed) -> bool:
    """Whether a count of every row counts what the question counts: the things after
    "how many" are named by the header of the column that names the rows ("how many grants
    are listed as funded but unpaid" of a table whose first column is headed "Grants -
    Funded but unpaid")."""
    m = _HOW_MANY.search(question)
    if done.operation != "count" or done.conditions or not done.column or m is None:
        return False
    counted = word_key(m.group("what").split()[0])
    return counted not in _STOP_KEYS and counted in _word_keys(spoken(done.column))


def _after_superlative(question: str, column: str) -> bool:
    """Whether the words right after the question's superlative name ``column`` ("the
    highest 2023 turnout" and `2023 cvap_turnout`)."""
    m = re.search(rf"\b(?:{_SUPERLATIVE_MOST}|{_SUPERLATIVE_LEAST})\s+((?:[\w-]+\s*){{1,3}})",
                  question.lower())
    return m is not None and bool((_word_keys(m.group(1)) - _STOP_KEYS)
                                  & _word_keys(spoken(column)))


# Yes or no from a table (rule `table_yes_no`): "Were there more births in 2014 than in
# 2013?", "Was turnout higher in Fairfax County than in Arlington County?" compare two
# things the question names on the column it asks of; "Are more than half of pharmacists
# men?", "Did Kenya Airways have any fatal accidents …?" compare the one row's cell with
# the number the question gives (any: more than none).
_MORE_THAN = re.compile(r"\b(?:more|higher|larger|greater|bigger|longer|older|later|"
                        r"faster)\b(?:(?!\bthan\b).)*\bthan\b", re.I)
_LESS_THAN = re.compile(r"\b(?:less|lower|fewer|smaller|shorter|younger|earlier|"
                        r"slower)\b(?:(?!\bthan\b).)*\bthan\b", re.I)
_ANY = re.compile(r"\bany\s+(?P<what>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3})", re.I)


def compared(question: str, table: Table, embed: Embed) -> Computed | None:
    """Whether what the question asks of a table holds: the result "Yes" or "No", with
    its working and cells; None when the table cannot say (no two named things, no
    named row, no number to compare)."""
    more, less = _MORE_THAN.search(question), _LESS_THAN.search(question)
    if (more or less) and not (more and less):
        m = more or less
        assert m is not None
        conds = [c for c in conditions(question, table) if not c.op]
        by_column: dict[str, list[Condition]] = {}
        for c in conds:
            by_column.setdefault(c.column, []).append(c)
        pair = next((g for g in by_column.values() if len(g) >= 2), None)
        if pair is not None:
            rest = [c for c in conds if c.column != pair[0].column]
            col = counted_column(question, table, list(by_column)) or best_column(
                embed, question, table, numeric=True, not_in=list(by_column))
            if col is None:
                return None
            sums = []
            for c in pair[:2]:
                rows, _ = selected(table.rows, [c, *rest])
                vals = _values(table, [r for r in rows if c.holds(r)], col)
                if not vals:
                    return None
                sums.append((c, vals, sum(v for _, _, v in vals)))
            (a, va, x), (b, vb, y) = sums
            holds = x > y if more else x < y
            sign = ">" if x > y else "<" if x < y else "="
            work = f"{a.value} {shown(x)} {sign} {b.value} {shown(y)}: {col}"
            cells = [(r, cell) for r, cell, _ in [*va[:MAX_CITED // 2], *vb[:MAX_CITED // 2]]]
            return Computed("compare", "Yes" if holds else "No", work, column=col,
                            conditions=tuple(pair[:2]), cells=cells)
    found, rest_q = comparisons(question, table, embed)
    any_ = _ANY.search(question)
    if not found and any_ is not None:
        context = " ".join(question[any_.start("what"):].split()[:_WINDOW + 4])
        columns = [c for c in table.columns if c and table.numeric(c)]
        col = best_column(embed, context, Table(tuple(columns), table.rows), numeric=True) \
            if columns else None
        found = [] if col is None else [Condition(col, "0", ">")]
        rest_q = question[:any_.start()] + question[any_.end():]
    if len(found) != 1:
        return _flag_of(question, table)
    test = found[0]
    named = [c for c in conditions(rest_q, table) if c.column != test.column]
    rows, used = selected(table.rows, named)
    if not used or len(rows) != 1:
        return None
    cell = rows[0].cell(test.column)
    if cell is None or number(cell.value) is None:
        return None
    holds = test.holds(rows[0])
    return Computed("compare", "Yes" if holds else "No",
                    f"{_label(rows[0])}: {test.column} {cell.value}, "
                    f"{'' if holds else 'not '}{test.op} {test.value}",
                    column=test.column, conditions=(*used, test), cells=[(rows[0], cell)])


# "Which county has a higher population, Alamance or Alexander?", "Who scored more
# points, A or B?": the one of the two rows the question names with the larger (or the
# smaller) value of the column it asks of. In a column of ranks or places the better is
# the smaller number.
_GREATER = re.compile(r"\b(?:more|most|higher|highest|larger|largest|bigger|biggest|greater|"
                      r"greatest|better|best|longer|longest|older|oldest|later|latest|"
                      r"heavier|taller|faster)\b", re.I)
_LESSER = re.compile(r"\b(?:less|least|fewer|fewest|lower|lowest|smaller|smallest|worse|"
                     r"worst|shorter|shortest|younger|youngest|earlier|earliest|lighter|"
                     r"slower|cheaper|cheapest)\b", re.I)
_RANKS = frozenset({"rank", "ranking", "position", "place", "pos", "seed"})


def chosen(question: str, options: Sequence[str], table: Table, embed: Embed
           ) -> Computed | None:
    """Of the rows ``options`` name (one each, in one column), the one with the larger or
    smaller value that the question asks for; None when the table cannot say."""
    greater, lesser = bool(_GREATER.search(question)), bool(_LESSER.search(question))
    if greater == lesser:
        return None
    for key in table.columns:
        picked = []
        for option in options:
            want = " " + " ".join(_words(option)) + " "
            hits = [r for r in table.rows if (c := r.cell(key)) is not None
                    and want in " " + " ".join(_words(c.value)) + " "]
            if len(hits) != 1:
                break
            picked.append(hits[0])
        if len(picked) != len(options) or len(set(map(id, picked))) < 2:
            continue
        col = counted_column(question, table, [key]) or best_column(
            embed, question, table, numeric=True, not_in=[key])
        if col is None:
            return None
        vals = _values(table, picked, col)
        if len(vals) != len(picked):
            return None
        ranks = bool(set(_words(spoken(col))) & _RANKS)
        biggest = greater != ranks  # a higher rank is a smaller number
        row, cell, _ = (max if biggest else min)(vals, key=lambda x: x[2])
        if sum(1 for _, _, v in vals if v == number(cell.value)) > 1:
            return None  # a tie: neither
        name = row.cell(key)
        assert name is not None
        work = ", ".join(f"{_label(r)} {c.value}" for r, c, _ in vals)
        return Computed("argmax" if biggest else "argmin", name.value, f"{col}: {work}",
                        column=col, cells=[*((r, c) for r, c, _ in vals), (row, name)])
    return None


def _flag_of(question: str, table: Table) -> Computed | None:
    """Whether the one row the question names is flagged as it asks ("Is SurveyUSA an
    AAPOR / Roper participant?": its cell in that column of flags, :func:`flagged`)."""
    conds = conditions(question, table)
    flags = [c for c in conds if c.value.strip().lower() in FLAGS
             and {v.strip().lower() for v in table.values(c.column) if v.strip()} <= set(FLAGS)]
    if len(flags) != 1:
        return None
    rows, used = selected(table.rows, [c for c in conds if c is not flags[0]])
    if not used or len(rows) != 1:
        return None
    cell = rows[0].cell(flags[0].column)
    if cell is None:
        return None
    holds = flags[0].holds(rows[0])
    return Computed("compare", "Yes" if holds else "No",
                    f"{_label(rows[0])}: {flags[0].column} {cell.value}", column=flags[0].column,
                    conditions=(flags[0],), cells=[(rows[0], cell)])


def choose(stages: LoadedStages, ans: Answer, ev: Evidence, options: Sequence[str]) -> bool:
    """One of the two things a question names, from a table's rows for them
    (:func:`chosen`), the working shown and the cells cited; False when no table says."""
    return _from_a_table(stages, ans, ev, "table_choice", "span",
                         lambda table, embed: chosen(ev.question, options, table, embed))


def yes_no(stages: LoadedStages, ans: Answer, ev: Evidence) -> bool:
    """Yes or no from the first table the question is about that can say
    (:func:`compared`), its working shown and its cells cited; False when none can."""
    return _from_a_table(stages, ans, ev, "table_yes_no", "yes-no",
                         lambda table, embed: compared(ev.question, table, embed))


def _from_a_table(stages: LoadedStages, ans: Answer, ev: Evidence, rule: str, kind: str,
                  solve: Callable[[Table, Embed], Computed | None]) -> bool:
    """The answer ``solve`` gives on the first of the question's tables that it can
    (rule ``rule``, an answer of ``kind``), cited; False when none can."""
    if not on(rule):
        return False
    tables = tables_for(stages, ev)
    embed = cached(stages.retriever.embedder.embed)
    for table in tables:
        done = solve(table, embed)
        if done is not None:
            fired(rule)
            cite(ans, ev, done, 1.0)
            ans.kind = kind
            return True
    return False


def tied(question: str, done: Computed, table: Table | None = None) -> bool:
    """Whether the question names what a computation used: the value it counted by, or
    its column ("how many *players* …", a column "Player"; for a count of every row, the
    column that names the rows). "How many records were returned?" is not a count of the
    rows of a table of notices that a retrieved passage holds. A comparison alone ("more
    than 5,000") ties it to a ``table`` some header of which the question names."""
    asked = _word_keys(question) - _STOP_KEYS
    if done.conditions and all(c.op for c in done.conditions) and table is not None and \
            not header_share(question, table) and not _same_money(done.conditions, table):
        return False  # "… more than 5.000 voters" of a table of profiles' axes
    header = {word_key(w) for w in [*_words(done.column),
                                    *_words(spelled_out(done.column, question))]}
    # two cells of the one row the question names by its label ("iPad net sales …
    # compared with a year earlier", two periods' columns)
    rows = {id(r): r for r, _ in done.cells}
    label = {word_key(w) for r in rows.values() for w in _words(_label(r))} - _STOP_KEYS
    one_row = len(rows) == 1 and len(done.cells) == 2 and bool(label) and label <= asked
    return bool(done.conditions) or bool(header & asked) or one_row


def _same_money(conds: Sequence[Condition], table: Table) -> bool:
    """Whether a comparison's amount is in the currency its column's figures are all
    written in ("£1,000 or more" of a column of "£5,200.00"): the column is the one
    meant, though the question does not name it."""
    for c in conds:
        m = _SIGN_OF.match(c.value)
        if c.op in (">", ">=", "<", "<=") and not c.against and m is not None:
            values = [v for v in table.values(c.column) if v.strip()]
            if len(values) >= 2 and all((n := _SIGN_OF.match(v)) is not None and
                                        n.group(1) == m.group(1) for v in values):
                return True
    return False


def header_share(question: str, table: Table) -> int:
    """How many of the question's words the table's headers hold (by their stems): which
    of the tables a computation can be carried out on the question is about."""
    asked = _word_keys(question) - _STOP_KEYS
    return len(asked & {word_key(w) for c in table.columns
                        for w in _words(spelled_out(c, question))})


def cite(ans: Answer, ev: Evidence, done: Computed, probability: float) -> None:
    """The computed result as the answer, with its working; every cell used cited with
    its row and column."""
    rows: list[TableRow] = []
    for row, _ in done.cells:
        if row.sentence is not None and row not in rows:
            rows.append(row)
    number_of = {id(r): i for i, r in enumerate(rows, start=1)}
    ans.kind = "computed"
    ans.raw_answer = done.result
    marks = " ".join(f"[{i}]" for i in range(1, len(rows) + 1))
    ans.answer = f"{done.result} ({done.working}) {marks}".rstrip()
    ans.sources = []
    for row in rows:
        s = row.sentence
        assert s is not None
        cell = next(c for r, c in done.cells if r is row)
        ans.sources.append(_replace(
            Citation.of(number_of[id(row)], s, answer=s.source_offsets(cell.start, cell.end),
                        also_in=tuple(ev.also.get(s.passage_id, ()))),
            row=_label(row), column=cell.column))
    ans.sentences = [AnswerSentence(done.result, tuple(range(1, len(rows) + 1)), 1.0, True)]
    ans.candidates = [{"answer": done.result, "rule": f"computed: {done.operation}",
                       "probability": round(probability, 4)}]
    ans.computation = done.to_dict()
    ans.confidence = round(probability, 4)
