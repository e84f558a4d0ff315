"""The loaded stages of ``ask`` for one index, and what they find for one question.

:class:`LoadedStages` holds the collection, the retriever and the models (relevance
estimator, context filter, span reader, generator, support checker), loaded lazily through
the registry (:mod:`ragctl.models`) and loaded once; it is handed to whoever needs them —
the answering strategies (:mod:`~ragctl.ask.span`, :mod:`~ragctl.ask.quote`,
:mod:`~ragctl.ask.yesno`, :mod:`~ragctl.ask.choice`, :mod:`~ragctl.ask.fields`,
:mod:`~ragctl.ask.free`, :mod:`~ragctl.ask.longform`), which never call back into the
pipeline. It also runs the stages that come before an answer: retrieval and relevance
(:meth:`LoadedStages.passages`: the passages kept) and the context filter
(:meth:`LoadedStages.sentences`), which give the :class:`Evidence` a strategy answers from.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Self

import numpy as np

from ragctl.ask.documents import named_hits
from ragctl.ask.grounding import Grounding, ground, missing_reason
from ragctl.ask.question import QuestionType, question_type
from ragctl.ask.retrieve import Retriever
from ragctl.ask.rules import DEFAULT_ANSWERABILITY, with_identifier
from ragctl.ask.switches import fired, on
from ragctl.ask.verify import LexicalEmbeddingSupport
from ragctl.config import Settings
from ragctl.models import registry as models
from ragctl.models.backends import (
    ContextFilter,
    Entailment,
    Generator,
    RelevanceEstimator,
    SupportChecker,
)
from ragctl.models.filter import collapse_duplicates, split_long
from ragctl.models.kinds import KindModel
from ragctl.models.reader import Reader
from ragctl.models.tableops import OperationModel
from ragctl.records import Answer, Citation, Hit, PassageScore, ScoredSentence, Sentence
from ragctl.store.collection import Collection

ContextMode = Literal["full", "passages", "filtered"]
CONTEXT_MODES: tuple[ContextMode, ...] = ("full", "passages", "filtered")
# the first passages of BM25 and of the vector index that always reach the relevance
# estimator, whatever their fused rank (see retrieve.py)
KEEP_TOP = 2
_DEFAULTS = Settings()


@dataclass(frozen=True)
class AskOptions:
    top_n: int = _DEFAULTS.top_n
    top_k: int = _DEFAULTS.top_k
    context: ContextMode = "filtered"
    abstain: bool = True
    re_threshold: float | None = _DEFAULTS.re_threshold  # None: the estimator's own
    filter_threshold: float = _DEFAULTS.filter_threshold
    filter_top_m: int = _DEFAULTS.filter_top_m
    max_tokens: int = _DEFAULTS.max_answer_tokens
    strict: bool = False  # generated answers: unsupported sentences are always dropped
    marginalize: bool = False
    support_threshold: float = _DEFAULTS.support_threshold
    free: bool = False  # the generator's own words instead of a span or a quote
    reader_passages: int = _DEFAULTS.reader_passages
    answer_threshold: float | None = _DEFAULTS.answer_threshold  # None: the reader's own
    quote_sentences: int = _DEFAULTS.quote_sentences
    candidates: int = 5  # the spans considered, best first, that the answer lists
    rules_off: frozenset[str] = frozenset()  # rules of ragctl.ask.ruletable not applied

    @classmethod
    def from_settings(cls, s: Settings, **overrides: Any) -> AskOptions:
        """Options from the settings; ``overrides`` that are None are left to them."""
        base = cls(top_n=s.top_n, top_k=s.top_k, re_threshold=s.re_threshold,
                   filter_threshold=s.filter_threshold, filter_top_m=s.filter_top_m,
                   max_tokens=s.max_answer_tokens, support_threshold=s.support_threshold,
                   reader_passages=s.reader_passages, answer_threshold=s.answer_threshold,
                   quote_sentences=s.quote_sentences)
        return replace(base, **{k: v for k, v in overrides.items() if v is not None})


@dataclass
class Evidence:
    """What the stages found for one question: the passages retrieved (``hits``, with their
    relevance ``probs``), the order they were weighed in, those kept and the duplicates
    collapsed into them (``also``: passage id → the other files that hold it); then (from
    :meth:`LoadedStages.sentences`) the kept passages' sentences, the filter's scores of
    them and the sentences it kept (``context``)."""

    question: str
    hits: list[Hit]
    probs: np.ndarray
    order: list[int]
    kept_order: list[int]
    duplicates: dict[int, int]
    kept: list[Hit]
    relevance: dict[int, float]
    per_passage: dict[int, list[Sentence]] = field(default_factory=dict)
    scored: list[ScoredSentence] = field(default_factory=list)
    context: list[Sentence] = field(default_factory=list)
    also: dict[int, list[str]] = field(default_factory=dict)
    grounding: Grounding = field(default_factory=Grounding)  # the documents named
    reader: Reader | None = None  # the span reader, when a span, a quote or yes/no answers
    reason: str | None = None  # why no passage is relevant enough, if none is
    enough: bool = True  # False: no passage is relevant enough, and no span may tell
    # the sentences of passages retrieved but not kept, read once (:meth:`LoadedStages.
    # retrieved_sentences`)
    retrieved: dict[int, list[Sentence]] = field(default_factory=dict)


class LoadedStages:
    """Holds the loaded stages for one index.

    Stages load lazily through the registry; pass an instance to use another one."""

    def __init__(self, collection: Collection, *, relevance: RelevanceEstimator | None = None,
                 context_filter: ContextFilter | None = None,
                 generator: Generator | None = None,
                 checker: SupportChecker | None = None, reader: Reader | None = None,
                 nli: Entailment | None = None) -> None:
        self.collection = collection
        self.settings = collection.settings
        self.retriever = Retriever(collection)
        self._relevance = relevance
        self._filter = context_filter
        self._generator = generator
        self._checker = checker
        self._reader = reader
        self._reader_loaded = reader is not None
        self._nli = nli
        self._nli_loaded = nli is not None
        self._tableops: OperationModel | None = None
        self._tableops_loaded = False
        self._kinds: KindModel | None = None
        self._kinds_loaded = False

    # lazily loaded stages ------------------------------------------------------------
    @property
    def relevance(self) -> RelevanceEstimator:
        if self._relevance is None:
            self._relevance = models.load("relevance", self.settings.relevance, self.settings,
                                          embedder=self.retriever.embedder)
        return self._relevance

    @property
    def context_filter(self) -> ContextFilter:
        if self._filter is None:
            self._filter = models.load("filter", self.settings.context_filter, self.settings,
                                       embedder=self.retriever.embedder)
        return self._filter

    @property
    def generator(self) -> Generator:
        if self._generator is None:
            self._generator = models.load("generator", self.settings.generator, self.settings)
        return self._generator

    @property
    def reader(self) -> Reader | None:
        """The span reader, or None when there is none (the generator answers)."""
        if not self._reader_loaded:
            self._reader = models.load("reader", self.settings.reader, self.settings)
            self._reader_loaded = True
        return self._reader

    @property
    def nli(self) -> Entailment | None:
        """The entailment model, or None when there is none (yes/no by the words stated)."""
        if not self._nli_loaded:
            self._nli = models.load("nli", self.settings.nli, self.settings)
            self._nli_loaded = True
        return self._nli

    @property
    def tableops(self) -> OperationModel | None:
        """Which operation a question asks of a table (:mod:`ragctl.ask.compute`), or None
        (:meth:`_question_head`)."""
        if not self._tableops_loaded:
            self._tableops_loaded = True
            self._tableops = self._question_head("tableops", self.settings.tableops)
        return self._tableops

    @property
    def kinds(self) -> KindModel | None:
        """Whether a question wants a short answer or an explanation
        (:mod:`ragctl.models.kinds`), or None (:meth:`_question_head`)."""
        if not self._kinds_loaded:
            self._kinds_loaded = True
            self._kinds = self._question_head("kinds", self.settings.kinds)
        return self._kinds

    def _question_head(self, kind: str, name: str) -> Any:
        """The model of ``kind`` that reads a question's embedding, or None when there is
        none, or it was trained on another embedder's vectors than the index's."""
        model = models.load(kind, name, self.settings)
        return model if model is not None and model.embedder == self.collection.embedder_name \
            else None

    def question_type(self, question: str) -> QuestionType:
        """What kind of answer the question wants: its form (:func:`question_type`: a
        yes/no question, a choice, "how do I", "why", …), and for a question of no such
        form, the question-kind model's say: an explanation (quoted sentences) when it
        gives one at least its threshold's probability, else a short answer."""
        qtype = question_type(question)
        model = self.kinds
        if qtype.kind != "factoid" or model is None:
            return qtype
        p = model.explanatory(question, self.retriever.query_vector(question))
        return QuestionType("quote") if p >= model.threshold else qtype

    @property
    def checker(self) -> SupportChecker:
        if self._checker is None:
            self._checker = LexicalEmbeddingSupport(self.retriever.embedder)
        return self._checker

    def load(self, *, generator: bool = False) -> float:
        """Load the stages now (models load lazily; the generator only when asked: a
        span or quoted answer does not need it); returns the seconds it took."""
        t = time.perf_counter()
        _ = self.retriever.embedder, self.relevance, self.context_filter, self.reader
        if generator:
            _ = self.generator
        return time.perf_counter() - t

    def close(self) -> None:
        for stage in (self._relevance, self._filter, self._generator, self._reader, self._nli):
            if stage is not None:
                stage.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # shared steps --------------------------------------------------------------------
    def re_threshold(self, override: float | None = None) -> float:
        """The abstention threshold: ``override``, else the relevance estimator's own."""
        return override if override is not None else float(self.relevance.threshold)

    def answer_threshold(self, override: float | None = None) -> float:
        """Below this probability that the span answers, ask abstains: ``override``, else
        the reader's own (fitted on development questions)."""
        if override is not None:
            return override
        fitted = getattr(self.reader, "fitted", {}).get("answerability") or DEFAULT_ANSWERABILITY
        return float(fitted.get("threshold", DEFAULT_ANSWERABILITY["threshold"]))

    def abstain_reason(self, best: float, abstain: bool, override: float | None) -> str | None:
        """Why ask declines to answer when the best relevance is ``best``, else None."""
        threshold = self.re_threshold(override)
        if not abstain or best >= threshold:
            return None
        return f"no passage reached the relevance threshold {threshold:.2f} (best {best:.2f})"

    def retrieve_and_score(self, question: str, top_n: int, timings: dict[str, float]
                           ) -> tuple[list[Hit], np.ndarray, Grounding]:
        """Load the stages, retrieve the top ``top_n`` passages, keep those of the
        documents that name what the question names (:mod:`~ragctl.ask.grounding`) and
        score their relevance."""
        timings["load"] = self.load()
        t = time.perf_counter()
        hits = self.retriever.search(question, limit=top_n, keep_top=KEEP_TOP)
        hits = [*hits, *named_hits(self.collection, question, hits)]
        grounding = Grounding()
        if on("grounding"):
            grounding = ground(self.collection.store, question, hits)
            if not grounding.missing and grounding.applies:
                grounded = grounding.restrict(hits, self.collection.store)
                if [h.passage_id for h in grounded] != [h.passage_id for h in hits]:
                    fired("grounding")
                hits = grounded
            elif grounding.missing:
                fired("grounding")
        timings["retrieve"] = time.perf_counter() - t
        t = time.perf_counter()
        probs = self.relevance.score(question, hits) if hits else np.zeros(0)
        timings["relevance"] = time.perf_counter() - t
        return hits, probs, grounding

    @staticmethod
    def passage_scores(hits: Sequence[Hit], probs: np.ndarray, kept: set[int] | None = None,
                       duplicate_of: dict[int, int] | None = None) -> list[PassageScore]:
        """Retrieved passages in retrieval order with their relevance; ``kept``: ids kept
        (all when None); ``duplicate_of``: id → the kept passage it repeats."""
        dups = duplicate_of or {}
        return [PassageScore(passage_id=h.passage_id, retrieval_rank=rank,
                             retrieval_score=h.score, similarity=h.similarity,
                             relevance=round(float(probs[rank - 1]), 4),
                             kept=kept is None or h.passage_id in kept,
                             duplicate_of=dups.get(h.passage_id), **h.span())
                for rank, h in enumerate(hits, start=1)]

    def rank(self, question: str, *, top_n: int) -> list[PassageScore]:
        """Retrieval and relevance alone, in retrieval order (no generation)."""
        hits = self.retriever.search(question, limit=top_n)
        return self.passage_scores(hits, self.relevance.score(question, hits))

    # before an answer --------------------------------------------------------------
    def evidence(self, question: str, qtype: QuestionType, opts: AskOptions, ans: Answer
                 ) -> Evidence:
        """What the stages find for the question: the passages kept (:meth:`passages`),
        the reader that answers from them (none with ``free``, with ``marginalize`` or
        outside the FILTERED context mode: the generator answers), whether a passage is
        relevant enough (``reason`` when none is), and, unless that ends it
        (``enough`` False), their sentences (:meth:`sentences`)."""
        ev = self.passages(question, opts, ans)
        if ev.grounding.missing and opts.abstain:
            return replace(ev, enough=False, reason=missing_reason(ev.grounding.missing))
        reader = self.reader if opts.context == "filtered" and not opts.free \
            and not opts.marginalize else None
        # A span answer is judged by its own evidence (answerability, which weighs the
        # relevance too); other answers need a relevant passage first.
        best = max((ev.relevance[h.passage_id] for h in ev.kept), default=0.0)
        reason = self.abstain_reason(best, opts.abstain, opts.re_threshold)
        ev = replace(ev, reader=reader, reason=reason)
        if reason is not None and not (reader is not None and qtype.kind in ("factoid", "choice")):
            return replace(ev, enough=False)
        return self.sentences(ev, opts, ans)

    def passages(self, question: str, opts: AskOptions, ans: Answer) -> Evidence:
        """Retrieve and score the passages, and keep the best ``opts.top_k`` of them (in
        retrieval order in the FULL context mode), duplicates collapsed; a passage of the
        document or section the question names takes the last place when none kept is
        one (:func:`~ragctl.ask.rules.with_identifier`, ``with_heading``). Records them in
        ``ans``."""
        hits, probs, grounding = self.retrieve_and_score(question, opts.top_n, ans.timings)
        if opts.context == "full":
            order = list(range(len(hits)))
        else:
            order = [int(i) for i in np.argsort(-probs, kind="stable")]
        kept_order, duplicates = collapse_duplicates([hits[i].text for i in order], opts.top_k)
        kept_order = with_identifier(question, hits, order, kept_order, duplicates)
        kept = [hits[order[k]] for k in kept_order]
        relevance = {h.passage_id: float(p) for h, p in zip(hits, probs, strict=True)}
        ans.passages = self.passage_scores(hits, probs, {h.passage_id for h in kept},
                                           {hits[order[a]].passage_id: hits[order[b]].passage_id
                                            for a, b in duplicates.items()})
        ans.passages.sort(key=lambda p: (not p.kept, -p.relevance if opts.context != "full"
                                         else p.retrieval_rank))
        ans.models = {"embedder": self.collection.embedder_name or "",
                      "relevance": self.relevance.name,
                      **({"kinds": self._kinds.name} if self._kinds is not None else {})}
        return Evidence(question, hits, probs, order, kept_order, duplicates, kept, relevance,
                        grounding=grounding)

    def retrieved_sentences(self, ev: Evidence, first: int) -> dict[int, list[Sentence]]:
        """Passage id → its sentences, for the passages kept and the ``first`` retrieved
        (kept first, then in retrieval order): a table's rows or a figure the prose
        outranked. Each passage is read from the store once per question."""
        ids = list(dict.fromkeys([h.passage_id for h in ev.kept] +
                                 [h.passage_id for h in ev.hits[:first]]))
        unread = [p for p in ids if p not in ev.per_passage and p not in ev.retrieved]
        if unread:
            found = self.collection.store.sentences_of(unread)
            ev.retrieved.update({p: found.get(p, []) for p in unread})
        return {p: ev.per_passage.get(p) or ev.retrieved.get(p, []) for p in ids}

    def sentences(self, ev: Evidence, opts: AskOptions, ans: Answer) -> Evidence:
        """The kept passages' sentences, scored by the context filter (in the FILTERED
        context mode; all of them kept otherwise). Records them in ``ans``."""
        question, kept = ev.question, ev.kept
        t = time.perf_counter()
        per_passage = self.collection.store.sentences_of([h.passage_id for h in kept])
        all_sentences = [s for h in kept for s in split_long(per_passage[h.passage_id])]
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
        ans.context = [Citation.of(i, s) for i, s in enumerate(context, start=1)]
        return replace(ev, per_passage=per_passage, scored=scored, context=context,
                       also=also_in(ev.hits, ev.duplicates, ev.order))


def also_in(hits: Sequence[Hit], duplicates: dict[int, int], order: Sequence[int]
            ) -> dict[int, list[str]]:
    """Passage id → the other files that hold the same passage (collapsed into it)."""
    out: dict[int, list[str]] = {}
    for dup, kept in duplicates.items():
        out.setdefault(hits[order[kept]].passage_id, []).append(hits[order[dup]].path)
    return out

