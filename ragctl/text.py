"""Small text measures shared by the filter, the verifier and the evaluation.

``normalize_answer`` is the standard SQuAD normalization (lower case, no punctuation,
no articles, single spaces), so exact match and unigram F1 mean what the papers mean.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Iterator

_ARTICLES = re.compile(r"\b(a|an|the)\b")
# the header of a table's column that names the groups a row stands in (a statement's
# "Cost of sales:" over its rows, labels nested over several columns): written by the
# readers, read by the table operations as a group, not as a row's own name
PART_OF = "Part of"
# month names and abbreviations, English and French, as one regular-expression alternation
MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|"
          "december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|janvier|février|mars|"
          "avril|mai|juin|juillet|août|septembre|octobre|novembre|décembre")
# the English month names and abbreviations, by month's number ("sept": 9)
ENGLISH_MONTHS = {name: i for i, names in enumerate((
    "january jan", "february feb", "march mar", "april apr", "may", "june jun", "july jul",
    "august aug", "september sep sept", "october oct", "november nov", "december dec"),
    start=1) for name in names.split()}
_MONTH_NUMBER = {**ENGLISH_MONTHS, **{name: i for i, name in enumerate((
    "janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre",
    "octobre", "novembre", "décembre"), start=1)}}
_YEAR = r"(?P<y>1[5-9]\d\d|2[01]\d\d)"
_MON = rf"(?P<m>{MONTHS})\.?"
_DAY = r"(?P<d>[0-3]?\d)(?:st|nd|rd|th)?"
_DATES = [re.compile(p, re.I) for p in (
    rf"(?<![\w-]){_YEAR}-(?P<mm>[01]?\d)(?:-(?P<dd>[0-3]?\d))?(?![\d-])",  # 2009-06-01
    rf"\b{_DAY}\s+(?:of\s+)?{_MON},?\s+{_YEAR}\b",  # 5 June 2009
    rf"\b{_DAY}(?P<sep>[-/.]){_MON}(?P=sep){_YEAR}\b",  # 12-Dec-2019, as statements write it
    rf"\b{_MON}\s+(?:{_DAY},?\s+)?{_YEAR}\b",  # June 2009, June 5, 2009
    rf"\b(?P<a>[0-3]?\d)[/.](?P<b>[0-3]?\d)[/.]{_YEAR}\b",  # 06/01/2009 (month first
    # unless the first cannot be a month)
    rf"(?<![\w/.-]){_YEAR}(?![\w-])")]  # a year, not part of a name ("FA-2017-0009")
# a day of the calendar as far as a text gives it: (year, month or None, day or None)
CalendarDate = tuple[int, int | None, int | None]


def calendar_dates(text: str) -> list[CalendarDate]:
    """The dates a text names, each as far as it goes ("June 2009" → (2009, 6, None),
    "2009-06-01" → (2009, 6, 1), "1990" → (1990, None, None)); a year inside a fuller date
    is not named again on its own."""
    return [d for d, _, _ in dated_spans(text)]


def dated_spans(text: str) -> list[tuple[CalendarDate, int, int]]:
    """:func:`calendar_dates`, each with where the text names it."""
    out: list[tuple[CalendarDate, int, int]] = []
    taken: list[tuple[int, int]] = []
    for pattern in _DATES:
        for m in pattern.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            g = m.groupdict()
            year = int(g["y"])
            month: int | None = None
            day: int | None = None
            if g.get("mm") is not None:
                month, day = int(g["mm"]), int(g["dd"]) if g.get("dd") else None
            elif g.get("m") is not None:
                month = _MONTH_NUMBER.get(g["m"].lower())
                day = int(g["d"]) if g.get("d") else None
            elif g.get("a") is not None:
                month, day = int(g["a"]), int(g["b"])
                if month > 12:
                    month, day = day, month
            if (month is not None and not 1 <= month <= 12) or (
                    day is not None and not 1 <= day <= 31):
                continue
            taken.append((m.start(), m.end()))
            out.append(((year, month, day), m.start(), m.end()))
    return sorted(out, key=lambda x: x[1])


def same_date(asked: CalendarDate, given: CalendarDate) -> bool:
    """Whether ``given`` (a cell's date) is the day, month or year ``asked`` names: every
    part the question gives agrees ("June 2009" is 2009-06-01's month)."""
    return all(a is None or a == b for a, b in zip(asked, given, strict=True))


# Units a length, a size, a weight, a speed or a time is given in: what "how long / far /
# tall …" asks for, written after the number ("4 inches", "120 days", "a four-year term")
UNIT_WORDS = (
    r"(?:milli|micro|nano)?seconds?|secs?|ms|minutes?|mins?|hours?|hrs?|days?|nights?|"
    r"weeks?|wks?|fortnights?|months?|mos?|years?|yrs?|decades?|centuries|century|"
    r"weekends?|semesters?|terms?|quarters?|seasons?|generations?|"
    r"(?:milli|centi|kilo)?(?:met(?:er|re)s?)|mm|cm|km|kms|inch(?:es)?|ft|feet|foot|"
    r"yards?|yds?|miles?|mi|nautical|leagues?|light-years?|"
    r"(?:milli|kilo)?grams?|mg|kg|kgs|lbs?|pounds?|tons?|tonnes?|ounces?|oz|stones?|"
    r"mph|km/h|kph|knots?|(?:kilo|mega|giga|tera)?(?:bytes?|bits?)|[kmgt]i?b|"
    r"(?:milli)?lit(?:er|re)s?|ml|gallons?|gal|acres?|hectares?|ha|square|sq|storeys?|"
    r"stories|floors?|pages?|words?|characters?|chars?|lines?|laps?|rounds?|steps?|"
    r"spoonfuls?|innings|episodes?|chapters?|%|percent|degrees?|°")
# a unit as written → (its kind, how many of the kind's base unit it is); a currency is
# its own kind. Figures of one kind are converted into the unit of the first.
UNITS: dict[str, tuple[str, float]] = {
    **{w: ("time", 0.001) for w in ("ms", "millisecond", "milliseconds", "msec")},
    **{w: ("time", 1.0) for w in ("s", "sec", "secs", "second", "seconds")},
    **{w: ("time", 60.0) for w in ("min", "mins", "minute", "minutes")},
    **{w: ("time", 3600.0) for w in ("h", "hr", "hrs", "hour", "hours")},
    **{w: ("time", 86400.0) for w in ("day", "days")},
    **{w: ("time", 604800.0) for w in ("week", "weeks", "wk", "wks")},
    **{w: ("month", 1.0) for w in ("month", "months")},
    **{w: ("year", 1.0) for w in ("year", "years", "yr", "yrs")},
    **{w: ("%", 1.0) for w in ("%", "percent", "pct")},
    **{w: ("length", 0.001) for w in ("mm",)}, "cm": ("length", 0.01), "m": ("length", 1.0),
    "km": ("length", 1000.0), "kb": ("data", 1e3), "mb": ("data", 1e6), "gb": ("data", 1e9),
    "tb": ("data", 1e12), "mg": ("mass", 0.001), "g": ("mass", 1.0), "kg": ("mass", 1000.0),
    "ft": ("foot", 1.0), "feet": ("foot", 1.0), "lb": ("lb", 1.0), "lbs": ("lb", 1.0),
    "mi": ("mile", 1.0), "miles": ("mile", 1.0),
    "v": ("volt", 1.0), "mv": ("volt", 0.001), "ma": ("ampere", 0.001), "a": ("ampere", 1.0),
    "ua": ("ampere", 1e-6), "µa": ("ampere", 1e-6), "na": ("ampere", 1e-9),
    "mhz": ("hertz", 1e6), "khz": ("hertz", 1e3), "hz": ("hertz", 1.0), "ghz": ("hertz", 1e9),
    "°c": ("celsius", 1.0), "°f": ("fahrenheit", 1.0), "w": ("watt", 1.0),
    "mw": ("watt", 0.001), "kw": ("watt", 1000.0),
}
# Money as documents write it. Every currency sign Unicode has (its category Sc), the
# active ISO 4217 codes, and the abbreviations receipts use before or after an amount
# ("RM 9.00", "Rs 1939", "45 kr").
CURRENCY_SIGNS = ("[$\xa2-\xa5\u058f\u060b\u07fe\u07ff\u09f2\u09f3\u09fb\u0af1\u0bf9\u0e3f"
                  "\u17db\u20a0-\u20c0\ua838\ufdfc\ufe69\uff04\uffe0\uffe1\uffe5\uffe6]")
CURRENCY_CODES = (
    "AED|AFN|ALL|AMD|ANG|AOA|ARS|AUD|AWG|AZN|BAM|BBD|BDT|BGN|BHD|BIF|BMD|BND|BOB|BRL|BSD|BTN|"
    "BWP|BYN|BZD|CAD|CDF|CHF|CLP|CNY|COP|CRC|CUP|CVE|CZK|DJF|DKK|DOP|DZD|EGP|ERN|ETB|EUR|FJD|"
    "FKP|GBP|GEL|GHS|GIP|GMD|GNF|GTQ|GYD|HKD|HNL|HTG|HUF|IDR|ILS|INR|IQD|IRR|ISK|JMD|JOD|JPY|"
    "KES|KGS|KHR|KMF|KPW|KRW|KWD|KYD|KZT|LAK|LBP|LKR|LRD|LSL|LYD|MAD|MDL|MGA|MKD|MMK|MNT|MOP|"
    "MRU|MUR|MVR|MWK|MXN|MYR|MZN|NAD|NGN|NIO|NOK|NPR|NZD|OMR|PAB|PEN|PGK|PHP|PKR|PLN|PYG|QAR|"
    "RON|RSD|RUB|RWF|SAR|SBD|SCR|SDG|SEK|SGD|SHP|SLE|SOS|SRD|SSP|STN|SVC|SYP|SZL|THB|TJS|TMT|"
    "TND|TOP|TRY|TTD|TWD|TZS|UAH|UGX|USD|UYU|UZS|VES|VND|VUV|WST|XAF|XCD|XOF|XPF|YER|ZAR|ZMW|"
    "ZWL|RM|Rs|kr|zł|Kč|Ft|lei|CFA")
_PUNCT = set(string.punctuation) | {"‘", "’", "“", "”", "–", "—"}
_WORD = re.compile(r"\w+")

STOPWORDS = frozenset("""
a an the and or but if of to in on at by for with from as is are was were be been being
it its this that these those there here what which who whom whose when where why how
do does did done can could would should will shall may might must has have had having
i you he she we they me him her us them my your his our their not no nor so than too
very s t just about into over under after before between through during up down out off
""".split())


def normalize_answer(text: str) -> str:
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def tokens(text: str) -> list[str]:
    return normalize_answer(text).split()


def content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def exact_match(prediction: str, golds: Iterable[str]) -> float:
    p = normalize_answer(prediction)
    return float(any(p == normalize_answer(g) for g in golds))


def unigram_f1(prediction: str, gold: str) -> float:
    p, g = tokens(prediction), tokens(gold)
    if not p or not g:
        return float(p == g)
    common = Counter(p) & Counter(g)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def max_f1(prediction: str, golds: Iterable[str]) -> float:
    return max((unigram_f1(prediction, g) for g in golds), default=0.0)


def contains_answer(text: str, golds: Iterable[str]) -> bool:
    """Whether ``text`` contains one of the answers (normalized, whole words)."""
    padded = f" {normalize_answer(text)} "
    return any(f" {normalize_answer(g)} " in padded for g in golds if normalize_answer(g))


def overlap(query: str, text: str) -> float:
    """Share of the query's content words that occur in ``text`` (0..1)."""
    q = set(content_words(query))
    if not q:
        return 0.0
    t = set(content_words(text))
    return len(q & t) / len(q)


def passage_text(title: str, text: str) -> str:
    """A passage as the models read it: its title, then its text."""
    return f"{title}. {text}" if title else text


def first_words(text: str, n: int) -> str:
    """The first ``n`` whitespace words, joined by single spaces; ``n`` = 0 keeps ``text``."""
    return " ".join(text.split()[:n]) if n else text


def count_tokens(text: str) -> int:
    """A tokenizer-free size measure (whitespace words) used where no tokenizer is at hand."""
    return len(text.split())


_NONSPACE = re.compile(r"\S+")
_CLOSING = frozenset(",.;:!?)]")
_OPENING = frozenset("([")


# what a table or a form writes where it holds nothing ("--", "n/a"): never an answer
BLANKS = frozenset({"", "-", "--", "---", "—", "–", "n/a", "na", "none", "nil", "tbd", "tba",
                    "?", "…"})


def blank(value: str) -> bool:
    """Whether a cell's or a field's value says it holds nothing (:data:`BLANKS`)."""
    return value.strip().lower() in BLANKS


def _joined(previous: str, word: str) -> bool:
    """Whether ``word`` follows ``previous`` without a space: closing punctuation (";",
    ")." or "...") does, a word that only starts with it (":=", "!=", ".NET", ".5")
    does not, nor a label's value that is a question mark ("Attendance: ?", a table cell
    left unknown; "Date: ," in prose is still joined)."""
    return (word[0] in _CLOSING and (len(word) == 1 or not (word[1].isalnum()
                                                           or word[1] in "=<>"))
            and not (previous.endswith(":") and len(previous) > 1 and word[0] == "?"))\
        or previous[-1] in _OPENING


def normalize_space(raw: str) -> str:
    """The words of ``raw`` with one space between them, and none before a word that
    starts with closing punctuation or after one that ends with an opening bracket
    ("FAQ ;" → "FAQ;", "( chunk_words)" → "(chunk_words)": what is left where markup was
    blanked, or a PDF's stray space)."""
    out: list[str] = []
    previous = ""
    for word in raw.split():
        if previous and not _joined(previous, word):
            out.append(" ")
        out.append(word)
        previous = word
    return "".join(out)


def _aligned(raw: str, norm: str) -> Iterator[tuple[re.Match[str], int]]:
    """Each word of ``raw`` with where it starts in ``norm``, ``raw``'s words with the
    whitespace between them changed (one space, or none: :func:`normalize_space`)."""
    pos, w = 0, 0
    for m in _NONSPACE.finditer(raw):
        pos += w
        if not norm.startswith(m.group(), pos):
            pos += 1  # the space between two words
        w = len(m.group())
        yield m, pos


def line_starts(raw: str, norm: str | None = None) -> set[int]:
    """Offsets in ``norm`` (``raw``'s words, :func:`normalize_space`) of the words that
    start a line of ``raw`` (not an indented continuation line): where a mail header's or
    a PEP header's field ends."""
    norm = normalize_space(raw) if norm is None else norm
    return {pos for k, (m, pos) in enumerate(_aligned(raw, norm))
            if k > 0 and raw[m.start() - 1] == "\n"}


def raw_offsets(raw: str, start: int, end: int, norm: str | None = None) -> tuple[int, int]:
    """Offsets in ``raw`` of ``norm[start:end]``, where ``norm`` is raw's words with the
    whitespace between them changed (:func:`normalize_space`, by default; the text stored
    for the sentence, which an index built by an earlier version may have joined
    differently)."""
    norm = normalize_space(raw) if norm is None else norm
    a = b = None
    last_end = 0
    for m, pos in _aligned(raw, norm):  # pos: where the word starts in the normalized text
        w = len(m.group())
        if a is None and start < pos + w:
            a = m.start() + max(0, start - pos)
        if a is not None and end <= pos + w:
            b = m.start() + max(0, end - pos)
            break
        last_end = m.end()
    if a is None:
        a = len(raw)
    if b is None:
        b = last_end
    return a, max(a, b)


def readable(text: str) -> tuple[str, bool]:
    """``text`` with bytes that were not UTF-8 replaced by U+FFFD, and whether any were.

    Python hands undecodable bytes of argv (and of stdin read with ``surrogateescape``) over
    as lone surrogates, which cannot be encoded again: tokenizers, SQLite and the terminal
    then fail on them."""
    try:
        text.encode("utf-8")
        return text, False
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogateescape") if _only_escapes(text) else \
            text.encode("utf-8", "surrogatepass")
        return raw.decode("utf-8", "replace"), True


def _only_escapes(text: str) -> bool:
    """Every lone surrogate is one that ``surrogateescape`` made (U+DC80..U+DCFF)."""
    return all(not 0xD800 <= ord(ch) <= 0xDFFF or 0xDC80 <= ord(ch) <= 0xDCFF for ch in text)


_CITE = re.compile(r"\s*\[(\d{1,3})\]")


def strip_citations(text: str) -> tuple[str, list[int]]:
    """``text`` without its citation markers (``[1]``), and the numbers they held."""
    numbers = [int(m) for m in _CITE.findall(text)]
    return " ".join(_CITE.sub(" ", text).split()), numbers


def skip_kind(reason: str) -> str:
    """What a skip reason counts as in summaries: "corrupt PDF (…); skipped" → "corrupt
    PDF"."""
    return reason.split(";")[0].split(" (")[0].strip()
