"""What a question names, and which documents name it.

- **Names** (:func:`question_names`, :func:`identifiers`): the capitalized words of a
  question and its numbered names ("PEP 723", "Form 1040"); whether a text mentions them
  (:func:`names_found`, :func:`mentions`, :func:`option_in`).
- **A document's names** (:func:`document_name`): its title and its file's name as words
  ("pep-0008.rst" → "pep 8"); whether it is named by the question (:func:`named_by`,
  :func:`title_rank`), or a passage's section is (:func:`heading_named`).
- **Which documents**: the indexed documents a question's numbered names name
  (:func:`named_paths`, :func:`named_hits`), the document that answers best
  (:func:`answering_document`) and its sentences (:func:`document_sentences`), and what
  the documents say of each thing a question names (:func:`said_of`, with the year given
  there).
- **Metadata** (:func:`is_metadata`): header blocks ("PEP: 20 Title: … Author: …", mail
  headers, front matter) and title blocks (capitals, a rule of dashes) are never quoted
  as an answer or a nugget (:func:`unquotable`).

The look-ups that read the index take the collection (and the retriever) they read: this
module never calls back into the pipeline.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ragctl.records import Hit, ScoredSentence, Sentence, SourceSpan
from ragctl.text import CURRENCY_CODES, CURRENCY_SIGNS, content_words

if TYPE_CHECKING:
    from ragctl.ask.retrieve import Retriever
    from ragctl.store.collection import Collection

# Sums of money as documents write them: a currency sign, code or unit (_CURRENCY), and a
# sum written currency first or last (_SUM)
_SIGNS = CURRENCY_SIGNS
_CODES = CURRENCY_CODES
# standing alone ("amounts in CHF"), the codes that are no English word ("ALL", "TOP")
_ISO = "|".join(c for c in CURRENCY_CODES.split("|") if len(c) == 3 and c.isupper()
                and c not in {"ALL", "TOP", "CUP", "TRY", "SOS", "MAD", "BOB", "PEN", "GEL",
                              "MOP", "SAR", "TND", "WST", "BAM", "ERN", "LAK", "LSL", "SHP"})
_UNITS = "euros?|dollars?|pounds?|rupees?|ringgits?|pesos?|yuan|rand|kronor|kroner|krona|" \
    "francs?|yen|cents?|pence"
_SCALES = "million|billion|thousand|trillion|crore|lakh"
# a code counts as a currency in its own case only ("RM 9.00", not "rm -rf"); a sign or a
# unit word anywhere
_CURRENCY = re.compile(rf"{_SIGNS}|\b(?:{_CODES})\.?(?=\s?\d)|(?<=\d)\s?(?:{_CODES})\b|"
                       rf"\b(?i:{_UNITS}|{_SCALES})\b|\b(?:{_ISO})\b")
_SUM = re.compile(
    rf"(?:{_SIGNS}|\b(?:{_CODES})\.?(?=\s?\d))\s?\d[\d,.]*\d(?:\s?(?i:{_SCALES})\b)?|"
    rf"\b\d[\d,.]*\s?(?:(?i:million|billion|thousand) )?(?:{_CODES}|(?i:{_UNITS}))\b")


# --------------------------------------------------------------------- options named in a text

_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.I)


def option_in(option: str, text: str) -> tuple[int, int] | None:
    """Where ``text`` names the option (its first mention, case and a leading article
    aside; a word of it may end in "s" or "'s", a colon may follow one: "PEP: 703"), or
    None. An option not written so is looked for by its name alone: "the Azure Interior
    invoice" as "Azure Interior"."""
    bare = _ARTICLE.sub("", option).strip()
    for words in (bare.split(), _name_in(bare)):
        if not words:
            continue
        m = re.search(r"(?<![\w])" + r"[\s:#]{1,3}".join(map(re.escape, words))
                      + r"(?:'s|’s|s)?(?![\w])", text, re.I)
        if m:
            return m.start(), m.end()
    return None


def _name_in(option: str) -> list[str]:
    """The longest run of capitalized words (or numbers) of an option that has other
    words too ("the AWS invoice" → AWS), else nothing."""
    runs = re.findall(r"(?:[A-Z0-9][\w'’.&-]*)(?:\s+[A-Z0-9][\w'’.&-]*)*", option)
    best = max(runs, key=len, default="")
    return best.split() if best and best != option else []


def title_rank(option: str, title: str, path: str = "") -> int:
    """0 for a document (or section) named the option, by its title or its file's name
    ("PEP 703" and pep-0703.rst), 1 for one whose title holds it, 2 otherwise: where to
    look for what the documents say of it first."""
    bare = " ".join(_ARTICLE.sub("", option).lower().split())
    if bare in (title.strip().lower(), file_words(path).lower() if path else None):
        return 0
    return 1 if option_in(option, title) else 2


_DATED = re.compile(r"\b(?:Created|Date|Dated|Sent|Published|Posted|Issued|Invoice Date)\s*:"
                    r"\s*(?P<d>[^\n:]{4,30})", re.I)


def stated_year(text: str, near: int) -> int | None:
    """The year a document's first sentence gives for it: that of a labelled date
    ("Created: 28-Feb-2018", "Date: …") first, else the first year in its first ``near``
    characters ("Annie Morton (born October 8, 1970) is …")."""
    for m in _DATED.finditer(text):
        year = first_year(m.group("d"))
        if year is not None:
            return year
    return first_year(text[:near])


YEAR_NEAR = 60  # characters after a mention: "Annie Morton (born October 8, 1970)"


def first_year(text: str) -> int | None:
    """The first year (1000–2099) a text gives."""
    m = re.search(r"(?<![\d,.])(1\d{3}|20\d{2})(?![\d,]|\.\d)", text)
    return int(m.group(1)) if m else None


# --------------------------------------------------------------------- metadata

_FIELD = re.compile(r"(?:^|\s)([A-Z][A-Za-z-]{1,24}):\s")


_RULE = re.compile(r"(?:-\s){4,}-")  # "- - - - -": a caption's rule, as in a transcript


def is_metadata(text: str) -> bool:
    """A header block rather than prose: at least two "Field: value" pairs with short
    values (PEP headers, mail headers, front matter), a line that is only a field, or a
    title block: a rule of spaced dashes, or three words or more in capitals ("SUPREME
    COURT OF THE UNITED STATES - - - - - x MICHAEL A. KNOWLES, WARDEN") that name no sum
    (a receipt's "GRAND TOTAL RS 1,939.00" is content)."""
    words = len(text.split())
    letters = [ch for ch in text if ch.isalpha()]
    if _RULE.search(text) or (
            words >= 3 and letters
            and sum(ch.isupper() for ch in letters) >= 0.7 * len(letters)
            and not _CURRENCY.search(text) and not re.search(r"\d[.,]\d", text)):
        return True
    fields = list(_FIELD.finditer(text))
    if len(fields) >= 2:
        return words / len(fields) <= 10
    return len(fields) == 1 and fields[0].start() <= 1 and words <= 8


def unquotable(text: str, place: str = "") -> bool:
    """Never a quote or a nugget: metadata (:func:`is_metadata`), a lead-in that ends
    with a colon ("The steering council shall work to:"), which says nothing without the
    list that follows it (a sentence of its own since list items are), or text that is
    not prose (:func:`not_prose`: quoted mail, a signature, a line of code, a heading
    alone)."""
    return is_metadata(text) or text.rstrip().endswith(":") or not_prose(text, place)


_QUOTE_MARK = re.compile(r"^\s*(?:>\s*)+")
_CLOSING = re.compile(r"^\W*(?:(?:best|kind|warm|warmest|many)\s+)?(?:regards|wishes|thanks|"
                      r"thank you|cheers|sincerely|yours(?: truly| sincerely)?)\b"
                      r"[\s,.!\w'-]{0,40}$|"
                      r"^\W*sent from my\b|^\s*--\s*$", re.I)
_CODE_START = re.compile(r"^\s*(?:\$ |>>> |#include\b|import \w|from [\w.]+ import\b|def \w+\(|"
                         r"class \w+[(:]|function\b|var |let |const |public |private |return\b)")
_CODE_SIGNS = frozenset("{}[]();=<>$#*/\\|_`~^&")


def not_prose(text: str, place: str = "") -> bool:
    """Whether a sentence is something other than prose a person would quote: a mail's
    quoted text ("> > Thanks"), a closing or a signature ("Best regards, Ana", "Sent from
    my phone"), a line of code (it starts like one, or one in eight of its signs is
    code punctuation), or a heading alone (the last heading of its ``place``, again, with
    nothing under it)."""
    t = text.strip()
    if not t or _QUOTE_MARK.match(t) or _CLOSING.match(t) or _CODE_START.match(t):
        return True
    signs = [ch for ch in t if not ch.isspace()]
    if sum(ch in _CODE_SIGNS for ch in signs) >= len(signs) / 8:
        return True
    heading = place.rsplit(" > ", 1)[-1].strip().lower() if place else ""
    return bool(heading) and t.rstrip(".").lower() == heading


# --------------------------------------------------------------------- the names a question gives

# a year, also one written after a fiscal or calendar year's letters ("FY2023")
_YEAR = re.compile(r"(?:\b|(?<=FY)|(?<=CY))(?:1[5-9]\d\d|20\d\d)\b")
_MONTH = re.compile(r"\b(?:January|February|March|April|May|June|July|August|September|"
                    r"October|November|December)\b")


_QUESTION_NAME = re.compile(r"\b[A-Z][\w'’&.-]*[\w]|\b[A-Z]\b")
_NOT_NAMES = frozenset({"I", "A", "An", "The", "My", "Our", "Your", "His", "Her", "Their", "Its",
                        "In", "On", "At", "Of", "For", "By", "To", "From", "And", "Or"})


def _bare(word: str) -> str:
    """A word lower-cased, without a final full stop or possessive ("ABC's" → "abc")."""
    return re.sub(r"['’]s?$", "", word.lower().rstrip("."))


def _after_first_word(question: str) -> str:
    """The question without its first word (a capital there is no name: "What 1971 film")."""
    parts = question.split(maxsplit=1)
    return parts[1] if len(parts) > 1 else ""


def question_names(question: str) -> list[str]:
    """The names a question mentions: its capitalized words after the first ("the Azure
    Interior invoice" → Azure, Interior), lower-cased."""
    return [_bare(m) for m in _QUESTION_NAME.findall(_after_first_word(question))
            if m not in _NOT_NAMES]


# The phrase a question names its source by ("according to the New Jersey State Police 2022
# fatal crash report", "in the City of Melbourne bars and pubs with patron capacity
# dataset", "the Office 365 costing spreadsheet"): a noun that names a kind of document
# (SOURCE_NOUNS), and the words before it back to its article or possessive, or to the
# preposition that brings it in. Its words say which document, not which row or column:
# "fatal crash" picks no "Fatalities" column for "how many pedestrians were killed".
SOURCE_NOUNS = frozenset(
    "report dataset spreadsheet workbook sheet table paper release ledger statement "
    "file document invoice receipt bill datasheet filing 10-k 10-q survey study article "
    "list memo letter slides deck presentation catalog catalogue timetable manual csv "
    "xlsx pdf".split())
SOURCE_WORDS = 12  # words of a source phrase at most, its noun's included
_SOURCE_TOKEN = re.compile(r"[\w'’&.-]*\w|[^\w\s]")
# the nouns after a kind of document that make it a field's name, not a document's
_SOURCE_FIELDS = frozenset("number no date total amount id name line item cell row column "
                           "period price time size type format header entrie value field "
                           "page title".split())
_SOURCE_OPENS = frozenset("the its their this that these those a an our my your his her".split())
_SOURCE_BEFORE = frozenset("to in from on at under within into according what which "
                           "who whom how when where why is are was were do does did has "
                           "have had".split())


@lru_cache(maxsize=256)  # asked of each row's columns and of the rows' names
def source_spans(question: str) -> tuple[tuple[int, int], ...]:
    """Where the question names the document it asks of (:data:`SOURCE_NOUNS`), as
    character spans: "the F1 driver standings workbook", "Stats SA's May 2023 CPI
    release"; not a document's kind that qualifies a noun after it ("invoice numbers"),
    nor one without an article or an owner ("on complex tables")."""
    tokens = list(_SOURCE_TOKEN.finditer(question))
    spans: list[tuple[int, int]] = []
    for i, t in enumerate(tokens):
        word = re.sub(r"['’]s$", "", t.group().lower().rstrip("."))  # "the datasheet's"
        if word.removesuffix("s") not in SOURCE_NOUNS and word not in SOURCE_NOUNS:
            continue
        after = tokens[i + 1].group().lower() if i + 1 < len(tokens) else ""
        if after[:1].isdigit() or after.removesuffix("s") in _SOURCE_FIELDS:
            continue  # "table 4", "invoice numbers", "report date"
        start, owner, opened = i, False, False
        for j in range(i - 1, max(-1, i - SOURCE_WORDS), -1):
            text = tokens[j].group()
            low = text.lower()
            quote = text in ("'", "’", '"', "“", "”")
            if low in _SOURCE_BEFORE or (not text[0].isalnum() and not quote) \
                    or (owner and not text[0].isupper()):
                break
            start = j
            if low in _SOURCE_OPENS:
                opened = True
                break
            # an owner's name, all of it: "Stats SA's", "the FPA's"
            owner = owner or low.endswith(("'s", "’s"))
        # a document is named with its article or its owner: "on complex tables" is none
        if start < i and (opened or owner):
            a, b = tokens[start].start(), t.end()
            if spans and a <= spans[-1][1]:  # "the VEML6075 datasheet's timing table"
                a = min(a, spans.pop()[0])
            spans.append((a, b))
    # whoever the question has say it: "According to the National Park Service, did …",
    # "…, according to its 2024 report?"
    said = _ACCORDING.search(question)
    if said is not None:
        a, b = said.span("who")
        if not any(a < y and x < b for x, y in spans):  # ("according to Stats SA's May
            # 2023 CPI release for May 2023": the document's kind ends it)
            spans = sorted([*spans, (a, b)])
    return tuple(spans)


_ACCORDING = re.compile(r"(?:^|,\s*)(?P<who>according to [^,?;]{2,80}?)(?=\s*(?:,|\?|$))",
                        re.I)


def unsourced(question: str) -> str:
    """The question without the phrases that name its document (:func:`source_spans`)."""
    for a, b in reversed(source_spans(question)):
        question = f"{question[:a]} {question[b:]}"
    return question


def names_found(names: Iterable[str], text: str) -> list[bool]:
    """For each name (lower case), whether ``text`` mentions it: a word of the text, or a
    part of a hyphenated one ("open-source" names "open" and "source", as the question's
    words are split), that is the name or starts with its first five letters (Huguenot,
    Huguenots)."""
    words = {_bare(w) for w in re.findall(r"[\w'’&.-]+", text)}
    words |= {part for w in words if "-" in w for part in w.split("-") if part}
    stems = {w[:5] for w in words}
    return [n in words or n[:5] in stems for n in names]


def file_words(path: str) -> str:
    """A file's name as words, numbers without their leading zeros: "pep-0008.rst" →
    "pep 8"."""
    stem = Path(path).stem
    return " ".join(w.lstrip("0") or "0" if w.isdigit() else w
                    for w in re.split(r"[-_.\s]+", stem) if w)


class Titled(Protocol):
    """A document, or a record of one of its passages or sentences: its title and path."""

    @property
    def title(self) -> str: ...

    @property
    def path(self) -> str: ...


def document_name(doc: Titled) -> str:
    """A document's names, as it or a record of one of its passages or sentences carries
    them: its title and its file's name as words ("Style Guide for Python Code pep 8")."""
    return f"{doc.title} {file_words(doc.path)}"


def place_dates(spans: Iterable[SourceSpan]) -> str:
    """The years and months that the places of ``spans`` name ("2025 Schedule": 2025)."""
    places = " ".join(dict.fromkeys(s.place for s in spans))
    return " ".join(_YEAR.findall(places) + _MONTH.findall(places))


def named_by(doc: Titled, idents: Iterable[tuple[str, str]]) -> bool:
    """Whether a document is titled or file-named by every numbered name ("PEP 13":
    ``pep-0013.rst``, "PEP 13: Python Language Governance")."""
    return all(mentions(document_name(doc), i) for i in idents)


def heading_named(question: str, place: str) -> bool:
    """Whether the question names the section a passage is in: every word of the last
    heading of ``place`` ("Specification > One-line Docstrings") is in the question, and
    they are at least half of the question's topic — its words in lower case (not names),
    after "about" when it says "about" ("What does PEP 257 say about one-line
    docstrings?"; not "… about the length of docstring and comment lines" for a section
    "What is a Docstring?")."""
    words = {w[:5] for w in content_words(place.rsplit(" > ", 1)[-1])}
    if not words or len(words) > 4:
        return False
    rest = _after_first_word(question)
    about = re.split(r"\babout\b", rest, maxsplit=1)[-1]
    lower = " ".join(w for w in re.findall(r"\w+", about) if w.islower())
    topic = {w[:5] for w in content_words(lower)} - {"say", "says", "said"}
    asked = {w.lower()[:5] for w in re.findall(r"\w+", rest)}
    return words <= asked and bool(words & topic) and len(words & topic) >= len(topic) / 2


_IDENTIFIER = re.compile(r"\b([A-Z][A-Za-z-]*)\s*(?:[#:]|No\.)?\s*(\d[\d.]*[A-Za-z]?)\b")


def identifiers(question: str) -> list[tuple[str, str]]:
    """The numbered names a question asks about: "PEP 723", "Form 1040", "Apollo 11"
    (name, number); not dates ("January 30th", "the Broncos 2015 season"), scores ("0-4")
    nor the question's first word ("What 1971 film")."""
    rest = _after_first_word(question)
    return [(m.group(1), m.group(2)) for m in _IDENTIFIER.finditer(rest)
            if m.group(1) not in _NOT_NAMES and not _MONTH.match(m.group(1))
            and not _YEAR.fullmatch(m.group(2)) and not rest[m.end():].startswith("-")]


def mentions(text: str, ident: tuple[str, str]) -> bool:
    """Whether ``text`` names ``ident`` ("PEP 723" in "PEP: 723 Title: …")."""
    name, number = ident
    return re.search(rf"\b{re.escape(name)}\W{{0,3}}{re.escape(number)}\b", text,
                     re.IGNORECASE) is not None


# --------------------------------------------------------------------- which documents

NAMED_DOCUMENTS = 2  # documents named by the question's numbered names, searched for


def named_paths(collection: Collection, idents: Sequence[tuple[str, str]]) -> list[str]:
    """The indexed documents titled or file-named by every numbered name."""
    return [d.path for d in collection.store.documents() if named_by(d, idents)]


def named_hits(collection: Collection, question: str, hits: Sequence[Hit]) -> list[Hit]:
    """The first passage of each document the question names by a numbered name ("What
    is the status of PEP 13?" and ``pep-0013.rst``) when the search found none of its
    passages: its header is what the question is about, however many passages of
    other documents mention "PEP 13" in passing."""
    idents = identifiers(question)
    if not idents or any(named_by(h, idents) for h in hits):
        return []
    store, out = collection.store, []
    for path in named_paths(collection, idents)[:NAMED_DOCUMENTS]:
        first = store.sentences_like(path, ["%"], limit=1)
        passage = store.passages([first[0].passage_id]).get(first[0].passage_id) \
            if first else None
        if passage is not None:
            out.append(Hit(passage_id=passage.id, **passage.span()))
    return out


def answering_document(question: str, hits: Sequence[Hit], kept: Sequence[Hit],
                       relevance: dict[int, float], named: Mapping[str, int] | None = None
                       ) -> tuple[Hit, list[Hit]] | None:
    """The document that answers best: the most relevant kept one that names what the
    question names ("PEP 723" all of its numbered names, "the Dropbox ATF post" one of
    its names), one so titled or file-named first, then one that names more of the
    question's names (``named``: the number each document names, of
    :class:`ragctl.ask.grounding.Grounding`), as its best passage and its passages
    retrieved, in document order."""
    idents, names = identifiers(question), question_names(question)
    counts = named or {}
    # a document so titled or file-named ("PEP 13", pep-0013.rst) before one that
    # mentions it in passing; "Acme GmbH … (Rechnungsbetrag)" is the invoice that names
    # Acme, not another that only holds the label
    for best in sorted(kept, key=lambda h: (not (idents and named_by(h, idents)),
                                            -counts.get(h.path, 0),
                                            -relevance[h.passage_id])):
        same = sorted((h for h in hits if h.path == best.path), key=lambda h: h.start_char)
        # the file's name counts: "…_R0005532486.pdf" names its invoice number
        text = " ".join([Path(best.path).stem.replace("_", " "),
                         *(f"{h.title} {h.place} {h.text}" for h in same)])
        if all(mentions(text, i) for i in idents) \
                and (not names or any(names_found(names, text))):
            return best, same
    return None


def document_sentences(collection: Collection, path: str, same: Sequence[Hit],
                       patterns: Sequence[str]) -> list[Sentence]:
    """The sentences of a document's passages retrieved, then those of the whole
    document LIKE ``patterns``."""
    per_passage = collection.store.sentences_of([h.passage_id for h in same])
    found = [s for h in same for s in per_passage.get(h.passage_id, [])]
    return found + collection.store.sentences_like(path, patterns)


OPTION_SEARCH = 5  # passages searched for by a name the question's own search missed


def said_of(collection: Collection, retriever: Retriever, names: Sequence[str],
            hits: Sequence[Hit], kept: Sequence[Hit], per_passage: dict[int, list[Sentence]],
            scored: Sequence[ScoredSentence], relevance: dict[int, float]
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
            pool += [h for h in retriever.search(name, limit=OPTION_SEARCH)
                     if h.passage_id not in seen and title_rank(name, h.title, h.path) == 0]
    sentences = {**per_passage, **collection.store.sentences_of(
        [h.passage_id for h in pool if h.passage_id not in per_passage])}
    filter_scores = {s.sentence.id: s.score for s in scored}
    picked: list[tuple[Sentence, tuple[int, int], Sentence, int | None]] = []
    for name in names:
        rank = {h.passage_id: title_rank(name, h.title, h.path) for h in pool}
        ranked = sorted(pool, key=lambda h: rank[h.passage_id])
        named = next((h for h in ranked if rank[h.passage_id] == 0), None)
        # its own document: what it says first (a header's fields too: "Status: Final")
        lead = (collection.store.sentences_like(named.path, ["%"], limit=1)
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
