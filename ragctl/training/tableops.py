"""Training the operation model of computed answers (:mod:`ragctl.ask.compute`) by weak
supervision.

WikiTableQuestions' training file gives questions about tables with their answers, but not
how each answer is had. For each question, every operation is carried out on its table by
the same code ``ask`` runs (:func:`ragctl.ask.compute.execute`, the table read as ``index``
reads a CSV file: :func:`ragctl.index.ingest.sheet_lines`), and the operations that give
the answer are its labels ("lookup" when a cell of the table is the answer). A softmax over
the question's embedding (the embedder ``index`` uses) is fitted to those labels, each
question's weight shared among its consistent operations (a computation before the lookup
of the cell it gives); questions no operation answers are left out. Its threshold is the
probability below which a question is left to the lookup and the reader: the one that
keeps, on held-out questions, at least :data:`PRECISION` of the computed answers right.
"""

from __future__ import annotations

import csv
import io
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragctl.ask.compute import Table, cached, execute, number
from ragctl.index.ingest import sheet_lines
from ragctl.models.tableops import OPERATIONS, OperationModel
from ragctl.text import normalize_answer
from ragctl.training.softmax import fit

logger = logging.getLogger(__name__)
PRECISION = 0.5  # of computed answers right, at the threshold, on held-out questions
HASHED = 2048  # dimensions of the question's hashed words and word pairs


@dataclass(frozen=True)
class Example:
    question: str
    table: Table
    answers: tuple[str, ...]


def read_table(path: Path) -> Table:
    """A CSV table as ``index`` stores it: one "Header: value; …" row a line."""
    with path.open(newline="", encoding="utf-8", errors="replace") as f:
        rows = [r for r in csv.reader(f)]
    lines = sheet_lines(rows)
    return Table.of([(line, None) for line in lines])


def read_wtq(tsv: Path, root: Path, limit: int | None = None) -> Iterator[Example]:
    """WikiTableQuestions' examples ("id, utterance, context, targetValue"): ``root`` is
    the folder that holds the release's ``csv/`` tables."""
    tables: dict[str, Table] = {}
    with tsv.open(newline="", encoding="utf-8") as f:
        for n, row in enumerate(csv.DictReader(f, delimiter="\t")):
            if limit is not None and n >= limit:
                return
            ctx = row["context"]
            if ctx not in tables:
                try:
                    tables[ctx] = read_table(root / ctx)
                except (OSError, csv.Error):
                    tables[ctx] = Table((), ())
            answers = tuple(a.replace("\\n", " ").strip() for a in row["targetValue"].split("|"))
            yield Example(row["utterance"], tables[ctx], answers)


def matches(result: str, answers: Sequence[str]) -> bool:
    """Whether a result is the expected answer: the same number (to a cent), or the same
    words (SQuAD's normalization). A list answer is not one result."""
    if len(answers) != 1:
        return False
    want = answers[0]
    a, b = number(result), number(want)
    if a is not None and b is not None and re.fullmatch(r"[-\d.,$%\s]+", want):
        return abs(a - b) < 0.01 * max(1.0, abs(b)) * 0.01 + 0.005
    return normalize_answer(result) == normalize_answer(want)


def consistent(example: Example, embed: Callable[[Sequence[str]], np.ndarray]) -> list[str]:
    """The operations that give the example's answer on its table, as ``ask`` would carry
    them out (the same columns, by the same embedder). Trying every column instead
    labels more questions with the row of the most or the first row, by chance: on the
    held-out split through ``ask`` that printed a cell for a computation more often (16
    against 12 of 103), with no more right."""
    out = []
    if any(matches(c.value, example.answers) for r in example.table.rows for c in r.cells):
        out.append("lookup")
    for op in OPERATIONS[1:]:
        try:
            done = execute(op, example.question, example.table, embed)
        except (ValueError, ZeroDivisionError):
            done = None
        if done is not None and matches(done.result, example.answers):
            out.append(op)
    return out


@dataclass
class Report:
    trained: int
    held_out: int
    covered: float  # share of training questions some operation answers
    labels: dict[str, float]
    accuracy: float  # held-out: the model's operation is one that answers
    threshold: float
    computed_right: float  # held-out computed answers (not lookups) over the threshold, right
    computed_answered: int


def train(examples: Sequence[Example], embed: Callable[[Sequence[str]], np.ndarray],
          embedder: str, *, held_out: float = 0.1, seed: int = 0,
          progress: Callable[[int, int], None] | None = None) -> tuple[OperationModel, Report]:
    """Label the examples (:func:`consistent`), fit the softmax on all but ``held_out``
    of them and choose its threshold on those."""
    vec = cached(embed)
    labelled: list[tuple[Example, list[str]]] = []
    for i, ex in enumerate(examples):
        if progress is not None and i % 200 == 0:
            progress(i, len(examples))
        if ex.table.rows:
            labelled.append((ex, consistent(ex, vec)))
    usable = [(ex, ops) for ex, ops in labelled if ops]
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(usable))
    cut = int(len(usable) * (1 - held_out))
    train_set = [usable[i] for i in order[:cut]]
    test_set = [usable[i] for i in order[cut:]]
    k = len(OPERATIONS)

    shape = OperationModel(np.zeros((1, k)), np.zeros(k), OPERATIONS, embedder, 0.5,
                           hashed=HASHED)

    def matrix(items: Sequence[tuple[Example, list[str]]]) -> tuple[np.ndarray, np.ndarray]:
        questions = [ex.question for ex, _ in items]
        x = shape.features(questions, embed(questions))
        y = np.zeros((len(items), k), dtype=np.float64)
        for row, (_, ops) in enumerate(items):
            # a cell is the answer of many a computation ("the team after X"): when an
            # operation gives it, the operation is what was asked, not the lookup
            ops = [op for op in ops if op != "lookup"] or ops
            for op in ops:
                y[row, OPERATIONS.index(op)] = 1.0 / len(ops)
        return x, y

    x, y = matrix(train_set)
    w, b = fit(x, y, seed=seed)
    model = OperationModel(w, b, OPERATIONS, embedder, 0.5, hashed=HASHED)
    xt, _ = matrix(test_set)
    probs = model.probabilities(xt)
    picks = probs.argmax(axis=1)
    right = [OPERATIONS[p] in ([o for o in ops if o != "lookup"] or ops)
             for p, (_, ops) in zip(picks, test_set, strict=True)]
    # the threshold: the lowest at which held-out computed answers are right often enough
    computed = [(float(probs[i, p]), r) for i, (p, r) in enumerate(zip(picks, right,
                                                                       strict=True))
                if OPERATIONS[p] != "lookup"]
    threshold, kept = 0.9, []
    for t in np.arange(0.3, 0.95, 0.05):
        kept = [r for pr, r in computed if pr >= t]
        if kept and sum(kept) / len(kept) >= PRECISION:
            threshold = float(t)
            break
    kept = [r for pr, r in computed if pr >= threshold]
    model = OperationModel(w, b, OPERATIONS, embedder, round(threshold, 2), hashed=HASHED)
    counts = {op: sum(op in ops for _, ops in usable) / max(1, len(usable)) for op in OPERATIONS}
    report = Report(len(train_set), len(test_set), len(usable) / max(1, len(labelled)),
                    {k: round(v, 3) for k, v in counts.items()},
                    sum(right) / max(1, len(right)), model.threshold,
                    sum(kept) / max(1, len(kept)), len(kept))
    return model, report


def read_csv_text(text: str) -> Table:
    """A table from CSV text (tests)."""
    rows = list(csv.reader(io.StringIO(text)))
    return Table.of([(line, None) for line in sheet_lines(rows)])
