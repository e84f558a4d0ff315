"""One of two things: "Who is older, A or B?", "Which band, A or B, had more members?".

The answer is one of the two things the question names
(:func:`~ragctl.ask.question.choice_options`): from a table's rows for them when a table
holds both (:func:`ragctl.ask.compute.choose`); else as the documents write it, from what they
say of each (:func:`~ragctl.ask.documents.said_of`): which came first or later from the
years given there (:func:`~ragctl.ask.question.time_order`), else the generator's choice.
When the documents do not mention both, the reader answers (:mod:`ragctl.ask.span`), and
an answer that is neither is no answer (:func:`~ragctl.ask.rules.neither_option`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ragctl.ask import compute, span
from ragctl.ask.documents import said_of
from ragctl.ask.question import choice_options, time_order
from ragctl.ask.rules import neither_option
from ragctl.models.generate import build_prompt
from ragctl.records import AnswerSentence, Citation

if TYPE_CHECKING:
    from ragctl.ask.question import QuestionType
    from ragctl.ask.stages import AskOptions, Evidence, LoadedStages
    from ragctl.models.reader import Reader
    from ragctl.records import Answer


def answer(stages: LoadedStages, ans: Answer, ev: Evidence, reader: Reader,
           qtype: QuestionType, opts: AskOptions) -> None:
    """One of the two things, from what the documents say of each (:func:`choose_between`); else
    the reader's span (:func:`ragctl.ask.span.answer`), unless it is neither of them."""
    options = choice_options(ev.question)
    if options and compute.choose(stages, ans, ev, options):  # a table's rows compared
        return
    if choose_between(stages, ans, ev):
        return
    span.answer(stages, ans, ev, reader, qtype, opts)
    neither_option(ans, ev.question, opts.abstain)


def choose_between(stages: LoadedStages, ans: Answer, ev: Evidence) -> bool:
    """One of the two things the question names ("Who is older, A or B?"), as the
    documents write it, from what they say of each (:func:`~ragctl.ask.documents.said_of`).
    Which came first or later is read from the years given there; otherwise the generator
    chooses, by how much that evidence raises each one's likelihood over the question
    alone (FilCo's CXMI). False when the documents do not mention both (the reader
    answers instead)."""
    question, relevance = ev.question, ev.relevance
    options = choice_options(question)
    picked = said_of(stages.collection, stages.retriever, options, ev.hits, ev.kept,
                     ev.per_passage, ev.scored, relevance) if options else None
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
        gen = stages.generator
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
                               also_in=tuple(ev.also.get(c.passage_id, ())))
                   for i, c in enumerate(cited, start=1)]
    ans.sentences = [AnswerSentence(ans.raw_answer, marks, 1.0, True)]
    return True
