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

SQuAD 2.0's unanswerable questions are negatives with their own passage. Tables teach
the reader to pick a cell: WikiTableQuestions' questions whose answer is one cell of a row
the question names (:func:`table_span_examples`), read as ``index`` reads a CSV file (one
"Header: value; …" line a row). The examples can be written to a JSON-lines file
(:func:`write_spans`, ``*.spans.jsonl.gz``) and trained from elsewhere, on a machine
without spaCy or the data.

Runs are seeded, checkpointed per epoch and resumable, like :mod:`.trainer`'s.
"""

from __future__ import annotations

import csv
import gzip
import json
import math
import random
import re
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
    tables: str | None = None  # the folder that holds WikiTableQuestions' csv/ (TSV data)


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


SPANS_SUFFIXES = (".spans.jsonl", ".spans.jsonl.gz")


def span_examples(paths: Sequence[Path], *, split: str = "dev", negatives: int = 1,
                  holes: bool = False, seed: int = 0, limit: int | None = None,
                  tables: Path | None = None) -> list[SpanExample]:
    """Positives and on-topic negatives from question-answer datasets (see the module doc).
    SQuAD passages are grouped by article; other datasets form one group. A TSV file is
    WikiTableQuestions' (``tables``: the folder of its ``csv/``); a ``*.spans.jsonl(.gz)``
    file holds examples written by :func:`write_spans`."""
    from ragctl.eval.datasets import load
    from ragctl.index.sentences import SentenceSplitter

    rng = random.Random(seed)
    splitter = SentenceSplitter()
    out: list[SpanExample] = []
    for path in paths:
        if str(path).endswith(SPANS_SUFFIXES):
            out.extend(read_spans(Path(path), limit=limit, seed=seed))
            continue
        if Path(path).suffix == ".tsv":
            if tables is None:
                raise RagctlError(f"{path}: WikiTableQuestions data needs --tables, the "
                                  "folder that holds its csv/ tables")
            out.extend(table_span_examples(Path(path), Path(tables), negatives=negatives,
                                           seed=seed, limit=limit, holes=holes))
            continue
        ds = load(Path(path), split=split)
        texts = {p.id: passage_text(p.title, p.text) for p in ds.passages}
        group = {p.id: p.id.split("-")[0] if ds.name == "squad" else ds.name
                 for p in ds.passages}
        words = {pid: set(content_words(t)) for pid, t in texts.items()}
        members: dict[str, list[str]] = {}
        for pid, g in group.items():
            members.setdefault(g, []).append(pid)
        examples = [ex for ex in ds.examples if ex.answers and ex.contexts]
        unanswerable = [ex for ex in ds.examples
                        if not ex.answerable and not ex.answers and ex.contexts]
        if limit is not None and limit < len(examples):
            share = limit / len(examples)
            examples = rng.sample(examples, limit)
            unanswerable = rng.sample(unanswerable, int(len(unanswerable) * share))
        for ex in unanswerable:  # SQuAD 2.0: written to be unanswerable from its passage
            pid = ex.contexts[0]
            if pid in texts:
                out.append(SpanExample(f"{ex.id}-negq", ex.question, texts[pid], -1, -1,
                                       (), group[pid]))
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


def read_spans(path: Path, *, limit: int | None = None, seed: int = 0) -> list[SpanExample]:
    """The examples of a file :func:`write_spans` wrote (``limit``: a seeded sample of
    that many questions, their negatives with them)."""
    opener = gzip.open if path.name.endswith(".gz") else open
    out: list[SpanExample] = []
    n = 0
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            for n, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    out.append(SpanExample(str(row["id"]), row["question"], row["context"],
                                           int(row["start"]), int(row["end"]),
                                           tuple(row.get("answers", ())),
                                           row.get("group", "")))
                except (ValueError, KeyError, TypeError):
                    raise RagctlError(f"{path}:{n}: not a span example") from None
    except (OSError, EOFError, UnicodeDecodeError) as e:  # a cut or corrupt file
        raise RagctlError(f"{path}: cannot be read after line {n} ({e})") from None
    if limit is not None:
        qids = sorted({ex.id.split("-neg")[0] for ex in out})
        if limit < len(qids):
            keep = set(random.Random(seed).sample(qids, limit))
            out = [ex for ex in out if ex.id.split("-neg")[0] in keep]
    return out


def write_spans(examples: Sequence[SpanExample], path: Path) -> int:
    """Write examples as JSON lines (gzip when the name ends in .gz); returns how many."""
    opener = gzip.open if path.name.endswith(".gz") else open
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with opener(tmp, "wt", encoding="utf-8") as f:
        for ex in examples:
            f.write(json.dumps(asdict(ex), ensure_ascii=False) + "\n")
    tmp.replace(path)
    return len(examples)


TABLE_WORDS = 120  # words of rows around a table answer's row (the reader reads 180)


def _cell_at(line: str, value: str) -> list[int]:
    """Where ``value`` is a whole cell of a row line ("Header: value; …" or "a | b")."""
    out = []
    for m in re.finditer(re.escape(value), line):
        a, b = m.start(), m.end()
        before = a == 0 or line[:a].endswith((": ", "; ", " | "))
        after = b == len(line) or line[b:].startswith(("; ", " | "))
        if before and after:
            out.append(a)
    return out


def _page_title(root: Path, context: str) -> str:
    """The Wikipedia page a WikiTableQuestions table comes from ("csv/204-csv/590.csv" →
    page/204-page/590.json), as a file's title; "" when the release lacks it."""
    parts = Path(context).parts
    if len(parts) < 3:
        return ""
    page = root / "page" / parts[1].replace("-csv", "-page") / (Path(parts[2]).stem + ".json")
    try:
        return str(json.loads(page.read_text()).get("title", ""))
    except (OSError, ValueError, AttributeError):
        return ""


def table_span_examples(tsv: Path, root: Path, *, negatives: int = 1, seed: int = 0,
                        limit: int | None = None, holes: bool = False) -> list[SpanExample]:
    """Cell-picking examples from WikiTableQuestions ("id, utterance, context,
    targetValue"; ``root`` holds its csv/ and page/ folders). A question counts when its
    one answer is a whole cell of exactly one row and the question names that row (a word
    of its other cells); computed answers (counts, sums) never are. The positive is the
    rows around it, up to :data:`TABLE_WORDS` words, the row at a random place; a
    negative is as many rows of the same table without the answer, those sharing most
    words with the question; with ``holes``, also the positive's rows without the
    answer's row."""
    from ragctl.index.ingest import sheet_lines

    rng = random.Random(seed)
    tables: dict[str, list[str]] = {}
    with tsv.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if limit is not None and limit < len(rows):
        rows = rng.sample(rows, limit)
    out: list[SpanExample] = []
    for row in rows:
        answer = row["targetValue"].replace("\\n", " ").strip()
        if "|" in answer or not answer:
            continue
        ctx = row["context"]
        if ctx not in tables:
            try:
                with (root / ctx).open(newline="", encoding="utf-8", errors="replace") as t:
                    tables[ctx] = sheet_lines([r for r in csv.reader(t)])
            except (OSError, csv.Error):
                tables[ctx] = []
        lines = tables[ctx]
        hits = [(i, a) for i, line in enumerate(lines) for a in _cell_at(line, answer)]
        if len(hits) != 1:
            continue
        i, at = hits[0]
        heads = {w for line in lines[:3] for part in line.split("; ")
                 for w in content_words(part.split(": ", 1)[0]) if ": " in part}
        q = set(content_words(row["utterance"]))
        named = {w for w in set(content_words(lines[i])) - heads - set(content_words(answer))
                 if len(w) > 2 and not w.isdigit()}
        if not q & named or _compares(row["utterance"]):
            continue
        title = _page_title(root, ctx)
        before, after = _window(lines, i, rng)
        text = " ".join(lines[before:after])
        start = sum(len(lines[k]) + 1 for k in range(before, i)) + at
        prefix = f"{title}. " if title else ""
        context = prefix + text
        out.append(SpanExample(row["id"], row["utterance"], context, len(prefix) + start,
                               len(prefix) + start + len(answer), (answer,), "wtq-" + ctx))
        if holes:  # the same rows without the answer's: the row it names is not there
            kept = [lines[k] for k in range(before, after) if k != i]
            hole = " ".join(kept)
            if kept and answer not in hole:
                out.append(SpanExample(f"{row['id']}-neghole", row["utterance"],
                                       prefix + hole, -1, -1, (answer,), "wtq-" + ctx))
        size = after - before
        windows = [(len(q & set(content_words(" ".join(lines[j:j + size])))), rng.random(), j)
                   for j in range(0, max(0, len(lines) - size) + 1)
                   if not (j <= i < j + size) and answer not in " ".join(lines[j:j + size])]
        for k, (_, _, j) in enumerate(sorted(windows, reverse=True)[:negatives]):
            out.append(SpanExample(f"{row['id']}-neg{k}", row["utterance"],
                                   prefix + " ".join(lines[j:j + size]), -1, -1, (answer,),
                                   "wtq-" + ctx))
    return out


# words of a question that asks to compare rows, which a reader of a few rows cannot do
COMPARING = frozenset("""most least more less fewer higher lower larger smaller greater
bigger longer shorter older newer earlier later first last top bottom before after next
previous above below difference total average combined""".split())


def _compares(question: str) -> bool:
    words = re.findall(r"[a-z]+", question.lower())
    return " or " in f" {question.lower()} " or any(
        w in COMPARING or (w.endswith("est") and len(w) > 5) for w in words)


def _window(lines: Sequence[str], i: int, rng: random.Random) -> tuple[int, int]:
    """Rows [before, after) around row ``i``, up to :data:`TABLE_WORDS` words, row ``i``
    at a random place among them."""
    before, after = i, i + 1
    words = len(lines[i].split())
    want_before = rng.randint(0, 8)
    grew = True
    while grew:
        grew = False
        for side in (0, 1):
            if side == 0 and before > 0 and i - before < want_before:
                n = len(lines[before - 1].split())
                if words + n <= TABLE_WORDS:
                    before, words, grew = before - 1, words + n, True
            elif side == 1 and after < len(lines):
                n = len(lines[after].split())
                if words + n <= TABLE_WORDS:
                    after, words, grew = after + 1, words + n, True
    return before, after


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
                                 holes=opts.holes, seed=opts.seed, limit=opts.limit,
                                 tables=Path(opts.tables) if opts.tables else None)
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
    tables = opts.get("tables")
    examples = span_examples(paths, split=opts.get("split", "dev"), negatives=0, seed=seed,
                             limit=n, tables=Path(tables) if tables else None)
    return [f"{ex.question} {ex.context}" for ex in examples]
