"""``ask``: retrieve → relevance estimator → abstain? → context filter → generate → verify.

Each stage is a module of its own and each model comes from the registry
(:mod:`ragctl.models`); this module only calls the stages in order, times them and
collects what they did into an :class:`Answer`. ``ask --long`` is :mod:`ragctl.longform`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from ragctl.ask.answer import (
    AUTHOR_PATTERNS,
    DEFAULT_ANSWERABILITY,
    STATEMENT_STEMS,
    YEAR_NEAR,
    YES_STATED,
    Context,
    QuestionType,
    Reader,
    asked_field,
    asked_statement,
    author_line,
    bridge_context,
    choice_options,
    choose,
    completed,
    document_name,
    field_values,
    first_year,
    heading_named,
    identifiers,
    is_authorship,
    is_metadata,
    mentions,
    named_by,
    names_found,
    option_in,
    own_statement,
    pair_named,
    question_names,
    question_type,
    silent_on,
    stated_share,
    stated_year,
    time_order,
    title_rank,
    unquotable,
)
from ragctl.ask.longform import LongAnswer, LongOptions, answer_long
from ragctl.ask.retrieve import Retriever
from ragctl.ask.verify import LexicalEmbeddingSupport, strip_citations, verify
from ragctl.config import Settings
from ragctl.errors import RagctlError
from ragctl.models import registry as models
from ragctl.models.backends import ContextFilter, Generator, RelevanceEstimator, SupportChecker
from ragctl.models.filter import collapse_duplicates, joined, split_long
from ragctl.models.generate import build_prompt
from ragctl.models.relevance import re_weights
from ragctl.records import (
    Answer,
    AnswerSentence,
    Citation,
    Hit,
    PassageScore,
    ScoredSentence,
    Sentence,
)
from ragctl.store.collection import Collection
from ragctl.text import content_words, line_starts, normalize_answer

ContextMode = Literal["full", "passages", "filtered"]
CONTEXT_MODES: tuple[ContextMode, ...] = ("full", "passages", "filtered")
MAX_QUESTION_CHARS = 2000
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

    @classmethod
    def from_settings(cls, s: Settings, **overrides: Any) -> AskOptions:
        """Options from the settings; ``overrides`` that are None are left to them."""
        base = cls(top_n=s.top_n, top_k=s.top_k, re_threshold=s.re_threshold,
                   filter_threshold=s.filter_threshold, filter_top_m=s.filter_top_m,
                   max_tokens=s.max_answer_tokens, support_threshold=s.support_threshold,
                   reader_passages=s.reader_passages, answer_threshold=s.answer_threshold,
                   quote_sentences=s.quote_sentences)
        return replace(base, **{k: v for k, v in overrides.items() if v is not None})


class Pipeline:
    """Holds the loaded stages for one index; ``ask`` may be called many times.

    Stages load lazily through the registry; pass an instance to use another one."""

    def __init__(self, collection: Collection, *, relevance: RelevanceEstimator | None = None,
                 context_filter: ContextFilter | None = None,
                 generator: Generator | None = None,
                 checker: SupportChecker | None = None, reader: Reader | None = None) -> None:
        self.collection = collection
        self.settings = collection.settings
        self.retriever = Retriever(collection)
        self._relevance = relevance
        self._filter = context_filter
        self._generator = generator
        self._checker = checker
        self._reader = reader
        self._reader_loaded = reader is not None

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
        for stage in (self._relevance, self._filter, self._generator, self._reader):
            if stage is not None:
                stage.close()

    def __enter__(self) -> Pipeline:
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
                           ) -> tuple[list[Hit], np.ndarray]:
        """Load the stages, retrieve the top ``top_n`` passages and score their relevance."""
        timings["load"] = self.load()
        t = time.perf_counter()
        hits = self.retriever.search(question, limit=top_n, keep_top=KEEP_TOP)
        hits = [*hits, *self._named_hits(question, hits)]
        timings["retrieve"] = time.perf_counter() - t
        t = time.perf_counter()
        probs = self.relevance.score(question, hits) if hits else np.zeros(0)
        timings["relevance"] = time.perf_counter() - t
        return hits, probs

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

    # ask -----------------------------------------------------------------------------
    def ask(self, question: str, options: AskOptions | None = None, *,
            on_token: Callable[[str], None] | None = None) -> Answer:
        """Answer from the documents: a span of a cited sentence for a factoid question,
        quoted sentences for "what does X say about Y", yes or no from the evidence; the
        generator's own words with ``free`` (or without a reader, or in the FULL and PSG
        context modes). Abstains when the evidence does not hold the answer."""
        opts = options or AskOptions()
        question = clean_question(question)
        if opts.context not in CONTEXT_MODES:
            raise RagctlError(f"unknown context mode {opts.context!r}; "
                              f"choose one of {', '.join(CONTEXT_MODES)}")
        ans = Answer(question=question, context_mode=opts.context)
        t_all = time.perf_counter()
        hits, probs = self.retrieve_and_score(question, opts.top_n, ans.timings)
        if opts.context == "full":
            order = list(range(len(hits)))
        else:
            order = [int(i) for i in np.argsort(-probs, kind="stable")]
        kept_order, duplicates = collapse_duplicates([hits[i].text for i in order], opts.top_k)
        kept_order = self._with_identifier(question, hits, order, kept_order, duplicates)
        kept_order = self._with_heading(question, hits, order, kept_order, duplicates)
        kept = [hits[order[k]] for k in kept_order]
        relevance = {h.passage_id: float(p) for h, p in zip(hits, probs, strict=True)}
        ans.passages = self.passage_scores(hits, probs, {h.passage_id for h in kept},
                                           {hits[order[a]].passage_id: hits[order[b]].passage_id
                                            for a, b in duplicates.items()})
        ans.passages.sort(key=lambda p: (not p.kept, -p.relevance if opts.context != "full"
                                         else p.retrieval_rank))
        ans.models = {"embedder": self.collection.embedder_name or "",
                      "relevance": self.relevance.name}

        qtype = question_type(question)
        ans.question_type = qtype.kind + (f":{qtype.expects}" if qtype.expects != "any" else "")
        reader = self.reader if opts.context == "filtered" and not opts.free \
            and not opts.marginalize else None
        # A span answer is judged by its own evidence (answerability, which weighs the
        # relevance too); other answers need a relevant passage first.
        best = max((relevance[h.passage_id] for h in kept), default=0.0)
        reason = self.abstain_reason(best, opts.abstain, opts.re_threshold)
        if reason is not None and not (reader is not None and qtype.kind in ("factoid", "choice")):
            return self._abstain(ans, reason, t_all)

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
        also = self._also_in(hits, duplicates, order)

        t = time.perf_counter()
        if reader is not None and qtype.kind == "quote":
            self._quote(ans, question, scored, kept, per_passage, opts, also)
        elif reader is not None and qtype.kind == "yes-no":
            self._yes_no(ans, question, hits, kept, per_passage, scored, relevance, also)
        elif reader is not None and qtype.kind == "choice" and self._choice(
                ans, question, hits, kept, per_passage, scored, relevance, also):
            pass
        elif reader is not None and qtype.kind in ("factoid", "choice"):
            if not (reason is None and (
                    self._author(ans, question, hits, kept, relevance, also)
                    or self._field(ans, question, hits, kept, relevance, also))):
                self._span(ans, reader, question, qtype, kept, per_passage, scored, relevance,
                           opts, also)
            two = choice_options(question) if qtype.kind == "choice" else None
            if two and not ans.abstained and opts.abstain and not any(
                    option_in(o, ans.raw_answer) or option_in(ans.raw_answer, o) for o in two):
                # "Who is older, A or B?" answered with neither: the documents do not say
                ans.answer = ans.raw_answer = ""
                ans.sources, ans.sentences = [], []
                ans.abstained = True
                ans.abstain_reason = f"the documents do not say which of {two[0]!r} " \
                    f"and {two[1]!r}"
        else:
            ans.timings["answer"] = 0.0
            self._generate(ans, question, kept, per_passage, probs, order, kept_order, context,
                           opts, on_token)
        ans.timings.setdefault("answer", time.perf_counter() - t)
        if not ans.abstained and not ans.answer_text.strip():
            return self._abstain(ans, "the answer came out empty", t_all)
        if not ans.abstained and not ans.sources:
            return self._abstain(ans, "the answer is not supported by the sentences found",
                                 t_all)
        ans.timings["total"] = time.perf_counter() - t_all
        return ans

    def _abstain(self, ans: Answer, reason: str, t_all: float) -> Answer:
        ans.abstained, ans.abstain_reason = True, reason
        ans.timings["total"] = time.perf_counter() - t_all
        return ans

    NAMED_DOCUMENTS = 2  # documents named by the question's numbered names, searched for

    def _named_paths(self, idents: Sequence[tuple[str, str]]) -> list[str]:
        """The indexed documents titled or file-named by every numbered name."""
        return [d.path for d in self.collection.store.documents() if named_by(d, idents)]

    def _named_hits(self, question: str, hits: Sequence[Hit]) -> list[Hit]:
        """The first passage of each document the question names by a numbered name ("What
        is the status of PEP 13?" and ``pep-0013.rst``) when the search found none of its
        passages: its header is what the question is about, however many passages of
        other documents mention "PEP 13" in passing."""
        idents = identifiers(question)
        if not idents or any(named_by(h, idents) for h in hits):
            return []
        store, out = self.collection.store, []
        for path in self._named_paths(idents)[:self.NAMED_DOCUMENTS]:
            first = store.sentences_like(path, ["%"], limit=1)
            passage = store.passages([first[0].passage_id]).get(first[0].passage_id) \
                if first else None
            if passage is not None:
                out.append(Hit(passage_id=passage.id, **passage.span()))
        return out

    @staticmethod
    def _with_identifier(question: str, hits: Sequence[Hit], order: Sequence[int],
                         kept_order: list[int], duplicates: dict[int, int]) -> list[int]:
        """When the question asks about a numbered name ("PEP 723") that no kept passage
        names, the best-ranked passage that does takes the last place: the relevance
        estimator reads "PEP 1" and "PEP 723" alike. A passage of a document so titled or
        file-named (``pep-0723.rst``) comes before one that mentions it in passing. (In
        SQuAD's dev questions with such a name, the answer's own paragraph lacks the number
        2.8% of the time.)"""
        idents = identifiers(question)
        if not idents:
            return kept_order
        if any(named_by(hits[k], idents) for k in order):
            return Pipeline._last_place_to(lambda h: named_by(h, idents), hits, order,
                                           kept_order, duplicates)
        return Pipeline._last_place_to(
            lambda h: all(mentions(f"{h.title} {h.text}", i) for i in idents),
            hits, order, kept_order, duplicates)

    @staticmethod
    def _with_heading(question: str, hits: Sequence[Hit], order: Sequence[int],
                      kept_order: list[int], duplicates: dict[int, int]) -> list[int]:
        """When the question names a section ("What does PEP 257 say about one-line
        docstrings?" and "Specification > One-line Docstrings") that no kept passage is
        in, the best-ranked passage of that section takes the last place: the relevance
        estimator reads the passage's text, not its heading."""
        return Pipeline._last_place_to(lambda h: heading_named(question, h.place),
                                       hits, order, kept_order, duplicates)

    @staticmethod
    def _last_place_to(wanted: Callable[[Hit], bool], hits: Sequence[Hit],
                       order: Sequence[int], kept_order: list[int], duplicates: dict[int, int]
                       ) -> list[int]:
        """``kept_order`` with its last place given to the best-ranked passage ``wanted``,
        when no kept passage is one (and a retrieved one is)."""
        if not kept_order or any(wanted(hits[order[k]]) for k in kept_order):
            return kept_order
        k = next((k for k in range(len(order)) if k not in kept_order and k not in duplicates
                  and wanted(hits[order[k]])), None)
        if k is None:
            return kept_order
        dropped = kept_order[-1]
        for dup in [d for d, of in duplicates.items() if of == dropped]:
            del duplicates[dup]
        return [*kept_order[:-1], k]

    @staticmethod
    def _also_in(hits: Sequence[Hit], duplicates: dict[int, int], order: Sequence[int]
                 ) -> dict[int, list[str]]:
        """Passage id → the other files that hold the same passage (collapsed into it)."""
        out: dict[int, list[str]] = {}
        for dup, kept in duplicates.items():
            out.setdefault(hits[order[kept]].passage_id, []).append(hits[order[dup]].path)
        return out

    @staticmethod
    def _answering_document(question: str, hits: Sequence[Hit], kept: Sequence[Hit],
                            relevance: dict[int, float]) -> tuple[Hit, list[Hit]] | None:
        """The document that answers best: the most relevant kept one that names what the
        question names ("PEP 723" all of its numbered names, "the Dropbox ATF post" one of
        its names), one so titled or file-named first, as its best passage and its
        passages retrieved, in document order."""
        idents, names = identifiers(question), question_names(question)
        # a document so titled or file-named ("PEP 13", pep-0013.rst) before one that
        # mentions it in passing
        for best in sorted(kept, key=lambda h: (not (idents and named_by(h, idents)),
                                                -relevance[h.passage_id])):
            same = sorted((h for h in hits if h.path == best.path), key=lambda h: h.start_char)
            text = " ".join(f"{h.title} {h.place} {h.text}" for h in same)
            if all(mentions(text, i) for i in idents) \
                    and (not names or any(names_found(names, text))):
                return best, same
        return None

    def _document_sentences(self, path: str, same: Sequence[Hit], patterns: Sequence[str]
                            ) -> list[Sentence]:
        """The sentences of a document's passages retrieved, then those of the whole
        document LIKE ``patterns``."""
        per_passage = self.collection.store.sentences_of([h.passage_id for h in same])
        found = [s for h in same for s in per_passage.get(h.passage_id, [])]
        return found + self.collection.store.sentences_like(path, patterns)

    @staticmethod
    def _rule_answer(ans: Answer, s: Sentence, a: int, b: int, rule: str, confidence: float,
                     also: dict[int, list[str]]) -> None:
        """``s.text[a:b]`` as the answer, found by ``rule`` rather than the reader."""
        ans.kind = "span"
        ans.candidates = [{"answer": s.text[a:b], "rule": rule,
                           "relevance": round(confidence, 4)}]
        ans.raw_answer = s.text[a:b]
        ans.answer = f"{ans.raw_answer} [1]"
        ans.sources = [Citation.of(1, s, answer=s.source_offsets(a, b),
                                   also_in=tuple(also.get(s.passage_id, ())))]
        ans.sentences = [AnswerSentence(ans.raw_answer, (1,), 1.0, True)]
        ans.confidence = round(confidence, 4)

    def _author(self, ans: Answer, question: str, hits: Sequence[Hit], kept: Sequence[Hit],
                relevance: dict[int, float], also: dict[int, list[str]]) -> bool:
        """Who wrote (or sent) the document that answers best, from its own author line: a
        byline, an "Author:" or "From:" field, among its passages retrieved, else anywhere
        in it. False when the question is not about the author or the document has no
        author line (the reader answers instead)."""
        found = self._answering_document(question, hits, kept, relevance) \
            if is_authorship(question) else None
        if found is None:
            return False
        best, same = found
        for s in self._document_sentences(best.path, same, AUTHOR_PATTERNS):
            where = author_line(s.text)
            if where is not None:
                self._rule_answer(ans, s, *where, "the document's author line",
                                  relevance[best.passage_id], also)
                return True
        return False

    def _field(self, ans: Answer, question: str, hits: Sequence[Hit], kept: Sequence[Hit],
               relevance: dict[int, float], also: dict[int, list[str]]) -> bool:
        """The value of the labelled field the question asks for ("Invoice No: # …",
        "Due Date: 04/04/2023", a table row "Population: 12,400") in the document that
        answers best. When the document gives several values for it, the one whose row
        names the most of the question's other words; False when no value, or no single
        row, stands out (the reader answers instead)."""
        field = asked_field(question)
        found = self._answering_document(question, hits, kept, relevance) if field else None
        if field is None or found is None:
            return False
        best, same = found
        first = field.split()[0].replace("%", "")
        values: dict[tuple[int, int], tuple[Sentence, int, int]] = {}
        for s in self._document_sentences(best.path, same, [f"%{first}%:%", f"%{first}%#%"]):
            lines = line_starts(s.raw, s.text) if s.raw is not None else ()
            for a, b in field_values(field, s.text, lines):
                values.setdefault((s.id, a), (s, a, b))
        if not values:
            return False
        given = list(values.values())
        if len({s.text[a:b] for s, a, b in given}) > 1:
            # the row that names the most of the question's other words: from the value
            # before it in the sentence (or the sentence's last full stop)
            asked = set(content_words(question)) - set(field.split())
            ends: dict[int, list[int]] = {}
            for s, _, b in given:
                ends.setdefault(s.id, []).append(b)

            def row(s: Sentence, a: int, b: int) -> str:
                start = max([s.text.rfind(". ", 0, a) + 2, 0,
                             *(e for e in ends[s.id] if e <= a)])
                return s.text[start:b]

            scored = sorted(((len(asked & set(content_words(row(*v)))), v) for v in given),
                            key=lambda x: -x[0])
            if scored[0][0] == scored[1][0]:
                return False
            given = [scored[0][1]]
        self._rule_answer(ans, *given[0], "the document's labelled field",
                          relevance[best.passage_id], also)
        return True

    def _span(self, ans: Answer, reader: Reader, question: str, qtype: QuestionType,
              kept: Sequence[Hit], per_passage: dict[int, list[Sentence]],
              scored: Sequence[ScoredSentence], relevance: dict[int, float], opts: AskOptions,
              also: dict[int, list[str]]) -> None:
        """The reader's best span in the most relevant passages, if answerable."""
        ans.kind = "span"
        ans.models["reader"] = reader.name
        filter_scores: dict[int, float] = {}
        for s in scored:
            filter_scores[s.sentence.id] = max(filter_scores.get(s.sentence.id, 0.0), s.score)
        read = [Context.of(h.title, per_passage[h.passage_id], relevance[h.passage_id])
                for h in kept]
        contexts = read[:opts.reader_passages]
        bridge = bridge_context(scored, relevance)
        if bridge is not None:
            contexts.append(bridge)
        fitted = getattr(reader, "fitted", {})
        choices = choose(reader, question, qtype, contexts, filter_scores,
                         re_best=max(relevance[h.passage_id] for h in kept),
                         ranking=fitted.get("ranking"), answerable=fitted.get("answerability"),
                         passages=self._document_texts(kept, read))
        ans.candidates = [{"answer": c.text, "probability": round(c.probability, 4),
                           "rank": round(c.rank, 4),
                           **{k: round(v, 4) for k, v in c.features.items()}}
                          for c in choices[:opts.candidates]]
        choice = completed(question, choices) if choices else None
        threshold = self.answer_threshold(opts.answer_threshold)
        if choice is None or (opts.abstain and choice.probability < threshold):
            found = f"; the best span found, {choice.text!r}, has confidence " \
                f"{choice.probability:.2f} (threshold {threshold:.2f})" if choice else ""
            ans.abstained = True
            ans.abstain_reason = "the passages found do not answer it" + found
            return
        where = choice.sentence
        cite = Citation.of(1, where, answer=where.source_offsets(choice.start, choice.end),
                           also_in=tuple(also.get(where.passage_id, ())))
        ans.raw_answer = choice.text
        ans.answer = f"{choice.text} [1]"
        ans.sources = [cite]
        ans.sentences = [AnswerSentence(choice.text, (1,), 1.0, True)]
        ans.confidence = round(choice.probability, 4)

    @staticmethod
    def _document_texts(kept: Sequence[Hit], read: Sequence[Context]) -> dict[int, str]:
        """Passage id → the text of every kept passage of its document, as the reader reads
        them (``read``, one per kept passage: "title. text"), in the order kept."""
        by_path: dict[str, list[str]] = {}
        for h, c in zip(kept, read, strict=True):
            by_path.setdefault(h.path, []).append(c.text)
        return {h.passage_id: " ".join(by_path[h.path]) for h in kept}

    def _quote(self, ans: Answer, question: str, scored: Sequence[ScoredSentence],
               kept: Sequence[Hit], per_passage: dict[int, list[Sentence]], opts: AskOptions,
               also: dict[int, list[str]]) -> None:
        """The best supporting sentences, quoted (never a metadata block or a lead-in).
        "What does X say about Y" names its source: a sentence of a passage that mentions
        every name of the question (in its title, section or file name, else in its text)
        comes first, when the filter rates it at least a quarter as well as the best
        sentence. "What does PEP 703 propose / describe / …" is answered by that document's
        own statement of it ("This PEP proposes …", :func:`~ragctl.ask.answer.own_statement`),
        wherever it is in the document. Two windows of one long sentence are quoted as one
        piece of it."""
        ans.kind = "quote"
        names, idents = question_names(question), identifiers(question)

        def naming(text: str) -> bool:  # every name, and every numbered name ("PEP 572")
            return all(names_found(names, text)) and all(mentions(text, i) for i in idents)

        # a document so titled, or so named by its file ("pep-0008.rst"), before those
        # that cite it in passing ("… than :pep:`8` recommends")
        titled = {h.passage_id for h in kept if naming(f"{document_name(h)} {h.place}")}
        named = titled or {h.passage_id for h in kept if naming(f"{h.title} {h.place} {h.text}")}
        # ... and, first of all, a section the question names ("about one-line docstrings")
        # in a document so named
        named_paths = {h.path for h in kept if h.passage_id in named}
        section = {h.passage_id for h in kept if heading_named(question, h.place)
                   and (not names or h.path in named_paths)}
        plain = [s for s in scored if not unquotable(s.sentence.text)]
        top = max((s.score for s in plain), default=0.0)
        ranked = sorted(plain, key=lambda s: (
            s.sentence.passage_id not in section,
            not (s.sentence.passage_id in named and s.score >= top / 4), -s.score))
        chosen: list[Sentence] = []
        # "What does PEP 703 propose?": the named document's own statement of it, alone
        stem = asked_statement(question) if names or idents else None
        own = self._own_statement(stem, idents, [h.path for h in kept
                                                 if h.passage_id in titled]) \
            if stem is not None else None
        if own is not None:
            chosen, ranked = [own], []
        for s in ranked:
            if len(chosen) >= opts.quote_sentences:
                break
            if chosen and s.score < max(opts.filter_threshold, ranked[0].score * 0.5):
                break
            if all(s.sentence.text != c.text for c in chosen):
                chosen.append(s.sentence)
        if not chosen:
            ans.abstained = True
            ans.abstain_reason = "no sentence of the passages found says it"
            return
        chosen = joined(chosen, {s.id: s for h in kept for s in per_passage[h.passage_id]})
        chosen.sort(key=lambda c: (c.passage_id, c.start_char))
        ans.sources = [Citation.of(i, c, also_in=tuple(also.get(c.passage_id, ())))
                       for i, c in enumerate(chosen, start=1)]
        ans.sentences = [AnswerSentence(c.text, (i,), 1.0, True)
                         for i, c in enumerate(chosen, start=1)]
        ans.raw_answer = " ".join(c.text for c in chosen)
        ans.answer = " ".join(f"{c.text} [{i}]" for i, c in enumerate(chosen, start=1))

    def _own_statement(self, stem: str, idents: Sequence[tuple[str, str]],
                       paths: Sequence[str]) -> Sentence | None:
        """The first sentence in which a document the question names says what it does
        (:func:`~ragctl.ask.answer.own_statement`), with the verb asked or another: among
        ``paths`` (those of the passages kept), then, for a numbered name ("PEP 572"), any
        indexed document so titled or so named by its file, retrieved or not."""
        store = self.collection.store
        if idents:
            paths = [*paths, *self._named_paths(idents)]
        for path in dict.fromkeys(paths):
            # the verb asked ("proposes"), else any statement of purpose ("This PEP
            # specifies …" for "What does PEP 723 propose?")
            for stems in ([stem], STATEMENT_STEMS):
                own = next((s for s in store.sentences_like(path, [f"%{x}%" for x in stems])
                            if any(own_statement(x, s.text) for x in stems)
                            and not is_metadata(s.text)), None)
                if own is not None:
                    return own
        return None

    OPTION_SEARCH = 5

    def _choice(self, ans: Answer, question: str, hits: Sequence[Hit], kept: Sequence[Hit],
                per_passage: dict[int, list[Sentence]], scored: Sequence[ScoredSentence],
                relevance: dict[int, float], also: dict[int, list[str]]) -> bool:
        """One of the two things the question names ("Who is older, A or B?"), as the
        documents write it, from what they say of each (``_said_of``). Which came first or
        later is read from the years given there; otherwise the generator chooses, by how
        much that evidence raises each one's likelihood over the question alone (FilCo's
        CXMI). False when the documents do not mention both (the reader answers instead)."""
        options = choice_options(question)
        picked = self._said_of(options, hits, kept, per_passage, scored, relevance) \
            if options else None
        if picked is None:
            return False
        ans.kind = "span"
        order = time_order(question)
        years = [p[3] for p in picked]
        if order and years[0] is not None and years[1] is not None and years[0] != years[1]:
            pick = years.index(min(years) if order < 0 else max(years))  # type: ignore[type-var]
            rule = f"the {'earlier' if order < 0 else 'later'} year ({years[0]}, {years[1]})"
            ans.confidence = round(min(relevance.get(p[2].passage_id, 0.0) for p in picked), 4)
        else:
            texts = [s.text[a:b] for s, (a, b), _, _ in picked]
            gen = self.generator
            ans.models["generator"] = gen.name
            prompt = build_prompt(question, [p[2].text for p in picked])
            alone = build_prompt(question, [])
            gain = [gen.logprob(prompt, " " + t) - gen.logprob(alone, " " + t) for t in texts]
            pick = int(np.argmax(gain))
            rule = "the generator, given what is said of both"
            ans.confidence = round(1 / (1 + float(np.exp(-abs(gain[0] - gain[1])))), 4)
        s, (a, b), _, _ = picked[pick]
        if s.text[a:b].lower().endswith(("'s", "’s")):
            b -= 2
        cited = [s] + [p[2] for p in (picked[pick], picked[1 - pick]) if p[2].id != s.id]
        ans.candidates = [{"answer": p[0].text[slice(*p[1])], "rule": rule, "year": p[3],
                           "chosen": i == pick} for i, p in enumerate(picked)]
        ans.raw_answer = s.text[a:b]
        marks = tuple(range(1, len(cited) + 1))
        ans.answer = ans.raw_answer + "".join(f" [{i}]" for i in marks)
        ans.sources = [Citation.of(i, c, answer=c.source_offsets(a, b) if i == 1 else None,
                                   also_in=tuple(also.get(c.passage_id, ())))
                       for i, c in enumerate(cited, start=1)]
        ans.sentences = [AnswerSentence(ans.raw_answer, marks, 1.0, True)]
        return True

    def _said_of(self, names: Sequence[str], hits: Sequence[Hit], kept: Sequence[Hit],
                 per_passage: dict[int, list[Sentence]], scored: Sequence[ScoredSentence],
                 relevance: dict[int, float]
                 ) -> list[tuple[Sentence, tuple[int, int], Sentence, int | None]] | None:
        """For each name, a sentence that mentions it (and where), what the documents say
        of it — the first sentence of its own document (named so by its title or file
        name; a header block counts: "Status: Final"), else the best sentence that
        mentions it — and the year given there (a labelled date's, else the first near
        the start or the mention); None unless every name is mentioned, each by a
        sentence of its own. A document named after one is searched for when the
        question's own search missed it."""
        kept_ids = {h.passage_id for h in kept}
        pool = [*kept, *sorted((h for h in hits if h.passage_id not in kept_ids),
                               key=lambda h: -relevance[h.passage_id])]
        for name in names:
            if all(title_rank(name, h.title, h.path) for h in pool):
                seen = {h.passage_id for h in pool}
                pool += [h for h in self.retriever.search(name, limit=self.OPTION_SEARCH)
                         if h.passage_id not in seen and title_rank(name, h.title, h.path) == 0]
        sentences = {**per_passage, **self.collection.store.sentences_of(
            [h.passage_id for h in pool if h.passage_id not in per_passage])}
        filter_scores = {s.sentence.id: s.score for s in scored}
        picked: list[tuple[Sentence, tuple[int, int], Sentence, int | None]] = []
        for name in names:
            rank = {h.passage_id: title_rank(name, h.title, h.path) for h in pool}
            ranked = sorted(pool, key=lambda h: rank[h.passage_id])
            named = next((h for h in ranked if rank[h.passage_id] == 0), None)
            # its own document: what it says first (a header's fields too: "Status: Final")
            lead = (self.collection.store.sentences_like(named.path, ["%"], limit=1)
                    or sentences[named.passage_id][:1]) if named is not None else []
            mentions = [(s, where) for s in lead if (where := option_in(name, s.text))]
            mentions += [(s, where) for h in ranked for s in sentences[h.passage_id]
                         if not is_metadata(s.text) and (where := option_in(name, s.text))]
            if not mentions:
                return None
            if lead:
                about = lead[0]
                year = stated_year(about.text, YEAR_NEAR * 2)
            else:
                about, (_, end) = max(mentions, key=lambda m: filter_scores.get(m[0].id, -1.0))
                year = first_year(about.text[end:end + YEAR_NEAR])
            shown = next((m for m in mentions if m[0].id == about.id), mentions[0])
            picked.append((shown[0], shown[1], about, year))
        if len({p[2].id for p in picked}) < len(picked):
            return None
        return picked

    SILENT_SENTENCES = 4

    def _yes_no(self, ans: Answer, question: str, hits: Sequence[Hit], kept: Sequence[Hit],
                per_passage: dict[int, list[Sentence]], scored: Sequence[ScoredSentence],
                relevance: dict[int, float], also: dict[int, list[str]]) -> None:
        """Yes when the evidence states what the question asks (:func:`stated_share`): for
        "are A and B both …?", what the documents say of each (``_said_of``) states the rest
        of the question; otherwise one of the two best sentences (from two passages when
        they differ) states more than YES_STATED of its words. No otherwise — unless the
        documents are silent on it (:func:`~ragctl.ask.answer.silent_on` over the best
        sentences and their documents' names): then no answer. The sentences weighed are
        cited."""
        ans.kind = "yes-no"
        ranked = sorted((s for s in scored if not is_metadata(s.sentence.text)),
                        key=lambda s: -s.score)
        if not ranked:
            ans.abstained, ans.abstain_reason = True, "no sentence of the passages found says it"
            return
        first = ranked[0].sentence
        second = next((s.sentence for s in ranked[1:]
                       if s.sentence.passage_id != first.passage_id), None)
        chosen = [first, *([second] if second is not None else [])]
        pair = pair_named(question)
        said = self._said_of(pair, hits, kept, per_passage, scored, relevance) if pair else None
        if pair is not None and said is not None:
            chosen = [p[2] for p in said]
            share = min(stated_share(question, c.text, leave_out=pair) for c in chosen)
        else:
            share = max(stated_share(question, c.text) for c in chosen)
            # silent: what the best sentences (SILENT_SENTENCES, the two weighed among them),
            # together, and their documents' titles and file names ("pep-0008.rst") leave
            # unsaid
            near = [*chosen, *(s.sentence for s in ranked[:self.SILENT_SENTENCES])]
            evidence = " ".join([*dict.fromkeys(c.text for c in near),
                                 *dict.fromkeys(document_name(c) for c in near)])
            silent = silent_on(question, evidence) if share <= YES_STATED else []
            if silent:
                ans.abstained = True
                ans.abstain_reason = "the documents do not say: the sentences found do not " \
                    f"mention {', '.join(repr(w) for w in silent[:3])}"
                ans.candidates = [{"answer": "", "stated": round(share, 4),
                                   "rule": "not stated", "silent_on": silent}]
                return
        word = "Yes" if share > YES_STATED else "No"
        ans.candidates = [{"answer": word, "stated": round(share, 4),
                           "rule": "what is said of each" if said else "the best sentence"}]
        ans.confidence = round(share if word == "Yes" else 1 - share, 4)
        ans.raw_answer = word
        ans.answer = word + "".join(f" [{i}]" for i in range(1, len(chosen) + 1))
        ans.sources = [Citation.of(i, s, also_in=tuple(also.get(s.passage_id, ())))
                       for i, s in enumerate(chosen, start=1)]
        ans.sentences = [AnswerSentence(word, tuple(range(1, len(chosen) + 1)), 1.0, True)]

    def _generate(self, ans: Answer, question: str, kept: Sequence[Hit],
                  per_passage: dict[int, list[Sentence]], probs: np.ndarray,
                  order: Sequence[int], kept_order: Sequence[int], context: list[Sentence],
                  opts: AskOptions, on_token: Callable[[str], None] | None) -> None:
        """The generator's own words from the context, checked against it."""
        ans.kind = "free"
        gen = self.generator
        ans.models["generator"] = gen.name
        ans.tokens["full_context"] = gen.count_tokens(" ".join(h.text for h in kept))
        ans.tokens["context"] = gen.count_tokens(" ".join(s.text for s in context))
        t = time.perf_counter()
        if opts.marginalize:
            weights = probs[[order[k] for k in kept_order]]
            text = self._marginalize(question, kept, per_passage, weights, ans, opts)
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
        ans.notes = checked.notes()
        sentences = [s for s in checked.sentences if s.supported]
        ans.sentences = sentences
        ans.answer = " ".join(
            s.text + "".join(f" [{n}]" for n in s.citations) for s in sentences).strip()
        cited = sorted({n for s in sentences for n in s.citations})
        ans.sources = [ans.context[n - 1] for n in cited]

    def ask_long(self, question: str, options: LongOptions | None = None) -> LongAnswer:
        """GINGER: nuggets → facets → ranked facets → cited summaries (see longform)."""
        return answer_long(self, clean_question(question), options or LongOptions())

    def _marginalize(self, question: str, kept: Sequence[Hit],
                     per_passage: dict[int, list[Sentence]], probs: np.ndarray, ans: Answer,
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


def clean_question(question: str) -> str:
    """The question on one line; an empty or overlong one is an error."""
    question = " ".join(question.split())
    if not question:
        raise RagctlError("the question is empty")
    if len(question) > MAX_QUESTION_CHARS:
        raise RagctlError(f"the question is {len(question)} characters long; "
                          f"keep it under {MAX_QUESTION_CHARS}")
    return question


def ask_index(settings: Settings, question: str, *, options: AskOptions | None = None,
              long: LongOptions | None = None, on_token: Callable[[str], None] | None = None,
              log: bool = False) -> Answer | LongAnswer:
    """Open the index of ``settings`` and answer once: ``ask --long`` when ``long`` is given.
    With ``log``, the question and its answer are kept in the index (``ragctl logs``)."""
    with Collection.open(settings) as collection, Pipeline(collection) as pipeline:
        return answer_with(pipeline, question, options=options, long=long,
                           on_token=on_token, log=log)


def answer_with(pipeline: Pipeline, question: str, *, options: AskOptions | None = None,
                long: LongOptions | None = None, on_token: Callable[[str], None] | None = None,
                log: bool = False) -> Answer | LongAnswer:
    """:func:`ask_index` with a pipeline already open (the service keeps one per index)."""
    collection = pipeline.collection
    result: Answer | LongAnswer
    if long is not None:
        result = pipeline.ask_long(question, long)
    else:
        result = pipeline.ask(question, options or AskOptions.from_settings(pipeline.settings),
                              on_token=on_token)
    if log and collection.writable:
        d = result.to_dict()
        collection.store.log_answer(result.question, result.answer, result.abstained, {
            k: d.get(k) for k in ("schema", "kind", "abstain_reason", "sources",
                                  "confidence", "models")})
    return result
