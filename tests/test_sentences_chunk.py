from __future__ import annotations

from ragctl.index.chunk import chunk_section
from ragctl.index.ingest import Section
from ragctl.index.sentences import SentenceSplitter

TEXT = ("Dr. Smith went to Washington.  He arrived at 5 p.m. on Monday!\n"
        "Was it raining? Nobody knows.\n\n  A new paragraph starts here without a stop\n"
        "and goes on. The end.")


def test_sentences_keep_offsets() -> None:
    spans = SentenceSplitter().split(TEXT)
    assert len(spans) >= 5
    for s in spans:
        assert " ".join(TEXT[s.start:s.end].split()) == s.text
        assert TEXT[s.start:s.end] == TEXT[s.start:s.end].strip()
    assert spans[-1].text == "The end."
    # a blank line always ends a sentence
    assert any(s.text.endswith("Nobody knows.") for s in spans)


def test_run_on_sentences_are_capped() -> None:
    text = " ".join(f"w{i}" for i in range(250))
    spans = SentenceSplitter(max_words=100).split(text)
    assert [s.n_words for s in spans] == [100, 100, 50]
    assert text[spans[1].start:spans[1].end].split()[0] == "w100"


def test_split_many_matches_split() -> None:
    sp = SentenceSplitter()
    texts = ["One. Two.", "", "Three four. Five!"]
    assert sp.split_many(texts) == [sp.split(t) for t in texts]


def test_chunks_never_cut_sentences_and_respect_target() -> None:
    sentences = [f"Sentence number {i} has exactly seven words." for i in range(40)]
    text = " ".join(sentences)
    section = Section(text, "Intro", offset=1000)
    spans = SentenceSplitter().split(text)
    chunks = chunk_section(section, spans, target_words=50)
    assert sum(len(c.sentences) for c in chunks) == 40
    for c in chunks:
        assert c.n_words <= 50 + 7 * 2  # a merged short tail may exceed the target a little
        assert c.place == "Intro"
        for s in c.sentences:
            assert text[s.start - 1000:s.end - 1000] == s.text  # absolute offsets
    assert max(c.n_words for c in chunks[:-1]) <= 50


def test_short_tail_merges_into_previous() -> None:
    text = ("a " * 95).strip() + ". Short tail."
    spans = SentenceSplitter().split(text)
    chunks = chunk_section(Section(text), spans, target_words=100)
    assert len(chunks) == 1


def test_long_sentence_is_its_own_passage() -> None:
    text = "Tiny. " + ("word " * 150).strip() + ". Another tiny one here and more words."
    spans = SentenceSplitter(max_words=500).split(text)
    chunks = chunk_section(Section(text), spans, target_words=100)
    assert len(chunks[0].sentences) == 1


def test_a_table_row_is_one_sentence_whatever_full_stops_its_cells_hold() -> None:
    from ragctl.index.sentences import SentenceSplitter

    row = "Series: EE; Issued: 1979524598; Bonds (red. & unred.) for matured dates: 24"
    assert [s.text for s in SentenceSplitter().split(f"{row}\n\nIt is late. Go home.")] == [
        row, "It is late.", "Go home."]


def test_figures_alone_after_a_full_stop_in_their_line_stay_with_it() -> None:
    text = ("Legal $40,000 $40,000 0%\nTown Clock Maint. $1,000 $0 0%\n5400 Supplies\n"
            "Postage $1,000 $5,000 400%")
    spans = SentenceSplitter().split(text)
    assert "Town Clock Maint. $1,000 $0 0%" in [s.text for s in spans]
    # a line of figures under a line is not joined to it, nor is a sentence of words
    assert [s.text for s in SentenceSplitter().split("See Fig. 3. It shows.")] == [
        "See Fig. 3.", "It shows."]
    assert [s.text for s in SentenceSplitter().split("Totals were as follows.\n1,200 "
                                                       "3,400\n\nEnd.")][:2] == [
        "Totals were as follows.", "1,200 3,400"]


def test_a_paragraph_written_line_by_line_is_split_by_line() -> None:
    """A receipt read by OCR: each line its own sentence, so a citation can point at the
    total's line and the reader does not take a line price for it."""
    from ragctl.index.sentences import line_based

    receipt = ("Contoso\n123 Main Street\nRedmond, WA 98052\n\n6/10/2019 13:59\n"
               "Sales Associate: Paul\n\nSub-Total $2,297.97\nTax $218.31\n\n$2,516.28")
    spans = SentenceSplitter().split(receipt)
    assert [s.text for s in spans] == [
        "Contoso", "123 Main Street", "Redmond, WA 98052", "6/10/2019 13:59",
        "Sales Associate: Paul", "Sub-Total $2,297.97", "Tax $218.31", "$2,516.28"]
    assert all(receipt[s.start:s.end] == s.text for s in spans)
    # wrapped prose runs on into its next line: one sentence, as before
    wrapped = "The plumber said he would come on\nThursday at 3 pm, and that the valve\n" \
              "needs to be replaced before winter."
    assert not line_based(wrapped) and len(SentenceSplitter().split(wrapped)) == 1
    # an invoice's lines, though its footer runs long and a line starts with an address
    invoice = ("Au bon moulin SARL\n+33 4 50 44 68 99\nsav@example.net\nFacture FA-2017-0010\n"
               "Date de facture 13/11/2017\nDate d'échéance 13/12/2017\nTotal HT 624,90 €\n"
               "Total TTC 671,15 €\nSolde à payer 470,15 €\nPage 1 / 1\n"
               "Facture à régler par virement sur le compte suivant: IBAN: FR20 1242 1242 "
               "1242 1242 1242 124 - BIC: FIDCFR21XXX - Banque: Banque Fiducial")
    assert line_based(invoice)
    assert "Date d'échéance 13/12/2017" in [s.text for s in SentenceSplitter().split(invoice)]
    # a line that starts with a telephone number in brackets does not run on the line
    # before it; one that starts with a bracketed word may
    assert line_based("Incoterm: DPU - DELIVERED AT PLACE UNLOADED\n(870)-931-0505\n"
                      "Page: 1 / 1")
    assert not line_based("the list of places to go\n(see below) for the ones\nwe liked")
    # long lines are prose too, whatever their breaks
    assert not line_based("A line of prose that goes on for well over eight words here.\n"
                          "Another line of prose that also goes on for more than eight.")


def test_a_row_whose_first_cells_no_column_names_is_one_sentence() -> None:
    from ragctl.index.sentences import SentenceSplitter

    row = ("Sales Tax; FY 18 PLANNED: $256,224,000.00; VS. FY 17 DIFFERENCE: $2,113,000.00; "
           "0.9%; Sales Tax; FY 15 ACTUAL: $232,566,000.00")
    assert [s.text for s in SentenceSplitter().split(f"{row}\n\nIt is late. Go home.")] == [
        row, "It is late.", "Go home."]


def test_a_run_of_labelled_figures_in_prose_is_split_by_line() -> None:
    """Accounts under a page's prose, in no ruled table ("Hall hire 60.64"): each line a
    sentence of its own, its heading too, so a figure's label is its own line's."""
    page = ("Without a regular free venue at the Guildhall we now have costs for holding\n"
            "meetings. Instead of looking at this as a negative the executive have tried\n"
            "to make this a positive, with the opportunity to visit other venues around\n"
            "the city. Other regular costs are for printing, website hosting and the\n"
            "subscriptions for national cycling bodies that the members asked us to join.\n"
            "Renewals can be made by cheque, cash or through Paypal via the website.\n"
            "Income\nSubscriptions 2012-13 212.11\nTotal Income 212.11\n"
            "Expenditure Printing 50.00\nHall hire 60.64\nTotal Expenditure 110.64\n"
            "Roger Inkpen, Treasurer, signed these accounts for the Forum on\n"
            "12 March 2013 after the meeting.")
    spans = SentenceSplitter().split(page)
    assert [s.text for s in spans][3:] == [
        "Renewals can be made by cheque, cash or through Paypal via the website.", "Income",
        "Subscriptions 2012-13 212.11", "Total Income 212.11", "Expenditure Printing 50.00",
        "Hall hire 60.64", "Total Expenditure 110.64",
        "Roger Inkpen, Treasurer, signed these accounts for the Forum on 12 March 2013 "
        "after the meeting."]
    assert all(" ".join(page[s.start:s.end].split()) == s.text for s in spans)
    # two such lines are no run: wrapped prose that ends a line with a figure stays whole
    prose = ("The club raised £2,400 in 2012\nand spent it on repairs and 14\n"
             "new bicycles for the members who asked.")
    assert len(SentenceSplitter().split(prose)) == 1
