"""Grounding: an answer comes from a document that names what the question names, and a
name no document mentions is said to be missing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ragctl.app.cli import cli
from ragctl.ask.grounding import distinctive_names, ground
from ragctl.ask.pipeline import AskOptions, Pipeline
from ragctl.config import load_settings
from ragctl.errors import EXIT_NOT_FOUND
from ragctl.index.indexer import Indexer
from ragctl.store.collection import Collection
from tests.fakes import FakeReader
from tests.test_cells import indexed


def names(question: str) -> list[str]:
    return [n.text for n in distinctive_names(question)]


def test_the_names_a_question_gives() -> None:
    assert names("How much did I pay at Larkspur Hardware?") == ["Larkspur Hardware"]
    assert names("Who was our waiter at Casa Palmera?") == ["Casa Palmera"]
    assert names("What is the total of invoice INV-2041?") == ["INV-2041"]
    assert names("What is Acme's ticker symbol?") == ["Acme"]
    assert names("In 2012, who won the Tour de France?") == ["Tour de France"]
    assert names('What does "The Zen of Python" say about errors?') == ["The Zen of Python"]
    assert names("What did the Normans call their land in France?") == ["Normans", "France"]
    # no capitals after the first word, calendar words, a question in title case: no names
    assert names("Is my location shared with advertisers?") == []
    assert names("What happened on Monday in March?") == []
    assert names("What Is The Total Amount Due?") == []
    assert names("How many units were sold in 2024?") == []
    # ordinals and a suffix are no part of a name
    assert names("Who is the companion for the 10th series?") == []
    assert names("How much is spent on Super Bowl-related events?") == ["Super Bowl"]
    # a number after a word that numbers documents is an identifier; a quantity is not
    assert names("When is Contoso invoice 12345678 due?") == ["Contoso", "12345678"]
    assert names("When is invoice 2207-114 due?") == ["2207-114"]  # a number with a dash
    assert names("How much was order 12 worth?") == []  # too short to tell one order
    assert names("How many counties have more than 100000 people?") == []
    # a period written short is a time, as a year is: no document need spell it so
    assert names("What is the Police budget for FY2023?") == ["Police"]
    assert names("What were Alphabet's revenues in Q2 2026?") == ["Alphabet"]


@pytest.fixture
def shops(tmp_path: Path, fake_embedder: str) -> Path:
    root = tmp_path / "shops"
    root.mkdir()
    (root / "stock.txt").write_text("Stock list of Birch & Co, aisle 4. Hammers cost $12.00 "
                                    "each and nails $3.50 a box.\n")
    (root / "receipt.txt").write_text("LARKSPUR HARDWARE\nReceipt 2291\n\nShop receipt. "
                                      "Total paid: $48.20 by card.\n")
    (root / "dinner.txt").write_text("Casa Palmera, table 6. Your server tonight was Ana. "
                                     "Total $81.14.\n")
    with Collection.open(load_settings(chunk_words=30), create=True) as c:
        c.lock()
        Indexer(c).run([root])
    return root


def test_the_index_says_which_documents_name_the_question_s_names(shops: Path) -> None:
    with Collection.open(load_settings()) as c:
        g = ground(c.store, "How much did I pay at Larkspur Hardware?")
        assert not g.missing and g.applies
        assert g.grounded(str(shops / "receipt.txt"))
        assert not g.grounded(str(shops / "stock.txt"))
        g = ground(c.store, "How much did I pay at Quillfeather Books?")
        assert [n.text for n in g.missing] == ["Quillfeather Books"]
        # a question that names nothing is not grounded: every document may answer
        g = ground(c.store, "How much do hammers cost?")
        assert not g.applies and g.grounded(str(shops / "stock.txt"))


def test_a_document_that_names_the_identifier_is_the_one_meant(tmp_path: Path,
                                                               fake_embedder: str) -> None:
    root = indexed(tmp_path / "invoices", {
        "a.txt": "CONTOSO LTD\nInvoice No 12345678\nPayment due 19/02/2024\n",
        "b.txt": "CONTOSO LTD\nInvoice INV-100\nDue date 12/15/2019\n"})
    with Collection.open(load_settings()) as c:
        g = ground(c.store, "When is Contoso invoice 12345678 due?")
        # both name Contoso; only one names the invoice's number
        assert g.grounded(str(root / "a.txt")) and not g.grounded(str(root / "b.txt"))
        # a number no document holds (a scan's digits misread) is not missing
        g = ground(c.store, "When is Contoso invoice 7654321 due?")
        assert not g.missing and g.grounded(str(root / "b.txt"))
        g = ground(c.store, "When is the Contoso invoice due?")
        assert g.grounded(str(root / "a.txt")) and g.grounded(str(root / "b.txt"))


def test_an_answer_comes_from_the_document_that_names_the_subject(shops: Path) -> None:
    with Collection.open(load_settings()) as c, \
            Pipeline(c, reader=FakeReader("$12.00", "$48.20")) as p:
        a = p.ask("How much did I pay at Larkspur Hardware?",
                  AskOptions(re_threshold=0.0, answer_threshold=0.01))
        assert not a.abstained and Path(a.sources[0].path).name == "receipt.txt"
        assert a.raw_answer == "$48.20" and "grounding" in a.rules
        # with the rule off, the stock list's price (the reader's first) may answer
        off = p.ask("How much did I pay at Larkspur Hardware?",
                    AskOptions(re_threshold=0.0, answer_threshold=0.01,
                               rules_off=frozenset({"grounding"})))
        assert "grounding" not in off.rules


def test_a_name_no_document_mentions_is_said_to_be_missing(shops: Path) -> None:
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("$12.00")) as p:
        a = p.ask("How much did I pay at Quillfeather Books?",
                  AskOptions(re_threshold=0.0, answer_threshold=0.01))
    assert a.abstained
    assert a.abstain_reason == "nothing in your documents mentions 'Quillfeather Books'"
    out = CliRunner().invoke(cli, ["ask", "Who was our waiter at Quillfeather Books?"])
    assert out.exit_code == EXIT_NOT_FOUND, out.output
    assert "Quillfeather Books" in out.output


def test_a_name_s_words_may_be_in_the_text_and_the_file_name(tmp_path: Path,
                                                              fake_embedder: str) -> None:
    root = tmp_path / "bills"
    root.mkdir()
    (root / "invoice-britain.txt").write_text("Contoso Ltd\nInvoice 654123\nTotal: GBP 118.00\n")
    (root / "invoice-india.txt").write_text("Contoso Ltd\nInvoice 998877\nTotal: INR 900.00\n")
    (root / "trip.txt").write_text("A note on the trip to India in May.\n")
    with Collection.open(load_settings(chunk_words=30), create=True) as c:
        c.lock()
        Indexer(c).run([root])
        g = ground(c.store, "What is the total on the Contoso Britain invoice?")
        assert not g.missing
        assert g.grounded(str(root / "invoice-britain.txt"))
        # a document that holds "Contoso" alone does not name it when another holds the
        # whole name; when none does, a word of it names it (a passage says "Manning" of
        # "Peyton Manning")
        assert not g.grounded(str(root / "invoice-india.txt"))
        loose = ground(c.store, "What is the total on the Contoso Britain India invoice?")
        assert loose.grounded(str(root / "invoice-india.txt")) and loose.grounded(
            str(root / "invoice-britain.txt"))
        # those that hold the most of its words, not every one that holds a word of it
        assert not loose.grounded(str(root / "trip.txt"))
        # a word of the name that no document holds: missing
        assert [n.text for n in ground(c.store, "What is the total on the Contoso Tokyo "
                                       "invoice?").missing] == ["Contoso Tokyo"]
        # unless the word only says what kind of body it is, which its papers omit
        assert not ground(c.store, "What is the total on the Contoso Company Britain "
                          "invoice?").missing
        assert [n.text for n in ground(c.store, "What is the total on the Village of "
                                       "Tokyo invoice?").missing] == ["Village of Tokyo"]
    # an acronym then a word is no one name ("TTC of Au" is "TTC", then "Au")
    assert names("What is the total TTC of Au bon moulin invoice?") == ["TTC", "Au"]
    assert names("Who is the CEO of Bank of America?") == ["CEO", "Bank of America"]


def test_a_name_may_be_in_a_retrieved_passage_in_another_form() -> None:
    from ragctl.ask.grounding import loosely_in

    def first(question: str) -> Any:
        return distinctive_names(question)[0]

    # an acronym's words, a word OCR read with a letter wrong, words run together
    assert loosely_in(first("What did the CDC report?"),
                      "Janet Collins of the Centers for Disease Control said")
    assert loosely_in(first("Where is the ICCO?"),
                      "International Council of Containership Operators, Appendix A")
    assert loosely_in(first("What did Grumman charge?"), "GRUMRNAN AMERICAN AVIATION")
    assert loosely_in(first("What is in the Aviation Safety World appendix?"),
                      "| AviAtionSAfetyworld | october 2006")
    # another shop is not the one named
    assert not loosely_in(first("What did Larkspur Hardware charge?"), "Birch & Co hardware")
    assert not loosely_in(first("What did Grumman charge?"), "Graham and sons")


def test_a_missing_name_is_looked_for_in_the_documents_the_other_names_point_to(
        tmp_path: Path, fake_embedder: str) -> None:
    # a scan's text: the shop's name as printed, an item in capitals with "ue" for "ü",
    # a code with a space that OCR put in it
    root = tmp_path / "scans"
    root.mkdir()
    (root / "rewe.txt").write_text("REWE Markt\nSUPPENGRUEN 0,99\nSUMME EUR 0,99\n")
    (root / "india.txt").write_text("Contoso LTD Tax Invoice\nMSFT001 1 223344\n"
                                    "IGST 1,08,000.00\n")
    (root / "britain.txt").write_text("Contoso LTD Invoice\nMSFT GB99 1234\nVAT 20.00\n")
    with Collection.open(load_settings(chunk_words=30), create=True) as c:
        c.lock()
        Indexer(c).run([root])
        question = "How much was the Suppengrün at REWE?"
        assert [n.text for n in ground(c.store, question).missing] == []
        assert ground(c.store, question).grounded(str(root / "rewe.txt"))
        g = ground(c.store, "How much IGST is on Contoso's invoice MSFT0011223344?")
        assert not g.missing and g.identifies
        assert g.grounded(str(root / "india.txt")) and not g.grounded(str(root / "britain.txt"))
        # a name none of them holds in any form is still missing
        assert [n.text for n in ground(c.store, "What did the Larkspur bill at REWE?")
                .missing] == ["Larkspur"]


def test_a_document_named_by_its_file_is_meant_though_its_owner_is_unsaid(
        tmp_path: Path, fake_embedder: str) -> None:
    root = tmp_path / "club"
    root.mkdir()
    (root / "accounting.csv").write_text("Date,Item,Amount\n2018-03-01,Room booking,120.00\n"
                                         "2018-04-02,Coffee,40.50\n")
    (root / "invoice-britain.txt").write_text("Contoso Ltd\nInvoice 654123\nTotal: GBP 118\n")
    (root / "AmazonWebServices.txt").write_text("Amazon Web Services\nStorage: $4.11\n")
    (root / "events_budget.csv").write_text("Item,Cost\nPizza,327.87\nVenue,960\n")
    (root / "beetle_lab_budget.csv").write_text("Item,Cost\nTransilluminator,1410\n")
    with Collection.open(load_settings(chunk_words=30), create=True) as c:
        c.lock()
        Indexer(c).run([root])
        # of the files a missing owner's question names, those it names by the most words
        g = ground(c.store, "What does the Larkspur beetle lab budget give to the "
                            "transilluminator?")
        assert g.grounded(str(root / "beetle_lab_budget.csv"))
        assert not g.grounded(str(root / "events_budget.csv"))
        # a file named by a name the question gives: a missing name is what is asked of
        # it, not its owner
        assert [n.text for n in ground(c.store, "How many EC2 hours were billed on the "
                                       "Amazon invoice?").missing] == ["EC2"]
        # the ledger never names its club: the file's name says which document is meant
        g = ground(c.store, "What was the largest expense in the Larkspur Coders accounting "
                            "ledger?")
        assert not g.missing and g.grounded(str(root / "accounting.csv"))
        assert not ground(c.store, "What was paid in the LC42's accounting ledger?").missing
        assert not g.grounded(str(root / "invoice-britain.txt"))
        # a missing name that is no owner of the file named ("… in Halifax"): missing
        assert [n.text for n in ground(c.store, "When did the accounting meeting in Halifax "
                                       "take place?").missing] == ["Halifax"]
        # an owner may stand anywhere, as long as it is no place ("… in Halifax")
        assert not ground(c.store, "Which Larkspur Coders expense was the largest in the "
                                   "accounting?").missing
        # a word that names a kind of document ("invoice"), or a format ("PDF"), names none
        assert [n.text for n in ground(c.store, "What is the total on the Quillfeather "
                                       "invoice?").missing] == ["Quillfeather"]
        assert names("What is the total on the PDF invoice from Contoso?") == ["Contoso"]


def test_a_document_named_by_its_file_alone_is_read_when_retrieval_finds_none(
        tmp_path: Path, fake_embedder: str) -> None:
    from ragctl.records import Hit

    root = tmp_path / "budgets"
    root.mkdir()
    (root / "covhack-2019-budget.csv").write_text(
        "Description,Amount\nLunch,£216.90\nDinner,£480.00\n")
    (root / "notes.txt").write_text("The sponsorship income was spent on food and prizes.\n")
    with Collection.open(load_settings(), create=True) as c:
        c.lock()
        Indexer(c).run([root])
        q = "What share of CovHack's sponsorship income was spent?"
        g = ground(c.store, q)
        assert g.grounded(str(root / "covhack-2019-budget.csv")) and not g.missing
        other = [Hit(passage_id=p, path=str(root / "notes.txt"), title="notes", place="",
                     start_char=0, end_char=10, text="x", score=1.0)
                 for p in c.store.passage_ids()[-1:]]
        # retrieval found only a passage of another document: the named file's own
        restricted = g.restrict(other, c.store)
        assert restricted and {h.path for h in restricted} == {
            str(root / "covhack-2019-budget.csv")}
        with Pipeline(c, reader=FakeReader("no such span")) as p:
            a = p.ask(q, AskOptions(re_threshold=0.0))  # never a traceback
        assert a.abstained or a.sources


def test_the_phrase_a_question_names_its_document_by() -> None:
    from ragctl.ask.documents import source_spans, unsourced

    def spans(q: str) -> list[str]:
        return [q[a:b] for a, b in source_spans(q)]

    assert spans("In the City of Melbourne bars and pubs with patron capacity dataset, what "
                 "is the capacity of the Waterside Hotel?") == [
        "the City of Melbourne bars and pubs with patron capacity dataset"]
    # back to an owner's whole name, or to the preposition that brings it in
    assert spans("What was the rate according to Stats SA's May 2023 CPI release?") == [
        "Stats SA's May 2023 CPI release"]
    assert spans("What is the hold time in the VEML6075 datasheet's timing table?") == [
        "the VEML6075 datasheet's timing table"]
    # a kind of document that qualifies the noun after it names no document
    assert spans("Which invoice numbers did Bei Spiel GmbH issue?") == []
    assert spans("What is the invoice date on Table 4?") == []
    assert spans("How much did France spend on health in 1973?") == []
    assert spans("What TEDs score on complex tables did OTSL reach?") == []
    assert unsourced("Are the figures in the 2022 fatal crash report final?") == \
        "Are the figures in   final?"
    # whoever the question has say it, at its start or its end
    assert spans("According to the National Park Service, did the monument tilt?") == [
        "According to the National Park Service"]
    assert spans("Did the monument tilt, according to the Park Service?") == [
        "according to the Park Service"]
    assert spans("What did they agree according to whom?") == []
    assert spans("According to Stats SA's CPI release for May 2023, what was the rate?") == [
        "Stats SA's CPI release"]  # the document's kind ends it, not the comma


def test_a_name_written_with_capitals_after_a_small_first_letter() -> None:
    assert names("What was hackEDU's total travel spending in July 2015?") == ["hackEDU"]
    assert names("How much does the iPhone cost?") == ["iPhone"]
    # a unit is no name
    assert names("How many kWh did the meter show?") == []
    assert names("How much was spent in October-December 2024 at Larkspur?") == ["Larkspur"]
