"""Answers over several documents: the sum, count or list of the documents that share a name.

"How much did I pay Contoso in total across all its receipts?", "How many invoices did Bei
Spiel GmbH issue?", "Which invoices are from Hetzner?": no one passage answers them; the
documents that name what the question names do, each with its own total. So:

- **A question about several documents** (:func:`asked`) names a kind of document in the
  plural ("receipts", "invoices", "bills": :data:`DOCUMENT_KINDS`) and asks how much, how
  many, or which (:data:`OPERATION_OF`); its operation is read from that form, as the
  operation model over table questions does not carry over to folders (declared in the
  rule table as ``folder_total``).
- **The documents** are those of that kind (by their file name, title or text, in the
  languages receipts are written in) that name the question's distinctive names
  (:mod:`ragctl.ask.grounding`), in the year and the currency the question names, if any.
- **Each document's amount** (for a sum) is its total: the largest amount on a line
  labelled as a total (:data:`TOTAL_LABELS`, "Total", "Summe", "Totale", …), else what it
  says is due; an amount written with a decimal comma ("406,82 €") is read as one.
- **The working is shown and cited**: "$152.00 (= 110.00 + 42.00: sample-invoice.pdf
  110.00, receipt.png 42.00) [1] [2]", each document's total line cited. Amounts in
  different currencies are not added up, and a document without a total stops the sum:
  both are refused, naming the documents.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace as _replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragctl.ask.switches import fired, on
from ragctl.records import AnswerSentence, Citation, Sentence
from ragctl.text import CURRENCY_CODES, content_words

if TYPE_CHECKING:
    from ragctl.ask.grounding import Name
    from ragctl.ask.stages import Evidence, LoadedStages
    from ragctl.records import Answer

# a kind of document as a question names it in the plural → the words a document of that
# kind is known by (its file name, its title or its text), in the languages it is written in
DOCUMENT_KINDS: dict[str, tuple[str, ...]] = {
    "receipts": ("receipt", "quittung", "kassenbon", "kassenbeleg", "reçu", "ricevuta",
                 "scontrino", "recibo", "kassabon"),
    "invoices": ("invoice", "rechnung", "facture", "fattura", "factura", "fatura",
                 "factuur", "faktura"),
    "bills": ("bill", "invoice", "receipt", "rechnung", "facture", "fattura", "factura"),
    "credit notes": ("credit note", "gutschrift", "avoir", "nota di credito"),
    "documents": (),  # every document in the folder ("how many documents are dated 2017")
}
# how the question asks: how much (a sum of the documents' totals), how many (a count),
# which (a list)
OPERATION_OF: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("count", re.compile(r"^(?:in |of |for )?how many\b|\bnumber of\b", re.I)),
    ("sum", re.compile(r"^(?:in |of |for )?how much\b|\b(?:total|sum|altogether|combined|"
                       r"in all|add up|spent|spend|paid)\b", re.I)),
    ("list", re.compile(r"^(?:which|what|list|name|show)\b", re.I)),
)
# labels of a document's total: its grand total, or what it says is due
TOTAL_LABELS: tuple[str, ...] = (
    "grand total", "total amount", "invoice total", "total", "gesamtbetrag", "gesamtsumme",
    "bruttobetrag", "rechnungsbetrag", "endbetrag", "brutto", "summe", "gesamt", "totale",
    "importe total", "montant total", "totaal", "gross", "amount due", "balance due",
    "amount payable", "payable", "zu zahlen", "zahlbetrag", "te betalen", "à payer",
    "a pagar", "da pagare",
    # the same in Dutch, Polish, Czech, the Nordic languages and Portuguese
    "rekeningsbedrag", "factuurbedrag", "totaalbedrag", "razem", "do zapłaty", "celkem",
    "k úhradě", "att betala", "summa", "at betale", "å betale", "i alt", "totalt",
    "valor total")
# what is still to pay, when the question asks what is outstanding (after what was paid)
BALANCE_LABELS: tuple[str, ...] = (
    "balance due", "balance", "solde à payer", "solde", "reste à payer", "restbetrag",
    "offener betrag", "amount outstanding", "outstanding", "still due", "saldo", "residual",
    "remaining")
_ASKS_BALANCE = re.compile(r"\b(?:outstanding|balance|solde|still (?:owed?|due|to pay)|"
                           r"owe|left to pay|remaining|unpaid)\b", re.I)
# a total before tax, or of the tax alone, is not the document's total: "Net total",
# "Summe netto", "Total HT", "VAT total", "Total taxes" (but "Summe inkl. USt" is)
_NET_BEFORE = re.compile(r"(?:\b(?:net|netto|sub|vat|tax|ust|mwst|tva|iva)[\s-]*)$", re.I)
_NET_AFTER = re.compile(r"^[\s:]*(?:net|netto|ht|hors|excl|excluding|w/o|before|vat|tax|"
                        r"taxes|ust|mwst|tva|iva)\b", re.I)
MAX_DOCUMENTS = 200  # documents of one kind read for a sum or a count
MAX_SENTENCES = 3000  # sentences of one document read for its total
MAX_CITED = 8  # documents cited; the rest are counted and added, not cited
AMOUNT_AFTER_LABEL = 40  # characters between a total's label and its amount

_CURRENCY = r"[$€£¥₹]|\b(?:EUR|USD|GBP|CHF|JPY|INR|CAD|AUD)\b"
# an amount: with its cents ("1,234.56", "1.234,56", "406,82"), or a whole number
# after a currency sign ("¥4,500"); never split by a space ("Total 1 278.61": a quantity,
# then a price)
_AMOUNT = re.compile(
    rf"(?P<before>{_CURRENCY})?\s?(?P<n>-?\d{{1,3}}(?:[.,']\d{{3}})*[.,]\d{{2}}|-?\d+[.,]\d{{2}}|"
    rf"(?<=[$€£¥₹])\s?\d{{1,3}}(?:,\d{{3}})+|(?<=[$€£¥₹])\s?\d+)"
    rf"(?![.,/:]?\d)\s?(?P<after>{_CURRENCY})?", re.I)
YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")  # a year a question or a document names
_CURRENCY_WORDS = {"euro": "€", "euros": "€", "eur": "€", "dollar": "$", "dollars": "$",
                   "usd": "$", "pound": "£", "pounds": "£", "gbp": "£", "yen": "¥",
                   "rupees": "₹", "francs": "CHF", "sterling": "£"}
_SIGN = {"EUR": "€", "USD": "$", "GBP": "£", "JPY": "¥", "INR": "₹"}


_NUMBERS_OF = re.compile(r"\b(?P<kind>invoice|receipt|bill|credit note)\s+(?:numbers|nos\.?|"
                         r"ids)\b", re.I)


# a kind of document that names the record it is kept in, not documents of that kind:
# "the receipts and payments accounts", "the invoices ledger"
_OF_A_RECORD = (r"(?:\s+and\s+[a-z]+)?\s+(?:accounts?|statements?|ledgers?|books?|registers?|"
                r"journals?|reports?|summary|summaries)\b")


def asked(question: str) -> tuple[str, str] | None:
    """(the operation, the kind of document) of a question about several documents, or
    None: "How many invoices did X issue?" → ("count", "invoices"); "Which invoice
    numbers …" → ("numbers", "invoices"), a list of each document's own number."""
    if not on("folder_total"):
        return None
    q = " ".join(question.split())
    numbers = _NUMBERS_OF.search(q)
    if numbers is not None and re.match(r"^(?:which|what|list|name|show)\b", q, re.I):
        return "numbers", numbers.group("kind").lower() + "s"
    kinds = [k for k in DOCUMENT_KINDS if re.search(rf"\b{k}\b(?!{_OF_A_RECORD})", q, re.I)]
    copies = re.search(r"\bhow many copies of\b.*?\b(invoice|receipt|bill|credit note)\b", q,
                       re.I)
    if not kinds and copies is not None:  # "how many copies of X's invoice INV-100 …"
        return "count", copies.group(1).lower() + "s"
    if not kinds:
        return None
    kind = " and ".join(kinds)  # "invoices and credit notes": documents of either
    op = next((op for op, pattern in OPERATION_OF if pattern.search(q)), None)
    return (op, kind) if op is not None else None


def amount(text: str) -> float | None:
    """An amount as written on a receipt: "1,234.56", "1.234,56", "406,82", "12.00"."""
    t = text.replace("'", "").replace(" ", "")
    decimal_comma = re.search(r",\d{2}$", t) is not None
    t = t.replace(".", "").replace(",", ".") if decimal_comma else t.replace(",", "")
    try:
        return float(t)
    except ValueError:
        return None


@dataclass(frozen=True)
class Total:
    """A document's total: its value, currency, label, and the sentence that gives it."""

    path: str
    value: float
    written: str
    currency: str
    label: str
    sentence: Sentence
    start: int
    end: int


def document_total(sentences: Sequence[Sentence],
                   labels: Sequence[str] = TOTAL_LABELS) -> Total | None:
    """A document's total, from its ``sentences`` in order: the largest amount after a
    label of ``labels`` (:data:`TOTAL_LABELS`, or what is still to pay when the question
    asks that: :data:`BALANCE_LABELS`) that is not a total before tax or of the tax alone.
    The amount may open the next sentence of the passage ("Summe inkl." | "USt: 559,84
    €", cut at the abbreviation)."""
    found: list[Total] = []
    for i, s in enumerate(sentences):
        if s.text.count("; ") >= 1 and s.text.count(": ") >= 2:
            continue  # a keyed table row: a line's total, not the document's
        nxt = sentences[i + 1] if i + 1 < len(sentences) else None
        if nxt is not None and nxt.passage_id != s.passage_id:
            nxt = None
        text = s.text + (" " + nxt.text if nxt is not None else "")
        low = s.text.lower()
        for label in labels:
            for m in re.finditer(rf"(?<![\w-]){re.escape(label)}(?![\w-])", low):
                window = text[m.end():m.end() + AMOUNT_AFTER_LABEL]
                if _NET_BEFORE.search(low[max(0, m.start() - 12):m.start()]) or \
                        _NET_AFTER.match(window):
                    continue
                a = _AMOUNT.search(window)
                if a is None or not re.fullmatch(r"[\s:.=*#A-Za-z€$£()]*",
                                                 window[:a.start()]):
                    continue
                value = amount(a.group("n"))
                if value is None:
                    continue
                cur = a.group("before") or a.group("after") or _currency_in(text) or ""
                start, end = m.end() + a.start("n"), m.end() + a.end("n")
                start += len(a.group("n")) - len(a.group("n").lstrip())
                where = s
                if start > len(s.text) and nxt is not None:  # in the next sentence
                    where, start, end = nxt, start - len(s.text) - 1, end - len(s.text) - 1
                found.append(Total(s.path, value, a.group("n").strip(),
                                   _SIGN.get(cur.upper(), cur), label, where, start, end))
    return max(found, key=lambda t: t.value) if found else None


_DATE_LIKE = re.compile(r"\d{1,4}[./-]\d{1,2}[./-]\d{1,4}")


def document_number(sentences: Sequence[Sentence], kind: str
                    ) -> tuple[str, Sentence, int, int] | None:
    """A document's own number, as it writes it after the word for its kind ("Rechnung #
    RE-20140519/499", "Invoice FA-2017-0008", "INVOICE: INV-100"): the first identifier
    with a digit that is not a date; with its sentence and offsets there."""
    words = "|".join(re.escape(w) for w in words_of(kind))
    pattern = re.compile(rf"(?<![\w-])(?:{words})\s*(?:no\.?|nr\.?|number|num\.?|n°|nº)?\s*"
                         rf"[:#]?\s*(?P<id>[A-Z0-9][\w/.-]*\d[\w/.-]*)", re.I)
    for s in sentences:
        for m in pattern.finditer(s.text):
            ident = m.group("id").rstrip(".-/")
            if _DATE_LIKE.fullmatch(ident):
                continue
            return ident, s, m.start("id"), m.start("id") + len(ident)
    return None


def document_currency(sentences: Sequence[Sentence]) -> str:
    """The currency a document's amounts are most often written in ("" when none)."""
    seen: dict[str, int] = {}
    for s in sentences:
        for a in _AMOUNT.finditer(s.text):
            cur = a.group("before") or a.group("after")
            if cur:
                sign = _SIGN.get(cur.upper(), cur)
                seen[sign] = seen.get(sign, 0) + 1
    if not seen:  # no amount carries one: a currency named anywhere ("Net GBP")
        for s in sentences:
            for m in re.finditer(_CURRENCY, s.text):
                sign = _SIGN.get(m.group().upper(), m.group())
                seen[sign] = seen.get(sign, 0) + 1
    return max(seen, key=lambda k: seen[k]) if seen else ""


def _currency_in(text: str) -> str | None:
    m = re.search(_CURRENCY, text, re.I)
    return m.group() if m else None


def words_of(kind: str) -> tuple[str, ...]:
    """The words documents of ``kind`` ("invoices and credit notes") are known by."""
    return tuple(dict.fromkeys(w for k in kind.split(" and ") for w in DOCUMENT_KINDS[k]))


# names that say what an amount is, not whose: a currency or a tax ("including VAT",
# "in GBP", "the Total TTC")
NOT_PARTIES = frozenset(CURRENCY_CODES.split("|")) | frozenset(
    "VAT GST HST PST TVA IVA UST MWST TTC HT BTW".split())


def parties(ev: Evidence) -> list[Name]:
    """The question's distinctive names that name a party (a shop, a firm, a person)."""
    return [n for n in ev.grounding.names
            if not any(w.strip(".").upper() in NOT_PARTIES for w in n.text.split())]


def documents_of(stages: LoadedStages, ev: Evidence, kind: str, *, in_year: bool = True
                 ) -> list[str]:
    """The documents of ``kind`` that name the question's distinctive names (all of that
    kind when it names none), in the year it names, if any (``in_year``)."""
    store = stages.collection.store
    words = words_of(kind)
    # each document's file name and title, read once
    named = {d.path: f"{Path(d.path).name} {d.title}".lower() for d in store.documents()}
    of_kind: set[str] | None = None
    if words:
        of_kind = {p for p, name in named.items() if any(w in name for w in words)}
        for w in words:
            of_kind.update(p for _, p in store.mentioning([w], MAX_DOCUMENTS * 4))
        # "Avoir_FR.pdf" is a credit note, though it says "facture"
        others = {w for ws in DOCUMENT_KINDS.values() for w in ws} - set(words)
        of_kind = {p for p in of_kind if not (
            any(w in named.get(p, "") for w in others)
            and not any(w in named.get(p, "") for w in words))}
    names = parties(ev)
    if names:
        # the documents that hold every word of every name ("Bei Spiel GmbH", not
        # another firm's "GmbH")
        paths = [p for p, n in ev.grounding.documents.items() if n >= 1]
        for name in names:
            holding = {p for _, p in store.mentioning(list(name.words), MAX_DOCUMENTS * 4)}
            paths = [p for p in paths if p in holding]
        if of_kind is not None and any(p in of_kind for p in paths):
            paths = [p for p in paths if p in of_kind]
    elif _unnamed_condition(ev.question, kind):
        return []  # "which invoices are overdue": a condition no field of ours states
    else:
        paths = sorted(of_kind) if of_kind is not None else list(named)
    years = YEAR.findall(ev.question) if in_year else []
    if years:
        paths = [p for p in paths if all(store.sentences_like(p, [f"%{y}%"], limit=1)
                                         for y in years)]
    return sorted(paths)[:MAX_DOCUMENTS]


# the words of a question about all the documents of a kind that set no condition
_ABOUT_ALL = frozenset("total totals sum altogether combined spent spend paid pay list show "
                       "name names number folder come came add adds amount amounts together "
                       "across overall grand value values much many all every each "
                       # what every such document is: billed, issued, dated (its year, its
                       # currency are conditions of their own)
                       "billed invoiced charged issued dated".split())


def _unnamed_condition(question: str, kind: str) -> bool:
    """Whether a question that names nothing distinctive sets a condition on the
    documents beyond their year and currency ("which invoices are overdue")."""
    kind_words = {w for w in re.findall(r"\w+", kind)} | {k.rstrip("s") for k in
                                                          kind.split(" and ")}
    return any(w not in _ABOUT_ALL and w not in kind_words and w not in _CURRENCY_WORDS
               and w.upper() not in NOT_PARTIES and not YEAR.fullmatch(w)
               for w in content_words(question))


def _asked_currency(question: str) -> str | None:
    for w in re.findall(r"[\w$€£¥₹]+", question.lower()):
        if w in _CURRENCY_WORDS:
            return _CURRENCY_WORDS[w]
    m = re.search(r"[$€£¥₹]", question)
    return m.group() if m else None


def answer(stages: LoadedStages, ans: Answer, ev: Evidence) -> bool:
    """The sum, count or list over the documents the question asks about
    (:func:`asked`); a refusal when the sum cannot be made. False: the question is not
    about several documents, or no document of its kind is found (the other answers try)."""
    found = asked(ev.question)
    if found is None:
        return False
    op, kind = found
    paths = documents_of(stages, ev, kind)
    if not paths:
        others = documents_of(stages, ev, kind, in_year=False) if YEAR.search(ev.question) \
            else []
        if not others:
            return False
        fired("folder_total")  # there are such documents, none of the year asked
        ans.abstained = True
        ans.abstain_reason = f"none of the {len(others)} {kind} found is of " \
            f"{' and '.join(YEAR.findall(ev.question))}"
        return True
    store = stages.collection.store
    totals: dict[str, Total | None] = {}
    currency = _asked_currency(ev.question)
    labels = BALANCE_LABELS if _ASKS_BALANCE.search(ev.question) else TOTAL_LABELS
    if op == "sum" or currency:
        kept = []
        for p in paths:
            sentences = store.sentences_like(p, ["%"], limit=MAX_SENTENCES)
            total = document_total(sentences, labels)
            written_in = document_currency(sentences)
            if total is not None and not total.currency:
                total = _replace(total, currency=written_in)
            if currency and (total is None or total.currency != currency) and \
                    written_in != currency:
                continue  # in another currency
            totals[p] = total
            kept.append(p)
        paths = kept
        if not paths:
            return False
    fired("folder_total")
    if op == "sum":
        missing = [Path(p).name for p in paths if totals.get(p) is None]
        kinds = {t.currency for p in paths if (t := totals.get(p)) is not None and t.currency}
        if missing or len(kinds) > 1:
            ans.abstained = True
            ans.abstain_reason = (
                f"of the {len(paths)} {kind} found, {', '.join(missing[:4])} "
                f"give{'s' if len(missing) == 1 else ''} no total" if missing else
                f"the {kind} found are in different currencies ({', '.join(sorted(kinds))})")
            return True
        _sum(ans, ev, [t for p in paths if (t := totals.get(p)) is not None], kind)
        return True
    if op == "numbers":
        found_numbers = []
        for p in paths:
            got = document_number(store.sentences_like(p, ["%"], limit=MAX_SENTENCES), kind)
            if got is not None:
                found_numbers.append((p, *got))
        if not found_numbers:
            return False
        result = ", ".join(n for _, n, _, _, _ in found_numbers[:MAX_CITED]) + \
            (" …" if len(found_numbers) > MAX_CITED else "")
        working = f"{len(found_numbers)} {kind}" + (
            f"; {len(paths) - len(found_numbers)} more give no number"
            if len(found_numbers) < len(paths) else "")
        _cite(ans, ev, result, working,
              [(sen, a, b, Path(p).name, "number") for p, _, sen, a, b in found_numbers],
              {"operation": "documents list", "result": result, "kind": kind,
               "documents": [p for p, *_ in found_numbers]})
        return True
    firsts = {p: _first_sentence(stages, ev, p) for p in paths}
    cited = [(p, s) for p, s in firsts.items() if s is not None]
    if not cited:
        return False
    names = [Path(p).name for p in paths]
    if op == "count":
        result = str(len(paths))
        working = f"{len(paths)} {kind}: {', '.join(names[:MAX_CITED])}" + \
            (" …" if len(names) > MAX_CITED else "")
    else:
        result = ", ".join(names[:MAX_CITED]) + (" …" if len(names) > MAX_CITED else "")
        working = f"{len(paths)} {kind}"
    _cite(ans, ev, result, working, [(s, None, None, Path(p).name, "") for p, s in cited],
          {"operation": f"documents {op}", "result": result, "kind": kind,
           "documents": paths})
    return True


def _first_sentence(stages: LoadedStages, ev: Evidence, path: str) -> Sentence | None:
    """The sentence to cite for a document counted or listed: one that names the
    question's names, else its first."""
    store = stages.collection.store
    for name in parties(ev):
        for word in name.words:
            found = store.sentences_like(path, [f"%{word}%"], limit=1)
            if found:
                return found[0]
    first = store.sentences_like(path, ["%"], limit=1)
    return first[0] if first else None


def _sum(ans: Answer, ev: Evidence, totals: Sequence[Total], kind: str) -> None:
    value = sum(t.value for t in totals)
    currency = next((t.currency for t in totals if t.currency), "")
    shown = f"{value:,.2f}"
    result = f"{currency}{shown}" if currency in ("$", "£", "¥", "₹") else \
        f"{shown} {currency}".strip()
    addends = " + ".join(t.written for t in totals[:MAX_CITED]) + \
        (" + …" if len(totals) > MAX_CITED else "")
    each = ", ".join(f"{Path(t.path).name} {t.written}" for t in totals[:MAX_CITED])
    working = f"= {addends}: {each}" if len(totals) > 1 else f"{Path(totals[0].path).name}"
    _cite(ans, ev, result, working,
          [(t.sentence, t.start, t.end, Path(t.path).name, t.label) for t in totals],
          {"operation": "documents sum", "result": result, "kind": kind,
           "documents": [{"path": t.path, "label": t.label, "value": t.written,
                          "currency": t.currency} for t in totals]})


def _cite(ans: Answer, ev: Evidence, result: str, working: str,
          used: Sequence[tuple[Sentence, int | None, int | None, str, str]],
          computation: dict[str, Any]) -> None:
    ans.kind = "computed"
    ans.raw_answer = result
    ans.sources = []
    for i, (s, a, b, name, label) in enumerate(used[:MAX_CITED], start=1):
        offsets = s.source_offsets(a, b) if a is not None and b is not None else None
        ans.sources.append(_replace(
            Citation.of(i, s, answer=offsets, also_in=tuple(ev.also.get(s.passage_id, ()))),
            row=name, column=label or None))
    marks = " ".join(f"[{i}]" for i in range(1, len(ans.sources) + 1))
    ans.answer = f"{result} ({working}) {marks}".rstrip()
    ans.sentences = [AnswerSentence(result, tuple(range(1, len(ans.sources) + 1)), 1.0,
                                    True)]
    ans.candidates = [{"answer": result, "rule": f"folder: {computation['operation']}"}]
    ans.computation = computation
    ans.confidence = 1.0
