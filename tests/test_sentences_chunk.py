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


def test_a_paragraph_written_line_by_line_is_split_by_line() -> None:
    """A receipt read by OCR: each line its own sentence, so a citation can point at the
    total's line and the reader does not take a line price for it."""
    from ragctl.index.sentences import line_based

    receipt = ("Contoso\n123 Main Street\nRedmond, WA 98052\n\n6/10/2019 13:59\n"
               "Sales Associate: Paul\n\nSub-Total $2,297.97\nTax $218.31\n\n$2,516.28")
    spans = SentenceSplitter().split(receipt)
    assert [s.text for s in spans] == [
        "Contoso 123 Main Street", "Redmond, WA 98052", "6/10/2019 13:59",
        "Sales Associate: Paul", "Sub-Total $2,297.97", "Tax $218.31", "$2,516.28"]
    assert all(" ".join(receipt[s.start:s.end].split()) == s.text for s in spans)
    # wrapped prose runs on into its next line: one sentence, as before
    wrapped = "The plumber said he would come on\nThursday at 3 pm, and that the valve\n" \
              "needs to be replaced before winter."
    assert not line_based(wrapped) and len(SentenceSplitter().split(wrapped)) == 1
    # long lines are prose too, whatever their breaks
    assert not line_based("A line of prose that goes on for well over eight words here.\n"
                          "Another line of prose that also goes on for more than eight.")


def test_a_line_that_runs_on_joins_the_line_before_it() -> None:
    """An invoice's header: short lines, one long one and one that runs on into the next.
    Each line is a sentence, the run-on line with the one before it."""
    from ragctl.index.sentences import line_based

    header = ("Au bon moulin SARL - 1242 chemin de l'olive - 84340 Malaucène - France\n"
              "TVA : FR11999999998 - SIRET : 99999999800010 - APE : 4778C - SARL au capital"
              " de 120 000,00 €\nInvoice FA-2017-0008\nDelivery Address\nMe gusta olive\n"
              "Invoice Date 11/03/2017\nPayment Terms 30% advance payment, \n"
              "balance at 30 days\nDue Date 12/03/2017")
    assert line_based(header)
    texts = [s.text for s in SentenceSplitter().split(header)]
    assert texts[2:] == ["Invoice FA-2017-0008", "Delivery Address", "Me gusta olive",
                         "Invoice Date 11/03/2017",
                         "Payment Terms 30% advance payment, balance at 30 days",
                         "Due Date 12/03/2017"]
    # a label above its value, a bracket left open: one sentence; a short line is one
    # whatever its full stops
    form = ("Grand Total\nRs 1939\nUSt. (\n19 %) 16,61 €\nAccount No.\n00030340067212\n"
            "Bank Name\nHDFC\nYour hero:\nYour rocket:\nFalcon Heavy")
    assert [s.text for s in SentenceSplitter().split(form)] == [
        "Grand Total Rs 1939", "USt. (19 %) 16,61 €", "Account No. 00030340067212", "Bank Name",
        "HDFC", "Your hero:", "Your rocket: Falcon Heavy"]
    # short lines of wrapped prose mostly run on: prose, one sentence per sentence
    prose = ("We keep your data\nfor as long as\nyour account is open, and\n"
             "delete it within\n30 days after you close it.")
    assert not line_based(prose) and len(SentenceSplitter().split(prose)) == 1
