"""``ask``: retrieve → relevance estimator → abstain? → context filter → answer → verify.

The pipeline is entered once per question. Its stages (:class:`~ragctl.ask.stages.
LoadedStages`, each model from the registry, :mod:`ragctl.models`) find the passages and
the sentences; the pipeline calls them in order, dispatches once on the kind of answer the
question wants (its form, :func:`~ragctl.ask.question.question_type`, and the question-kind
model, :meth:`~ragctl.ask.stages.LoadedStages.question_type`) to the strategy that answers
it — a span of a
cited sentence (:mod:`~ragctl.ask.span`, with :mod:`~ragctl.ask.fields` first), one of two
things (:mod:`~ragctl.ask.choice`), quoted sentences (:mod:`~ragctl.ask.quote`), yes or no
(:mod:`~ragctl.ask.yesno`), the generator's own words (:mod:`~ragctl.ask.free`) — which
receives the loaded stages and never calls back, then times it all and collects what was
done into an :class:`Answer`. ``ask --long`` is :mod:`ragctl.ask.longform`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ragctl.ask import choice, folder, free, quote, span, yesno
from ragctl.ask.locate import with_lines
from ragctl.ask.longform import LongAnswer, LongOptions, answer_long
from ragctl.ask.stages import (  # noqa: F401  (importable from here, as before)
    CONTEXT_MODES,
    KEEP_TOP,
    AskOptions,
    ContextMode,
    LoadedStages,
)
from ragctl.ask.switches import rules_off
from ragctl.config import Settings
from ragctl.errors import RagctlError
from ragctl.records import Answer
from ragctl.store.collection import Collection

MAX_QUESTION_CHARS = 2000


class Pipeline(LoadedStages):
    """Holds the loaded stages for one index; ``ask`` may be called many times.

    Stages load lazily through the registry; pass an instance to use another one."""

    def ask(self, question: str, options: AskOptions | None = None, *,
            on_token: Callable[[str], None] | None = None) -> Answer:
        """Answer from the documents: a span of a cited sentence for a factoid question,
        quoted sentences for "what does X say about Y", yes or no from the evidence; the
        generator's own words with ``free`` (or without a reader, or in the FULL and PSG
        context modes). Abstains when the evidence does not hold the answer."""
        opts = options or AskOptions()
        with rules_off(opts.rules_off) as fired:
            ans = self._ask(question, opts, on_token)
        ans.rules = fired
        if ans.sources:
            ans.sources = with_lines(self.collection.store, ans.sources)
        return ans

    def _ask(self, question: str, opts: AskOptions,
             on_token: Callable[[str], None] | None) -> Answer:
        question = clean_question(question)
        if opts.context not in CONTEXT_MODES:
            raise RagctlError(f"unknown context mode {opts.context!r}; "
                              f"choose one of {', '.join(CONTEXT_MODES)}")
        ans = Answer(question=question, context_mode=opts.context)
        t_all = time.perf_counter()
        qtype = self.question_type(question)
        ans.question_type = qtype.kind + (f":{qtype.expects}" if qtype.expects != "any" else "")
        ev = self.evidence(question, qtype, opts, ans)
        if not ev.enough:
            return _abstain(ans, ev.reason or "", t_all)

        t = time.perf_counter()
        if ev.reader is None:  # the generator's own words
            ans.timings["answer"] = 0.0
            free.answer(self, ans, ev, opts, on_token)
        elif qtype.kind != "yes-no" and folder.answer(self, ans, ev):
            pass  # a sum, count or list over several documents
        elif qtype.kind == "quote":
            quote.answer(self, ans, ev, opts)
        elif qtype.kind == "yes-no":
            yesno.answer(self, ans, ev)
        elif qtype.kind == "choice":
            choice.answer(self, ans, ev, ev.reader, qtype, opts)
        else:
            span.answer(self, ans, ev, ev.reader, qtype, opts)
        ans.timings.setdefault("answer", time.perf_counter() - t)
        if not ans.abstained and not ans.answer_text.strip():
            return _abstain(ans, "the answer came out empty", t_all)
        if not ans.abstained and not ans.sources:
            return _abstain(ans, "the answer is not supported by the sentences found", t_all)
        ans.timings["total"] = time.perf_counter() - t_all
        return ans

    def ask_long(self, question: str, options: LongOptions | None = None) -> LongAnswer:
        """GINGER: nuggets → facets → ranked facets → cited summaries (see longform)."""
        return answer_long(self, clean_question(question), options or LongOptions())


def _abstain(ans: Answer, reason: str, t_all: float) -> Answer:
    ans.abstained, ans.abstain_reason = True, reason
    ans.timings["total"] = time.perf_counter() - t_all
    return ans


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
