"""Long answers (GINGER): nuggets → facets → ranked facets → cited summaries → verify.

1. **Nuggets** (GINGER §3): the sentences the context filter keeps from the top passages,
   tied to their source sentence and offsets. Optionally the local model marks the nugget
   span inside a kept sentence; the span must be copied verbatim or it is dropped.
2. **Facets**: average-linkage agglomerative clustering of the nugget embeddings with a
   cosine-distance threshold; near-duplicate nuggets from different documents fall into
   one facet and keep all their sources. With fewer than four nuggets each is its own
   facet, as GINGER does.
3. **Ranking**: facets are ranked against the question by the relevance estimator over
   their joined nuggets, or by BM25.
4. **Summaries**: each top facet becomes one sentence of at most ~35 words written by the
   local model from that facet's nuggets only, carrying the citations of its nuggets. A
   summary its nuggets do not support is replaced by the facet's best nugget, verbatim (the
   extractive fallback), so the answer stays grounded even with a very small model; so is
   one that adds a name, a number or more than two words of its own (:func:`adds_facts`).
5. **Fluency** (optional): one rewrite of the whole answer, kept only if it preserves every
   citation marker exactly.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from ragctl.ask.grounding import Grounding, missing_reason
from ragctl.ask.verify import citation_support_rate, strip_citations
from ragctl.config import Settings
from ragctl.models.backends import Generator, SupportChecker
from ragctl.records import Citation, Hit, PassageScore, ScoredSentence, Sentence
from ragctl.text import content_words

if TYPE_CHECKING:
    from ragctl.ask.retrieve import Retriever
    from ragctl.models.backends import ContextFilter, RelevanceEstimator
    from ragctl.store.collection import Collection


class Stages(Protocol):
    """The loaded stages a long answer uses (:class:`ragctl.ask.stages.LoadedStages`, and
    so the pipeline, is one): handed down, so that this module never calls back into the
    pipeline."""

    @property
    def collection(self) -> Collection: ...
    @property
    def retriever(self) -> Retriever: ...
    @property
    def relevance(self) -> RelevanceEstimator: ...
    @property
    def context_filter(self) -> ContextFilter: ...
    @property
    def generator(self) -> Generator: ...
    @property
    def checker(self) -> SupportChecker: ...

    def retrieve_and_score(self, question: str, top_n: int, timings: dict[str, float]
                           ) -> tuple[list[Hit], np.ndarray, Grounding]: ...

    def passage_scores(self, hits: Sequence[Hit], probs: np.ndarray,
                       kept: set[int] | None = None,
                       duplicate_of: dict[int, int] | None = None) -> list[PassageScore]: ...

    def abstain_reason(self, best: float, abstain: bool, override: float | None
                       ) -> str | None: ...

SUMMARY_WORDS = 35
MIN_SENTENCE_WORDS = 8  # less budget left than this: no further facet is summarized
FACET_WORDS = 15  # the budget allows up to words / FACET_WORDS facets (a facet's sentence
#                   is 15-35 words: a quoted nugget or a summary)
_DEFAULTS = Settings()

SUMMARY_SHOT = (
    "Facts: The Nile is about 6,650 km long. The Nile flows north through eleven countries.\n"
    "Question: What do we know about the Nile?\n"
    "Summary: The Nile, about 6,650 km long, flows north through eleven countries.\n\n"
)

FLUENCY_SHOT = (
    "Text: Paris is the capital of France [1]. Paris has 2.1 million inhabitants [2].\n"
    "Rewritten: Paris, the capital of France [1], has 2.1 million inhabitants [2].\n\n"
)


@dataclass(frozen=True)
class LongOptions:
    top_n: int = _DEFAULTS.top_n
    facets: int = _DEFAULTS.long_facets
    words: int = _DEFAULTS.long_words
    cluster_threshold: float = _DEFAULTS.cluster_threshold
    ranking: Literal["relevance", "bm25"] = "relevance"
    fluent: bool = False
    mark_spans: bool = False
    max_nuggets: int = _DEFAULTS.max_nuggets
    abstain: bool = True
    re_threshold: float | None = _DEFAULTS.re_threshold
    filter_threshold: float = _DEFAULTS.filter_threshold
    support_threshold: float = _DEFAULTS.support_threshold

    @classmethod
    def from_settings(cls, s: Settings, **overrides: Any) -> LongOptions:
        """Options from the settings; ``overrides`` that are None are left to them."""
        base = cls(top_n=s.top_n, facets=s.long_facets, words=s.long_words,
                   cluster_threshold=s.cluster_threshold, max_nuggets=s.max_nuggets,
                   re_threshold=s.re_threshold, filter_threshold=s.filter_threshold,
                   support_threshold=s.support_threshold)
        from dataclasses import replace

        return replace(base, **{k: v for k, v in overrides.items() if v is not None})


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


# ------------------------------------------------------------------------------ nuggets

@dataclass(frozen=True)
class Nugget:
    id: int
    text: str
    sentence: Sentence
    score: float
    passage_relevance: float
    span: tuple[int, int] | None = None  # character span inside the sentence, if marked

    def to_dict(self, facet: int | None) -> dict[str, Any]:
        s = self.sentence
        return {"id": self.id, "text": self.text, "score": round(self.score, 4),
                "sentence_id": s.id, "path": s.path, "place": s.place,
                "start_char": s.start_char, "end_char": s.end_char, "span": self.span,
                "facet": facet}


NUGGET_FLOOR = 0.4  # a nugget scores at least this share of the best sentence's score


def nuggets_from_filter(scored: Sequence[ScoredSentence], relevance: dict[int, float],
                        *, limit: int = 40, words: int | None = None,
                        floor: float = NUGGET_FLOOR) -> list[Nugget]:
    """The best sentences, best first: those the filter kept, then the next best until they
    hold the ``words`` budget, then others scoring at least ``floor`` of the best, until
    ``limit`` nuggets or about three times the budget (so several facets can fill it).
    Metadata blocks and lead-ins ending with a colon are never nuggets; repeats from other
    documents stay: clustering puts them into one facet citing every source."""
    from ragctl.ask.documents import unquotable

    ranked = sorted((s for s in scored if not unquotable(s.sentence.text, s.sentence.place)),
                    key=lambda s: (not s.kept, -s.score))
    top = max((s.score for s in ranked), default=0.0)
    out: list[Nugget] = []
    total = 0
    for s in ranked:
        if len(out) >= limit or (words is not None and total >= 3 * words):
            break
        short = words is not None and total < words  # not yet enough to fill the budget
        if not s.kept and not short and (top <= 0 or s.score < floor * top):
            continue
        out.append(Nugget(len(out), s.sentence.text, s.sentence, s.score,
                          relevance.get(s.sentence.passage_id, 0.0)))
        total += len(s.sentence.text.split())
    return out


LEADS = 4  # documents named in the question whose first sentence becomes a nugget


def with_leads(question: str, hits: Sequence[Hit], per_passage: dict[int, list[Sentence]],
               scored: Sequence[ScoredSentence]) -> list[ScoredSentence]:
    """``scored`` with the first sentence of each passage retrieved from a document the
    question names by its title ("Were Scott Derrickson and Ed Wood of the same
    nationality?" and the documents so titled) kept, as well as the best sentence: what a
    document says first of its subject belongs in a long answer about it. Up to LEADS
    documents, most relevant first (``hits`` is in that order); the rest unchanged."""
    from ragctl.ask.documents import option_in, unquotable

    top = max((s.score for s in scored), default=0.0)
    leads: set[int] = set()
    for h in hits:
        title = re.sub(r"\s*\([^)]*\)$", "", h.title).strip()  # "Big Stone Gap (film)"
        first = per_passage.get(h.passage_id) or []
        if len(leads) >= LEADS or not re.search(r"[A-Z0-9]", title) or not first \
                or option_in(title, question) is None or unquotable(first[0].text):
            continue
        leads.add(first[0].id)
    return [ScoredSentence(s.sentence, max(s.score, top), True) if s.sentence.id in leads
            else s for s in scored]


def verify_span(sentence: str, marked: str) -> tuple[int, int] | None:
    """Where ``marked`` occurs verbatim (modulo spaces) in ``sentence``, or None."""
    marked = " ".join(marked.split()).strip(" \"'")
    if len(marked.split()) < 3:
        return None
    norm = " ".join(sentence.split())
    i = norm.find(marked)
    if i < 0:
        return None
    return i, i + len(marked)


def mark_span(generator: Generator, question: str, nugget: Nugget) -> Nugget:
    """Ask the model to copy the part of the sentence that answers the question."""
    prompt = (f"Copy the part of the sentence that answers the question. Do not change "
              f"any word.\nSentence: {nugget.text}\nQuestion: {question}\nPart:")
    marked = generator.complete(prompt, max_tokens=60).text
    span = verify_span(nugget.text, marked)
    if span is None:
        return nugget
    text = " ".join(nugget.text.split())[span[0]:span[1]]
    return Nugget(nugget.id, text, nugget.sentence, nugget.score, nugget.passage_relevance,
                  span)


# ------------------------------------------------------------------------------ facets

@dataclass(frozen=True)
class Facet:
    nuggets: tuple[Nugget, ...]
    score: float = 0.0

    @property
    def text(self) -> str:
        return " ".join(n.text for n in self.nuggets)


def cluster(vectors: np.ndarray, *, threshold: float = 0.35, min_items: int = 4) -> list[list[int]]:
    """Average-linkage clusters of unit vectors; merge while mean distance < threshold."""
    n = len(vectors)
    if n < min_items:
        return [[i] for i in range(n)]
    dist = 1.0 - np.clip(vectors @ vectors.T, -1.0, 1.0)
    clusters: list[list[int]] = [[i] for i in range(n)]
    while len(clusters) > 1:
        best, pair = math.inf, (0, 0)
        for a in range(len(clusters)):
            for b in range(a + 1, len(clusters)):
                d = float(dist[np.ix_(clusters[a], clusters[b])].mean())
                if d < best:
                    best, pair = d, (a, b)
        if best >= threshold:
            break
        a, b = pair
        clusters[a] = sorted(clusters[a] + clusters[b])
        del clusters[b]
    return clusters


def _terms(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def bm25_scores(question: str, docs: Sequence[str], *, k1: float = 1.2,
                b: float = 0.75) -> np.ndarray:
    """Okapi BM25 of each doc against the question, IDF over these docs."""
    tokenized = [_terms(d) for d in docs]
    n = len(docs)
    avg = sum(len(t) for t in tokenized) / n if n else 0.0
    df = Counter(w for t in tokenized for w in set(t))
    scores = np.zeros(n, dtype=np.float32)
    for i, t in enumerate(tokenized):
        tf = Counter(t)
        for w in set(_terms(question)):
            if w not in tf:
                continue
            idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
            scores[i] += idf * tf[w] * (k1 + 1) / (tf[w] + k1 * (1 - b + b * len(t) / avg))
    return scores


# ------------------------------------------------------------------------------ summaries

@dataclass
class FacetSummary:
    rank: int
    text: str
    citations: list[int]
    nugget_ids: list[int]
    score: float
    support: float
    fallback: bool
    generated: str


def summary_prompt(question: str, facet: Facet) -> str:
    from ragctl.models.generate import plain_text

    facts = " ".join(plain_text(n.text) for n in facet.nuggets)
    return (SUMMARY_SHOT + f"Facts: {facts}\nQuestion: {' '.join(question.split())}\n"
            "Summary:")


def clip_words(text: str, n: int) -> str:
    words = text.split()
    return text if len(words) <= n else " ".join(words[:n]).rstrip(",;:") + "…"


def summarize_facets(generator: Generator, checker: SupportChecker, question: str,
                     facets: Sequence[Facet], numbers: dict[int, int], *, words: int,
                     support_threshold: float = 0.5) -> list[FacetSummary]:
    """One verified sentence per facet, in rank order, until the word budget is spent
    (less than :data:`MIN_SENTENCE_WORDS` left) or the facets are."""
    out: list[FacetSummary] = []
    used = 0
    for rank, facet in enumerate(facets, start=1):
        if out and words - used < MIN_SENTENCE_WORDS:
            break
        raw = generator.complete(summary_prompt(question, facet), max_tokens=60).text
        text, _ = strip_citations(raw.strip())
        text = clip_words(text, SUMMARY_WORDS)
        evidence = [n.text for n in facet.nuggets]
        scores = checker.support(text, evidence) if text else np.zeros(0)
        support = float(scores.max()) if len(scores) else 0.0
        fallback = support < support_threshold or restates(question, text, evidence) \
            or bool(adds_facts(question, text, evidence))
        cited: list[Nugget] = list(facet.nuggets)
        if fallback:
            best = max(facet.nuggets, key=lambda n: n.score)
            text, cited, support = " ".join(best.text.split()), [best], 1.0
        budget = words - used
        text = clip_words(text, budget)
        used += len(text.split())
        out.append(FacetSummary(
            rank=rank, text=text,
            citations=sorted({numbers[n.id] for n in cited}),
            nugget_ids=[n.id for n in facet.nuggets], score=round(facet.score, 4),
            support=round(support, 4), fallback=fallback, generated=raw.strip()))
    return out


def restates(question: str, summary: str, evidence: Sequence[str]) -> bool:
    """A summary that only says the question again: fewer than two of its content words
    come from the nuggets without being in the question."""
    asked = set(content_words(question))
    said = set(content_words(" ".join(evidence)))
    return len([w for w in set(content_words(summary)) if w not in asked and w in said]) < 2


# a summary may word its nuggets afresh, with at most this many content words of its own
NEW_WORDS = 2


def adds_facts(question: str, summary: str, evidence: Sequence[str]) -> list[str]:
    """What a summary says that neither its nuggets nor the question do: a name or a number
    of its own, or more than :data:`NEW_WORDS` content words of its own ("The server uses
    the client's IP address to send information about slots" over "the client is allowed
    to send the server information about certain slots": "uses", "ip", "address"). Words
    match on their first five letters (send, sends). Empty when it adds nothing."""
    known = {w[:5] for w in content_words(f"{question} {' '.join(evidence)}")}
    words = re.findall(r"[\w'’-]+", summary)
    new = [w for w in dict.fromkeys(content_words(summary)) if w[:5] not in known]
    hard = {w.lower() for i, w in enumerate(words)
            if any(ch.isdigit() for ch in w) or (i > 0 and w[:1].isupper())}
    return new if len(new) > NEW_WORDS or any(w in hard for w in new) else []


def render(summaries: Sequence[FacetSummary]) -> str:
    parts = []
    for s in summaries:
        body = s.text.rstrip()
        end = body[-1] if body.endswith((".", "!", "?")) else "."
        body = body.rstrip(".!?")
        parts.append(body + "".join(f" [{n}]" for n in s.citations) + end)
    return " ".join(parts)


_MARK = re.compile(r"\[(\d{1,3})\]")


def fluency_pass(generator: Generator, text: str) -> tuple[str, str | None]:
    """Rewrite once; keep the rewrite only if it has exactly the same citation markers."""
    from ragctl.models.generate import plain_text

    prompt = FLUENCY_SHOT + f"Text: {plain_text(text)}\nRewritten:"
    budget = int(len(text.split()) * 2) + 20
    out = generator.complete(prompt, max_tokens=budget).text.strip()
    if not out:
        return text, "the rewrite was empty"
    if Counter(_MARK.findall(out)) != Counter(_MARK.findall(text)):
        return text, "the rewrite dropped or invented a citation marker"
    return out, None


def renumber(summaries: Sequence[FacetSummary], nuggets: Sequence[Nugget]) -> list[Citation]:
    """Number the sources in order of first citation (rewriting the summaries' numbers);
    returns the sources in that order."""
    new: dict[int, int] = {}
    for s in summaries:
        for old in s.citations:
            new.setdefault(old, len(new) + 1)
        s.citations = [new[o] for o in s.citations]
    by_old = {n.id + 1: n for n in nuggets}
    return [Citation.of(number, by_old[old].sentence) for old, number in new.items()]


# ------------------------------------------------------------------------------ the run

def answer_long(pipe: Stages, question: str, opts: LongOptions) -> LongAnswer:
    """GINGER over one index: the stages above, in order, timed."""
    ans = LongAnswer(question=question)
    t_all = time.perf_counter()
    hits, probs, grounding = pipe.retrieve_and_score(question, opts.top_n, ans.timings)
    relevance = {h.passage_id: float(p) for h, p in zip(hits, probs, strict=True)}
    ans.passages = pipe.passage_scores(hits, probs)
    ans.models = {"embedder": pipe.collection.embedder_name or "",
                  "relevance": pipe.relevance.name, "filter": pipe.context_filter.name,
                  "generator": pipe.generator.name}
    best = float(probs.max()) if len(probs) else 0.0
    reason = pipe.abstain_reason(best, opts.abstain, opts.re_threshold)
    if grounding.missing and opts.abstain:
        reason = missing_reason(grounding.missing)
    if reason is not None:
        ans.abstained, ans.abstain_reason = True, reason
        return ans

    t = time.perf_counter()
    per_passage = pipe.collection.store.sentences_of([h.passage_id for h in hits])
    sentences = [s for h in hits for s in per_passage[h.passage_id]]
    scored = pipe.context_filter.select(question, sentences, threshold=opts.filter_threshold,
                                        top_m=opts.max_nuggets)
    scored = with_leads(question, sorted(hits, key=lambda h: -relevance[h.passage_id]),
                        per_passage, scored)
    nuggets = nuggets_from_filter(scored, relevance, limit=opts.max_nuggets, words=opts.words)
    if opts.mark_spans:
        nuggets = [mark_span(pipe.generator, question, n) for n in nuggets]
    ans.timings["nuggets"] = time.perf_counter() - t

    t = time.perf_counter()
    embedder = pipe.retriever.embedder
    vecs = embedder.embed([n.text for n in nuggets]) if nuggets else np.zeros((0, 1))
    facets = [Facet(tuple(nuggets[i] for i in g))
              for g in cluster(vecs, threshold=opts.cluster_threshold)]
    ans.timings["cluster"] = time.perf_counter() - t

    t = time.perf_counter()
    texts = [f.text for f in facets]
    if not facets:
        fscores = np.zeros(0)
    elif opts.ranking == "bm25":
        fscores = bm25_scores(question, texts)
    else:
        fscores = pipe.relevance.score_texts(question, texts)
    order = np.argsort(-np.asarray(fscores), kind="stable")
    ranked = [Facet(facets[i].nuggets, float(fscores[i])) for i in order]
    ans.timings["rank"] = time.perf_counter() - t

    n_facets = max(opts.facets, opts.words // FACET_WORDS)
    t = time.perf_counter()
    summaries = summarize_facets(
        pipe.generator, pipe.checker, question, ranked[:n_facets],
        {n.id: n.id + 1 for n in nuggets}, words=opts.words,
        support_threshold=opts.support_threshold)
    ans.timings["summarize"] = time.perf_counter() - t
    ans.sources = renumber(summaries, nuggets)
    text = render(summaries)
    if opts.fluent and text:
        t = time.perf_counter()
        rewritten, why = fluency_pass(pipe.generator, text)
        ans.fluent, ans.fluency_rejected = why is None, why
        text = rewritten
        ans.timings["fluency"] = time.perf_counter() - t
    ans.answer = text
    ans.words = len(strip_citations(text)[0].split())
    ans.fallbacks = sum(s.fallback for s in summaries)
    ans.support_rate = citation_support_rate(text, ans.sources, pipe.checker,
                                             threshold=opts.support_threshold)
    ans.facets = [asdict(s) for s in summaries]
    facet_of = {n.id: k for k, f in enumerate(ranked) for n in f.nuggets}
    ans.nuggets = [n.to_dict(facet_of.get(n.id)) for n in nuggets]
    ans.timings["total"] = time.perf_counter() - t_all
    return ans
