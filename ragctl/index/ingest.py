"""Stage 1: find files and turn each one into text sections that keep their place.

A *place* is what a person needs to find the text again: ``p. 3`` for a PDF page, a
heading path such as ``Install > Linux`` for Markdown, reStructuredText, HTML and DOCX,
``Subject (From, Date)`` for mail. Offsets of a section are character offsets into the
decoded file for plain-text formats, and into the page / extracted text otherwise.
"""

from __future__ import annotations

import bisect
import io
import logging
import math
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cache, partial
from itertools import accumulate, pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragctl.text import PART_OF

if TYPE_CHECKING:
    from email.message import EmailMessage, MIMEPart

    from PIL.Image import Image

    from ragctl.index.ocr import OcrEngine

logger = logging.getLogger("ragctl.ingest")

TEXT_FORMATS = {".txt": "text", ".text": "text", ".md": "markdown", ".markdown": "markdown",
                ".rst": "rst"}
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff")
SHEET_FORMATS = {".csv": "csv", ".tsv": "csv", ".tab": "csv", ".xlsx": "xlsx", ".xlsm": "xlsx",
                 ".xls": "xls", ".ods": "ods"}
FORMATS = {**TEXT_FORMATS, ".html": "html", ".htm": "html", ".pdf": "pdf", ".docx": "docx",
           ".eml": "email", ".mbox": "mbox", **SHEET_FORMATS,
           **dict.fromkeys(IMAGE_SUFFIXES, "image")}
OCR_DPI = 300  # PDF pages without a text layer are rendered at this resolution for OCR
# Settings.ocr_max_pages and ocr_max_megapixels (docs/configuration.md): the pages of one
# image file that are read, and the largest page image that is decoded for OCR
OCR_MAX_PAGES = 50
OCR_MAX_MEGAPIXELS = 40.0
MIN_PAGE_CHARS = 20  # a PDF page with less text than this (a page number) is read by OCR


class SkipFile(Exception):
    """A file that cannot be indexed; the message is the one-line reason shown to the user."""


@dataclass(frozen=True)
class Section:
    text: str
    place: str = ""
    offset: int = 0


@dataclass(frozen=True)
class ParsedDocument:
    path: Path
    format: str
    title: str
    sections: list[Section] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # one-line warnings about this file


@dataclass
class Ocr:
    """How a parser reads page images: the engine called ``name`` (``auto``: the best
    installed one; ``none``: no OCR, so scans are skipped with a line saying how to enable
    it), loaded when a page first needs it, and ``on_page``, called with what is done
    ("OCR p. 3 of 40") before each page is recognised or searched for tables (the indexer
    shows it and gives each such page its own time)."""

    name: str = "none"
    on_page: Callable[[str], None] = lambda what: None
    given: OcrEngine | None = None  # an engine object to use instead of the named one
    max_pages: int = OCR_MAX_PAGES  # pages read from one image file (a TIFF holds many)
    max_megapixels: float = OCR_MAX_MEGAPIXELS  # the largest page image decoded
    cache: Path | None = None  # where pages read before are kept (None: nowhere)

    @property
    def max_pixels(self) -> int:
        return int(self.max_megapixels * 1_000_000)

    @property
    def engine(self) -> OcrEngine | None:
        from ragctl.index import ocr

        return self.given if self.given is not None else ocr.engine(self.name)

    @property
    def how_to_enable(self) -> str:
        from ragctl.index.ocr import HOW_TO_ENABLE

        return 'OCR is turned off (ocr = "none")' if self.name == "none" else HOW_TO_ENABLE

    def read(self, image: Image, where: str = "") -> str:
        """The page's text: from the cache when this engine read the same image before (a
        file read again, a readers' version, ``--force``), else recognised now."""
        engine = self.engine
        assert engine is not None
        self.on_page(f"OCR {where}".strip())
        kept = self._cached(engine.name, image)
        if kept is not None and kept.exists():
            try:
                return kept.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                pass
        text = engine.read(image)
        if kept is not None:
            _keep_private(kept, text)
        return text

    def _cached(self, engine: str, image: Image) -> Path | None:
        # pages of the engines ragctl ships alone: a stand-in's text must not answer for them
        if self.cache is None or not getattr(self.engine, "cacheable", False):
            return None
        import hashlib

        h = hashlib.sha256(f"{image.mode} {image.size} ".encode())
        h.update(image.tobytes())
        key = h.hexdigest()
        version = getattr(self.engine, "version", 1)  # an engine that reads differently now
        folder = engine if version == 1 else f"{engine}-{version}"
        return self.cache / folder / key[:2] / f"{key}.txt"


def _keep_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by its owner alone; a cache that cannot be written
    is no error (the page is read again next time)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        pass


def file_format(path: Path) -> str | None:
    """The format name of a supported file, or None."""
    return FORMATS.get(path.suffix.lower())


# ---------------------------------------------------------------------------- walking

WarnFn = Callable[[Path, str], None]


PSEUDO_FILESYSTEMS = ("/proc", "/sys", "/dev", "/run")


def never_walked(path: Path, exclude: Iterable[Path] = ()) -> bool:
    """Folders no index run enters: pseudo-filesystems (their "files" are the running
    system, not documents) and ``exclude`` (ragctl's own home with its indexes)."""
    p = str(path)
    if any(p == d or p.startswith(d + "/") for d in PSEUDO_FILESYSTEMS):
        return True
    return any(p == str(e) or p.startswith(str(e).rstrip("/") + "/") for e in exclude)


def walk(paths: Iterable[Path], *, include_hidden: bool = False,
         warn: WarnFn | None = None, exclude: Iterable[Path] = ()) -> Iterator[Path]:
    """Yield supported files under ``paths`` (absolute, each once), following symlinks.

    Files named explicitly are yielded even with an unknown suffix, so that the indexer
    can warn about them. Symlink loops, broken links and unreadable directories are
    reported through ``warn`` and skipped; pseudo-filesystems and ``exclude`` are never
    entered (:func:`never_walked`).
    """
    warn = warn or (lambda p, msg: logger.warning("%s: %s", p, msg))
    exclude = [Path(os.path.abspath(e)) for e in exclude]
    seen_dirs: set[tuple[int, int]] = set()
    seen_files: set[Path] = set()

    def visit_dir(directory: Path) -> Iterator[Path]:
        try:
            st = directory.stat()
        except OSError as e:
            warn(directory, _os_reason(e))
            return
        key = (st.st_dev, st.st_ino)
        if key in seen_dirs:
            warn(directory, "symlink loop or directory already visited; skipped")
            return
        seen_dirs.add(key)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as e:
            warn(directory, _os_reason(e))
            return
        for entry in entries:
            if not include_hidden and entry.name.startswith("."):
                continue
            child = Path(entry.path)
            try:
                is_dir = entry.is_dir(follow_symlinks=True)
                is_file = entry.is_file(follow_symlinks=True)
            except OSError as e:
                warn(child, _os_reason(e))
                continue
            if is_dir:
                if not never_walked(Path(os.path.realpath(child)), exclude):
                    yield from visit_dir(child)
            elif is_file:
                if file_format(child) is not None:
                    yield child
            elif entry.is_symlink():
                warn(child, "broken symlink; skipped")

    for raw in paths:
        path = Path(os.path.abspath(raw))
        if path.is_dir():
            found = visit_dir(path)
        elif path.is_file():
            found = iter([path])
        else:
            warn(path, "not a file or directory; skipped")
            continue
        for f in found:
            if f not in seen_files:
                seen_files.add(f)
                yield f


def _os_reason(e: OSError) -> str:
    if isinstance(e, PermissionError):
        return "permission denied; skipped"
    if e.errno == 40:  # ELOOP
        return "symlink loop; skipped"
    return f"{e.strerror or e}; skipped"


def read_bytes(path: Path, *, max_bytes: int) -> bytes:
    """Read a whole file, refusing anything that is not a regular file or is too large."""
    check_file(path, max_bytes=max_bytes)
    try:
        return path.read_bytes()
    except OSError as e:
        raise SkipFile(_os_reason(e)) from None


STREAM_BYTES = 8_000_000  # plain-text files larger than this are read block by block
BLOCK_CHARS = 1_000_000  # about this many characters per block, cut at a line break


def check_file(path: Path, *, max_bytes: int) -> os.stat_result:
    """The file's stat, or :class:`SkipFile` when it is not a regular, non-empty file
    within the size limit."""
    try:
        st = path.stat()
    except OSError as e:
        raise SkipFile(_os_reason(e)) from None
    if not stat.S_ISREG(st.st_mode):
        raise SkipFile("not a regular file; skipped")
    if st.st_size > max_bytes:
        raise SkipFile(
            f"{st.st_size / 1e6:.1f} MB is over the {max_bytes / 1e6:g} MB limit "
            "(raise max_file_mb to index it); skipped"
        )
    if st.st_size == 0:
        raise SkipFile("empty file; skipped")
    return st


def streamed(path: Path, size: int) -> bool:
    """Whether a file is read in parts rather than whole, so that memory stays bounded
    whatever its size: plain text, Markdown and reStructuredText over
    :data:`STREAM_BYTES` in blocks (:func:`scan_text`, :func:`text_blocks`; such a file's
    sections have no heading places), and mail archives over it message by message
    (:func:`mbox_messages`)."""
    suffix = path.suffix.lower()
    return (suffix in TEXT_FORMATS or FORMATS.get(suffix) == "mbox") and size > STREAM_BYTES


@dataclass(frozen=True)
class TextScan:
    sha256: str
    encoding: str
    note: str = ""  # a one-line warning when the encoding is a guess in doubt


def scan_stream(path: Path) -> TextScan:
    """:func:`scan_text` for text; for a mail archive only its SHA-256 (each message
    says its own encoding)."""
    if FORMATS.get(path.suffix.lower()) != "mbox":
        return scan_text(path)
    from ragctl.store.vectors import file_sha256

    try:
        return TextScan(file_sha256(path), "")
    except OSError as e:
        raise SkipFile(_os_reason(e)) from None


def stream_sections(path: Path, scan: TextScan) -> Iterator[Section]:
    """The sections of a file read in parts (:func:`streamed`)."""
    if FORMATS.get(path.suffix.lower()) == "mbox":
        return mbox_messages(path)
    return text_blocks(path, scan.encoding)


def scan_text(path: Path) -> TextScan:
    """One pass over a large text file: its SHA-256 and the encoding to read it with,
    decided as :func:`read_text` decides (byte-order mark, UTF-8, UTF-16 without a mark,
    else :func:`guess_encoding` from its first 1 MB, with its note when in doubt)."""
    import codecs
    import hashlib

    sha = hashlib.sha256()
    utf8 = codecs.getincrementaldecoder("utf-8")()
    utf8_ok = True
    head = b""
    try:
        with path.open("rb") as f:
            while block := f.read(1 << 20):
                sha.update(block)
                if len(head) < BLOCK_CHARS:
                    head += block[:BLOCK_CHARS - len(head)]
                if utf8_ok:
                    try:
                        utf8.decode(block)
                    except UnicodeDecodeError:
                        utf8_ok = False
            if utf8_ok:
                try:
                    utf8.decode(b"", final=True)
                except UnicodeDecodeError:
                    utf8_ok = False
    except OSError as e:
        raise SkipFile(_os_reason(e)) from None
    digest = sha.hexdigest()
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return TextScan(digest, encoding)
    if b"\x00" in head[:8192]:
        utf16 = _utf16_encoding(head)
        if utf16 is None or _utf16_without_bom(head[:len(head) // 2 * 2]) is None:
            raise SkipFile("binary data, not text; skipped")
        return TextScan(digest, utf16)
    if utf8_ok:
        return TextScan(digest, "utf-8")
    guess = guess_encoding(head)
    return TextScan(digest, guess.ranked[0], guess.note)


def text_blocks(path: Path, encoding: str, *,
                block_chars: int | None = None) -> Iterator[Section]:
    """The decoded text of a large file as sections of about ``block_chars`` characters,
    each ending just after a paragraph break (else a line break) and carrying its
    character offset into the whole text, as :func:`decode_text` of the whole file gives
    it (line endings made "\\n", no byte-order mark)."""
    block_chars = block_chars or BLOCK_CHARS
    offset = 0
    carry = ""
    try:
        with path.open("r", encoding=encoding, errors="strict", newline=None) as f:
            first = True
            while True:
                piece = f.read(block_chars)
                if first:
                    piece, first = piece.removeprefix("\ufeff"), False
                text = carry + piece
                if not piece:
                    if text:
                        yield Section(text, "", offset)
                    return
                end = text.rfind("\n\n") + 2  # just after a paragraph break
                if end < len(text) // 2:
                    end = text.rfind("\n") + 1  # else just after a line break
                if end <= 0:  # no line break yet: keep reading
                    if len(text) <= 8 * block_chars:
                        carry = text
                        continue
                    end = text.rfind(" ") + 1 or len(text)  # one endless line
                yield Section(text[:end], "", offset)
                offset += end
                carry = text[end:]
    except UnicodeDecodeError:
        raise SkipFile(f"not valid {encoding} text after character {offset:,}; "
                       "skipped") from None
    except OSError as e:
        raise SkipFile(_os_reason(e)) from None


# ---------------------------------------------------------------------------- parsing

def parse(path: Path, data: bytes, *, ocr: Ocr | None = None) -> ParsedDocument:
    """Parse one file's bytes into sections. Raises :class:`SkipFile` with a reason.
    ``ocr`` reads PDF pages without a text layer and image files (None: they are
    skipped)."""
    fmt = file_format(path)
    if fmt is None:
        raise SkipFile(f"unsupported file type {path.suffix or '(none)'!r}; skipped")
    ocr = ocr or Ocr()
    try:
        with _quiet_parsers():
            if fmt in ("pdf", "image"):
                doc = (_parse_pdf if fmt == "pdf" else _parse_image)(path, data, ocr)
            elif fmt == "email":  # its attachments' scans are read as its pages are
                doc = _parse_email(path, data, ocr)
            else:
                doc = _PARSERS[fmt](path, data)
    except SkipFile:
        raise
    except Exception as e:  # a broken file must never stop the run
        raise SkipFile(f"cannot read this {fmt} file ({type(e).__name__}: {e}); skipped") from None
    sections = [replace(s, text=_plain_signs(s.text)) if _ODD_SIGN.search(s.text)
                else s for s in doc.sections if s.text.strip()]
    if not sections:
        raise SkipFile("no text found; skipped")
    return ParsedDocument(doc.path, doc.format, _SURROGATE.sub("\ufffd", doc.title), sections,
                          doc.notes)


# half of a UTF-16 pair alone (a PDF's broken text encoding splits an emoji): no character
# of its own, and nothing downstream can encode it; it becomes U+FFFD, one for one, so the
# section's offsets still hold
_SURROGATE = re.compile("[\ud800-\udfff]")
# a control character in a text (a PDF whose space glyph maps to NUL: "87B37C9\x000152"):
# no sign of a word, it becomes a space, one for one
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_ODD_SIGN = re.compile(f"{_SURROGATE.pattern}|{_CONTROL.pattern}")


def _plain_signs(text: str) -> str:
    """``text`` with each lone surrogate U+FFFD and each control character a space."""
    return _CONTROL.sub(" ", _SURROGATE.sub("\ufffd", text))


@contextmanager
def _quiet_parsers() -> Iterator[None]:
    """The parsing libraries' own warnings ("Ignoring wrong pointing object", pdfminer's
    "CropBox missing", BeautifulSoup's XMLParsedAsHTMLWarning) say nothing a reader of
    ragctl's one-line warnings can act on: they are dropped while a file is parsed
    (``-vv`` still shows the libraries' logs)."""
    import warnings

    loggers = [logging.getLogger(name) for name in _PARSER_LOGGERS]
    levels = [log.level for log in loggers]
    if not logger.isEnabledFor(logging.DEBUG):
        for log in loggers:
            log.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for log, level in zip(loggers, levels, strict=True):
            log.setLevel(level)


_PARSER_LOGGERS = ("pypdf", "pdfminer", "pdfplumber", "trafilatura", "htmldate", "courlan",
                   "PIL", "pypdfium2")


_BOMS = ((b"\x00\x00\xfe\xff", "utf-32"), (b"\xff\xfe\x00\x00", "utf-32"),
         (b"\xef\xbb\xbf", "utf-8-sig"), (b"\xfe\xff", "utf-16"), (b"\xff\xfe", "utf-16"))


@dataclass(frozen=True)
class DecodedText:
    text: str
    encoding: str  # a Python codec name
    note: str = ""  # a one-line warning when the encoding is a guess in doubt


def decode_text(data: bytes) -> str:
    """:func:`read_text`'s text."""
    return read_text(data).text


def read_text(data: bytes) -> DecodedText:
    """Decode plain text: by its byte-order mark (UTF-8, UTF-16, UTF-32); UTF-8; UTF-16
    without a mark; else the legacy encoding that reads it best (:func:`guess_encoding`),
    with a note when that guess is in doubt. Line endings become "\\n". Binary data and
    text that no encoding reads sensibly are skipped (:class:`SkipFile`)."""
    decoded = _decode(data)
    text = decoded.text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return DecodedText(text, decoded.encoding, decoded.note)


def _decode(data: bytes) -> DecodedText:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return DecodedText(data.decode(encoding), encoding)
            except UnicodeDecodeError:
                raise SkipFile(f"not valid {encoding.upper()} text despite its byte-order "
                               "mark; skipped") from None
    head = data[:8192]
    if b"\x00" in head:
        utf16 = _utf16_without_bom(data)
        if utf16 is not None:
            return DecodedText(utf16, _utf16_encoding(data) or "utf-16")
        raise SkipFile("binary data, not text; skipped")
    try:
        return DecodedText(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass
    guess = guess_encoding(data)
    for encoding in guess.ranked:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:  # a byte outside the sample that this one cannot read
            continue
        return DecodedText(text, encoding, guess.note if encoding == guess.ranked[0] else
                           f"encoding unclear, read as {_shown(encoding)}; some characters "
                           "may be wrong (saving it as UTF-8 makes it certain)")
    raise SkipFile(_UNKNOWN_ENCODING)


def _utf16_encoding(data: bytes) -> str | None:
    """"utf-16-le" or "utf-16-be" when NUL bytes sit at odd or even positions of mostly
    ASCII text."""
    sample = data[:4096]
    if len(sample) < 4:
        return None
    odd, even = sample[1::2].count(0), sample[0::2].count(0)
    half = len(sample) / 2
    return "utf-16-le" if odd > 0.4 * half and even < 0.05 * half else \
        "utf-16-be" if even > 0.4 * half and odd < 0.05 * half else None


def _utf16_without_bom(data: bytes) -> str | None:
    """UTF-16 text without a byte-order mark: NUL bytes at odd (little-endian) or even
    (big-endian) positions of mostly ASCII text."""
    encoding = _utf16_encoding(data)
    if encoding is None:
        return None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        return None
    printable = sum(ch.isprintable() or ch in "\n\r\t" for ch in text[:2000])
    return text if printable >= 0.95 * min(len(text), 2000) else None


# ------------------------------------------------------------ legacy 8-bit encodings

# The legacy encodings of the WHATWG Encoding Standard (those browsers read), most used
# first (by their share of web pages): the order decides between readings that fit equally
# well. Left out: ISO-8859-3, -4, -10, -14 and -16 and the Mac Cyrillic code page, rarely
# used, each of which reads the text of other alphabets as plausible letters ("Zaŋóģæ" for
# ISO-8859-2's "Zażółć"); Latin-1 and ISO-8859-9 (Windows-1252 and -1254 read them).
LEGACY_ENCODINGS = ("cp1252", "cp1251", "cp932", "gb18030", "cp949", "euc_jp", "big5hkscs",
                    "cp1250", "iso8859_2", "cp1256", "iso8859_15", "cp1254", "cp1253",
                    "iso8859_7", "koi8_r", "cp1255", "cp874", "cp1257", "cp1258",
                    "iso8859_5", "koi8_u", "iso8859_13", "iso8859_8", "iso8859_6",
                    "mac_roman", "cp866")
ODD_SHARE = 0.02  # readings with this few more odd characters (per non-ASCII one) fit as well
LETTER_SHARE = 0.1  # and those with this little less of a language's common letters
DOUBTFUL = 0.05  # a best reading with more odd characters than this is in doubt
UNREADABLE = 0.15  # and one with more than this is no text at all
SAMPLE_BYTES = 16_384  # the lines holding non-ASCII bytes that decide, up to this many bytes
_UNKNOWN_ENCODING = ("unknown text encoding (not UTF-8 or UTF-16, and no legacy encoding "
                     "reads it as text); skipped")


@dataclass(frozen=True)
class EncodingGuess:
    ranked: list[str]  # encodings that read the sample, the best first
    note: str = ""  # a one-line warning when the best is in doubt


@dataclass(frozen=True)
class _Reading:
    encoding: str
    rank: int  # in LEGACY_ENCODINGS: the more used first
    text: str
    odd: float  # odd characters per non-ASCII character
    common: float  # the share of letters among a language's most common ones
    capitals: bool  # more capitals than small letters
    cover: int  # how many of LEGACY_ENCODINGS can write all of its letters


def guess_encoding(data: bytes) -> EncodingGuess:
    """The legacy encoding of text that is not UTF-8, from its lines holding non-ASCII
    bytes. Each encoding of :data:`LEGACY_ENCODINGS` reads them, and the readings are
    compared, most telling first:

    1. how few odd characters they hold (:func:`_read`: a symbol inside a word, as
       "Za¿ó³æ" is Windows-1250's "Zażółć" read as Windows-1252; letters of two scripts in
       one word; a capital after a small letter, as KOI8-R's "Привет" read as Windows-1251
       "пРИВЕТ"; a control character; a sentence begun with a small letter);
    2. how many of their letters are among the most common ones of some language
       (charset-normalizer's letter frequencies: Greek letters read as Cyrillic give rare
       ones, "ѓѕќ");
    3. small letters before capitals (prose is mostly small letters);
    4. letters that belong together: how many encodings can write all of them (a real
       alphabet is in several, a mixture made by the wrong encoding in few);
    5. the more used encoding.

    The guess is in doubt (``note``) when the best reading still holds odd characters, or
    when another reading, as good on 1–3 and writable in at least half as many encodings,
    gives other letters: Hungarian "ő" (Windows-1250) or "õ" (Windows-1252) is such a case.
    charset-normalizer's own detector is not used: on short text it returns its first
    fitting guess (KOI8-R Russian came back as Shift_JIS katakana), and it takes
    ISO-8859-2 Polish for ISO-8859-10."""
    import codecs

    sample, at_start = _sample(data)
    readings = []
    for rank, encoding in enumerate(LEGACY_ENCODINGS):
        try:  # a character cut at the sample's end is left out
            text = codecs.getincrementaldecoder(encoding)().decode(sample, final=False)
        except UnicodeDecodeError:
            continue
        readings.append(_read(encoding, rank, text, at_start))
    least = min((r.odd for r in readings), default=1.0)
    if least > UNREADABLE:
        raise SkipFile(_UNKNOWN_ENCODING)
    fit = [r for r in readings if r.odd <= least + ODD_SHARE]
    most = max(r.common for r in fit)
    fit = [r for r in fit if r.common >= most - LETTER_SHARE]
    fit.sort(key=lambda r: (r.capitals, -r.cover, r.rank))
    best = fit[0]
    rivals = [r for r in fit[1:] if r.text != best.text and r.capitals == best.capitals
              and 2 * r.cover >= best.cover]
    ranked = [best.encoding] + [r.encoding for r in sorted(readings, key=lambda r: r.odd)
                                if r is not best]
    note = ""
    if best.odd > DOUBTFUL:
        note = (f"encoding unclear, read as {_shown(best.encoding)}; some characters may be "
                "wrong (saving it as UTF-8 makes it certain)")
    elif rivals:
        note = (f"encoding unclear, read as {_shown(best.encoding)}; as "
                f"{_shown(rivals[0].encoding)} some letters would differ (saving it as UTF-8 "
                "makes it certain)")
    return EncodingGuess(ranked, note)


def _shown(encoding: str) -> str:
    """A codec's name as people write it: "iso8859_2" → "iso-8859-2"."""
    return encoding.replace("iso8859_", "iso-8859-").replace("_", "-")


_HIGH_LINE = re.compile(rb"[^\n]*[\x80-\xff][^\n]*\n?")


def _sample(data: bytes) -> tuple[bytes, bool]:
    """The lines of ``data`` that hold non-ASCII bytes, up to :data:`SAMPLE_BYTES` (a
    quarter of that from one line); and whether the sample starts where the text does."""
    parts: list[bytes] = []
    size = 0
    at_start = False
    for m in _HIGH_LINE.finditer(data):
        if not parts:
            at_start = not data[:m.start()].strip()
        line = m.group()[:SAMPLE_BYTES // 4]
        parts.append(line)
        size += len(line)
        if size >= SAMPLE_BYTES:
            break
    return b"".join(parts), at_start


def _read(encoding: str, rank: int, text: str, at_start: bool) -> _Reading:
    """One encoding's reading of the sample, and what :func:`guess_encoding` compares
    (on its composed form: "e" and a combining accent count as "é")."""
    import unicodedata

    text = unicodedata.normalize("NFC", text)
    letters: dict[str, int] = {}
    odd = 0.0
    count = capitals = small = 0
    end = len(text)
    for m in _UNUSUAL.finditer(text):
        i, ch = m.start(), m.group()
        count += 1
        before = text[i - 1] if i else " "
        after = text[i + 1] if i + 1 < end else " "
        kind = _kind(ch)
        if kind == "letter":
            letters[ch] = letters.get(ch, 0) + 1
            if ch.isupper():
                capitals += 1
                odd += before.islower()  # "пРИВЕТ"
            elif ch.islower():
                small += 1
            script = _script(ch)
            odd += before.isalpha() and _script(before) != script  # "cafй"
            odd += after.isascii() and after.isalpha() and script != "LATIN"
        elif kind == "mark":  # an accent or vowel sign goes on a letter of its script
            odd += not before.isalpha() or _script(ch) not in ("COMBINING", _script(before))
        elif kind == "control":
            odd += 1
        elif kind == "format":
            odd += before.isalpha() and after.isalpha()
        elif kind == "punctuation":
            odd += before.isalpha() and after.isalpha()  # "Za¿ó"
        elif kind == "number":
            odd += after.isalpha()  # "³ódź", where "m²" is fine
        elif kind == "symbol":  # "®eljko", "╨ЁштхЄ"; less so "┬╤╥╨┼╫└" ("╔═╗" is art)
            odd += sum(0.5 if c.isalpha() else 0.25 if _kind(c) == "symbol" else 0
                       for c in (before, after))
    for m in _LONG_WORD.finditer(text):  # no word of a spaced script is this long
        word = m.group()
        if any(not ch.isascii() and _script(ch) not in _UNSPACED for ch in word[:8]):
            odd += (len(word) - _LONG_WORD_CHARS) / 2
    starts = [m.group(1) for m in _SENTENCE_START.finditer(text)]
    if at_start and (first := re.search(r"\w", text)):
        starts.append(first.group())
    odd += 2 * sum(not ch.isascii() and ch.islower() for ch in starts)
    total = sum(letters.values())
    common = max((sum(n for ch, n in letters.items() if ch.lower() in known)
                  for known in _common_letters()), default=0) / total if total else 1.0
    cover = sum(all(_writes(other, ch) for ch in letters) for other in LEGACY_ENCODINGS
                if other != "gb18030")  # GB 18030 writes every character
    return _Reading(encoding, rank, text, odd / max(count, 1), common, capitals > small,
                    cover)


_UNUSUAL = re.compile(r"[^\t\n\r\f\v\x20-\x7e]")  # what is not printable ASCII
_LONG_WORD_CHARS = 30
_LONG_WORD = re.compile(rf"[^\W\d_]{{{_LONG_WORD_CHARS + 1},}}")
_UNSPACED = frozenset({"CJK", "HALFWIDTH", "THAI", "LAO", "KHMER", "MYANMAR", "TIBETAN"})
_SENTENCE_START = re.compile(r"(?:[.!?]\s+|\n[ \t]*\r?\n\s*)(\w)")
_JOINERS = frozenset("'ʼ·\u00ad°")  # no oddity beside letters
_PUNCTUATION_BLOCKS = ((0x2000, 0x206F), (0x3000, 0x303F), (0xFF00, 0xFFEF))


@cache
def _kind(ch: str) -> str:
    import unicodedata

    category = unicodedata.category(ch)
    if category in ("Cc", "Cn", "Co", "Cs"):
        return "control"
    if category == "Cf":
        return "format"
    if category[0] == "L":
        return "letter"
    if category[0] == "M":
        return "mark"
    if ch in _JOINERS or category[0] == "Z" or \
            any(a <= ord(ch) <= b for a, b in _PUNCTUATION_BLOCKS):
        return "fine"  # dashes, quotes, ellipses; CJK and full-width punctuation
    if category[0] == "P":
        return "punctuation"
    if category[0] == "N":
        return "number"
    return "symbol"


@cache
def _script(ch: str) -> str:
    """"LATIN", "CYRILLIC", "GREEK", … (the first word of the character's name); Chinese
    characters, kana and CJK punctuation are one script, "CJK"."""
    import unicodedata

    if ch.isascii():
        return "LATIN"
    first = unicodedata.name(ch, "").split(" ")[0]
    return "CJK" if first in ("CJK", "HIRAGANA", "KATAKANA", "IDEOGRAPHIC") else first


@cache
def _writes(encoding: str, ch: str) -> bool:
    try:
        ch.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True


@cache
def _common_letters() -> list[frozenset[str]]:
    """The most common letters of each language charset-normalizer knows (41 of them)."""
    try:
        from charset_normalizer.constant import FREQUENCIES
    except ImportError:  # a version without the table: letter counts do not decide
        return []
    return [frozenset(ch.lower() for ch in letters) for letters in FREQUENCIES.values()]


def _parse_text(path: Path, data: bytes) -> ParsedDocument:
    decoded = read_text(data)
    if is_mail(decoded.text):
        return _parse_email(path, data)
    return ParsedDocument(path, "text", path.stem, [Section(decoded.text, "", 0)],
                          _notes(decoded))


def _notes(decoded: DecodedText) -> list[str]:
    return [decoded.note] if decoded.note else []


_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")


def _sections_from_headings(text: str, headings: list[tuple[int, int, int, str]],
                            ) -> list[Section]:
    """Cut ``text`` at headings given as (line_start, body_start, level, title)."""
    sections: list[Section] = []
    body_start = 0
    place = ""
    for line_start, next_body, next_place in _heading_places(headings):
        chunk = text[body_start:line_start]
        if chunk.strip():
            sections.append(Section(chunk, place, body_start))
        place = next_place
        body_start = next_body
    chunk = text[body_start:]
    if chunk.strip():
        sections.append(Section(chunk, place, body_start))
    return sections


def _heading_places(headings: list[tuple[int, int, int, str]]) -> list[tuple[int, int, str]]:
    """(line_start, body_start, place) of each heading given as (line_start, body_start,
    level, title): its place is the path of the headings it is under, itself last."""
    out: list[tuple[int, int, str]] = []
    stack: list[tuple[int, str]] = []
    for line_start, body_start, level, title in headings:
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        out.append((line_start, body_start, " > ".join(t for _, t in stack)))
    return out


def _line_spans(text: str) -> list[tuple[int, int]]:
    spans, pos = [], 0
    for line in text.split("\n"):
        spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    return spans


def _parse_markdown(path: Path, data: bytes) -> ParsedDocument:
    from ragctl.index.markup import FENCE, pipe_tables, plain_markdown

    decoded = read_text(data)
    text = decoded.text
    spans = _line_spans(text)
    headings: list[tuple[int, int, int, str]] = []
    in_fence = False
    for i, (start, end) in enumerate(spans):
        line = text[start:end]
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        m = _ATX.match(line)
        if m:
            headings.append((start, min(end + 1, len(text)), len(m.group(1)), m.group(2)))
            continue
        m = _SETEXT.match(line)
        if m and i > 0:
            pstart, pend = spans[i - 1]
            prev = text[pstart:pend]
            before = text[spans[i - 2][0]:spans[i - 2][1]] if i > 1 else ""
            if prev.strip() and not before.strip() and not _ATX.match(prev) \
                    and not prev.lstrip().startswith(("-", "*", ">", "|")):
                level = 1 if m.group(1).startswith("=") else 2
                headings.append((pstart, min(end + 1, len(text)), level, prev.strip()))
    headings = [(a, b, level, " ".join(plain_markdown(t).split()))
                for a, b, level, t in headings]
    plain = plain_markdown(text)
    tables = pipe_tables(text)
    for t in tables:  # a table is read as rows, below: its lines are left blank here
        plain = plain[:t.start] + re.sub(r"[^\n]", " ", plain[t.start:t.end]) + plain[t.end:]
    sections = _sections_from_headings(plain, headings)
    # each table's rows keyed by its header (table_lines), placed under its heading and
    # after the file's text, as a PDF's table rows follow its page
    places = _heading_places(headings)
    after = len(text) + 2
    for t in tables:
        rows = "\n\n".join(table_lines(t.rows, header=True))
        if rows:
            place = next((p for start, _, p in reversed(places) if start <= t.start), "")
            sections.append(Section(rows, place, after))
            after += len(rows) + 2
    title = headings[0][3] if headings else path.stem
    return ParsedDocument(path, "markdown", title, sections, _notes(decoded))


_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:._])\1{2,}\s*$")


def _parse_rst(path: Path, data: bytes) -> ParsedDocument:
    from ragctl.index.markup import plain_rst

    decoded = read_text(data)
    text = decoded.text
    spans = _line_spans(text)
    levels: list[str] = []
    headings: list[tuple[int, int, int, str]] = []
    for i in range(1, len(spans)):
        line = text[spans[i][0]:spans[i][1]]
        m = _RST_UNDERLINE.match(line)
        prev = text[spans[i - 1][0]:spans[i - 1][1]]
        if not m or not prev.strip() or _RST_UNDERLINE.match(prev):
            continue
        if len(line.rstrip()) < len(prev.rstrip()):
            continue
        start = spans[i - 1][0]
        overline = i > 1 and text[spans[i - 2][0]:spans[i - 2][1]].rstrip() == line.rstrip()
        char = m.group(1) + ("o" if overline else "")
        if overline:
            start = spans[i - 2][0]
        if char not in levels:
            levels.append(char)
        end = spans[i][1]
        headings.append((start, min(end + 1, len(text)), levels.index(char) + 1, prev.strip()))
    headings = [(a, b, level, " ".join(plain_rst(t).split())) for a, b, level, t in headings]
    sections = _sections_from_headings(plain_rst(text), headings)
    title = _rst_header_title(text) or (headings[0][3] if headings else path.stem)
    return ParsedDocument(path, "rst", title, sections, _notes(decoded))


_HEADER_FIELD = re.compile(r"[A-Za-z][\w-]*:[ \t]+\S")


def _rst_header_title(text: str) -> str | None:
    """The "Title:" of a header block of "Field: value" lines that opens the file (a PEP's
    preamble, an RFC 2822 style header): the document's title, where its first heading is
    only "Abstract"."""
    for line in text.lstrip("\ufeff\n").splitlines():
        if not line.strip():
            return None  # the header block ended without a title
        if line[:1] in " \t":
            continue  # a continued value
        if not _HEADER_FIELD.match(line):
            return None
        if line.lower().startswith("title:"):
            return " ".join(line.split(":", 1)[1].split()) or None
    return None


MAX_KEYED_COLUMNS = 20


def _undotted(header: str) -> str:
    """A header without the dot of an abbreviation it ends with ("MIN." → "MIN")."""
    return header[:-1] if re.search(r"[^\W\d_]\.$", header) else header


def _named(head: list[str], rows: list[list[str]]) -> list[str]:
    """A header without the unnamed columns at its end that fewer than half the rows
    fill (a column pdfplumber finds in a table's ruled margin, which a misaligned value or
    two fall into)."""
    end = len(head)
    while end and not head[end - 1] and 2 * sum(
            1 for r in rows[1:] if end - 1 < len(r) and r[end - 1]) < len(rows) - 1:
        end -= 1
    return head[:end]


def table_lines(rows: list[list[str]], *, header: bool | None = None) -> list[str]:
    """A table as one line per row that keeps the header with each value, so that a
    question about a cell finds its row: "Item: USB-C cable; Qty: 2; Price: $12.99".
    ``header``: whether the first row is one (HTML ``th`` cells); None guesses, for tables
    of three or more columns, from a first row of short labels without digits. A row of a
    label and a value gives "Capital: Wellington"; other rows keep their cells, " | "
    between them, as do the rows of a table wider than :data:`MAX_KEYED_COLUMNS` (its
    header stays its first line). A row whose only value is in a later column ("$10.00"
    under "TOTAL", its label "SALES TAX" left of the table) keeps the value alone: the
    column's name is not its label. A cell is answered from its keyed row
    (:mod:`ragctl.ask.cells`), so rows keep their header up to twenty columns; the span
    reader alone answered fewer cells of wide keyed rows (bench/tables.py)."""
    rows = [[cell_text(c) for c in r] for r in rows]
    rows = [r for r in rows if any(r)]
    titles: list[str] = []
    # a title merged across the columns ("Lesson 1: Step 1" in each of them, as a word
    # processor gives a merged cell) above the header: a line of its own, and the header
    # is the row under it
    while len(rows) >= 3 and len(rows[0]) >= 3 and len({c for c in rows[0] if c}) == 1 \
            and sum(1 for c in rows[0] if c) >= 2:
        titles.append(next(c for c in rows[0] if c))
        rows = rows[1:]
        header = None
    if not rows:
        return []
    head = rows[0]
    width = len(head)
    if header is None:
        header = _header_row(head) or typed_header(rows)
    elif header and not (width >= 2 and _names_after_labels(_named(head, rows))):
        header = False  # a title spanning the table ("New Zealand"), not column names
    if header and len(rows) >= 2 and 2 <= width <= MAX_KEYED_COLUMNS:
        out = [*titles, " | ".join(dict.fromkeys(c for c in head if c))]
        section = ""
        body = rows[1:]
        for k, r in enumerate(body):  # a first column without a header: the rows' labels
            filled = [j for j, v in enumerate(r) if v]
            if width >= 3 and filled == [0] and not head[0] and k + 1 < len(body) and \
                    _goes_on(r[0], body[k + 1][0]):
                # a label's first line alone ("Commodities less food, energy, and used cars
                # and" over "trucks"): the next row's label goes on from it
                body[k + 1] = [f"{r[0]} {body[k + 1][0]}", *body[k + 1][1:]]
                continue
            if width >= 3 and filled == [0] and not head[0] and PART_OF not in head and \
                    _section_name(r[0]):
                # a section's name ("Cost of sales:"): the rows under it, up to its total,
                # are part of it ("Services" of cost of sales, not of net sales)
                section = _unmarked(r[0]).rstrip(": ")
                out.append(r[0])
                continue
            if section and len(filled) > 1 and filled[0] == 0 and r[0] != section:
                r = [r[0], section, *r[1:]]
                keyed = [head[0], PART_OF, *head[1:]]
                if _TOTAL_LABEL.match(r[0]):
                    section = ""
            else:
                keyed = head
            if len(filled) == 2 and filled[0] == 0 and r[0].rstrip().endswith((":", "：")):
                # a field's label and its value ("Demonstrations Grand Total:" and "$186.98"
                # under "Qty"): the value is the label's, not the column's
                out.append(f"{r[0]} {r[filled[1]]}")
                continue
            if width >= 3 and len(filled) == 1 and filled[0] > 0:
                # one value in a later column: its label is outside the table ("SALES
                # TAX" left of "$10.00" under "TOTAL"), so the column's name is not it
                out.append(r[filled[0]])
                continue
            # a cell merged across columns under a header merged alike is said once; a
            # header's abbreviation dot ("MIN.", "Qty.") is left out of its key, so the row
            # stays one sentence ("MIN.: 10" would end one)
            pairs = dict.fromkeys(f"{_undotted(h)}: {v}" if h else v
                                  for h, v in zip(keyed, r, strict=False) if v and v != h)
            if pairs:
                out.append("; ".join(pairs))
        return out
    lines = list(titles)
    for r in rows:
        cells = [c for c in r if c]
        lines.append((" " if cells[0].rstrip().endswith((":", "：")) else ": ").join(cells)
                     if len(cells) == 2 else " | ".join(cells))
    return lines


def _goes_on(line: str, following: str) -> bool:
    """Whether a label alone on its line goes on in the next row's: that one starts with a
    word in small letters ("providers" under "Internet services and electronic
    information"), or the line leaves a bracket open that the next closes ("… 2020 LLC
    (Main" over "Street Lending Program)8"); and the line is no section's name ending in a
    colon ("Net sales by category:" over "iPhone")."""
    words = following.split()
    closed = line.count("(") > line.count(")") and following.count(")") > following.count("(")
    return bool(words) and (words[0].islower() or closed) and \
        not line.rstrip().endswith((":", "："))


MAX_COLSPAN = 50
_TOTAL_LABEL = re.compile(r"(?i)\s*total\b")  # a section's total, its last row
MAX_SECTION_WORDS = 8  # a longer line alone in the labels' column is a label wrapped over two


# a label wrapped over two lines: its first ends with a word that joins it to the next
# ("Club membership for shopping clubs, fraternal, or"), or a comma
_WRAPPED = re.compile(r"(?:\b(?:or|and|of|for|the|to|in|with|on|by|from)|[,&])\s*$", re.I)
_LABELLED = re.compile(r"[:：]\s*\S")  # a field and its value ("Serienummer: SDMPP373")


def _section_name(text: str) -> bool:
    """Whether a line alone in a table's labels' column names a section: "Cost of sales:",
    or a heading of capitalised words ("Current Liabilities", "Stockholders' equity"), not
    a label wrapped over two lines ("Preferred stock, par value …,", "no shares issued")."""
    words = text.split()
    if not words or len(words) > MAX_SECTION_WORDS or _WRAPPED.search(text) or \
            _LABELLED.search(text):
        return False
    if text.rstrip().endswith((":", "：")):
        return True
    long = [w for w in words if len(w) >= 4]
    return text[0].isupper() and 2 * sum(1 for w in long if w[0].isupper()) >= len(long)


def _spanned(cells: list[Any]) -> list[str]:
    """A table row's cells with their ``colspan`` spread: a header cell names each column
    it spans ("1990" over two), a data cell fills its first one."""
    out: list[str] = []
    for c in cells:
        text = c.get_text(" ", strip=True)
        try:
            span = min(max(int(c.get("colspan") or 1), 1), MAX_COLSPAN)
        except ValueError:
            span = 1
        out += [text] * span if c.name == "th" else [text] + [""] * (span - 1)
    return out


def _hidden(tag: Any) -> bool:
    """Whether an element is never shown: ``display: none`` or an inline-XBRL header."""
    if tag.name in ("ix:header", "ix:hidden"):
        return True
    style = tag.get("style") if hasattr(tag, "get") else None
    return isinstance(style, str) and "display:none" in style.replace(" ", "").lower()


_ALONE_BEFORE = frozenset("$€£¥₹")  # a cell of a sign written before the number it is of
_ALONE_AFTER = frozenset({")", "%", ")%"})  # … or after it: "(2,208,887" ")"


def _statement_rows(rows: list[list[str]]) -> tuple[list[list[str]], bool | None]:
    """A table of ``td`` cells laid out as financial statements are: a first row of
    column names (years, "High ($)") over a first column of row labels, each name spanning
    the cells of its column (with ``colspan``, or followed by empty cells as a content
    extractor spreads it), numbers with their "$" and ")" in cells of their own, and
    empty cells between the columns; perhaps a second row of names under the first. The
    rows with each sign joined to its number, the columns no row fills left out and the
    names spread over the cells they span, and whether the first row names the columns.
    Other tables are returned as they are, less their empty columns, with None: whether
    their first row names the columns is for :func:`table_lines` to tell."""
    width = len(rows[0]) if rows else 0
    if len(rows) < 2 or any(len(r) != width for r in rows):
        return rows, False
    joined = []
    for r in rows:
        r = list(r)
        for j, c in enumerate(r):
            if c in _ALONE_BEFORE:
                nxt = next((k for k in range(j + 1, width) if r[k]), None)
                if nxt is not None and (r[nxt][:1].isdigit() or r[nxt][:1] in "(-"):
                    r[nxt], r[j] = c + r[nxt], ""
            elif c.strip() in _ALONE_AFTER:
                prev = next((k for k in range(j - 1, -1, -1) if r[k]), None)
                if prev is not None and prev > 0:
                    r[prev], r[j] = r[prev] + c.strip(), ""
        joined.append(r)
    keep = [j for j in range(width) if any(r[j] for r in joined[1:])]
    if not keep:
        return rows, False
    names = _filled_on(joined[0])
    head = [names[j] for j in keep]
    body = [[r[j] for j in keep] for r in joined[1:]]
    if len(head) < 3 or not all(head[1:]) or not all(
            _YEAR_OR_LABEL.fullmatch(c) for c in head[1:]) or not all(
            r[0] for r in body if any(r[1:])) or not (
            not head[0] or head[0].endswith(":") or any(_YEAR.search(c) for c in head[1:])):
        return [[r[j] for j in keep] for r in joined], None
    under = [_filled_on(joined[1])[j] for j in keep]
    if len({c for c in under[1:] if c}) >= 2 and all(
            _YEAR_OR_LABEL.fullmatch(c) and not _NUMBER_CELL.fullmatch(c) for c in under[1:]):
        # a second row of names under the first ("2021" over "High ($)", "Low ($)")
        head = [under[0] or head[0], *(f"{h} {u}".strip() for h, u in zip(
            head[1:], under[1:], strict=True))]
        body = body[1:]
    return [head, *body], True


def _filled_on(row: list[str]) -> list[str]:
    """A row of names with each name carried over the empty cells after it (the columns
    it spans); the first cell, the rows' labels' column, is left as it is."""
    out, last = list(row), ""
    for j in range(1, len(out)):
        last = out[j] or last
        out[j] = last
    return out


# a statement's column name: a year, a date or a short label ("High ($)", "Q1 2021")
_YEAR_OR_LABEL = re.compile(r"[^\d]{0,30}?(?:(?:19|20)\d\d)?[^\d]{0,30}")
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")


_BLOCK_TAGS = ["p", "div", "li", "ul", "ol", "tr", "table", "pre", "blockquote", "section",
               "article", "header", "footer", "dd", "dt", "figcaption", "caption", "br", "hr",
               "h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "main", "aside"]


def html_to_sections(markup: str | bytes) -> tuple[str, list[Section]]:
    """Visible text of an HTML page, cut at its headings; returns (title, sections)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(markup, "lxml")
    title = _page_title(soup)
    for tag in soup(["script", "style", "noscript", "template", "head", "svg"]):
        tag.decompose()
    for tag in soup.find_all(re.compile(r"^h[1-6]$")):
        heading = " ".join(tag.get_text(" ", strip=True).split())
        tag.replace_with(f"\n\n\x01{tag.name[1]}\x02{heading}\x03\n\n")
    for tag in soup.find_all(_hidden):
        tag.decompose()  # not shown: an inline-XBRL header, a collapsed menu
    for table in soup.find_all("table"):
        if table.find("table") is not None:
            continue  # a layout table around others: its cells are read as text
        trs = table.find_all("tr")
        rows = [_spanned(tr.find_all(["th", "td"])) for tr in trs]
        first = trs[0].find_all(["th", "td"]) if trs else []
        header: bool | None = bool(first) and (all(c.name == "th" for c in first) or (
            trs[0].find_parent("thead") is not None and len(trs) > 1))  # <thead> of <td>s
        if header:  # an empty header cell after a named one: a colspan an extractor spread
            rows[0] = [c or (rows[0][i - 1] if i else "") for i, c in enumerate(rows[0])]
        else:
            rows, header = _statement_rows(rows)
        table.replace_with("\n\n" + "\n\n".join(table_lines(rows, header=header)) + "\n\n")
    for dl in soup.find_all("dl"):
        if (pairs := _described(dl)) is not None:
            dl.replace_with("\n\n" + "\n\n".join(table_lines(pairs, header=False)) + "\n\n")
    for tag in soup.find_all(_BLOCK_TAGS):
        tag.insert_before("\n\n" if tag.name not in ("td", "th", "br") else " ")
        tag.insert_after("\n\n" if tag.name not in ("td", "th", "br") else " ")
    raw = soup.get_text()
    lines = [" ".join(line.split()) for line in raw.split("\n")]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    headings: list[tuple[int, int, int, str]] = []
    out: list[str] = []
    pos = 0
    for m in re.finditer(r"\x01(\d)\x02(.*?)\x03", text):
        out.append(text[pos:m.start()])
        here = sum(len(x) for x in out)
        headings.append((here, here, int(m.group(1)), m.group(2)))
        pos = m.end()
    out.append(text[pos:])
    clean = "".join(out)
    return title, _sections_from_headings(clean, headings)


MAX_DESCRIPTION_CHARS = 200  # a description list's longer values are prose, read as text


def _described(dl: Any) -> list[list[str]] | None:
    """A description list's terms and their values as the rows of a two-column table
    ("Staff Costs" / "5,360.00" is "Staff Costs: 5,360.00", as a form's labelled line
    is), a term's values one after the other; None when it holds a table or a list of its
    own, or a value of prose (over :data:`MAX_DESCRIPTION_CHARS`)."""
    if dl.find(["table", "dl", "ul", "ol"]) is not None:
        return None
    rows: list[list[str]] = []
    for tag in dl.find_all(["dt", "dd"]):
        text = " ".join(tag.get_text(" ", strip=True).split())
        if tag.name == "dt":
            rows.append([text, ""])
        elif len(text) > MAX_DESCRIPTION_CHARS:
            return None
        elif rows and rows[-1][1]:
            rows[-1][1] += f"; {text}"
        elif rows:
            rows[-1][1] = text
        else:
            rows.append(["", text])
    return [row for row in rows if any(row)] or None


MIN_MAIN_CHARS = 200  # main content shorter than this is not trusted: the whole page is read


def _parse_html(path: Path, data: bytes) -> ParsedDocument:
    """A web page's main content (trafilatura drops navigation, log-in boxes, cookie
    banners, sidebars and footers; tables are kept), cut at its headings; the whole
    visible text when no main content is found."""
    if b"\x00" in data[:8192]:
        raise SkipFile("binary data, not HTML; skipped")
    data = _described_as_lines(_without_hidden(data))
    main = main_content(data)
    if main is not None:
        _, kept = html_to_sections(main)
        if sum(len(s.text.strip()) for s in kept) >= MIN_MAIN_CHARS:
            from bs4 import BeautifulSoup

            soup = BeautifulSoup(data, "lxml")
            title = _page_title(soup)
            sections = _tables_left_out(soup, kept, title) + kept
            return ParsedDocument(path, "html", title or path.stem,
                                  sections + _byline(soup, sections, title))
    title, sections = html_to_sections(data)
    return ParsedDocument(path, "html", title or path.stem, sections)


_HIDING = re.compile(rb"display\s*:\s*none|<ix:header", re.I)


def _described_as_lines(data: bytes) -> bytes:
    """The page with each description list of short values (:func:`_described`) written as
    paragraphs "term: value", which a content extractor keeps as they are (a list's terms
    and values it would set apart, as items of one list); the page as it is when it has
    none."""
    if re.search(rb"<dl\b", data, re.I) is None:
        return data
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(data, "lxml")
    found = [(dl, rows) for dl in soup.find_all("dl") if (rows := _described(dl)) is not None]
    if not found:
        return data
    for dl, rows in found:
        lines = []
        for line in table_lines(rows, header=False):
            p = soup.new_tag("p")
            p.string = line
            lines.append(p)
        dl.replace_with(*lines)
    return soup.encode("utf-8")


def _without_hidden(data: bytes) -> bytes:
    """The page less the elements never shown (:func:`_hidden`), which a content
    extractor would keep as text; the page as it is when it has none."""
    if _HIDING.search(data) is None:
        return data
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(data, "lxml")
    hidden = soup.find_all(_hidden)
    if not hidden:
        return data
    for tag in hidden:
        tag.decompose()
    return soup.encode("utf-8")  # its meta charset rewritten to match


def _page_title(soup: Any) -> str:
    return soup.title.get_text(" ", strip=True) if soup.title else ""


_BOILERPLATE = re.compile(r"nav|menu|footer|sidebar|cookie|banner|breadcrumb|share|social|"
                          r"related|comment|promo|advert", re.I)


def _tables_left_out(soup: Any, kept: list[Section], title: str) -> list[Section]:
    """Tables of the page that the main-content extractor dropped (an infobox with
    "Capital: Wellington" is data, not boilerplate), outside navigation, headers,
    footers and sidebars, read as the whole page would read them; one section placed
    under the page's title, its offsets after the main content's."""
    have = " ".join(" ".join(s.text.split()) for s in kept)
    texts: list[str] = []
    todo = [t for t in soup.find_all("table") if t.find_parent("table") is None]
    while todo:
        table = todo.pop(0)
        if _inside(table, ("nav", "header", "footer", "aside"), _BOILERPLATE):
            continue
        _, sections = html_to_sections(f"<html><body>{table}</body></html>")
        lines = [" ".join(line.split()) for s in sections for line in s.text.split("\n\n")
                 if line.strip()]
        if sum(len(line) for line in lines if line in have) > 0.2 * len(have):
            # a layout table around the page's content: look at the tables inside it
            todo[:0] = [t for t in table.find_all("table")
                        if t.find_parent("table") is table]
            continue
        cells = [" ".join(c.get_text(" ", strip=True).split())
                 for c in table.find_all(["td", "th"])]
        cells = [c for c in cells if len(c) >= 12]
        kept_already = len(cells) >= 2 and sum(c in have for c in cells) >= 0.8 * len(cells)
        if len(lines) >= 2 and not kept_already:
            texts.append("\n\n".join(lines))
    if not texts:
        return []
    return [_section_after(kept, "\n\n".join(texts), title)]


def _section_after(kept: list[Section], text: str, place: str) -> Section:
    """A section of text the page holds outside its main content, its offsets after it."""
    end = max((s.offset + len(s.text) for s in kept), default=0)
    return Section(text, place, end + 2)


def _classes(tag: Any) -> str:
    return " ".join([*(tag.get("class") or []), str(tag.get("id") or "")])


def _inside(tag: Any, names: tuple[str, ...], marked: re.Pattern[str]) -> bool:
    """Whether ``tag`` or an element around it is one of ``names`` or has a class or id
    that ``marked`` finds, unless that element holds most of the page's text: a layout's
    wrapper (``<div class="panel-two-col-sidebar-right">``, ``<body class="no-sidebars">``)
    is no sidebar."""
    chain = [p for p in [tag, *tag.parents] if p.name != "[document]"]
    if any(p.name in names for p in chain):
        return True
    page = 0
    for p in chain:
        if marked.search(_classes(p)):
            page = page or len(chain[-1].get_text())
            if len(p.get_text()) <= page / 2:
                return True
    return False


_BYLINE_MAX = 120  # characters: a longer element holding the author's name is prose


def _byline(soup: Any, kept: list[Section], title: str) -> list[Section]:
    """Who wrote the page, which the main-content extractor drops with the page's header:
    the shortest visible line naming the author of ``<meta name="author">`` ("By Arun Sai
    Krishnan • Nov 11, 2020"), one with "By" first, else "By" and the name; without such
    a tag, the first short element marked as the byline (``class="byline"``,
    ``itemprop="author"``: "Written by Rob Ewaschuk Edited by Betsy Beyer"). One section
    under the page's first heading (the article's title; else the page's), placed after
    the others; nothing when the page names no author or the kept text already has it."""
    from bs4 import NavigableString

    meta = soup.find("meta", attrs={"name": re.compile(r"^(author|byl)$", re.I)})
    author = " ".join(str(meta.get("content") or "").split()) if meta else ""
    body = soup.body or soup
    if author and len(author) <= _BYLINE_MAX:
        lines = {" ".join(node.split()).strip(" /|•·-") for node in body.find_all(string=True)
                 if type(node) is NavigableString  # not a comment, CDATA or doctype
                 and author.lower() in node.lower() and getattr(node.parent, "name", "") not in
                 ("script", "style", "noscript", "template", "title")}
        lines = {line for line in lines if len(line) <= _BYLINE_MAX}
        # a "By …" line first, then the shortest; a bare name is said to be the author's
        line = min(lines, key=lambda x: (not _BY.search(x), len(x)), default="")
        if not _BY.search(line) and len(line) <= len(author) + 2:
            line = f"By {line or author}"
    else:
        line = next((text for tag in body.find_all(_marked_byline)
                     if 0 < len(text := " ".join(tag.get_text(" ", strip=True).split()))
                     <= _BYLINE_MAX and not _inside(tag, _NOT_BYLINE, _NOT_BYLINE_MARKS)), "")
        if line and not _BY.search(line):
            line = f"By {line}"
    if not line or line in " ".join(" ".join(s.text.split()) for s in kept):
        return []
    heading = next((text for h1 in body.find_all("h1")
                    if not _inside(h1, _NOT_BYLINE, _NOT_BYLINE_MARKS)
                    and (text := " ".join(h1.get_text(" ", strip=True).split()))), "")
    return [_section_after(kept, line, heading or title)]


_BY = re.compile(r"\bby\b", re.I)
# where a byline or the article's heading is not: navigation, footers, sidebars, comments
_NOT_BYLINE = ("nav", "footer", "aside")
_NOT_BYLINE_MARKS = re.compile(r"comment|footer|sidebar|nav", re.I)


def _marked_byline(tag: Any) -> bool:
    return bool(re.search(r"\b(byline|author)\b", _classes(tag), re.I)
                or str(tag.get("itemprop") or "").lower() == "author"
                or "author" in (tag.get("rel") or []))


def main_content(markup: bytes | str) -> str | None:
    """The main content of a web page as HTML (None when trafilatura is missing or finds
    none)."""
    try:
        import trafilatura
    except ImportError:
        return None
    logging.getLogger("trafilatura").setLevel(logging.CRITICAL)
    try:
        return trafilatura.extract(markup, output_format="html", include_tables=True,
                                   include_links=False, include_images=False,
                                   include_comments=False, favor_recall=True,
                                   with_metadata=False)
    except Exception:  # a page trafilatura cannot handle is read whole
        return None


_SOFT_HYPHEN = re.compile("(?<=\\S)\u00ad(?=\\S)")
# an amount whose pence a PDF draws apart, in a bold run or a box of their own ("Total
# Income 212  .11"): spaces before a point and two digits, after a digit
_PARTED_PENCE = re.compile(r"(?<=\d)[ \t]+(?=\.\d\d(?!\d|\.\d))")


def printed_signs(text: str) -> str:
    """A PDF page's text with each soft hyphen inside a word the hyphen it prints, as a
    font that writes its hyphen so gives it ("03\u00adMar\u00ad2015", "e\u00adticket"), and
    each amount whose pence are drawn apart whole again ("212  .11" is "212.11")."""
    return _PARTED_PENCE.sub("", _SOFT_HYPHEN.sub("-", text))


def _parse_pdf(path: Path, data: bytes, ocr: Ocr) -> ParsedDocument:
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError, PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            try:
                opened = bool(reader.decrypt(""))
            except (DependencyError, NotImplementedError):
                opened = False
            if not opened:
                raise SkipFile("encrypted PDF (needs a password); skipped")
        texts = [printed_signs(page.extract_text() or "") for page in reader.pages]
        filled = pdf_form_fields(reader)
        meta = reader.metadata
        title = str(meta.title) if meta is not None and meta.title else path.stem
    except FileNotDecryptedError:
        raise SkipFile("encrypted PDF (needs a password); skipped") from None
    except PdfReadError as e:
        raise SkipFile(f"corrupt PDF ({e}); skipped") from None
    scanned = [i for i, t in enumerate(texts) if len("".join(t.split())) < MIN_PAGE_CHARS]
    # a text layer that is not text (a font without a usable character map gives
    # "p3xSTRxtT3xR2tTOR") is read like a scan, never indexed as it is
    garbled = [i for i, t in enumerate(texts) if i not in scanned and garbled_text(t)]
    notes: list[str] = []
    if garbled and ocr.engine is None:
        for i in garbled:
            texts[i] = ""
        if len(scanned) + len(garbled) == len(texts):
            raise SkipFile(f"PDF text is unreadable (its fonts map no characters) and OCR "
                           f"is off; skipped: {ocr.how_to_enable}")
        notes.append(f"{_pages(garbled)} with unreadable text (its fonts map no characters) "
                     f"not read: {ocr.how_to_enable}")
    scanned = sorted(scanned + garbled)
    if scanned and ocr.engine is None:
        if len(scanned) == len(texts):
            raise SkipFile(f"PDF has no text layer (a scan?); skipped: {ocr.how_to_enable}")
        if len(scanned) > len(garbled):
            notes.append(f"{_pages([i for i in scanned if i not in garbled])} without a "
                         f"text layer not read: {ocr.how_to_enable}")
    elif scanned:
        for i, text in _ocr_pdf_pages(data, scanned, ocr):
            texts[i] = text
    # pages read in the order their lines stand: one of fill-in blanks (True: its blanks
    # left out), one that draws its labels apart from their values, one read a word a line
    by_line = {i: blanks for i, t in enumerate(texts) if i not in scanned and (
        (blanks := fill_in_form(t)) or labels_apart(t) or scattered(t))}
    for i, text in _layout_pages(data, by_line) if by_line else ():
        texts[i] = text
    glued = [i for i, t in enumerate(texts)
             if i not in scanned and i not in by_line and glued_text(t)]
    for i, text in _unglued_pages(data, glued, texts) if glued else ():
        texts[i] = text
    tabular = {i for i, t in enumerate(texts) if i not in scanned and _looks_tabular(t)}
    # and a page after one, whose line of figures may be its table's last row
    tabular |= {i for i, t in enumerate(texts) if i not in scanned and i - 1 in tabular
                and _figures_line(t)}
    rows = dict(_pdf_tables(data, sorted(tabular), ocr.on_page, len(texts))) if tabular else {}
    open_head: list[str] | None = None  # a table written in text, " | " between cells
    for i, text in enumerate(texts):
        found, open_head = text_tables(text, open_head) if i not in scanned else ([], None)
        keyed = [line for t in found for line in table_lines(t, header=True)]
        if keyed:
            rows[i] = "\n\n".join([*([rows[i]] if rows.get(i) else []), *keyed])
    sections = []
    for i, text in enumerate(texts):
        sections.append(Section(text, f"p. {i + 1}", 0))
        after = len(text) + 2
        if i in rows:  # the rows of its tables follow a page's text, as if printed below it
            sections.append(Section(rows[i], f"p. {i + 1}", after))
            after += len(rows[i]) + 2
        if filled.get(i):  # so do the values filled into its form's fields
            sections.append(Section("\n\n".join(filled[i]), f"p. {i + 1} > form fields", after))
    if not any(s.text.strip() for s in sections):
        raise SkipFile("no text found, not even by OCR; skipped")
    return ParsedDocument(path, "pdf", title, sections, notes)


def pdf_form_fields(reader: Any) -> dict[int, list[str]]:
    """The values filled into a PDF form, page by page, each as a line "Label: value" (the
    field's tooltip, else its name in words: "CharacterName 2" → "Character Name"); a
    ticked box is "Yes", an empty field or an unticked box is left out. A filled form that
    was not flattened keeps its values only there, never in the page's text."""
    out: dict[int, list[str]] = {}
    seen: set[str] = set()
    for i, page in enumerate(reader.pages):
        try:
            annots = page.get("/Annots") or []
            widgets = [a.get_object() for a in annots]
        except Exception:  # a broken annotation array reads as none
            continue
        for w in widgets:
            if not hasattr(w, "get") or w.get("/Subtype") != "/Widget":
                continue
            parent = w.get("/Parent")
            try:
                parent = parent.get_object() if parent is not None else None
            except Exception:  # a parent the file cannot give reads as none
                parent = None
            if not hasattr(parent, "get"):  # none, or a reference to an object never defined
                parent = {}
            name = str(w.get("/T") or parent.get("/T") or "")
            value = w.get("/V", parent.get("/V"))
            label = _field_label(str(w.get("/TU") or parent.get("/TU") or ""), name)
            text = _field_value(value)
            if not text or not label or name in seen:
                continue
            seen.add(name)
            out.setdefault(i, []).append(f"{label}: {text}")
    return out


def _field_label(tooltip: str, name: str) -> str:
    """A field's label: its tooltip when that is a short label, else its name in words,
    unless the name is a code ("f1_01[0]") and the tooltip all there is."""
    tip = " ".join(tooltip.split())
    words = _field_words(name)
    if tip and len(tip.split()) <= 6 and not tip.endswith("."):
        return tip
    if len(re.sub(r"[^A-Za-z]", "", words)) >= 3 and not re.search(r"[\[\]]", name):
        return words
    return tip.rstrip(".") or words


def _field_words(name: str) -> str:
    """A form field's name as words: "CharacterName 2" → "Character Name"."""
    words = re.sub(r"(?<=[a-z])(?=[A-Z])|[_.]+", " ", name)
    return " ".join(re.sub(r"\s*\d+$", "", words).split())


def _field_value(value: Any) -> str:
    try:  # a value the field holds by reference (a signature's) is that object
        value = value.get_object() if hasattr(value, "get_object") else value
    except Exception:  # a reference to nothing holds no value
        return ""
    if value is None or isinstance(value, dict):  # a signature's value is a dictionary of
        return ""  # its digest and byte ranges, no text (its repr holds object addresses)
    if isinstance(value, list):
        return ", ".join(v for v in (_field_value(x) for x in value) if v)
    text = str(value).strip()
    if text.startswith("/"):  # a box or a radio button: its state's name
        return "" if text in ("/Off", "/No", "/0") else "Yes" if text in ("/Yes", "/On", "/1") \
            else text[1:]
    return text


def garbled_text(text: str) -> bool:
    """Whether a PDF page's extracted text is not text: of its words of five or more
    characters, 40% or more switch between lower case, capitals and digits four times or
    more ("p3xSTRxtT3xR2tTOR"). Among the 225 text pages of the real-documents folder
    (English, Chinese, code, tables) the most such words a page has is 16%; a page whose
    font maps no characters has 69%."""
    def kind(ch: str) -> str:
        return "l" if "a" <= ch <= "z" else "u" if "A" <= ch <= "Z" else \
            "d" if "0" <= ch <= "9" else ""

    def junk(word: str) -> bool:
        kinds = [k for k in map(kind, word) if k]
        return sum(a != b for a, b in pairwise(kinds)) >= 4

    words = [w for w in text.split() if len(w) >= 5]
    return len(words) >= 10 and sum(map(junk, words)) >= 0.4 * len(words)


def _pages(indexes: list[int]) -> str:
    numbers = [str(i + 1) for i in indexes]
    if len(numbers) == 1:
        return f"page {numbers[0]}"
    shown = ", ".join(numbers[:8]) + (f" and {len(numbers) - 8} more" if len(numbers) > 8
                                      else "")
    return f"{len(numbers)} pages ({shown})"


def _looks_tabular(text: str) -> bool:
    """Whether a page's text may come from a table (worth the slower table finder):
    three short lines holding two or more numbers each, a column of numbers (many
    lines of a few words with a number, as text extraction reads some tables), or a
    table's caption at the start of a line ("Table 3-2 Built-in global variables")."""
    if _CAPTION.search(text):
        return True
    lines = [line for line in text.splitlines() if line.strip()]
    rows = sum(1 for line in lines if _figures_row(line))
    column = sum(1 for line in lines if len(line.split()) <= 4 and _NUMBER.search(line))
    return rows >= 3 or (column >= 8 and column >= 0.4 * len(lines))


_NUMBER = re.compile(r"(?<![\w.])[$€£¥]?\d[\d,.]*%?")
_CAPTION = re.compile(r"(?m)^\s*(?:Table\s+[A-Z]?\d+(?:[-.]\d+)*\b|Table:)")
MAX_CELL_CHARS = 40  # a "table" whose cells are longer, on average, is a layout frame


def _figures_row(line: str) -> bool:
    """Whether a line of a page's text may be a table's row: short (16 words at most),
    with two or more numbers."""
    return len(line.split()) <= 16 and len(_NUMBER.findall(line)) >= 2


def _figures_line(text: str) -> bool:
    """Whether a page has a line that may be a table's row (:func:`_figures_row`)."""
    return any(_figures_row(line) for line in text.splitlines())


# A form filled in and then flattened (printed to PDF, "flatten" in a viewer) draws its
# values after the form's own text: read in the order the page draws them, "Nick Hu",
# "Cambridge trip" all come at the page's end, far from "Name:" and "Nature of Business:".
# A page of fill-in blanks (FORM_BLANKS runs of four or more underscores) is read in the
# order its words stand on the page instead, each value beside or under its label, and
# the blanks are left out ("Name: _N__ic_k__H_u___" is "Name: Nick Hu"), and a value
# written one sign a box is one word again ("N R X Y / 1 2 3" is "NRXY/123").
FORM_BLANKS = 3
_BLANK = re.compile(r"_{4,}")
# points by which a value may stand above or below its label's line and still be on it
# ("Nature of Business: Cambridge trip Date: October 11, 2021": pdfplumber's default 3,
# or 4, put the value a line above its label)
FORM_LINE_TOLERANCE = 5
# a value written one sign a box ("N R X Y / 1 2 3"): three or more single signs apart
_COMB = re.compile(r"(?<!\S)(?:\S ){2,}\S(?!\S)")


# A page that draws its labels in one run and their values in another (an invoice's "Date:",
# "Payment Terms:", "Due Date:" one under the other, "Jan 1, 2022", "Net 30 days" before
# them): pypdf reads the run of empty labels, LABELS_APART or more lines of a label and a
# colon alone, apart from a run as long of values; such a page is read in the order its
# lines stand on the page too, each value beside its label. Labels in prose ("Proof:", "as
# follows:") stand alone, not in runs; an empty form's labels have no values to meet (its
# page read by line would run its side boxes into its prose).
LABELS_APART = 3
_EMPTY_LABEL = re.compile(r"[^\W\d_][^:]{0,40}?[\w)]\s*:\s*")  # not "KNOWLES, :", a caption


def labels_apart(text: str) -> bool:
    """Whether a page's text (pypdf's) holds a run of :data:`LABELS_APART` lines or more
    that are a label of five words or fewer and its colon alone (the colon may stand on a
    line of its own), and a run as long of short lines that hold a figure (the values,
    drawn apart: "Jan 1, 2022", "po_number_123", "$127.50"; an empty form has none)."""
    labels = values = 0
    found = set()
    for line in re.sub(r"\n\s*:", ":", text).splitlines():
        line = line.strip()
        if not line:
            continue
        label = _EMPTY_LABEL.fullmatch(line) is not None and len(line.split()) <= 5
        labels = labels + 1 if label else 0
        values = values + 1 if not label and len(line.split()) <= 5 and re.search(
            r"\d", line) else 0
        found |= {"labels"} if labels >= LABELS_APART else set()
        found |= {"values"} if values >= LABELS_APART else set()
    return found == {"labels", "values"}


# A page that pypdf reads a word a line ("Line\n|\nPart\nNumber\n|\nDescription"): each
# word drawn on its own. When SCATTERED_SHARE or more of its lines (SCATTERED_LINES or
# more) hold one word, the page is read in the order its lines stand (pdfplumber) too.
SCATTERED_SHARE = 0.6
SCATTERED_LINES = 40


def scattered(text: str) -> bool:
    """Whether pypdf read a page a word a line (:data:`SCATTERED_SHARE`)."""
    lines = [line for line in text.splitlines() if line.strip()]
    return len(lines) >= SCATTERED_LINES and sum(
        len(line.split()) == 1 for line in lines) >= SCATTERED_SHARE * len(lines)


def fill_in_form(text: str) -> bool:
    """Whether a page's text is a form's: it holds :data:`FORM_BLANKS` fill-in blanks."""
    return len(_BLANK.findall(text)) >= FORM_BLANKS


def _layout_pages(data: bytes, pages: Mapping[int, bool]) -> Iterator[tuple[int, str]]:
    """The text of the given pages (0-based) in the order its lines stand on the page
    (pdfplumber); a page whose ``pages`` value is True (a page of fill-in blanks) without
    its blanks' underscores and with a value written one sign a box made one word; a page
    that pdfplumber cannot read, or reads as nothing, is not yielded (its text stays as it
    was read)."""
    import pdfplumber

    try:
        with pdfplumber.open(io.BytesIO(data)) as pdf:
            for i, blanks in pages.items():
                page = pdf.pages[i]
                try:
                    if blanks:
                        page = page.filter(lambda o: not (o.get("object_type") == "char"
                                                          and o.get("text") == "_"))
                    text = page.extract_text(y_tolerance=FORM_LINE_TOLERANCE)
                except Exception:  # a page pdfplumber cannot lay out keeps pypdf's text
                    text = ""
                page.close()
                lines = [" ".join(line.split()) for line in (text or "").splitlines()]
                if blanks:
                    lines = [_COMB.sub(lambda m: m.group(0).replace(" ", ""), line)
                             for line in lines]
                text = "\n".join(lines)
                if text.strip():
                    yield i, text
    except Exception:  # pdfplumber cannot open what pypdf read: the pages stay as read
        return


# Text boxes that pypdf runs together: a figure and the next label ("12572103Ordernummer:",
# "2014Orderdatum:"), a cell and the next ("29.99 € TTCDate limite", "AFIRMATIVOABDALA"). A
# page where at least GLUED_SHARE of the words look glued (a small letter, a capital, a small
# one: "consommationFacture"; a figure, then a word: "2014Orderdatum") has each such word
# cut where pdfplumber, which reads the words by their place, sees two or three.
GLUED_SHARE = 0.01
_GLUE = re.compile(r"[a-z][A-Z][a-z]|\d[A-Z][a-z]{2}|[A-Z]{2}[A-Z][a-z]{2}|\d[A-Z]{3}")


def glued_text(text: str) -> bool:
    """Whether a page's text (pypdf's) holds words run together (:data:`GLUED_SHARE`)."""
    words = text.split()
    return len(words) >= 20 and sum(1 for w in words if _GLUE.search(w)) >= GLUED_SHARE * len(
        words)


def _unglued_pages(data: bytes, indexes: list[int], texts: list[str]
                   ) -> Iterator[tuple[int, str]]:
    """The given pages' text (0-based, ``texts``: as read) with each word that is two or
    three of pdfplumber's words run together cut apart, in the order it was read; a page
    that pdfplumber cannot read is not yielded."""
    import pdfplumber

    try:
        with pdfplumber.open(io.BytesIO(data)) as pdf:
            for i in indexes:
                page = pdf.pages[i]
                try:
                    words = {w["text"] for w in page.extract_words()}
                except Exception:  # a page pdfplumber cannot read keeps pypdf's text
                    words = set()
                page.close()
                if words:
                    yield i, _cut_words(texts[i], words)
    except Exception:  # pdfplumber cannot open what pypdf read: the pages stay as read
        return


def _cut_words(text: str, words: set[str]) -> str:
    """``text`` with each of its words cut as :func:`_cut` cuts it."""
    return re.sub(r"\S+", lambda m: _cut(m.group(0), words), text)


def _cut(token: str, words: set[str], depth: int = 3) -> str:
    """``token`` as two or more of ``words`` ("2014Orderdatum:" → "2014 Orderdatum:"),
    else as it is."""
    if token in words or depth == 1:
        return token
    for k in range(len(token) - 1, 0, -1):  # the longest known start first
        head, tail = token[:k], token[k:]
        if head in words and len(head) > 1:
            rest = _cut(tail, words, depth - 1)
            if rest != tail or tail in words:
                return f"{head} {rest}"
    return token


# A table written as text, its cells set apart by " | " (a report printed from a program):
# a header line of TEXT_TABLE_COLUMNS or more names, then rows of as many cells, between
# lines of dashes; a row's continuation lines ("| Booking Ref: QF78956", fewer cells) are
# left in the page's text.
TEXT_TABLE_COLUMNS = 3
_RULE_LINE = re.compile(r"[-=_+*·.\s]{3,}")


def text_tables(text: str, head: list[str] | None = None
                ) -> tuple[list[list[list[str]]], list[str] | None]:
    """The tables of a page's text written with " | " between cells (see
    :data:`TEXT_TABLE_COLUMNS`), each as its header and its rows of as many cells; and the
    header of the table still open at the page's end. ``head``: the header of the table
    the page before left open (its rows go on here)."""
    tables: list[list[list[str]]] = []
    rows: list[list[str]] = []

    def close() -> None:
        if head is not None and rows:
            tables.append([head, *rows])

    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or _RULE_LINE.fullmatch(stripped):
            continue
        cells = [c.strip() for c in stripped.strip("|").split("|")] if "|" in stripped else []
        if head is not None and len(cells) == len(head) and not stripped.startswith("|"):
            rows.append(cells)
        elif head is not None and cells:
            continue  # a row's continuation, or a line of another shape inside the table
        else:
            close()
            head, rows = None, []
            if len(cells) >= TEXT_TABLE_COLUMNS and _names_columns(cells):
                head = cells
    close()
    return tables, head


def _pdf_tables(data: bytes, indexes: list[int],
                on_page: Callable[[str], None], pages: int) -> Iterator[tuple[int, str]]:
    """The tables found by pdfplumber on the given pages (0-based), as one line per row
    that keeps the header with each value (:func:`table_lines`); pages without a data
    table are not yielded. A table that goes on over the next page gets the header of its
    first part. The page's own text is kept as it is: with the rows in place of the
    table's text, bench/tables.py answered fewer cell questions (4 of 8, from 6)."""
    import pdfplumber

    header: list[str] | None = None
    with pdfplumber.open(io.BytesIO(data)) as pdf:
        for i in indexes:
            on_page(f"tables p. {i + 1} of {pages}")
            page = _without_overlaid_blanks(pdf.pages[i])
            words = cache(page.extract_words)  # read once, for the tables that need them
            tables = []
            for t in page.find_tables():
                raw = t.extract()
                rows = pdf_rows(raw)
                if _packed(rows) and (aligned := _realigned(page, t.bbox)):
                    # a statement ruled only here and there, its figures packed in a few
                    # cells ("Cost of revenues 39,039 45,943"): read by alignment instead
                    tables.append((t.bbox, aligned))
                    continue
                if _unlabelled(rows) and (wide := _beside(t.bbox, words())) != t.bbox and (
                        aligned := _realigned(page, wide, above=2, every=True)):
                    # ruled between its figures' columns alone, the rows' labels left of
                    # the rules: read by alignment over its lines (its columns' names
                    # within the rules, the page's title above them)
                    tables.append((wide, aligned))
                    continue
                cells = [c for r in rows for c in r if c]
                width = max((sum(1 for c in r if c) for r in rows), default=0)
                # the header of the page before's table, when it goes on here (its rows
                # in as many columns)
                continued = header if header is not None and len(header) == len(rows[0]) \
                    and i - 1 in indexes else None
                if (len(rows) < 2 and continued is None) or width < 2 or \
                        sum(map(len, cells)) > MAX_CELL_CHARS * len(cells):
                    continue
                if _header_row(rows[0]) or typed_header(rows):
                    header = rows[0]
                    tables.append((t.bbox, table_lines(rows, header=True)))
                elif continued is not None:
                    tables.append((t.bbox, table_lines([continued, *rows], header=True)[1:]))
                elif (stacked := stacked_header(raw)) is not None:
                    titles, head, rows = stacked
                    tables.append((t.bbox, [*titles, *table_lines([head, *rows],
                                                                  header=True)]))
                elif (above := header_above(words, t, rows)) is not None:
                    head, rows = above
                    tables.append((t.bbox, table_lines([head, *rows], header=True)))
                elif len(blocks := headed_blocks(rows)) > 1:
                    # a budget's sections, each under its own header ("ACTIVITIES | Qty |
                    # Per Item | Total"): each read as a table of its own
                    tables.append((t.bbox, [line for head, part in blocks for line in (
                        table_lines(part, header=True) if head else table_lines(
                            part, header=False))]))
                else:
                    tables.append((t.bbox, table_lines(rows, header=False)))
            if not tables:  # a table drawn without lines: by its words' alignment
                for t in page.find_tables(_BY_ALIGNMENT):
                    tables += [(t.bbox, table_lines(rows, header=True))
                               for rows in aligned_tables(whole_words(t, words()))]
            # a table under a caption ("Table: Total Amount by Category") that the finders
            # missed (two columns, a column of words beside the figures)
            try:
                captioned = captioned_tables(page, words())
            except Exception:  # a caption's region the finder cannot read: none
                captioned = []
            tables += [t for t in captioned if not any(_overlap(t[0], box) for box, _ in tables)]
            if tables:
                tables = [(box, _captioned(lines, caption_above(words(), box)))
                          for box, lines in tables]
                yield i, "\n\n".join("\n\n".join(lines) for _, lines in
                                     sorted(tables, key=lambda t: t[0][1]))
            else:
                header = None
            pdf.pages[i].close()


BLOCK_HEADER_CELLS = 3  # a header inside a ruled table names this many columns at least


def _heads_block(rows: list[list[str]], at: int) -> bool:
    """Whether row ``at`` of a ruled table heads the rows under it: three cells or more,
    all words (:func:`_names_columns`; the first may name the block: "DEMONSTRATIONS | Qty
    | Per Item | Total*"), and two of the next rows, or all when fewer, hold figures under
    two or more of its cells after the first."""
    row = rows[at]
    if sum(1 for c in row if c) < BLOCK_HEADER_CELLS or not _names_columns(row):
        return False
    named = [j for j, c in enumerate(row) if c and j > 0]
    below = [r for r in rows[at + 1:at + 8] if any(r)][:4]
    figured = [r for r in below if sum(1 for j in named if j < len(r) and r[j]
                                       and _NUMBER_CELL.fullmatch(r[j])) >= 2]
    return len(named) >= 2 and len(figured) >= min(2, len(below)) > 0


def headed_blocks(rows: list[list[str]]) -> list[tuple[bool, list[list[str]]]]:
    """A ruled table cut at the rows that head the rows under them (:func:`_heads_block`):
    each part, and whether its first row is its header; the rows before the first header
    are a part without one. One part, headed or not, when no row heads a block. A part
    leaves out the columns that none of its rows fills."""
    out: list[tuple[bool, list[list[str]]]] = []
    for i, row in enumerate(rows):
        if _heads_block(rows, i):
            out.append((True, [row]))
        elif out:
            out[-1][1].append(row)
        else:
            out.append((False, [row]))
    return [(headed, [[c for j, c in enumerate(r) if j in used] for r in part])
            for headed, part in out
            if (used := {j for r in part for j, c in enumerate(r) if c})]


# A table's caption ("Table 5.14: TDR Modifications", "TABLE II", "Table A-1") stands just
# above it, within CAPTION_GAP points, and is how a reader names the table: it is kept as
# the table's first line, so that a question about "Table II" finds the table's rows.
CAPTION_GAP = 60
CAPTION_LINES = 3
_TABLE_CAPTION = re.compile(
    r"(?:Table|TABLE)(?:\s*(?:[A-Z]?\d+|[IVXL]+|[A-Z])(?:[-.]\w+)*(?![\w-])|:)")


def caption_above(words: list[dict[str, Any]], bbox: tuple[float, float, float, float]
                  ) -> str | None:
    """The caption that stands over a table (its box ``bbox``) on the page whose words
    are ``words``: the nearest line above, within :data:`CAPTION_GAP` points, that starts
    "Table" and a number, with the lines under it down to the table
    (:data:`CAPTION_LINES` at most); None when there is none."""
    x0, top, x1, _ = bbox
    near = sorted((w for w in words if top - CAPTION_GAP <= w["bottom"] <= top + 1
                   and w["x1"] > x0 - 5 and w["x0"] < x1 + 5), key=lambda w: w["top"])
    texts = [_line_text(line) for line in _word_lines(near, FORM_LINE_TOLERANCE)]
    for k in range(len(texts) - 1, max(-1, len(texts) - 1 - CAPTION_LINES), -1):
        if _TABLE_CAPTION.match(texts[k]):
            return " ".join(texts[k:])
    return None


CAPTION_ROW_WORDS = 12  # a longer line under a caption is prose: the table is over
MIN_CAPTIONED_ROWS = 3


def captioned_tables(page: Any, words: list[dict[str, Any]]
                     ) -> list[tuple[tuple[float, float, float, float], list[str]]]:
    """The tables that stand under a caption ("Table: Total Amount by Category", "Table
    3"): the line under the caption is the header, and the lines after it, each of
    :data:`CAPTION_ROW_WORDS` words or fewer and holding a figure, the rows (at least
    :data:`MIN_CAPTIONED_ROWS`); their columns are found by alignment within that region
    alone (a page's prose around them misleads the finder), a column without a name of
    its own is the end of the one to its left ("5th Grade" | "Promotion")."""
    lines = _word_lines(sorted(words, key=lambda w: (round(w["top"]), w["x0"])),
                        FORM_LINE_TOLERANCE - 2)
    out = []
    for i, line in enumerate(lines[:-1]):
        caption = _line_text(line)
        if not _TABLE_CAPTION.match(caption):
            continue
        body = []
        for row in lines[i + 2:]:
            if len(row) > CAPTION_ROW_WORDS or not any(_FIGURE.fullmatch(w["text"])
                                                        for w in row):
                break
            body.append(row)
        if len(body) < MIN_CAPTIONED_ROWS:
            continue
        region = [lines[i + 1], *body]
        box = (min(w["x0"] for r in region for w in r) - 1, line[0]["bottom"] + 0.5,
               max(w["x1"] for r in region for w in r) + 1,
               max(w["bottom"] for w in body[-1]) + 1)
        crop = _crop(page, box)
        found = crop.find_tables(_BY_ALIGNMENT) if crop is not None else []
        if not found:
            continue
        rows = [r for r in whole_words(found[0], crop.extract_words()) if any(r)]
        head = rows[0] if rows else []
        if len(rows) < MIN_CAPTIONED_ROWS + 1 or not head or not head[0]:
            continue
        keep = [j for j, h in enumerate(head) if h]
        merged = [[" ".join(c for c in r[j:(keep[k + 1] if k + 1 < len(keep) else len(r))]
                            if c) for k, j in enumerate(keep)] for r in rows]
        if len(keep) >= 2:
            out.append((box, [caption, *table_lines(merged, header=True)]))
    return out


def _word_lines(words: Iterable[dict[str, Any]], tolerance: float
                ) -> list[list[dict[str, Any]]]:
    """A page's words (pdfplumber's, in the order given, top down) in lines: a word joins
    the line whose first word's top is within ``tolerance`` points of its own."""
    lines: list[list[dict[str, Any]]] = []
    for w in words:
        if lines and abs(w["top"] - lines[-1][0]["top"]) <= tolerance:
            lines[-1].append(w)
        else:
            lines.append([w])
    return lines


def _line_text(line: list[dict[str, Any]]) -> str:
    """A line's words, left to right."""
    return " ".join(w["text"] for w in sorted(line, key=lambda w: w["x0"]))


def _crop(page: Any, box: tuple[float, float, float, float]) -> Any:
    """The part of a page (pdfplumber's) within ``box``, cut to the page's own box (whose
    origin need not be nought); None when nothing of it is on the page."""
    px0, ptop, px1, pbottom = page.bbox
    x0, top, x1, bottom = max(box[0], px0), max(box[1], ptop), min(box[2], px1), \
        min(box[3], pbottom)
    if x1 - x0 < 1 or bottom - top < 1:
        return None
    return page.crop((x0, top, x1, bottom))


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    """Whether two boxes (x0, top, x1, bottom) overlap."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _captioned(lines: list[str], caption: str | None) -> list[str]:
    """A table's lines under its caption, when it has one its lines do not start with."""
    if not caption or (lines and lines[0].startswith(caption[:20])):
        return lines
    return [caption, *lines]


# A table whose ruled body starts under its header (a financial statement: "Three Months
# Ended" over "September 30," over "2023", above the first line): the header is read from
# the lines just above the table, each phrase named to every column it stands over, up to
# HEADER_LINES lines, until a line that reaches into the column of row labels (the title)
# or a gap of more than HEADER_GAP line heights. One line of the labels' column alone just
# above ("Net sales:", a section's name) is passed over.
HEADER_LINES = 4
HEADER_GAP = 2.5


def header_above(words: Callable[[], list[dict[str, Any]]], table: Any, rows: list[list[str]]
                 ) -> tuple[list[str], list[list[str]]] | None:
    """The column names written above ``table`` (pdfplumber's) among its page's ``words``
    (pdfplumber's ``extract_words``, read when first needed), and its
    ``rows`` without the columns that are blank in every row and unnamed; None unless every
    column but the first (the rows' labels), two or more, gets a name of its own."""
    cells = table.rows[0].cells if table.rows else []
    width = len(cells)
    if width < 2 or any(len(r) != width for r in rows):
        return None
    spans: list[tuple[float, float] | None] = [None] * width
    for r in table.rows:
        for j, c in enumerate(r.cells[:width]):
            if c is not None:
                lo, hi = spans[j] or (c[0], c[2])
                spans[j] = (min(lo, c[0]), max(hi, c[2]))
    used = [j for j in range(1, width) if any(r[j] for r in rows)]
    if len(used) < 2 or spans[0] is None or any(spans[j] is None for j in used):
        return None
    label_right = spans[0][1]
    top = table.bbox[1]
    above = [w for w in words() if w["bottom"] <= top + 1 or w["top"] < top - 1]
    lines: dict[float, list[dict[str, Any]]] = {}
    for w in sorted(above, key=lambda w: -w["top"]):
        key = next((k for k in lines if abs(k - w["top"]) < 2), w["top"])
        lines.setdefault(key, []).append(w)
    names: dict[int, list[str]] = {j: [] for j in used}
    last, passed, taken, section = top, False, 0, ""
    for key in sorted(lines, reverse=True):
        line = sorted(lines[key], key=lambda w: w["x0"])
        height = max(w["bottom"] - w["top"] for w in line)
        if last - line[0]["bottom"] > HEADER_GAP * height:
            break
        last = key
        if any(w["x0"] < label_right - 1 for w in line):
            if taken or passed or any(w["x1"] > label_right + 1 for w in line):
                break  # a title, or a second line of labels: the header is over
            passed = True
            section = " ".join(w["text"] for w in line)  # "Net sales:", the rows' section
            continue
        phrases: list[list[dict[str, Any]]] = []
        for w in line:
            if phrases and w["x0"] - phrases[-1][-1]["x1"] < 0.6 * height:
                phrases[-1].append(w)
            else:
                phrases.append([w])
        for ph in phrases:
            x0, x1 = ph[0]["x0"], ph[-1]["x1"]
            text = " ".join(w["text"] for w in ph)
            for j in used:
                lo, hi = spans[j]  # type: ignore[misc]
                if x0 < hi and x1 > lo:
                    names[j].insert(0, text)
        taken += 1
        if taken >= HEADER_LINES:
            break
    head = [" ".join(names[j]) for j in used]
    if not all(head) or len(set(head)) < len(head):
        return None
    keep = [0, *used]
    heading = [[section, *([""] * len(used))]] if section.endswith(":") else []
    return ["", *head], [*heading, *([r[j] for j in keep] for r in rows)]


# pdfplumber's table finder by the alignment of words, for a page whose lined tables it
# found none of (a table ruled with three lines, as papers print them)
_BY_ALIGNMENT = {"vertical_strategy": "text", "horizontal_strategy": "text"}
_FIGURE = re.compile(r"[<>≤≥~≈]?[-+−(]?[$€£¥]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?%?\)?")
MIN_ALIGNED_ROWS = 3
_MONTH_START = re.compile(r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\b",
                          re.I)
_LONE_SIGN = re.compile(r"(?:^|\s)[$€£¥](?=\s|$)")
# a statement's cell with no amount ("—"), and its currency sign set apart from the figure
# ("$ | 24"): the first counts as a figure, the second as no cell at all
_NIL = frozenset({"—", "–", "-", "−"})
_CURRENCY_SIGN = frozenset({"$", "€", "£", "¥"})


def _figure_cell(cell: str) -> bool:
    """Whether an aligned table's cell is a figure, or a statement's "—" (none)."""
    return cell in _NIL or bool(_FIGURE.fullmatch(cell.replace("(cid:3)", "−")))


def whole_words(table: Any, words: list[dict[str, Any]], above: float | None = None,
                every: bool = False) -> list[list[str]]:
    """The cells of a table found by alignment, each made of the whole words whose middle
    lies in it. The finder's columns start where most of a column's words start, so a word
    set further out (a centred "Boiling Points", "Noble gases") would lose the letters
    outside; here the outer columns take every word that reaches into the table, or with
    ``every`` (the words of a region cut to the table) every word on its lines."""
    x0, y0, x1, _ = table.bbox
    if every:
        x0, x1 = -math.inf, math.inf
    edges = [c.bbox[0] for c in table.columns[1:]]
    out: list[list[str]] = []
    rights: list[list[float | None]] = []  # each cell's right edge
    bands = [(row.bbox[1], row.bbox[3]) for row in table.rows]
    if above is not None:  # and the lines from ``above`` down to the table, which the
        # finder left out (its columns' names, over figures only: "2025 | 2026")
        near = sorted((w for w in words if w["top"] >= above and w["bottom"] <= y0
                       and w["x1"] > x0 and w["x0"] < x1), key=lambda w: w["top"])
        bands = [(line[0]["top"], max(w["bottom"] for w in line))
                 for line in _word_lines(near, LINE_GAP)] + bands
    grid: list[list[list[dict[str, Any]]]] = []
    for top, bottom in bands:
        cells: list[list[dict[str, Any]]] = [[] for _ in table.columns]
        for w in words:
            if not top <= (w["top"] + w["bottom"]) / 2 <= bottom or w["x1"] <= x0 or \
                    w["x0"] >= x1:
                continue
            cells[bisect.bisect_right(edges, (w["x0"] + w["x1"]) / 2)].append(w)
        grid.append(cells)
    _names_placed(grid)
    for cells in grid:
        out.append([" ".join(w["text"] for w in c) for c in cells])
        rights.append([max(w["x1"] for w in c) if c else None for c in cells])
    return _split_columns_joined(out, rights)


NAME_LINES = 3  # lines of columns' names above a run of figures, placed by the figures
WORD_GAP = 4.0  # points: words this close on a line are one name


def _names_placed(grid: list[list[list[dict[str, Any]]]]) -> None:
    """The words of the lines just above each run of figures (at most :data:`NAME_LINES`)
    moved to the column whose figures they stand over: the finder's columns start where
    most of a column's words start, so a name centred or set right over its figures
    ("Prijs per stuk" over "€ 399,00") may fall into the column beside it. A word over
    the figures of no column goes with the name it is part of (the word beside it,
    :data:`WORD_GAP`), to its right first ("Prijs" of "Prijs incl. BTW")."""
    def figure_words(cell: list[dict[str, Any]]) -> list[dict[str, Any]]:
        kept = [w for w in cell if w["text"] not in _CURRENCY_SIGN]
        text = " ".join(w["text"] for w in kept)
        return kept if kept and _figure_cell(text) and not _YEAR_CELL.fullmatch(text) else []

    def figured(cells: list[list[dict[str, Any]]]) -> bool:
        return sum(1 for c in cells if figure_words(c)) >= 3

    k = 0
    while k < len(grid):
        if not figured(grid[k]):
            k += 1
            continue
        end = k
        while end < len(grid) and figured(grid[end]):
            end += 1
        spans: dict[int, tuple[float, float]] = {}
        for cells in grid[k:end]:
            for j, c in enumerate(cells):
                if j and (fw := figure_words(c)):
                    a, b = min(w["x0"] for w in fw), max(w["x1"] for w in fw)
                    spans[j] = (min(a, spans[j][0]), max(b, spans[j][1])) if j in spans \
                        else (a, b)
        heads = [h for h in range(k - 1, -1, -1) if any(grid[h])][:NAME_LINES]
        if any(figured(grid[h]) for h in heads):
            heads = heads[:next(i for i, h in enumerate(heads) if figured(grid[h]))]
        for h in heads:
            _placed(grid[h], spans)
        k = end


def _placed(cells: list[list[dict[str, Any]]], spans: dict[int, tuple[float, float]]) -> None:
    """A line's words (:func:`_names_placed`) moved to the columns they stand over."""
    line = sorted(((w, j) for j, c in enumerate(cells) for w in c), key=lambda x: x[0]["x0"])
    if not line or len(line) > 4 * max(len(spans), 1):
        return  # a sentence, not names
    place: list[int | None] = []
    for w, _ in line:
        over = {j: min(w["x1"], b) - max(w["x0"], a) for j, (a, b) in spans.items()}
        best = max(over, key=lambda j: over[j], default=None)
        place.append(best if best is not None and over[best] > 0 else None)
    for i in range(len(line) - 2, -1, -1):  # a word over no figures: its name's column
        if place[i] is None and place[i + 1] is not None and \
                line[i + 1][0]["x0"] - line[i][0]["x1"] <= WORD_GAP:
            place[i] = place[i + 1]
    for i in range(1, len(line)):
        if place[i] is None and place[i - 1] is not None and \
                line[i][0]["x0"] - line[i - 1][0]["x1"] <= WORD_GAP:
            place[i] = place[i - 1]
    if all(p is None or p == j for p, (_, j) in zip(place, line, strict=True)):
        return
    for c in cells:
        c.clear()
    for p, (w, j) in zip(place, line, strict=True):
        cells[j if p is None else p].append(w)


# points: figures whose right edges lie this close stand in one column (a negative
# amount's ")" stands past the digits its column's other figures end at)
SAME_EDGE = 4.0
LINE_GAP = 2.0  # points: words whose tops lie this close stand on one line


def _split_columns_joined(rows: list[list[str]], rights: list[list[float | None]]
                          ) -> list[list[str]]:
    """An aligned table's column that the finder cut in two, joined again: a column of
    right-aligned figures whose wide ones ("(19,827)") start left of where its narrow ones
    ("-") do falls into two columns that never both hold a figure in one row; their
    figures end at the same edge. (A ledger's Debit and Credit also never share a row,
    but their figures end a column apart.)"""
    if not rows:
        return rows
    body = [k for k, r in enumerate(rows) if sum(  # rows of figures, not the header's
        1 for c in r if _FIGURE.fullmatch(c) and not _YEAR_CELL.fullmatch(c)) >= 3]
    j = 0
    while j + 1 < len(rows[0]):
        ends: list[list[float]] = [[], []]
        for r, e in ((rows[k], rights[k]) for k in body):
            a, b = (_LONE_SIGN.sub(" ", c).strip() for c in r[j:j + 2])
            if a and b and (_figure_cell(a) or _figure_cell(b)):
                break  # two figures (or a figure and a name) side by side
            for k, cell in enumerate((a, b)):
                if cell and _figure_cell(cell) and (edge := e[j + k]) is not None:
                    ends[k].append(edge)
        else:
            if ends[0] and ends[1] and max(ends[0] + ends[1]) - min(
                    ends[0] + ends[1]) <= SAME_EDGE:
                for r, e in zip(rows, rights, strict=True):
                    r[j:j + 2] = [" ".join(c for c in r[j:j + 2] if c)]
                    e[j:j + 2] = [max((x for x in e[j:j + 2] if x is not None), default=None)]
                continue
        j += 1
    return rows


def aligned_rows(raw: Sequence[Sequence[str | None]]) -> list[list[str]]:
    """The first table in what the finder by alignment returns (see
    :func:`aligned_tables`); [] when there is none."""
    return next(iter(aligned_tables(raw)), [])


def aligned_tables(raw: Sequence[Sequence[str | None]]) -> list[list[list[str]]]:
    """The tables in what the finder by alignment returns, which runs on into the text
    around them (a page of two tables, each under its caption, gives one region)."""
    # a currency sign set beside a figure or a label, not a cell ("$ 288,232", "revenues $")
    rows = [[_LONE_SIGN.sub(" ", " ".join((c or "").split())).strip() for c in r] for r in raw]
    rows = _signs_folded([r for r in rows if any(r)])
    out: list[list[list[str]]] = []
    while rows:
        table, end = _aligned(rows)
        if table:
            out.append(table)
        rows = rows[max(end, 1):] if table else []
    return out


_SIGNS = frozenset({"+", "-", "−"})


def _signs_folded(rows: list[list[str]]) -> list[list[str]]:
    """A region's rows with a column of signs alone beside figures ("+ | 5,965", "- |
    134,597": a change set apart from its figure) put to the figures on their right:
    "+5,965"; a word over the signs goes to the figures' name ("Feb" of "Feb 25, 2026")."""
    width = max((len(r) for r in rows), default=0)
    signs = [j for j in range(width - 1) if len(beside := [
        r[j] for r in rows if j + 1 < len(r) and r[j] and _FIGURE.fullmatch(r[j + 1])]) >= \
        MIN_ALIGNED_ROWS and all(c in _SIGNS for c in beside)]
    if not signs:
        return rows
    out = []
    for r in rows:
        r = list(r)
        for j in signs:
            if j + 1 >= len(r) or not r[j]:
                continue
            if _FIGURE.fullmatch(r[j + 1]):
                r[j], r[j + 1] = "", ("-" if r[j] == "−" else r[j]) + r[j + 1]
            elif r[j] not in _SIGNS:  # a name's word over the signs: the figures' name
                r[j], r[j + 1] = "", f"{r[j]} {r[j + 1]}".strip()
        out.append(r)
    gone = {j for j in signs if not any(j < len(r) and r[j] for r in out)}
    return [[c for j, c in enumerate(r) if j not in gone] for r in out]


def _aligned(rows: list[list[str]]) -> tuple[list[list[str]], int]:
    """The first table in the rows of a region found by alignment, and the index of the
    row past it: its first run of at least :data:`MIN_ALIGNED_ROWS` rows whose cells are
    mostly figures, under the rows of names just above it (read down each column:
    "Polarization" over "resistance (Ω)"; a caption above them is none); none when there
    is no such run, or no names, or fewer than three columns."""

    def figures(r: list[str]) -> bool:  # (a row of years alone is a header)
        at = next((j for j, c in enumerate(r) if c and _FIGURE.fullmatch(c)), len(r))
        label = [c for c in r[:at] if c]
        # a label wrapped over several columns, its words going on in small letters
        # ("Foreign | official and | international accounts"), is one cell
        filled = [c for c in ([" ".join(label)] if len(label) > 1 and all(
            c[0].islower() for c in label[1:]) else label) + r[at:]
                  if c and c not in _CURRENCY_SIGN]
        return len(filled) >= 3 and sum(1 for c in filled if _figure_cell(c)) >= 0.6 * len(
            filled) and any(_FIGURE.fullmatch(c) and not _YEAR_CELL.fullmatch(c)
                            for c in filled)

    start = next((k for k in range(len(rows)) if all(
        figures(r) for r in rows[k:k + MIN_ALIGNED_ROWS]) and k + MIN_ALIGNED_ROWS <= len(
        rows)), None)
    if start is None:
        return [], len(rows)
    # a statement's first rows of figures, a section's name between them and the run
    # ("Revenues", then "Costs and expenses:", then its rows): the table starts there
    while start >= 2 and not figures(rows[start - 1]) and figures(rows[start - 2]) and \
            _labels_only(rows[start - 1]):
        start -= 2
        while start >= 1 and figures(rows[start - 1]):
            start -= 1
    end = start
    while end < len(rows) and figures(rows[end]):
        end += 1
    names: list[list[str]] = []
    k = start - 1
    # names stand over the figures' columns (a section's name left of them is none)
    first_figure = next((j for j, c in enumerate(rows[start]) if c and _figure_cell(c)), 0)
    while k >= 0 and len(names) < 3 and not figures(rows[k]) and all(
            len(c) <= MAX_CELL_CHARS for c in rows[k]) and sum(
            1 for j, c in enumerate(rows[k]) if c and j >= first_figure) >= 2 and \
            not _captions(rows[k]) and not _figures_alone(rows[k]) and not (
                names and _title_over(rows[k], first_figure, width=len(rows[start]))):
        names.insert(0, rows[k])
        k -= 1
    width = len(rows[start])
    if width < 3:
        return [], end
    head = [" ".join(r[j] for r in names if j < len(r) and r[j]) for j in range(width)]
    if not names or sum(1 for c in head if c) < width - 1:
        return _labelled_figures(rows, start)
    body = rows[start:end]
    going_on = [c for r in body for c in r[1:first_figure] if c]
    if first_figure > 1 and (not all(head[1:first_figure]) or (
            going_on and 2 * sum(c[0].islower() for c in going_on) >= len(going_on))):
        # a label that runs over the columns left of the figures ("Chemicals, Petroleum |
        # Refining"), under a name that does too ("NAICS Sector / Industry | Group"), or
        # whose words go on in small letters ("Treasury | cash holdings"): one cell;
        # columns of words each under a name of its own stay apart
        head, *body = [[" ".join(c for c in r[:first_figure] if c), *r[first_figure:]]
                       for r in [head, *body]]
    # a gap between the columns, empty in every row and unnamed, is no column
    keep = [j for j in range(len(head)) if head[j] or any(j < len(r) and r[j] for r in body)]
    return [[r[j] if j < len(r) else "" for j in keep] for r in [head, *body]], end


def _title_over(row: list[str], first: int, *, width: int) -> bool:
    """Whether a line over a table's names is the page's title, not more of them: words
    over the labels' column and over no more than half the columns of figures, none a
    period but a day ("Presbytery of Melbourne East | GMP | Allocations Comparisons |
    15/08/2020" over "Parish | Last | Allocation-1 | …"; not "Item | 2024 | 2025" over
    two columns a year)."""
    filled = [c for j, c in enumerate(row) if c and j >= first]
    return any(c for c in row[:first]) and 2 * len(filled) <= width - first and not any(
        _YEAR_CELL.search(c) and not _DAY_DATE.search(c) for c in filled)


def _figures_alone(row: list[str]) -> bool:
    """Whether a row holds figures and nothing else (not years): the unlabelled total of
    the table above ("$61,965.90 | $72,910.42"), no names of the columns below it."""
    cells = [c for c in row if c]
    return bool(cells) and all(_FIGURE.fullmatch(c) and not _YEAR_CELL.fullmatch(c)
                               for c in cells)


PACKED_ABOVE = 70  # points above a packed table searched for its columns' names


_AMOUNT_MARK = re.compile(r"[$€£¥(]|\d,\d{3}|\d\.\d")


def _packed(rows: list[list[str]]) -> bool:
    """Whether most rows of a ruled table pack two or more figures into one cell ("Google
    Cloud 13,624 24,768"), or a row's label and its amount ("Google Services $ 82,543"):
    the lines ruled are not its columns."""
    def packed(cell: str) -> bool:
        words = cell.replace("$", " $ ").split()
        figures = [k for k, w in enumerate(words) if _FIGURE.fullmatch(w)]
        if len(figures) >= 2:
            return True
        # a label and an amount ("Google Services $ 82,543"; not "Room 101")
        return bool(figures) and figures[-1] == len(words) - 1 and bool(
            _AMOUNT_MARK.search(" ".join(words[figures[0] - 1:]))) and any(
            sum(ch.isalpha() for ch in w) >= 2 for w in words[:figures[0]])
    full = [r for r in rows if any(r)]
    return len(full) >= MIN_ALIGNED_ROWS and 2 * sum(
        1 for r in full if any(packed(c) for c in r)) > len(full)


def _beside(bbox: tuple[float, float, float, float], words: list[dict[str, Any]]
            ) -> tuple[float, float, float, float]:
    """A ruled table's box widened over the words on the lines of its figures (a
    statement ruled between its figures' columns alone: the rows' labels to the left of
    the rules, a last column to the right)."""
    x0, top, x1, bottom = bbox
    lines = _word_lines(sorted((w for w in words if top <= w["top"] and
                                w["bottom"] <= bottom + 1), key=lambda w: w["top"]), LINE_GAP)
    beside = [w for line in lines if any(
        x0 - 2 <= f["x0"] and f["x1"] <= x1 + 2 and _FIGURE.fullmatch(f["text"])
        for f in line) for w in line]
    return (min([x0, *(w["x0"] for w in beside)]), top,
            max([x1, *(w["x1"] for w in beside)]), bottom)


def _unlabelled(rows: list[list[str]]) -> bool:
    """Whether most rows of a ruled table hold figures alone ("337,199 | + 15,893"): its
    rows' labels stand outside its rules."""
    full = [r for r in rows if any(r)]
    return len(full) >= MIN_ALIGNED_ROWS and 2 * sum(1 for r in full if all(
        _figure_cell(re.sub(r"^([-+−])\s+", r"\1", c)) for c in r if c)) > len(full)


def _realigned(page: Any, bbox: tuple[float, float, float, float],
               above: float = PACKED_ABOVE, every: bool = False) -> list[str]:
    """A ruled table's lines read again by the alignment of its words, within its box and
    the ``above`` points above it (where its columns' names stand; with ``every``, all
    its words, none left of the columns the finder sees); [] when that finds no table."""
    x0, top, x1, bottom = bbox
    crop = _crop(page, (x0 - 2, top - above, x1 + 2, bottom + 1))
    try:
        found = crop.find_tables(_BY_ALIGNMENT) if crop is not None else []
        rows = aligned_rows(whole_words(found[0], crop.extract_words(), above=top - above,
                                        every=every)) if found else []
    except Exception:  # a region the finder cannot read: the table as it was found
        return []
    return table_lines(rows, header=True) if rows else []


def _labels_only(row: list[str]) -> bool:
    """Whether a row of an aligned table holds words in its first two columns alone (a
    section's name: "Costs and | expenses:")."""
    return any(row[:2]) and not any(row[2:])


ALIGNED_HEADER_SEARCH = 12  # rows above a statement's figures looked at for its periods
ALIGNED_HEADER_LINES = 6  # lines of one column's name ("Weighted" over "average" over …)
ALIGNED_NAME_WORDS = 8  # a longer name takes in a line above the column's own name
MAX_WORD_CHARS = 25  # a longer "word" is prose whose spaces the PDF does not draw


def _labelled_figures(rows: list[list[str]], start: int) -> tuple[list[list[str]], int]:
    """A statement's table found by alignment whose rows' labels run over several columns
    ("4105 - Earned | Income - | Memberships | 181,366.42 | …") and whose column names
    stand some rows above its figures, past a title and a section's name ("Jan - Mar" over
    "2024", above "Summary Statement of Revenue & Expense" and "Revenue"): each row's label
    in one cell, each column of figures named by the names above it; the rows of figures
    from ``start`` on, a group's name between them ("Police", over its rows and its total)
    a row of its own, as :func:`table_lines` reads it. Empty when the figures stand in
    fewer than two columns or no names stand above them (or under a caption); with the
    index of the first row past the table."""
    run = rows[start:start + MIN_ALIGNED_ROWS]
    width = max(len(r) for r in run)
    columns = [j for j in range(width) if sum(
        1 for r in run if j < len(r) and _figure_cell(r[j])) >= 0.6 * len(run) and any(
        j < len(r) and _FIGURE.fullmatch(r[j]) for r in rows[start:])]
    if len(columns) < 2:
        return [], len(rows)
    first = columns[0]
    while first > 1 and not any(first - 1 < len(r) and r[first - 1] for r in rows[start:]):
        first -= 1  # a column of currency signs alone left of the figures: a name over it
        # ("2025" centred over "$ 82,543") is the figures'
    names: list[list[str]] = []
    for r in reversed(rows[max(0, start - ALIGNED_HEADER_SEARCH):start]):
        if _captions(r):
            break  # the table's caption: its names are below it
        filled = [j for j, c in enumerate(r) if c and j >= first and c not in _CURRENCY_SIGN]
        if len(" ".join(r[:first]).split()) > ALIGNED_NAME_WORDS:
            break  # a sentence above the table ("The following table presents our …")
        if (len(filled) < 2 and not names) or not filled:
            continue  # a section's name, a title over the labels
        if any(c for c in r[:first]) and 2 * len(filled) <= len(columns) and not any(
                _YEAR_CELL.search(r[j]) and not _DAY_DATE.fullmatch(r[j]) for j in filled):
            continue  # a title or a unit's line ("(In millions, except per share …)"), a
            # title dated to the day ("… Allocations Comparisons 15/08/2020")
        if any(len(r[j]) > MAX_CELL_CHARS or max(map(len, r[j].split())) > MAX_WORD_CHARS
               for j in filled):
            break  # prose beside the table, not a column's name
        lettered = [w for j in filled for w in r[j].split()
                    if sum(ch.isalpha() for ch in w) >= 3]  # words, not "52B" or "OF"
        if len(lettered) >= 2 and all(w.isupper() for w in lettered):
            break  # the statement's title in capitals ("COMBINED STATEMENTS OF …")
        if 2 * sum(1 for j in filled if _FIGURE.fullmatch(r[j]) and not _YEAR_CELL.fullmatch(
                r[j]) and not _NOTE_MARK.fullmatch(r[j])) >= len(filled):
            break  # figures of another table
        names.insert(0, r)
        if len(names) == ALIGNED_HEADER_LINES:
            break
    # a name over no column of figures (a centred "concessions" beside the "Other" over
    # them) belongs to the nearest column of figures, the one to its right when two are
    owner = {j: min(columns, key=lambda c: (abs(c - j), c < j)) for j in range(first, width)}

    def said_over(r: list[str]) -> dict[int, str]:
        """What a line of names says over each column of figures: a line of fewer names
        than columns, each a period, is of groups ("March 31, 2026" over four columns,
        "March 31, 2025" over four more), each over the columns nearest its middle."""
        cells = [j for j in range(first, len(r)) if r[j] and r[j] not in _CURRENCY_SIGN]
        # each name over the column of figures it owns
        own = {c: " ".join(r[j] for j in cells if owner.get(j) == c) for c in columns}
        phrases: list[list[int]] = []
        if any(_MONTH_START.match(r[j]) for j in cells):
            # "Quarter Ended | June 30, | Year To Date | June | 30,": a phrase starts at a
            # capitalised word that is no month, the date after it goes on it
            for j in cells:
                if phrases and not (r[j][:1].isupper() and not _MONTH_START.match(r[j])):
                    phrases[-1].append(j)
                else:
                    phrases.append([j])
            if not (2 <= len(phrases) < len(cells) or (
                    len(phrases) == 1 and len(cells) >= 2 and not _MONTH_START.match(
                        r[cells[0]]) and sum(1 for j in cells for w in r[j].split()
                                             if _MONTH_START.match(w)) == 1)):
                # one period over every column ("Quarter Ended | June | 30,"), not a
                phrases = []  # month a column ("Jan | Feb | Mar", "Relative | Jun. | Jul.")
        if not phrases:
            if 2 * len(cells) > len(columns):
                return own
            for j in cells:  # names standing side by side make one phrase
                if phrases and j == phrases[-1][-1] + 1:
                    phrases[-1].append(j)
                else:
                    phrases.append([j])
        if not phrases or not all(_YEAR_CELL.search(" ".join(r[j] for j in p))
                                  or _MONTH_START.search(" ".join(r[j] for j in p))
                                  for p in phrases):
            return own  # a period over a group of columns names them all; others, each its own
        middle = [sum(p) / len(p) for p in phrases]
        return {c: " ".join(r[j] for j in phrases[min(range(len(phrases)), key=lambda k: abs(
            middle[k] - c))]) for c in columns}

    def named(lines: list[list[str]]) -> list[str]:
        said = [said_over(r) for r in lines]
        return [_unmarked(" ".join(s[c] for s in said if s.get(c))) for c in columns]

    head = named(names)
    while len(names) > 1 and max(len(h.split()) for h in head) > ALIGNED_NAME_WORDS:
        names = names[1:]  # a group's name over several columns ("Financial effects of …")
        head = named(names)
    if not names or not all(head):
        return [], len(rows)
    out = [["", *head]]
    blank = [""] * len(columns)
    above = next((r for r in reversed(rows[max(0, start - 2):start])
                  if not any(c for c in r[first:])), None)
    section = _unmarked(" ".join(c for c in above[:first] if c)) if above else ""
    if not _YEAR_CELL.search(section):
        if section and _section_name(section):  # a group's name just above its rows
            out.append([section, *blank])
        section = ""
    end = len(rows)
    wrapped = ""  # a label's first line, alone on its line
    for k in range(start, len(rows)):
        r = rows[k]
        cells = [r[j] for j in columns if j < len(r) and r[j]]
        label = _unmarked(" ".join(c for c in r[:first] if c and c not in _CURRENCY_SIGN))
        if cells and sum(1 for c in cells if _figure_cell(c)) >= 0.6 * len(cells):
            if sum(1 for w in label.split() if _FIGURE.fullmatch(w)) >= 2:
                return [], end  # figures left in the labels' column: no columns found
            label, wrapped = f"{wrapped} {label}".strip(), ""
            out.append([f"{label} ({section})" if section and label else label,
                        *(r[j] if j < len(r) else "" for j in columns)])
        elif cells or any(c for c in r[first:] if c not in _CURRENCY_SIGN) or _captions(r):
            end = k
            break  # past the table: text, another table's names or caption
        elif k + 1 < len(rows) and _goes_on(label, " ".join(rows[k + 1][:first])):
            wrapped = label  # the next row's label goes on from it ("Internet services
            # and electronic information" over "providers")
        elif _YEAR_CELL.search(label):  # "Year Ended December 31, 2021": the rows under it
            section = label
        elif _section_name(label) and not label.endswith(".."):  # a group's name
            out.append([label, *blank])  # ("Police"): the rows under it, up to its total,
            # are its parts (see table_lines); not a row without figures ("Legal ......")
    while out and not any(out[-1][1:]):
        out.pop()  # a group's name after the last row: the next table's
    if 5 * sum(1 for r in out[1:] if r[0]) < 3 * (len(out) - 1):
        return [], end  # rows without labels (a page of several tables side by side)
    return out, end


def _captions(row: list[str]) -> bool:
    """Whether a row of a region found by alignment starts with a table's caption."""
    first = next((c for c in row if c), "")
    return bool(_TABLE_CAPTION.match(first))


_YEAR_CELL = re.compile(r"(?:19|20)\d\d")
_DAY_DATE = re.compile(r"\d{1,2}[/.-]\d{1,2}[/.-](?:19|20)\d\d")  # "15/08/2020"
_NOTE_MARK = re.compile(r"\(\d\)")  # a note's mark in a column's name: "Charge-offs (3)"


def _unmarked(name: str) -> str:
    """A statement's row or column name without its notes' marks ("Trial modifications
    (5)"), and with a word broken over two lines whole again ("Charge- offs")."""
    name = re.sub(r"(?<=[^\W\d_])- (?=[a-z])", "-", name)
    return " ".join(re.sub(r"\s*\(\d\)(?=\s|$)", "", name).split())


def pdf_rows(raw: list[list[str | None]]) -> list[list[str]]:
    """A PDF table's rows as its extractor gives them (None where a merged cell
    reaches), made plain: a second header row of names under a merged one gives each
    column both ("TEDs" over "simple", "complex"); a row that goes on the one above (its
    first cell merged into it) takes the merged cells' values ("Thermometer Error" for
    each of its conditions); a row whose cells each stack the same number of lines, of
    numbers, is that many rows ("OTSL\\nHTML", "0.965\\n0.969")."""
    rows: list[list[str | None]] = [list(r) for r in raw]
    while len(rows) > 2 and not any(rows[0]):
        rows = rows[1:]  # a ruled blank line above the header
    merged = 1  # the columns the first column's name is merged over
    while rows and rows[0] and rows[0][0] and merged < len(rows[0]) and \
            rows[0][merged] is None:
        merged += 1
    if len(rows) >= 3 and rows[1] and rows[1][0] is None and None in rows[0][1:] and all(
            c is None or (c and not _NUMBER_CELL.fullmatch(" ".join(c.split())))
            for c in rows[0]) and all(
            not _NUMBER_CELL.fullmatch(" ".join(c.split())) for c in rows[1] if c):
        top = _carried(rows[0])
        names = [" ".join(f"{a or ''} {b}".split()) if b and b != a else (a or "")
                 for a, b in zip(top, rows[1], strict=False)]
        rows = [list(names), *rows[2:]]
    out: list[list[str | None]] = []
    for r in rows:
        if out and r and r[0] is None and not any(r[1:]):
            continue  # an empty line under a merged label: nothing to carry it to
        if out and r and r[0] is None and not (len(out) == 1 and _names_over_figures(out[0], r)):
            above = out[-1]
            r = [above[j] if c is None and j < len(above) else c for j, c in enumerate(r)]
        out.append(r)
    plain: list[list[str]] = []
    for r in out:
        stacked = [(c or "").split("\n") for c in r]
        k = max(len(x) for x in stacked) if stacked else 1
        numeric = sum(1 for x in stacked if len(x) == k and all(
            _NUMBER_CELL.fullmatch(v.strip()) for v in x))
        if k >= 2 and numeric >= 2 and all(len(x) in (1, k) for x in stacked):
            for i in range(k):
                plain.append([" ".join((x[i] if len(x) == k else x[0]).split())
                              for x in stacked])
            continue
        plain.append([_UNMAPPED_SIGN.sub("", " ".join((c or "").split())) for c in r])
    merged_into = {j for j, c in enumerate(rows[0]) if c is None} if rows else set()
    return _without_spacers(_nested_labels(plain, merged), merged_into)


MIN_KEPT_COLUMNS = 3  # an empty gap at a table's edge is dropped past this many columns


def _without_spacers(rows: list[list[str]], merged: set[int]) -> list[list[str]]:
    """A table without the unnamed columns after its named ones that most rows leave
    empty (a ruled gap the extractor reads as a column, the header's name to its left
    merged over it, ``merged``: "Q4 2023" over "$1,001M", an empty column, then "FY
    2023"; two after "Discount", at a table's edge too); the few values that fall into
    one are their left neighbour's end ("2" and "4.8%" are "24.8%")."""
    if len(rows) < 3 or not rows[0] or not rows[0][0]:
        return rows
    head = rows[0]
    def split(r: list[str], j: int) -> bool:  # a value split in two ("2" | "4.8%")
        return j >= len(r) or not r[j] or len(r[j - 1]) <= 3 or r[j][0] in ",.%"

    def named_after(j: int) -> bool:  # a named column after a run of unnamed ones
        k = j
        while k < len(head) and not head[k]:
            k += 1
        return k < len(head)

    def empty(j: int) -> bool:
        return not any(j < len(r) and r[j] for r in rows[1:])

    spacers = [j for j in range(1, len(head)) if j in merged and not head[j]
               and 2 * sum(1 for r in rows[1:] if j < len(r) and r[j]) < len(rows) - 1
               and sum(1 for r in rows[1:] if not split(r, j)) <= 1
               and (named_after(j) or (empty(j) and j >= MIN_KEPT_COLUMNS))]
    if not spacers:
        return rows
    out = []
    for r in rows:
        r = list(r)
        for j in reversed(spacers):
            if j < len(r) and r[j]:
                left = r[j - 1]
                glue = "" if left and re.match(r"[\d,.%]", r[j]) and left[-1].isdigit() else " "
                r[j - 1] = f"{left}{glue}{r[j]}".strip()
        out.append([c for j, c in enumerate(r) if j not in spacers])
    return out


# a currency sign that a PDF's font draws as another ("! 67,184" for "$ 67,184"), before
# a figure: left out, so that the cell is the number it holds
_UNMAPPED_SIGN = re.compile(r"^!\s*(?=[\d(])")


def _nested_labels(rows: list[list[str]], merged: int) -> list[list[str]]:
    """A table whose row labels stand in two or more columns under one name merged over
    them ("Group" over "Geographic indices", "CPI per province", "Free State"): each row
    labelled by its innermost label, the groups it stands in (carried down) in a column
    of their own, :data:`PART_OF` ("Part of: Geographic indices, CPI per province"), so
    that the row's label is what it names and "which province …" can keep to the rows of
    the group that names provinces. ``merged``: the columns the header's first name is
    merged over."""
    k = merged
    if len(rows) < 3 or not rows[0] or not rows[0][0] or k < 2 or k > len(rows[0]) - 2 or \
            any(re.search(r"\d", c) for c in rows[0][:k]) or any(
                _NUMBER_CELL.fullmatch(c) for c in rows[0] if c):
        return rows  # a first row of figures is no header of names
    if sum(1 for r in rows[1:] if any(c and not _NUMBER_CELL.fullmatch(c) for c in r[1:k])) < 2:
        return rows  # no labels stand in the columns the name is merged over
    head = rows[0]
    out = [[head[0], PART_OF, *head[k:]]]
    for r in rows[1:]:
        labels = [c for c in r[:k] if c]
        out.append([labels[-1] if labels else "", ", ".join(dict.fromkeys(labels[:-1])),
                    *r[k:]])
    return out


# A header of several rows inside the table, names merged over the columns they head
# ("Year over Year" over "Estimate" over "2022"; "Difference from October 2022 WEO
# Projections" over "2023"): each column is named by every header row's name above it,
# top down, under the table's title rows (one cell filled: "Table 1. Overview …").
MAX_HEADER_ROWS = 5
_HEADER_NOTE = re.compile(r"\s\d{1,2}/(?=\s|$)")


def stacked_header(raw: list[list[str | None]]
                   ) -> tuple[list[str], list[str], list[list[str]]] | None:
    """The title lines, the column names and the data rows of a PDF table whose header
    is two or more rows (:data:`MAX_HEADER_ROWS` at most) above its first row of a label
    and figures; columns blank or merged in every data row are left out. None when the
    table has no such header, or two columns would be named alike."""
    rows = [[" ".join(c.split()) if c else c for c in r] for r in raw]
    width = max((len(r) for r in rows), default=0)
    if width < 3 or any(len(r) != width for r in rows):
        return None

    def data(r: list[str | None]) -> bool:
        filled = [c for c in r[1:] if c]
        return bool(r[0]) and len(filled) >= 2 and sum(
            1 for c in filled if _NUMBER_CELL.fullmatch(c.replace("–", "-"))) >= 0.6 * len(filled)

    first = next((k for k, r in enumerate(rows) if data(r)), None)
    if first is None or first < 2:
        return None
    titles: list[str] = []
    k = 0
    while k < first and rows[k][0] and not any(rows[k][1:]):
        titles.append(str(rows[k][0]))
        k += 1
    head_rows = [r for r in rows[k:first] if any(c for c in r[1:])]
    if not 2 <= len(head_rows) <= MAX_HEADER_ROWS or any(
            c and ((_NUMBER_CELL.fullmatch(c) and not _YEAR_CELL.fullmatch(c))
                   or c.replace("$", "").strip() in _NIL) for r in head_rows for c in r[1:]):
        return None  # figures, or "$ —", above the first full row: rows, not names
    carried = [_carried(r) for r in head_rows]
    body = [r for r in rows[first:] if any(r)]
    keep = [j for j in range(1, width) if any(r[j] for r in body)]
    # a footnote's mark in a header ("WEO Projections 1/", "Q4 over Q4 2/") names nothing
    names = [" ".join(_HEADER_NOTE.sub("", str(r[j])).strip() for r in carried if r[j])
             for j in keep]
    if len(keep) < 2 or not all(names) or len(set(names)) < len(names):
        return None
    return titles, ["", *names], [[r[0] or "", *(r[j] or "" for j in keep)] for r in body]


def _carried(row: list[str | None]) -> list[str | None]:
    """A header row with a merged name carried over the cells it reaches (None)."""
    out, last = list(row), None
    for j, c in enumerate(out):
        if c is None and j > 0:
            out[j] = last
        else:
            last = c
    return out


def _without_overlaid_blanks(page: Any) -> Any:
    """The page without the blank characters drawn over other glyphs: a report that pads
    its columns with spaces laid across the next column's text ("0 2 / 1 0 / 2 0 16" for
    02/10/2016) splits every word they touch, since a blank ends a word. A blank that
    covers less than half of any glyph's width on its line is a real space and stays."""
    lines: dict[int, list[tuple[float, float]]] = {}
    for c in page.chars:
        if c["text"].strip():
            lines.setdefault(round(c["top"]), []).append((c["x0"], c["x1"]))
    if not lines:
        return page
    starts = {k: sorted(v) for k, v in lines.items()}
    widest = {k: max(b - a for a, b in v) for k, v in starts.items()}
    keys = {k: [a for a, _ in v] for k, v in starts.items()}

    def covered(c: dict[str, Any]) -> bool:
        half = (c["x1"] - c["x0"]) / 2
        for k in (round(c["top"]) - 1, round(c["top"]), round(c["top"]) + 1):
            boxes = starts.get(k)
            if not boxes:
                continue
            j = bisect.bisect_right(keys[k], c["x1"])  # glyphs starting before it ends
            for a, b in reversed(boxes[:j]):
                if b < c["x0"] - widest[k]:
                    break
                if min(b, c["x1"]) - max(a, c["x0"]) > half:
                    return True
        return False

    drop = {(c["x0"], c["top"], c["x1"]) for c in page.chars
            if not c["text"].strip() and covered(c)}
    if not drop:
        return page
    return page.filter(lambda obj: obj.get("object_type") != "char"
                       or (obj["x0"], obj["top"], obj["x1"]) not in drop
                       or bool(obj["text"].strip()))


def _names_over_figures(head: list[str | None], row: list[str | None]) -> bool:
    """Whether ``head`` is all names where ``row`` holds figures under them: a header row,
    whose merged cells are not carried down into the data."""
    under = [(h, c) for h, c in zip(head, row, strict=False) if c and c.strip()]
    return bool(under) and all(h and not _NUMBER_CELL.fullmatch(" ".join(h.split()))
                               for h in head if h is not None) and any(
        _NUMBER_CELL.fullmatch(" ".join(c.split())) for _, c in under if c)


def typed_header(rows: list[list[str]]) -> bool:
    """Column names told by their kind rather than their length: a first row of distinct
    names, none a figure, over at least two columns of figures (an election table's
    "POPOLAZIONE al 31/12/2021 D.P.R. 20/01/2023" over "1.357"; "Year | Average Price"
    over "1850 | 18.93"), where :func:`_header_row`'s test of three short labels fails."""
    head, body = rows[0], rows[1:]
    if len(head) < 2 or len(body) < 2 or not all(head) or len(set(head)) < len(head) or any(
            _NUMBER_CELL.fullmatch(c) or len(c) > 2 * MAX_CELL_CHARS for c in head):
        return False
    columns = 0
    for j in range(len(head)):
        filled = [r[j] for r in body if j < len(r) and r[j]]
        if len(filled) >= 2 and sum(1 for c in filled if _NUMBER_CELL.fullmatch(c)) >= \
                0.8 * len(filled):
            columns += 1
    return columns >= 2


MAX_HEADER_CHARS = 60  # "Estimated hydrogen production capacity (tons/year)" names a column


def _header_row(row: list[str]) -> bool:
    """Column names: three or more short distinct labels (the first may be empty: the
    header of a column of row labels, or the first few, :func:`_names_after_labels`; one
    merged over two columns is named in each), each without digits, or with one number
    beside a word ("Population Growth 2050", "Factor 2", "+ 5 years")."""
    while row and not row[-1]:  # a column empty to its header (a table's ruled margin)
        row = row[:-1]
    labels = row[_unnamed_lead(row):]
    distinct = [c for i, c in enumerate(labels) if i == 0 or c != labels[i - 1]]
    return len(row) >= 3 and _names_after_labels(row) and \
        len(set(distinct)) == len(distinct) and all(
        len(c) <= MAX_HEADER_CHARS and (not any(ch.isdigit() for ch in c) or (
            len(re.findall(r"\d+(?:[.,]\d+)*", c)) == 1 and re.search(r"[^\W\d_]{3}", c))
            or _PERIOD_LABEL.fullmatch(c))
        for c in labels)


def _unnamed_lead(head: list[str]) -> int:
    """How many columns a header leaves unnamed at its start: those of its rows' labels
    (a budget's "5100 | Personnel | Stipend" under three empty cells)."""
    return next((j for j, c in enumerate(head) if c), len(head))


def _names_after_labels(head: list[str]) -> bool:
    """Whether a header names every column after its unnamed first ones (the columns of
    the rows' labels): after one, or none, any names; after more, three names at least
    (so a row that names one thing far right, a section's total, names no columns)."""
    lead = _unnamed_lead(head)
    return all(head[max(lead, 1):]) and (lead <= 1 or len(head) - lead >= BLOCK_HEADER_CELLS)


# a period as a financial table heads its column: "Q4 2023", "FY 2023", "Q1 FY25", "H1 2024",
# "3Q23", "FY24"
_PERIOD_LABEL = re.compile(r"(?:(?:Q[1-4]|[1-4]Q|H[12]|[1-2]H)\s?(?:FY|CY)?\s?'?(?:19|20)?\d\d|"
                           r"(?:FY|CY)\s?'?(?:19|20)?\d\d)", re.I)


def _ocr_pdf_pages(data: bytes, indexes: list[int], ocr: Ocr) -> Iterator[tuple[int, str]]:
    """OCR of the given pages (0-based), one page at a time, rendered at :data:`OCR_DPI`,
    or less where that would make an image over ``ocr.max_pixels`` (a page can say it is
    200 inches wide: 3.6 billion pixels at 300 dpi); blank pages are not sent to the
    engine."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(data)
    try:
        for i in indexes:
            page = pdf[i]
            try:
                width, height = page.get_size()
                scale = _render_scale(width, height, ocr.max_pixels)
                image = page.render(scale=scale, grayscale=True).to_pil()
            finally:
                page.close()
            try:
                yield i, _ocr_image(image, ocr, f"p. {i + 1} of {len(pdf)}")
            finally:
                image.close()
    finally:
        pdf.close()


def _render_scale(width: float, height: float, max_pixels: int) -> float:
    """Pixels per point to render a page of ``width`` × ``height`` points: OCR_DPI, or
    less so that the image has at most ``max_pixels``."""
    import math

    scale = OCR_DPI / 72
    width, height, max_pixels = max(width, 1.0), max(height, 1.0), max(max_pixels, 1)
    if math.ceil(width * scale) * math.ceil(height * scale) > max_pixels:
        scale = (max_pixels / (width * height)) ** 0.5
        while math.ceil(width * scale) * math.ceil(height * scale) > max_pixels:
            scale *= 0.999  # the renderer rounds sizes up
        logger.debug("a page of %.0f x %.0f points is rendered at %.0f dpi, not %d",
                     width, height, scale * 72, OCR_DPI)
    return scale


def _ocr_image(image: Image, ocr: Ocr, where: str = "") -> str:
    from ragctl.index.ocr import flattened

    image = flattened(image)  # a transparent background read as white, not black
    extrema: Any = image.convert("L").getextrema()
    lo, hi = extrema
    if hi - lo < 32:  # a blank page
        return ""
    text = ocr.read(image, where)
    # a photograph or a drawing gives a few stray marks, not words
    words = re.findall(r"[^\W\d_]{3,}", text)
    return text if len(words) >= 3 else ""


def _parse_image(path: Path, data: bytes, ocr: Ocr) -> ParsedDocument:
    """The text of an image file, read by OCR one page (frame) at a time, so that memory
    holds one page whatever the file: the first ``ocr.max_pages`` pages, each at most
    ``ocr.max_pixels`` (a larger JPEG is decoded at a half, a quarter or an eighth of its
    size; other pages that large are left out). Pages left out are told in the notes."""
    from PIL import Image, UnidentifiedImageError

    if ocr.engine is None:
        raise SkipFile(f"image not read (no OCR); skipped: {ocr.how_to_enable}")
    texts: list[str] = []
    notes: list[str] = []
    too_large: list[tuple[int, int]] = []  # (page, pixels)
    with _pillow_limit(_DRAFT_REDUCTION * ocr.max_pixels):
        try:
            img = Image.open(io.BytesIO(data))
            pages = getattr(img, "n_frames", 1)
        except Image.DecompressionBombError:
            raise SkipFile(f"an image of over {2 * _DRAFT_REDUCTION * ocr.max_megapixels:g} "
                           "megapixels (a decompression bomb?); skipped") from None
        except (UnidentifiedImageError, OSError, ValueError, EOFError) as e:
            raise SkipFile(f"not a readable image ({e}); skipped") from None
        with img:
            if max(img.size) < 200:
                raise SkipFile("an image too small to hold text (an icon?); skipped")
            read = min(pages, ocr.max_pages)
            if pages > read:
                notes.append(f"{pages} pages, read the first {read} (setting ocr_max_pages)")
            for n in range(read):
                try:
                    img.seek(n)
                except (EOFError, OSError, ValueError, Image.DecompressionBombError) as e:
                    notes.append(f"page {n + 1} not readable ({e}); pages from it on not read")
                    break
                pixels = img.size[0] * img.size[1]
                try:
                    page = _page_image(img, ocr.max_pixels)
                except (OSError, ValueError) as e:  # a truncated or damaged page
                    if n == 0:
                        raise SkipFile(f"not a readable image ({e}); skipped") from None
                    notes.append(f"page {n + 1} not readable ({e}); pages from it on not read")
                    break
                if page is None:
                    too_large.append((n + 1, pixels))
                    texts.append("")
                    continue
                page = _shown_upright(page)
                # the page is decoded into the file's one buffer, which the next page reuses
                texts.append(_ocr_image(page, ocr, f"p. {n + 1} of {pages}" if pages > 1
                                        else ""))
    if too_large:
        what = _too_large(too_large, pages, ocr.max_megapixels)
        if len(too_large) == len(texts):
            raise SkipFile(f"{what}; skipped")
        notes.append(f"{what}; not read")
    if not any(t.strip() for t in texts):
        raise SkipFile("an image without text (OCR found none); skipped")
    places = [f"p. {n}" for n in range(1, len(texts) + 1)] if pages > 1 else [""]
    return ParsedDocument(path, "image", path.stem,
                          [Section(t, p, 0) for t, p in zip(texts, places, strict=True)],
                          notes)


_DRAFT_REDUCTION = 64  # a JPEG can be decoded at an eighth of its width and height
_ORIENTATION = 0x0112  # the EXIF tag that tells a viewer how to turn the stored pixels


def _shown_upright(page: Image) -> Image:
    """A page as a viewer shows it: a phone keeps a photo as its sensor saw it (a receipt
    photographed upright stored on its side) with an EXIF tag that says how to turn it."""
    from PIL import ImageOps

    try:
        if page.getexif().get(_ORIENTATION, 1) in (None, 1):
            return page
        return ImageOps.exif_transpose(page) or page
    except (OSError, ValueError, SyntaxError):  # a damaged tag: the pixels as stored
        return page


@contextmanager
def _pillow_limit(max_pixels: int) -> Iterator[None]:
    """Pillow's own decompression-bomb limit (``Image.MAX_IMAGE_PIXELS``: ``Image.open``
    refuses an image of more than twice as many pixels, and warns above it) set to
    ``max_pixels`` while a file is read, then put back. Every page is checked against
    ``ocr.max_pixels`` before it is decoded (:func:`_page_image`); this refuses the header
    of a bomb as soon as it is opened, as one clear line."""
    from PIL import Image

    before = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = max_pixels
    try:
        yield
    finally:
        Image.MAX_IMAGE_PIXELS = before


def _page_image(img: Image, max_pixels: int) -> Image | None:
    """The current page of an open image file, decoded: itself when it has at most
    ``max_pixels`` pixels; a JPEG of up to 64 times as many decoded at a half, a quarter or
    an eighth of its size (``draft``), which is about as fast and needs as little memory;
    None for a larger page, which is never decoded."""
    width, height = img.size
    if width * height <= max_pixels:
        img.load()
        return img
    if img.format in ("JPEG", "MPO"):
        for factor in (2, 4, 8):
            if width * height <= max_pixels * factor * factor:
                img.draft(img.mode, (-(-width // factor), -(-height // factor)))
                if img.size[0] * img.size[1] <= max_pixels:
                    img.load()
                    return img
                break
    return None


def _too_large(pages: list[tuple[int, int]], total: int, max_megapixels: float) -> str:
    largest = max(pixels for _, pixels in pages) / 1e6
    which = (f"page {pages[0][0]} of {total} is" if len(pages) == 1 and total > 1 else
             "the image is" if total == 1 else f"{len(pages)} of its {total} pages are")
    return (f"{which} {largest:.0f} megapixels, over the {max_megapixels:g} megapixel limit "
            f"(setting ocr_max_megapixels)")


MAX_UNZIPPED = 200_000_000  # bytes a DOCX may expand to (its XML is read in memory)
MAX_RATIO = 100  # and no more than this many times its own size: a zip bomb is refused


def _check_zip(data: bytes) -> None:
    """Refuse a zip whose members would expand beyond :data:`MAX_UNZIPPED` (or more than
    :data:`MAX_RATIO` times the file), before anything is decompressed."""
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            total = sum(i.file_size for i in z.infolist())
    except zipfile.BadZipFile as e:
        raise SkipFile(f"corrupt DOCX ({e}); skipped") from None
    if total > MAX_UNZIPPED or (total > MAX_RATIO * max(len(data), 1) and total > 10_000_000):
        raise SkipFile(f"expands to {total / 1e6:.0f} MB when unpacked (a zip bomb?); "
                       "skipped")


def _parse_docx(path: Path, data: bytes) -> ParsedDocument:
    import zipfile

    import docx

    _check_zip(data)
    try:
        document = docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError) as e:
        raise SkipFile(f"corrupt DOCX ({e}); skipped") from None
    parts: list[str] = []
    headings: list[tuple[int, int, int, str]] = []
    pos = 0
    for block in document.iter_inner_content():
        if hasattr(block, "rows"):  # a table: a paragraph per row, the header kept with each
            text = "\n\n".join(table_lines([[c.text for c in row.cells]
                                             for row in block.rows]))
            level = 0
        else:
            text = block.text
            style = (block.style.name if block.style is not None else "") or ""
            m = re.match(r"Heading (\d)", style)
            level = int(m.group(1)) if m else (1 if style == "Title" else 0)
        if not text.strip():
            continue
        if level:
            headings.append((pos, pos, level, " ".join(text.split())))
            continue
        parts.append(text + "\n\n")
        pos += len(text) + 2
    full = "".join(parts)
    title = document.core_properties.title or (headings[0][3] if headings else path.stem)
    return ParsedDocument(path, "docx", title, _sections_from_headings(full, headings))


# text parts that are data for a program, not text to read: an invitation's calendar
_NOT_READ_AS_TEXT = frozenset({"calendar"})


def _message_text(msg: object) -> str:
    """A message's body: its plain text, else its HTML, else a text part of another type
    ("text/asciidoc"); when those are empty (an invitation's empty plain part beside its
    HTML), the next of them; else the messages it forwards, each with its header lines."""
    from email.message import EmailMessage

    assert isinstance(msg, EmailMessage)
    # the parts of the messages it forwards are read with their own header lines, below
    forwarded = {id(q) for p in msg.walk() if p.get_content_type() == "message/rfc822"
                 for m in p.iter_parts() for q in m.walk()}
    tried: set[int] = set()
    for body in (msg.get_body(preferencelist=("plain", "html")),
                 msg.get_body(preferencelist=("html", "plain")),
                 # a body of another text type is read as plain text
                 *(p for p in msg.walk() if p.get_content_maintype() == "text"
                   and p.get_content_subtype() not in _NOT_READ_AS_TEXT
                   and not p.is_attachment() and id(p) not in forwarded)):
        if body is None or id(body) in tried:
            continue
        tried.add(id(body))
        text = _part_text(body)
        if text.strip():
            return text
    attached = [m for p in msg.iter_attachments() if p.get_content_type() == "message/rfc822"
                for m in p.iter_parts() if isinstance(m, EmailMessage)]
    return "\n\n".join(t for t in (_with_header(_message_header(m), _message_text(m))
                                    for m in attached) if t.strip())


def _part_text(body: Any) -> str:
    content = body.get_content()
    if isinstance(content, bytes):
        content = decode_text(content)
    elif "\ufffd" in content and body.get_param("charset") is None:
        content = _undeclared_text(body) or content
    if body.get_content_subtype() == "html":
        _, sections = html_to_sections(content)
        return "\n\n".join(s.text for s in sections)
    return str(content).replace("\r\n", "\n")


def _undeclared_text(part: MIMEPart) -> str | None:
    """The text of a part that names no charset yet holds 8-bit bytes (list archives keep
    them raw), read as a text file is read (UTF-8, else the likeliest legacy encoding):
    the parser takes such a part for ASCII and makes each of those bytes "\\ufffd"."""
    raw = part.get_payload(decode=True)
    if not isinstance(raw, bytes):
        return None
    try:
        return decode_text(raw)
    except SkipFile:
        return None


def _header(msg: Any, name: str) -> str:
    """A header's value, decoded; as written when it cannot be parsed (an address that
    holds a line break: "address parts cannot contain CR or LF") — one bad header never
    costs the whole message."""
    try:
        value = msg.get(name)
    except (ValueError, TypeError, IndexError, AttributeError, LookupError):
        value = next((v for k, v in msg.raw_items() if k.lower() == name.lower()), None)
        try:  # its encoded words decoded ("=?UTF-8?B?…?=")
            from email.header import decode_header, make_header

            value = str(make_header(decode_header(str(value)))) if value else value
        except (ValueError, LookupError, UnicodeError):
            pass
    return " ".join(str(value).split()) if value else ""


def _message_header(msg: object) -> str:
    """The lines of a message's header a reader asks about ("who sent the mail about …"),
    kept as the first lines of its text: From, Date and Subject."""
    from email.message import EmailMessage

    assert isinstance(msg, EmailMessage)
    # the date as written (parsing rewrites "1 Jan" as "01 Jan"); the names decoded
    raw = {k.lower(): v for k, v in reversed(list(msg.raw_items()))}
    values = {"From": _header(msg, "From"), "Date": raw.get("date"),
              "Subject": _header(msg, "Subject")}
    lines = [f"{k}: {' '.join(str(v).split())}" for k, v in values.items() if v]
    return "\n".join(lines) + "\n\n" if lines else ""


def _with_header(header: str, body: str) -> str:
    """A message's text: its header lines, then its body; nothing without a body."""
    return header + body if body.strip() else body


def _message_place(msg: object) -> str:
    from email.message import EmailMessage

    assert isinstance(msg, EmailMessage)
    subject = _header(msg, "subject") or "(no subject)"
    who = ", ".join(x for x in (_header(msg, "from"), _header(msg, "date")) if x)
    return f"{subject} ({who})" if who else subject


_UTF8_BOM = b"\xef\xbb\xbf"
_WIDE_BOMS = tuple(bom for bom, encoding in _BOMS if encoding != "utf-8-sig")
# Content-Transfer-Encodings that leave a part's text as written: in a mail file saved as
# UTF-16 it was re-encoded with the file, whatever charset the part names
_AS_WRITTEN = frozenset({"7bit", "8bit", "binary"})


def _mail_bytes(data: bytes) -> tuple[bytes, bool]:
    """A mail file's bytes as the mail parser reads them, and whether they were re-encoded.
    The parser reads bytes as ASCII: a mail saved as UTF-16 or UTF-32 (a mail program's
    or an editor's "Unicode"), where every other byte is NUL and no header is found, is
    made the UTF-8 text it is; a UTF-8 byte-order mark, which would hide the first header,
    is dropped."""
    wide = data.startswith(_WIDE_BOMS) or (b"\x00" in data[:8192]
                                           and _utf16_encoding(data) is not None)
    if wide:
        return read_text(data).text.encode("utf-8"), True
    return data.removeprefix(_UTF8_BOM), False


def _mail(data: bytes, *, reencoded: bool = False) -> EmailMessage:
    """A message parsed from :func:`_mail_bytes`; when they were ``reencoded``, each text
    part that is not base64 or quoted-printable is read as the UTF-8 it now is, not as
    the charset it names."""
    import email
    import email.policy

    msg = email.message_from_bytes(data, policy=email.policy.default)
    if reencoded:
        for part in msg.walk():
            encoding = str(part.get("content-transfer-encoding", "7bit")).strip().lower()
            if part.get_content_maintype() == "text" and encoding in _AS_WRITTEN:
                part.set_param("charset", "utf-8")
    return msg


# RFC 5322 section 3.6: the fields every message has, which a text file's header block
# must hold to be read as a mail
MAIL_FIELDS = frozenset({"from", "date"})
_FIELD_NAME = re.compile(r"([!-9;-~]+):")  # printable ASCII without a colon, then one
_LINE = re.compile(r".*(?:\n|$)")
_VISIBLE = re.compile(r"\S")


def is_mail(text: str) -> bool:
    """Whether a text file is a mail saved as text: it opens (after an mbox "From " line)
    with a block of header fields that holds :data:`MAIL_FIELDS`, then a blank line and a
    body. Read as mail it keeps its sender, date and subject as fields and its place; read
    as text its header would be run together into sentences."""
    names: set[str] = set()
    for n, m in enumerate(_LINE.finditer(text)):
        line = m.group()
        if n == 0 and line.startswith("From "):
            continue
        if not line.strip():  # the header's end (or the text's, with no body: not a mail)
            return bool(line) and MAIL_FIELDS.issubset(names) and \
                _VISIBLE.search(text, m.end()) is not None
        if line[:1] in " \t" and names:
            continue  # a folded value
        field_name = _FIELD_NAME.match(line)
        if field_name is None:
            return False
        names.add(field_name.group(1).lower())
    return False


def _parse_email(path: Path, data: bytes, ocr: Ocr | None = None) -> ParsedDocument:
    data, reencoded = _mail_bytes(data)
    msg = _mail(data, reencoded=reencoded)
    if not msg.keys():
        raise SkipFile("not an e-mail message (no headers); skipped")
    place = _message_place(msg)
    subject = _header(msg, "subject") or path.stem
    text = _with_header(_message_header(msg), _message_text(msg))
    attached, notes = _attachments(msg, place, ocr)
    return ParsedDocument(path, "email", subject, [Section(text, place, 0), *attached], notes)


def _attachments(msg: Any, place: str, ocr: Ocr | None) -> tuple[list[Section], list[str]]:
    """The files a message carries that ragctl reads as files (a PDF, a sheet, a document,
    a text; a scan or a photo by OCR when ``ocr`` is given), each section under the
    message's place and the file's name ("Invoice 12 (Ana, 3 Mar) > invoice.pdf > p. 1");
    a forwarded message is read as part of the body, not here. A file that cannot be read
    gives a one-line note; one that holds no text, none."""
    sections: list[Section] = []
    notes: list[str] = []
    for part in msg.iter_attachments():
        if part.get_content_type() == "message/rfc822":
            continue
        try:
            name = Path(str(part.get_filename() or "")).name
            data = part.get_payload(decode=True) if name else None
        except Exception:  # a name or a payload the parser cannot decode: not read
            continue
        fmt = file_format(Path(name)) if name else None
        if fmt is None or fmt in ("email", "mbox") or not isinstance(data, bytes) or not data:
            continue
        try:
            doc = parse(Path(name), data, ocr=ocr)
        except SkipFile as e:
            if not str(e).startswith(("no text found", "an image without text")):
                notes.append(f"attachment {name}: {e}")
            continue
        notes += [f"attachment {name}: {n}" for n in doc.notes]
        sections += [Section(sec.text, f"{place} > {name}" + (f" > {sec.place}" if sec.place
                                                              else ""), sec.offset)
                     for sec in doc.sections]
    return sections, notes


def _parse_mbox(path: Path, data: bytes) -> ParsedDocument:
    data, reencoded = _mail_bytes(data)
    messages = [m for m in (_mbox_message(raw, n, reencoded=reencoded) for n, raw in
                            enumerate(_mbox_parts(io.BytesIO(data)), start=1)) if m]
    bodies = drop_quoted_copies([text for _, text, _ in messages])
    return ParsedDocument(path, "mbox", path.stem,
                          [Section(_with_header(header, body), place, 0)
                           for body, (header, _, place) in zip(bodies, messages, strict=True)])


def _mbox_parts(lines: Iterable[bytes]) -> Iterator[bytes]:
    """The raw messages of an mbox archive, split at its "From " lines (empty parts
    left out)."""
    part: list[bytes] = []
    for line in lines:
        if line.startswith(b"From "):
            if b"".join(part).strip():
                yield b"".join(part)
            part = []
        else:
            part.append(line)
    if b"".join(part).strip():
        yield b"".join(part)


def _mbox_message(raw: bytes, number: int, *,
                  reencoded: bool = False) -> tuple[str, str, str] | None:
    """(header lines, body, place) of the ``number``-th message of an archive, None for a
    part without headers."""
    msg = _mail(raw, reencoded=reencoded)
    if not msg.keys():
        return None
    return _message_header(msg), _message_text(msg), f"#{number}: {_message_place(msg)}"


def mbox_messages(path: Path) -> Iterator[Section]:
    """The messages of a large mail archive, one section each, read one at a time (the
    file is never held whole). Quoted text whose pieces (:func:`_quote_pieces`) are
    pieces of earlier messages' kept text, one after another as there, is dropped, as
    :func:`drop_quoted_copies` does for a small archive (replies come after what they
    quote)."""
    import hashlib

    seen: set[bytes] = set()  # digests of earlier messages' pieces and pairs of pieces

    def digests(pieces: list[str]) -> Iterator[bytes]:
        """Of each piece, and of each two that follow each other: a run is found where
        it was written in one go, not pieced together from here and there."""
        for text in [*pieces, *("\0".join(pair) for pair in pairwise(pieces))]:
            yield hashlib.blake2b(text.encode(), digest_size=16).digest()

    def found(run: list[str]) -> bool:
        return all(d in seen for d in digests(run))

    def emit(raw: bytes, number: int) -> Section | None:
        message = _mbox_message(raw, number)
        if message is None:
            return None
        header, text, place = message
        text = _drop_quotes(text, found)
        seen.update(digests(_piece_texts(text.splitlines(keepends=True))))
        return Section(_with_header(header, text), place, 0)

    try:
        with path.open("rb") as f:
            for number, raw in enumerate(_mbox_parts(f), start=1):
                section = emit(raw, number)
                if section is not None:
                    yield section
    except OSError as e:
        raise SkipFile(_os_reason(e)) from None


_QUOTE_BLOCK = re.compile(r"(?m)(?:^[ \t]*>.*(?:\n|$))+")
_QUOTE_MARKS = re.compile(r"(?m)^[ \t]*(?:>[ \t]*)+")  # "> ", ">>", "> > " at any level
_ATTRIBUTION = re.compile(r"(?:^|\n)[^\n]*wrote:[ \t]*\n?[ \t]*$")
# a line that starts a piece of its own: a signature's "-- ", a list footer's rule of
# underscores, "-------------- next part --------------"
_SEPARATOR = re.compile(r"--|[-_=*~]{4,}.*")
MIN_QUOTE_CHARS = 40  # shorter quotes ("> yes") stay: they are part of the reply


def _unquoted(text: str) -> str:
    """``text`` without quote markers, its words one space apart: the same for a quote at
    any level, wrapped at any width, as for the text it quotes."""
    return " ".join(_QUOTE_MARKS.sub("", text).split())


def _quote_pieces(lines: list[str]) -> list[tuple[int, int]]:
    """Line ranges of the pieces of ``lines``: paragraphs, cut at blank lines (quoted or
    not), where quoted lines start or end, and before a :data:`_SEPARATOR` line, so that
    a footer added below a quoted mail is a piece of its own. Each piece keeps the blank
    lines after it, and the first the blank lines before it."""
    spans: list[tuple[int, int]] = []
    start, has_text, blank_before, quoted_before = 0, False, False, False
    for k, line in enumerate(lines):
        text = _unquoted(line)
        quoted = _QUOTE_MARKS.match(line) is not None
        if text and has_text and (blank_before or quoted != quoted_before
                                  or _SEPARATOR.fullmatch(text)):
            spans.append((start, k))
            start, has_text = k, False
        has_text = has_text or bool(text)
        blank_before, quoted_before = not text, quoted
    spans.append((start, len(lines)))
    return spans


def _piece_texts(lines: list[str]) -> list[str]:
    return [_unquoted("".join(lines[a:b])) for a, b in _quote_pieces(lines)]


def drop_quoted_copies(bodies: list[str]) -> list[str]:
    """The messages of one archive without the quoted text ("> ...", and the "On ...,
    X wrote:" line above a block dropped whole) that is indexed elsewhere: found, quote
    markers and line breaks aside, in another message's own text or in an earlier
    message's quotes (so that of two replies quoting a mail that is not in the archive,
    the first keeps it). A mail is indexed once, not again inside every reply to it."""
    # each message's own text, then each one's quotes, "\0" between messages (a quote
    # found in its own message's text is indexed there: it too is dropped)
    own = "\0".join(_unquoted(_QUOTE_BLOCK.sub("\n", b)) for b in bodies)
    quoted = [_unquoted("\n".join(m.group() for m in _QUOTE_BLOCK.finditer(b))) + "\0"
              for b in bodies]
    before = list(accumulate((len(q) for q in quoted), initial=0))  # where each one starts
    all_quoted = "".join(quoted)

    def found(i: int, run: list[str]) -> bool:
        text = " ".join(run)
        return text in own or all_quoted.find(text, 0, before[i]) >= 0

    return [_drop_quotes(body, partial(found, i)) for i, body in enumerate(bodies)]


def _drop_quotes(body: str, found: Callable[[list[str]], bool]) -> str:
    """``body`` without the quoted text that ``found`` says is indexed already: in each
    quoted block, the longest runs of its pieces (:func:`_quote_pieces`) that ``found``
    finds whole, of :data:`MIN_QUOTE_CHARS` or more. What it does not find stays (a
    footer added below the quote, a quote of a mail that is not in the archive); a block
    dropped whole takes the "wrote:" line above it along."""
    out, pos = [], 0
    for m in _QUOTE_BLOCK.finditer(body):
        kept = _kept_quote(m.group(), found)
        if kept == m.group():
            continue
        before = body[pos:m.start()]
        out += [before if kept.strip() else _ATTRIBUTION.sub("\n", before), kept]
        pos = m.end()
    out.append(body[pos:])
    return "".join(out) if pos else body


def _kept_quote(block: str, found: Callable[[list[str]], bool]) -> str:
    """The lines of a quoted block that :func:`_drop_quotes` keeps."""
    lines = block.splitlines(keepends=True)
    spans = _quote_pieces(lines)
    texts = [_unquoted("".join(lines[a:b])) for a, b in spans]
    dropped: set[int] = set()
    i = 0
    while i < len(texts):
        j = i
        while j < len(texts) and found(texts[i:j + 1]):
            j += 1
        if len(" ".join(texts[i:j])) >= MIN_QUOTE_CHARS:
            dropped.update(range(i, j))
        i = max(j, i + 1)
    return "".join("".join(lines[a:b]) for k, (a, b) in enumerate(spans) if k not in dropped)


def _parse_sheet(path: Path, data: bytes) -> ParsedDocument:
    """A spreadsheet (CSV/TSV, XLSX, XLS, ODS; :mod:`ragctl.index.sheets`): each sheet one
    section, placed by its name, each row one line that carries its column names
    (:func:`sheet_lines`); formula results, never formulas."""
    from ragctl.index.sheets import SheetError, read_delimited, read_ods, read_xls, read_xlsx

    fmt = FORMATS[path.suffix.lower()]
    notes: list[str] = []
    try:
        if fmt == "csv":
            decoded = read_text(data)
            notes += _notes(decoded)
            sheets = [read_delimited(decoded.text, path.stem,
                                     delimiter="\t" if path.suffix.lower() == ".tsv" else None)]
        else:
            sheets = {"xlsx": read_xlsx, "xls": read_xls, "ods": read_ods}[fmt](data, path.stem)
    except SheetError as e:
        raise SkipFile(str(e)) from None
    sections: list[Section] = []
    end = 0
    for sheet in sheets:
        notes += sheet.notes
        lines = sheet_lines(sheet.rows)
        if not lines:
            continue
        place = sheet.name if len(sheets) > 1 or fmt != "csv" else ""
        for title, part in titled_parts(lines):
            text = "\n\n".join(part)
            sections.append(Section(text, f"{place} > {title}" if place and title else
                                    place or title, end))
            end += len(text) + 2
    return ParsedDocument(path, fmt, path.stem, sections, notes)


TITLE_WORDS = 8  # a part's title on a sheet: a line of one cell, this many words at most
_KEYED_LINE = re.compile(r"[^:\n]{1,80}: ")


def titled_parts(lines: list[str]) -> list[tuple[str, list[str]]]:
    """A sheet's lines (:func:`sheet_lines`) cut into the parts that a title names: a
    line of one cell (words, :data:`TITLE_WORDS` at most, no figure alone) right above a
    keyed row starts a part, placed under it ("Arduino Build", "Raspberry Pi Build": two
    builds' parts and totals, one under the other); the lines before the first title are
    the sheet's own (title "")."""
    parts: list[tuple[str, list[str]]] = [("", [])]
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and _KEYED_LINE.match(lines[i + 1]) and \
                not _KEYED_LINE.match(line) and " | " not in line and \
                0 < len(line.split()) <= TITLE_WORDS and re.search(r"[^\W\d_]", line):
            parts.append((line, [line]))
        else:
            parts[-1][1].append(line)
    return [(title, part) for title, part in parts if part]


def cell_text(cell: str) -> str:
    """A table cell as a keyed row holds it: on one line, its runs of spaces one space,
    and "; " (which ends a cell in "Header: value; Header: value") a comma."""
    return " ".join(cell.split()).replace("; ", ", ")


def sheet_lines(rows: list[list[str]]) -> list[str]:
    """A sheet's rows as lines that each carry their column names ("Quarter: Q2; Units:
    1,450; Returns: 2%"), however wide the sheet, when its first row names the columns
    (:func:`_names_columns`); otherwise each row's cells, " | " between them. A row is
    never read without its header, wherever a passage starts. Tables set side by side
    (:func:`sheet_blocks`) are read one after the other, each in the parts that its empty
    rows set apart, a part under its own header or else the one above it."""
    rows = [[cell_text(c) for c in r] for r in rows]
    blocks = sheet_blocks(rows)
    if len(blocks) == 1:
        return _table_lines([r for r in rows if any(r)], None)
    out: list[str] = []
    for block in blocks:
        head: list[str] | None = None
        wide = 0  # the widest row of the part whose header ``head`` is
        for part in _parts(block):
            lines = _table_lines(part, head, wide=wide)
            if (own := _part_header(part)) is not None:
                head, wide = own, 0
            if head is not None:
                wide = max([wide, *(len(r) for r in part)])
            out += lines
    return out


# empty columns between two tables set side by side on one sheet (a schedule beside its
# standings); one empty column is a spacer inside a table, unless each side has a header
# of its own and the right one names its rows (a budget's spending beside its funds)
BLOCK_GAP = 2
# of the rows that either of two side-by-side parts fills, the share that both fill, below
# which they are two tables: one table's rows fill both sides of a spacer
BLOCK_SHARED = 0.8


def sheet_blocks(rows: list[list[str]]) -> list[list[list[str]]]:
    """A sheet's rows cut into the tables set side by side on it: at :data:`BLOCK_GAP` or
    more columns that are empty in every row (at one, when each side has a header of its
    own and the right side names its rows in words), where the two sides do not fill the
    same rows (:data:`BLOCK_SHARED`); one block, the sheet, when there are none."""
    width = max((len(r) for r in rows), default=0)
    used = [any(j < len(r) and r[j] for r in rows) for j in range(width)]
    spans: list[list[int]] = []  # each run of used columns: its first, its end, the gap
    # of empty columns before it
    gap = 0
    for j, u in enumerate(used):
        if not u:
            gap += 1
            continue
        if spans and not gap:
            spans[-1][1] = j + 1
        else:
            spans.append([j, j + 1, gap])
        gap = 0

    def filled(a: int, b: int) -> set[int]:
        return {i for i, r in enumerate(rows) if any(r[a:b])}

    def headed(a: int, b: int) -> bool:  # two columns or more, under a header of their own
        side = [r[a:b] for r in rows if any(r[a:b])]
        return b - a >= 2 and header_row(side) is not None

    def labelled(a: int) -> bool:  # its rows named in its own first column, by words (a
        # block of figures whose labels are left of the spacer is the same table's)
        cells = [r[a] for r in rows if a < len(r) and r[a]]
        return 2 * sum(1 for c in cells if not _NUMBER_CELL.fullmatch(c)) > len(cells)

    blocks: list[list[int]] = []
    for a, b, before in spans:
        if blocks:
            left, right = filled(*blocks[-1]), filled(a, b)
            if len(left & right) >= BLOCK_SHARED * len(left | right) or (
                    before < BLOCK_GAP and not (headed(*blocks[-1]) and headed(a, b)
                                                and labelled(a))):
                blocks[-1][1] = b  # one table's columns apart: kept together (one empty
                # column is a spacer inside a table, unless each side has its header and
                # names its rows)
                continue
        blocks.append([a, b])
    if len(blocks) < 2:
        return [rows]
    return [[r[a:b] for r in rows] for a, b in blocks]


def _parts(block: list[list[str]]) -> Iterator[list[list[str]]]:
    """A block's runs of rows between its empty rows (a schedule, then the standings)."""
    part: list[list[str]] = []
    for r in block:
        if any(r):
            part.append(r)
        elif part:
            yield part
            part = []
    if part:
        yield part


def _repeats_header(row: list[str], head: list[str]) -> bool:
    """Whether a row under a header names columns as it does: two or more cells, none a
    figure, more than :data:`REPEATED_NAMES` of them a column's name or its last words
    ("Price" under "Option 1 Leukerbad Price"; "($ in millions) | Q4 FY24 | … | Q1 FY23"
    under "($ in millions) | Q1 FY25 | … | Q2 FY23"): the header of another table stacked
    under the first."""
    cells = [c for c in row if c]
    names = [n.lower() for n in head if n]
    if len(cells) < 2 or any(_NUMBER_CELL.fullmatch(c) for c in cells):
        return False
    named = sum(any(n == c.lower() or n.endswith(" " + c.lower()) for n in names)
                for c in cells)
    return named > REPEATED_NAMES * len(cells)


REPEATED_NAMES = 0.5  # of a row's cells, the share past which it repeats its header's names


def _heads_figures(rows: list[list[str]], at: int) -> bool:
    """Whether row ``at`` is the header of a table stacked under another: three cells or
    more, all words (:func:`_names_columns`), over rows that hold figures in two or more of
    its named columns ("Lunch | Order Quantity | Quantity Per Person | Subtotal" over
    "Double Cheese burgers | 80 | 1 | £127.20", under a budget's income and outgoings). A
    row of words inside a table has figures under it in its own columns only where the
    table has them: it is the row above that says which."""
    row = rows[at]
    cells = [c for c in row if c]
    below = rows[at + 1:at + 4]
    if len(cells) < 3 or not below or not _names_columns(row):
        return False
    above = rows[at - 1] if at else []
    if not any(_NUMBER_CELL.fullmatch(c) for c in above if c):
        return False  # under a row of words: a header's second line, or a title
    figured = [j for j, c in enumerate(row) if c and sum(
        1 for r in below if j < len(r) and _NUMBER_CELL.fullmatch(r[j])) >= min(2, len(below))]
    # named columns with figures under them that the row above holds no figure in
    fresh = [j for j in figured if not (j < len(above) and _NUMBER_CELL.fullmatch(above[j]))]
    return len(figured) >= 2 and len(fresh) >= 1


def _part_header(rows: list[list[str]]) -> list[str] | None:
    h = header_row(rows)
    return None if h is None else header_names(rows, h) or rows[h]


def _table_lines(rows: list[list[str]], above: list[str] | None,
                 h: int | None = None, *, wide: int = 0) -> list[str]:
    """One table's rows as :func:`sheet_lines` gives them, keyed by its header (row ``h``,
    else the one :func:`header_row` finds), else by ``above`` (the header of the part
    above it, when its rows are no wider than it, or than that part's rows, ``wide``:
    labels repeated past the header's last column)."""
    if not rows:
        return []
    h = header_row(rows) if h is None else h
    if h is None:
        if above is None or max(len(r) for r in rows) > max(len(above), wide):
            return [_unkeyed(r) for r in rows]
        head, h = above, -1
    else:
        head = header_names(rows, h) or rows[h]
    out = [_unkeyed(r) for r in rows[:max(h, 0)]]  # a title above it
    read: list[int] = []  # the rows each line of ``out`` past the title reads
    for at, r in enumerate(rows[h + 1:], start=h + 1):
        if _repeats_header(r, head) or (at - 1 > h and _heads_figures(rows, at)):  # another
            # table under this one, with its own header (not a second line of this one's)
            if read and read[-1] == at - 1 > h + 1 and header_names(rows, at) is not None \
                    and not any(_NUMBER_CELL.fullmatch(c) for c in rows[at - 1] if c):
                out.pop()  # its groups in the row above it ("Diploma | Certificate")
                return out + _table_lines(rows[at - 1:], None, 1)
            return out + _table_lines(rows[at:], None)
        pairs = [f"{k}: {v}" if k else v for k, v in zip(head, r, strict=False) if v]
        pairs += [v for v in r[len(head):] if v]
        if pairs:
            out.append("; ".join(pairs))
            read.append(at)
    return out


def _unkeyed(row: list[str]) -> str:
    """A sheet's row that no header keys: its cells, " | " between them; a label and the
    figure beside it ("Exchange rate dollar to euro | 0.86" above a budget's table) as a
    labelled value, "Exchange rate dollar to euro: 0.86"."""
    cells = [c for c in row if c]
    if len(cells) == 2 and re.search(r"[^\W\d_]{2}", cells[0]) and not _NUMBER_CELL.fullmatch(
            cells[0]) and not cells[0].endswith(":") and _NUMBER_CELL.fullmatch(cells[1]):
        return f"{cells[0]}: {cells[1]}"
    return " | ".join(cells)


HEADER_SEARCH = 10  # rows of a sheet looked at for its header (a title and notes above it)


def header_row(rows: list[list[str]]) -> int | None:
    """The row of a sheet that names its columns: the first of its first
    :data:`HEADER_SEARCH` rows that does (:func:`_names_columns`) and is about as wide as
    the rows under it (a title or a note above a table names no columns); None when no
    row does."""
    for i in range(min(HEADER_SEARCH, len(rows))):
        below = rows[i + 1:i + 6]
        names = header_names(rows, i)
        if not below or names is None:
            continue
        width = max(sum(1 for c in r if c) for r in below)
        if sum(1 for c in names if c) * 5 >= width * 3 and not _clock_among_clocks(rows, i):
            return i
    return None


_CLOCK = re.compile(r"\d{1,2}[:.]\d{2}(?:[:.]\d{2})?(?:\s*[ap]\.?m\.?)?", re.I)


def _clock_among_clocks(rows: list[list[str]], i: int) -> bool:
    """Whether row ``i``'s first cell is a time of day with another near it in its
    column: a schedule's game ("10:00 | Excitables @ Riptide"), not a header ("Room |
    09:00 | 10:00" is one)."""
    names = rows[i]
    first = next((j for j, c in enumerate(names) if c), None)
    if first is None or not _CLOCK.fullmatch(names[first]):
        return False
    near = rows[max(0, i - 5):i] + rows[i + 1:i + 6]
    return any(first < len(r) and _CLOCK.fullmatch(r[first]) for r in near)


def header_names(rows: list[list[str]], i: int) -> list[str] | None:
    """The column names row ``i`` gives (:func:`_names_columns`), or None. A row whose
    names repeat under a row of groups ("Option 1 Leukerbad Clinic", merged over its
    "Price | Nb | Total") is a header of two levels: each name is its group's, each
    group reaching from its column to the next group's."""
    row = rows[i]
    if _names_columns(row):
        return row
    cells = [c for c in row if c]
    if i == 0 or len(set(cells)) == len(cells) or not _names_columns(list(dict.fromkeys(cells))):
        return None
    groups, group = [], ""
    above = rows[i - 1]
    for j in range(len(row)):
        if j < len(above) and above[j]:
            group = above[j]
        groups.append(group)
    names = [f"{g} {c}" if g and c else c for g, c in zip(groups, row, strict=True)]
    filled = [c for c in names if c]
    return names if len(set(filled)) == len(filled) else None


_NUMBER_CELL = re.compile(r"[-+(]?[$€£¥]?\s*[\d.,]+\s*%?\)?")


def _names_columns(row: list[str]) -> bool:
    """Whether a sheet's first row names its columns: two or more distinct short labels,
    at least one of them words ("Region"), the others words or years ("2024"), none
    another number or a date."""
    cells = [c for c in row if c]
    return len(cells) >= 2 and len(set(cells)) == len(cells) and all(
        len(c) <= 60 and (_YEAR_CELL.fullmatch(c) or not _NUMBER_CELL.fullmatch(c))
        and not re.fullmatch(r"\d{4}-\d{2}-\d{2}.*", c) for c in cells) \
        and any(not _YEAR_CELL.fullmatch(c) and re.search(r"[^\W\d_]{2}", c) for c in cells)


_PARSERS: dict[str, Callable[[Path, bytes], ParsedDocument]] = {
    "text": _parse_text, "markdown": _parse_markdown, "rst": _parse_rst, "html": _parse_html,
    "docx": _parse_docx, "email": _parse_email, "mbox": _parse_mbox, "csv": _parse_sheet,
    "xlsx": _parse_sheet, "xls": _parse_sheet, "ods": _parse_sheet,
}
