"""Reading the text of page images: PDF pages without a text layer and image files.

Two engines, both local: ``rapidocr`` (PP-OCR models run by onnxruntime; the weights come
inside its PyPI package, so ``pip`` alone installs it) and ``tesseract`` (the Tesseract
program, run as a subprocess; Debian's ``tesseract-ocr``). ``auto`` takes the first of
:data:`PREFERENCE` that is installed; ``bench/ocr.py`` measured the order on rendered,
degraded pages: Tesseract made 25–100 times fewer character errors, in about half the
time per page.

Nothing is downloaded: rapidocr is given the model files of its own package.
"""

from __future__ import annotations

import bisect
import io
import itertools
import logging
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ragctl.cpus import free_threads
from ragctl.errors import RagctlError

if TYPE_CHECKING:
    from PIL.Image import Image

logger = logging.getLogger("ragctl.ocr")

ENGINES = ("rapidocr", "tesseract")
PREFERENCE = ("tesseract", "rapidocr")
HOW_TO_ENABLE = ("to read scans, install Tesseract (apt install tesseract-ocr) or "
                 "pip install rapidocr onnxruntime")


class OcrEngine(Protocol):
    name: str

    def read(self, image: Image) -> str:
        """The text of one page image: lines joined by newlines, paragraphs by blank
        lines."""
        ...


def installed(name: str) -> bool:
    if name == "tesseract":
        return shutil.which("tesseract") is not None
    if name == "rapidocr":
        import importlib.util

        return all(importlib.util.find_spec(m) is not None
                   for m in ("rapidocr", "onnxruntime", "cv2"))
    return False


def available() -> list[str]:
    return [n for n in PREFERENCE if installed(n)]


@cache
def engine(name: str = "auto") -> OcrEngine | None:
    """The engine called ``name`` (``auto``: the first installed one; ``none``: None),
    loaded once per process. A named engine that is not installed is an error."""
    if name == "none":
        return None
    if name == "auto":
        found = available()
        if not found:
            return None
        name = found[0]
    if name not in ENGINES:
        raise RagctlError(f"unknown OCR engine {name!r}; choose one of "
                          f"{', '.join((*ENGINES, 'auto', 'none'))}")
    if not installed(name):
        raise RagctlError(f"OCR engine {name!r} is not installed; {HOW_TO_ENABLE}")
    return RapidOcr() if name == "rapidocr" else Tesseract()


def flattened(image: Image) -> Image:
    """An image with transparency laid on white, as a viewer shows it. Converted to
    grey as it is, a transparent PNG's background is the colour under its alpha (black,
    often): a receipt's text on it is read column by column or not at all."""
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P"
                                               and "transparency" in image.info):
        from PIL import Image as PILImage

        rgba = image.convert("RGBA")
        white = PILImage.new("RGBA", rgba.size, (255, 255, 255, 255))
        white.alpha_composite(rgba)
        return white.convert("RGB")
    return image


# ----------------------------------------------------------------------------- engines

@dataclass
class _Box:
    top: float
    bottom: float
    left: float
    right: float
    text: str

    @property
    def height(self) -> float:
        return self.bottom - self.top


def _text(boxes: list[_Box]) -> str:
    """The words of boxes in a row, a space between them."""
    return " ".join(b.text.strip() for b in boxes)


def lines_to_text(boxes: list[_Box]) -> str:
    """Text boxes (each a piece of a line) in reading order: boxes whose vertical middles
    fall within one another's height share a line, left to right; a gap between lines
    larger than the usual one starts a paragraph; a word broken by a hyphen at the end of a
    line is joined."""
    if not boxes:
        return ""
    boxes = sorted(boxes, key=lambda b: (b.top + b.bottom) / 2)
    lines: list[list[_Box]] = []
    for b in boxes:
        mid = (b.top + b.bottom) / 2
        if lines:
            last = lines[-1]
            lmid = sum((x.top + x.bottom) / 2 for x in last) / len(last)
            lh = max(x.height for x in last)
            if abs(mid - lmid) < 0.5 * max(lh, b.height):
                last.append(b)
                continue
        lines.append([b])
    tops = [min(x.top for x in line) for line in lines]
    heights = sorted(max(x.height for x in line) for line in lines)
    usual = heights[len(heights) // 2]
    steps = sorted(b - a for a, b in itertools.pairwise(tops))
    step = steps[len(steps) // 2] if steps else usual * 1.5
    ordered = [sorted(line, key=lambda x: x.left) for line in lines]  # left to right
    keyed = table_rows(ordered)
    out: list[str] = []
    for i, line in enumerate(ordered):
        text = keyed.get(i) or labelled(line) or _text(line)
        if i and tops[i] - tops[i - 1] > max(1.6 * step, 2.2 * usual):
            out.append("")
        out.append(text)
    return dehyphenate("\n".join(out))


# A receipt's or an invoice's items under a header ("QTY  DESCRIPTION  UNIT PRICE  AMOUNT"):
# the words of a line stand in groups apart (a gap wider than COLUMN_GAP times the line's
# height between them); a line of at least HEADER_COLUMNS groups of words without digits is
# a header when the line under it has a number under one of its columns. Each line under
# it, while its groups fall under the header's columns (all but one of them filled: not
# the "Subtotal" under it) and one holds a number, is written
# as a table row is indexed, "QTY: 2; DESCRIPTION: New set of pedal arms; UNIT PRICE: 15.00;
# AMOUNT: 30.00", so that its cells are read by their column.
COLUMN_GAP = 1.2
HEADER_COLUMNS = 3
HEADER_WORDS = 3  # words of one column's header, at most
CELL_WORDS = 8  # words of one cell, at most: a longer group is a line of prose


def _groups(line: list[_Box]) -> list[list[_Box]]:
    """A line's words (left to right) in the groups that stand apart."""
    height = max((b.height for b in line), default=0.0)
    out: list[list[_Box]] = []
    for b in line:
        if out and b.left - out[-1][-1].right <= COLUMN_GAP * height:
            out[-1].append(b)
        else:
            out.append([b])
    return out


def _column_of(group: list[_Box], columns: list[tuple[float, float]]) -> int | None:
    """The header column a group of words stands under: the one its span overlaps most,
    or the nearest by the middles within a column's width."""
    left, right = group[0].left, group[-1].right
    overlaps = [min(right, b) - max(left, a) for a, b in columns]
    best = max(range(len(columns)), key=lambda k: overlaps[k])
    if overlaps[best] > 0:
        return best
    mid = (left + right) / 2
    near = min(range(len(columns)), key=lambda k: abs(mid - sum(columns[k]) / 2))
    a, b = columns[near]
    return near if abs(mid - (a + b) / 2) <= (b - a) + (right - left) else None


def table_rows(lines: list[list[_Box]]) -> dict[int, str]:
    """Line index → the line as a keyed row, for the lines under a header (see above). A
    row's label left of the header's first column (a statement's "Energy Charge - Tier 1"
    under "Rate  Units  Amount") starts its row unnamed, as a table's first column without
    a header does ("Energy Charge - Tier 1; Units: 424.9; Amount: 40.22"); then one filled
    column is enough, and a line of such a label alone ("EMC Charges", a group of rows'
    heading) is passed over, as text, unless the line before it was one too."""
    out: dict[int, str] = {}
    i = 0
    while i < len(lines) - 1:
        head = _groups(lines[i])
        names = [_text(g).strip(" :|") for g in head]
        if len(head) < HEADER_COLUMNS or any(
                not n or any(ch.isdigit() for ch in n) or len(n.split()) > HEADER_WORDS
                or not any(ch.isalpha() for ch in n) for n in names):
            i += 1
            continue
        columns = [(g[0].left, g[-1].right) for g in head]
        rows: dict[int, str] = {}
        j, passed, stubbed = i + 1, False, False
        while j < len(lines):
            cells: dict[int, list[str]] = {}
            stub = ""
            placed = True
            for n, g in enumerate(_groups(lines[j])):
                if not any(ch.isalnum() for b in g for ch in b.text):
                    continue  # a speck read as "!" or "|"
                text = _text(g)
                # left of the first column; or, once rows have labels there, a label
                # set in under it ("Energy Charges Total", a subtotal's)
                if n == 0 and (g[-1].right < columns[0][0] or (
                        stubbed and not any(ch.isdigit() for ch in text))):
                    stub = text
                    continue
                k = _column_of(g, columns)
                if k is None or len(text.split()) > CELL_WORDS:  # not a cell: prose
                    placed = False
                    break
                cells.setdefault(k, []).append(" ".join(
                    b.text.strip() for b in g if any(ch.isalnum() for ch in b.text)))
            digits = any(any(ch.isdigit() for ch in " ".join(v)) for v in cells.values())
            if placed and stub and not cells and not passed and \
                    not any(ch.isdigit() for ch in stub):
                passed = True  # a heading over some of the rows
                j += 1
                continue
            if not placed or not digits or len(cells) < (
                    1 if stub else max(2, len(columns) - 1)):
                break
            rows[j] = "; ".join([stub] * bool(stub) + [f"{names[k]}: {' '.join(cells[k])}"
                                                     for k in sorted(cells)])
            j, passed, stubbed = j + 1, False, stubbed or bool(stub)
        out.update(rows)
        i = max(j, i + 1)
    return out


# A form's, a bill's or a receipt's line of a label and its value set apart ("Total Amount
# Due      164,390.91", "Change      1,01"): two groups of words (:data:`COLUMN_GAP`), a
# label of at most LABEL_WORDS words that starts with a letter, and a value of at most
# VALUE_WORDS words, half of them or more with a digit. It is written "Label: value", as
# such a line is printed when its label has a colon, so that the value is found by its
# label.
LABEL_WORDS = 6
VALUE_WORDS = 4


def labelled(line: list[_Box]) -> str | None:
    """A line (its words left to right) of a label and its value set apart, as "Label:
    value"; None for any other line."""
    groups = _groups(line)
    if len(groups) != 2:
        return None
    label = _text(groups[0]).rstrip(" .:|")
    value = _text(groups[1]).strip(" |")
    if not value or not re.match(r"[^\W\d_]", label) or len(label.split()) > LABEL_WORDS or \
            len(value.split()) > VALUE_WORDS or \
            2 * sum(any(ch.isdigit() for ch in w) for w in value.split()) < len(value.split()):
        return None  # not "New York, NY 12210      Cambridge, MA 02139": two addresses
    return f"{label}: {value}"


def dehyphenate(text: str) -> str:
    """``recog-\\nnised`` → ``recognised\\n`` (only between lower-case letters)."""
    return re.sub(r"([a-z])-\n([a-z]+)([,.;:]?) ?", r"\1\2\3\n", text)


class RapidOcr:
    cacheable = True  # the same image gives the same text: ingest.Ocr keeps it
    name = "rapidocr"

    def __init__(self) -> None:
        import rapidocr
        from rapidocr import RapidOCR

        models = Path(rapidocr.__file__).parent / "models"
        params: dict[str, object] = {"Global.log_level": "error"}
        for key, pattern in (("Det.model_path", "*det*.onnx"), ("Rec.model_path", "*rec*.onnx"),
                             ("Cls.model_path", "*cls*.onnx")):
            found = sorted(models.glob(pattern))
            if not found:
                raise RagctlError(f"rapidocr's model files are missing under {models}")
            params[key] = str(found[-1])
        threads = max(1, (os.cpu_count() or 1))
        params["EngineConfig.onnxruntime.intra_op_num_threads"] = threads
        for name in ("RapidOCR", "rapidocr"):
            logging.getLogger(name).setLevel(logging.ERROR)
        self._ocr = RapidOCR(params=params)

    def read(self, image: Image) -> str:
        import numpy as np

        result: Any = self._ocr(np.asarray(image.convert("RGB")))
        if result.boxes is None or result.txts is None:
            return ""
        boxes = []
        for box, text in zip(result.boxes, result.txts, strict=False):
            ys = [p[1] for p in box]
            xs = [p[0] for p in box]
            boxes.append(_Box(min(ys), max(ys), min(xs), max(xs), str(text)))
        return lines_to_text(boxes)


# Tesseract reads best when a capital letter is 20 to 30 pixels tall. A receipt or an
# invoice exported at screen size has words 7 to 10 pixels tall; read as it is, "125,00€"
# comes out "125,006" and "Redmond" "Remond". Such a page is read again, enlarged.
SMALL_TEXT = 18  # a page whose words' median height (pixels) is under this is enlarged
TEXT_HEIGHT = 22  # to this height
MAX_ENLARGE = 3.0
ENLARGED_PIXELS = 40_000_000  # never enlarged beyond this many pixels
# A page whose lines hold at most this many words (their median) is a form, a receipt or a
# table. Tesseract's page layout splits its rows into blocks, a label in one and its amount
# in another: the words are put in rows by position ("Daily Parking 6.00"). On an enlarged
# page (a screenshot of an invoice) the layout also misses boxes (a shaded totals box): the
# words Tesseract finds there as sparse text are added. (A page read at its size is read
# once: a scanned PDF of ten pages stays within ``max_file_seconds``.)
SHORT_LINES = 5


@dataclass
class _Word:
    line: tuple[int, int, int]  # (block, paragraph, line) as Tesseract numbers them
    box: _Box
    confidence: float = 0.0  # Tesseract's, 0 to 100


# A page scanned or photographed on its side or upside down reads as noise: Tesseract's
# mean word confidence is under 30 on such pages, over 50 on upright receipts and forms,
# even photographed ones. A page read under LOW_CONFIDENCE is read again turned a quarter,
# three quarters and a half turn, and kept turned when that reads at least SURE_WORDS words
# surely (confidence over 80) and twice as many as upright. (Tesseract's own orientation
# detection gives up on a receipt's few characters.)
LOW_CONFIDENCE = 40.0
SURE = 80.0
SURE_WORDS = 5
TURNS = (270, 90, 180)  # counter-clockwise degrees, as PIL turns an image


def mean_confidence(words: list[_Word]) -> float:
    return sum(w.confidence for w in words) / len(words) if words else 0.0


def sure_words(words: list[_Word]) -> int:
    return sum(w.confidence >= SURE for w in words)


def short_lines(words: list[_Word]) -> bool:
    """Whether the median line of the page holds at most :data:`SHORT_LINES` words."""
    counts: dict[tuple[int, int, int], int] = {}
    for w in words:
        counts[w.line] = counts.get(w.line, 0) + 1
    sizes = sorted(counts.values())
    return bool(sizes) and sizes[len(sizes) // 2] <= SHORT_LINES


def words_to_text(words: list[_Word]) -> str:
    """Tesseract's words in its own lines and reading order, a blank line between its
    paragraphs."""
    out: list[str] = []
    last: tuple[int, int, int] | None = None
    for w in words:
        if last is None or w.line != last:
            if last is not None and w.line[:2] != last[:2]:
                out.append("")
            out.append(w.box.text)
        else:
            out[-1] += " " + w.box.text
        last = w.line
    return dehyphenate("\n".join(out))


def unseen(found: list[_Word], seen: list[_Word]) -> list[_Word]:
    """The words of ``found`` whose box is not mostly inside one of ``seen``."""
    rows = sorted(seen, key=lambda w: w.box.top)
    tops = [w.box.top for w in rows]
    tallest = max((w.box.height for w in rows), default=0.0)

    def covered(b: _Box) -> bool:
        lo = bisect.bisect_left(tops, b.top - tallest)
        for v in rows[lo:bisect.bisect_right(tops, b.bottom)]:
            c = v.box
            w = min(b.right, c.right) - max(b.left, c.left)
            h = min(b.bottom, c.bottom) - max(b.top, c.top)
            if w > 0 and h > 0 and w * h > 0.5 * min(max(b.height, 1) * max(b.right - b.left, 1),
                                                     max(c.height, 1) * max(c.right - c.left, 1)):
                return True
        return False

    return [w for w in found if not covered(w.box)]


# How Tesseract tells ink from paper on a photo's uneven light: 2, Sauvola's local
# threshold (a receipt photographed at a slant lost its shop, address and date to the
# shade under Otsu's global one, 0, Tesseract's default); a page rendered or scanned on
# even paper keeps the global one (:func:`uneven_light`). A photo is read both ways and
# the reading with more words read surely is kept: a receipt photographed flat on a
# wooden table lost its prices and totals to the local threshold (22 words sure against
# 37), a shaded one its shop and date to the global one.
THRESHOLDING = 2
# the thresholds a photo is read with, local first (True), the surest reading kept
PHOTO_THRESHOLDS: tuple[bool, ...] = (True, False)
# the spread of the paper's brightness over the page (90th less 10th percentile of the
# brightest of each of 16 × 16 blocks) from which its light is uneven: rendered invoices
# and scans 0 to 10, photographed receipts 52 to 151
UNEVEN_LIGHT = 30


# A photo's lines of text are levelled before they are read when they slant by MIN_SKEW
# degrees or more (Tesseract reads a receipt photographed 10 degrees askew as noise: 5 of
# its words surely, 12 levelled), at most MAX_SKEW: the angle that makes the rows of ink
# most uneven (a row of text then a row of paper) on the photo scaled to SKEW_SIDE pixels;
# the levelled reading is kept when it reads more words surely. Tesseract levels a slight
# slant itself: a receipt 2 degrees askew read levelled lost its item lines' columns
MIN_SKEW = 3.0
MAX_SKEW = 15.0
SKEW_STEP = 0.5
SKEW_SIDE = 800


def skew(image: Image) -> float:
    """The angle (degrees counter-clockwise, as PIL turns an image) that levels the lines
    of text of a page, between -MAX_SKEW and MAX_SKEW; ink is told from paper by how
    much darker a pixel is than its neighbourhood, so that shade and a dark table around
    the paper are not ink."""
    import numpy as np
    from PIL import Image as PILImage
    from PIL import ImageFilter

    grey = image.convert("L")
    grey.thumbnail((SKEW_SIDE, SKEW_SIDE))
    around = np.asarray(grey.filter(ImageFilter.BoxBlur(8)), dtype=np.int16)
    ink = (np.asarray(grey, dtype=np.int16) < around - 12).astype(np.uint8) * 255
    marks = PILImage.fromarray(ink)

    def unevenness(angle: float) -> float:
        rows = np.asarray(marks.rotate(angle), dtype=np.float32).sum(axis=1)
        return float(np.square(np.diff(rows)).sum())

    best, best_score = 0.0, unevenness(0.0)  # as it is, unless a turn makes rows more uneven
    for angle in np.arange(-MAX_SKEW, MAX_SKEW + SKEW_STEP / 2, SKEW_STEP):
        if (score := unevenness(float(angle))) > best_score:
            best, best_score = float(angle), score
    return best


def uneven_light(image: Image) -> bool:
    """Whether the paper of a page is lit unevenly (a photograph, shaded or at a slant),
    by how much its brightest parts differ from block to block."""
    import numpy as np

    grey = np.asarray(image.convert("L"), dtype=np.float32)
    h, w = grey.shape
    bh, bw = max(1, h // 16), max(1, w // 16)
    paper = [float(np.percentile(grey[i:i + bh, j:j + bw], 95))
             for i in range(0, h - bh + 1, bh) for j in range(0, w - bw + 1, bw)]
    return float(np.percentile(paper, 90) - np.percentile(paper, 10)) > UNEVEN_LIGHT


# A page in another language is read again with that language's model too, when
# Tesseract has it (Debian's tesseract-ocr-deu, …): English alone reads "Rückgeld" as
# "Riickgeld" and "Straße" as "StraBe", and is surer of fewer of the page's words (an
# invoice in French: 62 words read surely by English, 77 by French and English). The page's
# language is told by the words of :data:`LANGUAGE_WORDS` that its English reading holds,
# counting only the words of one language alone (not "de", "total"): at least
# :data:`LANGUAGE_HITS` of them, and more than of English.
LANGUAGE_WORDS: dict[str, str] = {
    "eng": "the and of to for with on is are you your we our this that invoice amount "
           "price quantity thank tax due paid",
    "deu": "der die das und mit für von zu den dem des ist nicht auf ein eine wir sie ihre "
           "bitte rechnung summe betrag datum gesamt mwst zahlung kunde bar netto brutto preis "
           "menge rückgeld vielen dank straße",
    "fra": "le la les des et pour du une est au aux avec sur par vous nous votre facture "
           "montant prix quantité tva ttc merci échéance",
    "spa": "el los las del y para por con su sus usted factura importe fecha precio cantidad "
           "iva gracias",
    "ita": "il lo gli della delle e per una sono fattura importo data prezzo quantità grazie "
           "totale",
    "nld": "het een en van voor met op aan uw wij factuur bedrag datum prijs aantal btw "
           "totaal bedankt",
    "por": "o os do da dos das para com uma fatura valor preço quantidade obrigado",
}
LANGUAGE_HITS = 2
# each language's words that no other language of LANGUAGE_WORDS has
_OWN = {k: set(v.split()) for k, v in LANGUAGE_WORDS.items()}
_WORDS_ALONE = {k: frozenset(v - set().union(*(o for j, o in _OWN.items() if j != k)))
                for k, v in _OWN.items()}


@cache
def tesseract_languages() -> frozenset[str]:
    """The languages the installed Tesseract reads (``tesseract --list-langs``)."""
    path = shutil.which("tesseract")
    if path is None:
        return frozenset()
    try:
        done = subprocess.run([path, "--list-langs"], capture_output=True, timeout=60,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    lines = done.stdout.decode(errors="replace").splitlines()
    return frozenset(x.strip() for x in lines[1:] if re.fullmatch(r"[a-z_]{3,12}", x.strip()))


def page_language(words: list[str], languages: frozenset[str]) -> str | None:
    """The language other than English that a page's words (as English read them) are
    written in, of ``languages`` (:data:`LANGUAGE_WORDS`), or None."""
    found = [w.strip(".,:;!?()'\"").lower() for w in words]
    hits = {k: sum(w in v for w in found) for k, v in _WORDS_ALONE.items()}
    best = max((k for k in hits if k != "eng" and k in languages), key=lambda k: hits[k],
               default=None)
    if best is None or hits[best] < LANGUAGE_HITS or hits[best] <= hits["eng"]:
        return None
    return best


class Tesseract:
    cacheable = True
    name = "tesseract"
    # 2: small text enlarged, a page of short lines in rows; 3: and read as sparse text too;
    # 4: only an enlarged page is; 5: Sauvola's local threshold (:data:`THRESHOLDING`);
    # 6: on unevenly lit photos only; 7: a page on its side or upside down turned upright;
    # 8: the lines under a header as keyed rows; 9: a photo read with both thresholds, the
    # one that reads more words surely kept; 10: a page in another language read with its
    # model too (:data:`LANGUAGE_WORDS`), when Tesseract has it; 11: a label and its value
    # set apart on a line of their own written "Label: value" (:func:`labelled`), and a
    # table's rows labelled left of its header keyed by it (:func:`table_rows`); 12: a
    # photo's slanting lines levelled (:func:`skew`)
    version: int | str = 12

    def __init__(self) -> None:
        path = shutil.which("tesseract")
        if path is None:
            raise RagctlError(f"tesseract is not installed; {HOW_TO_ENABLE}")
        self._path = path
        self._languages = tesseract_languages() & set(LANGUAGE_WORDS)
        self._threads = 1
        others = sorted(self._languages - {"eng"})
        if others:  # a page read before the language was installed is read again
            self.version = f"{type(self).version}-{'-'.join(others)}"

    def read(self, image: Image) -> str:
        # Tesseract's threads wait on each other: as many as the cores free now
        self._threads = free_threads()
        local, words = False, list[_Word]()
        pages = [image]
        photo = uneven_light(image)
        if photo and abs(angle := skew(image)) >= MIN_SKEW:  # a photo taken at a slant,
            pages.append(image.rotate(angle, expand=True, fillcolor="white"))  # levelled
        for page, local_threshold in itertools.product(
                pages, PHOTO_THRESHOLDS if photo else (False,)):
            found = self._words(page, local=local_threshold)
            if not words or sure_words(found) > sure_words(words):
                image, local, words = page, local_threshold, found
        if mean_confidence(words) < LOW_CONFIDENCE:
            image, words = self._upright(image, words, local)
        langs = "eng"
        lang = page_language([w.box.text for w in words], self._languages)
        if lang is not None:  # read again with its language's model, kept when surer
            found = self._words(image, local=local, langs=f"{lang}+eng")
            if sure_words(found) >= sure_words(words):
                words, langs = found, f"{lang}+eng"
        heights = sorted(w.box.height for w in words)
        enlarged = False
        if heights and heights[len(heights) // 2] < SMALL_TEXT:
            scale = min(MAX_ENLARGE, TEXT_HEIGHT / max(heights[len(heights) // 2], 1))
            if image.width * image.height * scale * scale <= ENLARGED_PIXELS:
                from PIL import Image as PILImage

                size = (round(image.width * scale), round(image.height * scale))
                image = image.resize(size, PILImage.Resampling.LANCZOS)
                words, enlarged = self._words(image, local=local, langs=langs), True
        if not short_lines(words):
            return words_to_text(words)
        if enlarged:
            words += unseen(self._words(image, sparse=True, local=local, langs=langs), words)
        return lines_to_text([w.box for w in words])

    def _upright(self, image: Image, words: list[_Word], local: bool
                 ) -> tuple[Image, list[_Word]]:
        """The page turned the way it reads best (:data:`TURNS`), and its words; as it
        is when no turn reads surely better (:data:`LOW_CONFIDENCE`)."""
        best, best_words = image, words
        for turn in TURNS:
            turned = image.rotate(turn, expand=True)
            found = self._words(turned, local=local)
            if sure_words(found) >= max(SURE_WORDS, 2 * sure_words(best_words)):
                best, best_words = turned, found
                if mean_confidence(found) >= 2 * LOW_CONFIDENCE:
                    break  # read well: no other turn needed
        return best, best_words

    def _words(self, image: Image, *, sparse: bool = False, local: bool = False,
               langs: str = "eng") -> list[_Word]:
        """The words Tesseract finds (its TSV output), with their boxes and lines: in its
        page layout, or as ``sparse`` text (as much as it can find, in no order); told
        ink from paper by a ``local`` threshold (:data:`THRESHOLDING`) or a global one;
        read by the models of ``langs`` ("deu+eng")."""
        buf = io.BytesIO()
        image.convert("L").save(buf, format="PNG")
        env = {**os.environ, "OMP_THREAD_LIMIT": str(self._threads)}
        done = subprocess.run([self._path, "stdin", "stdout", "-l", langs, "--psm",
                               "11" if sparse else "3", "-c",
                               f"thresholding_method={THRESHOLDING if local else 0}",
                               "tsv"],
                              input=buf.getvalue(), capture_output=True, env=env,
                              timeout=600, check=False)
        if done.returncode != 0:
            tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:]
            raise RagctlError(f"tesseract failed: {tail[0] if tail else done.returncode}")
        words = []
        for row in done.stdout.decode("utf-8", errors="replace").splitlines()[1:]:
            cells = row.split("\t")
            # level, page, block, paragraph, line, word, left, top, width, height, conf, text
            if len(cells) < 12 or cells[0] != "5" or not cells[11].strip():
                continue
            try:
                block, par, line, left, top, width, height = map(int, (
                    cells[2], cells[3], cells[4], cells[6], cells[7], cells[8], cells[9]))
            except ValueError:
                continue
            try:
                confidence = float(cells[10])
            except ValueError:
                confidence = 0.0
            words.append(_Word((block, par, line), _Box(top, top + height, left, left + width,
                                                        cells[11].strip()), confidence))
        return words
