"""OCR of scans: image files and PDF pages without a text layer, skipped when no engine
is installed, remembered skips, and the real Tesseract on a rendered page."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from ragctl import ocr
from ragctl.config import load_settings
from ragctl.ingest import Ocr, SkipFile, parse
from ragctl.ocr import _Box, dehyphenate, lines_to_text

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf"
SCANNED = ("The lighthouse keeper Ann Morrow kept the light burning until dawn on the "
           "night of the great storm, 14 March 1887.")
TYPED = "Keeper's log, introduction: this log was kept at the Morrow lighthouse."


def page_image(text: str, dpi: int = 300) -> Image.Image:
    """A4 page with ``text`` typeset at 12 pt, a little noise-free scan."""
    import textwrap

    w, h = round(8.27 * dpi), round(11.69 * dpi)
    img = Image.new("L", (w, h), 255)
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype(FONT, round(12 / 72 * dpi)) if Path(FONT).exists() \
        else ImageFont.load_default(size=round(12 / 72 * dpi))
    y = dpi
    for line in textwrap.wrap(text, 60):
        draw.text((dpi, y), line, font=font, fill=0)
        y += round(12 / 72 * dpi * 1.4)
    return img


def mixed_pdf(scanned: Image.Image) -> bytes:
    """Page 1 has a text layer; page 2 is only an image (a scan)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.multi_cell(0, 8, TYPED)
    buf = io.BytesIO()
    scanned.save(buf, format="PNG")
    pdf.add_page()
    pdf.image(buf, x=0, y=0, w=210, h=297)
    return bytes(pdf.output())


class FakeEngine:
    """Returns fixed text and counts the pages it was given."""

    name = "fake"

    def __init__(self, text: str = SCANNED) -> None:
        self.text = text
        self.pages = 0

    def read(self, image: Image.Image) -> str:
        self.pages += 1
        return self.text


def test_a_pdf_mixing_text_and_scanned_pages_ocrs_only_the_scan(tmp_path: Path) -> None:
    engine = FakeEngine()
    ticks: list[str] = []
    doc = parse(tmp_path / "log.pdf", mixed_pdf(page_image(SCANNED)),
                ocr=Ocr(given=engine, on_page=ticks.append))
    assert engine.pages == 1 and ticks == ["OCR p. 2 of 2"]  # the text page is not OCR'd
    assert [s.place for s in doc.sections] == ["p. 1", "p. 2"]
    assert "Morrow lighthouse" in doc.sections[0].text
    assert doc.sections[1].text == SCANNED
    assert doc.notes == []


def test_without_an_engine_scans_are_skipped_with_how_to_enable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = parse(tmp_path / "log.pdf", mixed_pdf(page_image(SCANNED)), ocr=Ocr("none"))
    assert [s.place for s in doc.sections] == ["p. 1"]  # the text page is kept
    assert doc.notes and "page 2 without a text layer" in doc.notes[0]
    assert "turned off" in doc.notes[0]
    buf = io.BytesIO()
    page_image(SCANNED).save(buf, format="PNG")
    monkeypatch.setattr(ocr, "engine", lambda name="auto": None)  # nothing installed
    with pytest.raises(SkipFile, match=r"image not read .*apt install tesseract-ocr"):
        parse(tmp_path / "scan.png", buf.getvalue(), ocr=Ocr("auto"))


def test_images_blank_pages_and_photographs(tmp_path: Path) -> None:
    buf = io.BytesIO()
    page_image(SCANNED).save(buf, format="PNG")
    doc = parse(tmp_path / "scan.png", buf.getvalue(), ocr=Ocr(given=FakeEngine()))
    assert doc.format == "image" and doc.sections[0].text == SCANNED
    blank = io.BytesIO()
    Image.new("L", (1000, 1400), 255).save(blank, format="PNG")
    engine = FakeEngine()
    with pytest.raises(SkipFile, match="without text"):
        parse(tmp_path / "blank.png", blank.getvalue(), ocr=Ocr(given=engine))
    assert engine.pages == 0  # a blank page never reaches the engine
    with pytest.raises(SkipFile, match="without text"):  # stray marks are not words
        parse(tmp_path / "photo.png", buf.getvalue(), ocr=Ocr(given=FakeEngine("~ | ee ..")))
    tiff = io.BytesIO()
    frames = [page_image("one"), page_image("two")]
    frames[0].save(tiff, format="TIFF", save_all=True, append_images=frames[1:])
    doc = parse(tmp_path / "fax.tiff", tiff.getvalue(), ocr=Ocr(given=FakeEngine()))
    assert [s.place for s in doc.sections] == ["p. 1", "p. 2"]


def test_boxes_become_lines_and_paragraphs() -> None:
    boxes = [_Box(100, 120, 300, 500, "second half"), _Box(102, 121, 10, 280, "First line,"),
             _Box(130, 150, 10, 400, "recog-"), _Box(160, 180, 10, 300, "nised words."),
             _Box(260, 280, 10, 300, "New paragraph.")]
    assert lines_to_text(boxes) == ("First line, second half\nrecognised\nwords.\n\n"
                                    "New paragraph.")
    assert dehyphenate("a well-\nknown fact") == "a wellknown\nfact"


def test_index_remembers_skips_and_reads_scans_when_ocr_arrives(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ragctl.collection import Collection
    from ragctl.indexer import Indexer

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "log.pdf").write_bytes(mixed_pdf(page_image(SCANNED)))
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    settings = load_settings(embedder="fake-hash", ocr="auto")

    def run() -> dict:
        with Collection.open(settings, create=True) as c:
            c.lock()
            return Indexer(c).run([docs]).to_dict()

    monkeypatch.setattr(ocr, "available", lambda: [])
    monkeypatch.setattr(ocr, "engine", lambda name="auto": None)
    first = run()
    assert first["added"] == 1 and first["skipped"] == 1
    assert any("without a text layer" in w["reason"] for w in first["warnings"])
    again = run()  # nothing changed: no re-reading, no repeated warnings
    assert again["skipped_before"] == 1 and again["warnings"] == []
    assert again["unchanged"] == 1 and again["skipped_reasons"] == {"corrupt PDF": 1}
    engine = FakeEngine()
    monkeypatch.setattr(ocr, "available", lambda: ["fake"])
    monkeypatch.setattr(ocr, "engine", lambda name="auto": engine)
    third = run()  # an engine now: the scanned page is read, the broken file tried again
    assert third["updated"] == 1 and engine.pages == 1
    assert third["skipped_before"] == 0 and third["skipped"] == 1
    with Collection.open(settings) as c:
        texts = [p.text for p in c.store.passages(c.store.passage_ids()).values()]
    assert any("Ann Morrow" in t for t in texts)
    assert run()["unchanged"] == 1 and engine.pages == 1


def test_cli_lists_files_skipped_as_before_only_when_asked(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    from click.testing import CliRunner

    from ragctl.cli import cli

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.txt").write_text("The boiler was serviced in May by Hansen Heating.")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    monkeypatch.setenv("RAGCTL_EMBEDDER", "fake-hash")
    runner = CliRunner()
    first = runner.invoke(cli, ["index", str(docs), "-q"])
    assert first.exit_code == 0, first.output
    assert "broken.pdf: corrupt PDF" in first.output
    second = runner.invoke(cli, ["index", "-q"])
    assert "broken.pdf" not in second.output
    assert "1 file skipped as before; --verbose lists them" in second.output
    third = runner.invoke(cli, ["index", "-q", "--verbose"])
    assert "skipped: " in third.output and "broken.pdf: corrupt PDF" in third.output
    as_json = json.loads(runner.invoke(cli, ["index", "--json"]).stdout)
    assert as_json["skipped_before_files"][0]["path"].endswith("broken.pdf")
    status = runner.invoke(cli, ["status"]).output
    assert "1 file (1 corrupt PDF); ragctl index --verbose lists them" in status


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr not installed "
                    "(make install installs it where it can)")
def test_real_tesseract_reads_a_rendered_page_with_its_page_number(tmp_path: Path) -> None:
    engine = ocr.engine("tesseract")
    assert engine is not None
    doc = parse(tmp_path / "log.pdf", mixed_pdf(page_image(SCANNED)),
                ocr=Ocr("tesseract"))
    assert doc.sections[1].place == "p. 2"
    assert " ".join(doc.sections[1].text.split()) == SCANNED
    assert "Morrow lighthouse" in doc.sections[0].text


def test_the_progress_names_the_page_being_recognised(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from ragctl.collection import Collection
    from ragctl.indexer import Indexer

    class Recorder:
        def __init__(self) -> None:
            self.details: list[str] = []

        def phase(self, name: str, total: int | None = None) -> None:
            pass

        def advance(self, *, files: int = 0, passages: int = 0) -> None:
            pass

        def detail(self, text: str) -> None:
            self.details.append(text)

        def warn(self, path: Path, reason: str) -> None:
            pass

    (tmp_path / "log.pdf").write_bytes(mixed_pdf(page_image(SCANNED)))
    monkeypatch.setattr(ocr, "engine", lambda name="auto": FakeEngine())
    recorder = Recorder()
    with Collection.open(load_settings(embedder="fake-hash"), create=True) as c:
        c.lock()
        Indexer(c, reporter=recorder).run([tmp_path / "log.pdf"])
    assert [d for d in recorder.details if "OCR" in d] == ["log.pdf: OCR p. 2 of 2"]


GARBLED = ("o(h0..i.p3xSTRxtT3xR2tTOR /xNhyM/TTw2W 9nhmmmimm02vxS0/TxV2tORR2SPON32NTSMxTwh "
           "n9hnnnimp02vxS0/TxV2tORR2SPON32NTTOyU0in1/N3uROM 91h0..i.pST/uu/SSxST/NT2Nv02RThP "
           "onhnnnim)3xSTRxtT3xR2tTORuROMM/Y9ot/MP 9ph)(0i..02vxS0/TxV2/SSxST/NTuROMM/Y99V2 "
           "2NTuROMyU0in1zxSwxh txTx /Nz-TR/V20t /t/R3 /xRu/R2uORM 2RvW/SwxNvTON3tTOSPRxNvux "
           "203hSTi0OUxS/N3R2TURN pmniomST/uuTR/NSPORT/TxONm1l91l9mn.m1l9ol9mn.3w/W9mn.mmoo")


def test_a_text_layer_that_is_not_text_is_read_like_a_scan(tmp_path: Path) -> None:
    from fpdf import FPDF

    from ragctl.ingest import garbled_text

    assert garbled_text(GARBLED)
    assert not garbled_text(TYPED * 3) and not garbled_text(SCANNED * 2)
    assert not garbled_text("#include <linux/ckevent.h> #define REG_PG vesa_slot_addr_pack "
                            "iPhone McDonald 3com 2019年05月 OD304175096047380001 " * 2)
    pdf = FPDF()
    for text in (TYPED, GARBLED):
        pdf.add_page()
        pdf.set_font("helvetica", size=12)
        pdf.multi_cell(0, 8, text)
    data = bytes(pdf.output())
    engine = FakeEngine()
    doc = parse(tmp_path / "ledger.pdf", data, ocr=Ocr(given=engine))
    assert engine.pages == 1 and doc.sections[1].text == SCANNED  # OCR'd, not indexed as is
    doc = parse(tmp_path / "ledger.pdf", data, ocr=Ocr("none"))
    assert [s.place for s in doc.sections] == ["p. 1"] and "unreadable text" in doc.notes[0]
