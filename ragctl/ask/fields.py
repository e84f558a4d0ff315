"""Who wrote it, and a form's fields: answers read from a document's own labelled lines.

- **Who wrote it** (:func:`author_answer`): "who wrote / sent …" is answered from the
  author or sender the document states about itself, stored when it was indexed
  (:mod:`ragctl.index.fields`: a byline, an "Author:" or "From:" line), cited to its line.
- **A document's field** (:func:`field_answer`): "when was the mail sent", "what is the
  status of PEP 8" from the stored field the asked label names
  (:data:`ragctl.records.FIELD_LABELS`); **a form's field** ("what is the invoice number
  of …", "when is … due") from the value of the field so labelled in the text
  (:func:`asked_field`, :func:`field_values`), a table's row among them; a label the
  question gives in brackets, as the document writes it ("the invoice amount
  (Rechnungsbetrag)"), is the label read.

Both are tried before the reader is asked (:mod:`ragctl.ask.span`), in the document that
answers best (:func:`~ragctl.ask.documents.answering_document`); when they find nothing,
the reader answers instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING

from ragctl.ask.documents import (
    answering_document,
    document_sentences,
    question_names,
)
from ragctl.ask.rules import echo, fits
from ragctl.ask.switches import fired, on
from ragctl.records import FIELD_LABELS, AnswerSentence, Citation, Hit, Sentence
from ragctl.text import STOPWORDS, blank, content_words, line_starts

if TYPE_CHECKING:
    from ragctl.ask.question import QuestionType
    from ragctl.ask.stages import Evidence, LoadedStages
    from ragctl.records import Answer

# --------------------------------------------------------------------- who wrote it

# "Who wrote the post about …", "who is the author of PEP 723", "who sent the mail about …":
# the answer is the document's own author line (a web page's byline, an "Author:" or
# "From:" field), which the reader rates below the passages that name other people.
_AUTHOR_QUESTION = re.compile(
    r"^(who (wrote|authored|penned|sent|signed|posted)\b|who (is|was|are|were) the "
    r"(authors?|writers?|senders?)\b|by whom\b)", re.I)


def is_authorship(question: str) -> bool:
    """Whether the question asks who wrote (or sent) a document."""
    return _AUTHOR_QUESTION.match(" ".join(question.split())) is not None


# --------------------------------------------------------------------- a form's field

# "What is the invoice number of the Flipkart invoice?", "When is the Azure Interior invoice
# due?", "What is the population of Harbour Town?": the value of a labelled field
# ("Invoice No: # BLR_WFLD2015…", "Due Date: 04/04/2023", a table row "Population:
# 12,400"), which the reader, reading a receipt or a form as one run of text, misses.
_FIELD_QUESTION = re.compile(
    r"^what(?:'s| is| was| are| were)? (?:the |my |our |your |its )?(?P<field>[a-z][\w#-]*"
    r"(?: [a-z][\w#-]*){0,2}?)(?: (?:of|on|for|in|from|at)\b.*)?\??$", re.I)
_OWNER = re.compile(r"^(?P<ask>[Ww]hat(?:'s| is| was| are| were)?) (?:the )?"
                    r"(?:[A-Z][\w.&-]*\s)*[A-Z][\w.&-]*(?:'s|’s|'|’)\s")
_DUE_QUESTION = re.compile(r"^(?:when|by what date|by when) (?:is|was|are|were|should|must) "
                           r".*\b(?:due|paid|be paid)\b", re.I)
# "How much delivery fee was charged on …", "how much tip did I leave …": the amount a
# form labels so
_NOT_AMOUNT_FIELDS = frozenset({"more", "less", "longer", "larger", "higher", "lower", "bigger",
                                "smaller", "greater", "money", "time", "of", "in", "on",
                                "at", "for", "the", "it", "this", "that", "they", "he", "she",
                                "i", "we", "you"})
_HOW_MUCH_FIELD = re.compile(r"^how much (?P<field>[a-z][\w-]*(?: [a-z][\w-]*)?) "
                             r"(?:was|were|is|are|did|do|does|had|has|have)\b", re.I)
# "How much did the Foundation pay for insurance in 2019?", "how much was spent on
# airfare …": the amount labelled with what it was paid for ("Insurance $ 1,384.00")
_PAID_FOR = re.compile(
    r"^how much (?:money )?(?:did|do|does|has|have|had|was|were|is|are|will) .*?\b(?:pay|paid|"
    r"spend|spent|cost|charge|charged|owe|owed|budget|budgeted|allocate|allocated) (?:for|on) "
    r"(?:the |a |an |its |their |his |her |my |our |your )?(?P<field>[a-z][a-z-]*"
    r"(?: [a-z][a-z-]*){0,2}?)(?= (?:in|on|for|at|during|from|according|by|over|of|to|under|"
    r"with)\b|\s*\?|$)", re.I)
_PAID = re.compile(r"[$€£¥₹]|\d[.,]\d\d(?!\d)|\b(?:USD|EUR|GBP|CHF|INR|JPY)\b", re.I)
_SENT_QUESTION = re.compile(r"^when (?:was|were|did) .*\b(?:sent|send|dated|written|write|"
                            r"signed|sign|published|publish|issued|issue|released|modified|"
                            r"updated|revised|changed|amended)\b", re.I)
# "When did the trip end?", "When does the subscription start?": the date a form labels
# with the question's last word, a verb ("End Date: December 10, 2024"); not "when was the
# war", an event's date
_WHEN_LAST = re.compile(r"^when (?:does|did|do|will) [^?]*\b(?P<last>[a-z]{3,})\s*\??$", re.I)
_FIELD_WORD = {"number": r"(?:no\.?|nr\.?|number|num\.?|#)", "no": r"(?:no\.?|number|#)",
               "id": r"(?:id|no\.?|number|#)", "#": r"(?:no\.?|number|#)"}
_NOT_FIELDS = frozenset({"name", "names", "one", "thing", "things", "kind", "type", "way",
                         "main", "first", "last", "best", "difference", "reason", "point",
                         "purpose", "result", "meaning", "role", "idea", "problem"})
# A field's label as invoices and receipts write it in German, French, Dutch, Italian,
# Spanish and Portuguese (and other English words for it): read when the document has no
# label in the question's own words ("Fälligkeitsdatum: 22.01.2016" for "when is the
# invoice due"). The labels of a total are ragctl.ask.folder.TOTAL_LABELS.
FIELD_NAMES: dict[str, tuple[str, ...]] = {
    "due date": ("date due", "payment due", "fälligkeitsdatum", "fällig am", "zahlbar bis",
                 "date d'échéance", "échéance", "vervaldatum", "vervaldag", "data di scadenza",
                 "scadenza", "fecha de vencimiento", "vencimiento", "data de vencimento"),
    "invoice number": ("invoice no", "rechnungsnummer", "rechnungs-nr", "rechnung nr",
                       "numéro de facture", "facture n°", "factuurnummer", "numero fattura",
                       "número de factura", "número da fatura"),
    "invoice date": ("rechnungsdatum", "date de facture", "date de la facture",
                     "factuurdatum", "data fattura", "fecha de factura", "data da fatura"),
    "change": ("rückgeld", "wechselgeld", "rendu", "monnaie rendue", "cambio", "troco"),
}
_NEXT_LABEL = re.compile(r"\s(?:[A-Z][\w./()-]*\s){0,2}[A-Z][\w./()-]*\s?:\s|\s?[;|]\s?")
_ONE_LABEL = re.compile(r"\s[A-Z][\w./()-]*\s?:\s|\s?[;|]\s?")  # within one line
_AMOUNT = re.compile(r"[-(]?[^\w\s]{0,2}\s?\d[\d,.\s]*\d(?:\s?[^\w\s]{1,2})?|[^\w\s]?\d")
_CURRENCY_SIGNS = frozenset("$€£¥₹")
_MONEY = re.compile(r"[$€£¥₹]\d{1,3}(?:[,.]?\d{3})*[.,]\d{2}")  # "$291.90", "€1.234,56"
_NUMERIC_DATE = re.compile(r"\d{1,4}[./-]\d{1,2}[./-]\d{2,4}")
_VALUE_UNIT = re.compile(r"(?:days?|weeks?|months?|years?|hours?|minutes?|kg|g|lbs?|units?|"
                         r"pcs|%|eur|usd|gbp|chf|pln|czk|sek|nok|dkk|inr|jpy)\b|[€$£¥₹]", re.I)


# a bracket that qualifies a label: "Total Amount Due (Inclusive of GST)", "Weight (kg)"
_QUALIFIER = r"\s*\([^()]{1,40}\)"
_RATE_THEN_COLON = re.compile(r"\(?\d{1,2}(?:[.,]\d{1,2})?\s?%\)?\s?:\s*")
# the document's own label, given in brackets after the field the question asks: "the
# invoice amount (Rechnungsbetrag)", "the balance (solde à payer)"
_OWN_LABEL = re.compile(r"\s*\((?P<label>[^\W\d_][^()]{1,38})\)")


def asked_field(question: str) -> str | None:
    """The label a question asks the value of ("invoice number", "due date"; the label
    it gives in brackets, as the document writes it: "Rechnungsbetrag"), or None."""
    q = " ".join(question.split())
    own = _OWN_LABEL.search(q)
    if own is not None and len(own.group("label").split()) <= 4 and \
            own.group("label").split()[0].lower() not in STOPWORDS:
        rest = q[:own.start()] + q[own.end():]
        field = asked_field(rest)
        # the label of the field, right after it: not "the total on the invoice (Fattura)",
        # which names the document in its own words
        if (field is not None and q[:own.start()].lower().endswith(field)) or (
                field is None and re.match(r"(?:how much|when)\b", rest, re.I)):
            return own.group("label").lower()
        if field is not None:
            return field
    if _DUE_QUESTION.match(q):
        return "due date"
    much = _HOW_MUCH_FIELD.match(q)
    if much is not None and not {*much.group("field").lower().split()} & (
            _NOT_FIELDS | _NOT_AMOUNT_FIELDS):
        return much.group("field").lower()
    paid = _PAID_FOR.match(q)
    if paid is not None and paid.group("field").split()[0].lower() not in STOPWORDS:
        return paid.group("field").lower()
    if _SENT_QUESTION.match(q):  # a mail's or a letter's "Date:"
        return "date"
    when = _WHEN_LAST.match(q)
    if when is not None and when.group("last").lower() not in STOPWORDS:
        return f"{when.group('last').lower()} date"  # "when did the trip end": End Date
    # "What was John Stiles' net pay …": the field of a named owner
    q = _OWNER.sub(r"\g<ask> ", q)
    m = _FIELD_QUESTION.match(q)
    if not m:
        return None
    field = m.group("field").lower()
    if field.split()[0] in _NOT_FIELDS or field.split()[-1] in _NOT_FIELDS:
        return None
    return field


def label_words(field: str) -> str:
    """A pattern of the label ``field`` as documents write it: its words apart or joined
    by spaces, underscores or dashes, each in the plural too, "number" as "No." or "#"."""
    return r"[\s_-]*".join(_FIELD_WORD.get(w, re.escape(w) + "s?") for w in field.split())


def field_values(field: str, text: str, lines: Iterable[int] = ()) -> list[tuple[int, int]]:
    """Where ``text`` gives the value of the field labelled ``field`` ("Invoice No: #
    BLR_1", "Due Date: 04/04/2023"): an identifier or a number (with its unit: "15
    Days"), else the words up to the next label, a semicolon, a bar or the end (none when
    there are more than six: that is prose after a colon), or the end of its line (up to
    fifteen words) when ``lines`` (offsets in ``text`` where a source line starts) says
    where lines end:
    "Title: Version Identification and Dependency Specification" is one line, though
    "Dependency Specification Author:" looks like a label. A label without a colon
    ("Booking ID IBZY2087", a receipt's cells) takes an identifier of letters and digits
    only."""
    starts = sorted(lines)
    # a bracket may qualify the label before its colon: "Total Amount Due (Inclusive of
    # GST): 164,390.91", "Weight (kg): 5"
    label = re.compile(r"(?<![\w])" + label_words(field) + rf"(?:{_QUALIFIER}(?=\s*:))?"
                       + r"(?P<mark>\s*[:#]\s*#?\s*|\s+)", re.I)
    out = []
    for m in label.finditer(text):
        start = m.end()
        # the label's rate before its colon: "TVA 20% : 9,34 €", "VAT (21%): 8.68"
        more = _RATE_THEN_COLON.match(text, start) if ":" not in m.group("mark") else None
        if more is not None:
            start = more.end()
        tokens = text[start:].split()
        if not tokens:
            continue
        first = tokens[0].rstrip(",.;")
        # no colon: an identifier follows ("Booking ID IBZY2087"), or an amount or a date
        # that ends a short line of its own ("TOTAL 21.00", "AMOUNT DUE $610.00", "DUE DATE
        # 26/02/2019": a receipt's or an invoice's line)
        line = text[start:next((i for i in starts if i > start), len(text))]
        amount = bool(_AMOUNT.fullmatch(first) or _NUMERIC_DATE.fullmatch(first)) and \
            len(line.split()) <= 2 and len(text.split()) <= 8
        # or money right after the label, wherever the line ends ("Net Pay $ 291.90" in a
        # pay slip's block of text)
        money = _MONEY.fullmatch(first) is not None or (
            first in _CURRENCY_SIGNS and len(tokens) > 1
            and _MONEY.fullmatch("$" + tokens[1].rstrip(",;")) is not None)
        if not m.group("mark").strip() and more is None and not amount and not money and not (
                any(ch.isdigit() for ch in first) and any(ch.isalpha() for ch in first)):
            continue
        if money and first in _CURRENCY_SIGNS:
            value = f"{tokens[0]} {tokens[1].rstrip(',;')}"
        elif any(ch.isdigit() for ch in first):
            value = first
            if first.replace(",", "").replace(".", "").isdigit() and len(tokens) > 1 \
                    and _VALUE_UNIT.fullmatch(tokens[1].rstrip(",.;")):
                value = f"{first} {tokens[1].rstrip(',.;')}"
        else:
            # where the value's line ends: the next line's start, else the text's end
            line_end = next((i for i in starts if i > start), len(text) if starts else None)
            rest = text[start:line_end]
            stop = _NEXT_LABEL.search(rest) if line_end is None else _ONE_LABEL.search(rest)
            tail = (rest[:stop.start()] if stop else rest).split()
            # prose after a colon, not a field's value: more than six words, or fifteen for
            # a value that ends its line (a mail's subject, a PEP's title)
            if not tail or len(tail) > (6 if line_end is None else 15):
                continue
            if tail[-1].endswith(":"):  # another label ("Due Date: Reference:"), no value
                continue
            value = " ".join(tail).rstrip(",.;")
        a = text.find(value.split()[0], start)
        b = a + len(value) if text.startswith(value, a) else -1
        if a >= 0 and b > a:
            out.append((a, b))
    return out


# --------------------------------------------------------------------- the answers

def rule_answer(ans: Answer, s: Sentence, a: int, b: int, rule: str, confidence: float,
                also: dict[int, list[str]]) -> None:
    """``s.text[a:b]`` as the answer, found by ``rule`` rather than the reader."""
    cite(ans, s, s.text[a:b], s.source_offsets(a, b), rule, confidence, also)


def cite(ans: Answer, s: Sentence, value: str, offsets: tuple[int, int], rule: str,
         confidence: float, also: dict[int, list[str]]) -> None:
    """``value`` (at source ``offsets``, inside sentence ``s``) as the answer."""
    ans.kind = "span"
    ans.candidates = [{"answer": value, "rule": rule, "relevance": round(confidence, 4)}]
    ans.raw_answer = value
    ans.answer = f"{ans.raw_answer} [1]"
    ans.sources = [Citation.of(1, s, answer=offsets,
                               also_in=tuple(also.get(s.passage_id, ())))]
    ans.sentences = [AnswerSentence(ans.raw_answer, (1,), 1.0, True)]
    ans.confidence = round(confidence, 4)


def stored_field(stages: LoadedStages, ans: Answer, ev: Evidence, best: Hit,
                 names: Sequence[str], rule: str) -> bool:
    """The first of ``names`` that the document of ``best`` (the passage that answers
    best) states about itself (stored when it was indexed), from the section of ``best``
    first, cited to its line; False when it states none of them."""
    store = stages.collection.store
    fields = [f for f in store.document_fields(best.path) if f.name in names]
    fields.sort(key=lambda f: (f.place != best.place, names.index(f.name)))
    for f in fields:
        s = store.sentence_at(best.path, f.place, f.start_char)
        if s is not None:
            cite(ans, s, f.value, (f.start_char, f.end_char), rule,
                 ev.relevance[best.passage_id], ev.also)
            return True
    return False


def author_answer(stages: LoadedStages, ans: Answer, ev: Evidence) -> bool:
    """Who wrote (or sent) the document that answers best, from the author or sender it
    states about itself (a byline, an "Author:" or "From:" line). False when the question
    is not about the author or the document states none (the reader answers instead)."""
    if not is_authorship(ev.question):
        return False
    found = answering_document(ev.question, ev.hits, ev.kept, ev.relevance,
                               ev.grounding.documents)
    return found is not None and stored_field(stages, ans, ev, found[0], AUTHOR_FIELDS,
                                              "the document's author line")


AUTHOR_FIELDS: tuple[str, ...] = ("author", "sender")


# "what was the total", "what is the amount due", "what is the gross total", "what is the
# total including VAT": the document's own total, read as a folder's sums read it
# (ragctl.ask.folder); a label the folder's sums read as a total ("Brutto",
# "Rechnungsbetrag") asks for it too
_TOTAL_FIELD = re.compile(r"^(?:(?:grand|gross|final|invoice) )?(?:total|amount due|amount|"
                          r"balance(?: due)?|total amount)"
                          r"(?: (?:including|incl|with|inkl) \w+)?$", re.I)


def asks_total(field: str) -> bool:
    """Whether the asked ``field`` is the document's total: "total", "gross total", "final
    amount", or a label a total goes by (:data:`ragctl.ask.folder.TOTAL_LABELS`); not a
    plain "amount" (of what is asked: "the amount of the deposit")."""
    from ragctl.ask.folder import TOTAL_LABELS

    return field.lower() != "amount" and (
        _TOTAL_FIELD.match(field) is not None or field.lower() in TOTAL_LABELS)


def total_answer(stages: LoadedStages, ans: Answer, ev: Evidence, best: Hit,
                 field: str) -> bool:
    """The total of the document of ``best`` (:func:`ragctl.ask.folder.document_total`:
    the largest amount labelled as its total, not before tax nor the tax alone; its
    balance for "balance"), cited to its line; False when it states none."""
    from ragctl.ask.folder import (
        BALANCE_LABELS,
        MAX_SENTENCES,
        TOTAL_LABELS,
        YEAR,
        document_total,
    )

    sentences = stages.collection.store.sentences_like(best.path, ["%"], limit=MAX_SENTENCES)
    if any(not any(y in s.text for s in sentences) for y in YEAR.findall(ev.question)):
        return False  # "the total of the 2016 invoice" is not this document's
    total = document_total(sentences, BALANCE_LABELS if field.startswith("balance")
                           else TOTAL_LABELS)
    if total is None:
        return False
    s = total.sentence
    cite(ans, s, s.text[total.start:total.end], s.source_offsets(total.start, total.end),
         "the document's total", ev.relevance[best.passage_id], ev.also)
    return True


def field_answer(stages: LoadedStages, ans: Answer, ev: Evidence) -> bool:
    """The value of the labelled field the question asks for ("Invoice No: # …",
    "Due Date: 04/04/2023", a table row "Population: 12,400") in the document that
    answers best. When the document gives several values for it, the one whose row
    names the most of the question's other words; False when no value, or no single
    row, stands out (the reader answers instead)."""
    question, relevance = ev.question, ev.relevance
    field = asked_field(question)
    if field is None:
        return False
    found = answering_document(question, ev.hits, ev.kept, relevance,
                               ev.grounding.documents)
    if found is None:
        return False
    best, same = found
    if on("document_total") and asks_total(field) and total_answer(stages, ans, ev, best,
                                                                     field):
        fired("document_total")
        return True
    stored = FIELD_LABELS.get(field)
    if stored is not None and on("stored_field") and stored_field(
            stages, ans, ev, best, (stored,), "the document's own field"):
        fired("stored_field")
        return True
    values: dict[tuple[int, int], tuple[Sentence, int, int]] = {}
    # the label as the question words it, else as an invoice in another language does
    for label in (field, *(FIELD_NAMES.get(field, ()) if on("field_names") else ())):
        first = label.split()[0].replace("%", "")
        for s in document_sentences(stages.collection, best.path, same,
                                    [f"%{first}%:%", f"%{first}%#%"]):
            lines = line_starts(s.raw, s.text) if s.raw is not None else ()
            for a, b in field_values(label, s.text, lines):
                values.setdefault((s.id, a), (s, a, b))
        if values:
            if label != field:
                fired("field_names")
            break
    if not values:
        first = field.split()[0].replace("%", "")
        below = value_below(stages, field, document_sentences(
            stages.collection, best.path, same, [f"%{first}%:"]))
        if below is None:
            return False
        fired("value_below")
        rule_answer(ans, *below, "the document's labelled field", relevance[best.passage_id],
                    ev.also)
        return True
    given = list(values.values())
    if _HOW_MUCH_FIELD.match(" ".join(question.split())):  # an amount, not "TVA F635…"
        given = [(s, a, b) for s, a, b in given if _QUANTITY.search(s.text[a:b])]
        if not given:
            return False
    if _PAID_FOR.match(" ".join(question.split())):  # a sum paid: "$ 1,384.00", not "#375"
        given = [(s, a, b) for s, a, b in given if _PAID.search(s.text[a:b])]
        if not given:
            return False
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
    s, a, b = given[0]
    if blank(s.text[a:b]):  # "HumanEval: -" states no value: the reader may find one
        return False
    rule_answer(ans, s, a, b, "the document's labelled field", relevance[best.passage_id],
                ev.also)
    return True


# A label that stands alone on its line, its value alone on the next ("Due Date:" over
# "04/04/2023", as an invoice laid out in two columns reads): the value is that line, when
# it is an amount, a date or a code, and the line before the label is no bare label too (a
# column of labels, "Invoice Date:" over "Due Date:", has its values in another column).
_BARE_VALUE = re.compile(r"[^\w\s]{0,2}\s?[\w./#-]*\d[\w.,/#-]*(?:\s?[^\w\s]{1,2})?")


def value_below(stages: LoadedStages, field: str, found: Sequence[Sentence]
                ) -> tuple[Sentence, int, int] | None:
    """The value on the line under the label ``field`` standing alone on its own line
    (rule ``value_below``), or None."""
    if not on("value_below"):
        return None
    label = re.compile(r"^\W*" + label_words(field) + r"\s*:$", re.I)
    alone = re.compile(label_words(field), re.I)
    for s in found:
        labels = _LABELS_ROW.findall(s.text.strip()) if _LABELS_ROW_LINE.fullmatch(
            s.text.strip()) else []
        if len(labels) >= 2:  # "Invoice Date: Due Date: Reference:" over their values
            at_label = next((k for k, x in enumerate(labels) if alone.fullmatch(x.strip())),
                            None)
            if at_label is not None and (cell := _value_under(stages, s, at_label, len(labels))):
                return cell
            continue
        if not label.match(s.text.strip()):
            continue
        before, value = _neighbours(stages, s)
        if value is None or (before is not None and before.text.strip().endswith(":")):
            continue  # the last line, or a column of labels
        text = value.text.strip()
        if _BARE_VALUE.fullmatch(text):
            a = value.text.find(text)
            return value, a, a + len(text)
    return None


# A row of labels over a row of their values, one word each ("Invoice Date: Due Date:
# Reference:" over "03/20/2023 04/04/2023 CUSTREF123"): the value under a label is the word
# at its place, when the values are as many as the labels.
_LABELS_ROW = re.compile(r"([^\W\d_][^:;|]{0,30}?)\s*:")
_LABELS_ROW_LINE = re.compile(r"(?:[^\W\d_][^:;|]{0,30}?\s*:\s*){2,}")


def _neighbours(stages: LoadedStages, s: Sentence) -> tuple[Sentence | None, Sentence | None]:
    """The sentences before and after ``s`` in its passage (None where there is none)."""
    around = stages.collection.store.sentences_of([s.passage_id]).get(s.passage_id, [])
    at = next((i for i, t in enumerate(around) if t.id == s.id), None)
    if at is None:
        return None, None
    return (around[at - 1] if at > 0 else None,
            around[at + 1] if at + 1 < len(around) else None)


def _value_under(stages: LoadedStages, s: Sentence, k: int, n: int
                 ) -> tuple[Sentence, int, int] | None:
    """The ``k``-th of the ``n`` words on the line under the row of labels ``s``, when
    that line holds ``n`` words, each a value (:data:`_BARE_VALUE`)."""
    value = _neighbours(stages, s)[1]
    if value is None:
        return None
    words = list(re.finditer(r"\S+", value.text))
    if len(words) != n or not all(_BARE_VALUE.fullmatch(w.group()) for w in words):
        return None
    return value, words[k].start(), words[k].end()


# --------------------------------------------------------------------- a field by meaning

# "Which superhero is entered as the favourite?" over a form's "superhero: One Punch Man",
# "How much does Mario weigh?" over "Weight: 196 lbs", "What does IVFFlat stand for?" over
# "IVFFlat: Inverted File with Flat Compression": the field whose label means what the
# question asks (the embedder's cosine of the two), not one whose label repeats its words
# (:func:`field_answer`). Fitted on the development questions (bench/blind/*-dev.json):
# of the labels that match this well, most give the right value; below, most do not.
LABEL_MATCH = 0.5  # the question's and the label's cosine, at least
LABEL_MARGIN = 0.25  # by how much it beats the next label of the document
LABEL_WORDS = 5  # a longer "label" is prose before a colon
VALUE_WORDS = 12
TYPED_VALUE_WORDS = 4  # a date, a number or a name: not a phrase that holds one
_LABEL_LINE = re.compile(r"^(?P<label>[^\W\d_][^:;|]{0,60}?)\s*:\s*(?P<value>[^;|]*?)\s*$")
_NOT_LABEL = re.compile(r"https?\b|www\.|_|[()\[\]<>{}=\"“”]")


# a number standing on its own (with its currency, its sign or its unit), not inside a code
_QUANTITY = re.compile(r"(?<![^\W\d_])(?<![\d-])\d[\d,.' ]*(?![\w-]*\d)(?![-/])")


@dataclass(frozen=True)
class LabelLine:
    """A line "Label: value" of a sentence (or "Label:" with its value on the next line):
    the value at ``start``–``end`` of the sentence's text."""

    label: str
    sentence: Sentence
    start: int
    end: int

    @property
    def value(self) -> str:
        return self.sentence.text[self.start:self.end]


def label_lines(s: Sentence) -> list[LabelLine]:
    """The labelled lines of a sentence: a short label (not prose before a colon, a web
    address or code) and a short value; a table's row ("a: 1; b: 2") is not one."""
    text = s.text
    starts = sorted(line_starts(s.raw, text)) if s.raw is not None else []
    bounds = [0, *(i for i in starts if 0 < i < len(text)), len(text)]
    spans = list(pairwise(bounds))
    out = []
    for k, (a, b) in enumerate(spans):
        m = _LABEL_LINE.match(text[a:b].strip())
        if m is None:
            continue
        # a bracket that qualifies the label ("Total Amount Due (Inclusive of GST)") is
        # not what it names
        label = re.sub(rf"{_QUALIFIER}$", "", m.group("label").strip()) or \
            m.group("label").strip()
        words = label.split()
        # prose before a colon: a long or lower-case label inside a sentence's text (a
        # wrapped line, "docstrings: what they should contain")
        if len(words) > LABEL_WORDS or _NOT_LABEL.search(label) or (
                label[0].islower() and (a > 0 or len(words) >= 3)):
            continue
        line = text[a:b]
        start = a + line.index(":", line.find(label) + len(label)) + 1
        end = b
        if not m.group("value") and k + 1 < len(spans):  # "Label:" ⏎ value
            start, end = spans[k + 1]
            if _LABEL_LINE.match(text[start:end].strip()):
                continue
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1] in " \t,;":
            end -= 1
        value = text[start:end]
        if not value or value.endswith(":") or len(value.split()) > VALUE_WORDS:
            continue
        out.append(LabelLine(label, s, start, end))
    return out


def asked_attribute(question: str) -> str:
    """The question without the names and numbers it asks about ("How many kinds of PEP
    are there?" → "How many kinds of are there?"), so that a label is matched to what is asked of
    them, not to them ("PEP: 1" is no answer)."""
    names = set(question_names(question))
    words = question.split()
    kept = [w for i, w in enumerate(words) if i == 0 or not (
        re.sub(r"^\W+|\W+$", "", w).lower() in names or any(ch.isdigit() for ch in w))]
    return " ".join(kept)


def matched_field(stages: LoadedStages, ans: Answer, ev: Evidence,
                  qtype: QuestionType) -> bool:
    """The value of the labelled line, in the document that answers best, whose label
    means what the question asks (:data:`LABEL_MATCH`, by :data:`LABEL_MARGIN` over the
    next label), when the value is of the type asked and says more than the question and
    its label; False otherwise (the reader answers instead)."""
    question = ev.question
    found = answering_document(question, ev.hits, ev.kept, ev.relevance,
                               ev.grounding.documents)
    if found is None:
        return False
    best, same = found
    seen: set[int] = set()
    lines: list[LabelLine] = []
    for s in document_sentences(stages.collection, best.path, same, ["%:%"]):
        if s.id not in seen:
            seen.add(s.id)
            lines.extend(label_lines(s))
    labels = sorted({" ".join(x.label.lower().split()) for x in lines})
    if not labels:
        return False
    vectors = stages.retriever.embedder.embed([asked_attribute(question), *labels])
    cosine = dict(zip(labels, (vectors[1:] @ vectors[0]).tolist(), strict=True))
    ranked = sorted(labels, key=lambda x: -cosine[x])
    top = ranked[0]
    margin = cosine[top] - (cosine[ranked[1]] if len(ranked) > 1 else 0.0)
    if cosine[top] < LABEL_MATCH or margin < LABEL_MARGIN:
        return False
    given = [x for x in lines if " ".join(x.label.lower().split()) == top]
    if len({x.value for x in given}) != 1:
        return False  # several values so labelled: which one is asked is not known
    line = given[0]
    if qtype.expects in ("number", "money") and not _QUANTITY.search(line.value):
        return False  # a code ("L060", "US-001") is no count nor amount
    if echo(f"{question} {line.label}", line.value) or not fits(
            qtype.expects, line.value, qtype.measure, dimension=qtype.dimension) or (
            qtype.expects not in ("any", "thing") and len(line.value.split()) > TYPED_VALUE_WORDS):
        return False
    rule_answer(ans, line.sentence, line.start, line.end, "the field its label names",
                ev.relevance[best.passage_id], ev.also)
    return True
