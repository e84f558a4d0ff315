"""``ragctl eval``: the seeds' tables on real data, through ragctl's own pipeline.

The dataset's passages are written out one Markdown file each and indexed with the
normal indexer (reused when dataset, split and settings are unchanged); every question
then goes through :class:`~ragctl.ask.pipeline.Pipeline` — no second code path. SILVER mode
is the same pipeline with a filter that keeps the StrInc silver sentence (FilCo §2.2).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragctl.ask.pipeline import AskOptions, LongOptions, Pipeline
from ragctl.config import Settings, home_dir
from ragctl.eval.datasets import Dataset, Example
from ragctl.index.indexer import Indexer
from ragctl.models.backends import ContextFilter
from ragctl.records import Sentence
from ragctl.store.collection import Collection
from ragctl.text import contains_answer, exact_match, max_f1, normalize_answer, tokens, unigram_f1

# "answer": ask's default (a span, a quote, yes/no); the others give the generator the
# FULL passages, the reranked passages (PSG), the FILCO-filtered sentences, or the StrInc
# silver sentence (FilCo's comparison)
MODES = ("answer", "full", "passages", "filtered", "silver")
THRESHOLDS = tuple(round(x, 2) for x in np.arange(0.5, 0.91, 0.05))


@dataclass(frozen=True)
class EvalOptions:
    limit: int | None = None
    seed: int = 0
    modes: tuple[str, ...] = MODES
    generate: bool = True
    long_words: int | None = None  # also score `ask --long` within this word limit


@dataclass
class EvalReport:
    dataset: str
    split: str
    examples: int
    index: str
    settings: dict[str, Any] = field(default_factory=dict)
    retrieval: dict[str, float] = field(default_factory=dict)
    relevance: dict[str, float] = field(default_factory=dict)
    no_answer: dict[str, Any] = field(default_factory=dict)
    modes: dict[str, dict[str, float]] = field(default_factory=dict)
    filter: dict[str, float] = field(default_factory=dict)
    long: dict[str, float] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class SilverFilter(ContextFilter):
    """StrInc: the first sentence, in passage rank order, that contains an answer."""

    name = "silver-strinc"

    def __init__(self) -> None:
        self.answers: Sequence[str] = ()

    def score(self, question: str, sentences: Sequence[Sentence]) -> np.ndarray:
        scores = np.zeros(len(sentences), dtype=np.float32)
        for i, s in enumerate(sentences):
            if contains_answer(s.text, self.answers):
                scores[i] = 1.0
                break
        return scores


def index_dataset(ds: Dataset, settings: Settings) -> str:
    """Write the passages out and index them; returns the index name."""
    ident = json.dumps([ds.name, ds.split, len(ds.passages),
                        ds.passages[0].id if ds.passages else "", settings.embedder,
                        settings.chunk_words])
    key = hashlib.sha1(ident.encode()).hexdigest()[:10]
    name = re.sub(r"[^A-Za-z0-9_.-]", "-", f"eval-{ds.name}-{ds.split}-{key}")[:64]
    corpus = home_dir() / "eval" / name
    corpus.mkdir(parents=True, exist_ok=True)
    for p in ds.passages:
        f = corpus / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', p.id)}.md"
        if not f.exists():
            title = " ".join(p.title.split())
            f.write_text((f"# {title}\n\n" if title else "") + p.text.strip() + "\n")
    with Collection.open(settings.replace(index=name), create=True) as c:
        c.lock()
        Indexer(c).run([corpus])
    return name


def _doc_id(path: str) -> str:
    return Path(path).stem


def _hit(ex: Example, text: str, path: str) -> bool:
    if ex.answers:
        return contains_answer(text, ex.answers)
    safe = {re.sub(r"[^A-Za-z0-9_.-]", "_", g) for g in ex.gold_passages}
    return _doc_id(path) in safe


def _recall(flags: Sequence[bool], k: int) -> float:
    return float(any(flags[:k]))


def answer_precision(context: str, answers: Sequence[str]) -> float:
    """Unigram precision of the gold answer in the context: answer tokens / context tokens."""
    ctx = tokens(context)
    if not ctx or not answers:
        return 0.0
    best = 0.0
    for a in answers:
        gold = set(tokens(a))
        best = max(best, sum(t in gold for t in ctx) / len(ctx))
    return best


def threshold_table(best: Sequence[float], unanswerable: Sequence[bool],
                    thresholds: Sequence[float]) -> list[dict[str, float]]:
    """'No answer in the top-k' classification by thresholding the best relevance."""
    b, u = np.asarray(best), np.asarray(unanswerable, dtype=bool)
    rows = []
    for t in thresholds:
        pred = b < t
        tp, fp, fn = int(np.sum(pred & u)), int(np.sum(pred & ~u)), int(np.sum(~pred & u))
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        rows.append({"threshold": float(t), "precision": p, "recall": r, "f1": f1,
                     "accuracy": float(np.mean(pred == u)) if len(u) else 0.0})
    return rows


def evaluate(ds: Dataset, settings: Settings, options: EvalOptions, *,
             progress: Callable[[int, int], None] | None = None) -> EvalReport:
    started = time.perf_counter()
    index = index_dataset(ds, settings)
    examples = list(ds.examples)
    if options.limit is not None and options.limit < len(examples):
        examples = random.Random(options.seed).sample(examples, options.limit)
    has_answers = any(ex.answers for ex in examples)
    modes = [m for m in options.modes if has_answers and options.generate]
    rep = EvalReport(ds.name, ds.split, len(examples), index, settings={
        "embedder": settings.embedder, "generator": settings.generator,
        "relevance": settings.relevance, "filter": settings.context_filter,
        "top_n": settings.top_n, "top_k": settings.top_k, "re_threshold": settings.re_threshold,
        "filter_top_m": settings.filter_top_m, "seed": options.seed,
        "long_words": options.long_words})
    rep.timings["index_s"] = time.perf_counter() - started
    ret: dict[str, list[float]] = {f"recall@{k}": [] for k in (1, 5, 20)}
    rel: dict[str, list[float]] = {f"recall@{k}": [] for k in (1, 5)}
    best_re: list[float] = []
    no_answer: list[bool] = []
    per_mode: dict[str, dict[str, list[float]]] = {m: {} for m in modes}
    fstats: dict[str, list[float]] = {}
    lstats: dict[str, list[float]] = {}
    silver = SilverFilter()
    s_ind = settings.replace(index=index)
    with Collection.open(s_ind) as c, Pipeline(c) as pipe:
        threshold = pipe.re_threshold(settings.re_threshold)
        rep.settings["re_threshold"] = threshold
        silver_pipe = Pipeline(c, relevance=pipe.relevance, context_filter=silver,
                               generator=pipe.generator if modes else None,
                               checker=pipe.checker if modes else None)
        for n, ex in enumerate(examples, start=1):
            base = AskOptions.from_settings(s_ind, abstain=False, free=True)
            a0 = pipe.ask(ex.question, _replace(base, context="filtered"),) if modes else None
            hits = a0.passages if a0 else _rank_only(pipe, ex.question, s_ind)
            by_retrieval = sorted(hits, key=lambda p: p.retrieval_rank)
            flags = [_hit(ex, p.text, p.path) for p in by_retrieval]
            for k in (1, 5, 20):
                ret[f"recall@{k}"].append(_recall(flags, k))
            by_re = sorted(hits, key=lambda p: -p.relevance)
            rflags = [_hit(ex, p.text, p.path) for p in by_re]
            for k in (1, 5):
                rel[f"recall@{k}"].append(_recall(rflags, k))
            best_re.append(max((p.relevance for p in by_re[:settings.top_k]), default=0.0))
            no_answer.append(not ex.answerable or not any(rflags[:settings.top_k]))
            for mode in modes:
                if mode == "filtered":
                    a = a0
                elif mode == "answer":
                    a = pipe.ask(ex.question, _replace(base, free=False))
                elif mode == "silver":
                    silver.answers = ex.answers
                    a = silver_pipe.ask(ex.question, _replace(base, context="filtered",
                                                              filter_top_m=1))
                else:
                    a = pipe.ask(ex.question, _replace(base, context=mode))
                assert a is not None
                _score(per_mode[mode], ex, a)
                if mode == "filtered":
                    _filter_stats(fstats, ex, a)
            if a0 is not None:
                fstats.setdefault("abstain_at_default", []).append(
                    float(best_re[-1] < threshold))
            if options.long_words and ex.supporting and options.generate:
                la = pipe.ask_long(ex.question, LongOptions(
                    words=options.long_words, abstain=False, top_n=settings.top_n))
                recall, support = supporting_fact_recall(
                    la.answer, {c.number: c.text for c in la.sources}, ex.supporting,
                    pipe.checker)
                lstats.setdefault("supporting_fact_recall", []).append(recall)
                lstats.setdefault("citation_support", []).append(support)
                lstats.setdefault("words", []).append(float(la.words))
            if progress:
                progress(n, len(examples))
    rep.retrieval = {k: _mean(v) for k, v in ret.items()}
    rep.relevance = {k: _mean(v) for k, v in rel.items()}
    table = threshold_table(best_re, no_answer, (*THRESHOLDS, threshold))
    rep.no_answer = {"unanswerable_share": _mean([float(x) for x in no_answer]),
                     "by_threshold": table,
                     "best": max(table[:-1], key=lambda r: r["f1"]) if table[:-1] else {},
                     "at_default": table[-1]}
    rep.modes = {m: {k: _mean(v) for k, v in d.items()} for m, d in per_mode.items()}
    rep.filter = {k: _mean(v) for k, v in fstats.items()}
    rep.long = {k: _mean(v) for k, v in lstats.items()}
    rep.timings["total_s"] = time.perf_counter() - started
    return rep


def _replace(opts: AskOptions, **kw: Any) -> AskOptions:
    from dataclasses import replace

    return replace(opts, **kw)


def _rank_only(pipe: Pipeline, question: str, settings: Settings) -> list[Any]:
    """Retrieval and relevance without generation (datasets without answers)."""
    return pipe.rank(question, top_n=settings.top_n)


def _mean(xs: Sequence[float]) -> float:
    return float(sum(xs) / len(xs)) if xs else float("nan")


def _score(acc: dict[str, list[float]], ex: Example, a: Any) -> None:
    text = a.answer_text
    context = " ".join(c.text for c in a.context)
    acc.setdefault("em", []).append(exact_match(text, ex.answers))
    acc.setdefault("f1", []).append(max_f1(text, ex.answers))
    acc.setdefault("accuracy", []).append(float(contains_answer(text, ex.answers)))
    acc.setdefault("context_tokens", []).append(float(a.tokens.get("context", 0)))
    acc.setdefault("full_tokens", []).append(float(a.tokens.get("full_context", 0)))
    acc.setdefault("answer_precision", []).append(answer_precision(context, ex.answers))
    acc.setdefault("answer_in_context", []).append(float(contains_answer(context, ex.answers)))
    acc.setdefault("citation_support", []).append(a.support_rate)


def _same(a: str, b: str) -> bool:
    x, y = normalize_answer(a), normalize_answer(b)
    return bool(x and y) and (x in y or y in x or unigram_f1(x, y) >= 0.6)


def supporting_fact_recall(answer: str, sources: dict[int, str], golds: Sequence[str],
                           checker: Any, *, threshold: float = 0.5) -> tuple[float, float]:
    """(supporting-fact recall, citation support rate) of a cited answer.

    A gold sentence is recalled when an answer sentence cites a source that matches it
    and that source supports the answer sentence: the answer includes it and cites it.
    """
    from ragctl.ask.verify import split_answer, strip_citations

    found: set[int] = set()
    supported = 0
    parts = split_answer(answer)
    for raw in parts:
        claim, numbers = strip_citations(raw)
        cited = [sources[n] for n in numbers if n in sources]
        if not claim or not cited:
            continue
        sup = checker.support(claim, cited)
        if float(sup.max()) >= threshold:
            supported += 1
        for text, value in zip(cited, sup, strict=True):
            if value >= threshold:
                found.update(i for i, g in enumerate(golds) if _same(text, g))
    recall = len(found) / len(golds) if golds else 0.0
    return recall, (supported / len(parts) if parts else 0.0)


def _filter_stats(acc: dict[str, list[float]], ex: Example, a: Any) -> None:
    kept = [c.text for c in a.context]
    if ex.supporting:
        hit_gold = [any(_same(k, g) for k in kept) for g in ex.supporting]
        good = [any(_same(k, g) for g in ex.supporting) for k in kept]
        acc.setdefault("supporting_recall", []).append(_mean([float(x) for x in hit_gold]))
        acc.setdefault("supporting_precision", []).append(_mean([float(x) for x in good]))
    if ex.answers:
        all_sents = [s["text"] for s in a.filtered]
        silver = next((s for s in all_sents if contains_answer(s, ex.answers)), None)
        if silver is not None:
            acc.setdefault("silver_recall", []).append(float(silver in kept))
            acc.setdefault("silver_precision", []).append(
                _mean([float(k == silver) for k in kept]))


def render_report(rep: EvalReport) -> str:
    lines = [f"# ragctl eval: {rep.dataset} ({rep.split} split, {rep.examples} examples)", "",
             "Settings: " + ", ".join(f"{k}={v}" for k, v in rep.settings.items()), "",
             "## Retrieval (FilCo Table 2) and relevance estimator (RE-RAG Table 2)", "",
             "| ranking | " + " | ".join(rep.retrieval) + " |",
             "|---|" + "---|" * len(rep.retrieval),
             "| retriever | " + " | ".join(f"{100 * v:.1f}" for v in rep.retrieval.values())
             + " |",
             "| relevance estimator | " + " | ".join(
                 f"{100 * rep.relevance.get(k, float('nan')):.1f}" for k in rep.retrieval)
             + " |", ""]
    if rep.no_answer:
        b = rep.no_answer.get("best", {})
        d = rep.no_answer.get("at_default", {})
        lines += ["## No answer in the top-k (RE-RAG Table 4)", "",
                  f"Share without an answer in the top-k: "
                  f"{100 * rep.no_answer['unanswerable_share']:.1f}%", "",
                  "| threshold | precision | recall | F1 |", "|---|---|---|---|"]
        for row in (b, d):
            if row:
                lines.append(f"| {row['threshold']:.2f} | {100 * row['precision']:.1f} | "
                             f"{100 * row['recall']:.1f} | {100 * row['f1']:.1f} |")
        lines.append("")
    if rep.modes:
        lines += ["## Answers by context (FilCo Figure 4, Figure 6, Table 3)", "",
                  "| mode | EM | F1 | accuracy | context tokens | answer precision | "
                  "citation support |", "|---|---|---|---|---|---|---|"]
        for m, v in rep.modes.items():
            lines.append(f"| {m.upper()} | {100 * v['em']:.1f} | {100 * v['f1']:.1f} | "
                         f"{100 * v['accuracy']:.1f} | {v['context_tokens']:.0f} | "
                         f"{100 * v['answer_precision']:.1f} | "
                         f"{100 * v['citation_support']:.1f} |")
        lines.append("")
    if rep.filter:
        lines += ["## Filter", "", "| metric | value |", "|---|---|"]
        lines += [f"| {k} | {100 * v:.1f} |" for k, v in rep.filter.items()]
        lines.append("")
    if rep.long:
        lines += [f"## Long answers (ask --long, {rep.settings.get('long_words')} words)", "",
                  "| supporting-fact recall | citation support | words |", "|---|---|---|",
                  f"| {100 * rep.long['supporting_fact_recall']:.1f} | "
                  f"{100 * rep.long['citation_support']:.1f} | {rep.long['words']:.0f} |", ""]
    lines.append(f"Time: {rep.timings.get('total_s', 0):.0f} s "
                 f"(indexing {rep.timings.get('index_s', 0):.0f} s).")
    return "\n".join(lines) + "\n"


def save_report(rep: EvalReport, out: Path) -> None:
    """``report.md`` and ``report.json`` in the folder ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(render_report(rep))
    (out / "report.json").write_text(json.dumps(rep.to_dict(), indent=2))
