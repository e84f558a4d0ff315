"""A document's own fields, read when it is indexed (ragctl.index.fields), stored with the
offsets of their value, and answered from the store."""

from __future__ import annotations

from ragctl.index.fields import HEADER_LINES, document_fields, section_fields
from ragctl.records import DocField


def values(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in section_fields(text):
        assert text[f.start_char:f.end_char].split() == f.value.split()  # offsets hold it
        out.setdefault(f.name, f.value)
    return out


def test_bylines_give_the_names_they_hold() -> None:
    assert values("How we designed Dropbox ATF. By Arun Sai Krishnan • Nov 11, 2020") \
        == {"author": "Arun Sai Krishnan"}
    assert values("By Dan Goodin - Apr 16, 2015 8:02 pm UTC") == {"author": "Dan Goodin"}
    assert values("Written by Rob Ewaschuk Edited by Betsy Beyer") == {"author": "Rob Ewaschuk"}
    # prose that says who made something, a date, a year: no author
    assert values("The plan was written by Tim Peters.") == {}
    assert values("By Monday, the servers were back.") == {}
    assert values("By 2020 the project had moved.") == {}
    assert values("By Tim Peters " + "and more words of prose " * 8) == {}


def test_a_header_block_gives_its_fields_with_folded_values() -> None:
    pep = ("PEP: 723\nTitle: Inline script metadata\nAuthor: Ofek Lev <ofek@example.org>\n"
           "Sponsor: Adam Turner <adam@example.org>\nStatus: Final\nCreated: 04-Aug-2023\n\n"
           "Abstract\n========\n")
    assert values(pep) == {"title": "Inline script metadata", "author": "Ofek Lev",
                           "status": "Final", "date": "04-Aug-2023"}
    folded = "Author: Chris Angelico <ca@example.org>,\n        Tim Peters <tp@example.org>\n" \
        "Status: Final\n"
    assert values(folded)["author"] == \
        "Chris Angelico <ca@example.org>, Tim Peters <tp@example.org>"
    mail = "From: Mikel Lindsaar <mikel@example.org>\nTo: you\nSubject: Lunch\n" \
        "Date: Mon, 1 Jan 2024 09:00:00 +0000\n\nSee you at noon.\n"
    assert values(mail) == {"sender": "Mikel Lindsaar", "recipient": "you", "subject": "Lunch",
                            "date": "Mon, 1 Jan 2024 09:00:00 +0000"}
    assert values("From: mikel@example.org\n") == {"sender": "mikel@example.org"}


def test_only_a_section_s_first_lines_are_read_and_prose_is_no_field() -> None:
    late = "Intro line.\n" * HEADER_LINES + "Status: Draft\n"
    assert values(late) == {}
    assert values("Note: " + "a long line of prose after a colon " * 8) == {}
    assert values("Date: " + "x" * 300) == {}  # too long to be a field's value
    # unknown labels are not fields
    assert values("Sponsor: Adam Turner\nPEP: 8\n") == {}


def test_offsets_are_source_offsets_and_each_field_is_kept_once() -> None:
    sections = [("Title: Notes\nBy Lee Wong\n", "Intro", 100), ("By Lee Wong\n", "Intro", 300),
                ("By Lee Wong\n", "About", 400)]
    got = document_fields(sections)
    assert got == [DocField(name="title", value="Notes", place="Intro", start_char=107,
                            end_char=112),
                   DocField(name="author", value="Lee Wong", place="Intro", start_char=116,
                            end_char=124),
                   DocField(name="author", value="Lee Wong", place="About", start_char=403,
                            end_char=411)]


def test_a_date_on_a_line_of_its_own_at_the_start_is_the_document_s_date() -> None:
    text = "Equities • Electronic Equipment\n1 November 2023\nOversupply misconceptions\n"
    got = document_fields([(text, "p. 1", 10), ("2 December 2023\n", "p. 2", 200)])
    assert got == [DocField(name="date", value="1 November 2023", place="p. 1",
                            start_char=42, end_char=57)]
    # a labelled date wins; a year alone, or a date inside a line of prose, is none
    assert [f.value for f in document_fields([("Date: 3 May 2024\n1 June 2024\n", "", 0)])] \
        == ["3 May 2024"]
    assert document_fields([("Annual report\n2023\n", "", 0)]) == []
    assert document_fields([("The plant opened on 1 June 2024 after a delay.\n", "", 0)]) == []


def test_a_last_modified_line_dates_the_document() -> None:
    assert values("Last modified: 28 July 2016") == {"date": "28 July 2016"}
