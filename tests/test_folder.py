"""Answers over several documents: the sum of the totals, the count and the list of the
documents that name what the question names, each cited, and refusals when a sum cannot
be made."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragctl.ask.folder import amount, asked, document_total
from ragctl.ask.pipeline import AskOptions, Pipeline
from ragctl.config import load_settings
from ragctl.index.indexer import Indexer
from ragctl.records import Sentence
from ragctl.store.collection import Collection
from tests.fakes import FakeReader
from tests.test_cells import indexed


def _receipt(shop: str, lines: list[str]) -> str:
    return "\n".join([shop, "12 Elm Street", "RECEIPT", *lines, "Thank you!"]) + "\n"


@pytest.fixture
def receipts(tmp_path: Path, fake_embedder: str) -> Path:
    root = tmp_path / "receipts"
    root.mkdir()
    (root / "larkspur-march.txt").write_text(_receipt(
        "Larkspur Hardware", ["Hammer 12.50", "Nails 3.00", "Subtotal 15.50", "Tax 1.24",
                              "Total $16.74"]))
    (root / "larkspur-may.txt").write_text(_receipt(
        "Larkspur Hardware", ["Paint 30.00", "Subtotal 30.00", "Total: $32.40"]))
    (root / "casa-palmera.txt").write_text(_receipt(
        "Casa Palmera", ["Paella 18.00", "Total $18.00", "Server: Ana"]))
    (root / "notes.txt").write_text("Shopping list: nails, paint, a hammer.\n")
    with Collection.open(load_settings(), create=True) as c:
        c.lock()
        Indexer(c).run([root])
    return root


def test_the_question_decides_the_operation_and_the_kind() -> None:
    assert asked("How much did I spend at Larkspur Hardware across all my receipts?") == \
        ("sum", "receipts")
    assert asked("How many invoices did Bei Spiel GmbH issue?") == ("count", "invoices")
    assert asked("How many copies of Contoso's invoice INV-100 are in the folder?") == \
        ("count", "invoices")
    assert asked("Which invoices are from Hetzner?") == ("list", "invoices")
    # one document: not a question about several
    assert asked("What was the total on the Larkspur receipt?") is None
    assert asked("How long does the backup take?") is None


def test_amounts_as_receipts_write_them() -> None:
    assert amount("1,234.56") == 1234.56 and amount("1.234,56") == 1234.56
    assert amount("406,82") == 406.82 and amount("12.00") == 12.0

    def s(text: str) -> Sentence:
        return Sentence(id=1, passage_id=1, seq=0, path="r.txt", title="", place="",
                        start_char=0, end_char=len(text), text=text, raw=None)

    total = document_total([s("Subtotal 100.00"), s("Total $110.00"), s("VAT total $10.00"),
                            s("QUANTITY: 1; DESCRIPTION: Test; TOTAL: $900.00")])
    assert total is not None and (total.value, total.currency, total.label) == \
        (110.0, "$", "total")  # the grand total, not a line's total
    due = document_total([s("Net total: 496.00 €"), s("Due payable: 571.04 €")])
    assert due is not None and due.value == 571.04  # not the total before tax
    euro = document_total([s("Gesamtbetrag 406,82 €")])
    assert euro is not None and (euro.value, euro.currency) == (406.82, "€")
    assert document_total([s("Date 19.01.2016"), s("Total 19.01.2016")]) is None
    flipkart = document_total([s("Total 1 278.61 40.39 319.00 Grand Total 319.00")])
    assert flipkart is not None and flipkart.value == 319.0  # "1 278.61": 1, then 278.61


def test_a_sum_over_the_documents_that_name_the_shop_is_shown_and_cited(
        receipts: Path) -> None:
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("16.74")) as p:
        a = p.ask("How much did I spend at Larkspur Hardware across all my receipts?",
                  AskOptions(re_threshold=0.0))
    assert not a.abstained and a.kind == "computed" and a.raw_answer == "$49.14"
    assert a.answer.startswith("$49.14 (= ") and "[1] [2]" in a.answer
    assert sorted(Path(s.path).name for s in a.sources) == ["larkspur-march.txt",
                                                            "larkspur-may.txt"]
    raw = {Path(s.path).name: (receipts / Path(s.path).name).read_text() for s in a.sources}
    for src in a.sources:  # each cited offset is the total as the file writes it
        assert src.answer_start is not None and src.answer_end is not None
        assert raw[Path(src.path).name][src.answer_start:src.answer_end] in ("16.74", "32.40")
    assert a.computation is not None and a.computation["operation"] == "documents sum"


def test_a_count_and_a_list_of_the_documents(receipts: Path) -> None:
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("x")) as p:
        count = p.ask("How many receipts are from Larkspur Hardware?",
                      AskOptions(re_threshold=0.0))
        which = p.ask("Which receipts are from Casa Palmera?", AskOptions(re_threshold=0.0))
    assert count.raw_answer == "2" and len(count.sources) == 2
    assert which.raw_answer == "casa-palmera.txt" and len(which.sources) == 1


def test_every_document_of_a_year_and_invoices_billed_in_a_currency(tmp_path: Path,
                                                                    fake_embedder: str) -> None:
    indexed(tmp_path / "folder", {
        "a.txt": "INVOICE 1\nDate: 9 May 2017\nTotal GBP 180.00\n",
        "b.txt": "INVOICE 2\nDate: 18 Nov 2017\nTotal EUR 50.00\n",
        "c.txt": "INVOICE 3\nDate: 2 Jan 2019\nTotal GBP 20.00\n",
        "notes.txt": "Minutes of the meeting of 3 March 2017.\n"})
    assert asked("How many documents in the folder are dated 2017?") == ("count", "documents")
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("x")) as p:
        dated = p.ask("How many documents in the folder are dated 2017?",
                      AskOptions(re_threshold=0.0))
        billed = p.ask("What is the total of all the invoices billed in pounds sterling?",
                       AskOptions(re_threshold=0.0))
    assert dated.raw_answer == "3", dated.answer
    assert billed.raw_answer == "£200.00", billed.answer


def test_a_year_none_of_the_documents_is_of_is_refused(receipts: Path) -> None:
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("16.74")) as p:
        a = p.ask("How much did I spend at Larkspur Hardware across all my receipts in 2019?",
                  AskOptions(re_threshold=0.0))
    assert a.abstained and a.abstain_reason == "none of the 2 receipts found is of 2019"


def test_a_sum_that_cannot_be_made_is_refused(receipts: Path) -> None:
    (receipts / "larkspur-june.txt").write_text(_receipt("Larkspur Hardware",
                                                         ["Rope 8.00", "Paid by card"]))
    with Collection.open(load_settings()) as c:
        c.lock()
        Indexer(c).run([receipts])
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("8.00")) as p:
        a = p.ask("How much did I spend at Larkspur Hardware across all my receipts?",
                  AskOptions(re_threshold=0.0))
    assert a.abstained and "larkspur-june.txt give" in (a.abstain_reason or "")
    assert "8.00" not in a.answer


def test_one_document_s_total_is_its_total_not_a_net_or_tax_line(tmp_path: Path,
                                                                   fake_embedder: str) -> None:
    root = tmp_path / "invoices"
    root.mkdir()
    (root / "acme-invoice.txt").write_text(
        "Acme GmbH\nInvoice # RE-2019/507\nDesign 160.00 €\nBallons 316.00 €\n"
        "Net total: 496.00 €\nVAT total: 75.04 €\nDue payable: 571.04 €\n")
    with Collection.open(load_settings(), create=True) as c:
        c.lock()
        Indexer(c).run([root])
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("496.00")) as p:
        a = p.ask("What is the total of the Acme GmbH invoice?", AskOptions(re_threshold=0.0))
        off = p.ask("What is the total of the Acme GmbH invoice?",
                    AskOptions(re_threshold=0.0, rules_off=frozenset({"document_total"})))
    assert a.raw_answer == "571.04" and "document_total" in a.rules
    raw = (root / "acme-invoice.txt").read_text()
    src = a.sources[0]
    assert src.answer_start is not None and raw[src.answer_start:src.answer_end] == "571.04"
    assert off.raw_answer != "571.04"


def test_a_record_named_after_a_kind_of_document_is_no_question_about_those_documents(
) -> None:
    assert asked("What share of the year's total payments in the receipts and payments "
                 "accounts went on travel?") is None
    assert asked("How much did I pay in total across all my receipts?") == ("sum", "receipts")
