"""Choosing the answer: question and answer types, metadata, spans that resolve to the
exact source characters, quoted sentences, abstention, and what the CLI prints."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ragctl import models
from ragctl.app.cli import cli
from ragctl.ask.answer import Choice, Context, one_amount, trimmed, whole_words
from ragctl.ask.documents import is_metadata
from ragctl.ask.fields import asked_field, field_values, is_authorship
from ragctl.ask.pipeline import AskOptions, Pipeline
from ragctl.ask.question import question_type
from ragctl.ask.rules import answer_types, ruled_out, type_agreement, with_identifier
from ragctl.config import load_settings
from ragctl.errors import EXIT_NOT_FOUND
from ragctl.index.indexer import Indexer
from ragctl.models.filter import collapse_duplicates, split_long
from ragctl.models.reader import best_spans
from ragctl.records import Answer, Sentence
from ragctl.store.collection import Collection
from ragctl.text import raw_offsets
from tests.fakes import FakeGenerator, FakeReader

DENTIST = ("Your dentist appointment is on Thursday\n   at 3 pm with Dr. Alves.  "
           "Please arrive early.\n\nBring your insurance card.")
PEP = ("PEP: 20\nTitle: The Zen of Python\nAuthor: Tim Peters\nStatus: Active\n"
       "Type: Informational\n\nThe Zen of Python\n=================\n\n"
       "Beautiful is better than ugly. Errors should never pass silently. "
       "Unless explicitly silenced.\n")


def test_question_types() -> None:
    assert question_type("When is the dentist appointment?").expects == "date"
    assert question_type("How many desks will the office have?").expects == "number"
    assert question_type("Who wrote the Zen of Python?").expects == "person"
    assert question_type("Where is the clinic?").expects == "place"
    assert question_type("What is the deposit?").expects == "any"
    for q in ("How much did Arduino LLC pay to settle?", "What is the salary of an SRE?",
              "How much does the room cost?", "What was the annual rent?"):
        assert question_type(q).expects == "money", q
    assert question_type("How much of the land is forest?").expects == "number"
    for q in ("At what time does the meeting start?", "On which day is the market?",
              "In what year was it built?", "Since when has she used email?"):
        assert question_type(q).expects == "date", q
    for q in ("What does the Zen of Python say about errors?", "Why is the GIL a problem?",
              "How do I renew the lease?", "List the steps to reset the router",
              "What are the steps to apply?"):
        assert question_type(q).kind == "quote", q
    assert question_type("Is the clinic open on Sundays?").kind == "yes-no"
    # the thing a "what / which" question names gives the answer's shape
    for q, kind in (("What email address should I write to?", "email"),
                    ("What is the phone number of the clinic?", "phone"),
                    ("Which website hosts the form?", "url"),
                    ("Which port does the server listen on?", "number"),
                    ("What time of day is it quietest?", "date"),
                    ("For how many days are the logs kept?", "number"),
                    ("How old is Beverly Jones, who won the contest?", "number"),
                    ("What delivery date is given on the invoice?", "date"),
                    ("What payment amount is entered on the voucher?", "money"),
                    ("What is the Clachan's telephone number?", "phone"),
                    ("What is Acme Corp's email address?", "email")):
        assert question_type(q).expects == kind, q
    # a measure named last is given in figures, and a code is no figure of it
    from ragctl.ask.rules import fits

    for q, kind in (("What TEDs score did the model achieve?", "number"),
                    ("What net income did Galaxy Gaming report?", "money"),
                    ("What is the credit limit on the card?", "number")):
        qt = question_type(q)
        assert (qt.expects, qt.measure) == (kind, "figure"), q
        assert fits(qt.expects, "0.965", qt.measure) and fits(qt.expects, "$1,200", qt.measure)
        assert not fits(qt.expects, "I-551", qt.measure), q
        assert not fits(qt.expects, "high TEDs and mAP scores", qt.measure), q
    assert question_type("What rate plan is cheapest?").expects == "any"  # the plan
    assert question_type("Is it the red or the blue one?").kind == "factoid"
    assert question_type("Is Paris or Madrid bigger?").kind == "factoid"
    # an "or" deep inside a yes/no question is part of what it asks
    assert question_type("Can a library be held liable for violating section 1201 or "
                         "1202?").kind == "yes-no"


def test_answer_types_and_agreement() -> None:
    assert "date" in answer_types("Thursday at 3 pm") and "date" in answer_types("in 1998")
    assert "date" in answer_types("04/04/2023") and "number" in answer_types("$4.11")
    assert answer_types("Tim Peters") == {"name"}
    assert type_agreement("date", "every October") == 1.0
    assert type_agreement("date", "Dr. Alves") == 0.0
    assert type_agreement("number", "forty desks") == 1.0
    assert type_agreement("person", "Tim Peters") == 1.0
    assert type_agreement("person", "Édouard") == 1.0  # an accented capital is a name too
    assert type_agreement("person", "1998") == 0.0
    assert type_agreement("any", "anything") == 0.5
    for money in ("$4.11", "€ 399,00", "Rs 1939", "1.2 billion", "forty dollars"):
        assert type_agreement("money", money) == 1.0, money
    assert type_agreement("money", "10–12") == 0.0  # a count, not a sum
    assert type_agreement("money", "January 2015") == 0.0


def test_a_span_fits_the_question_or_is_never_printed() -> None:
    from ragctl.ask.rules import fits

    assert fits("date", "14 March 2023") and fits("date", "at 3 pm") and fits("date", "2021")
    assert not fits("date", "$2,400.00") and not fits("date", "Section 4")
    assert fits("number", "forty desks") and fits("number", "12") and not fits("number", "Ana")
    # a bare amount answers a price (receipts often print no currency)
    assert fits("money", "RM 9.00") and fits("money", "48.20") and not fits("money", "Tuesday")
    # who / where: anything but a date, a number or a sum alone
    assert fits("person", "the mayor") and fits("person", "Ana Ruiz")
    assert fits("place", "Larkspur Hardware, 12 Elm St")
    for alone in ("$12.00", "1998", "6", "March 2019", "3 pm", "RM 9.00"):
        assert not fits("person", alone), alone
    assert fits("any", "$12.00")
    assert fits("date", "an hour before closing time") and fits("date", "after the war")
    assert fits("date", "two years later") and not fits("date", "127-year-old")  # an age
    assert fits("email", "privacy@example.org") and not fits("email", "MZLA Technologies")
    assert fits("url", "https://example.org/privacy") and fits("url", "www.example.org")
    assert fits("phone", "(212) 555-0147") and not fits("phone", "Room 5")


def test_a_measure_is_a_number_in_its_unit() -> None:
    from ragctl.ask.rules import fits, measured

    crack = question_type("How long is the crack near the top of the monument?")
    assert (crack.expects, crack.measure) == ("number", "extent")
    assert question_type("How old is Beverly Jones, the curry queen?").measure == "age"
    assert question_type("How often does the mirror job run?").measure == "frequency"
    assert question_type("Which port does the Redis pod listen on?").measure == "integer"
    # how many of a set: a count, a whole number; of a unit or a scale, any number; "how
    # many desks" may be in thousands, but is no share of them
    assert question_type("How many desks will the office have?").measure == "things"
    assert fits("number", "1,200.5", "things") and not fits("number", "4.38%", "things")
    assert not fits("number", "Paris", "things")
    assert question_type("How many of the desks are free?").measure == "count"
    assert question_type("In how many of the deciles was inflation above 6,3%?"
                         ).measure == "count"
    assert [question_type(q).measure for q in (
        "How many hours did the backup take?", "How many times higher is A than B?",
        "How many million people live there?", "How many more members has Oslo?")] == [
            "", "", "", ""]
    assert fits("number", "1,204", "count") and fits("number", "2.5 million", "count")
    # a share of a whole, however the question's object is said; never the part's amount
    for q in ("What share of the year's total payments went on travel?",
              "In the 2023 accounts, what percentage of income came from grants?",
              "What proportion of the budget is salaries?",
              "What are the indirect costs as a percentage of total direct costs?"):
        assert question_type(q).measure == "share", q
    assert fits("number", "37.5%", "share") and fits("number", "one in five", "share")
    assert not fits("number", "2,950", "share") and not fits("number", "18/11/2024", "share")
    assert measured("share", "52", " % of all voters") == "52 %"
    # a noun of three words names its amount; not one with a small word in it
    assert question_type("What was the Forum's total subscriptions income?").expects == "money"
    assert question_type("What types of income does the Forum have?").expects == "any"
    # "which <thing>" is named by words, never by a number alone
    assert question_type("Which service had the largest charge?").expects == "thing"
    assert question_type("Which of the catchments has the highest BFI?").expects == "thing"
    assert [question_type(q).expects for q in ("Which quarter had the most sales?",
                                               "Which year shows the largest drop?")] == [
        "any", "date"]
    assert not fits("thing", "$4.11") and fits("thing", "Amazon Glacier")
    # a number in a unit of another quantity than the one asked for is no answer
    current = question_type("What is the maximum supply current of the VEML6075?")
    assert current.dimension == {"ampere"}
    assert question_type("What is the current price of gas?").dimension == frozenset()
    assert not fits("any", "1.7 - 3.6 V", dimension=current.dimension)
    assert not fits("any", "03.6V", dimension=current.dimension)
    assert fits("any", "480", "", " μA at 1.8 V", current.dimension)
    assert fits("any", "480", dimension=current.dimension)  # the unit in the header
    weight = question_type("What is the operating weight of the excavator?").dimension
    assert not fits("any", "20 ft", dimension=weight) and fits("any", "12,270 lb",
                                                                dimension=weight)
    assert fits("number", "five", "count") and fits("number", "80 layers", "count")
    assert not fits("number", "6,8", "count") and not fits("number", "37.2", "count")
    assert question_type("How large was the crowd?").measure == ""  # a count will do
    # a number with no unit is no length: "magnitude-5.8" for how long the crack is
    assert not fits("number", "magnitude-5.8", "extent")
    assert fits("number", "about four inches", "extent") and fits("number", "1.5m", "extent")
    assert fits("number", "as long as your account is open", "extent")
    assert fits("number", "three (3) minutes", "extent")
    assert fits("number", "two (2) man hours", "extent") and fits("number", "10 working days",
                                                                   "extent")
    assert not fits("number", "updated overnight", "extent")
    # the unit right after a bare number is taken into the answer
    assert measured("extent", "120", " days, then deleted") == "120 days"
    assert measured("extent", "120", " people came") is None
    assert fits("number", "35", "age") and fits("number", "127-year-old", "age")
    assert not fits("number", "nine", "age", " spoonfuls of the dish")
    assert fits("number", "every night", "frequency") and not fits("number", "12", "frequency")
    assert fits("number", "6379", "integer") and not fits("number", "xgc97", "integer")


def test_a_number_the_question_names_must_be_in_the_context() -> None:
    from ragctl.ask.rules import missing_numbers

    report = "In 2012 Mozilla reported that its revenue for 2011 was $163 million."
    assert missing_numbers("What was Mozilla's revenue for 2015?", report) == 1.0
    assert missing_numbers("What was Mozilla's revenue for 2011?", report) == 0.0
    assert missing_numbers("What was Mozilla's revenue?", report) == 0.0
    # the number of a numbered name that the document's title or file name holds
    rule = "Limit all lines to a maximum of 79 characters."
    q = "What is the maximum line length recommended by PEP 8?"
    assert missing_numbers(q, rule) == 1.0
    assert missing_numbers(q, rule, "Style Guide for Python Code pep 8") == 0.0
    assert missing_numbers(q, rule, "Docstring Conventions pep 257") == 1.0
    assert missing_numbers("What did the 2015 report say?", rule, "report 2015") == 1.0


def test_a_year_or_month_the_passage_lacks_rules_the_span_out() -> None:
    from ragctl.ask.answer import features_of
    from ragctl.ask.rules import missing_dates, vetoed

    report = "In 2012 Mozilla reported that its revenue for 2011 was $163 million."
    invoice = "Billing period July 1 - July 31, 2014. Total amount due: $4.11."
    assert missing_dates("What was Mozilla's revenue for 2015?", report) == 1.0
    assert missing_dates("What was Mozilla's revenue for 2011?", report) == 0.0
    assert missing_dates("What was due on the invoice for September?", invoice) == 1.0
    assert missing_dates("What was due on the invoice for July?", invoice) == 0.0
    assert missing_dates("How much was due in May?", "You may pay later.") == 1.0
    sure = dict(margin=5.0, relevance=0.9, filter_score=0.9, type_score=1.0, re_best=0.9,
                overlap=0.5)
    assert not vetoed(features_of(**sure))
    assert vetoed(features_of(**sure, dates=1.0))
    # a span that cannot be what the question asks for, however sure the reader is
    assert vetoed({**features_of(**sure), "fits": 0.0})
    assert not vetoed({**features_of(**{**sure, "margin": -8.0}), "fits": 1.0})
    # a kind the question rules out, however sure the reader is
    assert vetoed(features_of(**sure, wrong=1.0))
    # below no answer, in a sentence that shares no word with the question
    assert vetoed(features_of(**{**sure, "margin": -0.5, "overlap": 0.0}))
    assert not vetoed(features_of(**{**sure, "overlap": 0.0}))


def test_a_span_of_a_kind_the_question_rules_out() -> None:
    who = question_type("Who is the president of the school board?").expects
    assert ruled_out(who, "1309 S. Mary Avenue Sunnyvale") == 1.0
    assert ruled_out(who, "Mary Avenue Sunnyvale") == 1.0
    assert ruled_out(who, "Josephine Lucey") == 0.0 and ruled_out(who, "Dr. Alves") == 0.0
    assert ruled_out(who, "Mary", after=" Avenue Sunnyvale, CA") == 1.0
    assert ruled_out(who, "Mary Lucey", after=", president, lives on Elm Street") == 0.0
    assert ruled_out(who, "St. Paul") == 0.0  # a saint is no street
    many = question_type("How many students attend the district?").expects
    assert ruled_out(many, "1309 S. Mary Avenue") == 1.0 and ruled_out(many, "1,309") == 0.0
    assert ruled_out(many, "1309 S", after=". Mary Avenue Sunnyvale") == 1.0
    assert ruled_out(who, "John Smith", after=" of 12 Baker Street") == 0.0
    when = question_type("What time does the board's special meeting start?").expects
    office = "Cupertino Union School District 1309 S. Mary Avenue Sunnyvale, CA 94087"
    assert ruled_out(when, "CA 94087", "", office) == 1.0
    assert ruled_out(when, "94087", "", office) == 1.0
    assert ruled_out(many, "94087", " students.", "It had 94087 students.") == 0.0
    cost = question_type("What was the price of ethanol in Texas?").expects
    assert ruled_out(cost, "$/gal") == 1.0
    assert ruled_out(cost, "$1.35 a gallon") == 0.0 and ruled_out(cost, "free") == 0.0
    # a number, where no currency is named, is no salary
    salary = question_type("What is the salary of a Google SRE?").expects
    team = "An SRE team typically has 10–12 members."
    assert ruled_out(salary, "10–12", " members.", team) == 1.0
    assert ruled_out(salary, "160,000", " a year.", "Pay starts at 160,000 dollars a year.") == 0.0
    # an amount to the cent is money, though its line names no currency (an invoice's)
    tax = question_type("How much IGST is charged on the invoice?").expects
    assert ruled_out(tax, "1,08,000.00", " Swift", "IGST = 1,08,000.00 Swift") == 0.0
    assert ruled_out(salary, "free", ".", "Entry is free.") == 0.0
    assert ruled_out("any", "Mary Avenue") == 0.0


def test_a_passage_that_names_none_of_what_the_question_names_is_ruled_out() -> None:
    from ragctl.ask.answer import Context, choose
    from ragctl.ask.documents import question_names
    from ragctl.ask.question import question_type
    from ragctl.ask.rules import missing_names

    aws = "Amazon Web Services invoice. Total for this invoice: $4.11."
    azure = "Global Wholesaler Azure Interior, Fremont. Total $ 279.84."
    question = "What is the total of the Azure Interior invoice?"
    assert question_names(question) == ["azure", "interior"]
    assert question_names("What was ABC's logo?") == ["abc"]
    assert missing_names(question, aws) == 1.0
    assert missing_names(question, azure) == 0.0
    # one name is not enough (paraphrases: "the UK" over "the United Kingdom")
    assert missing_names("Who is the author of PEP 723?", aws) == 0.0
    assert missing_names("Where do the Huguenots of France live?", "Huguenot refugees") == 0.0

    s_aws, s_azure = (Sentence(id=i, passage_id=i, path="p", text=t)
                      for i, t in ((1, aws), (2, azure)))
    # the reader is surer of the other invoice's total; it still is not the answer, and
    # reading both sentences together (the bridge context) does not lend it the names
    reader = FakeReader("$4.11", "279.84")
    contexts = [Context.of("", [s_aws], 0.5), Context.of("", [s_azure], 0.5),
                Context.of("", [s_aws, s_azure], 0.5)]
    choices = choose(reader, question, question_type(question), contexts, {1: 0.9, 2: 0.5},
                     re_best=0.5)
    assert choices[0].text == "279.84"
    assert [c.probability for c in choices if c.text == "$4.11"] == [0.0]
    # a span of the bridge context whose passage is not read alone is judged by its whole
    # document (the passages at hand): a transcript names the case in its header passage
    header = "Supreme Court. Knowles v. Mirzayance. No. 07-1315."
    body = "The matter came on for oral argument at 1:01 p.m."
    s_head, s_body = (Sentence(id=i, passage_id=i, path="t.pdf", text=t)
                      for i, t in ((3, header), (4, body)))
    q = "At what time did the oral argument in Knowles v. Mirzayance begin?"
    bridge = [Context.of("", [s_head, s_body], 0.5)]
    alone = choose(FakeReader("1:01 p.m."), q, question_type(q), bridge, {4: 0.9}, re_best=0.5)
    assert alone[0].features["missing_names"] == 1.0 and alone[0].probability == 0.0
    whole = choose(FakeReader("1:01 p.m."), q, question_type(q), bridge, {4: 0.9},
                   re_best=0.5, passages={3: f"{header} {body}", 4: f"{header} {body}"})
    assert whole[0].features["missing_names"] == 0.0 and whole[0].probability > 0.0


def test_what_is_not_prose_is_never_quoted() -> None:
    from ragctl.ask.documents import not_prose, unquotable

    for text in ("> > Thanks for the report.", ">We met on Tuesday.", "Best regards, Ana",
                 "Kind regards,", "Sent from my iPhone", "--", "x = foo(bar[1]) + {}",
                 "$ pip install ragctl", "import os", "def main(argv):"):
        assert not_prose(text) and unquotable(text), text
    assert not_prose("Installation", "Guide > Installation")
    for text in ("We never share your location with advertisers.",
                 "The rent is $900 (due on the 1st).", "Installation takes five minutes.",
                 "Thanks to everyone who came on Tuesday, we decided to move the launch."):
        assert not not_prose(text, "Guide > Installation"), text


def test_metadata_blocks_are_recognized() -> None:
    assert is_metadata("PEP: 20 Title: The Zen of Python Author: Tim Peters "
                       "<tim.peters@gmail.com> Status: Active Type: Informational")
    assert is_metadata("From: Anna <anna@example.org> To: Ben Subject: Lunch Date: Monday")
    assert is_metadata("Status: Final")
    assert not is_metadata("The rent is 900 euros a month, paid on the first working day.")
    # a transcript's caption: capitals, a rule of dashes
    assert is_metadata("COURT OF THE UNITED STATES - - - - - - - - - x MICHAEL A. KNOWLES,: "
                       "WARDEN,: Petitioner: v.: No.")
    assert is_metadata("IN THE SUPREME COURT OF THE UNITED STATES")
    assert not is_metadata("NASA and the ESA launched the JWST in 2021.")
    assert not is_metadata("GRAND TOTAL RS 1,939.00") and not is_metadata("TOTAL DUE $4.11")
    assert not is_metadata(  # an invoice line holds fields but is the content itself
        "Invoice Number: 42183017 Invoice Date: August 3 , 2014 TOTAL AMOUNT DUE ON "
        "August 3 , 2014 $4.11 This invoice is for the billing period July 1 - July 31 , "
        "2014 Greetings from Amazon Web Services, we're writing to provide you with an "
        "electronic invoice for your use of AWS services.")


def test_offsets_inside_a_sentence_resolve_to_the_source() -> None:
    raw = "on Thursday\n   at 3 pm with Dr. Alves."
    norm = " ".join(raw.split())
    i = norm.index("3 pm")
    a, b = raw_offsets(raw, i, i + 4)
    assert raw[a:b] == "3 pm"
    a, b = raw_offsets(raw, norm.index("Thursday"), norm.index("pm") + 2)
    assert raw[a:b] == "Thursday\n   at 3 pm"
    s = Sentence(id=1, passage_id=1, path="p", start_char=100, end_char=100 + len(raw),
                 text=norm, raw=raw)
    assert s.source_offsets(i, i + 4) == (100 + raw.index("3 pm"), 100 + raw.index("3 pm") + 4)


def test_a_span_never_cuts_a_word() -> None:
    s = Sentence(id=1, passage_id=1, path="p", text="It was shown by Ladner in 1975.")
    i = s.text.index("Ladner")
    a, b = whole_words(s.text, i, i + 3)  # "Lad": a word piece
    assert s.text[a:b] == "Ladner"
    a, b = whole_words(s.text, i + 3, i + 6)  # "ner"
    assert s.text[a:b] == "Ladner"
    a, b = whole_words(s.text, i, i + 6)
    assert s.text[a:b] == "Ladner"
    j = s.text.index("1975")
    a, b = whole_words(s.text, j, j + 5)  # a span ending at the full stop stays as it is
    assert s.text[a:b] == "1975."
    # nor an operator or an option
    t = "Write NAME := expr, or build with --disable-gil; Jean-Paul wrote 2 - 1."
    cut = {"= expr": "NAME := expr"[5:], "disable-gil": "--disable-gil", "NAME :": "NAME :=",
           "Paul": "Paul", "1": "1"}
    for piece, whole in cut.items():
        i = t.rindex(piece)
        a, b = whole_words(t, i, i + len(piece))
        assert t[a:b] == whole, piece
    # nor a number at its decimal or thousands mark; a list of numbers stays apart
    t = "Total € 399,00 due for 12,400 people; 1.35 a gallon in 1887. Then 3, 4 and 5."
    for piece, whole in {"399": "399,00", ",00": "399,00", "400": "12,400", "35": "1.35",
                         "1887": "1887", " 4": "4"}.items():
        i = t.index(piece) + piece.startswith(" ")
        piece = piece.strip()
        a, b = whole_words(t, i, i + len(piece))
        assert t[a:b] == whole, piece
    assert trimmed(":= expr,") == ":= expr" and trimmed("Author: ") == "Author"
    # a code cut at a hyphen or dash is the whole code; a number before a word is no code
    t = "AD 2018–23–51 needs kit SK-107 for the 5-person crew, 1995–2005."
    for piece, whole in {"23–51": "2018–23–51", "107": "SK-107", "5": "5", "1995": "1995"
                         }.items():
        i = t.index(piece if piece != "5" else "5-person")
        a, b = whole_words(t, i, i + len(piece))
        assert t[a:b] == whole, piece
    assert trimmed(": Tim Peters;") == "Tim Peters"


def test_how_much_gets_one_sum_of_a_span_across_cells() -> None:
    text = "Room Charges Rs 1939 x 1 Night x 1 Room Rs 1939 Grand Total Rs 1939 Payment"
    s = Sentence(id=1, passage_id=1, path="p", text=text)
    a = text.index("Rs 1939")
    wide = Choice(text[a:], s, a, len(text))
    got = one_amount("How much did Sanjay pay for the room?", wide)
    assert (got.text, got.start, got.end) == ("Rs 1939", a, a + 7)
    assert text[got.start:got.end] == got.text
    assert one_amount("Who paid for the room?", wide) is wide  # not a price question
    one = Choice("€ 399,00", s, 0, 8)
    assert one_amount("How much did the iPad cost?", one) is one  # a single sum stays


def test_best_spans_are_ordered_and_bounded() -> None:
    import numpy as np

    start = np.array([0.0, 5.0, 1.0, 0.0, 3.0])
    end = np.array([0.0, 0.0, 4.0, 2.0, 1.0])
    spans = best_spans(start, end, [1, 2, 3, 4], max_tokens=2, k=3)
    assert spans[0] == (9.0, 1, 2)  # tokens 1..2
    assert all(s <= e < s + 2 for _, s, e in spans)
    assert [x[0] for x in spans] == sorted((x[0] for x in spans), reverse=True)
    assert best_spans(start, end, []) == []


def test_context_locates_spans_in_sentences() -> None:
    s1 = Sentence(id=1, passage_id=1, path="p", text="The rent is 900 euros.")
    s2 = Sentence(id=2, passage_id=1, path="p", text="The deposit was 1800.")
    ctx = Context.of("Flat", [s1, s2], 0.9)
    assert ctx.text == "Flat. The rent is 900 euros. The deposit was 1800."
    i = ctx.text.index("1800")
    assert ctx.locate(i, i + 4) == (s2, s2.text.index("1800"), s2.text.index("1800") + 4)
    assert ctx.locate(0, 4) is None  # in the title
    assert ctx.locate(ctx.text.index("euros"), i) is None  # across sentences


def test_duplicates_collapse_and_long_sentences_are_windowed() -> None:
    texts = ["The rent is 900 euros a month, paid on the first working day of the month.",
             "The rent is 900 euros a month, paid on the first working day of the month!",
             "The boiler is serviced every October by Termo Lisboa."]
    kept, dups = collapse_duplicates(texts, 5)
    assert kept == [0, 2] and dups == {1: 0}
    raw = " ".join(f"item{i}  costs {i} euros" for i in range(30))
    s = Sentence(id=7, passage_id=1, path="p", start_char=10, end_char=10 + len(raw),
                 text=" ".join(raw.split()), raw=raw)
    parts = split_long([s], max_words=40, size=30, stride=15)
    assert len(parts) > 1 and all(len(p.text.split()) <= 30 for p in parts)
    assert all(p.id == 7 for p in parts)
    for p in parts:  # each window's offsets point at its own words in the source
        assert " ".join(raw[p.start_char - 10:p.end_char - 10].split()) == p.text
    assert parts[-1].text.endswith("29 euros")


def test_windows_of_one_sentence_quoted_together_are_one_piece_of_it() -> None:
    from ragctl.models.filter import joined

    raw = " ".join(f"step {i} sets valve {i} open" for i in range(12))
    s = Sentence(id=7, passage_id=1, path="p", start_char=10, end_char=10 + len(raw), text=raw)
    other = Sentence(id=8, passage_id=1, path="p", start_char=500, end_char=520,
                     text="Then close them all.")
    first, second, *_ = split_long([s], max_words=40, size=30, stride=15)
    one, then = joined([second, other, first], {7: s, 8: other})
    assert one.id == 7 and then is other
    assert one.text == raw[raw.index(first.text):raw.index(second.text) + len(second.text)]
    assert raw[one.start_char - 10:one.end_char - 10] == one.text
    # a window alone, or windows of no known sentence, stay as they are
    assert joined([second, other], {7: s}) == [second, other]
    assert joined([first, second], {}) == [first, second]


def test_a_quote_of_a_long_sentence_does_not_repeat_its_words(notes: Path) -> None:
    # 44 words: two windows of 30 that share 16 words, both quoted
    steps = " ".join(f"step {i} opens valve {i} of the boiler" for i in range(5))
    a = quoted(notes, {"boiler.md": f"# Boiler\n\nTo restart the boiler: {steps}.\n"},
               "What does the boiler note say about restarting the boiler?", quote_sentences=2)
    assert a.kind == "quote" and not a.abstained
    assert [c.text for c in a.sources] == [f"To restart the boiler: {steps}."]
    for n in range(5):
        assert a.raw_answer.count(f"step {n} opens") == 1


def add_files(root: Path, files: dict[str, str]) -> None:
    """Write ``files`` (name → text) into ``root`` and index it again."""
    for name, text in files.items():
        (root / name).write_text(text)
    index_again(root)


def index_again(root: Path) -> None:
    """Index ``root`` again after a test wrote more files into it."""
    with Collection.open(load_settings(chunk_words=30)) as c:
        c.lock()
        Indexer(c).run([root])


@pytest.fixture
def notes(tmp_path: Path, fake_embedder: str) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "dentist.txt").write_text(DENTIST)
    (root / "pep-0020.rst").write_text(PEP)
    (root / "rent.md").write_text("# Flat\n\nThe rent is 900 euros a month.\n")
    with Collection.open(load_settings(chunk_words=30), create=True) as c:
        c.lock()
        Indexer(c).run([root])
    return root


def test_a_span_answer_resolves_to_the_exact_source_characters(notes: Path) -> None:
    reader = FakeReader("3 pm")
    with Collection.open(load_settings()) as c, \
            Pipeline(c, reader=reader, generator=FakeGenerator()) as p:
        a = p.ask("When is the dentist appointment?",
                  AskOptions(re_threshold=0.0, answer_threshold=0.0))
    assert not a.abstained and a.kind == "span"
    assert a.answer == "3 pm [1]" and a.answer_text == "3 pm"
    src = a.sources[0]
    assert Path(src.path).name == "dentist.txt"
    raw = (notes / "dentist.txt").read_text()
    assert src.answer_start is not None and src.answer_end is not None
    assert raw[src.answer_start:src.answer_end] == "3 pm"
    assert src.start_char <= src.answer_start < src.answer_end <= src.end_char
    assert " ".join(raw[src.start_char:src.end_char].split()) == src.text
    assert a.confidence is not None and a.candidates[0]["answer"] == "3 pm"
    assert "generate" not in a.timings  # no generator was needed


def test_no_confident_span_is_an_abstention(notes: Path) -> None:
    reader = FakeReader()  # finds nothing: every span scores below its null score
    with Collection.open(load_settings()) as c, Pipeline(c, reader=reader) as p:
        a = p.ask("When is the dentist appointment?", AskOptions(re_threshold=0.0))
        assert a.abstained and "do not answer" in (a.abstain_reason or "")
        assert a.answer == "" and a.passages  # the closest evidence is still there
        b = p.ask("When is the dentist appointment?",
                  AskOptions(re_threshold=0.0, answer_threshold=0.0))
    assert not b.abstained  # the threshold decides


def test_a_sentence_that_points_back_is_quoted_with_the_one_before_it() -> None:
    from ragctl.ask.quote import with_antecedents
    from ragctl.records import Sentence

    texts = ["Reports are kept for five years.", "It is important to keep an archive of "
             "all activities.", "To assist in this, the default channel is a private list.",
             "This policy applies to the committee."]
    at = 0
    sentences = []
    for i, t in enumerate(texts):
        sentences.append(Sentence(path="coc.md", text=t, id=i, passage_id=1, seq=i,
                                  start_char=at, end_char=at + len(t)))
        at += len(t) + 1
    quoted = with_antecedents([sentences[2]], {1: sentences})
    assert [s.id for s in quoted] == [1, 2]  # the reason "this" points back at
    assert [s.id for s in with_antecedents([sentences[3]], {1: sentences})] == [3]
    assert [s.id for s in with_antecedents([sentences[1], sentences[2]], {1: sentences})] \
        == [1, 2]  # not twice


def test_a_lead_in_is_never_quoted_alone(notes: Path) -> None:
    from ragctl.ask.documents import unquotable

    assert unquotable("The steering council shall work to:")
    assert unquotable("PEP: 20 Title: The Zen of Python Author: Tim Peters")
    assert not unquotable("The steering council is a 5-person committee.")
    a = quoted(notes, {"council.md": "# Council\n\nThe steering council shall work to:\n\n"
                              "- Maintain the quality of the language\n"
                              "- Seek consensus before acting\n"},
               "What does the council say about its work?")
    assert a.kind == "quote" and "shall work to" not in a.answer_text, a.answer_text


def test_a_why_question_quotes_the_sentence_the_reader_answers_in(notes: Path) -> None:
    from ragctl.ask.question import explains

    assert explains("Why was the library closed?") and explains("How did the council vote?")
    assert explains("In May, why was the library closed?")
    assert not explains("How many books were lent?") and not explains("What does PEP 8 say?")
    add_files(notes, {"library.md": "# Library\n\nThe town library was closed for the whole "
                                    "of May. The roof had leaked into the reading room after "
                                    "the storm. Opening hours are nine to five on weekdays.\n"})
    with Collection.open(load_settings()) as c:
        with Pipeline(c, reader=FakeReader("The roof had leaked")) as p:
            a = p.ask("Why was the library closed?", AskOptions(re_threshold=0.0))
        assert a.kind == "quote" and "reason_by_reader" in a.rules
        assert "roof had leaked" in a.answer_text, a.answer_text
        with Pipeline(c, reader=FakeReader("The roof had leaked")) as p:
            off = p.ask("Why was the library closed?",
                        AskOptions(re_threshold=0.0, rules_off=("reason_by_reader",)))
        assert "reason_by_reader" not in off.rules


def test_a_metadata_block_is_never_the_quoted_answer(notes: Path) -> None:
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader()) as p:
        a = p.ask("What does the Zen of Python say about errors?",
                  AskOptions(re_threshold=0.0))
    assert a.kind == "quote" and not a.abstained
    assert "PEP:" not in a.answer and "Author:" not in a.answer
    assert any("never pass silently" in s.text for s in a.sources)
    assert a.answer.count("[1]") == 1


def test_the_cli_prints_one_answer_and_exits_3_for_an_empty_one(
        notes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGCTL_ANSWER_THRESHOLD", "0")  # the fake reader has no fitted model
    models.register("reader", "fake-reader", lambda settings, **_: FakeReader("3 pm"))
    models.register("generator", "empty-gen", lambda settings, **_: FakeGenerator("[1]"))
    try:
        out = CliRunner().invoke(cli, ["ask", "When is the dentist appointment?",
                                       "--reader", "fake-reader", "--threshold", "0"])
        assert out.exit_code == 0, out.output
        assert out.stdout.count("Answer:") == 1 and "Checked:" not in out.stdout
        assert "Answer: 3 pm [1]" in out.stdout and "Sources:" in out.stdout
        out = CliRunner().invoke(cli, ["ask", "When is the dentist appointment?", "--free",
                                       "--model", "empty-gen", "--threshold", "0"])
        assert out.exit_code == EXIT_NOT_FOUND, out.output
        assert "Answer:" not in out.stdout and "Not found" in out.stdout
        out = CliRunner().invoke(cli, ["ask", "When is the dentist appointment?", "--free",
                                       "--model", "empty-gen", "--threshold", "0", "--json"])
        assert out.exit_code == EXIT_NOT_FOUND
        assert json.loads(out.stdout)["abstained"] is True
    finally:
        models.unregister("reader", "fake-reader")
        models.unregister("generator", "empty-gen")


def test_a_numbered_name_the_question_asks_about_reaches_the_reader() -> None:
    from ragctl.ask.documents import identifiers, mentions
    from ragctl.records import Hit

    assert identifiers("Who is the author of PEP 723?") == [("PEP", "723")]
    assert identifiers("What is on line 7 of Form 1040?") == [("Form", "1040")]
    # not dates, seasons, scores or the question's first word
    assert identifiers("Who played for the Broncos 2015 season?") == []
    assert identifiers("What happened on January 30th?") == []
    assert identifiers("What color jersey has Denver 0-4?") == []
    assert identifiers("What 1971 film was shot in Newcastle?") == []
    assert mentions("PEP: 723 Title: Inline script metadata", ("PEP", "723"))
    assert not mentions("PEP: 1 Title: PEP Purpose; see PEP 7230", ("PEP", "723"))

    texts = ["PEP: 1 Title: PEP Purpose and Guidelines Author: Barry Warsaw",
             "The Author header lists the names of all the authors of the PEP.",
             "Each PEP must have a champion.",
             "A PEP is a design document.",
             "PEP: 723 Title: Inline script metadata Author: Ofek Lev"]
    hits = [Hit(path=f"pep{i}.rst", passage_id=i, text=t) for i, t in enumerate(texts)]
    order = [0, 1, 2, 3, 4]  # by relevance: the relevance estimator reads PEP 1 and 723 alike
    dups = {3: 2}
    kept = with_identifier("Who is the author of PEP 723?", hits, order, [0, 1, 2], dups)
    assert kept == [0, 1, 4] and dups == {}  # the last kept passage gives way, its repeats too
    # nothing changes when a kept passage names it, or the question names nothing numbered
    assert with_identifier("Who wrote PEP 1?", hits, order, [0, 1, 2], {}) == [0, 1, 2]
    assert with_identifier("Who is the author?", hits, order, [0, 1], {}) == [0, 1]


def test_a_bare_number_for_a_measure_question_keeps_its_unit() -> None:
    from ragctl.ask.answer import Choice, with_unit

    text = "The Sports Zone opened a 10,000 square foot facility in Upland; 40% of it is turf."
    s = Sentence(id=1, passage_id=1, path="p", text=text)

    def bare(number: str) -> Choice:
        i = text.index(number)
        return Choice(number, s, i, i + len(number))

    big = with_unit("How large is The Sports Zone facility?", bare("10,000"))
    assert big.text == "10,000 square foot" and text[big.start:big.end] == big.text
    assert with_unit("What is the size of the facility?", bare("10,000")).text == \
        "10,000 square foot"
    assert with_unit("How large is the turf share?", bare("40")).text == "40%"
    # "how many" counts things: the number alone is the answer
    assert with_unit("How many square feet is the facility?", bare("10,000")).text == "10,000"


def test_a_number_with_the_unit_the_question_names_is_the_bare_number() -> None:
    from ragctl.ask.answer import Choice, completed

    text = "By 2000, 587,000 square kilometres of the forest and 40% of its birds had been lost."
    s = Sentence(id=1, passage_id=1, path="p", text=text)

    def span(t: str) -> Choice:
        i = text.index(t)
        return Choice(t, s, i, i + len(t), probability=0.9)

    lost = completed("In 2000 how many square kilometers of the forest had been lost?",
                     [span("587,000 square kilometres")])
    assert lost.text == "587,000" and text[lost.start:lost.end] == "587,000"
    # a unit the question does not name stays: it says what was counted
    assert completed("How much of the forest had been lost by 2000?",
                     [span("587,000 square kilometres")]).text == "587,000 square kilometres"
    assert completed("How many of its birds were lost?", [span("40%")]).text == "40%"


def completing(text: str) -> Callable[[str, str], str]:
    """``answer(question, span)``: what :func:`completed` makes of ``span`` of ``text`` as
    the only choice, checked to be the text at its own offsets."""
    from ragctl.ask.answer import Choice, completed

    s = Sentence(id=1, passage_id=1, path="p", text=text)

    def answer(question: str, span: str) -> str:
        i = text.index(span)
        c = completed(question, [Choice(span, s, i, i + len(span), probability=0.9)])
        assert text[c.start:c.end] == c.text
        return c.text

    return answer


def test_a_name_is_given_without_the_role_before_it() -> None:
    answer = completing(
        "Snopes fact checker and staff writer David Emery, with engineer Wernher von Braun "
        "and the Seattle Seahawks, had a torn ACL.")
    assert answer("Who posted it?", "staff writer David Emery") == "David Emery"
    assert answer("Who built it?", "engineer Wernher von Braun") == "Wernher von Braun"
    # "which <role>": the role is the question's word
    assert answer("Which Snopes writer posted it?", "staff writer David Emery") == "David Emery"
    assert answer("Which paper posted it?", "staff writer David Emery") == \
        "staff writer David Emery"
    # a determiner, a particle or a question that asks for no one is no role
    assert answer("Who won?", "the Seattle Seahawks") == "the Seattle Seahawks"
    assert answer("Who built it?", "von Braun") == "von Braun"
    assert answer("What injury did he have?", "torn ACL") == "torn ACL"


def test_a_question_for_two_things_gets_the_span_that_lists_them() -> None:
    from ragctl.ask.answer import Choice, completed

    text = "The fight is between two companies: Arduino LLC and Arduino SRL."
    s = Sentence(id=1, passage_id=1, path="p", text=text)

    def span(t: str, p: float) -> Choice:
        i = text.index(t)
        return Choice(t, s, i, i + len(t), probability=p)

    choices = [span("Arduino LLC", 0.99), span("LLC", 0.98),
               span("Arduino LLC and Arduino SRL", 0.97)]
    assert completed("Which two companies are fighting?", choices).text == \
        "Arduino LLC and Arduino SRL"
    # not for a question about one thing, nor for a list the reader rates much lower
    assert completed("Which company is fighting?", choices).text == "Arduino LLC"
    low = [choices[0], span("Arduino LLC and Arduino SRL", 0.5)]
    assert completed("Which two companies are fighting?", low).text == "Arduino LLC"


def quoted(notes: Path, files: dict[str, str], question: str, **options: Any) -> Answer:
    """Write ``files`` into the notes folder, index it again and ask ``question`` (a
    quote question: the fake reader finds nothing)."""
    add_files(notes, files)
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader()) as p:
        return p.ask(question, AskOptions(re_threshold=0.0, **options))


def test_what_a_named_document_proposes_is_its_own_statement(notes: Path) -> None:
    from ragctl.ask.question import asked_statement, own_statement

    assert question_type("What does PEP 572 propose?").kind == "quote"
    assert question_type("What does PEP 13 define?").kind == "quote"
    assert asked_statement("What does PEP 572 propose?") == "propos"
    assert asked_statement("What does the PEP say about tabs?") is None
    assert own_statement("propos", "This PEP proposes adding a build option.")
    assert own_statement("propos", "This is a proposal for creating a way to assign.")
    assert own_statement("propos", "In this paper, we propose a new reader.")
    assert not own_statement("propos", "A previous version of this PEP proposed a table.")
    assert not own_statement("propos", "It is often better to just propose a new one.")
    general = ("PEP Purpose\n===========\n\nA PEP may propose a new feature. Propose it on "
               "the forum first; it is often better to just propose a new one.\n")
    a = quoted(notes, {
        "pep-0001.rst": general,
        "pep-0572.rst": "PEP: 572\nTitle: Assignment Expressions\n\nRationale\n=========\n\n"
                        "Naming the result of an expression is an important part of "
                        "programming.\n\nThis is a proposal for creating a way to assign to "
                        "variables within an expression using the notation NAME := expr.\n",
        "pep-0723.rst": "PEP: 723\nTitle: Inline script metadata\n\nAbstract\n========\n\n"
                        "This PEP specifies a metadata format that can be embedded in "
                        "single-file Python scripts.\n"},
        "What does PEP 572 propose?")
    assert a.kind == "quote" and [Path(s.path).name for s in a.sources] == ["pep-0572.rst"]
    assert a.answer_text.startswith("This is a proposal for creating a way")
    # no sentence with the verb asked: the document's statement with another one
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader()) as p:
        other = p.ask("What does PEP 723 propose?", AskOptions(re_threshold=0.0))
    assert other.answer_text.startswith("This PEP specifies a metadata format")


def test_a_quote_comes_from_the_source_the_question_names(notes: Path) -> None:
    a = quoted(notes, {"style.md": "# Style guide\n\nWhat does the guide say about errors? "
                                   "Say what the errors are: errors say what went wrong.\n"},
               "What does the Zen of Python say about errors?")
    assert a.kind == "quote" and not a.abstained
    assert "never pass silently" in a.answer and "went wrong" not in a.answer


def test_a_mail_s_date_header_is_not_the_day_of_what_it_announces(notes: Path) -> None:
    (notes / "garden.eml").write_text(
        "From: Ann Lopes <ann@example.org>\nSubject: Garden open day\n"
        "Date: Tue, 14 Mar 2023 09:12:40 +0000\n\nThe garden open day will have stalls, "
        "a plant sale and tea. Bring your neighbours.\n")
    index_again(notes)
    with Collection.open(load_settings()) as c, \
            Pipeline(c, reader=FakeReader("14 Mar 2023")) as p:
        day = p.ask("On what day is the garden open day?", AskOptions(re_threshold=0.0))
        sent = p.ask("When was the mail about the garden open day sent?",
                     AskOptions(re_threshold=0.0))
    assert day.abstained and "header_line" in day.rules  # the mail never says which day
    assert not sent.abstained and "14 Mar 2023" in sent.answer_text


def test_authorship_questions_are_told_apart() -> None:
    assert is_authorship("Who wrote the Dropbox ATF blog post?")
    assert is_authorship("Who is the author of PEP 723?") and is_authorship("By whom was it sent?")
    assert not is_authorship("Who was sitting in the kitchen door?")


def test_who_wrote_it_is_answered_from_the_document_s_author_line(
        notes: Path, tmp_path: Path) -> None:
    (notes / "post.md").write_text(
        "# How we sped up the build\n\nOur build took an hour. Dana Reyes and Sam Ortiz "
        "rewrote the cache, and now it takes ten minutes.\n\n" + "More text. " * 40
        + "\n\n## About\n\nBy Lee Wong • Nov 11, 2020\n")
    index_again(notes)
    # the reader would pick a name from the article: the author line answers instead
    with Collection.open(load_settings()) as c, \
            Pipeline(c, reader=FakeReader("Dana Reyes")) as p:
        a = p.ask("Who wrote the post about the cache Dana Reyes rewrote?",
                  AskOptions(re_threshold=0.0))
        z = p.ask("Who wrote the Zen of Python?", AskOptions(re_threshold=0.0))
        other = p.ask("Who rewrote the cache?", AskOptions(re_threshold=0.0,
                                                            answer_threshold=0.0))
    assert a.answer == "Lee Wong [1]" and Path(a.sources[0].path).name == "post.md"
    src = a.sources[0]
    raw = (notes / "post.md").read_text()
    assert src.answer_start is not None and raw[src.answer_start:src.answer_end] == "Lee Wong"
    assert z.answer == "Tim Peters [1]" and Path(z.sources[0].path).name == "pep-0020.rst"
    assert other.answer == "Dana Reyes [1]"  # not a question for the author: the reader
    # a mail: its From line
    (notes / "plumber.eml").write_text(
        "From: Ann Lopes <ann@example.org>\nTo: Bob <bob@example.org>\nSubject: Boiler "
        "valve\nDate: Mon, 1 Jan 2024 09:00:00 +0000\n\nThe plumber Dana Reyes comes on "
        "Thursday to replace the boiler valve.\n")
    index_again(notes)
    with Collection.open(load_settings()) as c, \
            Pipeline(c, reader=FakeReader("Dana Reyes")) as p:
        mail = p.ask("Who sent the mail about the Boiler valve?", AskOptions(re_threshold=0.0))
    assert mail.answer == "Ann Lopes [1]" and Path(mail.sources[0].path).name == "plumber.eml"
    with Collection.open(load_settings()) as c, \
            Pipeline(c, reader=FakeReader("Thursday")) as p:
        sent = p.ask("When was the mail about the Boiler valve sent?",
                     AskOptions(re_threshold=0.0))
    assert sent.answer == "Mon, 1 Jan 2024 09:00:00 +0000 [1]"


def test_fields_are_stored_cited_and_renewed(notes: Path) -> None:
    mail = notes / "plumber.eml"
    mail.write_text("From: Ann Lopes <ann@example.org>\nSubject: Boiler valve\n"
                    "Date: Mon, 1 Jan 2024 09:00:00 +0000\n\nThe plumber comes on Thursday.\n")
    index_again(notes)
    with Collection.open(load_settings()) as c:
        fields = {f.name: f for f in c.store.document_fields(str(mail))}
        assert set(fields) == {"sender", "subject", "date"}
        sender = fields["sender"]
        s = c.store.sentence_at(str(mail), sender.place, sender.start_char)
        assert s is not None and "Ann Lopes" in s.text
    mail.write_text("From: Bo Chen <bo@example.org>\n\nThe plumber comes on Friday.\n")
    index_again(notes)
    with Collection.open(load_settings()) as c:
        assert [(f.name, f.value) for f in c.store.document_fields(str(mail))] == \
            [("sender", "Bo Chen")]
    mail.unlink()
    index_again(notes)
    with Collection.open(load_settings()) as c:
        assert c.store.document_fields(str(mail)) == []
        assert c.store.count("fields") == sum(
            len(c.store.document_fields(d.path)) for d in c.store.documents())


def test_an_answer_comes_from_a_document_that_names_the_question_s_subject(
        notes: Path) -> None:
    (notes / "stock.txt").write_text("Stock list of Birch & Co, aisle 4. Hammers cost $12.00 "
                                     "each and nails $3.50 a box.\n")
    (notes / "receipt.txt").write_text("LARKSPUR HARDWARE\nReceipt 2291\n\nShop receipt. "
                                       "Total paid: $48.20 by card.\n")
    index_again(notes)
    with Collection.open(load_settings()) as c, \
            Pipeline(c, reader=FakeReader("$12.00")) as p:
        a = p.ask("How much do hammers cost at Larkspur?",
                  AskOptions(re_threshold=0.0, answer_threshold=0.01))
    # the stock list names no Larkspur anywhere: its price is no answer
    assert a.abstained or Path(a.sources[0].path).name != "stock.txt"


def test_the_shortest_of_near_ties_is_chosen() -> None:
    from ragctl.ask.answer import shortest_of_near_ties

    def order(*spans: tuple[str, float]) -> list[str]:
        got = shortest_of_near_ties(list(spans), lambda s: s[1], lambda s: s[0])
        return [s[0] for s in got]

    # "Johann Tetzel" and "Tetzel": the reader cannot tell them apart, the shorter goes first
    assert order(("Johann Tetzel", 0.800), ("Tetzel", 0.795), ("Luther", 0.7)) == \
        ["Tetzel", "Johann Tetzel", "Luther"]
    # not when the shorter one is clearly less probable, nor a span that is not inside it
    assert order(("Johann Tetzel", 0.80), ("Tetzel", 0.60))[0] == "Johann Tetzel"
    assert order(("Johann Tetzel", 0.80), ("Luther", 0.799))[0] == "Johann Tetzel"
    # a longer span holding the best one is a tie too; a vetoed span (0) never is
    assert order(("the Tetzel", 0.8), ("Tetzel", 0.0)) == ["the Tetzel", "Tetzel"]
    assert order() == []
    assert order((":= expr", 0.8), ("expr", 0.799))[0] == ":= expr"  # a sign is no word


def test_the_value_of_a_labelled_field() -> None:
    assert asked_field("What is the invoice number of the Flipkart invoice?") == "invoice number"
    assert asked_field("When is the Azure Interior invoice due?") == "due date"
    assert asked_field("What is the population of Harbour Town?") == "population"
    assert asked_field("What is the main reason for the delay?") is None
    assert asked_field("When did Ann send the mail about the boiler?") == "date"
    assert asked_field("When was the war?") is None
    assert asked_field("When did the trip end?") == "end date"  # its form's End Date
    assert asked_field("What notation do assignment expressions use?") is None
    # what a sum was paid for: its label ("Insurance $ 1,384.00")
    assert asked_field("How much did the Foundation pay for insurance in 2019?") == "insurance"
    assert asked_field("How much was spent on food on expense report 35678-9?") == "food"
    assert asked_field("How much did Arduino LLC pay to settle?") is None

    def values(field: str, text: str) -> list[str]:
        return [text[a:b] for a, b in field_values(field, text)]

    assert values("invoice number", "Karnataka - 560067 Invoice No: # BLR_WF2015 Retail "
                  "Invoices/Bill Product") == ["BLR_WF2015"]
    assert values("due date", "Invoice Date: 03/20/2023 Due Date: 04/04/2023 Reference: "
                  "CUSTREF123") == ["04/04/2023"]
    assert values("payment terms", "Payment terms: 15 Days Bank Account: US12") == ["15 Days"]
    assert values("population", "Mayor: Ruth Okafor; Population: 12,400; Founded: 1702") \
        == ["12,400"]
    assert values("mayor", "Mayor: Ruth Okafor; Population: 12,400") == ["Ruth Okafor"]
    assert values("due date", "The invoice is due on 4 April.") == []
    # without a colon only an identifier is a value ("Booking ID IBZY2087")
    assert values("booking id", "Rooms 1 Booking ID IBZY2087 Payment Mode Cash") == ["IBZY2087"]
    assert values("population", "The population grew fast after 1990.") == []
    # ... or an amount ending a short line of its own, a receipt's line as OCR reads it
    assert values("total", "TOTAL 21.00") == ["21.00"]
    assert values("amount due", "[AMOUNT DUE $610.00") == ["$610.00"]
    assert values("total", "SUBTOTAL $100.00") == []
    assert values("due date", "DUE DATE 26/02/2019") == ["26/02/2019"]
    assert values("net pay", "Loan - 30.00 150.00: Adjustment Net Pay $ 291.90 Excluded from "
                  "federal taxable wages") == ["$ 291.90"]
    assert values("net pay", "the net pay rose by 5 percent in the year") == []
    assert values("total", "Total 21.00 EUR, thank you for visiting us again soon") == []
    assert asked_field("When is payment due on Contoso's invoice 12345678?") == "due date"
    assert asked_field("By what date should invoice RE-20140519/499 be paid?") == "due date"
    # the document's own label, given in brackets; an amount with its currency
    assert asked_field("What is the invoice amount (Rechnungsbetrag) of invoice 42?") \
        == "rechnungsbetrag"
    assert asked_field("How much is still to be paid (solde à payer) on FA-17?") \
        == "solde à payer"
    assert asked_field("What is the value (in USD) of the order?") is None
    # a word in brackets after another (the document's kind) is no label of the field
    assert asked_field("What is the total on the Italian invoice (Fattura) 54321?") == "total"
    assert asked_field("When is the payment (Zahlung) due?") == "due date"
    # what asks for the document's total: its words, or a label a total goes by
    from ragctl.ask.fields import asks_total

    assert [asks_total(f) for f in ("total", "gross total", "final amount", "brutto",
                                    "rechnungsbetrag", "razem")] == [True] * 6
    assert [asks_total(f) for f in ("amount", "net pay", "due date", "subtotal")] == [False] * 4
    assert asked_field("What was John Stiles' net pay on the statement?") == "net pay"
    assert asked_field("What is Acme's ticker symbol?") == "ticker symbol"
    assert values("solde à payer", "Solde à payer: 470,15 € Notes") == ["470,15 €"]
    # "how much <label> was / did …" asks a form's amount by its label
    assert asked_field("How much delivery fee was charged on the Chicago order?") \
        == "delivery fee"
    assert asked_field("How much tip did I leave at Casa Palmera?") == "tip"
    assert [asked_field(q) for q in ("How much more is A than B?", "How much did I pay?",
                                     "How much money was raised?")] == [None] * 3
    # a bracket qualifies the label before its colon
    assert values("total amount due", "Total Current Charge: 79,320.26 Total Amount Due "
                  "(Inclusive of GST): 164,390.91") == ["164,390.91"]
    assert values("total amount due", "Total Amount Due (see page 2) 164.00") == []
    # a rate between the label and its colon is the label's
    assert values("tva", "Total HT : 46,68 € TVA 20% : 9,34 € Total TTC : 56,02 €") \
        == ["9,34 €"]
    assert values("invoice number", "Invoice Number INV-1 Date: 2023-01-02") == ["INV-1"]
    # where the source's lines end, a value ends with its line (an indented line goes on)
    from ragctl.text import line_starts, normalize_space

    raw = ("PEP: 440\nTitle: Version Identification and Dependency Specification\n"
           "Author: Alyssa Coghlan,\n    Donald Stufft\nSubject: Discover(R) Card News Online "
           "- January 2002")
    text = normalize_space(raw)
    lines = line_starts(raw, text)
    assert sorted(text[i:i + 6] for i in lines) == ["Author", "Subjec", "Title:"]

    def by_line(field: str) -> list[str]:
        return [text[a:b] for a, b in field_values(field, text, lines)]

    assert values("title", text) == ["Version Identification and"]  # "… Author:" a label?
    assert by_line("title") == ["Version Identification and Dependency Specification"]
    assert by_line("author") == ["Alyssa Coghlan, Donald Stufft"]
    assert by_line("subject") == ["Discover(R) Card News Online - January 2002"]


def test_a_question_for_a_field_gets_its_value(notes: Path) -> None:
    (notes / "invoice.txt").write_text(
        "Harbour Supplies Ltd, 12 Quay Road. Invoice No: HS-2291 Invoice Date: 03/20/2024 "
        "Due Date: 04/04/2024 Total: 279.84 EUR. Thank you for your order.\n")
    (notes / "receipt.txt").write_text(
        "Corner Cafe receipt. Item: Coffee; Price: 2.50\nItem: Croissant; Price: 1.80\n")
    index_again(notes)
    # the reader would answer with another date of the invoice
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("03/20/2024")) as p:
        due = p.ask("When is the Harbour Supplies invoice due?", AskOptions(re_threshold=0.0))
        number = p.ask("What is the invoice number of the Harbour Supplies invoice?",
                       AskOptions(re_threshold=0.0))
        price = p.ask("What is the price of the croissant at Corner Cafe?",
                      AskOptions(re_threshold=0.0, answer_threshold=0.0))
    assert due.answer == "04/04/2024 [1]" and number.answer == "HS-2291 [1]"
    assert due.candidates[0]["rule"] == "the document's labelled field"  # --explain says so
    raw = (notes / "invoice.txt").read_text()
    src = due.sources[0]
    assert src.answer_start is not None and raw[src.answer_start:src.answer_end] == "04/04/2024"
    assert price.answer == "1.80 [1]"  # the row that names the croissant


def test_when_something_ended_is_the_date_labelled_with_its_word(notes: Path) -> None:
    from ragctl.ask.fields import asked_field

    assert asked_field("When did the expense report's trip end?") == "end date"
    assert asked_field("When does the subscription start?") == "start date"
    assert asked_field("When is it?") is None
    (notes / "expenses.txt").write_text(
        "EMPLOYEE EXPENSE REPORT\nName: Alexandra Chen\nStart Date: November 15, 2024\n"
        "End Date: December 10, 2024\nPurpose: Conference attendance\n")
    index_again(notes)
    # the reader would answer with the first date
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader(
            "November 15, 2024")) as p:
        end = p.ask("When did Alexandra Chen's trip end?", AskOptions(re_threshold=0.0))
    assert end.answer == "December 10, 2024 [1]"


def test_a_row_of_labels_over_a_row_of_values(notes: Path) -> None:
    (notes / "azure.txt").write_text(
        "Azure Interior\n4557 De Silva St\nInvoice INV/2023/03/0008\n"
        "Invoice Date: Due Date: Reference:\n03/20/2023 04/04/2023 CUSTREF123\n"
        "Payment Terms: Shipping Terms:\nNet 45 DDP (Delivered Duty Paid)\n"
        "Total $ 279.84\n")
    index_again(notes)
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader(
            "03/20/2023")) as p:
        due = p.ask("What is the due date of the Azure Interior invoice?",
                    AskOptions(re_threshold=0.0))
        ref = p.ask("What is the reference of the Azure Interior invoice?",
                    AskOptions(re_threshold=0.0))
        terms = p.ask("What are the shipping terms of the Azure Interior invoice?",
                      AskOptions(re_threshold=0.0, answer_threshold=0.0))
    assert due.answer == "04/04/2023 [1]" and ref.answer == "CUSTREF123 [1]"
    # values that are not one word each cannot be told apart: not from this rule
    assert "value_below" not in terms.rules


def test_a_document_named_by_number_answers_though_others_mention_it(notes: Path) -> None:
    # the guide mentions "PEP 13" more than PEP 13's own header does; the question is
    # about the document so named, whether or not the search finds its header
    (notes / "pep-0001.rst").write_text(
        "PEP: 1\nTitle: PEP Purpose\nStatus: Active\nCreated: 13-Jun-2000\n\nGuide\n=====\n\n"
        "The status of PEP 13 and of every PEP is described in PEP 13 and in PEP 1. The "
        "council of PEP 13 decides the status of a PEP.\n")
    (notes / "pep-0013.rst").write_text(
        "PEP: 13\nTitle: Python Language Governance\nStatus: Final\n\nAbstract\n"
        "========\n\nThis PEP defines the formal governance process for Python.\n")
    index_again(notes)
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("Active")) as p:
        a = p.ask("What is the status of PEP 13?", AskOptions(re_threshold=0.0, top_k=1))
    assert a.answer == "Final [1]" and Path(a.sources[0].path).name == "pep-0013.rst"


def test_a_field_comes_from_the_invoice_that_names_the_question_s_names(notes: Path) -> None:
    # both invoices hold the label; the one that names Acme is meant, even when the
    # other's passage rates higher, and "Brutto" asks for the document's total
    (notes / "contoso-rechnung.txt").write_text(
        "Contoso Ltd\nRechnung AD1234567\nRechnungsbetrag 310,00 EURO\n")
    (notes / "rechnung-42.txt").write_text(
        "Acme GmbH\nRechnung Nr. 42\nSumme netto 1.420,00\nUmsatzsteuer 19% 269,80\n"
        "Brutto 1.589,80\n")
    index_again(notes)
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("310,00")) as p:
        a = p.ask("What is the invoice amount (Rechnungsbetrag) of the Acme GmbH invoice?",
                  AskOptions(re_threshold=0.0))
        b = p.ask("What is the gross total of the Acme GmbH invoice?",
                  AskOptions(re_threshold=0.0))
    assert a.answer == "1.589,80 [1]" and Path(a.sources[0].path).name == "rechnung-42.txt"
    assert b.answer == "1.589,80 [1]"


def test_a_figure_is_no_computed_answer_unless_its_sentence_states_the_result(
        notes: Path) -> None:
    from ragctl.ask.rules import asked_arithmetic, states_result

    def vetoed(question: str, text: str, span: str) -> bool:
        a = text.find(span)
        return asked_arithmetic(question) is not None and not states_result(
            text, a, a + len(span))

    accidents = "The 1997 accident killed 6 of the 140 occupants."
    assert vetoed("How many people died in total across the listed accidents?", accidents, "6")
    assert not vetoed("How many passengers were on the flight?", accidents, "140")
    assert not vetoed("How many people died in total across the listed accidents?",
                      "A total of 128 people died in the accidents listed.", "128")
    assert not vetoed("By how much did licensing revenue grow from 2020 to 2021?",
                      "Licensing revenue grew by $9.7 million to $19.9 million.", "$9.7 million")
    assert vetoed("How many years older is John Doe than Jane Doe?",
                  "John Doe, born 1970. Jane Doe, born 1976.", "1970")
    assert not vetoed("By how many BLEU points does the big model beat the best earlier one?",
                      "It outperforms the best previous models by more than 2.0 BLEU.",
                      "more than 2.0")  # the span says it is a result
    assert asked_arithmetic("What was the total at the Contoso restaurant?") is None
    # in a table's row, by the cell's own column or the row's label, not a neighbour's
    from ragctl.ask.span import _stated_result
    row = "Supplies; FY24 ACTUAL: $11,650; FY26 PROPOSED: $9,000; CHANGE ($): -$2,650"
    for span, states in (("$9,000", False), ("-$2,650", True)):
        assert _stated_result(row, row.find(span), row.find(span) + len(span)) is states
    total = "TOTAL; FY24 ACTUAL: $707,605; FY26 PROPOSED: $709,576"
    assert _stated_result(total, total.find("$709,576"), len(total))
    # end to end: two counts the text states are subtracted; when the second is not
    # stated, the figure the reader finds is shown as one input, not printed as the answer
    (notes / "clubs.txt").write_text("The Oslo club has 412 members and the Bergen club "
                                     "has 315 members.\n")
    index_again(notes)
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("412")) as p:
        a = p.ask("How many more members does the Oslo club have than the Bergen club?",
                  AskOptions(re_threshold=0.0))
        b = p.ask("How many more members does the Oslo club have than the youth section?",
                  AskOptions(re_threshold=0.0))
    assert a.answer.startswith("97 members (= 412 members − 315 members)"), a.answer
    assert b.abstained and "'412' (clubs.txt) is one figure" in (b.abstain_reason or ""), b


def test_a_section_the_question_names_is_told_by_its_heading() -> None:
    from ragctl.ask.documents import heading_named

    q = "What does PEP 257 say about one-line docstrings?"
    assert heading_named(q, "Specification > One-line Docstrings")
    assert not heading_named(q, "Specification > Multi-line Docstrings")
    assert not heading_named(q, "PEP 257") and not heading_named(q, "")
    assert not heading_named("What is Python used for?", "Python")  # a name, not a topic

def test_a_question_that_asks_to_choose_names_its_two_options() -> None:
    from ragctl.ask.documents import first_year
    from ragctl.ask.question import choice_options, time_order

    assert choice_options("Who is older, Annie Morton or Terry Richardson?") == (
        "Annie Morton", "Terry Richardson")
    assert choice_options("Which band, Letters to Cleo or Screaming Trees, had more "
                          "members?") == ("Letters to Cleo", "Screaming Trees")
    assert choice_options("who is younger Keith Bostic or Jerry Glanville ?") == (
        "Keith Bostic", "Jerry Glanville")
    assert choice_options("Was the test of the engine a failure or a success?") == (
        "a failure", "a success")
    assert choice_options("Which is due first: the gas bill or the water bill?") == (
        "the gas bill", "the water bill")
    for q in ("What must m be less than or equal to when dividing?",
              "Who can question the First Minister or members of the cabinet?",
              "How many couples or partnerships were there?",
              "Is the invoice paid or not?", "Is the clinic open on Sundays?"):
        assert choice_options(q) is None, q
    from ragctl.ask.documents import option_in

    assert option_in("the Azure Interior invoice", "Billed by Azure Interior.") == (10, 24)
    assert option_in("Terry Richardson", "photographed by Terry Richardson's team") == (16, 34)
    assert option_in("the gas bill", "The water bill is due.") is None
    kind = question_type("Who is older, Annie Morton or Terry Richardson?")
    assert kind.kind == "choice" and kind.expects == "person"  # the reader's type if it must
    assert time_order("Who was born earlier, A or B?") == -1
    assert time_order("Which is newer, A or B?") == 1
    assert time_order("Which band had more members, A or B?") == 0
    assert first_year("Ada (10 December 1815 – 27 November 1852)") == 1815
    assert first_year("It cost 1,500 euros and weighs 2000.5 kg") is None


def test_a_yes_no_question_about_two_things_names_both() -> None:
    from ragctl.ask.yesno import pair_named, stated_share

    assert pair_named("Are both Elko Regional Airport and Gerald R. Ford International "
                      "Airport located in Michigan?") == (
        "Elko Regional Airport", "Gerald R. Ford International Airport")
    assert pair_named("Are Freakonomics and In the Realm of the Hackers both American "
                      "documentaries?") == ("Freakonomics", "In the Realm of the Hackers")
    assert pair_named("Do the drinks Gibson and Zurracapote both contain gin?") == (
        "Gibson", "Zurracapote")
    assert pair_named("Was the French and Indian War part of the Seven Years' War?") is None
    assert pair_named("Is the clinic open on Sundays?") is None
    q = "Are Ada Lovelace and Grace Hopper both mathematicians?"
    assert stated_share(q, "Ada Lovelace was an English mathematician.",
                        leave_out=("Ada Lovelace", "Grace Hopper")) == 1.0
    assert stated_share(q, "Grace Hopper was an American computer scientist.",
                        leave_out=("Ada Lovelace", "Grace Hopper")) == 0.0
    assert stated_share("Is the rent 900 euros?", "The rent is 900 euros a month.") == 1.0


def test_a_yes_no_question_the_sentence_is_silent_on() -> None:
    from ragctl.ask.yesno import silent_on, unstated

    game = "Super Bowl 50 was played on February 7, 2016, at Levi's Stadium."
    assert unstated("Did it rain during Super Bowl 50?", game) == ["rain"]
    assert silent_on("Did it rain during Super Bowl 50?", game) == ["rain"]
    # a missing name or number may be a "no": the text may give another value of it
    founded = "The IPCC was established in 1988 by the WMO and UNEP."
    assert silent_on("Was the IPCC first established in 1998?", founded) == []
    assert silent_on("Was Super Bowl 50 played in Houston?", game) == []
    assert silent_on("Was Super Bowl 50 played at Levi's Stadium?", game) == []
    # a sentence that names less than half of the question is about something else
    assert silent_on("Was Ada Lovelace born in Houston?", game) == [
        "ada", "lovelace", "born", "houston"]
    # a hyphenated word names its parts, as the question's words are split
    tool = "There were no open-source projects, so we had to create our own test framework."
    assert unstated("Is the test framework open source?", tool) == []
    assert unstated("Is the test framework open-source?", tool) == []


@pytest.fixture
def people(notes: Path) -> Path:
    (notes / "ada.txt").write_text(
        "Ada Lovelace (born 10 December 1815) was an English mathematician. She wrote "
        "the first published program.\n")
    (notes / "grace.txt").write_text(
        "Grace Hopper (born December 9, 1906) was an American computer scientist. She "
        "led the team that wrote one of the first compilers.\n")
    index_again(notes)
    return notes


def test_which_came_first_is_read_from_the_years_given(people: Path) -> None:
    with Collection.open(load_settings()) as c, \
            Pipeline(c, reader=FakeReader("English"), generator=FakeGenerator()) as p:
        older = p.ask("Who was born earlier, Grace Hopper or Ada Lovelace?",
                      AskOptions(re_threshold=0.0))
        younger = p.ask("Who is younger, Ada Lovelace or Grace Hopper?",
                        AskOptions(re_threshold=0.0))
        neither = p.ask("Who is older, Alan Turing or Ada Lovelace?",
                        AskOptions(re_threshold=0.0, answer_threshold=0.0,
                                   rules_off=frozenset({"grounding"})))
        grounded = p.ask("Who is older, Alan Turing or Ada Lovelace?",
                         AskOptions(re_threshold=0.0, answer_threshold=0.0))
    assert older.question_type == "choice:person"
    assert older.answer_text == "Ada Lovelace" and younger.answer_text == "Grace Hopper"
    assert older.candidates[0]["rule"] == "the earlier year (1906, 1815)"
    src = older.sources[0]
    raw = (people / "ada.txt").read_text()
    assert src.answer_start is not None and raw[src.answer_start:src.answer_end] == \
        "Ada Lovelace"
    assert {Path(s.path).name for s in older.sources} == {"ada.txt", "grace.txt"}
    assert older.answer == "Ada Lovelace [1] [2]"
    # the documents never mention one of the two: the reader is asked, and its answer
    # ("English") is neither of them, so the documents do not say which
    assert "rule" not in neither.candidates[0] and neither.candidates[0]["answer"] == "English"
    assert neither.abstained and neither.answer == "" and not neither.sources
    assert "do not say which of 'Alan Turing' and 'Ada Lovelace'" in (
        neither.abstain_reason or "")
    # grounded, the question is refused before the reader is asked: no document names Turing
    assert grounded.abstained and not grounded.candidates
    assert grounded.abstain_reason == "nothing in your documents mentions 'Alan Turing'"


def test_yes_only_when_what_is_said_of_both_states_it(
        people: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Collection.open(load_settings()) as c, \
            Pipeline(c, reader=FakeReader(), generator=FakeGenerator()) as p:
        no = p.ask("Are Ada Lovelace and Grace Hopper both mathematicians?",
                   AskOptions(re_threshold=0.0))
        yes = p.ask("Were Ada Lovelace and Grace Hopper both born in December?",
                    AskOptions(re_threshold=0.0))
        one = p.ask("Is the rent 900 euros a month?", AskOptions(re_threshold=0.0))
    assert no.kind == "yes-no" and no.answer_text == "No"
    assert {Path(s.path).name for s in no.sources} == {"ada.txt", "grace.txt"}
    assert yes.answer_text == "Yes" and yes.answer == "Yes [1] [2]"
    assert one.answer_text == "Yes" and Path(one.sources[0].path).name == "rent.md"
    from ragctl.app import display

    display.render_explain(no)  # --explain says how it was decided
    assert "yes or no from what is said of each: it states 0% of the question's words " \
        "(yes above 75%)" in " ".join(capsys.readouterr().out.split())
    # what the documents are silent on is not a "no"; another year is
    with Collection.open(load_settings()) as c, \
            Pipeline(c, reader=FakeReader(), generator=FakeGenerator()) as p:
        silent = p.ask("Did Ada Lovelace play the piano?", AskOptions(re_threshold=0.0))
        other = p.ask("Was Ada Lovelace born in 1820?", AskOptions(re_threshold=0.0))
    assert silent.abstained and silent.answer == "" and not silent.sources
    assert "do not say" in (silent.abstain_reason or "") and "'play'" in (
        silent.abstain_reason or "")
    assert other.answer_text == "No" and Path(other.sources[0].path).name == "ada.txt"
    # a hyphenated word states the question's words ("open-source": "open source")
    (people / "tool.md").write_text("# Tool\n\nThe ATF framework is open-source software.\n")
    index_again(people)
    with Collection.open(load_settings()) as c, \
            Pipeline(c, reader=FakeReader(), generator=FakeGenerator()) as p:
        hyphen = p.ask("Is the ATF framework open source?", AskOptions(re_threshold=0.0))
    assert hyphen.answer_text == "Yes" and Path(hyphen.sources[0].path).name == "tool.md"
    display.render_explain(silent)
    said = " ".join(capsys.readouterr().out.split())
    assert "not stated: the best sentence states" in said and "play, piano" in said


def test_a_quote_comes_from_the_document_named_by_its_file_not_one_citing_it(
        notes: Path) -> None:
    from ragctl.ask.documents import file_words

    assert file_words("/n/pep-0008.rst") == "pep 8"
    a = quoted(notes, {
        "pep-0008.rst": "Style Guide\n===========\n\nComment lines should be limited to 72 "
                        "characters in length.\n",
        "tool.md": "# Tool\n\nUnlike :pep:`8`, the tool allows comment lines of any length "
                   "in its files.\n"},
        "What does PEP 8 say about the length of comment lines?", quote_sentences=1)
    assert a.kind == "quote" and [Path(s.path).name for s in a.sources] == ["pep-0008.rst"]


def test_what_a_document_named_by_its_file_says_first_includes_its_header(
        notes: Path) -> None:
    from ragctl.ask.documents import stated_year, title_rank

    assert title_rank("PEP 703", "Making the GIL Optional", "/n/pep-0703.rst") == 0
    assert title_rank("the PEP 703", "Making the GIL Optional", "/n/pep-0704.rst") == 2
    assert stated_year("PEP: 572 Title: Assignment Expressions Author: Chris Angelico, "
                       "Tim Peters, Guido van Rossum Status: Final Created: 28-Feb-2018 "
                       "Python-Version: 3.8", 120) == 2018
    assert stated_year("Annie Morton (born October 8, 1970) is an American model.", 120) == 1970
    for number, title, status, created in (("572", "Assignment Expressions", "Final",
                                            "28-Feb-2018"),
                                           ("703", "Making the GIL Optional", "Accepted",
                                            "09-Jan-2023")):
        (notes / f"pep-0{number}.rst").write_text(
            f"PEP: {number}\nTitle: {title}\nStatus: {status}\nCreated: {created}\n\n"
            f"{title}\n{'=' * len(title)}\n\nThis proposal changes how Python programs "
            "are written and run.\n")
    index_again(notes)
    with Collection.open(load_settings()) as c, \
            Pipeline(c, reader=FakeReader(), generator=FakeGenerator()) as p:
        first = p.ask("Which PEP was created earlier, PEP 703 or PEP 572?",
                      AskOptions(re_threshold=0.0))
        final = p.ask("Are PEP 572 and PEP 703 both Final?", AskOptions(re_threshold=0.0))
    assert first.answer_text == "PEP: 572"  # as its header writes it, cited with offsets
    assert first.candidates[0]["rule"] == "the earlier year (2023, 2018)"
    assert Path(first.sources[0].path).name == "pep-0572.rst"
    assert final.answer_text == "No"  # PEP 703's header says "Accepted"
    assert {Path(s.path).name for s in final.sources} == {"pep-0572.rst", "pep-0703.rst"}


def test_a_question_after_a_leading_phrase_is_of_the_kind_of_its_main_clause() -> None:
    assert question_type("On the desktop app, are tokens kept until I delete them?").kind == \
        "yes-no"
    assert question_type("When I pay, does my card number reach your servers?").kind == \
        "yes-no"
    assert question_type("In 2012, who won the cup?") == question_type("Who won the cup?")
    # a main clause that opens with a preposition: its form still says what it asks
    from ragctl.ask.compute import cued
    from ragctl.ask.question import main_clause
    asked = "In the council's budget sheet, for how many items did spending exceed the budget?"
    assert main_clause(asked).startswith("for how many") and cued(asked) == ["count"]
    asked = "In the fund figures, counting adopted budgets only, in how many years was it low?"
    assert main_clause(asked).startswith("in how many") and cued(asked) == ["count"]
    # a comma that lists the options of a choice is no leading phrase
    assert question_type("Who is older, Annie Morton or Terry Richardson?").kind == "choice"
    assert question_type("Which band, Letters to Cleo or Screaming Trees, had more "
                         "members?").kind == "choice"


def test_a_labels_value_on_the_line_below() -> None:
    """An invoice laid out in two columns reads "Due Date:" and "04/04/2023" as lines of
    their own: the value is the line under its label, unless the line above the label is
    a bare label too (a column of labels, whose values stand in another column)."""
    from types import SimpleNamespace

    from ragctl.ask.fields import value_below
    from ragctl.records import Sentence

    def lines(*texts: str) -> list[Sentence]:
        return [Sentence(path="inv.pdf", text=t, id=i, passage_id=1, seq=i)
                for i, t in enumerate(texts)]

    def stages(sentences: list[Sentence]) -> Any:
        store = SimpleNamespace(sentences_of=lambda ids: {1: sentences})
        return SimpleNamespace(collection=SimpleNamespace(store=store))

    two_columns = lines("Invoice Date:", "03/20/2023", "Due Date:", "04/04/2023", "Reference:")
    found = value_below(stages(two_columns), "due date", two_columns)
    assert found is not None and found[0].text[found[1]:found[2]] == "04/04/2023"
    found = value_below(stages(two_columns), "invoice date", two_columns)
    assert found is not None and found[0].text == "03/20/2023"
    labels_first = lines("Invoice Date:", "Due Date:", "03/20/2023", "04/04/2023")
    assert value_below(stages(labels_first), "due date", labels_first) is None
    prose = lines("Due Date:", "Please pay on receipt of this invoice.")
    assert value_below(stages(prose), "due date", prose) is None


def test_a_field_labelled_in_another_language(notes: Path) -> None:
    (notes / "rechnung.txt").write_text(
        "Nordhafen Server GmbH. Rechnungsnummer: R0005532486 Rechnungsdatum: 19.01.2016 "
        "Fälligkeitsdatum: 22.01.2016 Brutto 104,00 EUR.\n")
    index_again(notes)
    # the reader would answer with the invoice's own date
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("19.01.2016")) as p:
        due = p.ask("When is the Nordhafen Server invoice due?", AskOptions(re_threshold=0.0))
        off = p.ask("When is the Nordhafen Server invoice due?",
                    AskOptions(re_threshold=0.0, rules_off=frozenset({"field_names"})))
        # an invoice the question names (by its number, by its sender's name) that one
        # document alone names is read, however its passage rates
        named = p.ask("When is invoice R0005532486 due?", AskOptions(re_threshold=0.99))
        by_name = p.ask("When is the Nordhafen Server invoice due?",
                        AskOptions(re_threshold=0.99))
    assert due.answer == "22.01.2016 [1]" and "field_names" in due.rules
    assert named.answer == "22.01.2016 [1]" and by_name.answer == "22.01.2016 [1]"
    assert off.answer != "22.01.2016 [1]"
