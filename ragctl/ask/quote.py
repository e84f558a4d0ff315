"""Quoted answers: "what does X say about Y", "how do I …", "why …", "list …".

The best supporting sentences, quoted whole and cited, from the source the question names
first (its document, by title or file name, and the section it names); "What does PEP 703
propose?" is answered by that document's own statement of it (:func:`own_statement_in`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ragctl.ask import documents
from ragctl.ask.answer import Context
from ragctl.ask.documents import (
    document_name,
    heading_named,
    identifiers,
    is_metadata,
    mentions,
    names_found,
    question_names,
    unquotable,
)
from ragctl.ask.question import STATEMENT_STEMS, asked_statement, explains, own_statement
from ragctl.ask.switches import fired, on
from ragctl.models.filter import joined
from ragctl.records import AnswerSentence, Citation, Sentence

if TYPE_CHECKING:
    from ragctl.ask.stages import AskOptions, Evidence, LoadedStages
    from ragctl.models.reader import Reader
    from ragctl.records import Answer


def answer(stages: LoadedStages, ans: Answer, ev: Evidence, opts: AskOptions) -> None:
    """The best supporting sentences, quoted (never a metadata block or a lead-in).
    "What does X say about Y" names its source: a sentence of a passage that mentions
    every name of the question (in its title, section or file name, else in its text)
    comes first, when the filter rates it at least a quarter as well as the best
    sentence. "What does PEP 703 propose / describe / …" is answered by that document's
    own statement of it ("This PEP proposes …", :func:`~ragctl.ask.answer.own_statement`),
    wherever it is in the document. Two windows of one long sentence are quoted as one
    piece of it."""
    ans.kind = "quote"
    question, scored, kept, per_passage, also = \
        ev.question, ev.scored, ev.kept, ev.per_passage, ev.also
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
    if not on("named_source_first"):
        named, section = set(), set()
    elif named or section:
        fired("named_source_first")
    plain = [s for s in scored
             if not (on("no_lead_in") and unquotable(s.sentence.text, s.sentence.place))]
    if len(plain) < len(scored):
        fired("no_lead_in")
    top = max((s.score for s in plain), default=0.0)
    ranked = sorted(plain, key=lambda s: (
        s.sentence.passage_id not in section,
        not (s.sentence.passage_id in named and s.score >= top / 4), -s.score))
    chosen: list[Sentence] = []
    # "What does PEP 703 propose?": the named document's own statement of it, alone
    stem = asked_statement(question) if (names or idents) and on("own_statement") else None
    own = own_statement_in(stages, stem, idents, [h.path for h in kept
                                                  if h.passage_id in titled]) \
        if stem is not None else None
    if own is not None:
        chosen, ranked = [own], []
        fired("own_statement")
    elif ev.reader is not None and explains(question) and on("reason_by_reader"):
        # "why …", "how did …": the sentence holding the reader's answer comes first; the
        # filter's best restates the question ("ABC was forced to sell …") more often
        # than it gives the reason, which the reader finds in the sentence beside it
        found = read_sentence(ev.reader, ev, opts.reader_passages)
        if found is not None and not unquotable(found.text, found.place):
            chosen = [found]
            fired("reason_by_reader")
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
    if on("points_back"):
        pointed = with_antecedents(chosen, per_passage)
        if len(pointed) > len(chosen):
            fired("points_back")
        chosen = pointed
    chosen.sort(key=lambda c: (c.passage_id, c.start_char))
    ans.sources = [Citation.of(i, c, also_in=tuple(also.get(c.passage_id, ())))
                   for i, c in enumerate(chosen, start=1)]
    ans.sentences = [AnswerSentence(c.text, (i,), 1.0, True)
                     for i, c in enumerate(chosen, start=1)]
    ans.raw_answer = " ".join(c.text for c in chosen)
    ans.answer = " ".join(f"{c.text} [{i}]" for i, c in enumerate(chosen, start=1))


# a sentence that opens by pointing back at the one before it ("To assist in this, …",
# "This is why …", "For this reason …", "That way …"): it says nothing alone
_POINTS_BACK = re.compile(
    r"^(?:(?:to (?:assist|help) (?:in|with)|because of|as a result of|due to|despite|"
    r"in addition to|besides|after|before) (?:this|that|these|those)\s*[,;]|"
    r"for (?:this|that|these|those) reasons?\b|(?:this|that) (?:is|was|means|meant|way)\b|"
    r"(?:therefore|thus|hence|as a result|consequently)\b)", re.I)


def with_antecedents(chosen: list[Sentence], per_passage: Mapping[int, Sequence[Sentence]]
                     ) -> list[Sentence]:
    """``chosen`` with the sentence before each one that points back at it
    (:data:`_POINTS_BACK`), from the same passage, quoted with it."""
    out: list[Sentence] = []
    for c in chosen:
        if _POINTS_BACK.match(c.text.strip()):
            before = [s for s in per_passage.get(c.passage_id, ())
                      if s.end_char <= c.start_char]
            if before and all(b.id != before[-1].id for b in [*out, *chosen]):
                out.append(before[-1])
        out.append(c)
    return out


def read_sentence(reader: Reader, ev: Evidence, passages: int) -> Sentence | None:
    """The sentence that holds the reader's best span in the ``passages`` most relevant
    kept passages (a span across two sentences counts for neither), or None."""
    contexts = [Context.of(h.title, ev.per_passage[h.passage_id], ev.relevance[h.passage_id])
                for h in ev.kept[:passages]]
    best: tuple[float, Sentence] | None = None
    for cands in reader.read(ev.question, [c.text for c in contexts]):
        for cand in cands:
            where = contexts[cand.context].locate(cand.start, cand.end)
            if where is not None and (best is None or cand.score > best[0]):
                best = (cand.score, where[0])
    return best[1] if best is not None else None


def own_statement_in(stages: LoadedStages, stem: str, idents: Sequence[tuple[str, str]],
                     paths: Sequence[str]) -> Sentence | None:
    """The first sentence in which a document the question names says what it does
    (:func:`~ragctl.ask.question.own_statement`), with the verb asked or another: among
    ``paths`` (those of the passages kept), then, for a numbered name ("PEP 572"), any
    indexed document so titled or so named by its file, retrieved or not."""
    store = stages.collection.store
    if idents:
        paths = [*paths, *documents.named_paths(stages.collection, idents)]
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
