"""Grounding: an answer comes from a document that names what the question names.

A question that names something distinctive — a shop, a person, a product, a place, an
invoice number, a quoted title ("How much did I pay at Larkspur Hardware?") — is about the
documents that name it. :func:`distinctive_names` finds those names in the question's own
words (runs of capitalized words after its first word, identifiers with digits, quoted
titles); :func:`ground` looks each one up in the index (the full-text search over every
passage, and each document's title and file name) and returns a :class:`Grounding`:

- a name that no document mentions is **missing**: ``ask`` says so ("nothing in your
  documents mentions 'Larkspur Hardware'") instead of answering from a document about
  something else;
- otherwise the passages an answer may come from are those of the documents that name
  one of the question's names (:meth:`Grounding.restrict`): a document names a
  name when it holds one of its words (in a passage, its title or its file name: a
  passage says "Manning" of "Peyton Manning"); when retrieval found none of them, the
  passages that name the question's names take their place;
- a name with digits is an identifier (a code, "INV-2041"; a number after a word that
  numbers documents, "invoice 12345678", :data:`NUMBERED`): when documents name it, only
  they are meant, not the others that name the question's other names ("Contoso"); a
  number no document holds (a scan's digits misread) is no missing name.

A name found in more than :data:`FREQUENT` passages (the folder's own subject: "Python" in
a folder of Python documents) says little about which document is meant and is not used.
A question written in title case gives no names: its capitals are not a sign of them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ragctl.ask.documents import document_name
from ragctl.ask.switches import fired, on
from ragctl.records import Hit

if TYPE_CHECKING:
    from ragctl.store.base import Store

FREQUENT = 400  # passages: a name this common is the folder's subject, not a pointer
INJECTED = 4  # passages naming the question's names, when retrieval found none
# a document named by its title or file name alone, when retrieval found none of its
# passages: its first DOCUMENT_PASSAGES (read from its first DOCUMENT_SENTENCES sentences)
DOCUMENT_PASSAGES = 12
DOCUMENT_SENTENCES = 400
NAMED_PASSAGES = 20  # passages of the documents named, where a missing name is looked for
IDENT_SPACED = 8  # letters and digits: a code this long is found with OCR's spaces in it

# words that are capitalized without being names: a question's pronouns and articles,
# honorifics, calendar words (dates are matched as dates, not as names)
_NOT_NAMES = frozenset(
    "i i'm i've i'd a an the my our your his her their its in on at of for by to from and or "
    "with as is are was were do does did what which who whom whose when where why how "
    "mr mrs ms dr prof sir "
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec "
    "monday tuesday wednesday thursday friday saturday sunday "
    # a file's format: "the ODS parts budget", "the PDF invoice"
    "pdf csv tsv ods xlsx xls xlsm docx doc html htm txt md rst eml mbox png jpg jpeg tiff "
    "json xml".split())
# words that name a kind of document, not one document: a question's "accounting ledger"
# names accounting.csv by "accounting", not by "ledger"
_DOCUMENT_WORDS = frozenset(
    "invoice invoices receipt receipts bill bills report reports table tables list lists file "
    "files data document documents spreadsheet spreadsheets sheet sheets workbook workbooks "
    "statement statements letter letters mail mails email emails note notes form forms log "
    "logs ledger record records page pages test sample example draft copy final new old "
    "version scan scans".split())
# the words of a name that say what kind of body it is ("the Village of Scarsdale", "Acme
# Inc."), which its own papers often leave out: such a word that no document holds does
# not make the name missing when its other words are held and no file is named by the
# question instead (:func:`named_by_file`)
KIND_OF_BODY = frozenset(
    "village town city county borough municipality council district parish province region "
    "club society association foundation company corporation corp inc ltd llc plc gmbh ag "
    "co group university college school academy institute hospital department agency "
    "committee authority trust church".split())
# joining words inside a name: "Bank of America", "Casa de Campo", "Procter & Gamble"
_JOINERS = frozenset("of de da di del der van von du la le y & the".split())
_TOKEN = re.compile(r"[^\s,;:!?()\[\]{}\"“”]+|[,;:!?()\[\]{}]")
_QUOTED = re.compile(r"[\"“]([^\"“”]{3,80})[\"”]|(?<!\w)'([^']{3,80})'(?!\w)")
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)", re.I)  # "10th": no identifier
# a period written short ("FY2023", "Q2", "H1'24", "CY2022"): a time, as a year is, not
# a name; a report writes it its own way ("Fiscal Year 2023")
_PERIOD = re.compile(r"(?:FY|CY|Q[1-4]|H[12])['’]?(?:\d\d){0,2}", re.I)
# a suffix that makes a name a word of another kind: "Super Bowl-related" is Super Bowl
_SUFFIX = re.compile(r"-(?:related|based|led|style|like|owned|born|made|era|wide|specific)$",
                     re.I)
_IDENT = re.compile(r"^(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]*[A-Za-z0-9]$")
# a document's number after a word that numbers documents: "12345678", "2207-114"
_NUMBER_ID = re.compile(r"(?=(?:\D*\d){3})\d+(?:[-/]\d+)*")
_TITLE_CASE = 0.6  # of a question's words after the first, capitalized: no names
# the words after which a number is a document's identifier, not a quantity: "invoice
# 12345678", "receipt 334567", "order no. 4471"
NUMBERED = frozenset("invoice invoices receipt order no nr number # account ticket case policy "
                     "claim reference ref id po customer member transaction booking "
                     "confirmation serial contract".split())


@dataclass(frozen=True)
class Name:
    """A distinctive name as the question writes it, and its words as looked up."""

    text: str
    words: tuple[str, ...]


def _plain(text: str) -> str:
    """Lower case, without accents: "Beyoncé" → "beyonce"."""
    return "".join(ch for ch in unicodedata.normalize("NFKD", text.lower())
                   if not unicodedata.combining(ch))


def _word(token: str) -> str:
    return _SUFFIX.sub("", re.sub(r"['’]s?$", "", token.strip(".'’-")))


def _capitalized(token: str) -> bool:
    """Whether a token is written as a name: capitalized ("Oslo"), or of four letters or
    more with capitals after a small first one ("hackEDU", "iPhone", "eBay"; not a unit,
    "kWh")."""
    w = _word(token)
    if not w or w.lower() in _NOT_NAMES or all(
            part in _NOT_NAMES for part in re.split(r"[-–/]", w.lower())):
        return False  # nor "October-December", calendar words joined
    return w[0].isupper() or (len(w) >= 4 and w[0].islower() and w.isalpha()
                              and any(ch.isupper() for ch in w[1:]))


def distinctive_names(question: str) -> list[Name]:
    """The names a question gives (see the module doc), in the order it gives them."""
    names: list[Name] = []
    for m in _QUOTED.finditer(question):
        quoted = m.group(1) or m.group(2)
        words = tuple(re.findall(r"\w+", _plain(quoted)))
        if words:
            names.append(Name(quoted.strip(), words))
    unquoted = _QUOTED.sub(" , ", question)
    tokens = _TOKEN.findall(unquoted)[1:]  # a capital on the first word is no sign
    alpha = [t for t in tokens if any(ch.isalpha() for ch in t)]
    if len(alpha) >= 4 and sum(_word(t)[:1].isupper() for t in alpha) >= _TITLE_CASE * len(alpha):
        return names
    run: list[str] = []

    def close() -> None:
        while run and _word(run[-1]).lower() in _JOINERS:
            run.pop()
        if run:
            text = " ".join(_word(t) for t in run)
            looked = tuple(w for t in run for w in re.findall(r"\w+", _plain(_word(t)))
                           if w not in _JOINERS)
            if looked:
                names.append(Name(text, looked))
        run.clear()

    for i, tok in enumerate(tokens):
        word = _word(tok)
        numbered = _NUMBER_ID.fullmatch(word) is not None and i > 0 and _word(
            tokens[i - 1]).lower().rstrip(".") in NUMBERED
        if _PERIOD.fullmatch(word):
            close()
        elif (_IDENT.match(word) and not word.isdigit() and not _ORDINAL.fullmatch(word)) or \
                numbered:
            close()
            names.append(Name(word, tuple(re.findall(r"\w+", _plain(word)))))
        elif _capitalized(tok) or (run and word.lower() in _JOINERS and i + 1 < len(tokens)
                                   and _capitalized(tokens[i + 1])
                                   and not (len(run) == 1 and _word(run[0]).isupper())):
            run.append(tok)  # "Bank of America"; not "TTC of Au", an acronym then a word
        else:
            close()
        if tok.endswith(("'s", "’s")):
            close()
    close()
    return list({n.words: n for n in names}.values())


@dataclass
class Grounding:
    """What the index holds of a question's names: those no document mentions
    (``missing``), and for each document the number of names it mentions (``documents``)
    and the passages that mention them, best first (``passages``)."""

    names: tuple[Name, ...] = ()
    missing: tuple[Name, ...] = ()
    documents: dict[str, int] = field(default_factory=dict)
    passages: list[tuple[int, str]] = field(default_factory=list)

    @property
    def applies(self) -> bool:
        return bool(self.documents)

    @property
    def identifies(self) -> bool:
        """Whether what the question names is named by one document alone ("invoice
        R0005532486", "the Elbe Werkzeuge invoice"): then that document is meant, however
        its passages rate."""
        return len(self.documents) == 1 and not self.missing

    def grounded(self, path: str) -> bool:
        """Whether the document names one of the question's names (or there are none).
        Not only those that name the most: "the USA … in US dollars" is answered by a
        sheet of countries that never writes "US", a SQuAD paragraph names the article's
        subject and not the other name the question gives."""
        if not self.documents:
            return True
        return self.documents.get(path, 0) >= 1

    def restrict(self, hits: Sequence[Hit], store: Store) -> list[Hit]:
        """The hits of grounded documents; when there are none, the passages that
        name the question's names (of grounded documents), up to :data:`INJECTED`."""
        if not self.applies:
            return list(hits)
        kept = [h for h in hits if self.grounded(h.path)]
        if kept:
            return kept
        ids = list(dict.fromkeys(pid for pid, path in self.passages if self.grounded(path)))
        ids = ids[:INJECTED]
        if not ids:  # named by its title or file name alone ("CovHack 2019" of
            # covhack-2019-budget.ods): its first passages, for the relevance to order
            for path in self.documents:
                ids += list(dict.fromkeys(s.passage_id for s in store.sentences_like(
                    path, ["%"], limit=DOCUMENT_SENTENCES)))[:DOCUMENT_PASSAGES]
        found = store.passages(ids)
        return [Hit(passage_id=p.id, **p.span()) for pid in ids
                if (p := found.get(pid)) is not None]


def ground(store: Store, question: str, hits: Sequence[Hit] = ()) -> Grounding:
    """The question's names looked up in the index (see the module doc). A name the index
    does not hold word for word may still be in a retrieved passage (``hits``), or in a
    passage of a document that the question's other names point to, in another form
    (:func:`loosely_in`): as the words an acronym stands for, read by OCR with a letter
    wrong or a space in it, or written without spaces."""
    g = _ground(store, question)
    if not g.missing:
        return g
    # where else it may be: the passages of the documents the question's other names
    # point to ("the REWE receipt for Suppengrün": REWE's receipt, read "SUPPENGRUEN")
    ids = list(dict.fromkeys(pid for pid, _ in g.passages))[:NAMED_PASSAGES]
    named = [Hit(passage_id=p.id, **p.span()) for p in store.passages(ids).values()] \
        if ids else []
    seen = {h.passage_id for h in hits}
    candidates = [*hits, *(h for h in named if h.passage_id not in seen)]
    if not candidates:
        return g
    still: list[Name] = []
    identified: set[str] | None = None  # the documents that hold each code found so
    for name in g.missing:
        found = [h for h in candidates if loosely_in(name, f"{h.title} {h.text}")]
        if not found:
            still.append(name)
            continue
        paths = {h.path for h in found}
        for path in paths:
            g.documents[path] = g.documents.get(path, 0) + 1
        g.passages += [(h.passage_id, h.path) for h in found]
        if any(ch.isdigit() for ch in name.text):  # a code names its documents alone
            identified = paths if identified is None else identified & paths
    g.missing = tuple(still)
    if identified:
        g.documents = {p: n for p, n in g.documents.items() if p in identified}
        g.passages = [(pid, path) for pid, path in g.passages if path in identified]
    return g


def loosely_in(name: Name, text: str) -> bool:
    """Whether ``text`` names ``name`` in another form: an acronym's words ("CDC", "Centers
    for Disease Control"), a word with one letter wrong or missing, as OCR reads it
    ("Grumrnan" for "Grumman", five letters or more; "SUPPENGRUEN" for "Suppengrün"), the
    name's words run together ("AviAtionSAfetyworld"), or a code of :data:`IDENT_SPACED`
    signs or more with spaces that OCR put in it ("MSFT001 1 223344")."""
    words = re.findall(r"\w+", _plain(text))
    joined = "".join(name.words)
    if len(joined) >= 6 and any(joined in w for w in words):
        return True
    if len(joined) >= IDENT_SPACED and any(ch.isdigit() for ch in joined) \
            and joined in "".join(words):  # OCR's spaces in a code: "MSFT001 1 223344"
        return True
    if len(name.words) == 1 and name.text.isupper() and 2 <= len(name.text) <= 6:
        caps = [w for w in re.findall(r"[A-Za-z]+", text)
                if w.lower() not in ("of", "for", "and", "the", "de", "&")]
        initials = "".join(w[0] for w in caps)
        for k in range(len(caps)):
            if all(w[0].isupper() for w in caps[k:k + len(name.text)]) \
                    and initials[k:k + len(name.text)] == name.text:
                return True
    near = [w for w in name.words if len(w) >= 5]
    return bool(near) and all(any(_one_off(w, t) for t in words) for w in near)


def _one_off(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with at most one letter changed, added or dropped, or with
    two letters read as one ("rn" for "m")."""
    if "rn" in b and "rn" not in a:
        b = b.replace("rn", "m")
    if abs(len(a) - len(b)) > 1 or a[:1] != b[:1]:
        return False
    if a == b:
        return True
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    return a[i + 1:] == b[i + 1:] or a[i + 1:] == b[i:] or a[i:] == b[i + 1:]


def _ground(store: Store, question: str) -> Grounding:
    names = distinctive_names(question)
    if not names:
        return Grounding()
    titles: dict[str, str] | None = None
    counts: dict[str, int] = {}
    passages: list[tuple[int, str]] = []
    missing: list[Name] = []
    kinds: dict[Name, set[str]] = {}  # missing but for a word of its kind of body: where
    # its other words are
    identified: set[str] | None = None  # the documents that name each identifier
    for name in names:
        # each word in the document: in one of its passages, or in its title or file name
        # ("the Contoso Britain invoice": Contoso in its text, Britain in its file's name)
        # A word of it that no document holds: the name is missing ("Contoso Tokyo" where
        # only Contoso is). Otherwise the documents that hold any of its words name it:
        # a passage says "Manning" of "Peyton Manning", "Larkspur" of "Larkspur Hardware".
        rare: list[str] = []
        paths: set[str] | None = None
        every: set[str] | None = None  # the documents that hold each of its words
        held: dict[str, int] = {}  # of each document, how many of its words it holds
        absent = False
        kind_absent = False  # a word of its kind of body no document holds
        for word in dict.fromkeys(name.words):
            found = store.mentioning([word], FREQUENT + 1)
            if len(found) > FREQUENT:
                continue  # the folder's subject, or a word too common to tell
            if titles is None:
                titles = {d.path: _plain(document_name(d)) for d in store.documents()}
            having = {path for _, path in found} | {
                path for path, words in titles.items() if _has_word(word, words)}
            if not having and word in KIND_OF_BODY and len(set(name.words) - KIND_OF_BODY):
                kind_absent = True  # "Village" of "the Village of Scarsdale", which its
                continue  # papers may omit
            absent = absent or not having
            paths = having if paths is None else paths | having
            every = having if every is None else every & having
            for path in having:
                held[path] = held.get(path, 0) + 1
            rare.append(word)
        if paths is None:
            continue  # no word of it tells one document from another
        if absent or not paths:
            if not name.text.isdigit():  # a number OCR may have misread names nothing
                missing.append(name)
            continue
        if kind_absent:  # missing, unless no file is named by the question either (below)
            missing.append(name)
            kinds[name] = paths
            continue
        if every and len(rare) >= 2:
            # documents that hold the whole name ("Galaxy Gaming") name it; one that holds
            # a word of it ("gaming" in an article on Microsoft) does not, then
            paths = every
        elif len(rare) >= 2 and held and (most := max(held.values())) >= 2:
            # none holds it whole: those that hold the most of its words ("Wye Valley" of
            # wye_valley_council_budget.csv, not every paper that says "community")
            paths = {p for p, n in held.items() if n == most}
        if any(ch.isdigit() for ch in name.text):  # an identifier: "invoice 12345678"
            identified = set(paths) if identified is None else identified & paths
        for path in paths:
            counts[path] = counts.get(path, 0) + 1
        named = [(pid, path) for pid, path in store.mentioning(rare, FREQUENT) if path in paths]
        if not named:  # its words in different passages of the document: those of each
            named = [(pid, path) for word in rare for pid, path in store.mentioning([word], 20)
                     if path in paths]
        passages += named
    if identified:  # a code or a number names one document: the others are not meant
        counts = {p: n for p, n in counts.items() if p in identified}
        passages = [(pid, path) for pid, path in passages if path in identified]
    if missing and on("named_by_file"):
        known = list(titles) if titles is not None else [d.path for d in store.documents()]
        filed = named_by_file(question, known, names, missing)
        if filed:  # "the UofTCoders accounting ledger": accounting.csv, which never says
            fired("named_by_file")  # whose it is
            for path in filed:
                counts[path] = counts.get(path, 0) + 1
            missing = []
    # no file named either: a name missing but for its kind of body is named by its
    # other words ("the Village of Scarsdale" of a folder that says "Scarsdale" only)
    for name in [n for n in missing if n in kinds]:
        missing.remove(name)
        for path in kinds[name]:
            counts[path] = counts.get(path, 0) + 1
    return Grounding(tuple(names), tuple(missing), counts, passages)


# words before a name that make it a place or a party of what is asked ("the meeting in
# Halifax", "paid at Larkspur"), not the owner of a document ("the UofTCoders ledger")
_BEFORE_PLACE = frozenset("in at from to on by with for into near of via".split())


def owners(question: str, missing: Sequence[Name]) -> list[Name]:
    """The ``missing`` names the question gives as a document's owner or source: one with
    a possessive ("OSSU's great-courses list"), or not after a preposition ("the
    UofTCoders accounting ledger", "Which UofTCoders session …"; not "… in Halifax")."""
    words = re.findall(r"\w+", _plain(question))  # as a name's words are: "tc39"
    out = []
    for n in missing:
        k = len(n.words)
        at = next((i for i in range(len(words) - k + 1) if tuple(words[i:i + k]) == n.words),
                  None)
        if at is None:
            continue
        possessive = at + k < len(words) and words[at + k] == "s"
        if possessive or at == 0 or words[at - 1] not in _BEFORE_PLACE:
            out.append(n)
    return out


def named_by_file(question: str, paths: Sequence[str], names: Sequence[Name],
                  missing: Sequence[Name]) -> list[str]:
    """The documents (of ``paths``) the question names by a word of their file's name
    ("the accounting ledger": accounting.csv; "the attendance log": Attendance.csv) other
    than a word of its ``names`` (those name documents by their text: "EC2" is no owner of
    the "Amazon Web Services invoice", but what is asked of it) or one that names a kind of
    document (:data:`_DOCUMENT_WORDS`), those named by the most such words, when every
    ``missing`` name is given as an owner (:func:`owners`): the owner or source the
    question gives them ("the UofTCoders accounting ledger", "OSSU's great-courses list")
    is one their text need not state. A missing name that is a place ("the … data model
    meeting in Halifax") is what is asked."""
    if len(owners(question, missing)) < len(missing):
        return []
    unsaid = {w for n in names for w in n.words}
    asked = {w for w in re.findall(r"\w+", _plain(question)) if len(w) >= 4 and w.isalpha()
             } - unsaid - _DOCUMENT_WORDS - _NOT_NAMES
    if not asked:
        return []
    stems = {p: " ".join(re.findall(r"[^\W\d_]+", _plain(Path(p).stem))) for p in paths}
    said = {p: sum(_has_word(w, stems[p]) for w in asked) for p in paths}
    most = max(said.values(), default=0)  # of those, the ones named by the most words: "the
    # rhinoceros beetle budget" is uog_rhino_beetle_budget.pdf, not every budget's file
    return [p for p in paths if most and said[p] == most]


def _has_word(word: str, title: str) -> bool:
    """Whether a document's title and file name (lower case, plain) hold ``word``, or a
    word with its first five letters ("huguenots" for "Huguenot")."""
    words = set(re.findall(r"\w+", title))
    return word in words or (len(word) >= 5 and word[:5] in {w[:5] for w in words})


def missing_reason(missing: Sequence[Name]) -> str:
    """The refusal: "nothing in your documents mentions 'Larkspur Hardware'"."""
    listed = " or ".join(f"{n.text!r}" for n in missing)
    return f"nothing in your documents mentions {listed}"
