"""Answers computed from figures the documents state, wherever they stand.

"How many days longer are the nightly dumps kept than the RDS backups?", "How much did the
hot dogs and the beers cost together?", "By how much did revenue grow from 2024 to 2025?",
"What share of the direct costs goes to maintenance?": the answer is no figure the
documents write, but the difference, the sum or the share of figures they do, in one
sentence or several, in a table's rows or under two headings, in one document or two.

- **What is asked** (:func:`asked`): the question's form gives the operation and its two
  subjects (:data:`ASKED_FORMS`): a difference ("how much more … A than B", "the difference
  between A and B", "the change in M from A to B"), a sum ("A and B together"), a share
  ("what percentage of B is A", "A as a share of B": the part over its whole), the days
  between two dates ("how many days after A is B"), or yes or no to "is A higher than
  B?" (:data:`COMPARE_FORM`); or the sum of the things a question lists ("the total of A,
  B and C", :func:`listed`); the words it shares with no subject say what is measured.
- **The figures** (:func:`figures`): every number with its unit (an amount, a length of
  time, a percentage; :data:`UNITS`) stated in the passages retrieved from documents that
  name what the question names, each with the words that say what it is a figure of: its
  clause (a table cell: its row's labels and its column), its section and its document's
  title. A number written as an amount ("Hall hire 60.64") is one in the currency that its
  document's other amounts carry (:func:`written_in`).
- **Which figure is whose** (:func:`best_pair`): each subject is weighed against each
  figure by the subject's words in the figure's words, each word weighted by how few of the
  figures it describes (a word every figure has tells none apart). The pair that fits the
  two subjects best, each figure fitting its own subject better than the other's, in one
  unit (the one asked for, "how many days …"), gives the result; of figures that fit a
  subject alike, its row of totals. A listed thing's figure fits it better than any other
  thing (:func:`best_set`); a share's part is the figure its words fit best, its whole the
  larger figure of its document that the whole's words, its head first, fit best
  (:func:`best_share`).

Nothing is answered (the lookup answers instead) when a subject fits no figure, the units
disagree, or another pair fits as well and gives another result. The working is shown, "113
days (= 120 days − 7 days)", and both figures are cited.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from dataclasses import replace as _replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from ragctl.ask.cells import Cell, row_cells, spoken, word_key
from ragctl.ask.compute import Computed, TableRow, cite, times
from ragctl.ask.compute import _keys as words_keyed
from ragctl.ask.question import main_clause
from ragctl.ask.switches import fired, on
from ragctl.records import Sentence
from ragctl.text import STOPWORDS, UNITS, dated_spans

if TYPE_CHECKING:
    from ragctl.ask.stages import Evidence, LoadedStages
    from ragctl.records import Answer

HITS_READ = 10  # passages retrieved whose figures are weighed (those kept first)
MAX_FIGURES = 400  # figures weighed at most, in the order the passages rank

_COMPARATIVE = (r"(?:(?:more|less) (?:expensive|costly)|more|less|fewer|longer|shorter|higher|"
                r"lower|bigger|smaller|larger|greater|older|younger|later|earlier|heavier|"
                r"lighter|faster|slower|cheaper|dearer|wider|narrower|taller|further|farther)")
# the question's form → the operation; its groups: the two subjects ``a`` and ``b``, the
# unit asked for (``unit``: "how many days longer"), what is measured (``m``)
# "adding the sponsorship money to the ticket sales, how much did it bring in": read
# before the question's leading phrase is cut, since it is the form
ADDING_FORM = (r"^(?:adding|if you add) (?P<a>.+?) (?:to|and) (?P<b>.+?),\s*(?:how (?:much|"
               r"many)(?: (?P<unit>[a-z]+))?|what)\b")
_SHARE_WORDS = r"percentage|percent|per cent|share|proportion|fraction|part"
ASKED_FORMS: tuple[tuple[str, str], ...] = (
    # "how many times higher is A than B", "how many times as large as B is A": a ratio
    (rf"\bhow many times (?:as (?:much|many|[a-z]+) (?:as )?|{_COMPARATIVE} )(?P<a>.+?)"
     r"\b(?:than|as)\b(?P<b>.+)", "ratio"),
    (rf"\bhow (?:much|many)(?: (?P<unit>[a-z]+))? {_COMPARATIVE}\b(?P<a>.+?)\bthan\b(?P<b>.+)",
     "difference"),
    (r"\bby how (?:much|many)(?: (?P<unit>[a-z]+))?\b(?P<a>.+?)\bthan\b(?P<b>.+)",
     "difference"),
    (r"\bdifference (?:in (?P<m>.+?) )?between (?P<a>.+?) and (?P<b>.+)", "difference"),
    # "the percentage change in revenue from 2024 to 2025": of the first, signed
    (r"\bpercent(?:age)? (?:change|increase|decrease|growth|rise|drop|fall|decline) in "
     r"(?P<m>.+?) (?:from|between) (?P<a>.+?) (?:to|and) (?P<b>.+)", "percent_change"),
    (r"\b(?:change|increase|decrease|growth|rise|drop|fall|decline) in (?P<m>.+?) "
     r"(?:from|between) (?P<a>.+?) (?:to|and) (?P<b>.+)", "difference"),
    # "by how many dollars did fundraising increase from FY 2018 to FY 2019", "how much did
    # the balance fall between 2000 and 2023": the measure's change over two periods
    (r"\b(?:by )?how (?:much|many)(?: (?P<unit>[a-z]+))? (?:did|does|do|has|have|had) "
     r"(?P<m>.+?) (?:grow|grown|increase|increased|rise|risen|fall|fallen|drop|dropped|"
     r"decline|declined|decrease|decreased|change|changed|shrink|shrunk|go up|gone up|"
     r"go down|gone down)(?: by)? (?:from|between) (?P<a>.+?) (?:to|and) (?P<b>.+)",
     "difference"),
    # "how many days after the end of the billing period is the bill due", "how many
    # days passed between the order and the delivery": two dates apart
    (r"\bhow many (?P<unit>days|weeks) (?:after|later than|before|earlier than|from)\b"
     r"(?P<a>.+?)\b(?:is|was|are|were|did|does|do|will|would|has|had)\b(?P<b>.+)", "dates"),
    (r"\bhow many (?P<unit>days|weeks) (?:(?:are|were) there |passed |elapsed |went by )?"
     r"between (?P<a>.+?) and (?P<b>.+)", "dates"),
    (r"^(?:how (?:much|many)(?: (?P<unit>[a-z]+))?|what)\b(?P<a>.+?)\band\b(?P<b>.+?)"
     r"\b(?:together|combined|in total|altogether|in all)\b", "sum"),
    (ADDING_FORM, "sum"),
    # "what percentage of the total cost is indirect costs", "what share of the direct costs
    # goes to maintenance", "the indirect costs as a percentage of the direct costs": the
    # part (a) over the whole (b), in per cent
    (rf"\bwhat (?:{_SHARE_WORDS}) of (?P<b>.+?) (?:is|are|was|were|goes|go|went|comes|came|"
     r"is spent|was spent|is taken up by|was taken up by|is accounted for by|was accounted "
     r"for by|is made up of|was made up of)\s+(?:to |on |towards |for |from |by |in )?(?P<a>.+)",
     "share"),
    (rf"\b(?:what|how much) (?:is|are|was|were|do|does|did) (?P<a>.+?) (?:as|make up|account "
     rf"for|represent|come to) (?:a |an )?(?:{_SHARE_WORDS}) of (?P<b>.+)", "share"),
)
_PREPOSITIONS = "for|at|in|on|of|with|during|from|by|under|over|to|towards|toward|into"
# what a comparative measures, when the question does not name it: "how much taller …"
# is a height or an elevation, "how much heavier" a weight
MEASURED_BY: dict[str, str] = {
    "taller": "height tall elevation altitude", "higher": "height elevation altitude high",
    "longer": "length long duration time", "shorter": "length short duration time",
    "heavier": "weight mass", "lighter": "weight mass", "older": "age old",
    "younger": "age", "faster": "speed time", "slower": "speed time",
    "wider": "width wide", "narrower": "width", "deeper": "depth deep",
    "cheaper": "price cost", "dearer": "price cost", "bigger": "size area",
    "larger": "size area", "smaller": "size area"}
SAYS = {"difference": "−", "sum": "+", "compare": "vs", "dates": "−", "percent_change": "−",
        "ratio": "÷", "share": "÷"}
# "Is A's current higher than B's?": a yes/no question that compares two stated figures;
# the comparatives that say the first is the larger (the rest: the smaller)
_AUX = r"(?:is|are|was|were|does|do|did|has|have|had|will|would|can|could)"
_LARGER = frozenset("more higher longer larger greater bigger heavier older later faster "
                    "taller wider deeper dearer costlier".split())
COMPARE_FORM = rf"^{_AUX}\b(?P<a>.+?)\b(?P<cmp>{_COMPARATIVE})\b(?P<mid>.*?)\bthan\b(?P<b>.+)"

CURRENCIES = {"$": "$", "€": "€", "£": "£", "¥": "¥", "₹": "₹", "usd": "$", "eur": "€",
              "gbp": "£", "jpy": "¥", "inr": "₹", "rs": "₹", "chf": "CHF", "dollars": "$",
              "euros": "€", "euro": "€", "pounds": "£"}
_SIGNS = frozenset(CURRENCIES.values())
# a question about money: its figures are amounts ("How much did the beers cost …")
_MONEY = re.compile(r"\b(?:cost|costs|costed|pay|paid|spend|spent|price|prices|priced|"
                    r"expensive|costly|cheaper|charge|charged|owe|owed|fee|fees|amount|bill|"
                    r"billed|worth|earn|earned|revenue|income|sales|profit|salary|budget|"
                    r"invoice|invoiced|refund|tax|tip|total|fine|fines|penalty|deposit|rent|wage|wages|"
                    r"balance|loan|debt|discount|subtotal|dollars?|euros?|pounds)\b|[$€£¥₹]",
                    re.I)

_FIGURE = re.compile(
    r"(?<![\w./:-])(?P<cur>(?:[$€£¥₹]|\b(?:USD|EUR|GBP|Rs\.?))\s?)?"
    r"(?P<num>\d{1,3}(?:[,.]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)"
    r"(?![\w/:]|[.,]\d|-\w)"
    r"(?:\s?(?P<after>[$€£¥₹%]|(?:USD|EUR|GBP|CHF)\b|[a-zA-Zµ°]{1,12}\b))?")
_YEAR = re.compile(r"^(?:1[89]|20)\d\d$")
_DASHED = re.compile(r"(?<![\w-])([0-3]?\d)-([01]?\d)-((?:19|20)\d\d)(?![\w-])")
# a clause's bounds (not the comma of a figure's thousands: "$90,666 that was raised …")
_SEGMENT = re.compile(r"(?<!\d),|,(?!\d)|[;:()]|\s(?:and|but|while|whereas|against|compared|"
                      r"versus|vs\.?)\s")


@dataclass(frozen=True)
class Figure:
    """A number a sentence states, with its unit and the words that say what it is of."""

    sentence: Sentence
    start: int  # the figure as written (with its unit) in the sentence's text
    end: int
    value: float
    unit: str  # "day", "$", "%", "" (none)
    decimals: int
    comma: bool  # written with a decimal comma ("571,04 €")
    near: frozenset[str]  # word keys of its clause or its row's labels, and its heading
    around: frozenset[str]  # word keys of its sentence, sections, document title and name
    column: str = ""  # its column's header, for a table's cell
    measure: frozenset[str] = frozenset()  # the header's word keys: what it measures
    unit_text: str = ""  # the unit as written apart from the number ("µA" of a "Units" cell)
    day_first: float | None = None  # a date written 03/04/2020: its day read first, or
    # None when the order is certain (a dotted date is day first, 13/01 cannot be month first)

    @property
    def text(self) -> str:
        return self.sentence.text[self.start:self.end]


_STOP_KEYS = frozenset(word_key(w) for w in STOPWORDS)


def _keys(text: str) -> set[str]:
    """The words of ``text`` that say something, keyed as a table's are
    (:func:`ragctl.ask.compute._keys`), stopwords left out."""
    return words_keyed(text) - _STOP_KEYS


@dataclass(frozen=True)
class Asked:
    """What a question asks to compute: the operation, its two subjects' distinguishing
    word keys, the keys of what is measured, the unit's kind asked for ("" any) and
    whether it asks about money."""

    operation: str
    a: frozenset[str]
    b: frozenset[str]
    measure: frozenset[str]
    subjects: tuple[str, ...]
    unit: str = ""  # the kind of unit asked for ("time": "how many days …")
    money: bool = False
    unit_word: str = ""  # the unit asked for, as word_key keys it ("day")
    larger: bool = True  # "is A higher than B?" (False: "is A lower than B?")
    counted: str = ""  # the things counted, as word_key keys them ("member": "how many
    # more members …"): a number written before the word is a figure of them
    more: tuple[frozenset[str], ...] = ()  # a sum's third subject and on ("A, B and C")


# "how many more members …", "how many people fewer …": what is counted, a count's unit
_COUNTED = re.compile(r"\bhow many (?:(?:more|fewer|less) (?P<n1>[a-z]+)|(?P<n2>[a-z]+) "
                      r"(?:more|fewer|less)\b)")


def asked(question: str) -> Asked | None:
    """The computation the question's form asks for over two stated figures (or the sum
    of those of a list, :func:`listed`), or None."""
    q = " ".join(question.split()).rstrip(" ?.!")
    if not re.match(ADDING_FORM, q.lower()):  # "Adding A to B, how much …": its leading
        q = " ".join(main_clause(question).split()).rstrip(" ?.!")  # phrase is the form
    low = q.lower()
    if (summed := listed(q, low)) is not None:
        return summed
    forms = ((COMPARE_FORM, "compare"),) if re.match(rf"{_AUX}\b", low) else ASKED_FORMS
    for pattern, op in forms:
        m = re.search(pattern, low)
        if m is None:
            continue
        a, b = m.group("a").strip(), m.group("b").strip()
        if op == "compare" and not _keys(a):  # "are there more births in 2014 than in 2013"
            a = m.group("mid").strip()
        lead = ""
        prep = re.match(rf"(?:{_PREPOSITIONS})\b", b)
        at = a.find(f" {prep.group(0)} ") if prep else -1
        if at >= 0:  # "the maximum fine for a subsequent offense than for a first one": what
            lead, a = a[:at], a[at + 1:]  # is measured comes before the preposition
        ka, kb = _keys(a), _keys(b)
        unit_word = (m.groupdict().get("unit") or "").lower()
        unit = "date" if op == "dates" else UNITS[unit_word][0] if unit_word in UNITS else ""
        counted = ""
        c = _COUNTED.search(low) if op == "difference" and not unit else None
        noun = (c.group("n1") or c.group("n2")) if c is not None else ""
        if noun and noun not in STOPWORDS and noun not in UNITS and noun not in CURRENCIES:
            counted = word_key(noun)
            unit, unit_word = f"#{counted}", ""
        if not (ka - kb) or not (kb - ka):
            return None  # two subjects the question does not tell apart
        said = next((w for w in MEASURED_BY if re.search(rf"\b{w}\b", low)), "")
        rest = _keys(f"{low[:m.start()]} {m.groupdict().get('m') or ''} {lead} "
                     f"{MEASURED_BY.get(said, '')}")
        rest -= {word_key(unit_word)} if unit_word else set()
        larger = op != "compare" or m.group("cmp").split()[0] in _LARGER
        if counted:  # "members does the Oslo club have": the Oslo club
            ka, kb, rest = ka - {counted}, kb - {counted}, rest - {counted}
            a = re.sub(rf"^{noun}\s+(?:{_AUX}\s+)?|\s+(?:have|has|had|get|got)$", "", a)
        return Asked(op, frozenset(ka - kb), frozenset(kb - ka), frozenset(rest),
                     (_named(a, q, low), _named(b, q, low)), unit,
                     bool(_MONEY.search(q)) and unit == "",
                     word_key(unit_word) if unit and unit_word else "", larger, counted)
    return None


# the sum of the figures of the things a question lists: "how much does the budget allocate
# in total to the gel apparatus, its power supply and the transilluminator", "what did the
# printing, the hall hire and the events cost altogether", "the combined income of the
# Forum and the Centre"; three things or more, or two with a word that says they are added
_ALL = r"(?:in total|altogether|combined|together|in all|all told|between them)"
_ADDED = r"\b(?:(?:come|came|amount|amounted) to|add(?:ed)? up to)\b"  # a sum's verb
# what the things are of, after the form: "… together in Walter Hopkins' 2024 budget"
_WHOSE = r"(?P<whose>\s+(?:in|for|of|on|at|from|during|according to|across)\s+.+)?"
LIST_FORMS = (
    rf"^(?:how (?:much|many)|what)\b(?P<m>.*?\b(?:total|sum|{_ALL})\b.*?)\b(?:of|for|on|to|from|"
    r"across|by)\s+(?P<list>.+)$",
    rf"^(?:how (?:much|many)(?: [a-z]+)?|what)\b(?P<m>.*?)\b(?:of|for|on|to|from|by)\s+"
    rf"(?P<list>.+?)\s+{_ALL}{_WHOSE}$",
    rf"^(?:how (?:much|many)(?: [a-z]+)?|what)\b(?P<m>(?: [a-z]+){{0,3}}?)\s+(?:did|do|does|"
    rf"were|was|are|is)\s+(?P<list>.+?)\s+(?:{_ADDED}(?:\s+{_ALL})?|(?:(?:cost|costs|earn|"
    rf"earned|raise|raised|bring in|brought in|make|made)\s+)?{_ALL}){_WHOSE}$",
    # money spent on three things or more: "how much did the club spend on A, B and C"
    r"^how much\b(?P<m>.*?\b(?:spend|spent|pay|paid|allocate|allocated|budget|budgeted|"
    r"cost)\b.*?)\b(?:on|for|to)\s+(?P<list>[^,]+,.+)$",
)
_LISTED = re.compile(r",\s*(?:and\s+|&\s+)?|\s+(?:and|&)\s+")
MAX_LISTED = 6


def listed(question: str, low: str) -> Asked | None:
    """The sum of the figures of the things ``question`` lists (:data:`LIST_FORMS`): three
    to :data:`MAX_LISTED` of them, or two with a word that says they are added ("in total",
    "combined", "add up to") or after "the total of" (neither of them with a preposition:
    "the total of the receipt for one pen and one pad" is one figure), each told apart from
    the others by words of its own; else None."""
    for pattern in LIST_FORMS:
        m = re.search(pattern, low)
        if m is None:
            continue
        said = m.group("list")
        inner = re.fullmatch(r"(?P<head>.+?)\s*\((?P<inner>[^()]+)\)", said)
        items = [i.strip() for i in _LISTED.split(inner.group("inner") if inner else said)
                 if i.strip()]
        if inner:  # "the student wages (academic year and summer)": the wages of each
            items = [f"{inner.group('head')} {i}" for i in items]
        if not 2 <= len(items) <= MAX_LISTED or not re.search(r" (?:and|&) ", said):
            continue
        if len(items) == 2 and not re.search(rf"\b{_ALL}\b|{_ADDED}", low) and (
                pattern != LIST_FORMS[0] or any(re.search(rf"\b(?:{_PREPOSITIONS})\b", i)
                                                for i in items)):
            continue  # "the total of the receipt for one pen and one pad": one figure
        keys = [_keys(i) for i in items]
        own = [frozenset(k - set().union(*(o for j, o in enumerate(keys) if j != i)))
               for i, k in enumerate(keys)]
        if not all(own):
            return None  # things the question does not tell apart
        measure = _keys(re.sub(rf"\b(?:total|sum|{_ALL})\b", " ", m.group("m") + " " + (
            m.groupdict().get("whose") or "")))
        return Asked("sum", own[0], own[1], frozenset(measure),
                     tuple(_named(i, question, low) for i in items),
                     money=bool(_MONEY.search(question)), more=tuple(own[2:]))
    return None


_LEADING = re.compile(r"^(?:(?:is|are|was|were|do|does|did|has|have|had|the|a|an|that|"
                      r"those|of|for|at|in|on|during|from)\s+)+", re.I)


def _named(subject: str, question: str, low: str) -> str:
    """A subject as the working names it, in the question's own letters: "are the
    nightly dumps kept" → "nightly dumps kept"."""
    at = low.find(subject)
    if at >= 0 and len(low) == len(question):
        subject = question[at:at + len(subject)]
    return _LEADING.sub("", subject).strip(" ,") or subject


def _value(num: str) -> tuple[float, int, bool] | None:
    """A written number's value, its decimals and whether its decimal mark is a comma
    ("1.234,56", "1,234.56", "571,04", "0.79")."""
    comma = False
    if "," in num and "." in num:
        comma = num.rfind(",") > num.rfind(".")
    elif "," in num:
        comma = len(num) - num.rfind(",") - 1 != 3
    thousands, mark = (".", ",") if comma else (",", ".")
    digits = num.replace(thousands, "")
    if digits.count(mark) > 1:
        return None
    decimals = len(digits) - digits.find(mark) - 1 if mark in digits else 0
    try:
        return float(digits.replace(mark, ".")), decimals, comma
    except ValueError:
        return None


def _unit_of(word: str) -> str:
    w = word.lower().rstrip(".")
    if w in CURRENCIES:
        return CURRENCIES[w]
    return w if w in UNITS else ""


def figures(sentence: Sentence, counted: str = "", currency: str = "") -> list[Figure]:
    """The figures a sentence states: a table row's numeric cells (the unit in the cell,
    its header's parentheses or the row's "Units" cell), else each number of its text
    with a currency or a unit, or followed by the word of the things ``counted`` ("412
    members"), or written as an amount, with two decimals, in a document whose amounts
    are in ``currency`` ("Hall hire 60.64" in accounts in pounds); a bare year is no
    figure."""
    around = frozenset(_keys(f"{sentence.text} {sentence.place} {sentence.title} "
                             f"{Path(sentence.path).stem}"))
    cells = row_cells(sentence.text)
    if cells:
        return _cell_figures(sentence, cells, around) + [
            d for c in cells for d in _dates(sentence, c.value, c.start, around,
                                            _row_labels(cells), c.column)]
    out = []
    text = sentence.text
    bounds = [0, *(m.end() for m in _SEGMENT.finditer(text)), len(text) + 1]
    for m in _FIGURE.finditer(text):
        got = _value(m.group("num"))
        if got is None:
            continue
        cur = (m.group("cur") or "").strip()
        after = m.group("after") or ""
        unit = _unit_of(cur) or _unit_of(after)
        end = m.end() if unit and _unit_of(after) else m.end("num")
        unit_text = ""
        if not unit and counted and after and word_key(after) == counted:
            unit, unit_text = f"#{counted}", after  # "412 members"
        elif not unit and currency and got[1] == 2 and not got[2] and not after:
            unit = currency  # "Hall hire 60.64": an amount, in the document's currency
        if not unit or (_YEAR.match(m.group("num")) and not cur):
            continue
        lo = max(b for b in bounds if b <= m.start())
        hi = min(b for b in bounds if b > m.start())
        near = frozenset(_keys(text[lo:hi]) | _keys(_heading(sentence.place)))
        out.append(Figure(sentence, m.start("cur") if cur else m.start("num"), end,
                          value=got[0], unit=unit, decimals=got[1], comma=got[2],
                          near=near, around=around, unit_text=unit_text))
    return out + _dates(sentence, text, 0, around)


def _row_labels(cells: Sequence[Cell]) -> set[str]:
    """The word keys of a row's cells that hold no number: what the row is of."""
    return set().union(*(_keys(c.value) for c in cells if not re.search(r"\d", c.value)))


def _ordinal(year: int, month: int, day: int) -> float | None:
    try:
        return float(date(year, month, day).toordinal())
    except ValueError:
        return None


def _dates(sentence: Sentence, text: str, offset: int, around: frozenset[str],
           labels: set[str] | None = None, column: str = "") -> list[Figure]:
    """The full dates (year, month, day) ``text`` writes (``offset``: where it stands in
    the sentence), as figures of the unit "date": their day numbers. A date of the
    sentence's prose is of its clause's words; a table cell's, of its row's labels."""
    out = []
    bounds = [0, *(m.end() for m in _SEGMENT.finditer(text)), len(text) + 1]
    spans = dated_spans(text)
    for m in _DASHED.finditer(text):  # 29-02-2020: day first
        if not any(a < m.end() and m.start() < b for _, a, b in spans):
            spans.append(((int(m.group(3)), int(m.group(2)), int(m.group(1))), m.start(),
                          m.end()))
    for (year, month, day), a, b in spans:
        if month is None or day is None:
            continue
        value = _ordinal(year, month, day)
        if value is None:
            continue
        written_as = text[a:b]
        parts = re.match(r"(\d{1,2})([/.])(\d{1,2})[/.]", written_as)
        other = None
        if parts is not None:
            first, mark, second = int(parts.group(1)), parts.group(2), int(parts.group(3))
            if mark == "." and first <= 12:  # a dotted date is day first: 04.12.2014
                value = _ordinal(year, second, first) or value
            elif first <= 12 and second <= 12 and first != second:
                other = _ordinal(year, second, first)  # 03/04/2020: either order
        if labels is None:
            lo = max(x for x in bounds if x <= a)
            hi = min(x for x in bounds if x > a)
            near = frozenset(_keys(text[lo:hi]) | _keys(_heading(sentence.place)))
        else:
            near = frozenset(labels | _keys(_heading(sentence.place)))
        out.append(Figure(sentence, offset + a, offset + b, value, "date", 0, False, near,
                          around, column, frozenset(_keys(spoken(column))), "", other))
    return out


def _cell_figures(sentence: Sentence, cells: Sequence[Cell], around: frozenset[str]
                  ) -> list[Figure]:
    """A row's cells that open with a number in a unit (the cell's own, its header's
    in brackets, or the row's "Units" cell: a datasheet's); the rest are its labels. A
    bare number is no figure here: a table's own operations weigh those
    (:mod:`ragctl.ask.compute`), and a rank or a count of the row's is no measure."""
    units = next((c.value.strip() for c in cells if word_key(c.column) in ("unit", "units")),
                 "")
    row_unit = _unit_of(units)
    labels: set[str] = set()
    numeric: list[tuple[Cell, re.Match[str], tuple[float, int, bool], str, str]] = []
    for c in cells:
        m = _FIGURE.match(c.value)
        got = _value(m.group("num")) if m else None
        paren = re.search(r"\(([^)]+)\)", c.column)
        own = "" if m is None else (_unit_of((m.group("cur") or "").strip())
                                    or _unit_of(m.group("after") or ""))
        header = _unit_of(paren.group(1)) if paren else ""
        unit = own or header or row_unit
        unit_text = "" if own else paren.group(1).strip() if header and paren else units
        if m is None or got is None or not unit or (
                _YEAR.match(m.group("num")) and not m.group("cur")):
            labels |= _keys(c.value)
        else:
            numeric.append((c, m, got, unit, unit_text))
    out = []
    for c, m, got, unit, unit_text in numeric:
        near = frozenset(labels | _keys(_heading(sentence.place)))
        end = c.start + (m.end() if _unit_of(m.group("after") or "") else m.end("num"))
        out.append(Figure(sentence, c.start + m.start(), end, got[0], unit, got[1], got[2],
                          near, around, c.column, frozenset(_keys(spoken(c.column))),
                          unit_text))
    return out


def _heading(place: str) -> str:
    """A section's own heading: the last of "Chapter > Section > Subsection"."""
    return place.rsplit(" > ", 1)[-1]


def _kind(unit: str) -> tuple[str, float]:
    return UNITS.get(unit, (unit, 1.0))


def _fit(keys: frozenset[str], f: Figure, weight: dict[str, float], *,
         measure: bool = False) -> float:
    """How well ``f`` is a figure of the subject with word keys ``keys`` (``measure``: of
    what is measured, which its column's header may say too)."""
    near = f.near | f.measure if measure else f.near
    own = _keys(f.text)  # a figure's own digits do not say what it is of ("$250,000")
    return sum(weight.get(k, 0.0) * (1.0 if k in near else 0.5 if k in f.around else 0.0)
               for k in keys if k not in own)


def _of_kind(what: Asked, found: Sequence[Figure]) -> list[Figure]:
    """The figures of the unit's kind asked for (amounts, for a question about money)."""
    if what.unit:
        return [f for f in found if _kind(f.unit)[0] == what.unit]
    if what.money:
        return [f for f in found if f.unit in CURRENCIES.values()]
    return list(found)


def _weights(found: Sequence[Figure]) -> dict[str, float]:
    """Each word key's weight: how few of the figures it describes."""
    share: dict[str, float] = {}
    for f in found:
        for k in f.near | f.measure | f.around:
            share[k] = share.get(k, 0.0) + (1.0 if k in f.near | f.measure else 0.5)
    return {k: 1.0 - n / len(found) for k, n in share.items()}


def _told_apart(what: Asked, found: Sequence[Figure]) -> Asked:
    """``what`` with each subject's words that every figure's sentence, section or document
    says alike (the document's name, "Portsmouth Cycle Forum"), where the subject keeps a
    word of its own: they tell no figure apart, and would weigh a subject that repeats them
    over the others. A word that some figures' clauses say and others' do not ("RDS" of
    one row of a backup table) tells them apart, and stays."""
    near = [f.near | f.measure for f in found]
    common = frozenset.intersection(*(f.near | f.around for f in found)) - (
        frozenset.union(*near) - frozenset.intersection(*near))

    def own(keys: frozenset[str]) -> frozenset[str]:
        return keys - common if keys - common else keys

    return _replace(what, a=own(what.a), b=own(what.b), more=tuple(map(own, what.more)))


CANDIDATES_EACH = 4  # the figures that fit a listed thing best, tried for it


def best_set(what: Asked, found: Sequence[Figure], *, across: bool = True
             ) -> list[Figure] | None:
    """The figure of each of three things or more a sum lists (:func:`listed`), each one
    fitting its own thing better than any other, all of one kind of unit (and of one
    document, unless ``across``); None when a thing fits no figure, or another choice fits
    as well and sums to another result."""
    found = _of_kind(what, found)
    subjects = [what.a, what.b, *what.more]
    if len(found) < len(subjects):
        return None
    weight = _weights(found)
    told = _told_apart(what, found)
    subjects = [told.a, told.b, *told.more]
    fits = [[_fit(keys, f, weight) for f in found] for keys in subjects]
    measure = [_fit(what.measure, f, weight, measure=True) for f in found]
    options = []
    for n, row in enumerate(fits):
        own = [i for i, fit in enumerate(row) if fit > 0 and all(
            fit > other[i] for m, other in enumerate(fits) if m != n)]
        if not own:
            return None
        own.sort(key=lambda i: -(row[i] + 0.5 * measure[i]))
        options.append(own[:CANDIDATES_EACH])
    ranked: list[tuple[float, float, tuple[int, ...]]] = []
    for pick in itertools.product(*options):
        chosen = [found[i] for i in pick]
        if len({(f.sentence.id, f.start) for f in chosen}) < len(chosen) or len(
                {_kind(f.unit)[0] for f in chosen}) > 1 or (
                not across and len({f.sentence.path for f in chosen}) > 1):
            continue
        score = sum(fits[n][i] + 0.5 * measure[i] for n, i in enumerate(pick))
        ranked.append((score, sum(f.value * _kind(f.unit)[1] for f in chosen), pick))
    if not ranked:
        return None
    ranked.sort(key=lambda r: -r[0])
    best, total, pick = ranked[0]
    if any(score >= best - 1e-9 and not math.isclose(value, total)
           for score, value, _ in ranked[1:]):
        return None  # two choices fit as well, and disagree
    return [found[i] for i in pick]


_WHOLE = frozenset({"total", "overa", "all", "sum"})  # word keys a row of totals says
TOTAL_TIE = 0.01  # what a row of totals adds to a pair's fit: less than any word does


def best_share(what: Asked, found: Sequence[Figure]) -> tuple[Figure, Figure] | None:
    """The part's figure and its whole's, for a share (``what.operation`` "share"): the
    part is the figure that fits the part's words best (and the whole's next, the part of
    that whole); its whole, of those as large or larger in one kind of unit, the one that
    fits the whole's words best, a row of totals first, in the part's own document; None
    when no figure fits either, or two wholes fit as well and disagree."""
    found = [f for f in _of_kind(what, found) if f.unit != "%"]
    if len(found) < 2:
        return None
    weight = _weights(found)
    what = _told_apart(what, found)
    fit_a = [_fit(what.a, f, weight) for f in found]
    # the whole's head ("direct costs" of "the direct costs in pandas' request") counts
    # twice: the words after it say whose it is, which the part's figure may say as well
    head = frozenset(_keys(re.split(rf"\s(?:{_PREPOSITIONS})\s", what.subjects[-1])[0])) & what.b
    fit_b = [_fit(what.b, f, weight) + _fit(head, f, weight) for f in found]
    if max(fit_a) <= 0:
        return None
    part = max(range(len(found)), key=lambda i: (fit_a[i], fit_b[i]))
    p = found[part]
    wholes = [(fit_b[i] + (0.5 if found[i].near & _WHOLE else 0.0), i)
              for i, f in enumerate(found)
              if i != part and fit_b[i] > 0 and _kind(f.unit)[0] == _kind(p.unit)[0]
              and f.sentence.path == p.sentence.path  # a whole of the part's document
              and math.isfinite(compute("share", p, f))]
    if not wholes:
        return None
    best = max(score for score, _ in wholes)
    tied = {found[i].value * _kind(found[i].unit)[1] for score, i in wholes
            if score >= best - 1e-9}
    if len(tied) > 1:
        return None  # two wholes fit as well, and disagree
    return p, found[next(i for score, i in wholes if score >= best - 1e-9)]


def best_pair(what: Asked, found: Sequence[Figure], *, across: bool = True
              ) -> tuple[Figure, Figure] | None:
    """The figure of each subject (:mod:`module docs <ragctl.ask.figures>`), or None;
    ``across``: the two may be of two documents (the question names documents)."""
    found = _of_kind(what, found)
    if len(found) < 2:
        return None
    weight = _weights(found)
    what = _told_apart(what, found)
    fit_a = [_fit(what.a, f, weight) for f in found]
    fit_b = [_fit(what.b, f, weight) for f in found]
    # the measure's words that name every figure's document ("Cayuga's Watchers'
    # fundraising" of cayugas-watchers-annual-report.pdf) tell none of its figures apart
    named = set.intersection(*(set(words_keyed(f"{f.sentence.title} "
                                               f"{Path(f.sentence.path).stem}"))
                               for f in found))
    measure = what.measure - named if what.measure - named else what.measure
    fit_m = [_fit(measure, f, weight, measure=True) for f in found]
    ranked: list[tuple[float, int, int]] = []
    for i, fa in enumerate(found):
        if fit_a[i] <= fit_b[i] or fit_a[i] <= 0:
            continue
        for j, fb in enumerate(found):
            if i == j or fit_b[j] <= fit_a[j] or fit_b[j] <= 0 or (
                    _kind(fa.unit)[0] != _kind(fb.unit)[0]):
                continue
            if fa.sentence.id == fb.sentence.id and fa.start == fb.start:
                continue
            if not across and fa.sentence.path != fb.sentence.path:
                continue  # two documents, when the question names neither
            if what.operation in ("difference", "dates", "percent_change") and compute(
                    what.operation, fa, fb) == 0:
                continue  # "how much longer" of two equal figures: not these two
            same = 0.5 if fa.column and fa.column == fb.column else 0.0
            same += 0.25 * sum(word_key(f.unit) == what.unit_word for f in (fa, fb))
            same += 0.25 if fa.sentence.id == fb.sentence.id else 0.0  # stated together
            # of the figures that fit a subject alike (a part's rows, placed under the
            # part's title), its row of totals is the part's own: a tie-breaker alone
            same += TOTAL_TIE * sum(bool(f.near & _WHOLE) for f in (fa, fb))
            # ("$96,419, a 6.3% increase from the $90,666 …")
            ranked.append((fit_a[i] + fit_b[j] + 0.5 * (fit_m[i] + fit_m[j]) + same, i, j))
    if not ranked:
        return None
    ranked.sort(reverse=True)
    score, i, j = ranked[0]
    result = compute(what.operation, found[i], found[j])
    for other, x, y in ranked[1:]:
        if other < score - 1e-9:
            break
        if compute(what.operation, found[x], found[y]) != result:
            return None  # two pairs fit as well, and disagree
    return found[i], found[j]


def compute(op: str, fa: Figure, fb: Figure) -> float:
    """``op`` of the two figures, in the unit of the first."""
    if op == "dates":  # days apart; a date that may be read either way is read as the
        a, b = fa.value, fb.value  # other date of its document is, when that one is sure
        if fa.day_first is not None and fb.day_first is None and fb.sentence.path == \
                fa.sentence.path and _day_first(fb):
            a = fa.day_first
        if fb.day_first is not None and fa.day_first is None and fa.sentence.path == \
                fb.sentence.path and _day_first(fa):
            b = fb.day_first
        return abs(a - b)
    a = fa.value
    b = fb.value * _kind(fb.unit)[1] / _kind(fa.unit)[1]
    if op == "percent_change":  # from the first to the second, of the first
        return (b - a) / abs(a) * 100 if a else 0.0
    if op == "ratio":  # the larger over the smaller
        return max(a, b) / min(a, b) if min(a, b) > 0 else math.nan
    if op == "share":  # the part of the whole, in per cent; none larger than its whole
        return a / b * 100 if 0 < a <= b else math.nan
    return abs(a - b) if op == "difference" else a - b if op == "compare" else a + b


def _day_first(f: Figure) -> bool:
    """Whether a date whose order is sure was written day first (13/01/2016, 04.12.2014)."""
    parts = re.match(r"(\d{1,2})[/.]\d{1,2}[/.]", f.text)
    return parts is not None and (int(parts.group(1)) > 12 or "." in f.text[:6])


def written(value: float, like: Sequence[Figure]) -> str:
    """A result as its figures are written: their decimals and decimal mark, the first's
    currency or unit ("$30.70", "11,20 €", "113 days", "656.25 ms")."""
    if like[0].unit == "date":
        return f"{value:,.0f} day" + ("" if value == 1 else "s")
    text = f"{value:,.{max(f.decimals for f in like)}f}"
    if any(f.comma for f in like):
        text = text.translate(str.maketrans(",.", ".,"))
    first = like[0]
    lead = re.match(r"^\D*", first.text)
    tail = re.sub(r"^\D*[\d.,]+", "", first.text)
    before = lead.group(0) if lead else ""
    if not before.strip() and not tail.strip() and first.unit in _SIGNS and len(first.unit) == 1:
        before = first.unit  # a bare amount in a document's currency: "£110.64"
    elif not before.strip() and not tail.strip() and first.unit:
        tail = first.unit if first.unit == "%" else f" {first.unit_text or first.unit}"
    return f"{before}{text}{tail}"


def candidates(stages: LoadedStages, ev: Evidence, counted: str = "") -> list[Figure]:
    """The figures of the passages kept, then of those retrieved (:data:`HITS_READ`), of
    the documents that name what the question names (and of the things ``counted``)."""
    read: list[Sentence] = []
    seen: set[int] = set()
    for retrieved in stages.retrieved_sentences(ev, HITS_READ).values():
        for s in retrieved:
            if s.id in seen or not ev.grounding.grounded(s.path):
                continue
            seen.add(s.id)
            read.append(s)
    stated = [figures(s, counted) for s in read]
    currency = written_in(f for found in stated for f in found)
    out: list[Figure] = []
    for s, found in zip(read, stated, strict=True):
        out += figures(s, counted, currency[s.path]) if currency.get(s.path) else found
    return out[:MAX_FIGURES]


def written_in(found: Iterable[Figure]) -> dict[str, str]:
    """The currency each document's stated amounts are in, by path: the one currency
    its amounts that carry a sign or a code are written in (none where two are)."""
    signs: dict[str, set[str]] = {}
    for f in found:
        if f.unit in _SIGNS:
            signs.setdefault(f.sentence.path, set()).add(f.unit)
    return {path: next(iter(units)) for path, units in signs.items() if len(units) == 1}


def _cells(*figures: tuple[Figure, str]) -> list[tuple[TableRow, Cell]]:
    """Each figure as a computation's cell, in the row named by the subject it is of."""
    return [(TableRow((Cell("", subject, 0, 0), cell), f.sentence), cell)
            for f, subject in figures
            for cell in [Cell(f.column, f.text, f.start, f.end)]]


# a comparison of times: only then are two dates the figures compared
_TEMPORAL = re.compile(r"\b(?:later|earlier|sooner|before|after|older|younger|newer)\b", re.I)


def yes_no(stages: LoadedStages, ans: Answer, ev: Evidence) -> bool:
    """"Is A higher than B?" answered by the two stated figures of A and B (rule
    ``stated_figures``), compared, working shown and both cited; False when the question
    compares no two figures or none fits (:func:`best_pair`)."""
    what = asked(ev.question)
    if what is None or what.operation != "compare" or not on("stated_figures"):
        return False
    found = candidates(stages, ev)
    if not _TEMPORAL.search(ev.question):  # "higher EPS in fiscal 2023 than in 2022":
        found = [f for f in found if f.unit != "date"]  # the dates name the two, not it
    pair = best_pair(what, found, across=ev.grounding.applies)
    if pair is None:
        return False
    fa, fb = pair
    diff = compute("compare", fa, fb)
    holds = diff > 0 if what.larger else diff < 0
    sign = ">" if diff > 0 else "<" if diff < 0 else "="
    done = Computed("compare", "Yes" if holds else "No",
                    f"{written(fa.value, [fa])} {sign} {written(fb.value, [fb])}",
                    cells=_cells((fa, what.subjects[0]), (fb, what.subjects[1])))
    fired("stated_figures")
    cite(ans, ev, done, 1.0)
    ans.kind = "yes-no"
    return True


def answer(stages: LoadedStages, ans: Answer, ev: Evidence) -> bool:
    """The difference or the sum of the two stated figures the question asks for
    (rule ``stated_figures``), working shown and both cited; False when none fits."""
    what = asked(ev.question)
    if what is None or what.operation == "compare" or not on("stated_figures"):
        return False
    if what.more:
        return _listed_sum(stages, ans, ev, what)
    found = candidates(stages, ev, what.counted)
    pair = best_share(what, found) if what.operation == "share" else best_pair(
        what, found, across=ev.grounding.applies)
    if pair is None:
        return False
    fa, fb = pair
    value = compute(what.operation, fa, fb)
    if not math.isfinite(value):
        return False
    if what.operation in ("share", "percent_change"):  # in per cent, of the whole or the first
        a, b = written(fa.value, [fa]), written(fb.value, [fb])
        done = Computed(what.operation, f"{round(value, 2):,.2f}".rstrip("0").rstrip(".") + "%",
                        f"= {a} ÷ {b}" if what.operation == "share" else f"= ({b} − {a}) / {a}",
                        cells=_cells((fa, what.subjects[0]), (fb, what.subjects[1])))
        fired("stated_figures")
        cite(ans, ev, done, 1.0)
        return True
    big, small = (fa, fb) if what.operation == "sum" or fa.value * _kind(fa.unit)[1] >= \
        fb.value * _kind(fb.unit)[1] else (fb, fa)
    result = times(value) if what.operation == "ratio" else written(value, [fa, fb])
    cells = _cells((big, what.subjects[0 if big is fa else 1]),
                   (small, what.subjects[0 if small is fa else 1]))
    shown = (lambda f: f.text) if what.operation == "dates" else (
        lambda f: written(f.value, [f]))
    done = Computed(what.operation, result, f"= {shown(big)} {SAYS[what.operation]} "
                    f"{shown(small)}", cells=cells)
    fired("stated_figures")
    cite(ans, ev, done, 1.0)
    return True


def _listed_sum(stages: LoadedStages, ans: Answer, ev: Evidence, what: Asked) -> bool:
    """The sum of the figures of three things or more the question lists (rule
    ``stated_figures``), working shown and each figure cited; False when none fits."""
    chosen = best_set(what, candidates(stages, ev, what.counted),
                      across=ev.grounding.applies)
    if chosen is None:
        return False
    total = sum(f.value * _kind(f.unit)[1] for f in chosen) / _kind(chosen[0].unit)[1]
    if not math.isfinite(total):
        return False
    done = Computed("sum", written(total, chosen),
                    "= " + " + ".join(written(f.value, [f]) for f in chosen),
                    cells=_cells(*zip(chosen, what.subjects, strict=True)))
    fired("stated_figures")
    cite(ans, ev, done, 1.0)
    return True
