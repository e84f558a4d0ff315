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
import json
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ragctl.ask.compute import Table, cached, execute, number
from ragctl.errors import RagctlError
from ragctl.index.ingest import sheet_lines
from ragctl.models.tableops import ASKED, COMPUTED, OPERATIONS, OperationModel
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


@dataclass(frozen=True)
class Labelled:
    """A question and the operations that answer it: those that give a WikiTableQuestions
    answer on its table (:func:`consistent`), or the one a labelled file names."""

    question: str
    ops: tuple[str, ...]
    source: str = ""


def read_labelled(path: Path) -> Iterator[Labelled]:
    """Questions labelled with what they ask (one JSON object a line: "question", "op"
    one of :data:`ASKED`): WikiSQL's aggregations, TAT-QA's and FinQA's derivations
    (bench/tableops_data.py writes them). A line that is not such an object is an error
    that names the line."""
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                question, op = str(row["question"]).strip(), str(row["op"])
            except (ValueError, KeyError, TypeError) as e:
                raise RagctlError(f"{path.name}, line {n}: not a labelled question "
                                  f"({e.__class__.__name__})") from None
            if op not in ASKED:
                raise RagctlError(f"{path.name}, line {n}: unknown operation {op!r} "
                                  f"(one of: {', '.join(ASKED)})")
            if question:
                yield Labelled(question, (op,), path.name)


@dataclass
class Report:
    trained: int
    held_out: int
    covered: float  # share of WikiTableQuestions questions some operation answers
    labels: dict[str, float]
    accuracy: float  # held-out: the model's operation is one that answers
    threshold: float
    computed_right: float  # held-out computed answers (not lookups) over the threshold, right
    computed_answered: int
    sources: dict[str, int] = field(default_factory=dict)  # questions trained on, by file
    # held-out questions that ask for a computation (:data:`COMPUTED`) told apart from the
    # rest by the model's probability of one (ROC area)
    computed_auroc: float = 0.0


ROUNDS = 3  # rounds of re-weighting each question's operations by the model (below)


def label(examples: Sequence[Example], embed: Callable[[Sequence[str]], np.ndarray],
          progress: Callable[[int, int], None] | None = None) -> list[Labelled]:
    """The WikiTableQuestions examples that some operation answers, with those operations."""
    vec = cached(embed)
    out = []
    for i, ex in enumerate(examples):
        if progress is not None and i % 200 == 0:
            progress(i, len(examples))
        if ex.table.rows:
            ops = consistent(ex, vec)
            if ops:
                out.append(Labelled(ex.question, tuple(ops), "wtq"))
    return out


def train(examples: Sequence[Example], embed: Callable[[Sequence[str]], np.ndarray],
          embedder: str, *, labelled: Sequence[Labelled] = (), held_out: float = 0.1,
          seed: int = 0, progress: Callable[[int, int], None] | None = None,
          ) -> tuple[OperationModel, Report]:
    """Label the examples (:func:`consistent`), add the ``labelled`` questions, fit the
    softmax on all but ``held_out`` of them and choose its threshold on those.

    A WikiTableQuestions answer is often given by several operations, only one of them
    asked ("the first row" holds many a looked-up cell by chance). Each question's weight
    starts shared among its operations; then, for :data:`ROUNDS` rounds, it is shared in
    proportion to what the model fitted so far says of them (the marginal likelihood of
    the operations that answer, maximized by EM): an operation that questions worded alike
    keep needing gathers their weight, one that answers by chance loses it."""
    n_wtq = len(examples)
    usable = label(examples, embed, progress) + list(labelled)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(usable))
    cut = int(len(usable) * (1 - held_out))
    train_set = [usable[i] for i in order[:cut]]
    test_set = [usable[i] for i in order[cut:]]
    k = len(ASKED)
    shape = OperationModel(np.zeros((1, k)), np.zeros(k), ASKED, embedder, 0.5, hashed=HASHED)

    def inputs(items: Sequence[Labelled]) -> tuple[np.ndarray, np.ndarray]:
        questions = [x.question for x in items]
        x = shape.features(questions, embed(questions))
        mask = np.zeros((len(items), k), dtype=np.float64)
        for row, item in enumerate(items):
            mask[row, [ASKED.index(op) for op in item.ops]] = 1.0
        return x, mask

    x, mask = inputs(train_set)
    y = mask / mask.sum(axis=1, keepdims=True)
    for _ in range(ROUNDS):
        w, b = fit(x, y, seed=seed)
        probs = OperationModel(w, b, ASKED, embedder, 0.5, hashed=HASHED).probabilities(x)
        y = probs * mask
        y /= y.sum(axis=1, keepdims=True)
    w, b = fit(x, y, seed=seed)
    model = OperationModel(w, b, ASKED, embedder, 0.5, hashed=HASHED)
    xt, mt = inputs(test_set)
    probs = model.probabilities(xt)
    picks = probs.argmax(axis=1)
    right = [bool(mt[i, p]) for i, p in enumerate(picks)]
    # the threshold: the lowest at which held-out computed answers are right often enough
    computed = [(float(probs[i, p]), r) for i, (p, r) in enumerate(zip(picks, right,
                                                                       strict=True))
                if ASKED[p] != "lookup"]
    threshold, kept = 0.9, []
    for t in np.arange(0.3, 0.95, 0.05):
        kept = [r for pr, r in computed if pr >= t]
        if kept and sum(kept) / len(kept) >= PRECISION:
            threshold = float(t)
            break
    kept = [r for pr, r in computed if pr >= threshold]
    model = OperationModel(w, b, ASKED, embedder, round(threshold, 2), hashed=HASHED)
    counts = {op: sum(op in x.ops for x in usable) / max(1, len(usable)) for op in ASKED}
    inside = [i for i, op in enumerate(ASKED) if op in COMPUTED]
    asks = [all(ASKED[j] in COMPUTED for j in np.flatnonzero(m)) for m in mt]
    sources: dict[str, int] = {}
    for item in train_set:
        sources[item.source] = sources.get(item.source, 0) + 1
    report = Report(len(train_set), len(test_set),
                    sum(x.source == "wtq" for x in usable) / max(1, n_wtq),
                    {k: round(v, 3) for k, v in counts.items()},
                    sum(right) / max(1, len(right)), model.threshold,
                    sum(kept) / max(1, len(kept)), len(kept), sources,
                    round(auroc(probs[:, inside].sum(axis=1), asks), 4))
    return model, report


def auroc(scores: np.ndarray, positive: Sequence[bool]) -> float:
    """The area under the ROC curve of ``scores`` for telling ``positive`` apart (0.5 when
    one side is empty): the chance a positive scores above a negative, ties half."""
    pos = np.asarray(positive, dtype=bool)
    if pos.all() or not pos.any():
        return 0.5
    ranks = np.empty(len(scores))
    order = np.argsort(scores, kind="mergesort")
    ranks[order] = np.arange(1, len(scores) + 1)
    for v in np.unique(scores):  # ties share their mean rank
        same = scores == v
        ranks[same] = ranks[same].mean()
    n1, n0 = pos.sum(), (~pos).sum()
    return float((ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def read_csv_text(text: str) -> Table:
    """A table from CSV text (tests)."""
    rows = list(csv.reader(io.StringIO(text)))
    return Table.of([(line, None) for line in sheet_lines(rows)])
