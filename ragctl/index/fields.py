"""Stage 1b: a document's own fields, read once when it is indexed.

Who wrote or sent a document, when, its title, subject and status are stated on lines of
their own near the start of a section: a mail's header ("From: …", "Date: …"), a PEP's
or an RFC's preamble ("Author: …", "Status: Final"), a web page's byline ("By Dan
Goodin - Jan 9, 2017"). :func:`section_fields` reads them from the first
:data:`HEADER_LINES` lines of a section and gives each as a :class:`DocField` with the
source offsets of its value, so ``ask`` answers "who wrote …", "when was it sent" and
"what is its status" from stored fields and cites their line, instead of parsing the
text again at question time. Which labels state which field is declared in
:data:`ragctl.records.FIELD_LABELS`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from ragctl.records import FIELD_LABELS, DocField
from ragctl.text import MONTHS, dated_spans

HEADER_LINES = 12  # lines at the start of a section read for fields
MAX_VALUE_CHARS = 200  # a longer value is prose after a colon, not a field
MAX_FIELDS = 64  # per document: a file of "Label: value" lines is data, not a header

_LABELED = re.compile(r"[ \t]*(?P<label>[A-Za-z][A-Za-z ]{0,18}?)[ \t]*:[ \t]+(?P<value>\S.*)")
_NOT_NAME = ("Edited|Updated|Published|Posted|Photos?|Illustrations?|Staff|Reporter|Editor|"
             "Contributor|Senior|Image|Via|On|In|At|The|For|From|With|Monday|Tuesday|Wednesday|"
             "Thursday|Friday|Saturday|Sunday|" + MONTHS.title())
_NAME_WORD = rf"(?!(?:{_NOT_NAME})\b)[A-ZÀ-Ý][\w'’.-]*[\w.]"
_PERSON = rf"{_NAME_WORD}(?:[ \t]+(?:(?:van|von|de|der|den|da|di|del|la|le|du|bin)[ \t]+)*" \
    rf"{_NAME_WORD})*"
_PEOPLE = rf"{_PERSON}(?:(?:,[ \t]*|[ \t]+(?:and|&)[ \t]+){_PERSON})*"
# "By Dan Goodin - Jan 9, 2017", "Written by Rob Ewaschuk Edited by …": "by" opening the
# line or following the title's full stop, a bar or a bullet; never "… written by X"
_BYLINE = re.compile(
    rf"(?:^|(?<=[.!?|•·]\s))(?:(?:Written|Posted|Story|Words|Text)\s+)?[Bb][Yy]:?\s+({_PEOPLE})")
_BYLINE_WORDS = 30  # a byline is a short line, not a sentence of prose with "By X" in it
_EMAIL_ONLY = re.compile(r"<?[^\s@<>]+@[^\s@<>]+>?")


def section_fields(text: str, place: str = "", offset: int = 0) -> list[DocField]:
    """The fields stated on the first :data:`HEADER_LINES` lines of a section's ``text``
    (``offset``: where the text starts in the source): "Label: value" lines whose label
    :data:`FIELD_LABELS` knows (a value folded onto indented lines below is joined, as
    in a mail's or a PEP's header), and bylines ("By Dan Goodin - Jan 9, 2017" gives
    the author "Dan Goodin")."""
    out: list[DocField] = []
    lines = list(_lines(text))[:HEADER_LINES]
    for i, (a, b) in enumerate(lines):
        line = text[a:b]
        m = _LABELED.match(line)
        name = FIELD_LABELS.get(" ".join(m.group("label").lower().split())) if m else None
        if m and name:
            start, end = a + m.start("value"), b
            for c, d in lines[i + 1:]:  # a folded value goes on on indented lines
                if not text[c:d][:1].isspace() or _LABELED.match(text[c:d]) or c > end + 1:
                    break
                end = d
            start, end = _value(name, text, start, end)
            value = " ".join(text[start:end].split())
            if value and len(value) <= MAX_VALUE_CHARS:
                out.append(DocField(name=name, value=value, place=place,
                                    start_char=offset + start, end_char=offset + end))
            continue
        by = _BYLINE.search(line)
        if by and len(line.split()) <= _BYLINE_WORDS:
            out.append(DocField(name="author", value=" ".join(by.group(1).split()),
                                place=place, start_char=offset + a + by.start(1),
                                end_char=offset + a + by.end(1)))
    return out


def dateline(text: str, place: str = "", offset: int = 0) -> DocField | None:
    """The date of a document that states it on a line of its own among its first
    :data:`HEADER_LINES` lines, unlabelled (a letter's or a report's "1 November 2023"
    under its heading), as a "date" field; None when no line is a date alone."""
    for a, b in list(_lines(text))[:HEADER_LINES]:
        line = text[a:b].strip()
        found = dated_spans(line)
        if len(found) == 1 and found[0][0][2] is not None and found[0][2] - found[0][1] >= \
                len(line) - 1:
            start = a + text[a:b].index(line) + found[0][1]
            end = start + found[0][2] - found[0][1]
            return DocField(name="date", value=text[start:end], place=place,
                            start_char=offset + start, end_char=offset + end)
    return None


def document_fields(sections: Iterable[tuple[str, str, int]]) -> list[DocField]:
    """The fields of every section ``(text, place, offset)`` of a document, in order,
    each (name, value, place) once, at most :data:`MAX_FIELDS`; the first section's
    date line (:func:`dateline`) when no label states its date."""
    seen: set[tuple[str, str, str]] = set()
    out: list[DocField] = []
    for k, (text, place, offset) in enumerate(sections):
        found = section_fields(text, place, offset)
        if k == 0 and not any(f.name == "date" for f in found) and (
                line := dateline(text, place, offset)) is not None:
            found.append(line)
        for f in found:
            if (f.name, f.value, f.place) not in seen:
                seen.add((f.name, f.value, f.place))
                out.append(f)
                if len(out) >= MAX_FIELDS:
                    return out
    return out


def _lines(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each line of ``text`` that holds more than spaces."""
    start = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        if body.strip():
            yield start, start + len(body.rstrip())
        start += len(line)


def _value(name: str, text: str, start: int, end: int) -> tuple[int, int]:
    """Where a field's value is: a person's name without the address when one person is
    named ("Ofek Lev <ofek@…>" → "Ofek Lev"); the whole value otherwise."""
    value = text[start:end]
    if name in ("author", "sender", "recipient") and value.count("<") == 1 \
            and not _EMAIL_ONLY.fullmatch(value.strip()):
        name_part = value[:value.index("<")].rstrip(" ,").strip(" \"'")
        if name_part:
            a = text.index(name_part, start)
            return a, a + len(name_part)
    stripped = value.strip(" \"'")
    a = text.index(stripped, start) if stripped else start
    return a, a + len(stripped)
