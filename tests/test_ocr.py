"""OCR of scans: image files and PDF pages without a text layer, skipped when no engine
is installed, remembered skips, and the real Tesseract on a rendered page."""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from ragctl.config import load_settings
from ragctl.index import ocr
from ragctl.index.ingest import Ocr, SkipFile, parse
from ragctl.index.ocr import _Box, dehyphenate, lines_to_text

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
    from ragctl.index.indexer import Indexer
    from ragctl.store.collection import Collection

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

    from ragctl.app.cli import cli

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


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr not installed")
@pytest.mark.parametrize("turn", [90, 180])
def test_real_tesseract_reads_a_page_scanned_on_its_side_or_upside_down(turn: int) -> None:
    engine = ocr.engine("tesseract")
    assert engine is not None
    upright = page_image(SCANNED, dpi=150)
    assert " ".join(engine.read(upright.rotate(turn, expand=True)).split()) == SCANNED


def transparent_page(text: str) -> bytes:
    """A PNG whose background is transparent black (alpha 0), the text opaque: as
    screenshots and exported receipts are."""
    grey = page_image(text, dpi=150)
    ink = Image.eval(grey, lambda v: 255 - v)  # the text's opacity
    rgba = Image.merge("RGBA", (*[Image.new("L", grey.size, 0)] * 3, ink))
    buf = io.BytesIO()
    rgba.save(buf, format="PNG")
    return buf.getvalue()


def test_a_transparent_background_is_read_as_white(tmp_path: Path) -> None:
    class Seen(FakeEngine):
        def read(self, image: Image.Image) -> str:
            self.image = image
            return super().read(image)

    engine = Seen()
    parse(tmp_path / "receipt.png", transparent_page(SCANNED), ocr=Ocr(given=engine))
    assert engine.image.mode == "RGB" and engine.image.getpixel((2, 2)) == (255, 255, 255)


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr not installed")
def test_real_tesseract_reads_text_on_a_transparent_background(tmp_path: Path) -> None:
    doc = parse(tmp_path / "receipt.png", transparent_page(SCANNED), ocr=Ocr("tesseract"))
    assert " ".join(doc.sections[0].text.split()) == SCANNED


def test_the_progress_names_the_page_being_recognised(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from ragctl.index.indexer import Indexer
    from ragctl.store.collection import Collection

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

    from ragctl.index.ingest import garbled_text

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


def multipage_tiff(page: Image.Image, pages: int) -> bytes:
    """A TIFF of ``pages`` copies of a bilevel ``page`` (CCITT group 4), every page
    pointing at one compressed strip: as many pages as a 10 MB file of blank scans holds,
    made in no time."""
    import struct

    buf = io.BytesIO()
    page.save(buf, format="TIFF", compression="group4", strip_size=1 << 30)
    tags = Image.open(io.BytesIO(buf.getvalue())).tag_v2  # type: ignore[attr-defined]
    (start,), (size,) = tags[273], tags[279]
    strip = buf.getvalue()[start:start + size] + b"\0" * (size % 2)
    width, height = page.size
    entries = [(256, 4, width), (257, 4, height), (258, 3, 1), (259, 3, 4),
               (262, 3, tags[262]), (273, 4, 8), (278, 4, height), (279, 4, size)]
    out = bytearray(b"II*\0" + struct.pack("<I", 8 + len(strip)) + strip)
    for n in range(pages):
        out += struct.pack("<H", len(entries))
        for tag, kind, value in entries:  # LONG or SHORT values, one each
            out += struct.pack("<HHII" if kind == 4 else "<HHIH2x", tag, kind, 1, value)
        out += struct.pack("<I", len(out) + 4 if n + 1 < pages else 0)
    return bytes(out)


def marked_page(width: int, height: int, mode: str = "1") -> Image.Image:
    """A white page with one black bar: not blank, so every page reaches the engine."""
    page = Image.new(mode, (width, height), "white")
    ImageDraw.Draw(page).rectangle((width // 20, height // 20, width // 2, height // 15),
                                   fill="black")
    return page


CHILD = """
import json, resource, sys
from pathlib import Path
from ragctl.index.ingest import Ocr, parse

resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # a bomb fails, not the machine

class Engine:
    name = "fake"
    pages = 0

    def read(self, image):
        Engine.pages += 1
        return "The words recognised on this page."

path = Path(sys.argv[1])
data = path.read_bytes()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
doc = parse(path, data, ocr=Ocr(given=Engine()))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"notes": doc.notes, "places": [s.place for s in doc.sections],
                  "pages": Engine.pages, "grew_kb": peak - before}))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss and RLIMIT_AS as on Linux")
def test_a_tiff_of_200_large_pages_is_read_page_by_page_in_bounded_memory(
        tmp_path: Path) -> None:
    """200 pages of 6000 x 6000 pixels (36 MB each once decoded) once took over 5 GB."""
    import subprocess

    tiff = tmp_path / "photo.tiff"
    tiff.write_bytes(multipage_tiff(marked_page(6000, 6000), 200))
    assert tiff.stat().st_size < 100_000
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, str(script), str(tiff)], capture_output=True,
                          text=True, cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["notes"] == ["200 pages, read the first 50 (setting ocr_max_pages)"]
    assert result["pages"] == 50  # each page decoded and sent to the engine
    assert result["places"] == [f"p. {n}" for n in range(1, 51)]
    assert result["grew_kb"] < 400_000  # one page at a time: about 80 MB, not 50 x 36 MB


def test_pages_over_the_pixel_limit_are_never_decoded(tmp_path: Path) -> None:
    import struct
    import zlib

    from ragctl.config import Settings

    assert (Ocr().max_pages, Ocr().max_megapixels) == \
        (Settings().ocr_max_pages, Settings().ocr_max_megapixels)

    def png_header(width: int, height: int) -> bytes:
        """A PNG that says it is ``width`` x ``height`` and holds no pixels at all."""
        ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
        chunk = b"IHDR" + ihdr
        return (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + chunk
                + struct.pack(">I", zlib.crc32(chunk)) + b"\0\0\0\0IEND\xaeB`\x82")

    engine = FakeEngine()
    with pytest.raises(SkipFile, match=r"^the image is 81 megapixels, over the 40 megapixel "
                                       r"limit \(setting ocr_max_megapixels\); skipped"):
        parse(tmp_path / "huge.png", png_header(9000, 9000), ocr=Ocr(given=engine))
    with pytest.raises(SkipFile, match="decompression bomb"):  # Pillow's own check, at open
        parse(tmp_path / "bomb.png", png_header(100_000, 100_000), ocr=Ocr(given=engine))
    tiff = io.BytesIO()
    small, large = marked_page(1000, 1000, "L"), marked_page(3000, 2000, "L")
    small.save(tiff, format="TIFF", save_all=True, append_images=[large, small])
    doc = parse(tmp_path / "scan.tiff", tiff.getvalue(),
                ocr=Ocr(given=engine, max_megapixels=5))
    assert [s.place for s in doc.sections] == ["p. 1", "p. 3"] and engine.pages == 2
    assert doc.notes == ["page 2 of 3 is 6 megapixels, over the 5 megapixel limit "
                         "(setting ocr_max_megapixels); not read"]
    jpeg = io.BytesIO()
    large.save(jpeg, format="JPEG")
    sizes: list[tuple[int, int]] = []

    class Sizes(FakeEngine):
        def read(self, image: Image.Image) -> str:
            sizes.append(image.size)
            return super().read(image)

    doc = parse(tmp_path / "photo.jpg", jpeg.getvalue(), ocr=Ocr(given=Sizes(),
                                                                 max_megapixels=2))
    assert sizes == [(1500, 1000)]  # a JPEG is decoded at half its size instead


def test_a_huge_pdf_page_is_rendered_within_the_pixel_limit(tmp_path: Path) -> None:
    """A page of 194 x 194 inches would be 3.5 billion pixels at 300 dpi."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format=(14000, 14000))
    pdf.add_page()
    pdf.set_fill_color(0)
    pdf.rect(1000, 1000, 8000, 600, style="F")  # a bar, no text: read by OCR
    sizes: list[tuple[int, int]] = []

    class Sizes(FakeEngine):
        def read(self, image: Image.Image) -> str:
            sizes.append(image.size)
            return super().read(image)

    doc = parse(tmp_path / "poster.pdf", bytes(pdf.output()), ocr=Ocr(given=Sizes()))
    assert doc.sections[0].text == SCANNED and len(sizes) == 1
    width, height = sizes[0]
    assert 39_000_000 < width * height <= 40_000_000


def test_the_page_limit_is_a_setting_and_raising_it_reads_the_file_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ragctl.errors import ConfigError
    from ragctl.index.indexer import Indexer
    from ragctl.store.collection import Collection

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "fax.tiff").write_bytes(multipage_tiff(marked_page(1700, 2200), 3))
    engine = FakeEngine()
    monkeypatch.setattr(ocr, "engine", lambda name="auto": engine)

    def run() -> dict:
        with Collection.open(load_settings(embedder="fake-hash"), create=True) as c:
            c.lock()
            return Indexer(c).run([docs]).to_dict()

    monkeypatch.setenv("RAGCTL_OCR_MAX_PAGES", "2")
    first = run()
    assert first["added"] == 1 and engine.pages == 2
    assert [(Path(w["path"]).name, w["reason"]) for w in first["warnings"]] == \
        [("fax.tiff", "3 pages, read the first 2 (setting ocr_max_pages)")]
    assert run()["unchanged"] == 1 and engine.pages == 2
    monkeypatch.setenv("RAGCTL_OCR_MAX_PAGES", "3")
    third = run()
    assert third["updated"] == 1 and third["warnings"] == [] and engine.pages == 5
    monkeypatch.setenv("RAGCTL_OCR_MAX_PAGES", "0")
    with pytest.raises(ConfigError, match="ocr_max_pages must be at least 1"):
        load_settings()


def test_a_page_read_before_is_read_from_the_cache_kept_private(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import stat

    from ragctl.index import ocr

    engine = FakeEngine()
    engine.name = "counted"
    engine.cacheable = True  # type: ignore[attr-defined]  # as the engines ragctl ships
    calls: list[int] = []
    real_read = engine.read

    def read(image: object) -> str:
        calls.append(1)
        return real_read(image)  # type: ignore[arg-type]

    engine.read = read  # type: ignore[method-assign]
    monkeypatch.setattr(ocr, "engine", lambda name="auto": engine)
    buf = io.BytesIO()
    page_image(SCANNED).save(buf, format="PNG")
    cache = tmp_path / "cache"
    first = parse(tmp_path / "scan.png", buf.getvalue(), ocr=Ocr("auto", cache=cache))
    again = parse(tmp_path / "scan.png", buf.getvalue(), ocr=Ocr("auto", cache=cache))
    assert len(calls) == 1 and first.sections[0].text == again.sections[0].text
    kept = list(cache.rglob("*.txt"))
    assert len(kept) == 1 and kept[0].parent.parent.name == "counted"
    assert stat.S_IMODE(kept[0].stat().st_mode) == 0o600
    # an engine that does not say it may be kept never is
    engine.cacheable = False  # type: ignore[attr-defined]
    parse(tmp_path / "scan.png", buf.getvalue(), ocr=Ocr("auto", cache=cache))
    assert len(calls) == 2


RECEIPT_ROWS = [("Contoso Inn", ""), ("Room: 515", ""), ("", ""), ("Room Charge", "88.00"),
                ("County Tax 6%", "5.28"), ("Daily Parking", "6.00"), ("Parking Tax", "0.36"),
                ("Total", "104.92"), ("Balance", "0.00 USD")]


def small_receipt() -> Image.Image:
    """A receipt exported at screen size: words 8 to 10 pixels tall, each amount far to
    the right of its label."""
    font = ImageFont.truetype(FONT, 11) if Path(FONT).exists() else ImageFont.load_default(11)
    img = Image.new("L", (620, 40 + 18 * len(RECEIPT_ROWS)), 255)
    draw = ImageDraw.Draw(img)
    for i, (label, amount) in enumerate(RECEIPT_ROWS):
        draw.text((30, 20 + 18 * i), label, font=font, fill=0)
        draw.text((520, 20 + 18 * i), amount, font=font, fill=0)
    return img


def test_a_page_of_short_lines_is_read_in_rows_with_the_words_found_as_sparse_text() -> None:
    def word(block: int, line: int, left: int, top: int, text: str) -> ocr._Word:
        return ocr._Word((block, 1, line), _Box(top, top + 10, left, left + 40, text))

    # the page layout finds the labels in one block and an amount in another; the
    # sparse reading finds the total's amount too, and the labels again
    layout = [word(1, 1, 10, 0, "Daily"), word(1, 1, 60, 0, "Parking"),
              word(1, 2, 10, 20, "Total"), word(2, 1, 500, 1, "6.00")]
    sparse = [word(1, 1, 12, 1, "Daily"), word(2, 1, 500, 21, "104.92")]
    assert ocr.short_lines(layout)
    found = layout + ocr.unseen(sparse, layout)
    assert [w.box.text for w in found][-1] == "104.92" and len(found) == 5
    assert ocr.lines_to_text([w.box for w in found]) == "Daily Parking: 6.00\nTotal: 104.92"
    # a page of long lines keeps Tesseract's order, a blank line between its paragraphs
    long = [ocr._Word((1, p, 1), _Box(20 * p, 20 * p + 10, 40 * k, 40 * k + 30, f"w{p}{k}"))
            for p in (1, 2) for k in range(8)]
    assert not ocr.short_lines(long)
    assert ocr.words_to_text(long).split("\n") == [
        " ".join(f"w1{k}" for k in range(8)), "", " ".join(f"w2{k}" for k in range(8))]


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr not installed")
def test_real_tesseract_reads_a_small_receipt_row_by_row() -> None:
    text = ocr.Tesseract().read(small_receipt())
    lines = [" ".join(line.split()) for line in text.splitlines()]
    for label, amount in RECEIPT_ROWS:
        if label and amount:  # each amount far right of its label: "Label: amount"
            assert f"{label}: {amount}" in lines, text


@pytest.mark.skipif(shutil.which("tesseract") is None or not Path(FONT).exists(),
                    reason="tesseract-ocr or the DejaVu fonts not installed")
def test_real_tesseract_reads_text_in_a_shadow(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    img = Image.new("L", (900, 500), 255)
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype(FONT, 34)
    for i, line in enumerate(["Harbour Hardware", "12 Quay Street, Leith", "Receipt 4471",
                              "TOTAL $ 43.82"]):
        draw.text((60, 60 + i * 95), line, font=font, fill=0)
    ink = np.asarray(img) < 128
    # the lower half of the receipt in the shade of the hand that photographed it
    paper = np.where(np.arange(ink.shape[0])[:, None] < 250, 250, 105) * np.ones(ink.shape)
    photo = Image.fromarray(np.where(ink, 35, paper).astype(np.uint8))
    assert ocr.uneven_light(photo) and not ocr.uneven_light(img)
    assert not ocr.uneven_light(page_image("An even page of text."))
    engine = ocr.Tesseract()
    assert "43.82" in engine.read(photo)  # a local threshold (Sauvola's)
    monkeypatch.setattr(ocr, "THRESHOLDING", 0)
    assert "43.82" not in engine.read(photo)  # one threshold for the whole image


def test_a_photo_is_read_with_both_thresholds_and_the_surer_reading_kept(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A receipt photographed flat on a table reads better with one threshold for the whole
    image, one in a hand's shade with a local one: each photo keeps the reading with more
    words read surely; an even page is read once, with the global threshold."""
    def word(text: str, confidence: float) -> ocr._Word:
        return ocr._Word((1, 1, 1), _Box(0, 30, 0, 40, text), confidence)

    readings = {True: [word("Cof“ee", 40.0), word("7.40", 50.0), word("Milk", 90.0)],
                False: [word("Coffee", 95.0), word("2.40", 92.0), word("Milk", 91.0)]}
    calls: list[bool] = []

    def words(self: ocr.Tesseract, image: Image.Image, *, sparse: bool = False,
              local: bool = False, langs: str = "eng") -> list[ocr._Word]:
        calls.append(local)
        return readings[local]

    monkeypatch.setattr(ocr.Tesseract, "__init__",
                        lambda self: setattr(self, "_languages", frozenset({"eng"})))
    monkeypatch.setattr(ocr.Tesseract, "_words", words)
    monkeypatch.setattr(ocr, "uneven_light", lambda image: True)
    image = Image.new("L", (200, 100), 255)
    assert ocr.Tesseract().read(image) == "Coffee 2.40 Milk" and calls == [True, False]
    readings[False] = [word("Coff", 30.0)]  # the shade: the local threshold reads surer
    assert ocr.Tesseract().read(image) == "Cof“ee 7.40 Milk"
    calls.clear()
    readings[False] = [word("Coffee", 95.0)]
    monkeypatch.setattr(ocr, "uneven_light", lambda image: False)
    ocr.Tesseract().read(image)
    assert calls == [False]


def test_the_lines_under_a_header_are_keyed_by_its_columns() -> None:
    def line(top: float, *words: tuple[float, str]) -> list[_Box]:
        return [_Box(top, top + 10, left, left + 8 * len(text), text) for left, text in words]

    boxes = [*line(0, (0, "Acme"), (40, "Tools")),
             *line(20, (0, "QTY"), (60, "DESCRIPTION"), (200, "UNIT"), (236, "PRICE"),
                   (320, "AMOUNT")),
             *line(40, (0, "2"), (60, "Pedal"), (104, "arms"), (210, "15.00"), (330, "30.00")),
             *line(60, (0, "1"), (60, "Brake"), (104, "cable"), (210, "!"), (210, "9.50"),
                   (330, "9.50")),
             *line(80, (200, "Subtotal"), (330, "39.50"))]
    assert lines_to_text(boxes).splitlines() == [
        "Acme Tools", "QTY DESCRIPTION UNIT PRICE AMOUNT",
        "QTY: 2; DESCRIPTION: Pedal arms; UNIT PRICE: 15.00; AMOUNT: 30.00",
        "QTY: 1; DESCRIPTION: Brake cable; UNIT PRICE: 9.50; AMOUNT: 9.50",
        "Subtotal: 39.50"]


def test_a_label_and_its_value_set_apart_are_written_as_a_labelled_line() -> None:
    def line(*words: tuple[float, str]) -> list[_Box]:
        return [_Box(0, 10, left, left + 8 * len(text), text) for left, text in words]

    assert ocr.labelled(line((0, "Total"), (48, "Amount"), (104, "Due"), (400, "164,390.91"))
                        ) == "Total Amount Due: 164,390.91"
    assert ocr.labelled(line((0, "Change"), (300, "1,01"), (340, "EUR"))) == "Change: 1,01 EUR"
    assert ocr.labelled(line((0, "Total"), (48, "104.92"))) is None  # not set apart
    # two addresses side by side, a number first, three groups: none is a label's value
    assert ocr.labelled(line((0, "New"), (40, "York,"), (90, "NY"), (120, "12210"),
                             (400, "Cambridge,"), (490, "MA"), (520, "02139"))) is None
    assert ocr.labelled(line((0, "2"), (40, "Coffee"), (300, "4.80"))) is None
    assert ocr.labelled(line((0, "Tea"), (200, "2.90"), (400, "2.90"))) is None
    assert ocr.labelled(line((0, "Total"), (300, "|"))) is None  # a speck is no value


def test_row_labels_left_of_a_header_start_their_rows() -> None:
    def line(top: float, *words: tuple[float, str]) -> list[_Box]:
        return [_Box(top, top + 10, left, left + 8 * len(text), text) for left, text in words]

    boxes = [*line(0, (200, "Rate"), (300, "Units"), (400, "Amount")),
             *line(20, (0, "Energy"), (56, "Charges")),
             *line(40, (0, "Tier"), (40, "1"), (200, "0.0947"), (300, "424.9"), (400, "40.22")),
             *line(60, (0, "Tier"), (40, "2"), (300, "192.6"), (400, "13.47")),
             *line(80, (20, "Charges"), (84, "Total"), (400, "53.69")),
             *line(100, (0, "Payment"), (64, "Slip"), (200, "Your"), (240, "payment"),
                   (304, "will"), (344, "be"), (368, "debited"), (432, "via"), (464, "GIRO"),
                   (504, "on"), (530, "10-04-2020"))]
    assert lines_to_text(boxes).splitlines() == [
        "Rate Units Amount", "Energy Charges",
        "Tier 1; Rate: 0.0947; Units: 424.9; Amount: 40.22",
        "Tier 2; Units: 192.6; Amount: 13.47",
        "Charges Total; Amount: 53.69",  # set in under the first column: its row's label
        "Payment Slip Your payment will be debited via GIRO on 10-04-2020"]  # prose


def test_a_page_in_another_language_is_told_by_its_own_words() -> None:
    german = "Vielen Dank für Ihren Einkauf Summe 12,40 Bar 20,00 Rückgeld 7,60".split()
    assert ocr.page_language(german, frozenset({"eng", "deu", "fra"})) == "deu"
    assert ocr.page_language(german, frozenset({"eng", "fra"})) is None  # no German model
    english = "Thank you for your visit Total 12.40 Cash 20.00 Change 7.60".split()
    assert ocr.page_language(english, frozenset({"eng", "deu", "fra"})) is None
    # words two languages share ("de", "total") tell neither
    assert ocr.page_language("TOTAL 21.00 DE LA".split(), frozenset({"fra", "spa"})) is None
    assert ocr.page_language("VOUS REMERCIE DE VOTRE VISITE TOTAL 21.00".split(),
                             frozenset({"eng", "fra", "spa"})) == "fra"


@pytest.mark.skipif(not Path(FONT).exists() or not {"deu", "eng"} <= ocr.tesseract_languages(),
                    reason="tesseract-ocr with its German model (tesseract-ocr-deu) or the "
                           "DejaVu fonts not installed")
def test_real_tesseract_reads_a_german_page_with_its_model() -> None:
    img = Image.new("L", (1100, 420), 255)
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype(FONT, 30)
    for i, line in enumerate(["Bäckerei Müller, Hauptstraße 12", "Rechnung für Ihren Einkauf",
                              "Summe 12,40 EUR", "Vielen Dank und bis bald"]):
        draw.text((50, 40 + i * 90), line, font=font, fill=0)
    text = ocr.Tesseract().read(img)
    assert "Hauptstraße" in text and "für" in text and "12,40" in text, text


def test_a_photo_stored_on_its_side_is_read_as_a_viewer_shows_it(tmp_path: Path) -> None:
    """A phone keeps a receipt photographed upright as its sensor saw it, on its side, with
    an EXIF Orientation tag (6: turn it a quarter clockwise): the page is read turned."""
    side = Image.new("RGB", (400, 300), "white")  # stored sideways: wider than tall
    exif = Image.Exif()
    exif[0x0112] = 6
    sizes: list[tuple[int, int]] = []

    class Sizes(FakeEngine):
        def read(self, image: Image.Image) -> str:
            sizes.append(image.size)
            return super().read(image)

    ImageDraw.Draw(side).rectangle((50, 50, 60, 250), fill="black")  # not a blank page
    for name, tagged in (("turned.jpg", exif), ("plain.jpg", Image.Exif())):
        buf = io.BytesIO()
        side.save(buf, format="JPEG", exif=tagged)
        parse(tmp_path / name, buf.getvalue(), ocr=Ocr(given=Sizes()))
    assert sizes == [(300, 400), (400, 300)]


def test_tesseract_runs_as_many_threads_as_cores_are_free(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Tesseract's threads wait on each other, so with other processes busy on the cores a
    page read at a thread per core took a hundred times as long: it gets the cores free."""
    seen: list[str] = []

    def run(args: list[str], **kwargs: object) -> object:
        env = kwargs["env"]
        assert isinstance(env, dict)
        seen.append(env["OMP_THREAD_LIMIT"])
        return type("Done", (), {"returncode": 0, "stdout": b"", "stderr": b""})()

    monkeypatch.setattr(ocr, "free_threads", lambda: 1)
    monkeypatch.setattr(ocr.subprocess, "run", run)
    monkeypatch.setattr(ocr.shutil, "which", lambda name: "/usr/bin/tesseract")
    monkeypatch.setattr(ocr, "tesseract_languages", lambda: frozenset({"eng"}))
    ocr.Tesseract().read(Image.new("L", (200, 100), 255))
    assert seen and set(seen) == {"1"}


@pytest.mark.parametrize("slant", [-8.0, 6.0])
def test_the_slant_of_a_photos_lines_is_measured_to_level_them(slant: float) -> None:
    """A receipt photographed askew: the angle that levels its lines turns it back."""
    page = page_image(SCANNED * 3, dpi=100).rotate(slant, expand=True, fillcolor=255)
    assert abs(ocr.skew(page) + slant) <= 1.0
    assert ocr.skew(page_image(SCANNED * 3, dpi=100)) == 0.0


def test_a_slanting_photo_is_read_levelled_when_that_reads_surer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def word(text: str, confidence: float) -> ocr._Word:
        return ocr._Word((1, 1, 1), _Box(0, 30, 0, 40, text), confidence)

    sizes: list[tuple[int, int]] = []

    def words(self: ocr.Tesseract, image: Image.Image, *, sparse: bool = False,
              local: bool = False, langs: str = "eng") -> list[ocr._Word]:
        sizes.append(image.size)
        if image.size == (200, 100):  # as photographed: noise
            return [word("Tl~", 30.0)]
        return [word("Coffee", 95.0), word("2.40", 92.0)]

    monkeypatch.setattr(ocr.Tesseract, "__init__",
                        lambda self: setattr(self, "_languages", frozenset({"eng"})))
    monkeypatch.setattr(ocr.Tesseract, "_words", words)
    monkeypatch.setattr(ocr, "uneven_light", lambda image: True)
    monkeypatch.setattr(ocr, "free_threads", lambda: 1)
    monkeypatch.setattr(ocr, "skew", lambda image: 10.0)
    assert ocr.Tesseract().read(Image.new("L", (200, 100), 255)) == "Coffee 2.40"
    assert len(sizes) == 4 and sizes[0] == (200, 100) and sizes[2] != (200, 100)
    sizes.clear()
    monkeypatch.setattr(ocr, "skew", lambda image: 1.0)  # level enough: read as it is
    ocr.Tesseract().read(Image.new("L", (200, 100), 255))
    assert sizes[:2] == [(200, 100), (200, 100)]  # both thresholds, no levelled page
    assert all(size in ((200, 100), (100, 200)) for size in sizes)  # (turns: on its side)
