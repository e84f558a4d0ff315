"""Training the entailment model: whether a sentence says that a statement (or a yes/no
question) is true, false, or neither.

A cross-encoder reads ``[CLS] premise [SEP] hypothesis [SEP]``; the mean of its token
states goes through a linear head to three logits: entailment, neutral, contradiction.
Yes/no answers use it directly (a sentence that entails the question says "yes", one
that contradicts it says "no", none: the documents do not say), and so can any check that
a sentence states an answer.

Training data, read by :func:`pair_examples` whatever its shape:

- natural language inference sets: MultiNLI / SNLI JSONL (``gold_label``, ``sentence1``,
  ``sentence2``), the GLUE TSV of the same columns, or ``premise`` / ``hypothesis`` /
  ``label`` JSONL (ANLI's ``e``/``n``/``c``, or 0/1/2);
- with ``questions``, each hypothesis that :func:`as_question` can turn around is also
  asked as a yes/no question, with the same label ("A man is playing" → "Is a man
  playing?");
- BoolQ-style yes/no questions (``question``, ``passage``, ``answer``): the passage
  entails a question answered yes and contradicts one answered no, and the most
  word-overlapping passage of another question is neutral (the same topic, silent on it),
  so that the model learns questions as hypotheses and "not stated".

Runs are seeded, checkpointed per epoch and resumable, like :mod:`.reader`'s.
"""

from __future__ import annotations

import csv
import gzip
import json
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragctl.errors import RagctlError
from ragctl.text import content_words
from ragctl.training.architectures import PairClassifier
from ragctl.training.loop import HeadResult, HeadTrainer
from ragctl.training.trainer import load_torch

LABELS = ("entailment", "neutral", "contradiction")
_LABEL = {"entailment": 0, "neutral": 1, "contradiction": 2, "e": 0, "n": 1, "c": 2,
          "0": 0, "1": 1, "2": 2}


@dataclass(frozen=True)
class PairExample:
    premise: str
    hypothesis: str
    label: int  # index into LABELS
    source: str  # the data file's name: metrics are given per source


@dataclass
class EntailOptions:
    base: str = "minilm"
    epochs: int = 1
    batch_size: int = 32
    learning_rate: float = 5e-5
    max_length: int = 128
    limit: int | None = None  # examples per data file (a seeded sample)
    val_fraction: float = 0.03
    max_val: int = 1500
    questions: bool = True  # statements also asked as yes/no questions (as_question)
    denials: bool = True  # the pairs that follow from denying each hypothesis (_denials)
    seed: int = 0
    device: str = "auto"


def _open(path: Path) -> Iterator[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        yield from f


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    """Each record of a JSONL, JSON list or TSV (with a header) file."""
    name = path.name.removesuffix(".gz")
    if name.endswith(".tsv"):
        lines = _open(path)
        reader = csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
        yield from reader
        return
    if name.endswith(".json"):
        data = json.loads("".join(_open(path)))
        yield from (data if isinstance(data, list) else data.get("data", []))
        return
    for line in _open(path):
        if line.strip():
            yield json.loads(line)


def _question(q: str) -> str:
    """A BoolQ question ("is windows movie maker part of windows essentials") as a person
    types one: capitalized, with its question mark."""
    q = " ".join(q.split()).rstrip("?")
    return q[:1].upper() + q[1:] + "?" if q else q


# "A man is playing a guitar." → "Is a man playing a guitar?": a statement whose verb
# has an auxiliary (within its first seven words, after a subject without a comma, a
# clause or a verb of its own) asked as a yes/no
# question; has/have/had only as auxiliaries ("has been", "have not", "had left").
_AUX = frozenset("is are was were can could will would should may might must does do did "
                 "has have had".split())
_PERFECT = re.compile(r"^(been|not|never|\w+(ed|en|wn|ne|t))$", re.I)
_CLAUSE = frozenset("that and or but who which if when because while as than so not "
                    "to".split())
_LOWER_FIRST = frozenset("a an the this that these those some many most all no two three "
                         "several there it he she they we you his her their our my its "
                         "one each every both".split())


def as_question(statement: str) -> str | None:
    """The yes/no question that a statement answers, or None when its auxiliary is not
    found (``_AUX``)."""
    words = statement.strip().rstrip(".!").split()
    i = _auxiliary(words)
    if i is None:
        return None
    subject = words[:i]
    if subject[0].lower() in _LOWER_FIRST:
        subject = [subject[0].lower(), *subject[1:]]
    return " ".join([words[i].lower().capitalize(), *subject, *words[i + 1:]]) + "?"


def _auxiliary(words: Sequence[str]) -> int | None:
    """Where a statement's auxiliary is (see :func:`as_question`), or None."""
    for i, w in enumerate(words[:7]):
        low = w.lower()
        if not (i and low in _AUX):
            if "," in w or ";" in w or "'" in w or low in _CLAUSE:
                return None  # a clause before the auxiliary: not the subject
            continue
        if low in ("has", "have", "had") and not (
                i + 1 < len(words) and _PERFECT.match(words[i + 1])):
            return None
        return i if i + 1 < len(words) else None
    return None


def negated(statement: str) -> str | None:
    """The statement denied at its auxiliary ("A man is sleeping." → "A man is not
    sleeping."; "… is not …" → "… is …"), or None when it has none (:func:`as_question`)."""
    words = statement.strip().rstrip(".!").split()
    i = _auxiliary(words)
    if i is None:
        return None
    if words[i + 1].lower() in ("not", "never"):
        words = [*words[:i + 1], *words[i + 2:]]
    else:
        words = [*words[:i + 1], "not", *words[i + 1:]]
    return " ".join(words) + "."


def _denials(ex: PairExample, questions: bool) -> list[PairExample]:
    """Pairs that follow from ``ex`` by denying its hypothesis H (P: the premise). P ⊨ H
    gives: P contradicts not-H, and not-H contradicts P (and P asked as a question: "We
    never share …" says no to "Is … shared?"). P contradicts H gives: P ⊨ not-H."""
    denied = negated(ex.hypothesis)
    if denied is None or ex.label == 1:
        return []
    src = ex.source + ":denied"
    if ex.label == 2:
        return [PairExample(ex.premise, denied, 0, src)]
    out = [PairExample(ex.premise, denied, 2, src), PairExample(denied, ex.premise, 2, src)]
    asked = as_question(ex.premise) if questions and len(ex.premise.split()) <= 30 else None
    if asked is not None:
        out.append(PairExample(denied, asked, 2, src))
    return out


def pair_examples(paths: Sequence[Path], *, limit: int | None = None, seed: int = 0,
                  questions: bool = False, denials: bool = False) -> list[PairExample]:
    """Labelled premise–hypothesis pairs from each file (see the module doc); ``limit``:
    a seeded sample of that many records per file; ``questions``: each statement that
    :func:`as_question` can ask is also a yes/no question with the same label;
    ``denials``: the pairs that follow from denying each hypothesis (:func:`_denials`)."""
    rng = random.Random(seed)
    out: list[PairExample] = []
    for path in map(Path, paths):
        if not path.exists():
            raise RagctlError(f"no such data file: {path}")
        try:
            rows = list(_rows(path))
        except (ValueError, OSError, UnicodeDecodeError, csv.Error) as e:
            raise RagctlError(f"cannot read {path}: {e}") from None
        if limit is not None and limit < len(rows):
            rows = rng.sample(rows, limit)
        source = path.name.removesuffix(".gz")
        if rows and "question" in rows[0] and "passage" in rows[0]:
            out.extend(_yes_no_pairs(rows, source, rng))
            continue
        for r in rows:
            premise = r.get("sentence1") or r.get("premise") or r.get("prem") or \
                r.get("context")
            hypothesis = r.get("sentence2") or r.get("hypothesis") or r.get("hyp")
            label = _LABEL.get(str(r.get("gold_label", r.get("label", ""))).strip().lower())
            if not (premise and hypothesis and label is not None):
                continue
            premise, hypothesis = str(premise).strip(), str(hypothesis).strip()
            out.append(PairExample(premise, hypothesis, label, source))
            if denials:
                out.extend(_denials(out[-1], questions))
            asked = as_question(hypothesis) if questions else None
            if asked is not None:  # "Is a man playing a guitar?": yes, no or not stated
                out.append(PairExample(premise, asked, label, source + ":question"))
    if not out:
        raise RagctlError("no labelled pairs in the data: give NLI files (MultiNLI, SNLI, "
                          "ANLI) or yes/no questions with passages (BoolQ)")
    return out


def _yes_no_pairs(rows: Sequence[dict[str, Any]], source: str, rng: random.Random
                  ) -> list[PairExample]:
    """A yes/no question with its passage (entailed or contradicted), and with the most
    word-overlapping other passage (neutral)."""
    out: list[PairExample] = []
    passages = [str(r["passage"]) for r in rows]
    words = [set(content_words(p[:600])) for p in passages]
    index: dict[str, list[int]] = {}
    for i, ws in enumerate(words):
        for w in ws:
            index.setdefault(w, []).append(i)
    for i, r in enumerate(rows):
        q = _question(str(r["question"]))
        title = str(r.get("title", "")).strip()
        premise = f"{title}. {passages[i]}" if title else passages[i]
        answer = r["answer"] if isinstance(r["answer"], bool) else \
            str(r["answer"]).lower() in ("true", "yes", "1")
        out.append(PairExample(premise, q, 0 if answer else 2, source))
        counts: dict[int, int] = {}
        for w in set(content_words(q)):
            for j in index.get(w, [])[:2000]:
                if j != i:
                    counts[j] = counts.get(j, 0) + 1
        if counts:
            best = max(counts.values())
            j = rng.choice([k for k, c in counts.items() if c == best])
            other = f"{rows[j].get('title', '')}. {passages[j]}".lstrip(". ")
            out.append(PairExample(other, q, 1, source + ":neutral"))
    return out


def split_pairs(examples: Sequence[PairExample], fraction: float, max_val: int, seed: int
                ) -> tuple[list[PairExample], list[PairExample]]:
    order = list(examples)
    random.Random(seed).shuffle(order)
    n_val = min(max_val, max(1, int(len(order) * fraction))) if len(order) > 1 else 0
    return order[n_val:], order[:n_val]


class EntailTrainer(HeadTrainer):
    architecture = PairClassifier.name
    outputs = len(LABELS)
    metric = "accuracy"

    def examples(self) -> tuple[list[PairExample], list[PairExample]]:
        opts = self.opts
        examples = pair_examples(self.data, limit=opts.limit, seed=opts.seed,
                                 questions=opts.questions, denials=opts.denials)
        return split_pairs(examples, opts.val_fraction, opts.max_val, opts.seed)

    def length(self, example: PairExample) -> int:
        return len(example.premise)

    def init_head(self, head: Any, base: Path) -> None:
        """A base that is an earlier run's model keeps its head (trained further)."""
        if not (base / "head.npz").exists():
            return
        torch = load_torch()
        arrays = np.load(base / "head.npz")
        if arrays["weight"].shape == tuple(head.weight.shape):
            with torch.no_grad():
                head.weight.copy_(torch.from_numpy(arrays["weight"]))
                head.bias.copy_(torch.from_numpy(arrays["bias"]))

    def loss(self, tok: Any, model: Any, head: Any, batch: Sequence[PairExample],
             device: str) -> Any:
        torch = load_torch()
        logits = self._logits(model, head, self._encode(tok, batch, device))
        y = torch.tensor([ex.label for ex in batch], device=device)
        return torch.nn.functional.cross_entropy(logits, y)

    def _encode(self, tok: Any, batch: Sequence[PairExample], device: str) -> Any:
        return tok([ex.premise for ex in batch], [ex.hypothesis for ex in batch],
                   truncation="longest_first", max_length=self.opts.max_length, padding=True,
                   return_tensors="pt").to(device)

    @staticmethod
    def _logits(model: Any, head: Any, enc: Any) -> Any:
        states = model(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).to(states.dtype)
        return head((states * mask).sum(1) / mask.sum(1))

    def validate(self, tok: Any, model: Any, head: Any, val: Sequence[PairExample],
                 device: str) -> dict[str, float]:
        """Accuracy over the three labels, per source and overall; on yes/no questions,
        whether entailment or contradiction is the likelier of the two (polarity)."""
        torch = load_torch()
        right: dict[str, list[bool]] = {}
        polarity: list[bool] = []
        losses = []
        for i in range(0, len(val), 64):
            batch = list(val[i:i + 64])
            logits = self._logits(model, head, self._encode(tok, batch, device))
            y = torch.tensor([ex.label for ex in batch], device=device)
            losses.append(float(torch.nn.functional.cross_entropy(logits, y)))
            pred = logits.argmax(-1).tolist()
            z = logits.float().cpu().numpy()
            for ex, p, zk in zip(batch, pred, z, strict=True):
                right.setdefault(ex.source, []).append(p == ex.label)
                if ex.label != 1 and ex.hypothesis.endswith("?"):  # a yes/no question
                    polarity.append((zk[0] > zk[2]) == (ex.label == 0))
        every = [r for rs in right.values() for r in rs]
        metrics = {"accuracy": float(np.mean(every)) if every else 0.0,
                   "val_loss": float(np.mean(losses)) if losses else 0.0}
        metrics.update({f"accuracy:{s}": float(np.mean(r)) for s, r in sorted(right.items())})
        if polarity:
            metrics["yes_no_polarity"] = float(np.mean(polarity))
        return metrics

    def meta(self, result: HeadResult) -> dict[str, Any]:
        return {"kind": "nli", "architecture": PairClassifier.name,
                "base": self.opts.base, "options": asdict(self.opts),
                "data": [str(p) for p in self.data], "command": self.command,
                "examples": result.examples, "val_examples": result.val_examples,
                "history": [asdict(h) for h in result.history],
                "best_epoch": result.best_epoch, "metrics": result.metrics,
                "max_length": self.opts.max_length, "labels": list(LABELS)}


def entail_calibration_texts(meta: dict[str, Any], n: int = 600, seed: int = 0) -> list[str]:
    """Premise + hypothesis texts from a run's data, for GPTQ rounding."""
    examples = pair_examples([Path(p) for p in meta.get("data", [])], limit=n, seed=seed)
    random.Random(seed).shuffle(examples)
    return [f"{ex.premise} {ex.hypothesis}" for ex in examples[:n]]
