from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from ragctl.index.ingest import SkipFile, decode_text, parse, read_bytes, walk
from tests.corpus import BAD, GOOD, make_corpus, make_pdf


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_corpus(tmp_path_factory.mktemp("corpus"))


def _parse(path: Path):
    return parse(path, read_bytes(path, max_bytes=100_000))


def test_walk_finds_supported_files_and_reports_loops(corpus: Path) -> None:
    warnings: list[tuple[Path, str]] = []
    found = {p.name for p in walk([corpus], warn=lambda p, r: warnings.append((p, r)))}
    assert found == GOOD | BAD
    reasons = " ".join(r for _, r in warnings)
    assert "symlink loop" in reasons
    assert "broken symlink" in reasons
    assert len(warnings) == 2


def test_walk_yields_each_file_once_and_skips_hidden(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("hello")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "b.md").write_text("secret")
    files = list(walk([tmp_path, tmp_path / "a.md"]))
    assert [f.name for f in files] == ["a.md"]
    assert {f.name for f in walk([tmp_path], include_hidden=True)} == {"a.md", "b.md"}


def test_markdown_keeps_heading_path_and_offsets(corpus: Path) -> None:
    doc = _parse(corpus / "guide.md")
    source = (corpus / "guide.md").read_text()
    places = [s.place for s in doc.sections]
    assert places == ["Garden guide", "Garden guide > Watering", "Garden guide > Pests"]
    for s in doc.sections:  # the same characters, markup (the code fence) blanked
        raw = source[s.offset:s.offset + len(s.text)]
        assert all(c == " " or c == raw[i] for i, c in enumerate(s.text))
        assert len(raw) == len(s.text)
    assert "# not a heading" in doc.sections[1].text  # fenced code is not a heading
    assert "```" not in doc.sections[1].text
    assert doc.title == "Garden guide"


def test_a_markdown_table_is_read_as_rows_keyed_by_its_header(tmp_path: Path) -> None:
    """A GitHub table is stored as rows that carry their header, under its heading, and
    its pipes are not read as prose; a table inside a code fence stays code."""
    md = tmp_path / "releases.md"
    md.write_text("# Releases\n\nOur schedule:\n\n| Release | Status | Codename |\n"
                  "| :--: | --- | :---: |\n| [18.x][] | **End-of-Life** | [Hydrogen][] |\n"
                  "| 20.x | Maintenance | Iron \\| Fe |\n\nDates may change.\n\n"
                  "```\n| a | b |\n|---|---|\n| 1 | 2 |\n```\n")
    doc = _parse(md)
    prose, rows = doc.sections
    assert "|" not in prose.text.split("Dates may change.")[0] and "Our schedule:" in prose.text
    assert "| 1 | 2 |" in prose.text  # code, as written
    assert rows.place == "Releases" and rows.offset > len(md.read_text())
    assert rows.text.split("\n\n") == [
        "Release | Status | Codename",
        "Release: 18.x; Status: End-of-Life; Codename: Hydrogen",
        "Release: 20.x; Status: Maintenance; Codename: Iron | Fe"]


def test_rst_headings(corpus: Path) -> None:
    doc = _parse(corpus / "manual.rst")
    assert [s.place for s in doc.sections] == ["Bicycle manual", "Bicycle manual > Brakes"]


def test_html_drops_scripts_and_keeps_headings(corpus: Path) -> None:
    doc = _parse(corpus / "page.html")
    assert doc.title == "Recipe page"
    assert [s.place for s in doc.sections] == ["Pancakes", "Pancakes > Cooking"]
    text = " ".join(s.text for s in doc.sections)
    assert "ignore me" not in text
    assert "Mix two eggs with flour and milk." in text


def test_pdf_pages(corpus: Path) -> None:
    doc = _parse(corpus / "report.pdf")
    assert [s.place for s in doc.sections] == ["p. 1", "p. 2"]
    assert "Lisbon" in doc.sections[1].text


def test_docx_headings_and_tables(corpus: Path) -> None:
    doc = _parse(corpus / "letter.docx")
    assert [s.place for s in doc.sections] == ["Tenancy letter", "Tenancy letter > Repairs"]
    assert "750 euros" in doc.sections[1].text


def test_email_and_mbox(corpus: Path) -> None:
    mail = _parse(corpus / "mail.eml")
    assert mail.title == "Dentist appointment"
    assert "Thursday at 3 pm" in mail.sections[0].text
    assert mail.sections[0].place.startswith("Dentist appointment (Clinic")
    box = _parse(corpus / "archive.mbox")
    assert len(box.sections) == 2
    assert box.sections[1].place.startswith("#2: Re: Book club")
    assert "cheese and the wine" in box.sections[1].text  # HTML-only message


def test_encodings_are_detected(corpus: Path) -> None:
    doc = _parse(corpus / "latin1.txt")
    assert "café" in doc.sections[0].text and "René" in doc.sections[0].text
    assert decode_text("\ufeffhi\r\nthere".encode()) == "hi\nthere"


@pytest.mark.parametrize("text, encoding", [
    ("café à élève, où est la gare? Déjà vu.", "latin-1"),
    ("Straße und Grüße aus München, 20 €", "cp1252"),
    ("A note in UTF-16 with a byte-order mark: naïve café\nline two", "utf-16"),
    ("A note in UTF-16 without a mark: naïve café\nline two", "utf-16-le"),
    ("A note in UTF-16 big-endian without a mark: naïve café", "utf-16-be"),
    ("A UTF-32 note: naïve café", "utf-32"),
])
def test_text_in_western_and_unicode_encodings_is_stored_as_written(text: str,
                                                                    encoding: str) -> None:
    assert decode_text(text.encode(encoding)) == text


POLISH = ("Zażółć gęślą jaźń. Pchnąć w tę łódź jeża lub ośm skrzyń fig.\n\n"
          "Spotkanie zespołu odbędzie się w czwartek o dziesiątej. Proszę przynieść notatki "
          "i listę otwartych spraw. Dziękuję!\n")
RUSSIAN = "Привет, встреча в пятницу в 10 часов.\n"
HUNGARIAN = ("Árvíztűrő tükörfúrógép. A megbeszélés csütörtökön lesz, kérem hozza a "
             "jegyzeteket.\n")


@pytest.mark.parametrize("text, encoding", [
    (POLISH, "cp1250"), (POLISH, "iso-8859-2"), (RUSSIAN, "koi8-r"), (RUSSIAN, "cp1251"),
    (RUSSIAN, "cp866"), ("Привет, как дела? Это текст на русском языке.", "cp1251"),
    (POLISH, "utf-8"), (POLISH, "utf-16"), (RUSSIAN, "utf-16"),
], ids=["pl-cp1250", "pl-iso-8859-2", "ru-koi8-r", "ru-cp1251", "ru-cp866", "ru-cp1251-2",
        "pl-utf-8", "pl-utf-16", "ru-utf-16"])
def test_legacy_and_unicode_text_is_read_exactly_without_a_warning(
        tmp_path: Path, text: str, encoding: str) -> None:
    f = tmp_path / "notes.txt"
    f.write_bytes(text.encode(encoding))
    doc = _parse(f)
    assert doc.sections[0].text == text
    assert doc.notes == []


def test_an_unclear_encoding_is_read_with_a_warning_naming_it(tmp_path: Path) -> None:
    f = tmp_path / "notes.txt"
    f.write_bytes(HUNGARIAN.encode("cp1250"))  # "ő" in Windows-1250 is "õ" in Windows-1252
    doc = _parse(f)
    assert len(doc.notes) == 1
    assert doc.notes[0].startswith("encoding unclear, read as cp1252; as cp1250 ")
    assert "csütörtökön" in doc.sections[0].text  # the letters both encodings share are right


def test_text_no_encoding_reads_is_skipped() -> None:
    with pytest.raises(SkipFile, match="binary"):
        decode_text(bytes(range(256)) * 10)
    with pytest.raises(SkipFile, match="unknown text encoding"):
        decode_text(bytes(range(1, 256)) * 10)


@pytest.mark.parametrize("text, encoding", [(POLISH, "iso-8859-2"), (RUSSIAN, "koi8-r")])
def test_a_large_legacy_text_is_streamed_exactly(tmp_path: Path, text: str,
                                                 encoding: str) -> None:
    from ragctl.index.ingest import scan_text, text_blocks

    f = tmp_path / "big.txt"
    f.write_bytes((text * 400).encode(encoding))
    scan = scan_text(f)
    assert scan.note == ""
    assert "".join(b.text for b in text_blocks(f, scan.encoding, block_chars=500)) == text * 400


def test_indexing_warns_only_about_the_file_whose_encoding_is_unclear(tmp_path: Path) -> None:
    from ragctl.config import load_settings
    from ragctl.index.indexer import Indexer
    from ragctl.store.collection import Collection

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pl-1250.txt").write_bytes(POLISH.encode("cp1250"))
    (docs / "pl-8859-2.txt").write_bytes(POLISH.encode("iso-8859-2"))
    (docs / "ru.txt").write_bytes(RUSSIAN.encode("koi8-r"))
    (docs / "hu.txt").write_bytes(HUNGARIAN.encode("cp1250"))
    settings = load_settings(embedder="fake-hash")
    with Collection.open(settings, create=True) as c:
        c.lock()
        summary = Indexer(c).run([docs]).to_dict()
        sentences = [row[0] for row in c.store.db.execute("SELECT text FROM sentences")]
    assert summary["added"] == 4 and summary["skipped"] == 0
    assert [(Path(w["path"]).name, w["reason"].split(";")[0]) for w in summary["warnings"]] \
        == [("hu.txt", "encoding unclear, read as cp1252")]
    assert sentences.count("Zażółć gęślą jaźń.") == 2
    assert "Привет, встреча в пятницу в 10 часов." in sentences


@pytest.mark.parametrize("name, reason", [
    ("binary.txt", "binary"), ("empty.md", "empty"), ("corrupt.pdf", "corrupt PDF"),
    ("encrypted.pdf", "encrypted"), ("corrupt.docx", "corrupt DOCX"), ("huge.txt", "limit"),
    ("photo.png", "image"),
])
def test_bad_files_raise_skip_with_a_reason(corpus: Path, name: str, reason: str) -> None:
    with pytest.raises(SkipFile, match=reason):
        _parse(corpus / name)


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "locked.txt"
    f.write_text("secret")

    def deny(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_bytes", deny)
    with pytest.raises(SkipFile, match="permission denied"):
        read_bytes(f, max_bytes=1000)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp1252", "utf-16", "utf-16-le"])
def test_text_blocks_give_the_whole_decoded_text_with_offsets(tmp_path: Path,
                                                              encoding: str) -> None:
    import random

    from ragctl.index.ingest import scan_text, text_blocks

    rng = random.Random(7)
    words = ["alpha", "beta", "café", "élève", "Grüße", "x"]
    text = "".join(" ".join(rng.choice(words) for _ in range(rng.randint(1, 40)))
                   + rng.choice(["\n", "\r\n", "\n\n", "\r\n\r\n", "\r", " "])
                   for _ in range(2000))
    f = tmp_path / "big.txt"
    f.write_bytes(text.encode(encoding))
    scan = scan_text(f)
    whole = decode_text(f.read_bytes())
    blocks = list(text_blocks(f, scan.encoding, block_chars=500))
    assert len(blocks) > 20
    assert "".join(b.text for b in blocks) == whole
    assert all(whole[b.offset:b.offset + len(b.text)] == b.text for b in blocks)
    import hashlib
    assert scan.sha256 == hashlib.sha256(f.read_bytes()).hexdigest()


def test_text_blocks_cut_a_line_without_breaks(tmp_path: Path) -> None:
    from ragctl.index.ingest import text_blocks

    f = tmp_path / "one-line.txt"
    f.write_text("word " * 5000)
    blocks = list(text_blocks(f, "utf-8", block_chars=100))
    assert max(len(b.text) for b in blocks) <= 900
    assert "".join(b.text for b in blocks) == "word " * 5000


def test_parsing_libraries_say_nothing_on_stderr(tmp_path: Path, capfd: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import logging
    import warnings

    from ragctl.index import ingest

    def noisy(path: Path, data: bytes) -> ingest.ParsedDocument:
        logging.getLogger("pypdf").warning("Ignoring wrong pointing object 17 0 (offset 0)")
        logging.getLogger("pdfminer.pdfpage").warning("CropBox missing from /Page")
        logging.getLogger("trafilatura.core").warning("discarding data: None")
        warnings.warn("XMLParsedAsHTMLWarning: looks like XML", UserWarning, stacklevel=1)
        return ingest.ParsedDocument(path, "text", "t", [ingest.Section("Some text.")])

    monkeypatch.setitem(ingest._PARSERS, "text", noisy)
    f = tmp_path / "a.txt"
    f.write_text("x")
    handler = logging.StreamHandler()  # as a program that logs to stderr would have
    names = ("pypdf", "pdfminer", "trafilatura")
    for name in names:
        logging.getLogger(name).addHandler(handler)
    try:
        assert parse(f, b"x").sections[0].text == "Some text."
    finally:
        for name in names:
            logging.getLogger(name).removeHandler(handler)
    err = capfd.readouterr().err
    assert "wrong pointing" not in err and "XMLParsedAsHTML" not in err
    assert "CropBox" not in err and "discarding" not in err


def test_half_a_utf16_pair_is_replaced_not_fatal(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A PDF whose text encoding splits an emoji gives a lone surrogate, which no later
    step can encode (a sample invoice of a public repository stopped a whole index run)."""
    from ragctl.index import ingest

    def broken(path: Path, data: bytes) -> ingest.ParsedDocument:
        return ingest.ParsedDocument(path, "text", "Invoice \ud83d",
                                     [ingest.Section("Thanks \ud83d for your order.", offset=4)])

    monkeypatch.setitem(ingest._PARSERS, "text", broken)
    f = tmp_path / "a.txt"
    f.write_text("x")
    doc = parse(f, b"x")
    assert doc.sections[0].text == "Thanks \ufffd for your order." and doc.sections[0].offset == 4
    assert doc.title == "Invoice \ufffd"
    doc.sections[0].text.encode("utf-8")


def test_a_control_character_in_a_text_is_a_space(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A PDF whose space glyph maps to NUL reads "87B37C9\x000152": one word to the search,
    and a sign the reader cannot print."""
    from ragctl.index import ingest

    def nul(path: Path, data: bytes) -> ingest.ParsedDocument:
        return ingest.ParsedDocument(path, "text", "Receipt", [ingest.Section(
            "Invoice number 87B37C9\x000152\nReceipt number 2721\x005058\tpaid\x7f", offset=0)])

    monkeypatch.setitem(ingest._PARSERS, "text", nul)
    f = tmp_path / "a.txt"
    f.write_text("x")
    text = parse(f, b"x").sections[0].text
    assert text == "Invoice number 87B37C9 0152\nReceipt number 2721 5058\tpaid "


def test_a_filled_pdf_form_keeps_its_values(tmp_path: Path) -> None:
    """A filled form that was not flattened holds its values only in its fields."""
    from reportlab.pdfgen import canvas

    f = tmp_path / "form.pdf"
    c = canvas.Canvas(str(f))
    c.drawString(72, 760, "Membership application")
    c.acroForm.textfield(name="ApplicantName", value="Ana Ruiz", x=72, y=700, width=200)
    c.acroForm.textfield(name="member_no", tooltip="Member number", value="A-113",
                         x=72, y=660, width=200)
    c.acroForm.textfield(name="Notes", value="", x=72, y=620, width=200)
    c.acroForm.checkbox(name="Paid", checked=True, x=72, y=580)
    c.save()
    doc = parse(f, f.read_bytes())
    form = [s for s in doc.sections if s.place.endswith("form fields")]
    assert form and form[0].place == "p. 1 > form fields"
    lines = form[0].text.split("\n\n")  # one paragraph, one sentence, each
    assert "Applicant Name: Ana Ruiz" in lines and "Member number: A-113" in lines
    assert "Paid: Yes" in lines and not any(ln.startswith("Notes") for ln in lines)


def test_a_table_under_a_caption_is_read_within_its_own_region(tmp_path: Path) -> None:
    """Two columns drawn without lines, under "Table: …", amid prose: no finder sees them
    on the whole page; under their caption they are a table."""
    from reportlab.pdfgen import canvas

    f = tmp_path / "pta.pdf"
    c = canvas.Canvas(str(f))
    y = 760
    for line in ("I grouped the deposits into categories. We can see the total deposits",
                 "by category in the bar plot and table below, and more in the notes."):
        c.drawString(72, y, line)
        y -= 14
    c.drawString(72, y - 10, "Table: Total Amount by Category")
    y -= 40
    c.drawString(200, y, "Category")
    c.drawString(330, y, "Total Amount")
    for name, amount in (("Book Fair", "14,144.64"), ("Hage Fall Festival", "7,879.19"),
                         ("Grants", "7,666.52"), ("Square", "7,152.58")):
        y -= 14
        c.drawString(200, y, name)
        c.drawString(330, y, amount)
    c.drawString(72, y - 30, "There were two entries in the deposit history for 750.00 dollars"
                 " and it is unclear to me if these are duplicates of each other.")
    c.save()
    text = "\n".join(s.text for s in parse(f, f.read_bytes()).sections)
    assert "Table: Total Amount by Category" in text
    assert "Category: Hage Fall Festival; Total Amount: 7,879.19" in text
    assert "Category: Square; Total Amount: 7,152.58" in text
    # a region reaching past a page whose box does not start at nought (an offset media
    # box) is cut to the page, or is none, not an error that loses the file
    from ragctl.index.ingest import _crop

    class Page:
        bbox = (-34.5, 32.0, 577.5, 824.0)

        def crop(self, box: tuple[float, ...]) -> tuple[float, ...]:
            assert box[0] >= self.bbox[0] and box[1] >= self.bbox[1]
            assert box[2] <= self.bbox[2] and box[3] <= self.bbox[3]
            return box

    assert _crop(Page(), (12.5, 11.0, 529.8, 659.5)) == (12.5, 32.0, 529.8, 659.5)
    assert _crop(Page(), (12.5, 900.0, 529.8, 950.0)) is None


def test_a_form_field_whose_parent_is_missing_loses_nothing_else(tmp_path: Path) -> None:
    from pypdf import PdfWriter
    from pypdf.generic import IndirectObject, NameObject
    from reportlab.pdfgen import canvas

    f = tmp_path / "form.pdf"
    c = canvas.Canvas(str(f))
    c.drawString(72, 760, "Membership application for the sailing club")
    c.acroForm.textfield(name="ApplicantName", value="Ana Ruiz", x=72, y=700, width=200)
    c.acroForm.textfield(name="Town", value="Oslo", x=72, y=660, width=200)
    c.save()
    w = PdfWriter(clone_from=f)
    annot = w.pages[0]["/Annots"][1].get_object()
    annot[NameObject("/Parent")] = IndirectObject(9999, 0, w)  # an object never defined
    broken = tmp_path / "broken.pdf"
    with broken.open("wb") as out:
        w.write(out)
    doc = parse(broken, broken.read_bytes())
    assert "sailing club" in doc.sections[0].text
    form = [s for s in doc.sections if s.place.endswith("form fields")]
    assert form and "Applicant Name: Ana Ruiz" in form[0].text


def test_tables_keep_their_header_with_each_value(tmp_path: Path) -> None:
    import docx

    from ragctl.index.ingest import table_lines

    rows = [["Item", "Qty", "Price"], ["USB-C cable", "2", "$12.99"], ["Total", "", "$25.98"]]
    assert table_lines(rows) == ["Item | Qty | Price",
                                 "Item: USB-C cable; Qty: 2; Price: $12.99",
                                 "Item: Total; Price: $25.98"]
    # a summary line whose label is outside the table is not keyed by the column's name
    assert table_lines([*rows[:2], ["", "", "$10.00"]])[-1] == "$10.00"
    assert table_lines([["Rent", "750 euros"], ["Due", "the 1st"]]) == \
        ["Rent: 750 euros", "Due: the 1st"]
    # an infobox: labels and values, not a header row
    assert table_lines([["Industry", "Software"], ["Founded", "1998"], ["Flag"]]) == \
        ["Industry: Software", "Founded: 1998", "Flag"]
    assert table_lines([["Symptom", "Cause"], ["Slow", "CPU"]], header=True) == \
        ["Symptom | Cause", "Symptom: Slow; Cause: CPU"]
    d = docx.Document()
    t = d.add_table(rows=3, cols=3)
    for i, row in enumerate(rows):
        for j, cell in enumerate(row):
            t.cell(i, j).text = cell
    f = tmp_path / "receipt.docx"
    d.save(str(f))
    text = _parse(f).sections[0].text
    assert "Item: USB-C cable; Qty: 2; Price: $12.99\n\nItem: Total; Price: $25.98" in text
    html = tmp_path / "receipt.html"
    html.write_text("<html><body><h1>Receipt</h1><table><tr><th>Item</th><th>Qty</th>"
                    "<th>Price</th></tr><tr><td>USB-C cable</td><td>2</td><td>$12.99</td>"
                    "</tr></table></body></html>")
    assert "Item: USB-C cable; Qty: 2; Price: $12.99" in _parse(html).sections[0].text


def test_pdf_tables_add_rows_with_their_header_across_pages(tmp_path: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    pdf.add_page()
    pdf.multi_cell(0, 7, "Order 1187 was shipped on 3 May. The items and prices are below.")
    rows = [("Item", "Qty", "Price"), ("USB-C cable", "2", "$12.99"),
            ("Power adapter 65W", "1", "$39.00"), ("Laptop sleeve", "1", "$24.50")]
    with pdf.table() as table:
        for r in rows:
            table.row(r)
    pdf.add_page()  # the table goes on without its header
    with pdf.table(first_row_as_headings=False) as table:
        for r in [("HDMI adapter", "1", "$9.50"), ("Screen cleaner", "3", "$4.20"),
                  ("Total", "9", "$143.39")]:
            table.row(r)
    pdf.multi_cell(0, 7, "Thank you for your order.")
    f = tmp_path / "order.pdf"
    f.write_bytes(bytes(pdf.output()))
    doc = _parse(f)
    assert [s.place for s in doc.sections] == ["p. 1", "p. 1", "p. 2", "p. 2"]
    text, rows, text2, rows2 = doc.sections
    assert text.text.startswith("Order 1187 was shipped on 3 May.")  # the page as it is
    assert rows.offset == len(text.text) + 2  # the rows follow it
    assert rows.text.split("\n\n") == ["Item | Qty | Price",
                                        "Item: USB-C cable; Qty: 2; Price: $12.99",
                                        "Item: Power adapter 65W; Qty: 1; Price: $39.00",
                                        "Item: Laptop sleeve; Qty: 1; Price: $24.50"]
    assert "Item: HDMI adapter; Qty: 1; Price: $9.50" in rows2.text
    assert "Item: Total; Qty: 9; Price: $143.39" in rows2.text
    assert "Thank you for your order." in text2.text


def test_a_pdf_table_under_its_caption_is_read_though_it_holds_few_numbers(
        tmp_path: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    pdf.add_page()
    pdf.multi_cell(0, 7, "The system maintains these read-only variables.\n"
                   "Table 3-2 Built-in global variables")
    with pdf.table() as table:
        for r in [("Global variable", "Type", "Description"),
                  ("CLIENT_HOST", "VARCHAR(255)", "Host name of the current client"),
                  ("CLIENT_PORT", "INTEGER", "Port used by the current client"),
                  ("ROUTINE_TYPE", "CHAR(1)", "Type of the routine that is running")]:
            table.row(r)
    f = tmp_path / "redbook.pdf"
    f.write_bytes(bytes(pdf.output()))
    text = "\n".join(s.text for s in _parse(f).sections)
    assert "Global variable: CLIENT_PORT; Type: INTEGER; Description: Port used by the " \
        "current client" in text


def test_html_keeps_the_main_content_only(tmp_path: Path) -> None:
    article = ("The council approved the new cycle lane on Harbour Street on Tuesday. "
               "Construction starts in March and should take eleven weeks. ") * 3
    page = f"""<html><head><title>Cycle lane approved</title></head><body>
      <div id="cookie-banner">We use cookies. Accept all cookies or manage preferences.</div>
      <nav><ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li>
      <li><a href="/login">Log in to your account</a></li></ul></nav>
      <main><article><h1>Cycle lane approved</h1><p>{article}</p>
      <h2>Costs</h2><p>The lane costs 1.2 million pounds, paid by the regional transport
      fund, and replaces forty parking spaces along the harbour front.</p></article></main>
      <aside><h3>Most read</h3><ul><li>Ten best bakeries in town</li></ul></aside>
      <footer>Copyright 2024 Harbour Gazette. All rights reserved.</footer></body></html>"""
    f = tmp_path / "news.html"
    f.write_text(page)
    doc = _parse(f)
    text = " ".join(s.text for s in doc.sections)
    assert "Construction starts in March" in text and "1.2 million pounds" in text
    for noise in ("cookies", "Log in", "bakeries", "Copyright"):
        assert noise not in text
    assert any(s.place.endswith("Costs") for s in doc.sections)
    assert doc.title == "Cycle lane approved"


def test_a_web_page_keeps_its_byline(tmp_path: Path) -> None:
    """The main-content extractor drops the header with "By …"; the page still says who
    wrote it (the visible line naming <meta name="author">, else "By" and the name)."""
    article = ("The council approved the new cycle lane on Harbour Street on Tuesday. "
               "Construction starts in March and should take eleven weeks. ") * 3
    page = f"""<html><head><title>Cycle lane approved</title>
      <meta name="author" content="Ruth Okafor"></head><body>
      <header><h1>Cycle lane approved</h1><span>// By Ruth Okafor • Nov 11, 2024</span>
      </header><main><article><p>{article}</p></article></main></body></html>"""
    f = tmp_path / "news.html"
    f.write_text(page)
    doc = _parse(f)
    assert doc.sections[-1].text == "By Ruth Okafor • Nov 11, 2024"
    assert doc.sections[-1].offset > doc.sections[0].offset
    f.write_text(page.replace("// By Ruth Okafor • Nov 11, 2024", "Ruth Okafor<!-- Ruth Okafor, "
                              "edited -->"))
    assert _parse(f).sections[-1].text == "By Ruth Okafor"  # not the HTML comment
    f.write_text(page.replace('<meta name="author" content="Ruth Okafor">', ""))
    assert all("Okafor" not in s.text for s in _parse(f).sections)
    # no tag, but an element marked as the byline (and a commenter's, which is not it)
    f.write_text(page.replace('<meta name="author" content="Ruth Okafor">', "").replace(
        "<span>// By Ruth Okafor • Nov 11, 2024</span>",
        '<p class="byline author">Written by Ruth Okafor<br>Edited by Sam Lee</p>').replace(
        "</main>", '</main><div class="comments"><span class="author">Troll99</span></div>'))
    assert _parse(f).sections[-1].text == "Written by Ruth Okafor Edited by Sam Lee"
    layout = page.replace('<meta name="author" content="Ruth Okafor">', "").replace(
        "<span>// By Ruth Okafor • Nov 11, 2024</span>",
        '<div class="pane-blog-byline">By <a href="/bio">Ruth Okafor</a>, Reporter</div>')
    f.write_text(layout.replace("<body>", '<body class="no-sidebars">'))
    assert _parse(f).sections[-1].text == "By Ruth Okafor , Reporter"
    f.write_text(layout.replace("<header>", '<div class="sidebar"><header>').replace(
        "</header>", "</header></div>"))  # a real sidebar: not the page's byline
    assert all("Okafor" not in s.text for s in _parse(f).sections)
    f.write_text(page.replace('<meta name="author" content="Ruth Okafor">', "").replace(
        "</main>", '</main><div class="comments"><span class="author">Troll99</span></div>'))
    assert all("Troll99" not in s.text for s in _parse(f).sections)


def test_a_mail_quoted_in_replies_is_indexed_once(tmp_path: Path) -> None:
    original = ("The plumber comes on Thursday at 9 am to replace the boiler valve.\n"
                "Please leave the side gate open for him.\n")
    quoted = "".join(f"> {line}\n" for line in original.splitlines())
    mbox = (f"From a@example.org Mon Jan  1 00:00:00 2024\nFrom: Ann <a@example.org>\n"
            f"Subject: Plumber\n\n{original}\n"
            f"From b@example.org Mon Jan  1 01:00:00 2024\nFrom: Bob <b@example.org>\n"
            f"Subject: Re: Plumber\n\nThanks, I will leave it open.\n\n"
            f"On Mon, Jan 1, 2024 at 00:00, Ann <a@example.org> wrote:\n{quoted}\n"
            f"> yes\n"
            f"From c@example.org Mon Jan  1 02:00:00 2024\nFrom: Cy <c@example.org>\n"
            f"Subject: Fwd\n\nSee below.\n> A quote of a mail that is not in this archive, "
            f"kept because nothing else holds it.\n")
    f = tmp_path / "house.mbox"
    f.write_text(mbox)
    bodies = [s.text for s in _parse(f).sections]
    assert "boiler valve" in bodies[0]
    assert bodies[0].startswith("From: Ann <a@example.org>\nSubject: Plumber\n\n")
    assert "boiler valve" not in bodies[1] and "wrote:" not in bodies[1]
    assert "Thanks, I will leave it open." in bodies[1] and "> yes" in bodies[1]
    assert "not in this archive" in bodies[2]


def test_html_tables_the_extractor_drops_are_kept_but_not_navigation(tmp_path: Path) -> None:
    article = ("Harbour Town is a small port on the east coast with a long fishing "
               "history and a lighthouse built in 1887. ") * 4
    page = f"""<html><head><title>Harbour Town</title></head><body>
      <div class="navbox"><table><tr><th>Towns</th><td>North Bay · South Bay · West
      Point · East Cape · Old Harbour</td></tr><tr><th>Rivers</th><td>Ash · Birch</td>
      </tr></table></div>
      <main><table class="infobox"><tr><th>Mayor</th><td>Ruth Okafor</td></tr>
      <tr><th>Population</th><td>12,400</td></tr><tr><th>Founded</th><td>1702</td></tr>
      </table><p>{article}</p><p>{article}</p></main></body></html>"""
    f = tmp_path / "town.html"
    f.write_text(page)
    text = "\n".join(s.text for s in _parse(f).sections)
    assert "lighthouse built in 1887" in text
    assert "Mayor: Ruth Okafor" in text and "Population: 12,400" in text
    assert "North Bay" not in text
    # a layout named after its sidebar holds the whole page: it is no sidebar
    f.write_text(page.replace("<body>", '<body class="no-sidebars"><div class="two-col-sidebar'
                              '-right">').replace("</body>", "</div></body>"))
    text = "\n".join(s.text for s in _parse(f).sections)
    assert "Mayor: Ruth Okafor" in text and "North Bay" not in text


def test_a_title_row_spanning_a_table_is_not_its_header() -> None:
    from ragctl.index.ingest import table_lines

    rows = [["New Zealand", ""], ["Capital", "Wellington"], ["Largest city", "Auckland"]]
    assert table_lines(rows, header=True) == ["New Zealand", "Capital: Wellington",
                                              "Largest city: Auckland"]


def test_a_title_merged_across_the_columns_is_a_line_and_the_header_is_under_it() -> None:
    from ragctl.index.ingest import table_lines

    # a word processor gives a merged cell's text in each column it spans
    rows = [["Lesson 1: Step 1"] * 4,
            ["Country", "Birthrate", "Population Growth 2050", "Social Factors 3",
             "Social Factors 3"],
            ["Egypt", "2.83", "1.32%", "Slightly higher life", "Slightly higher life"],
            ["Italy", "1.28", "-1.33%", "Aging", "Aging"]]
    assert table_lines(rows) == [
        "Lesson 1: Step 1",
        "Country | Birthrate | Population Growth 2050 | Social Factors 3",
        "Country: Egypt; Birthrate: 2.83; Population Growth 2050: 1.32%; "
        "Social Factors 3: Slightly higher life",
        "Country: Italy; Birthrate: 1.28; Population Growth 2050: -1.33%; "
        "Social Factors 3: Aging"]
    # a first row of data is no header: numbers that are not beside a word
    assert table_lines([["USA", "2.06", "0.51%"], ["Egypt", "2.83", "0.41%"]]) == \
        ["USA | 2.06 | 0.51%", "Egypt | 2.83 | 0.41%"]


def test_an_rst_header_block_gives_the_title(tmp_path: Path) -> None:
    pep = tmp_path / "pep-0020.rst"
    pep.write_text("PEP: 20\nTitle: The Zen of Python\nAuthor: Tim Peters\n\n\n"
                   "Abstract\n========\n\nLong time Pythoneer Tim Peters...\n")
    assert _parse(pep).title == "The Zen of Python"
    # "Title:" later in the text, or no header block: the first heading
    plain = tmp_path / "notes.rst"
    plain.write_text("Abstract\n========\n\nTitle: not a header\n")
    assert _parse(plain).title == "Abstract"


# Real mails, copied byte for byte into tests/fixtures/mail:
# - utf_8_email.eml: github.com/demisto/parse-emails, parse_emails/tests/test_data/
#   utf_8_email.eml at commit 417c18166da3b8e1f8e3def5b0b4d9f70383afca (MIT)
# - message_with_utf8_attachment.eml (a Polish mail, 8-bit UTF-8 text and two attachments):
#   github.com/coddingtonbear/django-mailbox, django_mailbox/tests/messages/
#   message_with_utf8_attachment.eml at commit 4c7135469e32757605f26af8515eda455b89f703 (MIT)
# - users_ponymail_apache_org_2022-01.mbox (six messages, two threads, of the Apache Pony Mail
#   users list): github.com/apache/incubator-ponymail-foal, test/resources/
#   users_ponymail_apache_org_2022-01.mbox at commit 88ce2a3c6abf156fa9fc61bf8e2783c509befe2d
#   (Apache-2.0)
MAIL = Path(__file__).parent / "fixtures" / "mail"
POLISH_MAIL = "message_with_utf8_attachment.eml"
LIST_ARCHIVE = "users_ponymail_apache_org_2022-01.mbox"

LEADING_NUMBERS = ["(212) 555-0147 is the front desk.", "212-555-0147 is the front desk.",
                   "1-800-555-0199 is free to call.", "2024 was a good year for the shop."]


@pytest.mark.parametrize("suffix", [".txt", ".md", ".rst"])
def test_lines_that_start_with_a_number_are_stored_whole(tmp_path: Path, suffix: str) -> None:
    f = tmp_path / f"contacts{suffix}"
    f.write_text("Contacts\n\n" + "\n".join(LEADING_NUMBERS) + "\n\n1. First item\n")
    text = "".join(s.text for s in _parse(f).sections)
    assert all(line in text for line in LEADING_NUMBERS)


@pytest.mark.parametrize("line, sentence", [
    *[(line, line) for line in LEADING_NUMBERS],
    ("1. Bring the keys.", "Bring the keys."), ("2) Bring the keys.", "Bring the keys."),
    ("- Bring the keys.", "Bring the keys."), ("* Bring the keys.", "Bring the keys."),
    ("• Bring the keys.", "Bring the keys."),
    ("a) Bring the keys.", "Bring the keys."),
])
def test_only_real_list_markers_leave_the_sentence(line: str, sentence: str) -> None:
    from ragctl.index.sentences import SentenceSplitter

    assert [s.text for s in SentenceSplitter().split(f"Notes:\n\n{line}")] == ["Notes:",
                                                                             sentence]


def _utf16(data: bytes, encoding: str) -> bytes:
    """``data`` (UTF-8) saved as ``encoding``; "utf-16-be-bom": big-endian with its mark."""
    text = data.decode("utf-8")
    if encoding == "utf-16-be-bom":
        return b"\xfe\xff" + text.encode("utf-16-be")
    return text.encode(encoding)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be-bom", "utf-32"])
@pytest.mark.parametrize("source, suffix, subject, body", [
    ("utf_8_email.eml", ".eml", "Test UTF Email", "With hebrew:\n\nעברית"),
    ("utf_8_email.eml", ".txt", "Test UTF Email", "With hebrew:\n\nעברית"),
    (POLISH_MAIL, ".eml", "Odpowiedź od burmistrza na wniosek stowarzyszenia",
     "Niniejsza wiadomość elektroniczna [lub jej załączniki] może zawierać"),
    (POLISH_MAIL, ".txt", "Odpowiedź od burmistrza na wniosek stowarzyszenia",
     "Niniejsza wiadomość elektroniczna [lub jej załączniki] może zawierać"),
], ids=["hebrew", "hebrew-as-txt", "polish", "polish-as-txt"])
def test_a_mail_saved_as_utf16_is_read_as_mail(tmp_path: Path, encoding: str, source: str,
                                               suffix: str, subject: str, body: str) -> None:
    f = tmp_path / f"saved{suffix}"
    f.write_bytes(_utf16((MAIL / source).read_bytes(), encoding))
    doc = _parse(f)
    text = doc.sections[0].text
    assert (doc.format, doc.title) == ("email", subject)
    assert text.startswith("From: ") and f"\nSubject: {subject}\n\n" in text
    assert "\nDate: " in text and body in text
    assert "To: " not in text and "Message-ID" not in text  # a header, not body text
    assert doc.sections[0].place.startswith(f"{subject} (")


def test_only_a_text_file_that_opens_with_a_mail_header_is_read_as_mail(
        tmp_path: Path) -> None:
    mail = tmp_path / "mail.txt"
    mail.write_bytes((MAIL / POLISH_MAIL).read_bytes())
    assert _parse(mail).format == "email"
    for name, text in [
        ("prose.txt", "From their homelands in the north, the tribes moved south.\n"
                      "Date: unknown.\n\nMore prose.\n"),
        ("pep.txt", "PEP: 8\nTitle: Style Guide for Python Code\nAuthor: Guido\n\nBody.\n"),
        ("memo.txt", "From: Ann\nA memo without a date or a blank line after its header.\n"),
        ("header.txt", "From: Ann\nDate: Monday\n"),  # a header without a body
    ]:
        (tmp_path / name).write_text(text)
        doc = _parse(tmp_path / name)
        assert doc.format == "text" and doc.sections[0].text == text


Reader = Callable[[Path], list[str]]


def _mbox_bodies(f: Path) -> list[str]:
    return [s.text for s in _parse(f).sections]


def _streamed_bodies(f: Path) -> list[str]:
    from ragctl.index.ingest import mbox_messages

    return [s.text for s in mbox_messages(f)]


@pytest.mark.parametrize("read", [_mbox_bodies, _streamed_bodies], ids=["whole", "streamed"])
def test_quotes_of_a_real_list_archive_are_indexed_once(read: Reader) -> None:
    bodies = read(MAIL / LIST_ARCHIVE)
    assert len(bodies) == 6
    ask, answer, again, attachments, sebb, gruno = bodies
    assert "On behalf of the Subversion community." in ask
    # #2 quotes #1 (Gmail, from its HTML part): the copied paragraphs go, the reply stays
    assert "On behalf of the Subversion community" not in answer
    assert "Thanks in advance!" not in answer and "mailing-lists.html" not in answer
    assert 'Just change "Wayita"' in answer
    # #3 (quoted-printable) quotes #2 at ">", #1 at "> >": all of it goes, "wrote:" line too
    assert "/without/ the javascript hack" in again
    assert "I think a link like this" not in again and "Subversion community" not in again
    assert "wrote:" not in again and "\n>" not in again
    # #4 is quoted twice: by #5 its lines unwrapped, by #6 wrapped anew with trailing spaces
    assert "(Please keep me in CC since I'm not subscribed to the list!)" in attachments
    assert "Please keep me in CC" not in sebb and "Apache Infra recently helped" not in sebb
    assert "Note that mod_mbox does/did provide direct access to such attachments." in sebb
    assert "Please keep me in CC" not in gruno and "Is there something" not in gruno
    assert "the attachment is nameless" in gruno
    # Thunderbird added the links' addresses to this paragraph: not a copy of #4, it stays
    assert "> <http://lists.apache.org> with some old mboxes for the Subversion" in gruno


@pytest.mark.parametrize("read", [_mbox_bodies, _streamed_bodies], ids=["whole", "streamed"])
def test_quotes_of_mails_missing_from_a_real_archive_are_indexed_once(
        tmp_path: Path, read: Reader) -> None:
    # the real archive without its two first messages (#1 and #4): only replies remain
    messages = re.split(rb"(?m)^(?=From users-return-)", (MAIL / LIST_ARCHIVE).read_bytes())
    assert len(messages) == 7 and not messages[0]
    f = tmp_path / "replies.mbox"
    f.write_bytes(b"".join(messages[k] for k in (2, 3, 5, 6)))
    answer, again, sebb, gruno = read(f)
    # the first quote of a mail that is not in the archive stays, a later one goes
    assert "> On behalf of the Subversion community." in answer
    assert "On behalf of the Subversion community" not in again
    assert "> (Please keep me in CC since I'm not subscribed to the list!)" in sebb
    assert "> Apache Infra recently helped to backfill lists.apache.org with some" in sebb
    assert "Please keep me in CC" not in gruno and "Is there something" not in gruno


HOUSE = """\
From a@example.org Mon Jan  1 00:00:00 2024
From: Ann <a@example.org>
Subject: Plumber

The plumber comes on Thursday at 9 am to replace the boiler valve. Please leave the
side gate open for him.

The water will be off from 9 to noon, so fill a kettle the night before.

From b@example.org Mon Jan  1 01:00:00 2024
From: Bob <b@example.org>
Subject: Re: Plumber

Thanks, I will leave it open.

On Mon, Jan 1, 2024 at 00:00, Ann <a@example.org> wrote:
> The plumber comes on Thursday at 9 am to replace the boiler valve.
> Please leave the side gate open for him.
>
> The water will be off from 9 to noon,   so fill a kettle the night
> before.
> _______________________________________________
> House mailing list
> house@example.org

From c@example.org Mon Jan  1 02:00:00 2024
From: Cy <c@example.org>
Subject: Re: Plumber

9 works for me too.

> Thanks, I will leave it open.
>
> > The plumber comes on Thursday at 9 am to
> > replace the boiler valve. Please leave
> > the side gate open for him.

From d@example.org Mon Jan  1 03:00:00 2024
From: Dee <d@example.org>
Subject: Lane

Did you see this?

> The council will resurface the lane in May, so parking moves to the
> school yard for two weeks.

From e@example.org Mon Jan  1 04:00:00 2024
From: Eve <e@example.org>
Subject: Re: Lane

Good to know.

>> The council will resurface the lane in May,
>> so parking moves to the school yard for two weeks.
"""


@pytest.mark.parametrize("read", [_mbox_bodies, _streamed_bodies], ids=["whole", "streamed"])
def test_quotes_that_differ_from_what_they_quote_are_indexed_once(tmp_path: Path,
                                                                   read: Reader) -> None:
    f = tmp_path / "house.mbox"
    f.write_text(HOUSE)
    ann, bob, cy, dee, eve = read(f)
    assert "boiler valve" in ann and "fill a kettle" in ann
    # a footer below the quote, whitespace and line breaks changed: the quote goes, the
    # footer (found nowhere else) stays
    assert "boiler valve" not in bob and "fill a kettle" not in bob
    assert "Thanks, I will leave it open." in bob and "> House mailing list" in bob
    # "> >" quoting a quote; the short quote of the reply itself stays
    assert "boiler valve" not in cy and "9 works for me too." in cy
    assert "> Thanks, I will leave it open." in cy
    # a mail that is not in the archive: the first quote of it stays, a later one goes
    assert "The council will resurface the lane in May" in dee
    assert "resurface" not in eve and "Good to know." in eve


def test_an_html_header_spanning_columns_names_each_of_them(tmp_path: Path) -> None:
    f = tmp_path / "mortality.html"
    f.write_text(
        "<html><body><table><tr><th>Rank</th><th>Country</th><th colspan='2'>1990</th>"
        "<th colspan='2'>2010</th><th>Region</th><th>Income</th></tr>"
        "<tr><td>153</td><td>Nigeria</td><td>213</td><td></td><td>143</td><td></td>"
        "<td>Africa</td><td>Lower middle</td></tr></table></body></html>")
    text = "\n".join(s.text for s in _parse(f).sections)
    # seven columns: still one keyed row each
    assert ("Rank: 153; Country: Nigeria; 1990: 213; 2010: 143; Region: Africa; "
            "Income: Lower middle") in text


def test_pdf_rows_with_merged_cells_are_made_plain() -> None:
    from ragctl.index.ingest import pdf_rows

    # a datasheet: a parameter merged down over its conditions
    assert pdf_rows([["PARAMETER", "CONDITION", "MAX", "UNITS"],
                     ["Conversion\nTime", "9-bit", "93.75", "ms"],
                     [None, "12-bit", "750", None]]) == [
        ["PARAMETER", "CONDITION", "MAX", "UNITS"],
        ["Conversion Time", "9-bit", "93.75", "ms"],
        ["Conversion Time", "12-bit", "750", "ms"]]
    # a merged name over a second header row; two rows stacked in each cell
    assert pdf_rows([["Layers", "Language", "TEDs", None, "mAP\n(0.75)"],
                     [None, None, "simple", "all", None],
                     ["6", "OTSL\nHTML", "0.965\n0.969", "0.955\n0.955", "0.88\n0.857"]]) == [
        ["Layers", "Language", "TEDs simple", "TEDs all", "mAP (0.75)"],
        ["6", "OTSL", "0.965", "0.955", "0.88"],
        ["6", "HTML", "0.969", "0.955", "0.857"]]
    # a label wrapped over two lines is one cell, not two rows
    assert pdf_rows([["Name", "Value"], ["Supply\nVoltage", "5.5"]])[1] == \
        ["Supply Voltage", "5.5"]


def test_a_table_found_by_alignment_is_cut_from_the_text_around_it() -> None:
    from ragctl.index.ingest import aligned_rows, table_lines
    from ragctl.text import PART_OF

    raw = [["Table 1", "", "", ""], ["Inhibitor", "Ecorr", "Polarization", "Corrosion"],
           ["concentration (g)", "(V)", "resistance (Ω)", "rate (mm/year)"], ["", "", "", ""],
           ["0", "-0.9393", "24.0910", "2.8163"], ["2", "-0.8276", "121.440", "1.5054"],
           ["10", "-0.5356", "246.080", "0.0919"],
           ["The plot of inhib", "itor concentr", "ation over d", "egree of sur"]]
    assert aligned_rows(raw) == [
        ["Inhibitor concentration (g)", "Ecorr (V)", "Polarization resistance (Ω)",
         "Corrosion rate (mm/year)"],
        ["0", "-0.9393", "24.0910", "2.8163"], ["2", "-0.8276", "121.440", "1.5054"],
        ["10", "-0.5356", "246.080", "0.0919"]]
    # prose aligned by chance: no run of figures, no table
    assert aligned_rows([["The plot", "of the", "data"], ["shows a", "straight", "line"]]) == []
    # a statement: labels over several columns, the periods some rows above the figures,
    # past a title and a section's name; each section's name a row of its own, which
    # table_lines gives the rows under it
    raw = [["", "", "Actual", "Actual", "Actual"],
           ["", "", "Jan - Mar", "April - June", "Jan - Dec"], ["", "", "2024", "2024", "2024"],
           ["- Summary", "Statement", "", "", ""],
           ["Revenue", "", "", "", ""],
           ["4105 - Earned", "Memberships", "181,366.42", "141,191.67", "650,944.08"],
           ["4110 - Earned", "Fee For Service", "16,743.75", "43,602.72", "202,387.63"],
           ["4215 - Contributed", "Donations", "733.24", "663.14", "2,805.17"],
           ["Expenses", "", "", "", ""], ["6000 - Salaries", "", "130,021.28", "125,440.02",
                                          "528,758.50"]]
    rows = aligned_rows(raw)
    assert rows[0] == ["", "Actual Jan - Mar 2024", "Actual April - June 2024",
                       "Actual Jan - Dec 2024"]
    assert rows[1] == ["Revenue", "", "", ""]
    assert rows[2] == ["4105 - Earned Memberships", "181,366.42", "141,191.67", "650,944.08"]
    assert rows[-2:] == [["Expenses", "", "", ""],
                         ["6000 - Salaries", "130,021.28", "125,440.02", "528,758.50"]]
    lines = table_lines(rows, header=True)
    assert lines[-1].startswith(f"6000 - Salaries; {PART_OF}: Expenses; Actual Jan - Mar")


def test_a_region_found_by_alignment_gives_each_of_its_tables_under_its_caption() -> None:
    from ragctl.index.ingest import aligned_tables, table_lines
    from ragctl.text import PART_OF

    # a paper's page: prose, then two tables, each under its caption, row groups named in
    # a column left of the labels; the prose above the first caption names no column
    prose = ["", "Reasoning: it leads", "in math", "tasks", "(CRUXEval).", "However,"]
    raw = [prose,
           ["", "", "Table 3: Performance comparison of the models", "", "", ""],
           ["", "", "Type", "MLA", "GDN-H", "Kimi"],
           ["", "", "HellaSwag", "81.7", "82.2", "82.9"],
           ["", "General", "MMLU", "71.6", "72.2", "73.8"],
           ["", "", "BBH", "71.6", "70.6", "72.9"],
           ["", "", "Table 4: Performance after the same SFT recipe", "", "", ""],
           ["", "", "Type", "MLA", "GDN-H", "Kimi"],
           ["", "", "BBH", "68.2", "68.5", "69.4"],
           ["", "", "MMLU-Pro", "65.7", "64.8", "67.4"],
           ["", "", "GPQA-Diamond", "57.1", "58.6", "62.1"]]
    first, second = aligned_tables(raw)
    assert first[0] == ["", "MLA", "GDN-H", "Kimi"]
    assert first[-1] == ["BBH", "71.6", "70.6", "72.9"]
    assert second[-1] == ["GPQA-Diamond", "57.1", "58.6", "62.1"]
    # a label over the columns left of the figures, under a name that runs over them too
    raw = [["Table 1: Wage Tax by Industry", "", "", "", "", "", "City of", "Revenue"],
           ["NAICS Sector / Industry", "Group", "", "FYTD 2023", "FYTD 2022", "FYTD 2021",
            "Growth", "Difference"],
           ["Construction", "", "", "39,433,054", "34,766,791", "35,068,936", "13.4%",
            "4,666,263"],
           ["Chemicals, Petroleum", "Refining", "", "6,868,702", "6,393,801", "6,296,799",
            "7.4%", "474,901"],
           ["Manufacturing (includes", "headquarter", "offices)", "59,437,423", "53,478,761",
            "52,262,306", "11.1%", "5,958,662"]]
    (table,) = aligned_tables(raw)
    assert table[0] == ["NAICS Sector / Industry Group", "FYTD 2023", "FYTD 2022",
                        "FYTD 2021", "Growth", "Difference"]
    assert table[2] == ["Chemicals, Petroleum Refining", "6,868,702", "6,393,801",
                        "6,296,799", "7.4%", "474,901"]
    # a group's name alone on its line: the rows under it, up to its total, are its parts
    raw = [["", "", "Fiscal Year", "Fiscal Year", "Fiscal Year"],
           ["", "Department / Agency", "2021", "2022", "2023"],
           ["First", "Judicial District", "", "", ""],
           ["", "Personal Services", "102,667,998", "108,874,250", "111,144,985"],
           ["Purchase", "of Services", "9,314,949", "8,643,039", "8,643,039"],
           ["", "Total", "111,982,947", "117,517,289", "119,788,024"],
           ["", "Police", "", "", ""],
           ["", "Personal Services", "708,324,818", "731,221,929", "753,577,996"],
           ["", "Total", "760,000,000", "781,000,000", "788,044,264"]]
    lines = table_lines(aligned_tables(raw)[0], header=True)
    assert f"Personal Services; {PART_OF}: Police; Fiscal Year 2021: 708,324,818" in lines[-2]
    assert lines[-1].startswith(f"Total; {PART_OF}: Police;")
    assert lines[3].startswith(f"Purchase of Services; {PART_OF}: First Judicial District;")
    # a label's first line alone, the next going on from it in small letters: one label
    raw[6] = ["", "Internet services and", "", "", ""]
    raw[7] = ["", "information providers", "708,324,818", "731,221,929", "753,577,996"]
    lines = table_lines(aligned_tables(raw)[0], header=True)
    assert lines[-2].startswith("Internet services and information providers; Fiscal Year")
    assert table_lines([["", "2024", "2025"], ["Commodities less used cars and", "", ""],
                        ["trucks", "16.9", "17.0"]], header=True)[1:] == [
        "Commodities less used cars and trucks; 2024: 16.9; 2025: 17.0"]


def test_an_aligned_statement_keeps_its_nil_cells_and_each_rows_period() -> None:
    from ragctl.index.ingest import aligned_rows

    # a filing's table drawn without lines: "$" apart from its figure, "—" for none, a
    # column's name over several lines under a group's name, notes' marks, and the rows
    # of each year under a line that names it
    raw = [["", "", "", "", "", "", "Financial effects", "of", "modifications"],
           ["", "", "", "", "", "", "Weighted", "", "Recorded"],
           ["", "", "", "", "Charge-", "", "average rate", "", "investment"],
           ["($", "in millions)", "", "Total", "offs (3)", "", "reduction", "", "reduction (4)"],
           ["Year", "Ended December", "31, 2022", "", "", "", "", "", ""],
           ["", "Commercial", "", "$ 397", "—", "", "10.69%", "$", "24"],
           ["", "Trial modifications (5)", "", "228", "—", "", "—", "", "—"],
           ["", "Total", "", "2,883", "23", "", "10.02%", "$", "742"],
           ["Year", "Ended December", "31, 2020", "", "", "", "", "", ""],
           ["", "Commercial", "", "3,042", "162", "", "0.74%", "$", "48"],
           ["", "Total", "", "8,582", "268", "", "9.73%", "$", "435"]]
    rows = aligned_rows(raw)
    assert rows[0] == ["", "Total", "Charge-offs", "Financial effects Weighted average rate "
                       "reduction", "of modifications Recorded investment reduction"]
    assert rows[1] == ["Commercial (Year Ended December 31, 2022)", "397", "—", "10.69%",
                       "24"]
    assert rows[2][0] == "Trial modifications (Year Ended December 31, 2022)"
    assert rows[-1] == ["Total (Year Ended December 31, 2020)", "8,582", "268", "9.73%", "435"]
    # rows without labels (tables side by side), or figures left among the labels: none
    assert aligned_rows([["", "", "Rate", "Tax"], ["", "", "1", "2"], ["", "", "3", "4"],
                         ["", "", "5", "6"], ["", "", "7", "8"]]) == []


def test_row_labels_nested_over_several_columns_name_their_groups() -> None:
    from ragctl.index.ingest import pdf_rows
    from ragctl.text import PART_OF

    raw = [["", None, None, None, None],
           ["Group", None, None, "Weight", "% change"],
           ["All items", None, None, "100,00", "6,3"],
           ["Geographic\nindices", "CPI per province", "Western\nCape", "17,21", "6,6"],
           [None, None, "Free State", "5,95", "7,8"],
           ["Deciles", "CPI per decile", "1", "0,48", "9,9"]]
    assert pdf_rows(raw) == [
        ["Group", PART_OF, "Weight", "% change"], ["All items", "", "100,00", "6,3"],
        ["Western Cape", "Geographic indices, CPI per province", "17,21", "6,6"],
        ["Free State", "Geographic indices, CPI per province", "5,95", "7,8"],
        ["1", "Deciles, CPI per decile", "0,48", "9,9"]]


def test_a_tables_caption_above_it_and_its_spacer_columns() -> None:
    from ragctl.index.ingest import caption_above, pdf_rows

    def word(text: str, x0: float, top: float) -> dict[str, float | str]:
        return {"text": text, "x0": x0, "x1": x0 + 6 * len(text), "top": top,
                "bottom": top + 9}

    words = [word("Results", 50, 40), word("TABLE", 100, 100), word("II:", 140, 100),
             word("Speed", 160, 100), word("and", 200, 100), word("accuracy", 100, 112),
             word("Method", 100, 140)]
    # the caption and its second line, down to the table's top (the header row "Method"
    # is inside the table's box)
    assert caption_above(words, (90, 130, 400, 300)) == "TABLE II: Speed and accuracy"
    assert caption_above(words[:1], (90, 130, 400, 300)) is None  # a heading, no caption
    assert caption_above(words, (90, 200, 400, 300)) is None  # too far above
    # an unnamed ruled gap between named columns, with a value split into it
    raw = [["Metrics", "Q3 2023", "Q4 2023", None, "FY 2023"],
           ["Revenue", "$960M", "$1,001M", None, "$3,859M"],
           ["Margin", "23.0%", "2", "4.8%", "21.8%"], ["Growth", "5%", "5%", None, "9%"]]
    # two such gaps in a row, and one at the table's edge
    assert pdf_rows([["Date", "Item", "Price", "Discount", None, None, "Total", None],
                     ["12/5", "Training", "$3,500", "-", None, None, "$3,500", None],
                     ["12/11", "Leadership", "$4,500", "25%", None, None, "$3,375", None]]
                    )[2] == ["12/11", "Leadership", "$4,500", "25%", "$3,375"]
    # two whole figures side by side: a column of its own, not one value split in two
    assert len(pdf_rows([["Name", "Held", None, "Pledged"], ["A", "3,550,000", "", "0"],
                         ["B", "1,000", "1,000", "0"], ["C", "2,000", "2,000", "0"]])[0]) == 4
    assert pdf_rows(raw) == [["Metrics", "Q3 2023", "Q4 2023", "FY 2023"],
                             ["Revenue", "$960M", "$1,001M", "$3,859M"],
                             ["Margin", "23.0%", "24.8%", "21.8%"], ["Growth", "5%", "5%", "9%"]]


def test_a_statements_sections_name_the_rows_under_them_up_to_their_total() -> None:
    from ragctl.index.ingest import table_lines

    lines = table_lines([["", "2023", "2022"], ["Net sales:", "", ""],
                         ["Services", "85,200", "78,129"], ["Total net sales", "383,285",
                                                            "394,328"],
                         ["Cost of sales:", "", ""], ["Services", "24,855", "22,075"],
                         ["Total cost of sales", "214,137", "223,546"],
                         ["Gross margin", "169,148", "170,782"]], header=True)
    assert lines[1:] == [
        "Net sales:", "Services; Part of: Net sales; 2023: 85,200; 2022: 78,129",
        "Total net sales; Part of: Net sales; 2023: 383,285; 2022: 394,328",
        "Cost of sales:", "Services; Part of: Cost of sales; 2023: 24,855; 2022: 22,075",
        "Total cost of sales; Part of: Cost of sales; 2023: 214,137; 2022: 223,546",
        "Gross margin; 2023: 169,148; 2022: 170,782"]  # past the section's total
    # a label wrapped over two lines, or a field with its value, names no section
    from ragctl.index.ingest import _section_name
    assert _section_name("Police") and _section_name("First Judicial District")
    assert not _section_name("Club membership for shopping clubs, fraternal, or")
    assert not _section_name("Serienummer: SDMPP373MPP15")
    # a first column with a name of its own: a row of one cell is its value, no section
    assert table_lines([["Claim ID", "Status", "Amount"], ["No results", "", ""],
                        ["A-1", "Paid", "12"]], header=True)[1] == "Claim ID: No results"
    # a font's "!" for a currency sign before a figure is left out
    from ragctl.index.ingest import pdf_rows
    assert pdf_rows([["Net income", "! 22,956"], ["Basic", "1.47"]])[0] == [
        "Net income", "22,956"]


def test_a_statements_periods_over_groups_and_its_title_in_capitals() -> None:
    from ragctl.index.ingest import aligned_rows

    raw = [["", "", "COMBINED", "STATEMENTS", "OF REVENUES", "", "", "", ""],
           ["(in thousands of", "dollars)", "March 31,", "2026", "", "", "", "March 31, 2025",
            ""],
           ["", "", "Group", "Affiliates", "Total", "", "Group", "Affiliates", "Total"],
           ["Operating revenues", "and other support", "", "", "", "", "", "", ""],
           ["Net patient service", "revenues $", "2,250,816", "$ 288,232", "2,558,261", "$",
            "2,094,088", "226,961", "2,321,049"],
           ["Other revenue", "", "466,075", "114,461", "529,784", "", "343,866", "78,882",
            "401,660"],
           ["Investment income", "", "11,436", "5,075", "16,511", "", "30,973", "5,684",
            "36,657"]]
    rows = aligned_rows(raw)
    assert rows[0] == ["", "March 31, 2026 Group", "March 31, 2026 Affiliates",
                       "March 31, 2026 Total", "March 31, 2025 Group",
                       "March 31, 2025 Affiliates", "March 31, 2025 Total"]
    assert rows[1] == ["Net patient service revenues", "2,250,816", "288,232", "2,558,261",
                       "2,094,088", "226,961", "2,321,049"]
    assert rows[-1][0] == "Investment income"


def test_periods_written_over_pairs_of_columns_and_figures_packed_in_ruled_cells() -> None:
    from ragctl.index.ingest import _packed, aligned_rows

    raw = [["", "", "(In millions, except", "per share", "amounts,", "", "unaudited)", "", ""],
           ["", "", "", "", "Quarter Ended", "", "June 30,", "", "Year To Date", "June", "30,"],
           ["", "", "", "", "2025", "", "2026", "", "2025", "", "2026"],
           ["Revenues", "", "", "$", "96,428", "$", "119,796", "$", "186,662", "$", "229,692"],
           ["Costs and", "expenses:", "", "", "", "", "", "", "", "", ""],
           ["Cost of", "revenues", "", "", "39,039", "", "45,943", "", "75,400", "", "87,214"],
           ["Research", "and development", "", "", "13,808", "", "18,219", "", "27,364", "",
            "35,251"],
           ["Sales and", "marketing", "", "", "7,101", "", "8,403", "", "13,273", "", "16,009"]]
    rows = aligned_rows(raw)
    assert rows[0] == ["", "Quarter Ended June 30, 2025", "Quarter Ended June 30, 2026",
                       "Year To Date June 30, 2025", "Year To Date June 30, 2026"]
    assert rows[1] == ["Revenues", "96,428", "119,796", "186,662", "229,692"]
    assert rows[-1][0] == "Sales and marketing"
    # a ruled table whose cells each hold several figures is read again by alignment
    assert _packed([["Revenues $ 96,428 $ 119,796", "$ 186,662 $ 229,692"],
                    ["Cost of revenues 39,039 45,943", "75,400 87,214"],
                    ["Research and development 13,808 18,219", "27,364 35,251"]])
    assert not _packed([["Revenues", "96,428"], ["Cost", "39,039"], ["R&D", "13,808"]])


def test_changes_signed_apart_and_labels_outside_the_rules() -> None:
    # a weekly release: each change's sign set apart from its figure, a column's name
    # over the signs ("Feb" of "Feb 25, 2026"), the rules drawn between the figures'
    # columns alone, the rows' labels left of them
    from ragctl.index.ingest import _beside, _goes_on, _unlabelled, aligned_rows

    raw = [["", "", "Week ended", "", "Change", "from week", "ended", "Wednesday"],
           ["Federal Reserve Banks", "", "Mar 4, 2026", "Feb", "25, 2026", "Mar", "5, 2025",
            "Mar 4, 2026"],
           ["Reserve Bank credit", "", "6,575,992", "+", "5,965", "-", "134,597", "6,580,913"],
           ["Bills2", "", "337,199", "+", "15,893", "+", "141,856", "344,076"],
           ["Notes and bonds,", "nominal2", "3,602,109", "", "0", "-", "17,535", "3,602,109"],
           ["Federal agency debt", "", "2,347", "", "0", "", "0", "2,347"],
           ["Float", "", "-525", "-", "211", "+", "9", "-886"]]
    rows = aligned_rows(raw)
    assert rows[0][1:] == ["Week ended Mar 4, 2026", "Change Feb 25, 2026",
                           "from week ended Mar 5, 2025", "Wednesday Mar 4, 2026"]
    assert rows[2] == ["Bills2", "337,199", "+15,893", "+141,856", "344,076"]
    assert rows[3] == ["Notes and bonds, nominal2", "3,602,109", "0", "-17,535", "3,602,109"]
    # a label wrapped over three columns, its words going on in small letters: one cell
    wrapped = aligned_rows([
        ["", "", "", "Week ended", "Change", "Wednesday"],
        ["Federal", "Reserve Banks", "", "Mar 4, 2026", "Feb 25, 2026", "Mar 4, 2026"],
        ["Currency", "in circulation12", "", "2,435,110", "+4,110", "2,438,431"],
        ["Reverse", "repurchase", "agreements13", "325,744", "+4,404", "319,504"],
        ["Foreign", "official and", "international accounts", "317,821", "-2,794", "318,627"],
        ["Treasury", "cash holdings", "", "344", "-5", "278"]])
    assert wrapped[-1] == ["Treasury cash holdings", "344", "-5", "278"]
    assert wrapped[0][1:] == ["Week ended Mar 4, 2026", "Change Feb 25, 2026",
                              "Wednesday Mar 4, 2026"]
    # a label's bracket closed on the next line goes on there; an unclosed one repeated
    # (a line drawn twice) does not
    assert _goes_on("Net portfolio holdings of MS Facilities 2020 LLC (Main",
                    "Street Lending Program)8")
    assert not _goes_on("Common stock (authorized 75,000,000", "Common stock (authorized")
    # a statement's nil cells ("-" over no figure) are no column of signs
    assert aligned_rows([["", "2025", "2024", "2023"], ["Rent", "-", "1,200", "1,100"],
                         ["Heat", "-", "300", "280"], ["Water", "-", "90", "85"]])[1] == [
        "Rent", "-", "1,200", "1,100"]

    def word(text: str, x0: float, top: float) -> dict[str, object]:
        return {"text": text, "x0": x0, "x1": x0 + 6 * len(text), "top": top,
                "bottom": top + 8}

    words = [word("Bills2", 40, 100), word("337,199", 260, 100), word("344,076", 520, 100),
             word("Gold", 40, 112), word("stock", 70, 112), word("11,041", 260, 112),
             word("11,041", 520, 112), word("Page 2", 40, 300)]
    assert _beside((250, 95, 500, 125), words) == (40, 95, 562, 125)
    assert _unlabelled([["337,199", "+ 15,893"], ["11,041", "0"], ["2,347", "0"]])
    assert not _unlabelled([["Bills", "337,199"], ["Gold stock", "11,041"], ["Notes", "1"]])


def test_a_statement_table_of_td_cells_is_keyed_by_its_years(tmp_path: Path) -> None:
    # as filings lay them out: years spanning two cells each, "$" and ")" in cells of
    # their own, empty cells between the columns, a second row of names; and a hidden
    # inline-XBRL header that no reader sees
    f = tmp_path / "10-k.html"
    f.write_text(
        "<html><body><div style='display: none'><ix:header>us-gaap:EuropeMember"
        "</ix:header></div><p>Revenue by region.</p><table>"
        "<tr><td></td><td></td><td colspan='2'>2021</td><td></td><td colspan='2'>2020</td></tr>"
        "<tr><td>Europe</td><td></td><td>$</td><td>9,959,841</td><td></td><td>$</td>"
        "<td>4,473,173</td></tr>"
        "<tr><td>Net income (loss)</td><td></td><td></td><td>2,111,812</td><td></td>"
        "<td>(2,208,887</td><td>)</td></tr></table>"
        "<table><tr><td></td><td colspan='2'>2021</td><td colspan='2'>2020</td></tr>"
        "<tr><td>Quarter Ended</td><td>High ($)</td><td>Low ($)</td><td>High ($)</td>"
        "<td>Low ($)</td></tr>"
        "<tr><td>March 31,</td><td>3.02</td><td>1.72</td><td>1.95</td><td>0.70</td></tr>"
        "</table></body></html>")
    text = "\n".join(s.text for s in _parse(f).sections)
    assert "Europe; 2021: $9,959,841; 2020: $4,473,173" in text
    assert "Net income (loss); 2021: 2,111,812; 2020: (2,208,887)" in text
    assert ("Quarter Ended: March 31,; 2021 High ($): 3.02; 2021 Low ($): 1.72; "
            "2020 High ($): 1.95; 2020 Low ($): 0.70") in text
    assert "EuropeMember" not in text


def test_a_docx_table_whose_first_header_cell_is_empty_keeps_its_columns(
        tmp_path: Path) -> None:
    import docx

    d = docx.Document()
    t = d.add_table(rows=3, cols=3)
    rows = [["", "Price per kilo", "Varieties"],
            ["Apples", "2.10", "Braeburn, Gala"], ["Pears", "3.20", "Conference"]]
    for r, row in enumerate(rows):
        for c, v in enumerate(row):
            t.cell(r, c).text = v
    d.save(tmp_path / "fruit.docx")
    text = _parse(tmp_path / "fruit.docx").sections[0].text
    assert "Apples; Price per kilo: 2.10; Varieties: Braeburn, Gala" in text
    assert "Pears; Price per kilo: 3.20; Varieties: Conference" in text


def test_an_extractor_s_spread_colspan_keeps_the_header_s_name() -> None:
    from ragctl.index.ingest import html_to_sections

    _, sections = html_to_sections(
        "<table><tr><th>Rank</th><th>Country</th><th>1990</th><th/><th>2010</th><th/></tr>"
        "<tr><td>153</td><td>Nigeria</td><td>213</td><td/><td>143</td><td/></tr></table>")
    assert "Rank: 153; Country: Nigeria; 1990: 213; 2010: 143" in sections[0].text


def test_pdf_blanks_drawn_over_text_do_not_split_its_words(tmp_path: Path) -> None:
    import pdfplumber
    from fpdf import FPDF

    from ragctl.index.ingest import _without_overlaid_blanks

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    pdf.add_page()
    pdf.text(20, 20, "Effective 02/10/2016 and 12/16/2015 as filed")
    pdf.text(38, 20, " " * 30)  # a column padded with spaces laid over the next one
    f = tmp_path / "padded.pdf"
    f.write_bytes(bytes(pdf.output()))
    with pdfplumber.open(f) as doc:
        page = doc.pages[0]
        assert "02/10/2016" not in page.extract_text()  # as the PDF draws it
        text = _without_overlaid_blanks(page).extract_text()
    assert text == "Effective 02/10/2016 and 12/16/2015 as filed"  # real spaces stay


def test_pdf_text_boxes_run_together_are_cut_where_the_page_sets_them_apart(
        tmp_path: Path) -> None:
    from fpdf import FPDF
    from pypdf import PdfReader

    from ragctl.index.ingest import _cut

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    pdf.add_page()
    # an invoice's header: each value drawn, then its label to the left of it
    fields = [("Factuurnummer:", "993548900"), ("Ordernummer:", "12572103"),
              ("Orderdatum:", "2014"), ("Klantnummer:", "6669263")]
    for i, (label, value) in enumerate(fields * 3):
        pdf.text(120, 20 + 8 * i, value)
        pdf.text(20, 20 + 8 * i, label)
    pdf.text(20, 130, "Apple iPad Air Wifi 16 GB Zilver, one piece, paid in full by iDEAL")
    f = tmp_path / "factuur.pdf"
    f.write_bytes(bytes(pdf.output()))
    assert "12572103Ordernummer:" in PdfReader(f).pages[0].extract_text()  # as drawn
    text = parse(f, f.read_bytes()).sections[0].text
    assert "12572103 Ordernummer:" in text and "6669263 Klantnummer:" in text
    assert "Apple iPad Air Wifi 16 GB Zilver" in text  # in the order it was read
    words = {"29.99", "€", "TTC", "Date", "limite", "Montant"}
    assert _cut("TTCDate", words) == "TTC Date" and _cut("Montant", words) == "Montant"
    assert _cut("TTCDatelimite", words) == "TTC Date limite"
    assert _cut("iPhone", words) == "iPhone"  # no known words: as it is


def test_an_invoice_that_draws_its_labels_apart_from_their_values_is_read_by_line(
        tmp_path: Path) -> None:
    from fpdf import FPDF
    from pypdf import PdfReader

    from ragctl.index.ingest import labels_apart

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    pdf.add_page()
    pdf.text(20, 20, "Sammy Maystone INVOICE # invoice_number_1")
    fields = [("Date:", "Jan 1, 2022"), ("Payment Terms:", "Net 30 days"),
              ("Due Date:", "Jan 31, 2022"), ("PO Number:", "po_number_123")]
    for i, (_, value) in enumerate(fields):  # the values first, right-aligned
        pdf.text(120, 40 + 8 * i, value)
    for i, (label, _) in enumerate(fields):  # then the labels, one under the other
        pdf.text(80, 40 + 8 * i, label)
    f = tmp_path / "invoice.pdf"
    f.write_bytes(bytes(pdf.output()))
    drawn = PdfReader(f).pages[0].extract_text()
    assert labels_apart(drawn) and drawn.index("Date:") > drawn.index("po_number_123")
    lines = parse(f, f.read_bytes()).sections[0].text.splitlines()
    assert "Date: Jan 1, 2022" in lines and "Payment Terms: Net 30 days" in lines
    assert "PO Number: po_number_123" in lines  # its underscores kept: no fill-in blanks
    # labels alone in prose, not in a run, leave a page as it is drawn
    assert not labels_apart("Theorem 2.\nProof:\nBy induction on n.\nThen:\nit holds.")
    values = "Jan 1, 2022\nNet 30 days\nJan 31, 2022\n"
    assert labels_apart(values + "Date\n:\nPayment Terms\n:\nDue Date\n:\n")
    # an empty form's labels, no values drawn apart: as it is drawn
    assert not labels_apart("Legal name:\nBusiness number:\nCity:\nPostal code:\n"
                            "If you are a licenced cultivator, complete the form.")
    # a transcript's caption, its colons a column of its own, is no run of labels
    assert not labels_apart("MICHAEL A. KNOWLES, :\nWARDEN, :\nPetitioner :\n"
                            "ALEXANDRE MIRZAYANCE. :\n")


def test_a_table_written_in_text_is_keyed_across_pages_and_a_word_a_line_page_by_line(
        tmp_path: Path) -> None:
    from fpdf import FPDF

    from ragctl.index.ingest import scattered, text_tables

    page1 = ("ITEM DETAILS:\n----------\nLine | Part Number | Description | Qty | Unit Price\n"
             "----------\n1 | QE-MCU-5590 | Microcontroller Unit | 500 | $12.50\n"
             "| Rev. B | 32-bit, 120MHz\n----------")
    page2 = ("2 | QE-PCB-4567 | Printed Circuit Board | 300 | $45.00\n----------\n"
             "Subtotal: $6,295.00\nName | Role | Date\nAna | Buyer | 12/05/2024")
    tables, head = text_tables(page1)
    assert tables == [[["Line", "Part Number", "Description", "Qty", "Unit Price"],
                       ["1", "QE-MCU-5590", "Microcontroller Unit", "500", "$12.50"]]]
    more, head = text_tables(page2, head)  # the table goes on over the page
    assert more[0][1] == ["2", "QE-PCB-4567", "Printed Circuit Board", "300", "$45.00"]
    assert more[1] == [["Name", "Role", "Date"], ["Ana", "Buyer", "12/05/2024"]]
    # a page of such a table: its rows follow the page, keyed by the header
    pdf = FPDF()
    pdf.set_font("helvetica", size=10)
    pdf.add_page()
    lines = ["Line | Part Number | Description | Qty | Unit Price",
             "1 | QE-MCU-5590 | Microcontroller Unit | 500 | $12.50",
             "2 | QE-PCB-4567 | Printed Circuit Board | 300 | $45.00"]
    for y, line in enumerate(lines):
        pdf.text(15, 20 + 8 * y, line)
    f = tmp_path / "order.pdf"
    f.write_bytes(bytes(pdf.output()))
    doc = parse(f, f.read_bytes())
    assert "Description: Printed Circuit Board; Qty: 300; Unit Price: $45.00" in \
        doc.sections[1].text
    # a page that pypdf reads a word a line ("Line\n|\nPart\nNumber"), and one it does not
    assert scattered("\n".join("Line | Part Number | Description".split() * 8))
    assert not scattered("\n".join(lines * 20))


def test_a_flattened_filled_form_keeps_each_value_beside_its_label(tmp_path: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    pdf.add_page()
    labels = ["Name: ________________________", "Nature of Business: ______________",
              "Date: ________________", "Cost Centre: ______________"]
    for i, label in enumerate(labels):  # the form as printed
        pdf.text(20, 30 + 12 * i, label)
    # the values filled in, drawn after the whole form (as a flattened form draws them),
    # a little above their blanks' line; the cost centre one sign a box
    for i, value in enumerate(["Nick Hu", "Cambridge trip", "October 11, 2021",
                               "N R X Y / 1 2 3"]):
        pdf.text(70, 29 + 12 * i, value)
    f = tmp_path / "expenses.pdf"
    f.write_bytes(bytes(pdf.output()))
    from pypdf import PdfReader

    drawn = PdfReader(f).pages[0].extract_text()
    assert drawn.index("Cambridge trip") > drawn.index("Cost Centre")  # as the page draws it
    doc = parse(f, f.read_bytes())
    lines = doc.sections[0].text.splitlines()
    assert lines == ["Name: Nick Hu", "Nature of Business: Cambridge trip",
                     "Date: October 11, 2021", "Cost Centre: NRXY/123"]
    # a page without fill-in blanks is read as it is drawn
    plain = tmp_path / "plain.pdf"
    plain.write_bytes(make_pdf(["Name: Nick Hu. The trip was to Cambridge."]))
    assert parse(plain, plain.read_bytes()).sections[0].text.strip() == \
        "Name: Nick Hu. The trip was to Cambridge."


def test_a_mail_whose_body_is_another_text_type_is_read(tmp_path: Path) -> None:
    note = tmp_path / "howto-rebase.txt"  # a how-to kept with a mail's header
    note.write_text("Date: Sat, 5 Jan 2008 20:17:40 -0500\nFrom: Ana Ruiz <ana@example.org>\n"
                    "Subject: how to rebase a topic branch\nContent-type: text/asciidoc\n\n"
                    "How to rebase\n=============\n\nFirst fetch the upstream branch, then "
                    "rebase the topic onto it.\n")
    doc = parse(note, note.read_bytes())
    assert doc.title == "how to rebase a topic branch"
    assert "rebase the topic onto it" in doc.sections[0].text
    md = tmp_path / "minutes.eml"
    md.write_text("From: Bo <bo@example.org>\nSubject: Minutes\nMIME-Version: 1.0\n"
                  "Content-Type: multipart/mixed; boundary=b\n\n--b\n"
                  "Content-Type: text/markdown\n\n# Minutes\n\nThe boiler is serviced in "
                  "October.\n--b\nContent-Type: text/calendar\n\nBEGIN:VCALENDAR\n"
                  "END:VCALENDAR\n--b--\n")
    text = parse(md, md.read_bytes()).sections[0].text
    assert "boiler is serviced in October" in text and "VCALENDAR" not in text


def test_a_mail_whose_address_header_cannot_be_parsed_is_read(tmp_path: Path) -> None:
    mail = tmp_path / "offer.eml"  # an encoded sender name that decodes to a line break
    mail.write_bytes(b"From: =?UTF-8?B?QW5hIFJ1aXoNCg==?= <ana@example.org>\r\n"
                     b"Subject: Boiler service\r\nDate: Wed, 8 Jul 2015 12:35:24 -0700\r\n\r\n"
                     b"The boiler is serviced every October.\r\n")
    doc = parse(mail, mail.read_bytes())
    text = doc.sections[0].text
    assert doc.title == "Boiler service" and "serviced every October" in text
    assert text.startswith("From: Ana Ruiz <ana@example.org>")


def test_an_empty_plain_part_or_a_forward_still_gives_the_mail_its_text(tmp_path: Path) -> None:
    from email.message import EmailMessage

    invite = EmailMessage()
    invite["From"], invite["Subject"] = "Ana <ana@example.org>", "Invitation: boiler service"
    invite.set_content("")  # the plain part an invitation leaves empty
    invite.add_alternative("<html><body><p>When: Friday 27 January, 3 PM.</p>"
                           "<p>Where: the boiler room.</p></body></html>", subtype="html")
    f = tmp_path / "invite.eml"
    f.write_bytes(bytes(invite))
    assert "Where: the boiler room." in parse(f, f.read_bytes()).sections[0].text
    inner = EmailMessage()
    inner["From"], inner["Subject"] = "Bo <bo@example.org>", "Boiler"
    inner["Date"] = "Wed, 21 Feb 2024 21:58:17 +0000"
    inner.set_content("The boiler is serviced every October.")
    fwd = EmailMessage()
    fwd["From"], fwd["Subject"] = "Ana <ana@example.org>", "Fwd: Boiler"
    fwd.set_content("")
    fwd.add_attachment(inner)  # forwarded as an attachment (message/rfc822)
    g = tmp_path / "fwd.eml"
    g.write_bytes(bytes(fwd))
    text = parse(g, g.read_bytes()).sections[0].text
    assert text.startswith("From: Ana <ana@example.org>\nSubject: Fwd: Boiler\n\n")
    assert "From: Bo <bo@example.org>" in text and "serviced every October" in text


def test_a_mails_attached_files_are_read_under_its_place(tmp_path: Path) -> None:
    from email.message import EmailMessage

    msg = EmailMessage()
    msg["From"], msg["Subject"] = "Larkspur Hardware <shop@example.org>", "Your invoice"
    msg["Date"] = "Tue, 3 Mar 2026 10:00:00 +0000"
    msg.set_content("Please find your invoice attached.")
    msg.add_attachment(make_pdf(["Invoice 2041. Total due: $81.14 by 1 May 2026."]),
                       maintype="application", subtype="pdf", filename="invoice-2041.pdf")
    msg.add_attachment("Item,Price\nHammer,24.00\nNails,3.50\n", subtype="csv",
                       filename="items.csv")
    msg.add_attachment(b"\x00\x01binary", maintype="application", subtype="octet-stream",
                       filename="tool.bin")  # not a kind of file ragctl reads: left out
    msg.add_attachment(b"%PDF-1.4 broken", maintype="application", subtype="pdf",
                       filename="broken.pdf")
    f = tmp_path / "invoice.eml"
    f.write_bytes(bytes(msg))
    doc = parse(f, f.read_bytes())
    assert "Please find your invoice attached." in doc.sections[0].text
    places = {s.place: s.text for s in doc.sections[1:]}
    pdf = next(t for p, t in places.items() if p.endswith("> invoice-2041.pdf > p. 1"))
    assert "Total due: $81.14" in pdf
    assert next(p for p in places).startswith("Your invoice (Larkspur Hardware")
    assert any(p.endswith("> items.csv") and "Hammer" in t for p, t in places.items())
    assert not any("tool.bin" in p for p in places)
    assert doc.notes and doc.notes[0].startswith("attachment broken.pdf: ")


def test_a_signature_fields_value_is_no_text() -> None:
    from pypdf.generic import DictionaryObject, NameObject, TextStringObject

    from ragctl.index.ingest import _field_value

    signature = DictionaryObject({NameObject("/Type"): NameObject("/Sig"),
                                  NameObject("/Name"): TextStringObject("Ana Ruiz")})
    assert _field_value(signature) == "" and _field_value([signature]) == ""

    class Held:  # the value held by reference, as signatures hold it (an IndirectObject)
        def get_object(self) -> DictionaryObject:
            return signature

    assert _field_value(Held()) == ""
    assert _field_value(TextStringObject("A-113")) == "A-113"
    assert _field_value(NameObject("/Yes")) == "Yes"


def test_a_pdf_table_s_header_written_above_its_ruled_body_names_its_columns(
        tmp_path: Path) -> None:
    # a financial statement: the periods are printed above the ruled lines of figures
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=10)
    pdf.add_page()
    pdf.cell(0, 6, "CONDENSED STATEMENTS OF OPERATIONS (In millions)", new_x="LMARGIN",
             new_y="NEXT")
    pdf.ln(4)
    for line in (("", "Three Months Ended", "Twelve Months Ended"),
                 ("", "September 30, 2023", "September 30, 2023")):
        pdf.cell(80, 6, line[0])
        pdf.cell(50, 6, line[1], align="C")
        pdf.cell(50, 6, line[2], align="C", new_x="LMARGIN", new_y="NEXT")
    with pdf.table(col_widths=(80, 50, 50), first_row_as_headings=False) as table:
        for r in (("Products", "67,184", "298,085"), ("Services", "22,314", "85,200"),
                  ("Total net sales", "89,498", "383,285")):
            table.row(r)
    f = tmp_path / "statement.pdf"
    f.write_bytes(bytes(pdf.output()))
    rows = "\n\n".join(s.text for s in _parse(f).sections)
    assert ("Services; Three Months Ended September 30, 2023: 22,314; Twelve Months Ended "
            "September 30, 2023: 85,200") in rows


def test_a_header_of_several_rows_names_each_column_by_every_row_above_it() -> None:
    from ragctl.index.ingest import stacked_header

    raw: list[list[str | None]] = [
        ["Table 1. Overview of the Projections", None, None, None, None, None],
        ["", "Year over Year", None, None, "", "Q4 over Q4 2/"],
        ["", "Estimate", "Projections", None, "", "Projections"],
        ["", "2022", "2023", "2024", "", "2024"],
        ["World Output", "3.4", "2.9", "3.1", "", "3.0"],
        ["Spain", "5.2", "1.1", "2.4", "", "2.8"]]
    titles, head, rows = stacked_header(raw)  # type: ignore[misc]
    assert titles == ["Table 1. Overview of the Projections"]
    assert head == ["", "Year over Year Estimate 2022", "Year over Year Projections 2023",
                    "Year over Year Projections 2024", "Q4 over Q4 Projections 2024"]
    assert rows[1] == ["Spain", "5.2", "1.1", "2.4", "2.8"]
    # one header row is no stack; a table of words is none
    assert stacked_header(raw[2:]) is None
    assert stacked_header([["Name", "Role", "Team"], ["", "Lead", "Core"],
                           ["Ana", "Dev", "Web"]]) is None


def test_a_header_s_abbreviation_dot_does_not_end_its_rows() -> None:
    from ragctl.index.ingest import table_lines

    # "MIN.: 10" would end a sentence in the middle of the row
    lines = table_lines([["PARAMETER", "SYMBOL", "MIN.", "MAX.", "UNIT"],
                         ["Clock frequency", "f (SMBCLK)", "10", "400", "kHz"]], header=True)
    assert lines[1] == ("PARAMETER: Clock frequency; SYMBOL: f (SMBCLK); MIN: 10; MAX: 400; "
                        "UNIT: kHz")


def test_a_header_is_told_from_figures_by_kind_and_not_carried_into_them() -> None:
    from ragctl.index.ingest import pdf_rows, table_lines, typed_header

    # an election table: long names with dates in them over columns of figures; the
    # first column merged down the body (None) takes nothing from the header
    raw = [["REGIONE", "COMUNE", "NUMERO\nCOMUNI", "POPOLAZIONE\nal 31/12/2021\nD.P.R. 20/01/2023",
            "ELETTORI\nRilevazione al\n31/12/2023"],
           [None, "CORVARA", "1", "206", "510"], [None, "FARINDOLA", "1", "1.357", "1.578"]]
    rows = pdf_rows(raw)
    assert rows[1] == ["", "CORVARA", "1", "206", "510"] and typed_header(rows)
    assert table_lines(rows, header=True)[2] == (
        "COMUNE: FARINDOLA; NUMERO COMUNI: 1; POPOLAZIONE al 31/12/2021 D.P.R. 20/01/2023: "
        "1.357; ELETTORI Rilevazione al 31/12/2023: 1.578")
    # two columns: a year and a price under their names; not a label and its value
    assert typed_header([["Year", "Average Price"], ["1850", "18.93"], ["1851", "18.93"]])
    assert not typed_header([["Name", "Ana"], ["Age", "34"], ["Height", "1.70"]])
    # a first row of figures, or one of names over names, is no header by kind
    assert not typed_header([["2021", "Oslo", "Bergen"], ["1", "2", "3"], ["4", "5", "6"]])
    assert not typed_header([["Name", "Role", "Team"], ["Ana", "Lead", "Core"],
                             ["Bo", "Dev", "Web"]])


def test_periods_head_a_financial_tables_columns() -> None:
    from ragctl.index.ingest import _header_row

    # a slide's "Metrics | Q4 2023 | FY 2023" over "Total Revenue | $1,076M | $4,154M"
    assert _header_row(["Metrics", "Q4 2023", "FY 2023"])
    assert _header_row(["", "Q1 FY25", "Q4 FY24", "Q1 FY24"])
    assert not _header_row(["Total Revenue", "$1,076M", "$4,154M"])
    assert not _header_row(["Q4", "2023 12", "FY"])  # two numbers in a label: no period


def test_a_header_over_several_unnamed_label_columns_keys_its_rows_over_the_pages(
        tmp_path: Path) -> None:
    from fpdf import FPDF

    from ragctl.index.ingest import _header_row, table_lines

    # a town budget: an account's code, its group and its line, then the years' figures;
    # the header names the figures' columns alone
    head = ["", "", "", "FY24 ACTUAL", "FY25 ACTUAL", "FY26 PROPOSED"]
    assert _header_row(head)
    assert not _header_row(["", "", "", "Supplies", "", ""])  # a group's name, no header
    assert not _header_row(["", "", "TOTAL", "Budget"])  # two names after the labels
    rows = [head, ["", "5100", "Personnel", "", "", ""],
            ["", "", "Police Chief Salary", "$96,500", "$98,430", "$101,383"]]
    assert table_lines(rows, header=True)[1:] == [
        "5100; Personnel", "Police Chief Salary; FY24 ACTUAL: $96,500; FY25 ACTUAL: "
        "$98,430; FY26 PROPOSED: $101,383"]
    pdf = FPDF()
    pdf.set_font("helvetica", size=9)
    body = [("", "5100", "Personnel", "", "", ""),
            ("", "", "Police Chief Salary", "$96,500", "$98,430", "$101,383"),
            ("", "", "Police Wages", "$525,636", "$505,000", "$510,050"),
            ("", "", "Police Assistant", "$16,699", "$21,026", "$21,658")]
    pdf.add_page()
    with pdf.table(first_row_as_headings=False) as table:
        for r in [tuple(head), *body]:
            table.row(r)
    pdf.add_page()  # the table goes on without its header
    with pdf.table(first_row_as_headings=False) as table:
        for r in [("", "", "Fire Chief Salary", "$91,694", "$93,528", "$96,334"),
                  ("", "", "Fire Wages", "$302,993", "$311,118", "$321,659"),
                  ("", "", "TOTAL", "$1,016,823", "$1,008,076", "$1,029,426")]:
            table.row(r)
    pdf.add_page()  # and ends with one row alone on a page
    with pdf.table(first_row_as_headings=False) as table:
        table.row(("", "", "GRAND TOTAL", "$10,844,514", "$11,158,628", "$11,782,311"))
    f = tmp_path / "budget.pdf"
    f.write_bytes(bytes(pdf.output()))
    text = "\n".join(s.text for s in _parse(f).sections)
    assert "Police Chief Salary; FY24 ACTUAL: $96,500; FY25 ACTUAL: $98,430; " \
        "FY26 PROPOSED: $101,383" in text
    assert "Fire Chief Salary; FY24 ACTUAL: $91,694; FY25 ACTUAL: $93,528; " \
        "FY26 PROPOSED: $96,334" in text  # the next page's rows, under the same header
    assert "GRAND TOTAL; FY24 ACTUAL: $10,844,514; FY25 ACTUAL: $11,158,628; " \
        "FY26 PROPOSED: $11,782,311" in text


def test_a_tables_unlabelled_total_is_no_name_of_the_next_tables_columns() -> None:
    from ragctl.index.ingest import aligned_tables

    raw = [["Income", "", "14-15", "15-16"], ["Grants", "", "$5,000.00", "$1,400.00"],
           ["Dues", "", "$42,086.42", "$55,418.94"], ["Cash", "", "$12,504.21", "$16,091.48"],
           ["", "", "$61,965.90", "$72,910.42"], ["Expenditure", "", "14-15", "15-16"],
           ["Lease", "", "-$47,460.72", "-$52,553.58"], ["Internet", "", "-$869.00", "-$948.00"],
           ["Waste", "", "-$2,614.09", "-$2,181.30"]]
    income, spent = aligned_tables(raw)
    assert income[0] == ["Income", "14-15", "15-16"]
    assert spent[0] == ["Expenditure", "14-15", "15-16"]  # not "$61,965.90 14-15"


def test_a_column_empty_to_its_header_is_none_of_the_tables() -> None:
    from ragctl.index.ingest import table_lines

    # a slide's table with a ruled margin: pdfplumber gives a fourth, empty column
    rows = [["Metrics", "Q4 2023", "FY 2023", ""], ["Total Revenue", "$1,076M", "$4,154M", ""],
            ["Net Expansion Rate", "102%", "", "103%"], ["Organic Revenue", "$1,076M",
                                                         "$4,146M", ""]]
    assert table_lines(rows, header=True)[:3] == [
        "Metrics | Q4 2023 | FY 2023",
        "Metrics: Total Revenue; Q4 2023: $1,076M; FY 2023: $4,154M",
        "Metrics: Net Expansion Rate; Q4 2023: 102%; 103%"]  # a value fallen into it


def test_a_table_found_by_alignment_keeps_its_centred_words_whole(tmp_path: Path) -> None:
    from reportlab.pdfgen import canvas

    f = tmp_path / "boiling.pdf"
    c = canvas.Canvas(str(f))
    rows = [("Boiling Points °C", "min", "max", "avg"), ("Noble gases", "-269", "-62", "-170.5"),
            ("Nonmetals", "-253", "4827", "414.1"), ("Metalloids", "335", "3900", "741.5"),
            ("Metals", "357", ">5000", "2755.9")]
    for i, row in enumerate(rows):  # labels centred, so "Noble gases" starts left of the rest
        y = 700 - 20 * i
        c.line(100, y - 6, 500, y - 6)  # lines between rows only: no ruled columns
        for x, text in zip((150, 250, 350, 450), row, strict=True):
            c.drawCentredString(x, y, text)
    c.save()
    text = "\n\n".join(s.text for s in parse(f, f.read_bytes()).sections)
    assert "Boiling Points °C: Noble gases; min: -269; max: -62; avg: -170.5" in text
    assert "Boiling Points °C: Metals; min: 357; max: >5000; avg: 2755.9" in text


def test_an_html_header_of_td_cells_in_thead_names_the_columns() -> None:
    from ragctl.index.ingest import html_to_sections

    _, sections = html_to_sections(
        "<table><thead><tr><td>Country or Area</td><td>M49 Code</td><td>ISO-alpha3 Code</td>"
        "</tr></thead><tbody><tr><td>Germany</td><td>276</td><td>DEU</td></tr>"
        "<tr><td>Switzerland</td><td>756</td><td>CHE</td></tr></tbody></table>")
    assert "Country or Area: Switzerland; M49 Code: 756; ISO-alpha3 Code: CHE" in \
        sections[0].text
    # no <thead>, no <th> (as a content extractor gives it): short names over figures
    _, sections = html_to_sections(
        "<table><tr><td>Country or Area</td><td>M49 Code</td><td>Population</td></tr>"
        "<tr><td>Germany</td><td>276</td><td>83.2</td></tr>"
        "<tr><td>Switzerland</td><td>756</td><td>8.7</td></tr></table>")
    assert "Country or Area: Switzerland; M49 Code: 756; Population: 8.7" in sections[0].text


def test_a_ruled_table_of_sections_each_under_its_header_is_read_section_by_section() -> None:
    # a budget exported from a spreadsheet: each section under a header of its own, a
    # section's total in a field whose label ends with a colon
    from ragctl.index.ingest import headed_blocks, table_lines

    rows = [["SALARY", "", "", "", ""],
            ["", "Hour Rate", "Hours", "", "Total"],
            ["", "$30.00", "120", "", "$3,600.00"],
            ["", "", "", "", ""],
            ["DEMONSTRATIONS", "", "Qty", "Per Item", "Total"],
            ["Radiometer", "", "", "", ""],
            ["Radiometer", "", "1", "$12.99", "$12.99"],
            ["Glass Dish", "", "3", "$4.00", "$12.00"],
            ["Demonstrations Grand Total:", "", "$24.99", "", ""],
            ["ACTIVITIES", "", "Qty", "Per Item", "Total"],
            ["Catapult Kits", "", "41", "$14.99", "$614.59"],
            ["Glue", "", "21", "$2.00", "$42.00"]]
    blocks = headed_blocks(rows)
    assert [headed for headed, _ in blocks] == [False, True, True, True]
    lines = [line for headed, part in blocks for line in table_lines(part, header=headed)]
    assert "Hour Rate: $30.00; Hours: 120; Total: $3,600.00" in lines
    assert "DEMONSTRATIONS: Glass Dish; Qty: 3; Per Item: $4.00; Total: $12.00" in lines
    assert "Demonstrations Grand Total: $24.99" in lines
    assert "ACTIVITIES: Catapult Kits; Qty: 41; Per Item: $14.99; Total: $614.59" in lines
    # a table with one header, or none, is one part
    assert len(headed_blocks([["Item", "Qty", "Price"], ["Glue", "2", "$4.00"],
                              ["Tape", "1", "$2.00"]])) == 1
    assert len(headed_blocks([["Glue", "2", "$4.00"], ["Tape", "1", "$2.00"]])) == 1


def test_an_aligned_column_cut_in_two_is_joined_and_names_stand_over_their_figures() -> None:
    from ragctl.index.ingest import _names_placed, _split_columns_joined, aligned_rows

    # a statement's column of right-aligned figures, its wide ones ("(19,827)") starting
    # left of its narrow ones ("-"): two columns that never share a row, one right edge
    rows = [["Cash", "373,818", "214,259", "", "-", "588,077"],
            ["Receivables", "1,357,939", "18,987", "", "-", "1,376,926"],
            ["Other", "537,335", "143,210", "(19,827)", "", "660,718"]]
    rights = [[None, 282.0, 343.0, None, 407.8, 473.0]] * 2 + [
        [None, 282.0, 343.0, 410.0, None, 473.0]]
    joined = _split_columns_joined([r[:] for r in rows], [r[:] for r in rights])
    assert [r[3] for r in joined] == ["-", "-", "(19,827)"] and len(joined[0]) == 5
    # a ledger's Debit and Credit never share a row either, but end a column apart
    ledger = _split_columns_joined([r[:] for r in rows], [r[:] for r in rights[:2]] + [
        [None, 282.0, 343.0, 370.0, None, 473.0]])
    assert len(ledger[0]) == 6

    def word(text: str, x0: float, x1: float) -> dict[str, object]:
        return {"text": text, "x0": x0, "x1": x1, "top": 0.0, "bottom": 9.0}

    # an invoice's names set over their figures, which the finder's columns cut apart:
    # "Prijs per stuk" over "€ 399,00", "Prijs incl. BTW" over the last column
    head = [[word("Artikel", 45, 72)], [], [word("Aantal", 359, 385)],
            [word("Prijs", 397, 415)], [word("per", 417, 430), word("stuk", 432, 450)],
            [word("BTW", 470, 488), word("Prijs", 490, 508), word("incl.", 510, 526)],
            [word("BTW", 528, 546)]]
    body = [[[word("iPad Air", 45, 90)], [], [word("1", 380, 385)], [],
             [word("€", 418, 423), word("399,00", 425, 450)], [word("21%", 472, 488)],
             [word("399,00", 524, 549)]]] * 3
    grid = [head, *body]
    _names_placed(grid)
    assert [" ".join(w["text"] for w in c) for c in grid[0]] == [  # type: ignore[misc]
        "Artikel", "", "Aantal", "", "Prijs per stuk", "BTW", "Prijs incl. BTW"]
    # a name over a column of currency signs alone ("2025" centred over "$ 82,543"), one
    # period over both columns, and the sentence above the table no name
    raw = [["The following table presents our segment revenues and operating income (loss)",
            "(in millions;", "unaudited):", "", ""],
           ["", "", "Quarter Ended", "June", "30,"], ["", "2025", "", "", "2026"],
           ["Revenues:", "", "", "", ""], ["Google Services", "$", "82,543", "$", "94,540"],
           ["Google Cloud", "", "13,624", "", "24,768"], ["Other Bets", "", "373", "", "382"]]
    assert aligned_rows(raw)[0] == ["", "Quarter Ended June 30, 2025",
                                    "Quarter Ended June 30, 2026"]
    # a month a column is no period over them all
    months = [["", "Jan", "Feb", "Mar"], ["Rent", "900", "900", "950"],
              ["Power", "61", "58", "49"], ["Water", "20", "22", "19"]]
    assert aligned_rows(months)[0] == ["", "Jan", "Feb", "Mar"]


def test_a_ruled_table_whose_cells_hold_a_label_and_its_amount_is_read_by_alignment() -> None:
    from ragctl.index.ingest import _packed

    assert _packed([["Revenues:", ""], ["Google Services $ 82,543", "$ 94,540"],
                    ["Google Cloud $ 13,624", "$ 24,768"], ["Other Bets 1,373", "382"]])
    assert not _packed([["Item", "Qty"], ["Room 101", "2"], ["Room 102", "3"],
                        ["Room 4", "4"]])


def test_a_title_over_a_tables_names_and_an_empty_gap_are_no_part_of_it() -> None:
    from ragctl.index.ingest import aligned_tables, table_lines

    raw = [["Presbytery of Upper East", "", "", "GMP", "", "Allocations Comparisons", "", ""],
           ["", "", "", "", "", "", "", ""],
           ["Parish", "Last", "Allocation-1", "Change 19-20", "", "Allocation-2",
            "Change 19-20", "Diff A1 to A2"],
           ["", "Year", "2020/2021", "To 20-21 A1", "", "2020/2021", "To 20-21 A2", ""],
           ["", "", "", "", "", "", "", ""],
           ["Alderly", "1982", "1011", "-971", "", "1304", "-678", "293"],
           ["Brookfield", "858", "438", "-420", "", "650", "-208", "212"],
           ["Crowdale", "10496", "5355", "-5141", "", "5276", "-5220", "-79"]]
    (table,) = aligned_tables(raw)
    assert table[0] == ["Parish", "Last Year", "Allocation-1 2020/2021",
                        "Change 19-20 To 20-21 A1", "Allocation-2 2020/2021",
                        "Change 19-20 To 20-21 A2", "Diff A1 to A2"]
    assert table_lines(table, header=True)[-1].startswith(
        "Parish: Crowdale; Last Year: 10496; Allocation-1 2020/2021: 5355;")
    # a line of periods over the names stays one of them
    raw[0] = ["", "", "2019", "", "", "2020", "", ""]
    (table,) = aligned_tables(raw)
    assert table[0][2].startswith("2019")



def test_a_pdfs_soft_hyphens_are_read_as_the_hyphens_they_print() -> None:
    from ragctl.index.ingest import printed_signs

    # a font that writes its hyphen as U+00AD ("03\u00adMar\u00ad2015" on a train ticket)
    text = printed_signs("Arrival: 04\u00adMar\u00ad2015 08:05, by e\u00adticket \u00ad")
    assert text == "Arrival: 04-Mar-2015 08:05, by e-ticket \u00ad"


def test_a_pdfs_amounts_whose_pence_are_drawn_apart_are_read_whole() -> None:
    from ragctl.index.ingest import printed_signs

    text = printed_signs("Total Income 212  .11\n2012-13 surplus £5 .49\nv2 .10.3 and 7 .125")
    assert text == "Total Income 212.11\n2012-13 surplus £5.49\nv2 .10.3 and 7 .125"


def test_an_html_description_list_keeps_each_term_with_its_value(tmp_path: Path) -> None:
    """Accounts written as <dt>/<dd> pairs: each term its value's label ("Staff Costs:
    5,360.00"), through the content extractor (which would set them apart as items) and
    without it; a list of prose definitions is read as text."""
    rows = "".join(f"<dt>{t}</dt><dd>{v}</dd>" for t, v in (
        ("Staff Costs", "5,360.00"), ("Footway Lighting", "£4,400.64"),
        ("Donations", "£1,275.00"), ("<strong>TOTAL EXPENDITURE</strong>", "£11,035.64")))
    prose = "A word " * 40
    page = (f"<html><body><div><h4>Accounts for the year ending 31 March 2020</h4>"
            f"<div><strong>EXPENDITURE</strong></div><dl>{rows}</dl>"
            f"<dl><dt>Precept</dt><dd>{prose}</dd></dl></div></body></html>")
    f = tmp_path / "accounts.html"
    f.write_text(page)
    doc = _parse(f)
    lines = [line for s in doc.sections for line in s.text.split("\n") if line]
    for line in ("Staff Costs: 5,360.00", "Footway Lighting: £4,400.64",
                 "TOTAL EXPENDITURE: £11,035.64"):
        assert line in lines, lines
    assert "Precept" in lines and not any(line.startswith("Precept:") for line in lines)
    assert any("31 March 2020" in s.place for s in doc.sections)
    from ragctl.index.ingest import html_to_sections

    _, sections = html_to_sections(page)
    assert any("Donations: £1,275.00" in s.text for s in sections)
