"""Answers that take a computation over a table, with the working shown and every cell cited.

"How many more members does the Oslo club have than the Bergen club?", "Which month had the
highest use?", "Who finished after Ana Ruiz?", "What is the average price of the plans?":
the answer is no one cell. A table (the rows of one sheet or table as indexed, "Header:
value; Header: value", :class:`Table`) answers them by an operation over its typed
columns (:data:`OPERATIONS`): a count of the rows that hold a value the question names,
a sum, an average, the largest or smallest value of a column, the row with the largest or
smallest, the difference of two rows' values, the first or last row, the row after or
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

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from dataclasses import replace as _replace
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragctl.ask.cells import Cell, candidate_rows, row_cells, table_sentences, word_key
from ragctl.models.tableops import OPERATIONS
from ragctl.records import AnswerSentence, Citation, Sentence
from ragctl.text import STOPWORDS, normalize_answer

if TYPE_CHECKING:
    from ragctl.ask.stages import Evidence, LoadedStages
    from ragctl.records import Answer

SAYS = {"count": "rows", "sum": "sum", "average": "average", "max": "largest",
        "min": "smallest", "argmax": "the most", "argmin": "the least",
        "difference": "difference", "first": "first", "last": "last", "next": "next",
        "previous": "previous"}
TABLES_TRIED = 3  # tables among the passages kept that a computation is tried on
MAX_CITED = 6  # rows cited for a count or a sum (the rest are counted, not cited)

_NUMBER = re.compile(r"[-−–+]?\(?[$€£¥₹]?\s*\d[\d,]*(?:\.\d+)?")
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}


def number(text: str) -> float | None:
    """The number a cell holds, with its sign and scale ("$1,998.00" → 1998, "(3)" → -3,
    "1.2 million" → 1.2e6, "12%" → 12), or None when it holds none or more than a number
    and a unit ("3–4", "12 of 20")."""
    t = text.strip()
    m = _NUMBER.match(t)
    if m is None:
        return None
    rest = t[m.end():].strip().lower()
    raw = m.group()
    negative = raw.startswith(("-", "−", "–")) or (raw.lstrip("+-−–").startswith("(")
                                                 and rest.startswith(")"))
    digits = re.sub(r"[^\d.]", "", raw.replace(",", ""))
    if not digits or digits.count(".") > 1:
        return None
    value = float(digits)
    rest = rest.lstrip(")").strip()
    word = rest.split()[0] if rest.split() else ""
    if word in _SCALE:
        value *= _SCALE[word]
        rest = rest[len(word):].strip()
    if rest and (re.match(r"^[\d–-]", rest) or len(rest.split()) > 2 or " of " in f" {rest} "):
        return None
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
    def of(cls, rows: Sequence[tuple[str, Sentence | None]]) -> Table:
        """A table from its rows' texts as indexed ("Header: value; …"), each with the
        sentence it is (or None); rows whose headers are not the first row's are not of
        it."""
        parsed = [(row_cells(text), s) for text, s in rows]
        parsed = [(c, s) for c, s in parsed if c]
        if not parsed:
            return cls((), ())
        columns = tuple(c.column for c in parsed[0][0])
        kept = [TableRow(tuple(c), s) for c, s in parsed
                if set(x.column for x in c) <= set(columns)]
        return cls(columns, tuple(kept))

    def values(self, column: str) -> list[str]:
        return [c.value if (c := r.cell(column)) else "" for r in self.rows]

    def numbers(self, column: str) -> list[float | None]:
        return [number(v) if v else None for v in self.values(column)]

    def numeric(self, column: str) -> bool:
        """Whether most of a column's cells are numbers."""
        nums = self.numbers(column)
        filled = [v for v in self.values(column) if v]
        return bool(filled) and sum(n is not None for n in nums) >= 0.7 * len(filled)


@dataclass(frozen=True)
class Condition:
    """Rows whose cell in ``column`` is ``value`` (the value the question names)."""

    column: str
    value: str

    def holds(self, row: TableRow) -> bool:
        c = row.cell(self.column)
        return c is not None and normalize_answer(c.value) == normalize_answer(self.value)


def _words(text: str) -> list[str]:
    return normalize_answer(text).split()


def conditions(question: str, table: Table) -> list[Condition]:
    """The cells the question names, as conditions on their column, in the question's
    order: a cell whose words are all in the question, in order ("crettyard", "Los
    Angeles"); where two overlap, the longer ("Oslo Sailing Club", not "Oslo")."""
    q = " " + " ".join(_words(question)) + " "
    found: dict[str, tuple[int, int, Condition]] = {}
    for row in table.rows:
        for c in row.cells:
            words = _words(c.value)
            key = " ".join(words)
            if not words or key in found or all(w in STOPWORDS for w in words):
                continue
            if len(key) < 3 and not key.isdigit():
                continue
            at = q.find(f" {key} ")
            if at >= 0:
                found[key] = (at, at + len(key) + 1, Condition(c.column, c.value))
    taken: list[tuple[int, int, Condition]] = []
    for a, b, cond in sorted(found.values(), key=lambda x: -(x[1] - x[0])):
        if all(b <= x or a >= y for x, y, _ in taken):
            taken.append((a, b, cond))
    return [cond for _, _, cond in sorted(taken, key=lambda x: x[0])]


Embed = Callable[[Sequence[str]], np.ndarray]


def best_column(embed: Embed, question: str, table: Table, *, numeric: bool | None,
                not_in: Sequence[str] = ()) -> str | None:
    """The column whose header comes nearest the question (the index's embedder; a word
    the header and the question share counts too), among the numeric ones (``numeric``
    True), the others (False) or all (None)."""
    options = [c for c in table.columns if c and c not in not_in
               and (numeric is None or table.numeric(c) == numeric)]
    if not options:
        return None
    vecs = embed([question, *options])
    asked = set(_words(question)) - STOPWORDS
    scores = [float(vecs[0] @ v) + 0.5 * bool(set(_words(c)) & asked)
              for c, v in zip(options, vecs[1:], strict=True)]
    return options[int(np.argmax(scores))]


@dataclass
class Computed:
    """A computation's result and its working: the operation, its arguments, the cells
    it used (row, column, value) and the rows they are in."""

    operation: str
    result: str
    working: str
    column: str = ""
    condition: Condition | None = None
    cells: list[tuple[TableRow, Cell]] = field(default_factory=list)
    count: int = 0  # rows counted or added, when more than are cited

    def to_dict(self) -> dict[str, Any]:
        return {"operation": self.operation, "result": self.result, "column": self.column,
                "condition": None if self.condition is None else
                {"column": self.condition.column, "value": self.condition.value},
                "cells": [{"row": _label(r), "column": c.column, "value": c.value}
                          for r, c in self.cells], "rows": self.count or len(self.cells)}


def _label(row: TableRow) -> str:
    """A row as a person names it: its first cell."""
    return row.cells[0].value if row.cells else ""


def execute(op: str, question: str, table: Table, embed: Embed) -> Computed | None:
    """Carry out ``op`` on ``table`` for ``question``; None when the table cannot (no
    numeric column, no row named, fewer than two values)."""
    if not table.rows or op == "lookup" or op not in OPERATIONS:
        return None
    conds = conditions(question, table)
    run = _RUN[op]
    return run(op, question, table, embed, conds)


def _count(op: str, question: str, table: Table, embed: Embed,
           conds: list[Condition]) -> Computed | None:
    cond = conds[0] if conds else None
    rows = [r for r in table.rows if cond is None or cond.holds(r)]
    if cond is None:  # every row, each named by its first cell
        first = rows[0].cells[0].column if rows and rows[0].cells else ""
        return Computed(op, shown(len(rows)), f"{len(rows)} rows", column=first,
                        count=len(rows), cells=[(r, r.cells[0]) for r in rows[:MAX_CITED]])
    return Computed(op, shown(len(rows)), f"{len(rows)} rows with {cond.column} "
                    f"{cond.value}", condition=cond, count=len(rows),
                    cells=[(r, c) for r in rows[:MAX_CITED]
                           if (c := r.cell(cond.column)) is not None])


def _values(table: Table, rows: Sequence[TableRow], column: str
            ) -> list[tuple[TableRow, Cell, float]]:
    return [(r, c, v) for r in rows if (c := r.cell(column)) is not None
            and (v := number(c.value)) is not None]


def _aggregate(op: str, question: str, table: Table, embed: Embed,
               conds: list[Condition]) -> Computed | None:
    """sum, average: over the rows the condition holds for (all rows without one)."""
    cond = conds[0] if conds else None
    col = best_column(embed, question, table, numeric=True,
                      not_in=[cond.column] if cond else [])
    if col is None:
        return None
    vals = _values(table, [r for r in table.rows if cond is None or cond.holds(r)], col)
    if len(vals) < 2:
        return None
    total = sum(v for _, _, v in vals)
    result = total if op == "sum" else total / len(vals)
    terms = " + ".join(c.value for _, c, _ in vals[:MAX_CITED]) + \
        (" + …" if len(vals) > MAX_CITED else "")
    work = terms if op == "sum" else f"({terms}) / {len(vals)}"
    return Computed(op, shown(result), f"= {work}", column=col, condition=cond,
                    cells=[(r, c) for r, c, _ in vals[:MAX_CITED]], count=len(vals))


def _extreme(op: str, question: str, table: Table, embed: Embed,
             conds: list[Condition]) -> Computed | None:
    """max, min: the value; argmax, argmin: another cell of the row that holds it."""
    col = best_column(embed, question, table, numeric=True)
    if col is None:
        return None
    vals = _values(table, table.rows, col)
    if len(vals) < 2:
        return None
    row, cell, _ = (max if op in ("max", "argmax") else min)(vals, key=lambda x: x[2])
    if op in ("max", "min"):
        return Computed(op, cell.value, f"the {SAYS[op]} {col} of {len(vals)}: "
                        f"{_label(row)}", column=col, cells=[(row, cell)], count=len(vals))
    target = best_column(embed, question, table, numeric=False, not_in=[col]) \
        or table.columns[0]
    other = row.cell(target)
    if other is None or not other.value:
        return None
    return Computed(op, other.value, f"{SAYS[op]} {col}: {cell.value} of {len(vals)}",
                    column=col, cells=[(row, cell), (row, other)], count=len(vals))


def _difference(op: str, question: str, table: Table, embed: Embed,
                conds: list[Condition]) -> Computed | None:
    """The larger less the smaller value of the two rows the question names."""
    rows: list[TableRow] = []
    for cnd in conds:
        hit = next((r for r in table.rows if cnd.holds(r)), None)
        if hit is not None and hit not in rows:
            rows.append(hit)
    if len(rows) < 2:
        return None
    col = best_column(embed, question, table, numeric=True,
                      not_in=list({cnd.column for cnd in conds}))
    if col is None:
        return None
    two = _values(table, rows[:2], col)
    if len(two) < 2:
        return None
    big, small = sorted(two, key=lambda x: -x[2])
    return Computed(op, shown(big[2] - small[2]), f"= {big[1].value} − {small[1].value}: "
                    f"{_label(big[0])} {big[1].value}, {_label(small[0])} {small[1].value}",
                    column=col, cells=[(big[0], big[1]), (small[0], small[1])])


def _place(op: str, question: str, table: Table, embed: Embed,
           conds: list[Condition]) -> Computed | None:
    """first, last (of the rows the condition holds for), next, previous (to the row the
    question names): a row by its place, and its cell the question asks for."""
    cond = conds[0] if conds else None
    relative = op in ("next", "previous")
    # the column the question names by its header ("the opponent in the first game"), else
    # the named row's own column ("who finished after Ana Ruiz": another name), else the
    # nearest by the embedder
    asked = set(_words(question)) - STOPWORDS
    named = [c for c in table.columns if c and set(_words(c)) & asked
             and (cond is None or c != cond.column)]
    target = named[0] if named else cond.column if cond is not None and relative else \
        best_column(embed, question, table, numeric=None)
    if target is None:
        return None
    rows = list(table.rows)
    if not relative:
        pool = [r for r in rows if cond is None or cond.holds(r)] or rows
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
                                     else "")
    return Computed(op, cell.value, where, column=target, condition=cond,
                    cells=[(row, cell)])


_RUN: dict[str, Callable[[str, str, Table, Embed, list[Condition]], Computed | None]] = {
    "count": _count, "sum": _aggregate, "average": _aggregate, "max": _extreme,
    "min": _extreme, "argmax": _extreme, "argmin": _extreme, "difference": _difference,
    "first": _place, "last": _place, "next": _place, "previous": _place}


# A question the model is this sure needs a computation is refused when the table cannot
# carry it out, rather than answered with one of its cells.
REFUSE_ABOVE = 0.8


def tables_for(stages: LoadedStages, ev: Evidence) -> list[Table]:
    """The tables the question may be about, most likely first: that of the row it names
    best (in the documents retrieved), then that of each table row among the passages
    kept (at most :data:`TABLES_TRIED`); each with all its rows, in order (the rows of one
    document and section with the same headers)."""
    named = candidate_rows(stages, ev)
    seeds: list[Sentence] = [named[0].sentence] if named else []
    seeds += [s for h in ev.kept for s in ev.per_passage.get(h.passage_id, [])
              if row_cells(s.text)]
    out: list[Table] = []
    seen: set[tuple[str, str, frozenset[str]]] = set()
    for seed in seeds:
        columns = frozenset(c.column for c in row_cells(seed.text))
        key = (seed.path, seed.place, columns)
        if key in seen:
            continue
        seen.add(key)
        table = Table.of([(s.text, s) for s in table_sentences(stages, seed)
                          if {c.column for c in row_cells(s.text)} <= columns])
        if len(table.rows) >= 2:
            out.append(table)
        if len(out) >= TABLES_TRIED:
            break
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
    tried = chain([first], (execute(op, ev.question, t, embed) for t in tables[1:]))
    done = next((d for d in tried if d is not None and tied(ev.question, d)), None)
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


def tied(question: str, done: Computed) -> bool:
    """Whether the question names what a computation used: the value it counted by, or
    its column ("how many *players* …", a column "Player"; for a count of every row, the
    column that names the rows). "How many records were returned?" is not a count of the
    rows of a table of notices that a retrieved passage holds."""
    asked = {word_key(w) for w in _words(question)} - {word_key(w) for w in STOPWORDS}
    return done.condition is not None or bool(
        {word_key(w) for w in _words(done.column)} & asked)


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
