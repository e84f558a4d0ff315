"""Training the question-kind model (:mod:`ragctl.models.kinds`): short answer or
explanation.

The public question-classification set of Li and Roth (TREC, ``train_5500.label``: 5,452
questions, each labelled with the type of its answer, "NUM:date", "HUM:ind", …) gives the
labels: its description questions, a definition ("What is a caldera?"), a description
("What did Delilah do to Samson's hair?"), a manner ("How do you make a paintball?") or a
reason ("Why do people get calluses?"), want sentences; the rest want a name, a number,
a place or a date. A softmax over the question's embedding (the embedder ``index``
uses) and its hashed words is fitted to them; a tenth is held out to measure it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragctl.errors import RagctlError
from ragctl.models.kinds import KINDS, KindModel
from ragctl.training.softmax import fit

HASHED = 2048  # dimensions of the question's hashed words and word pairs
# the fine labels whose questions want an explanation (all of TREC's DESC class)
EXPLANATORY = frozenset({"DESC:def", "DESC:desc", "DESC:manner", "DESC:reason"})


@dataclass(frozen=True)
class Example:
    question: str
    label: str  # TREC's, "DESC:manner"

    @property
    def kind(self) -> str:
        return "explanatory" if self.label in EXPLANATORY else "factoid"


def untokenized(text: str) -> str:
    """TREC's tokenized text as written: "What 's the color of a ` heart ' ?" → "What's
    the color of a 'heart'?"."""
    text = re.sub(r"\s+('s|n't|'re|'ve|'ll|'d|'m)\b", r"\1", text)
    text = re.sub(r"``\s*", '"', text)  # opening quotes hold on to the next word
    text = re.sub(r"`\s*", "'", text)
    text = re.sub(r"\s*''", '"', text)  # closing ones to the word before
    text = re.sub(r"\s+'(?=\s|[?.,!;:]|$)", "'", text)
    text = re.sub(r"\s+([?.,!;:])", r"\1", text)
    return " ".join(text.split())


def read_trec(path: Path) -> Iterator[Example]:
    """The labelled questions of a TREC question-classification file: one per line,
    "LABEL:fine question words ?"."""
    for n, line in enumerate(path.read_text(encoding="latin-1").splitlines(), start=1):
        if not line.strip():
            continue
        label, _, question = line.partition(" ")
        if ":" not in label or not question.strip():
            raise RagctlError(f"{path}:{n}: not a labelled question ('LABEL:fine words')")
        yield Example(untokenized(question), label)


@dataclass
class Report:
    trained: int
    held_out: int
    explanatory: float  # share of the training questions
    accuracy: float  # on the held-out questions, at the threshold
    threshold: float


def train(examples: Sequence[Example], embed: Callable[[Sequence[str]], np.ndarray],
          embedder: str, *, held_out: float = 0.1, seed: int = 0,
          threshold: float = 0.8) -> tuple[KindModel, Report]:
    """Fit the model on all but ``held_out`` of the examples; measure it on those at
    ``threshold`` (the default keeps a span answer for all but 1.8% of SQuAD's factoid
    development questions, and finds 30 of the benchmark's 43 explanatory development
    questions, against 26 by their form: 0.5 finds 31 and takes 6.8% of SQuAD's)."""
    if len(examples) < 20:
        raise RagctlError(f"{len(examples)} labelled questions are too few to train on")
    order = np.random.default_rng(seed).permutation(len(examples))
    cut = max(1, round(len(examples) * held_out))
    test, fitted = [examples[i] for i in order[:cut]], [examples[i] for i in order[cut:]]
    shape = KindModel(np.zeros((1, 2)), np.zeros(2), KINDS, embedder, threshold,
                      hashed=HASHED)

    def inputs(part: Sequence[Example]) -> np.ndarray:
        questions = [e.question for e in part]
        return shape.features(questions, np.asarray(embed(questions), dtype=np.float32))

    targets = np.eye(len(KINDS), dtype=np.float32)[[KINDS.index(e.kind) for e in fitted]]
    w, b = fit(inputs(fitted), targets, seed=seed)
    model = KindModel(w, b, KINDS, embedder, threshold, hashed=HASHED)
    p = model.probabilities(inputs(test))[:, KINDS.index("explanatory")]
    right = (p >= threshold) == np.array([e.kind == "explanatory" for e in test])
    report = Report(len(fitted), len(test),
                    round(float(np.mean([e.kind == "explanatory" for e in fitted])), 3),
                    round(float(right.mean()), 4), threshold)
    return model, report
