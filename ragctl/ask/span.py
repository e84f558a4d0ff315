"""A factoid's answer: a span of a cited sentence, chosen by the reader.

The reader reads the question with the most relevant kept passages (and the bridge of the
filter's two best sentences from two passages) and proposes spans;
:func:`~ragctl.ask.answer.choose` ranks them and judges whether the documents answer
(:mod:`ragctl.ask.rules` vetoes some), :func:`~ragctl.ask.answer.completed` completes the
first; ask abstains below the answerability threshold. A question about a document's
author or a labelled field is answered from that line first (:mod:`ragctl.ask.fields`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ragctl.ask import cells, compute, fields, figures
from ragctl.ask.answer import Context, bridge_context, choose, completed
from ragctl.ask.rules import (
    asked_arithmetic,
    counts,
    fits,
    measured,
    names_result,
    states_result,
)
from ragctl.ask.switches import fired, on
from ragctl.records import AnswerSentence, Citation, Hit

if TYPE_CHECKING:
    from ragctl.ask.question import QuestionType
    from ragctl.ask.stages import AskOptions, Evidence, LoadedStages
    from ragctl.models.reader import Reader
    from ragctl.records import Answer


def answer(stages: LoadedStages, ans: Answer, ev: Evidence, reader: Reader,
           qtype: QuestionType, opts: AskOptions) -> None:
    """The document's author line when the question asks for it, else the table cell of
    the row the question names (:mod:`ragctl.ask.cells`), else a labelled field, by the
    label's words or else by what it means (both when a passage reached the relevance
    threshold: ``ev.reason`` is None), else
    the reader's best span (:func:`read_span`) — refused when it is a neighbouring cell of
    a row that has no column for the question."""
    if ev.reason is None and on("author_line") and fields.author_answer(stages, ans, ev):
        fired("author_line")
        return
    if compute.answer(stages, ans, ev):
        if ans.abstained and figures.answer(stages, ans, ev):
            ans.abstained, ans.abstain_reason = False, None  # no table's: two stated figures
        return
    if compute.by_cue(stages, ans, ev, before_lookup=True):  # "by how much … from 2020 to
        return  # 2021": two cells, not the one the lookup would take
    if figures.answer(stages, ans, ev):  # "how many days longer … than …": two figures
        return  # stated in sentences or rows apart
    verdict = cells.find(stages, ev, qtype.expects) if on("table_cell") else cells.CellVerdict()
    if verdict.choice is not None and on("typed_answer") and (
            (qtype.measure == "count" and not counts(verdict.choice.cell.value))
            or (qtype.measure == "things" and measured("things", verdict.choice.cell.value)
                is None)
            or not fits("any", verdict.choice.cell.value, dimension=qtype.dimension)):
        fired("typed_answer")  # "how many of the deciles …" is no cell of "6,8"; "the
        verdict = cells.CellVerdict()  # supply current" none of "3.6V"
    if verdict.choice is not None and on("no_input_as_result") and (
            op := asked_arithmetic(ev.question)) is not None and not names_result(
            " ".join([verdict.choice.cell.column, *(verdict.choice.row.cells[k].value
                                                    for k in verdict.choice.row.key)])):
        fired("no_input_as_result")  # "how much more is A than B": one cell is an input,
        refuse_input(ans, op, verdict.choice.cell.value,  # unless its header or its row
                     verdict.choice.row.sentence.path)  # says it is a result ("Change")
        return
    if verdict.choice is not None:
        cells.cite(ans, ev, verdict.choice)
        fired("table_cell")
        return
    if verdict.empty is not None:  # the table says "-": not stated, and no neighbour's
        cells.refuse_empty(ans, verdict.empty)
        fired("table_cell")
        return
    if compute.by_cue(stages, ans, ev):  # no row's cell: what the question's form asks
        return
    # a document the question's names point to alone ("invoice R0005532486") is the one
    # meant: its labelled field is read however its passages rate
    named = ev.reason is None or ev.grounding.identifies
    if named and on("labelled_field") and fields.field_answer(stages, ans, ev):
        fired("labelled_field")
        return
    if ev.reason is None and on("matched_label") and fields.matched_field(stages, ans, ev, qtype):
        fired("matched_label")
        return
    read_span(stages, ans, ev, reader, qtype, opts)
    if on("no_such_column") and cells.refuse_neighbour(ans, verdict):
        fired("no_such_column")


def read_span(stages: LoadedStages, ans: Answer, ev: Evidence, reader: Reader,
              qtype: QuestionType, opts: AskOptions) -> None:
    """The reader's best span in the most relevant passages, if answerable."""
    question, kept, per_passage, scored = ev.question, ev.kept, ev.per_passage, ev.scored
    relevance, also = ev.relevance, ev.also
    ans.kind = "span"
    if not kept:  # the documents the question names hold no passage to read
        ans.abstained = True
        ans.abstain_reason = ev.reason or "no passage of the documents it names was found"
        return
    ans.models["reader"] = reader.name
    filter_scores: dict[int, float] = {}
    for s in scored:
        filter_scores[s.sentence.id] = max(filter_scores.get(s.sentence.id, 0.0), s.score)
    read = [Context.of(h.title, per_passage[h.passage_id], relevance[h.passage_id])
            for h in kept]
    contexts = read[:opts.reader_passages]
    bridge = bridge_context(scored, relevance) if on("bridge_context") else None
    if bridge is not None:
        contexts.append(bridge)
        fired("bridge_context")
    fitted = getattr(reader, "fitted", {})
    choices = choose(reader, question, qtype, contexts, filter_scores,
                     re_best=max(relevance[h.passage_id] for h in kept),
                     ranking=fitted.get("ranking"), answerable=fitted.get("answerability"),
                     passages=document_texts(kept, read))
    ans.candidates = [{"answer": c.text, "probability": round(c.probability, 4),
                       "rank": round(c.rank, 4),
                       **{k: round(v, 4) for k, v in c.features.items()}}
                      for c in choices[:opts.candidates]]
    choice = completed(question, choices) if choices else None
    threshold = stages.answer_threshold(opts.answer_threshold)
    if choice is None or (opts.abstain and choice.probability < threshold):
        found = f"; the best span found, {choice.text!r}, has confidence " \
            f"{choice.probability:.2f} (threshold {threshold:.2f})" if choice else ""
        if choice is not None and choice.features.get("fits") == 0.0:
            asked = MEASURED.get(qtype.measure) or ASKED[qtype.expects]
            found = f": they give no {asked} (the best span found, " \
                f"{choice.text!r}, is not one)"
        ans.abstained = True
        ans.abstain_reason = "the passages found do not answer it" + found
        return
    if on("no_input_as_result") and (op := asked_arithmetic(question)) is not None and \
            not _stated_result(choice.sentence.text, choice.start, choice.end):
        fired("no_input_as_result")  # "how many more …": a figure the text gives is an input
        refuse_input(ans, op, choice.text, choice.sentence.path)
        return
    where = choice.sentence
    cite = Citation.of(1, where, answer=where.source_offsets(choice.start, choice.end),
                       also_in=tuple(also.get(where.passage_id, ())))
    ans.raw_answer = choice.text
    ans.answer = f"{choice.text} [1]"
    ans.sources = [cite]
    ans.sentences = [AnswerSentence(choice.text, (1,), 1.0, True)]
    ans.confidence = round(choice.probability, 4)


def _stated_result(text: str, start: int, end: int) -> bool:
    """Whether a sentence states its span as the result of a comparison or a sum: in a
    table's row, by the span's column or the row's label ("CHANGE ($)", "TOTAL"; not a
    neighbouring cell's header), else by a word of one near it (:func:`states_result`)."""
    row = cells.row_cells(text)
    cell = next((c for c in row if c.start <= start and end <= c.end), None)
    if cell is not None:
        return names_result(f"{cell.column} {row[0].value}")
    return states_result(text, start, end)


def refuse_input(ans: Answer, op: str, value: str, path: str) -> None:
    """Refuse a question that asks for ``op`` ("the difference") of figures, rather than
    answer it with ``value``, one of them."""
    ans.abstained = True
    ans.abstain_reason = (f"it asks for {op} of figures, which was not worked out from the "
                          f"passages found; {value!r} ({Path(path).name}) is one figure, "
                          f"not the result")


# what a question of each expected type asks for, in a refusal's words
ASKED = {"date": "date or time", "number": "number", "money": "amount", "person": "name",
         "place": "place", "email": "e-mail address", "phone": "telephone number",
         "url": "web address", "thing": "name of a thing", "any": "answer"}
MEASURED = {"extent": "length or time with its unit", "age": "age", "frequency":
            "frequency", "integer": "whole number", "count": "count (a whole number)",
            "figure": "figure", "things": "number (not a share)",
            "share": "share (a percentage or a fraction)"}


def document_texts(kept: Sequence[Hit], read: Sequence[Context]) -> dict[int, str]:
    """Passage id → the text of every kept passage of its document, as the reader reads
    them (``read``, one per kept passage: "title. text"), in the order kept."""
    by_path: dict[str, list[str]] = {}
    for h, c in zip(kept, read, strict=True):
        by_path.setdefault(h.path, []).append(c.text)
    return {h.passage_id: " ".join(by_path[h.path]) for h in kept}

