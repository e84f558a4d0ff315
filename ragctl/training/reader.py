"""Training the span reader: the model that picks the answer inside a passage.

An extractive reader as SQuAD 2.0 readers are built: an encoder reads
``[CLS] question [SEP] title. passage [SEP]``, a linear head gives every token a start and
an end logit, and the answer is the span maximizing start + end; the [CLS] position stands
for "no answer here" (its start + end logit is the null score). Trained on question-answer
datasets with passages (SQuAD JSON, DPR/NQ JSONL, read by :mod:`ragctl.eval.datasets`): the
passage that holds the answer is a positive, and two kinds of negatives teach the null
score — the on-topic "not in your documents" signal: a passage on the same topic that
does not hold the answer (the most word-overlapping one from the same article, or from
the whole dataset when it has no articles), and the answer's own passage with the
sentences that hold the answer deleted (it still talks about the subject, but no longer
says the answer).

Runs are seeded, checkpointed per epoch and resumable, like :mod:`.trainer`'s.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragctl.errors import RagctlError
from ragctl.models.reader import best_spans
from ragctl.text import contains_answer, content_words, exact_match, max_f1, passage_text
from ragctl.training.architectures import SpanReader
from ragctl.training.loop import HeadResult, HeadTrainer
from ragctl.training.trainer import (
    load_torch,
)

MAX_ANSWER_TOKENS = 30


@dataclass(frozen=True)
class SpanExample:
    """A question and a context; ``start``/``end`` are the answer's character offsets in
    the context, or -1 when the context does not hold the answer."""

    id: str
    question: str
    context: str
    start: int
    end: int
    answers: tuple[str, ...] = ()
    group: str = ""

    @property
    def answerable(self) -> bool:
        return self.start >= 0


@dataclass
class ReaderOptions:
    base: str = "minilm"
    epochs: int = 2
    batch_size: int = 16
    learning_rate: float = 1e-4
    max_length: int = 256
    negatives: int = 1  # on-topic passages without the answer per question
    holes: bool = True  # also the answer's passage with its answer sentences deleted
    val_fraction: float = 0.05
    limit: int | None = None
    split: str = "dev"
    seed: int = 0
    device: str = "auto"


def _find(text: str, answers: Sequence[str]) -> tuple[int, int] | None:
    """The first place an answer occurs in ``text`` (exactly, else ignoring case)."""
    best: tuple[int, int] | None = None
    for a in answers:
        i = text.find(a)
        if i >= 0 and (best is None or i < best[0]):
            best = (i, i + len(a))
    if best is None:
        low = text.lower()
        for a in answers:
            i = low.find(a.lower())
            if a and i >= 0:
                return i, i + len(a)
    return best


def without_answer(text: str, answers: Sequence[str], splitter: Any) -> str | None:
    """``text`` with every sentence that holds an answer deleted; None when nothing (or
    only one sentence) is left, or the answer is still there."""
    kept = [s.text for s in splitter.split(text) if not contains_answer(s.text, answers)]
    rest = " ".join(kept)
    if len(kept) < 2 or contains_answer(rest, answers):
        return None
    return rest


def span_examples(paths: Sequence[Path], *, split: str = "dev", negatives: int = 1,
                  holes: bool = False, seed: int = 0, limit: int | None = None
                  ) -> list[SpanExample]:
    """Positives and on-topic negatives from question-answer datasets (see the module doc).
    SQuAD passages are grouped by article; other datasets form one group."""
    from ragctl.eval.datasets import load
    from ragctl.index.sentences import SentenceSplitter

    rng = random.Random(seed)
    splitter = SentenceSplitter()
    out: list[SpanExample] = []
    for path in paths:
        ds = load(Path(path), split=split)
        texts = {p.id: passage_text(p.title, p.text) for p in ds.passages}
        group = {p.id: p.id.split("-")[0] if ds.name == "squad" else ds.name
                 for p in ds.passages}
        words = {pid: set(content_words(t)) for pid, t in texts.items()}
        members: dict[str, list[str]] = {}
        for pid, g in group.items():
            members.setdefault(g, []).append(pid)
        examples = [ex for ex in ds.examples if ex.answers and ex.contexts]
        if limit is not None and limit < len(examples):
            examples = rng.sample(examples, limit)
        for ex in examples:
            pos = next(((pid, span) for pid in ex.contexts if pid in texts
                        for span in [_find(texts[pid], ex.answers)] if span), None)
            if pos is None:
                continue
            pid, (s, e) = pos
            g = group[pid]
            out.append(SpanExample(ex.id, ex.question, texts[pid], s, e, ex.answers, g))
            hole = without_answer(texts[pid], ex.answers, splitter) if holes else None
            if hole is not None:
                out.append(SpanExample(f"{ex.id}-neghole", ex.question, hole, -1, -1,
                                       ex.answers, g))
            q = set(content_words(ex.question))
            pool = [p for p in members[g] if p != pid]
            scored = sorted(((len(q & words[p]), rng.random(), p) for p in pool), reverse=True)
            picked = 0
            for _, _, other in scored[:50]:
                if picked >= negatives:
                    break
                if not contains_answer(texts[other], ex.answers):
                    out.append(SpanExample(f"{ex.id}-neg{picked}", ex.question, texts[other],
                                           -1, -1, ex.answers, g))
                    picked += 1
    if not out:
        raise RagctlError("no question has a passage that contains its answer; the reader "
                          "needs question-answer data with passages (SQuAD, DPR/NQ)")
    return out


def split_by_group(examples: Sequence[SpanExample], fraction: float, seed: int
                   ) -> tuple[list[SpanExample], list[SpanExample]]:
    """Held-out examples by question (a question's negatives go with it)."""
    qids = sorted({ex.id.split("-neg")[0] for ex in examples})
    random.Random(seed).shuffle(qids)
    n_val = max(1, int(len(qids) * fraction)) if len(qids) > 1 else 0
    val = set(qids[:n_val])
    return ([ex for ex in examples if ex.id.split("-neg")[0] not in val],
            [ex for ex in examples if ex.id.split("-neg")[0] in val])


class ReaderTrainer(HeadTrainer):
    architecture = SpanReader.name
    outputs = 2  # a start and an end logit per token
    metric = "f1"

    def examples(self) -> tuple[list[SpanExample], list[SpanExample]]:
        opts = self.opts
        examples = span_examples(self.data, split=opts.split, negatives=opts.negatives,
                                 holes=opts.holes, seed=opts.seed, limit=opts.limit)
        return split_by_group(examples, opts.val_fraction, opts.seed)

    def length(self, example: SpanExample) -> int:
        return len(example.context)

    def loss(self, tok: Any, model: Any, head: Any, batch: Sequence[SpanExample],
             device: str) -> Any:
        torch = load_torch()
        enc, st, en, _ = self._encode(tok, batch, device)
        sl, el = self._logits(model, head, enc)
        ce = torch.nn.functional.cross_entropy
        return (ce(sl, st) + ce(el, en)) / 2

    def _encode(self, tok: Any, batch: Sequence[SpanExample], device: str) -> tuple[Any, ...]:
        torch = load_torch()
        enc = tok([ex.question for ex in batch], [ex.context for ex in batch],
                  truncation="only_second", max_length=self.opts.max_length, padding=True,
                  return_offsets_mapping=True, return_tensors="pt")
        starts, ends = [], []
        for i, ex in enumerate(batch):
            st = en = 0
            if ex.answerable:
                seq = enc.sequence_ids(i)
                for t, (a, b) in enumerate(enc["offset_mapping"][i].tolist()):
                    if seq[t] != 1:
                        continue
                    if st == 0 and b > ex.start:
                        st = t
                    if st and a < ex.end:
                        en = t
                if st == 0 or en < st:  # the answer was cut off by truncation
                    st = en = 0
            starts.append(st)
            ends.append(en)
        offsets = enc.pop("offset_mapping")
        return (enc.to(device), torch.tensor(starts, device=device),
                torch.tensor(ends, device=device), offsets)

    def _logits(self, model: Any, head: Any, enc: Any) -> tuple[Any, Any]:
        states = model(**enc).last_hidden_state
        logits = head(states)
        pad = enc["attention_mask"] == 0
        return (logits[..., 0].masked_fill(pad, -1e4), logits[..., 1].masked_fill(pad, -1e4))

    def validate(self, tok: Any, model: Any, head: Any, val: Sequence[SpanExample],
                 device: str) -> dict[str, float]:
        """EM / F1 of the best span on answerable examples; how well span − null separates
        answerable from not (AUROC); the loss."""
        torch = load_torch()
        em, f1, margins, labels, losses = [], [], [], [], []
        for i in range(0, len(val), 32):
            batch = list(val[i:i + 32])
            enc, st, en, offsets = self._encode(tok, batch, device)
            sl, el = self._logits(model, head, enc)
            ce = torch.nn.functional.cross_entropy
            losses.append(float((ce(sl, st) + ce(el, en)) / 2))
            s_np, e_np = sl.float().cpu().numpy(), el.float().cpu().numpy()
            for k, ex in enumerate(batch):
                seq = enc.sequence_ids(k) if hasattr(enc, "sequence_ids") else None
                positions = [t for t, sid in enumerate(seq or []) if sid == 1]
                score, a, b = (best_spans(s_np[k], e_np[k], positions, MAX_ANSWER_TOKENS)
                               or [(-math.inf, 0, 0)])[0]
                null = float(s_np[k][0] + e_np[k][0])
                margins.append(score - null)
                labels.append(1 if ex.answerable else 0)
                if ex.answerable:
                    pred = ex.context[int(offsets[k][a][0]):int(offsets[k][b][1])]
                    em.append(exact_match(pred, ex.answers))
                    f1.append(max_f1(pred, ex.answers))
        return {"em": float(np.mean(em)) if em else 0.0, "f1": float(np.mean(f1)) if f1 else 0.0,
                "null_auroc": _auroc(margins, labels), "val_loss": float(np.mean(losses))}

    def meta(self, result: HeadResult) -> dict[str, Any]:
        return {"kind": "reader", "architecture": SpanReader.name, "base": self.opts.base,
                "options": asdict(self.opts), "data": [str(p) for p in self.data],
                "command": self.command, "examples": result.examples,
                "val_examples": result.val_examples,
                "history": [asdict(h) for h in result.history],
                "best_epoch": result.best_epoch, "metrics": result.metrics,
                "max_length": self.opts.max_length, "max_answer_tokens": MAX_ANSWER_TOKENS}


def _auroc(scores: Sequence[float], labels: Sequence[int]) -> float:
    """Probability that a random positive scores above a random negative."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return float("nan")
    ranks = np.argsort(np.argsort(np.array(pos + neg))) + 1.0
    return float((ranks[:len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def reader_calibration_texts(meta: dict[str, Any], n: int = 600, seed: int = 0) -> list[str]:
    """Question + context texts from a reader run's data, for GPTQ rounding."""
    opts = meta.get("options", {})
    paths = [Path(p) for p in meta.get("data", [])]
    examples = span_examples(paths, split=opts.get("split", "dev"), negatives=0, seed=seed,
                             limit=n)
    return [f"{ex.question} {ex.context}" for ex in examples]
