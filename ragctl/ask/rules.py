"""The special-case rules, gathered in one place: when a span is no answer, and which
passages must be kept.

- **Answerability** (:data:`DEFAULT_RANKING`, :data:`DEFAULT_ANSWERABILITY`,
  :func:`logistic`): two logistic models over a span's signals, fitted on development
  questions and stored in the reader's manifest; these are the defaults for a reader
  without them.
- **Vetoes** (:func:`vetoed`): some spans are no answer whatever the model says — a span
  of the wrong type (:func:`type_agreement`), of a kind the question rules out
  (:func:`ruled_out`), from a passage that lacks the number, the date or every name the
  question gives (:func:`missing_numbers`, :func:`missing_dates`, :func:`missing_names`).
- **Kept passages** (:func:`with_identifier`): a passage of the document the question
  names by number takes the last place kept, when the relevance estimator missed it.
- **Neither option** (:func:`neither_option`): "Who is older, A or B?" answered with
  neither is no answer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from ragctl.ask.documents import (
    _CURRENCY,
    _MONTH,
    _YEAR,
    identifiers,
    mentions,
    named_by,
    names_found,
    option_in,
    question_names,
)
from ragctl.ask.question import Expected, Measure, choice_options
from ragctl.ask.switches import fired, on
from ragctl.records import Answer, Hit
from ragctl.text import CURRENCY_CODES, MONTHS, UNIT_WORDS, UNITS, content_words

_DATE = re.compile(
    rf"\b(1[0-9]{{3}}|20[0-9]{{2}})s?\b|\b({MONTHS})\b|\b\d{{1,2}}[/.-]\d{{1,2}}[/.-]\d{{2,4}}\b|"
    r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday|today|yesterday|tomorrow|"
    r"century|decade|spring|summer|autumn|fall|winter|morning|evening|noon|midnight)\b|"
    r"\b\d{1,2}(:\d{2})?\s*(am|pm|a\.m\.|p\.m\.)|\b\d{1,2}:\d{2}\b", re.I)
_NUMBER = re.compile(
    r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    r"forty|fifty|hundred|thousand|million|billion|dozen|half|single|double)\b", re.I)
_NAME = re.compile(r"\b[A-ZÀ-Ý][\w'’.-]+")
# a figure that stands as one: a number not within a code or a name ("I-551", "Llama-3-70B",
# "10-K"), or a number in words
_FIGURE_IN = re.compile(
    r"(?<![\w-])[-−+(]?[$€£¥₹]?\d[\d,.]*(?![\d,.]|-[^\W\d_])|"
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    r"forty|fifty|hundred|thousand|million|billion|half|double)\b", re.I)


_ADDRESS = re.compile(r"\b(Avenue|Ave\.|Street|Road|Rd\.|Boulevard|Blvd\.?|Lane|Suite|"
                      r"Highway|Plaza|P\.?O\.? Box)(?=\W|$)|\b[A-Z]{2} \d{5}(?:-\d{4})?\b")
_ZIP = re.compile(r"\d{5}(?:-\d{4})?")  # after a state's two capitals: "CA 94087"


def answer_types(span: str) -> set[str]:
    """The kinds of answer a span could be: date, number, name (capitalized words)."""
    kinds = set()
    if _DATE.search(span):
        kinds.add("date")
    if _NUMBER.search(span):
        kinds.add("number")
    if _NAME.search(span):
        kinds.add("name")
    return kinds


_WORDY = re.compile(r"[^\W\d_]{2,}")
# words of a time that is no date ("two years after the war"), not inside a compound: a
# "127-year-old" monument is no time (none of SQuAD dev's 792 answers to "when" questions
# is written so)
_WHEN = re.compile(r"(?<![\w-])(?:before|after|during|until|till|since|ago|afternoon|night|"
                   r"tonight|dawn|dusk|weekends?|weekdays?|hours?|days?|weeks?|months?|years?|"
                   r"time|times|period|era|age|season|quarter|semester|term|o'clock)(?![\w-])",
                   re.I)
_URL = re.compile(r"https?://|\bwww\.|\b[\w-]+\.(?:com|org|net|io|gov|edu|dev|co|uk|de|fr)\b",
                  re.I)
_NOT_NAME_WORDS = frozenset(
    {"am", "pm", "st", "nd", "rd", "th", "hrs", "min", "sec", "usd", "eur", "gbp"}
    | {c.lower() for c in CURRENCY_CODES.split("|")}
    | set("dollars dollar euros euro pounds pound cents cent rupees ringgit yen million "
          "billion thousand percent".split()))


_UNITS = UNIT_WORDS  # a length, a size, a weight, a speed or a time (ragctl.text)
_NUMBER_WORD = (r"(?:\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                r"fifteen|twenty|thirty|forty|fifty|sixty|hundred|thousand|a|an|several|"
                r"many|few|couple(?: of)?|half(?: an?)?|dozen|\d+(?:\.\d+)?[-–]\d+)")
# "4 inches", "a four-year term", "three (3) minutes", "two (2) man hours", "10 working days"
_MEASURED = re.compile(rf"\b{_NUMBER_WORD}(?:\s*\(\d[\d,.]*\))?"
                       rf"(?:[\s-]+(?:more|less|and a half|or so|plus))?"
                       rf"(?:[\s-]+(?:man|person|working|business|calendar|full|whole|"
                       rf"consecutive|additional|extra|more))?"
                       rf"[\s-]*(?:{_UNITS})\b|\d(?:m|h|s|l|g|in)\b", re.I)
_HOW_LONG = re.compile(r"\b(?:as long as|until|till|since|while|during|indefinitely|forever|"
                       r"permanent(?:ly)?|lifetime|life of|duration of)\b", re.I)
_AGE = re.compile(r"\b(?:years?[- ]old|aged?|in (?:his|her|their) \w+s|teen|"
                  r"months?[- ]old)\b", re.I)
_OFTEN = re.compile(r"\b(?:every|each|per|daily|weekly|monthly|quarterly|annually|yearly|"
                    r"hourly|nightly|once|twice|thrice|times|biweekly|fortnightly|"
                    r"continuous(?:ly)?|constantly|always|never|rarely|seldom|occasionally|"
                    r"regularly|frequently|often|a (?:second|minute|hour|day|week|month|year))"
                    r"\b", re.I)
_WHOLE_NUMBER = re.compile(r"(?<![\w.-])\d{1,6}(?![\w.-])")
_AGE_WORDS = 4  # "35", "aged 35", "35 years old": an age is a few words


# a count: a whole number ("12", "1,204", "five", "2.5 million"), not one with a fraction
# ("6,8", "37.2")
_COUNT = re.compile(r"(?<![\w.,])(?:\d{1,3}(?:,\d{3})+|\d+)(?![.,]\d|[\w])|"
                    r"\d[.,]?\d*\s?(?:million|billion|trillion|thousand|lakh|crore|bn|m|k)\b|"
                    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                    r"thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|"
                    r"thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|none|no|zero|"
                    r"dozen|single|both|all)\b", re.I)


def counts(span: str) -> bool:
    """Whether the span gives a count: a whole number, not one with a fraction."""
    return _COUNT.search(span) is not None


# a number's unit: glued to it ("3.6V", "480μA"), or a word apart ("20 ft", "3.6 V"); a
# one-letter unit apart only as volts or watts are written ("5 a week" is no current)
_UNIT_AFTER = re.compile(r"\d(?:(?P<glued>[a-zA-Zµμ°%][a-zA-Zµμ°]*)|\s(?P<apart>[a-zA-Zµμ°%]"
                         r"[a-zA-Zµμ°]+|%|[VW]\b))")


def unit_kind(span: str, after: str = "") -> str | None:
    """The kind (ragctl.text.UNITS) of the unit of the span's last number, written in it or
    right after it; None when it has none that is known."""
    found = list(_UNIT_AFTER.finditer(span + after[:12]))
    found = [m for m in found if m.start() < len(span)]
    if not found:
        return None
    unit = (found[-1].group("glued") or found[-1].group("apart")).lower().replace("μ", "µ")
    kind = UNITS.get(unit)
    return kind[0] if kind is not None else None


# a part of a whole as a share says it
_SHARE = re.compile(r"%|\bper ?cent|\bpercentage points?\b|\b(?:half|halves|thirds?|quarters?|"
                    r"fifths?|tenths?)\b|\b\d+\s*(?:in|out of)\s*\d+\b|"
                    r"(?<![\d/])\d{1,3}/\d{1,3}(?![\d/])|"
                    r"\b(?:one|two|three|four|five|nine) (?:in|out of) ", re.I)


def measured(measure: Measure, span: str, after: str = "") -> str | None:
    """The span as the answer to a question that asks a measure (``typed_answer``), or
    None when it is none: for "how long / far / tall" a number with its unit ("4 inches",
    "120 days") or a time bounded by something ("until the account is closed"); for "how
    old" an age; for "how often" a frequency; for a port a whole number. A bare number
    whose unit follows it in the sentence (``after``: "120" of "120 days") is widened to
    take the unit in."""
    if not measure:
        return span
    if measure == "integer":
        return span if _WHOLE_NUMBER.search(span) and len(span.split()) <= 3 else None
    if measure == "count":
        return span if counts(span) else None
    if measure == "things":  # "how many countries": a number, and no share of them
        return span if "number" in answer_types(span) and not re.search(
            r"%|\bper ?cent", span, re.I) else None
    if measure == "share":  # "37.5%", "12 percent", "a third", "one in five", "3/8"; a
        # number whose "%" follows it ("52" of "52 %") with it
        if _SHARE.search(span):
            return span
        m = re.match(r"\s*(?:%|per ?cent\b)", after, re.I)
        return span + after[:m.end()] if m is not None and _NUMBER.search(span) else None
    if measure == "figure":  # "0.965", "50.7%", "$1.025 billion"; not a code ("I-551")
        return span if _FIGURE_IN.search(span) else None
    if measure == "frequency":
        return span if _OFTEN.search(span) else None
    if measure == "age":  # "35", "35 years old"; not "nine" of "nine spoonfuls"
        unit = re.match(rf"[\s-]*(?:{_UNITS})\b", after, re.I)
        if unit is not None and not re.search(r"year|yr|month|week|day", unit.group(), re.I):
            return None
        if _AGE.search(span) or (_NUMBER.search(span) and len(span.split()) <= _AGE_WORDS
                                 and not _DATE.search(span)):
            return span
        return None
    if _MEASURED.search(span) or _HOW_LONG.search(span):
        return span
    if _NUMBER.search(span) and after:
        m = re.match(rf"[\s-]*(?:{_UNITS})\b", after, re.I)
        if m is not None and m.group().strip(" -"):
            return span + after[:m.end()]
    return None


def fits(expects: Expected, span: str, measure: Measure = "", after: str = "",
         dimension: frozenset[str] = frozenset()) -> bool:
    """Whether a span can be what the question asks for at all (``typed_answer``): a date
    or a time for "when", a count or an amount for "how many / how much", a sum or a bare
    amount for a price, and for "who" and "where" anything but a date, a number or a sum
    alone ("$12.00" names nobody; "the mayor" may); for a measure (``measure``), a number
    in its unit (:func:`measured`; ``after``: the sentence after the span). A span that
    does not fit is never printed as the answer; nor is a number whose unit measures
    another thing than the question's ``dimension``
    (:data:`ragctl.ask.question.DIMENSIONS`: "3.6V" for a current)."""
    if dimension and (kind := unit_kind(span, after)) is not None and kind not in dimension:
        return False
    if expects == "any":
        return True
    if measure:
        return measured(measure, span, after) is not None
    kinds = answer_types(span)
    if expects == "date":  # a date, a time, or when relative to something
        return "date" in kinds or _WHEN.search(span) is not None
    if expects == "email":
        return "@" in span
    if expects == "url":
        return _URL.search(span) is not None
    if expects == "phone":
        return sum(ch.isdigit() for ch in span) >= 6
    if expects in ("number", "money"):
        return "number" in kinds
    # person, place, thing: a word that is no date, number, time or currency word
    words = [w for w in _WORDY.findall(span) if not _DATE.fullmatch(w)
             and not _NUMBER.fullmatch(w) and w.lower() not in _NOT_NAME_WORDS]
    return bool(words)


def type_agreement(expects: Expected, span: str) -> float:
    """1 when the span is of the type the question asks for, 0 when it is not, 0.5 when
    the question does not say (nor does "which <thing>", whose name may be in lower case:
    the ranking was fitted without that type)."""
    if expects in ("any", "thing"):
        return 0.5
    kinds = answer_types(span)
    if expects == "date":
        return float("date" in kinds)
    if expects == "number":
        return float("number" in kinds)
    if expects == "money":  # 27 of SQuAD dev's 30 such answers name a currency or "million"
        return float(bool(_CURRENCY.search(span)))
    return float("name" in kinds and "date" not in kinds)  # person, place


def ruled_out(expects: Expected, span: str, after: str = "", sentence: str = "") -> float:
    """1 when the span is of a kind the question rules out, not merely of another type: a
    street address or a part of one (``after`` is the text that follows the span, whose
    first two words are looked at: "Mary" of "Mary Avenue", "1309 S" of "1309 S. Mary
    Avenue", a state and ZIP code, "CA 94087" or its "94087") for "who", "how many",
    "when" or "how much" (none of SQuAD dev's 1,716 answers to such questions is either;
    "1309 S. Mary Avenue" is no count of students); for "how much did it cost" / "what
    is the salary", a currency sign or unit with no amount ("$/gal"), or a number in a
    ``sentence`` that names no currency at all ("10–12" engineers for a salary: of SQuAD
    dev's 29 such questions, the two whose answer sentence names no currency are answered
    in words, "free", "more expensive"); an amount to the cent is money however written."""
    if not on("ruled_out"):
        return 0.0
    before = sentence[:len(sentence) - len(after) - len(span)] if sentence.endswith(after) \
        else ""
    if expects in ("person", "number", "date", "money") and (
            _ADDRESS.search(span) or _ADDRESS.search(" ".join(after.lstrip(" ,.").split()[:2]))
            or (_ZIP.fullmatch(span) and re.search(r"\b[A-Z]{2} $", before))):
        return 1.0
    if expects == "money":
        if _CURRENCY.search(span):
            return float(not _NUMBER.search(span))
        return float(bool(sentence) and _NUMBER.search(span) is not None
                     and not _CURRENCY.search(sentence) and not _AMOUNT.fullmatch(span.strip()))
    return 0.0


# an amount written as one, to the cent ("1,08,000.00", "518,99"): an invoice's lines name
# their currency once, elsewhere
_AMOUNT = re.compile(r"\d{1,3}(?:[,.\s]\d{2,3})*[.,]\d\d")


# a message's own header line ("Date: 14 Mar 2023 09:12:40 +0000", "From: …"), and a question
# about the message itself ("when was the mail about … sent", "who wrote to me about …")
_HEADER_LINE = re.compile(r"^\s*(?:From|To|Cc|Bcc|Date|Sent|Subject|Reply-To|Received)\s?:\s",
                          re.I)
_ABOUT_MESSAGE = re.compile(r"\b(?:sent|send|sender|senders|mailed|e-?mailed|wrote|written|"
                            r"writes|received|forwarded|replied|subject|addressed)\b", re.I)


def header_line(question: str, sentence: str) -> float:
    """1 when the span comes from a message's own header line (its Date:, From:, Subject:)
    and the question is not about the message itself: "On what day is the garden open
    day?" is not answered by the day the mail announcing it was sent."""
    if not on("header_line") or not _HEADER_LINE.match(sentence):
        return 0.0
    return float(_ABOUT_MESSAGE.search(question) is None)


def echo(question: str, span: str) -> float:
    """1 when the span only repeats the question's own words ("Resolution" for "What
    resolution was the issue closed with?": the label, not its value), so it tells the
    asker nothing. A question that names the options it asks to choose between is not
    checked (its answer is one of them)."""
    if not on("echo") or choice_options(question) is not None:
        return 0.0
    said = content_words(span)
    if not said:
        return 0.0
    asked = {w[:5] for w in content_words(question)}
    return float(all(w[:5] in asked for w in said))


def logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


# Two logistic models over the signals of a span (fitted by bench/reader.py on development
# questions, stored in the reader's manifest): "ranking" — is this span the right answer —
# orders the spans; "answerability" — does the best span's evidence answer the question at
# all — decides whether to answer, with its threshold. The defaults are rough hand values
# for a reader without them.
DEFAULT_RANKING: dict[str, Any] = {"features": ["margin", "relevance", "filter", "type"],
                                   "weights": [0.25, 0.4, 1.5, 0.0], "bias": -2.7}
DEFAULT_ANSWERABILITY: dict[str, Any] = {
    "features": ["margin", "relevance", "filter", "re_best", "overlap", "missing_numbers"],
    "weights": [0.25, 0.2, 1.5, 0.3, 1.0, -1.0], "bias": -1.5, "threshold": 0.5}


def logistic(features: dict[str, float], model: dict[str, Any]) -> float:
    """σ(bias + Σ weight · feature) over the model's named features."""
    z = float(model["bias"]) + sum(float(w) * features[f]
                                   for w, f in zip(model["weights"], model["features"],
                                                   strict=True))
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


def vetoed(features: dict[str, float]) -> bool:
    """Whether a span's own signals rule it out as an answer, whatever the model says: a
    span that cannot be what the question asks for (:func:`fits`), a passage that
    lacks the year or month the question names ("revenue for 2015" over the 2011 report;
    in SQuAD's dev questions such a year is missing from the answer's own paragraph 0.4%
    of the time), one that mentions none of the two or more things the question names
    (``missing_names``), a span of a kind the question rules out (``ruled_out``), or a
    span the reader rates below no answer in a sentence that shares no word with the
    question ("Barry Warsaw", an item of a list of names, for "Who chairs the council?";
    on the development sets this turns away 2 on-topic unanswerable questions and 2
    answerable ones whose answer was wrong, and no right one)."""
    for name, test in VETOES:
        if on(name) and test(features):
            fired(name)
            return True
    return False


# The vetoes, each a rule of ragctl.ask.ruletable: "missing_dates", "missing_names" (with
# "unnamed_subject") and "ruled_out" are features that their rule sets; off, they are 0.
VETOES: tuple[tuple[str, Callable[[dict[str, float]], bool]], ...] = (
    ("typed_answer", lambda f: f.get("fits", 1.0) == 0),
    ("missing_dates", lambda f: f.get("missing_dates", 0.0) > 0),
    ("missing_names", lambda f: f.get("missing_names", 0.0) > 0),
    ("ruled_out", lambda f: f.get("ruled_out", 0.0) > 0),
    ("header_line", lambda f: f.get("header_line", 0.0) > 0),
    ("echo", lambda f: f.get("echo", 0.0) > 0),
    ("no_overlap", lambda f: f["margin"] < 0 and f.get("overlap", 1.0) == 0))


_NUMBERS = re.compile(r"\b\d[\d,.]*\b")


def missing_numbers(question: str, context: str, named: str = "") -> float:
    """1 when the question names a number or a year that the context does not hold
    ("revenue in 2015" over a report of 2011): the context answers another question. The
    number of a numbered name that ``named`` (the document's title and file name) holds
    counts as held: "PEP 8" over a passage of pep-0008.rst, which never writes "8"."""
    if not on("missing_numbers"):
        return 0.0
    asked = {n.strip(".,") for n in _NUMBERS.findall(question)}
    asked -= {number for name, number in identifiers(question) if mentions(named, (name, number))}
    found = {n.strip(".,") for n in _NUMBERS.findall(context)}
    if asked - found:
        fired("missing_numbers")
        return 1.0
    return 0.0


def missing_dates(question: str, context: str) -> float:
    """1 when the question names a year or a month that the context does not mention."""
    if not on("missing_dates"):
        return 0.0
    asked = set(_YEAR.findall(question)) | set(_MONTH.findall(question))
    return float(any(d not in context for d in asked))


def missing_names(question: str, context: str) -> float:
    """1 when the question names two or more things and the context mentions none of them
    ("the total of the Azure Interior invoice" over an Amazon invoice): it answers about
    something else. A name counts as mentioned when a word of the context starts with its
    first five letters (Huguenot, Huguenots). In SQuAD's dev questions this happens with
    the answer's own paragraph 0.13% of the time (1.6% for questions that name one thing,
    which is why one is not enough)."""
    names = set(question_names(question))
    if len(names) < 2 or not on("missing_names"):
        return 0.0
    return float(not any(names_found(names, context)))


# --------------------------------------------------------------------- kept passages

def with_identifier(question: str, hits: Sequence[Hit], order: Sequence[int],
                    kept_order: list[int], duplicates: dict[int, int]) -> list[int]:
    """When the question asks about a numbered name ("PEP 723") that no kept passage
    names, the best-ranked passage that does takes the last place: the relevance
    estimator reads "PEP 1" and "PEP 723" alike. A passage of a document so titled or
    file-named (``pep-0723.rst``) comes before one that mentions it in passing. (In
    SQuAD's dev questions with such a name, the answer's own paragraph lacks the number
    2.8% of the time.)"""
    idents = identifiers(question)
    if not idents or not on("with_identifier"):
        return kept_order
    if any(named_by(hits[k], idents) for k in order):
        return last_place_to(lambda h: named_by(h, idents), hits, order, kept_order,
                             duplicates, "with_identifier")
    return last_place_to(
        lambda h: all(mentions(f"{h.title} {h.text}", i) for i in idents),
        hits, order, kept_order, duplicates, "with_identifier")


def last_place_to(wanted: Callable[[Hit], bool], hits: Sequence[Hit],
                  order: Sequence[int], kept_order: list[int], duplicates: dict[int, int],
                  rule: str) -> list[int]:
    """``kept_order`` with its last place given to the best-ranked passage ``wanted``,
    when no kept passage is one (and a retrieved one is): the rule ``rule`` fired."""
    if not kept_order or any(wanted(hits[order[k]]) for k in kept_order):
        return kept_order
    k = next((k for k in range(len(order)) if k not in kept_order and k not in duplicates
              and wanted(hits[order[k]])), None)
    if k is None:
        return kept_order
    dropped = kept_order[-1]
    for dup in [d for d, of in duplicates.items() if of == dropped]:
        del duplicates[dup]
    fired(rule)
    return [*kept_order[:-1], k]


# --------------------------------------------------------------------- neither option

def neither_option(ans: Answer, question: str, abstain: bool) -> None:
    """"Who is older, A or B?" answered with neither: the documents do not say (no answer,
    when ``abstain``)."""
    two = choice_options(question)
    if two and not ans.abstained and abstain and on("typed_answer") and not any(
            option_in(o, ans.raw_answer) or option_in(ans.raw_answer, o) for o in two):
        ans.answer = ans.raw_answer = ""
        ans.sources, ans.sentences = [], []
        ans.abstained = True
        ans.abstain_reason = f"the documents do not say which of {two[0]!r} " \
            f"and {two[1]!r}"
        fired("typed_answer")


# A question whose form asks for arithmetic — a difference ("how many more …", "by how much
# did … grow", "the difference between …") or a sum of several things ("… in total",
# "combined", "altogether", "together") — is answered by a computation (ragctl.ask.compute,
# ragctl.ask.figures). A span the reader finds is one of the figures, unless the sentence
# itself states the result as one ("grew by $9.7 million", "a total of 128 people"): then it
# is printed; otherwise the question is refused rather than answered with an input.
_ARITHMETIC: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("the ratio", re.compile(r"\bhow many times\b", re.I)),
    ("the difference", re.compile(
        r"\bby how (?:much|many)\b|\bhow (?:much|many)(?: \w+)? (?:more|less|fewer|higher|"
        r"lower|longer|shorter|bigger|smaller|larger|greater|older|younger|later|earlier)\b|"
        r"\bdifference (?:between|in)\b", re.I)),
    ("the sum", re.compile(r"^how (?:much|many)\b.*\b(?:in total|combined|altogether|"
                           r"together|in all)\b|\bwhat (?:is|was|were) the (?:combined|"
                           r"total) (?:number|amount|cost|value) of\b.*\b(?:and|all|every)\b",
                           re.I)),
)
_RESULT_WORDS = re.compile(
    r"\b(?:more|less|fewer|higher|lower|longer|shorter|larger|smaller|greater|bigger|older|"
    r"younger|later|earlier|increased?|decreased?|increases|decreases|grew|grow|growth|rose|"
    r"risen|fell|fallen|dropped|declined?|up|down|difference|differ|change[ds]?|gap|"
    r"total(?:led|ing)?|combined|altogether|together|in all|sum|overall|cumulative|"
    r"aggregate|exceeds?|exceeded)\b", re.I)
RESULT_WINDOW = 60  # characters either side of the span its result words are looked for in


def asked_arithmetic(question: str) -> str | None:
    """What arithmetic the question's form asks for ("the difference", "the sum"), or
    None."""
    q = " ".join(question.split())
    return next((what for what, pattern in _ARITHMETIC if pattern.search(q)), None)


def names_result(text: str) -> bool:
    """Whether ``text`` (a cell's header and its row's name) names a result ("Change",
    "Total", "Difference")."""
    return _RESULT_WORDS.search(text) is not None


def states_result(text: str, start: int, end: int) -> bool:
    """Whether the sentence ``text`` states its span ``text[start:end]`` as the result of
    a comparison or a sum: a word of one in the span ("more than 2.0") or within
    :data:`RESULT_WINDOW` characters of it."""
    return names_result(text[max(0, start - RESULT_WINDOW):end + RESULT_WINDOW])
