"""``ask``: retrieve → relevance estimator → abstain? → context filter → generate → verify.

Each stage is a module of its own; this one only calls them in order, times them and
collects what they did into an :class:`Answer`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from .collection import Collection
from .config import Settings
from .errors import RagctlError
from .filter import ContextFilter, ScoredSentence, SentenceRef, SimilarityFilter
from .generate import LlamaGenerator, build_prompt, resolve_generator
from .relevance import RelevanceEstimator, SimilarityRelevance, re_weights
from .retrieve import Hit, Retriever
from .text import normalize_answer
from .verify import (
    AnswerSentence,
    Citation,
    LexicalEmbeddingSupport,
    SupportChecker,
    citation_support_rate,
    strip_citations,
    verify,
)

ContextMode = Literal["full", "passages", "filtered"]
CONTEXT_MODES: tuple[ContextMode, ...] = ("full", "passages", "filtered")
MAX_QUESTION_CHARS = 2000


@dataclass(frozen=True)
class AskOptions:
    top_n: int = 20
    top_k: int = 5
    context: ContextMode = "filtered"
    abstain: bool = True
    re_threshold: float | None = None  # None: the relevance estimator's own
    filter_threshold: float = 0.3
    filter_top_m: int = 1
    max_tokens: int = 48
    strict: bool = False
    marginalize: bool = False
    support_threshold: float = 0.5

    @classmethod
    def from_settings(cls, s: Settings, **overrides: Any) -> AskOptions:
        base = cls(top_n=s.top_n, top_k=s.top_k, re_threshold=s.re_threshold,
                   filter_threshold=s.filter_threshold, filter_top_m=s.filter_top_m,
                   max_tokens=s.max_answer_tokens)
        from dataclasses import replace

        return replace(base, **{k: v for k, v in overrides.items() if v is not None})


@dataclass(frozen=True)
class PassageScore:
    passage_id: int
    path: str
    title: str
    place: str
    retrieval_rank: int
    retrieval_score: float
    similarity: float | None
    relevance: float
    kept: bool
    text: str


@dataclass
class Answer:
    question: str
    answer: str = ""
    raw_answer: str = ""
    abstained: bool = False
    abstain_reason: str | None = None
    context_mode: str = "filtered"
    sentences: list[AnswerSentence] = field(default_factory=list)
    sources: list[Citation] = field(default_factory=list)
    context: list[Citation] = field(default_factory=list)
    passages: list[PassageScore] = field(default_factory=list)
    filtered: list[dict[str, Any]] = field(default_factory=list)
    removed_citations: list[int] = field(default_factory=list)
    unsupported_citations: list[int] = field(default_factory=list)
    tokens: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)
    confidence: float | None = None
    candidates: list[dict[str, Any]] = field(default_factory=list)

    @property
    def answer_text(self) -> str:
        """What the generator answered, without citation markers."""
        return strip_citations(self.raw_answer)[0]

    @property
    def support_rate(self) -> float:
        if not self.sentences:
            return 0.0
        return sum(s.supported for s in self.sentences) / len(self.sentences)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["support_rate"] = round(self.support_rate, 4)
        d["schema"] = "ragctl.answer/1"
        return d


def _default_unavailable(name: str, stage: str) -> bool:
    """True, with a one-line warning, when ``name`` is the shipped default for ``stage`` but
    cannot run here (an install without the models/ folder or without ctranslate2): ask
    then uses the similarity fallback instead of failing."""
    import importlib.util

    from .models import find_model

    if name != getattr(Settings(), stage):
        return False
    missing = ("not installed" if find_model(name) is None else
               "unusable without ctranslate2 (pip install 'ragctl[generate]')"
               if importlib.util.find_spec("ctranslate2") is None else "")
    if not missing:
        return False
    from .display import stderr

    stderr.print(f"[yellow]warning:[/] the default {stage.replace('_', ' ')} model {name!r} "
                 f"is {missing}; using the similarity fallback (see: ragctl models)",
                 soft_wrap=True)
    return True


def load_relevance(name: str, settings: Settings) -> RelevanceEstimator:
    if name == "similarity" or _default_unavailable(name, "relevance"):
        return SimilarityRelevance()
    from .models import model_dir
    from .relevance import CT2Relevance

    return CT2Relevance(model_dir(name), device=settings.device,
                        compute_type=settings.compute_type)


def load_filter(name: str, settings: Settings, retriever: Retriever) -> ContextFilter:
    if name == "similarity" or _default_unavailable(name, "context_filter"):
        return SimilarityFilter(retriever.embedder)
    from .filter import CT2Filter
    from .models import model_dir

    return CT2Filter(model_dir(name), device=settings.device,
                     compute_type=settings.compute_type)


class Pipeline:
    """Holds the loaded stages for one index; ``ask`` may be called many times."""

    def __init__(self, collection: Collection, *, relevance: RelevanceEstimator | None = None,
                 context_filter: ContextFilter | None = None,
                 generator: LlamaGenerator | None = None,
                 checker: SupportChecker | None = None) -> None:
        self.collection = collection
        self.settings = collection.settings
        self.retriever = Retriever(collection)
        self._relevance = relevance
        self._filter = context_filter
        self._generator = generator
        self._checker = checker

    def re_threshold(self, override: float | None = None) -> float:
        """The abstention threshold: ``override``, else the relevance estimator's own."""
        return override if override is not None else float(self.relevance.threshold)

    def _abstain_reason(self, best: float, abstain: bool, override: float | None) -> str | None:
        """Why ask declines to answer when the best relevance is ``best``, else None."""
        threshold = self.re_threshold(override)
        if not abstain or best >= threshold:
            return None
        return f"no passage reached the relevance threshold {threshold:.2f} (best {best:.2f})"

    # lazily loaded stages ------------------------------------------------------------
    @property
    def relevance(self) -> RelevanceEstimator:
        if self._relevance is None:
            self._relevance = load_relevance(self.settings.relevance, self.settings)
        return self._relevance

    @property
    def context_filter(self) -> ContextFilter:
        if self._filter is None:
            self._filter = load_filter(self.settings.context_filter, self.settings,
                                       self.retriever)
        return self._filter

    @property
    def generator(self) -> LlamaGenerator:
        if self._generator is None:
            name = self.settings.generator
            self._generator = LlamaGenerator(resolve_generator(name), name=name,
                                             n_ctx=self.settings.n_ctx)
        return self._generator

    @property
    def checker(self) -> SupportChecker:
        if self._checker is None:
            self._checker = LexicalEmbeddingSupport(self.retriever.embedder)
        return self._checker

    def load(self, *, generator: bool = True) -> float:
        """Load every stage now (models load lazily); returns the seconds it took."""
        t = time.perf_counter()
        _ = self.retriever.embedder, self.relevance, self.context_filter
        if generator:
            _ = self.generator
        return time.perf_counter() - t

    def close(self) -> None:
        for stage in (self._relevance, self._filter, self._generator):
            if stage is not None:
                stage.close()

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # stages --------------------------------------------------------------------------
    def sentences(self, hits: Sequence[Hit]) -> dict[int, list[SentenceRef]]:
        """The stored sentences of these passages, in document order."""
        by_id = {h.passage_id: h for h in hits}
        out: dict[int, list[SentenceRef]] = {h.passage_id: [] for h in hits}
        if not by_id:
            return out
        marks = ",".join("?" * len(by_id))
        rows = self.collection.store.db.execute(
            f"SELECT id, passage_id, seq, start_char, end_char, text FROM sentences "
            f"WHERE passage_id IN ({marks}) ORDER BY passage_id, seq", list(by_id)).fetchall()
        for sid, pid, seq, start, end, text in rows:
            h = by_id[pid]
            out[pid].append(SentenceRef(sid, pid, seq, h.path, h.title, h.place, start, end,
                                        text))
        return out

    def _retrieve_and_score(self, question: str, top_n: int, timings: dict[str, float]
                            ) -> tuple[list[Hit], np.ndarray]:
        """Load the stages, retrieve the top ``top_n`` passages and score their relevance."""
        timings["load"] = self.load(generator=True)
        t = time.perf_counter()
        hits = self.retriever.search(question, limit=top_n)
        timings["retrieve"] = time.perf_counter() - t
        t = time.perf_counter()
        probs = self.relevance.score(question, hits) if hits else np.zeros(0)
        timings["relevance"] = time.perf_counter() - t
        return hits, probs

    def ask(self, question: str, options: AskOptions | None = None, *,
            on_token: Callable[[str], None] | None = None) -> Answer:
        opts = options or AskOptions()
        question = _clean_question(question)
        if opts.context not in CONTEXT_MODES:
            raise RagctlError(f"unknown context mode {opts.context!r}; "
                              f"choose one of {', '.join(CONTEXT_MODES)}")
        ans = Answer(question=question, context_mode=opts.context)
        t_all = time.perf_counter()
        hits, probs = self._retrieve_and_score(question, opts.top_n, ans.timings)
        if opts.context == "full":
            kept_order = list(range(min(opts.top_k, len(hits))))
        else:
            kept_order = [int(i) for i in np.argsort(-probs, kind="stable")[:opts.top_k]]
        kept = [hits[i] for i in kept_order]
        kept_ids = {h.passage_id for h in kept}
        ans.passages = passage_scores(hits, probs, kept_ids)
        ans.passages.sort(key=lambda p: (not p.kept, -p.relevance if opts.context != "full"
                                         else p.retrieval_rank))
        ans.models = {"embedder": self.collection.embedder_name or "",
                      "relevance": self.relevance.name}

        best = float(max((probs[i] for i in kept_order), default=0.0))
        reason = self._abstain_reason(best, opts.abstain, opts.re_threshold)
        if reason is not None:
            ans.abstained, ans.abstain_reason = True, reason
            ans.timings["total"] = time.perf_counter() - t_all
            return ans

        t = time.perf_counter()
        per_passage = self.sentences(kept)
        all_sentences = [s for h in kept for s in per_passage[h.passage_id]]
        if opts.context == "filtered":
            scored = self.context_filter.select(
                question, all_sentences, threshold=opts.filter_threshold, top_m=opts.filter_top_m)
            ans.models["filter"] = self.context_filter.name
        else:
            scored = [ScoredSentence(s, 1.0, True) for s in all_sentences]
        ans.timings["filter"] = time.perf_counter() - t
        ans.filtered = [{"sentence_id": s.sentence.id, "passage_id": s.sentence.passage_id,
                         "text": s.sentence.text, "score": round(s.score, 4), "kept": s.kept}
                        for s in scored]
        context = [s.sentence for s in scored if s.kept]
        ans.context = [_citation(i, s) for i, s in enumerate(context, start=1)]

        gen = self.generator
        ans.models["generator"] = gen.name
        ans.tokens["full_context"] = gen.count_tokens(" ".join(h.text for h in kept))
        ans.tokens["context"] = gen.count_tokens(" ".join(s.text for s in context))
        t = time.perf_counter()
        if opts.marginalize:
            text = self._marginalize(question, kept, per_passage, probs[kept_order], ans, opts)
        else:
            prompt = build_prompt(question, [s.text for s in context])
            completion = gen.complete(prompt, max_tokens=opts.max_tokens, on_token=on_token)
            text = completion.text
            ans.tokens["prompt"] = completion.prompt_tokens
            ans.tokens["completion"] = completion.completion_tokens
            ans.timings["first_token"] = completion.first_token_seconds
            ans.timings["tokens_per_second"] = completion.tokens_per_second
        ans.timings["generate"] = time.perf_counter() - t

        ans.raw_answer = text.strip()
        t = time.perf_counter()
        checked = verify(text, context, self.checker, threshold=opts.support_threshold)
        ans.timings["verify"] = time.perf_counter() - t
        ans.removed_citations = checked.removed_citations
        ans.unsupported_citations = checked.unsupported_citations
        sentences = [s for s in checked.sentences if s.supported or not opts.strict]
        ans.sentences = sentences
        if opts.strict and not sentences:
            ans.abstained = True
            ans.abstain_reason = ("the generated answer was not supported by the sentences "
                                  "it was given (--strict)")
        ans.answer = " ".join(
            s.text + "".join(f" [{n}]" for n in s.citations) for s in sentences).strip()
        cited = sorted({n for s in sentences for n in s.citations})
        ans.sources = [ans.context[n - 1] for n in cited]
        ans.timings["total"] = time.perf_counter() - t_all
        return ans

    def ask_long(self, question: str, options: LongOptions | None = None) -> LongAnswer:
        """GINGER: nuggets → facets → ranked facets → cited summaries → verify (→ fluency)."""
        from .facets import Facet, bm25_scores, cluster
        from .longform import fluency_pass, render, summarize_facets
        from .nuggets import mark_span, nuggets_from_filter

        opts = options or LongOptions()
        question = _clean_question(question)
        ans = LongAnswer(question=question)
        t_all = time.perf_counter()
        hits, probs = self._retrieve_and_score(question, opts.top_n, ans.timings)
        relevance = {h.passage_id: float(p) for h, p in zip(hits, probs, strict=True)}
        ans.passages = passage_scores(hits, probs)
        ans.models = {"embedder": self.collection.embedder_name or "",
                      "relevance": self.relevance.name, "filter": self.context_filter.name,
                      "generator": self.generator.name}
        best = float(probs.max()) if len(probs) else 0.0
        reason = self._abstain_reason(best, opts.abstain, opts.re_threshold)
        if reason is not None:
            ans.abstained, ans.abstain_reason = True, reason
            return ans

        t = time.perf_counter()
        per_passage = self.sentences(hits)
        sentences = [s for h in hits for s in per_passage[h.passage_id]]
        scored = self.context_filter.select(question, sentences,
                                            threshold=opts.filter_threshold,
                                            top_m=opts.max_nuggets)
        nuggets = nuggets_from_filter(scored, relevance, limit=opts.max_nuggets)
        if opts.mark_spans:
            nuggets = [mark_span(self.generator, question, n) for n in nuggets]
        ans.timings["nuggets"] = time.perf_counter() - t

        t = time.perf_counter()
        embedder = self.retriever.embedder
        vecs = embedder.embed([n.text for n in nuggets]) if nuggets else np.zeros((0, 1))
        groups = cluster(vecs, threshold=opts.cluster_threshold)
        facets = [Facet(tuple(nuggets[i] for i in g)) for g in groups]
        ans.timings["cluster"] = time.perf_counter() - t

        t = time.perf_counter()
        if facets and opts.ranking == "bm25":
            fscores = bm25_scores(question, [f.text for f in facets])
        elif facets:
            joined = [f.text for f in facets]
            jv = embedder.embed([question, *joined])
            fake = [Hit(-1, 0.0, float(jv[i + 1] @ jv[0]), "", "", "", 0, 0, text)
                    for i, text in enumerate(joined)]
            fscores = self.relevance.score(question, fake)
        else:
            fscores = np.zeros(0)
        order = np.argsort(-np.asarray(fscores), kind="stable")
        ranked = [Facet(facets[i].nuggets, float(fscores[i])) for i in order]
        ans.timings["rank"] = time.perf_counter() - t

        n_facets = max(opts.facets, opts.words // 35)
        t = time.perf_counter()
        summaries = summarize_facets(
            self.generator, self.checker, question, ranked[:n_facets],
            {n.id: n.id + 1 for n in nuggets}, words=opts.words,
            support_threshold=opts.support_threshold)
        ans.timings["summarize"] = time.perf_counter() - t
        # number the sources in order of first citation
        renumber: dict[int, int] = {}
        for s in summaries:
            for old in s.citations:
                renumber.setdefault(old, len(renumber) + 1)
            s.citations = [renumber[o] for o in s.citations]
        by_old = {n.id + 1: n for n in nuggets}
        ans.sources = [_citation(new, by_old[old].sentence) for old, new in renumber.items()]
        text = render(summaries)
        if opts.fluent and text:
            t = time.perf_counter()
            rewritten, why = fluency_pass(self.generator, text)
            ans.fluent, ans.fluency_rejected = why is None, why
            text = rewritten
            ans.timings["fluency"] = time.perf_counter() - t
        ans.answer = text
        ans.words = len(strip_citations(text)[0].split())
        ans.fallbacks = sum(s.fallback for s in summaries)
        ans.support_rate = citation_support_rate(text, ans.sources, self.checker,
                                                 threshold=opts.support_threshold)
        ans.facets = [asdict(s) for s in summaries]
        ans.nuggets = [{"id": n.id, "text": n.text, "score": round(n.score, 4),
                        "sentence_id": n.sentence.id, "path": n.sentence.path,
                        "place": n.sentence.place, "start_char": n.sentence.start_char,
                        "end_char": n.sentence.end_char, "span": n.span,
                        "facet": next((k for k, f in enumerate(ranked)
                                       if any(m.id == n.id for m in f.nuggets)), None)}
                       for n in nuggets]
        ans.timings["total"] = time.perf_counter() - t_all
        return ans

    def _marginalize(self, question: str, kept: Sequence[Hit],
                     per_passage: dict[int, list[SentenceRef]], probs: np.ndarray, ans: Answer,
                     opts: AskOptions) -> str:
        """RE-RAG eq. 6: P(y) = Σ_j P_RE(q, c_j) · P_G(y | q, c_j) over the kept passages."""
        gen = self.generator
        prompts = [build_prompt(question, [s.text for s in per_passage[h.passage_id]])
                   for h in kept]
        weights = re_weights([float(p) for p in probs])
        candidates: dict[str, str] = {}
        for prompt in prompts:
            text, _ = strip_citations(gen.complete(prompt, max_tokens=opts.max_tokens).text)
            key = normalize_answer(text)
            if key and key not in candidates:
                candidates[key] = text
        if not candidates:
            return ""
        scored = []
        for text in candidates.values():
            p = sum(float(w) * float(np.exp(gen.logprob(prompt, " " + text)))
                    for w, prompt in zip(weights, prompts, strict=True))
            scored.append((p, text))
        scored.sort(reverse=True)
        total = sum(p for p, _ in scored) or 1.0
        ans.candidates = [{"answer": t, "probability": p, "share": p / total} for p, t in scored]
        ans.confidence = scored[0][0]
        return scored[0][1]


@dataclass(frozen=True)
class LongOptions:
    top_n: int = 20
    facets: int = 3
    words: int = 150
    cluster_threshold: float = 0.35
    ranking: Literal["relevance", "bm25"] = "relevance"
    fluent: bool = False
    mark_spans: bool = False
    max_nuggets: int = 30
    abstain: bool = True
    re_threshold: float | None = None
    filter_threshold: float = 0.3
    support_threshold: float = 0.5


@dataclass
class LongAnswer:
    question: str
    answer: str = ""
    abstained: bool = False
    abstain_reason: str | None = None
    facets: list[dict[str, Any]] = field(default_factory=list)
    nuggets: list[dict[str, Any]] = field(default_factory=list)
    sources: list[Citation] = field(default_factory=list)
    passages: list[PassageScore] = field(default_factory=list)
    fluent: bool = False
    fluency_rejected: str | None = None
    fallbacks: int = 0
    words: int = 0
    support_rate: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["schema"] = "ragctl.long-answer/1"
        return d


def passage_scores(hits: Sequence[Hit], probs: np.ndarray,
                   kept: set[int] | None = None) -> list[PassageScore]:
    """Retrieved passages in retrieval order with their relevance; ``kept``: ids kept
    (all when None)."""
    return [PassageScore(h.passage_id, h.path, h.title, h.place, rank, h.score, h.similarity,
                         round(float(probs[rank - 1]), 4),
                         kept is None or h.passage_id in kept, h.text)
            for rank, h in enumerate(hits, start=1)]


def _clean_question(question: str) -> str:
    question = " ".join(question.split())
    if not question:
        raise RagctlError("the question is empty")
    if len(question) > MAX_QUESTION_CHARS:
        raise RagctlError(f"the question is {len(question)} characters long; "
                          f"keep it under {MAX_QUESTION_CHARS}")
    return question


def _citation(number: int, s: SentenceRef) -> Citation:
    return Citation(number, s.id, s.passage_id, s.path, s.title, s.place, s.start_char,
                    s.end_char, s.text)
