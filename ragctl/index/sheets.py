"""Spreadsheets read into plain rows of cell strings: CSV/TSV text, XLSX workbooks (through
openpyxl, formula *results* only) and ODS spreadsheets (through odfpy). This module owns the
turning of one file into :class:`Sheet` objects: how a cell's value becomes text (numbers
without float noise, dates as ISO dates, percentages and currencies as a spreadsheet shows
them), the trimming of empty rows and columns, the limits on rows and columns that keep a
padded or huge sheet cheap, and the one-line :class:`SheetError` for a file that cannot be
read. It knows nothing of chunks or indexes; the caller decides what a row becomes.
"""

from __future__ import annotations

import csv
import io
import math
import re
import warnings
import xml.etree.ElementTree as ET
import xml.parsers.expat
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

MAX_ROWS = 100_000  # non-empty rows kept per sheet
MAX_COLUMNS = 200  # columns kept per row

OLE_MAGIC = b"\xd0\xcf\x11\xe0"  # an OLE compound file: encrypted OOXML or a legacy .xls
ENCRYPTED = "EncryptedPackage".encode("utf-16-le")  # in an OLE file: an encrypted workbook
ZIP_MAGIC = b"PK"

_SNIFF_CHARS = 64 * 1024
_CURRENCY_SYMBOLS = "$€£¥₹"
_CURRENCY_CODES = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "CNY": "¥", "INR": "₹"}

_TABLE_NS = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_OFFICE_NS = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_TEXT_NS = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"


@dataclass(frozen=True)
class Sheet:
    """One sheet's cell texts, row by row, with the warnings met while reading it."""

    name: str
    rows: list[list[str]]
    row_offsets: list[tuple[int, int]] | None = None  # CSV/TSV only, into the decoded text
    notes: list[str] = field(default_factory=list)


class SheetError(Exception):
    """A spreadsheet that cannot be read; the message is one line meant for a person."""


# ----------------------------------------------------------------------------- cell text


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _round_half_up(value: float, places: int) -> Decimal:
    """``value`` rounded as a spreadsheet shows it (15 significant digits, then half up)."""
    try:
        exact = Decimal(format(value, ".15g"))
        return exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    except InvalidOperation:  # far too large for the precision asked
        return Decimal(format(value, ".15g"))


def format_number(value: float | int) -> str:
    """An integer without ``.0``; any other float with up to 10 significant digits."""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value) or math.isinf(value):
        return str(value)
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return format(value, ".10g")


def format_percent(value: float | int, places: int | None = None) -> str:
    """``0.125`` → ``"12.5%"``; with ``places`` rounded to that many decimals."""
    scaled = value * 100
    if places is None:
        return format_number(scaled) + "%"
    return f"{_round_half_up(scaled, places):f}%"


def format_currency(value: float | int, symbol: str) -> str:
    """``1234.5`` with ``"$"`` → ``"$1,234.50"``; a code (``"CHF"``) goes after the value."""
    amount = _round_half_up(abs(value), 2)
    sign = "-" if value < 0 and amount != 0 else ""
    if symbol in _CURRENCY_SYMBOLS:
        return f"{sign}{symbol}{amount:,.2f}"
    return f"{sign}{amount:,.2f} {symbol}".rstrip()


def _format_clock(t: time | datetime) -> str:
    return t.strftime("%H:%M:%S" if t.second or t.microsecond else "%H:%M")


def _first_section(number_format: str) -> str:
    """The positive-number section of a number format, literals and spacers taken out."""
    section = number_format.split(";", 1)[0]
    section = re.sub(r'"[^"]*"', lambda m: m.group()[1:-1], section)  # "€" → €
    section = re.sub(r"[_*].", "", section)  # _) pads, *x fills: nothing shown
    return section.replace("\\", "")


def _format_style(number_format: str | None) -> tuple[str, str | int | None]:
    """("percent", decimals) or ("currency", symbol) or ("", None) for a number format."""
    if not number_format or number_format == "General":
        return "", None
    section = _first_section(number_format)
    locale = re.search(r"\[\$([^\]\-]*)", section)  # [$€-407], [$-409] (a locale only)
    if locale and any(ch in locale.group(1) for ch in _CURRENCY_SYMBOLS):
        return "currency", next(ch for ch in locale.group(1) if ch in _CURRENCY_SYMBOLS)
    plain = re.sub(r"\[[^\]]*\]", "", section)  # colours, conditions, locales
    if "%" in plain:
        decimals = re.search(r"\.([0#?]+)", plain.split("%", 1)[0])
        return "percent", len(decimals.group(1)) if decimals else 0
    for ch in plain:
        if ch in _CURRENCY_SYMBOLS:
            return "currency", ch
    return "", None


def format_cell(value: Any, number_format: str | None = None) -> str:
    """One cell's value as text: see the module's rules; ``None`` is the empty string."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, datetime):
        day = value.date().isoformat()
        if value.time() == time(0):
            return day
        return f"{day} {_format_clock(value)}"
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, time):
        return _format_clock(value)
    if isinstance(value, timedelta):
        return str(value)
    if isinstance(value, int | float):
        kind, detail = _format_style(number_format)
        if kind == "percent" and isinstance(detail, int):
            return format_percent(value, detail)
        if kind == "currency" and isinstance(detail, str):
            return format_currency(value, detail)
        return format_number(value)
    if isinstance(value, Decimal):
        return format_number(float(value))
    return _collapse(str(value))


# ----------------------------------------------------------------------------- rows


class _Rows:
    """Collects one sheet's rows: trims, drops empty rows, applies the limits."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.rows: list[list[str]] = []
        self.offsets: list[tuple[int, int]] = []
        self.notes: list[str] = []
        self.rows_cut = False
        self.columns_cut = False

    def add(self, cells: list[str], offset: tuple[int, int] | None = None) -> bool:
        """Keep a row if it has text; False once the row limit is passed (stop reading)."""
        if len(cells) > MAX_COLUMNS:
            if any(cells[MAX_COLUMNS:]):
                self.columns_cut = True
            cells = cells[:MAX_COLUMNS]
        end = len(cells)
        while end and not cells[end - 1]:
            end -= 1
        if not end:
            return True
        if len(self.rows) >= MAX_ROWS:
            self.rows_cut = True
            return False
        self.rows.append(cells[:end])
        if offset is not None:
            self.offsets.append(offset)
        return True

    def sheet(self, *, offsets: bool = False) -> Sheet:
        rows = self.rows
        if rows:
            lead = min(next(i for i, c in enumerate(row) if c) for row in rows)
            if lead:
                rows = [row[lead:] for row in rows]
        notes = list(self.notes)
        if self.rows_cut:
            notes.append(f"sheet '{self.name}': only the first {MAX_ROWS:,} rows are read")
        if self.columns_cut:
            notes.append(f"sheet '{self.name}': only the first {MAX_COLUMNS:,} columns are read")
        return Sheet(self.name, rows, self.offsets if offsets else None, notes)


# ----------------------------------------------------------------------------- CSV / TSV

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)?")


def _sniff_delimiter(text: str) -> str:
    sample = text[:_SNIFF_CHARS]
    if len(text) > _SNIFF_CHARS:
        cut = max(sample.rfind("\n"), sample.rfind("\r"))
        if cut > 0:
            sample = sample[:cut]
    lines = [line for line in sample.splitlines()[:50] if line.strip()]
    tabs = {line.count("\t") for line in lines}
    if len(tabs) == 1 and 0 not in tabs:
        return "\t"  # the same tabs on every line: the Sniffer would prefer a comma there
    try:
        return csv.Sniffer().sniff(sample, delimiters=",\t;|").delimiter
    except csv.Error:
        return "\t" if sample.count("\t") > sample.count(",") else ","


def read_delimited(text: str, name: str, *, delimiter: str | None = None) -> Sheet:
    """A CSV/TSV file's decoded ``text`` as one sheet called ``name`` (the file's stem).

    ``delimiter`` None sniffs it. Quoted fields may hold delimiters and line breaks; each
    kept row's ``row_offsets`` entry is the (start, end) of its line(s) in ``text``, line
    break excluded.
    """
    sep = delimiter or _sniff_delimiter(text)
    spans: list[tuple[int, int]] = []  # (start, end without the line break) of each line fed

    def lines() -> Iterator[str]:
        for m in _LINE.finditer(text):
            line = m.group()
            if not line:
                break
            start = m.start()
            spans.append((start, start + len(line.rstrip("\r\n"))))
            if start == 0 and line.startswith("\ufeff"):
                line = " " + line[1:]  # a byte-order mark: a space keeps the offsets
            yield line.replace("\0", " ")  # csv refuses NUL

    out = _Rows(name)
    reader = csv.reader(lines(), delimiter=sep, quotechar='"', doublequote=True, strict=False)
    first = 0  # index in spans of the current row's first line
    try:
        for record in reader:
            offset = (spans[first][0], spans[-1][1])
            first = len(spans)
            if not out.add([_collapse(cell) for cell in record], offset):
                break
    except csv.Error as exc:
        raise SheetError(f"not a readable delimited file (line {reader.line_num}: {exc})") from None
    return out.sheet(offsets=True)


# ----------------------------------------------------------------------------- XLSX


def _zip(data: bytes, kind: str) -> zipfile.ZipFile:
    """``data`` opened as a zip, or a SheetError that says what the bytes are instead."""
    if data[:4] == OLE_MAGIC:
        if ENCRYPTED in data:
            raise SheetError("password-protected workbook; skipped")
        raise SheetError(f"an old binary (OLE) file such as .xls, not a valid {kind}; skipped")
    if not data.startswith(ZIP_MAGIC):
        raise SheetError(f"not a valid {kind} (not a zip file)")
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except Exception as exc:  # BadZipFile, and OSError or ValueError from a cut-off file
        raise SheetError(f"not a valid {kind} (zip is damaged)") from exc


def _column_past_limit(ref: str) -> bool:
    """Whether cell reference ``ref`` ("GS12") lies right of column MAX_COLUMNS."""
    letters = ref.rstrip("0123456789").upper()
    number = 0
    for ch in letters:
        number = number * 26 + ord(ch) - 64
    return number > MAX_COLUMNS


def _scan_sheet_xml(archive: zipfile.ZipFile, path: str) -> tuple[int, bool]:
    """(formula cells without a saved result, whether a value lies past MAX_COLUMNS)."""
    missing = 0
    wide = False
    parent: ET.Element | None = None
    with archive.open(path.lstrip("/")) as src:
        for event, elem in ET.iterparse(src, events=("start", "end")):
            tag = elem.tag.rsplit("}", 1)[-1]
            if event == "start":
                if tag == "sheetData":
                    parent = elem
                continue
            if tag == "c":
                formula = value = inline = None
                for child in elem:
                    local = child.tag.rsplit("}", 1)[-1]
                    if local == "f":
                        formula = child
                    elif local == "v":
                        value = child
                    elif local == "is":
                        inline = child
                if formula is not None and (
                    value is None or (not value.text and elem.get("t") != "str")
                ):
                    missing += 1
                if not wide and (value is not None or inline is not None):
                    wide = _column_past_limit(elem.get("r") or "A")
                elem.clear()
            elif tag == "row" and parent is not None:
                parent.clear()  # rows read so far: their cells are done with
    return missing, wide


def read_xlsx(data: bytes, name: str) -> list[Sheet]:
    """Every worksheet of an XLSX workbook (chartsheets skipped), with the saved formula
    results, never the formula text; a legacy binary workbook under this name is read as
    one (:func:`read_xls`). ``name`` is the file's name, unused but for symmetry."""
    if data[:4] == OLE_MAGIC and ENCRYPTED not in data:
        return read_xls(data, name)  # a legacy workbook saved under the newer name
    archive = _zip(data, "XLSX workbook")
    try:
        if "[Content_Types].xml" not in archive.namelist():
            raise SheetError("not an XLSX workbook (a zip without [Content_Types].xml)")
        # heavy: kept out of start-up
        import openpyxl

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "no default style" and other chatter
            try:
                wb = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
            except KeyError:
                raise SheetError("not a valid XLSX workbook (a part is missing)") from None
            except Exception as exc:
                raise SheetError(_damaged("XLSX workbook", exc)) from None
            try:
                with _damage_reported("XLSX workbook"):
                    return [_xlsx_sheet(ws, archive) for ws in wb.worksheets]
            finally:
                wb.close()
    finally:
        archive.close()


def _xlsx_sheet(ws: Any, archive: zipfile.ZipFile) -> Sheet:
    out = _Rows(str(ws.title))
    path = getattr(ws, "_worksheet_path", None)
    missing, wide = _scan_sheet_xml(archive, path) if isinstance(path, str) else (0, False)
    out.columns_cut = wide
    if hasattr(ws, "reset_dimensions"):
        ws.reset_dimensions()  # a stale <dimension> must not pad a million empty rows
    # No max_col: openpyxl would pad every row, the missing ones too, to that width. So a
    # row is as wide as its last cell, and a missing or empty row comes as ().
    for row in ws.iter_rows():
        if not row:
            continue
        cells = [_xlsx_cell_text(cell) for cell in row[:MAX_COLUMNS]]
        if any(cells) and not out.add(cells):
            break
    if missing:
        what = "formula cell has" if missing == 1 else "formula cells have"
        out.notes.append(
            f"sheet '{out.name}': {missing:,} {what} no saved result (the file was never "
            "opened in a spreadsheet program); shown empty"
        )
    return out.sheet()


def _xlsx_cell_text(cell: Any) -> str:
    value = cell.value
    if value is None:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return format_cell(value, getattr(cell, "number_format", None))  # a style look-up
    return format_cell(value)


@contextmanager
def _damage_reported(kind: str) -> Iterator[None]:
    """Any error a library raises while reading a ``kind`` file, as a SheetError of one
    line (:func:`_damaged`); a SheetError passes as it is."""
    try:
        yield
    except SheetError:
        raise
    except Exception as exc:
        raise SheetError(_damaged(kind, exc)) from None


def _damaged(kind: str, exc: BaseException) -> str:
    """The one-line reason for a library's exception while reading a ``kind`` file."""
    if isinstance(exc, zipfile.BadZipFile | zlib.error | EOFError):  # e.g. "Bad CRC-32"
        return f"not a valid {kind} (zip is damaged)"
    return f"not a valid {kind} ({_one_line(exc)})"


def _one_line(exc: BaseException) -> str:
    text = _collapse(str(exc)) or type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


# ----------------------------------------------------------------------------- XLS


def read_xls(data: bytes, name: str) -> list[Sheet]:
    """Every worksheet of a legacy binary Excel workbook (.xls, Excel 97–2003), read by
    xlrd: the saved formula results, numbers in their cells' number formats, dates as
    dates. ``name`` is unused but for symmetry."""
    if data[:4] != OLE_MAGIC:
        raise SheetError("not a valid XLS workbook (not an OLE compound file)")
    if ENCRYPTED in data:
        raise SheetError("password-protected workbook; skipped")
    import xlrd  # heavy: kept out of start-up

    book = None
    for formatting in (True, False):  # number formats, when the file's styles can be read
        try:
            book = xlrd.open_workbook(file_contents=data, formatting_info=formatting,
                                      on_demand=True, logfile=io.StringIO())
            break
        except NotImplementedError:
            continue
        except Exception as exc:
            raise SheetError(_damaged("XLS workbook", exc)) from None
    if book is None:
        raise SheetError("not a valid XLS workbook")
    try:
        with _damage_reported("XLS workbook"):
            return [_xls_sheet(book, book.sheet_by_index(i)) for i in range(book.nsheets)]
    finally:
        book.release_resources()


def _xls_sheet(book: Any, sheet: Any) -> Sheet:
    out = _Rows(str(sheet.name))
    for r in range(sheet.nrows):
        cells = [_xls_cell_text(book, sheet, r, c) for c in range(min(sheet.ncols, MAX_COLUMNS))]
        if sheet.ncols > MAX_COLUMNS and any(_xls_cell_text(book, sheet, r, c)
                                             for c in range(MAX_COLUMNS, sheet.ncols)):
            out.columns_cut = True
        if any(cells) and not out.add(cells):
            break
    return out.sheet()


def _xls_cell_text(book: Any, sheet: Any, r: int, c: int) -> str:
    import xlrd

    cell = sheet.cell(r, c)
    if cell.ctype in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK, xlrd.XL_CELL_ERROR):
        return ""
    if cell.ctype == xlrd.XL_CELL_BOOLEAN:
        return format_cell(bool(cell.value))
    if cell.ctype == xlrd.XL_CELL_DATE:
        try:
            return format_cell(xlrd.xldate.xldate_as_datetime(cell.value, book.datemode))
        except (ValueError, OverflowError, xlrd.xldate.XLDateError):
            return format_cell(cell.value)
    if cell.ctype == xlrd.XL_CELL_NUMBER:
        number_format = None
        if book.formatting_info:
            xf = book.xf_list[sheet.cell_xf_index(r, c)]
            fmt = book.format_map.get(xf.format_key)
            number_format = fmt.format_str if fmt is not None else None
        value = cell.value
        if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 53:
            value = int(value)
        return format_cell(value, number_format)
    return format_cell(cell.value)


# ----------------------------------------------------------------------------- ODS


def read_ods(data: bytes, name: str) -> list[Sheet]:
    """Every table of an ODS spreadsheet. Typed cells give their stored value; repeated
    empty runs (the padding to 1,048,576 rows) are counted, never expanded. ``name`` is the
    file's name, unused but for symmetry.
    """
    archive = _zip(data, "ODS spreadsheet")
    try:
        with _damage_reported("ODS spreadsheet"):
            names = set(archive.namelist())
            if "content.xml" not in names:
                raise SheetError("not a valid ODS spreadsheet (no content.xml)")
            if "META-INF/manifest.xml" in names:
                if b"encryption-data" in archive.read("META-INF/manifest.xml"):
                    raise SheetError("password-protected spreadsheet; skipped")
            else:
                raise SheetError("not a valid ODS spreadsheet (no META-INF/manifest.xml)")
            if "mimetype" in names:
                mimetype = archive.read("mimetype").decode("utf-8", "replace").strip()
                if not mimetype.startswith("application/vnd.oasis.opendocument.spreadsheet"):
                    raise SheetError(f"not an ODS spreadsheet (its type is {mimetype[:80]})")
            _check_well_formed(archive, "content.xml")
    finally:
        archive.close()

    # heavy: kept out of start-up
    from odf.opendocument import load

    try:
        doc = load(io.BytesIO(data))
    except Exception as exc:  # expat, zip and odfpy's own errors alike
        raise SheetError(_damaged("ODS spreadsheet", exc)) from None
    body = getattr(doc, "spreadsheet", None)
    if body is None:
        raise SheetError("not an ODS spreadsheet (no spreadsheet body)")
    with _damage_reported("ODS spreadsheet"):
        return [_ods_sheet(t) for t in body.childNodes if _qname(t) == (_TABLE_NS, "table")]


def _check_well_formed(archive: zipfile.ZipFile, member: str) -> None:
    """A streaming parse of ``member``: odfpy prints a malformed part to stdout and goes on
    without it, so a malformed part is refused here first, in one line.
    """
    parser = xml.parsers.expat.ParserCreate()
    try:
        with archive.open(member) as src:
            parser.ParseFile(src)
    except xml.parsers.expat.ExpatError as exc:
        raise SheetError(f"not a valid ODS spreadsheet ({member}: {exc})") from None


def _qname(node: Any) -> tuple[str, str] | None:
    return getattr(node, "qname", None)


def _repeat(node: Any, attr: str) -> int:
    raw = node.getAttrNS(_TABLE_NS, attr)
    try:
        return max(1, int(raw)) if raw else 1
    except ValueError:
        return 1


def _ods_rows(node: Any) -> Iterator[Any]:
    """A table's rows, also those inside header-rows and row groups."""
    for child in node.childNodes:
        qname = _qname(child)
        if qname == (_TABLE_NS, "table-row"):
            yield child
        elif qname in (
            (_TABLE_NS, "table-header-rows"),
            (_TABLE_NS, "table-rows"),
            (_TABLE_NS, "table-row-group"),
        ):
            yield from _ods_rows(child)


def _ods_sheet(table: Any) -> Sheet:
    out = _Rows(str(table.getAttrNS(_TABLE_NS, "name") or "Sheet"))
    for row in _ods_rows(table):
        cells, wide = _ods_row_cells(row)
        out.columns_cut = out.columns_cut or wide
        if not any(cells):
            continue  # an empty run, however long: skipped without expanding it
        for _ in range(min(_repeat(row, "number-rows-repeated"), MAX_ROWS + 1)):
            if not out.add(cells):
                return out.sheet()
    return out.sheet()


def _ods_row_cells(row: Any) -> tuple[list[str], bool]:
    """A row's cell texts, at most MAX_COLUMNS, and whether text lay beyond them."""
    cells: list[str] = []
    pending = 0  # empty cells not yet written: only written when text follows them
    for cell in row.childNodes:
        if _qname(cell) not in ((_TABLE_NS, "table-cell"), (_TABLE_NS, "covered-table-cell")):
            continue
        count = _repeat(cell, "number-columns-repeated")
        text = _ods_cell_text(cell)
        if not text:
            pending += count
            continue
        if len(cells) + pending >= MAX_COLUMNS:
            return cells, True
        cells.extend([""] * pending)
        pending = 0
        room = MAX_COLUMNS - len(cells)
        cells.extend([text] * min(count, room))
        if count > room:
            return cells, True
    return cells, False


def _ods_cell_text(cell: Any) -> str:
    kind = cell.getAttrNS(_OFFICE_NS, "value-type")
    try:
        if kind in ("float", "percentage", "currency"):
            raw = cell.getAttrNS(_OFFICE_NS, "value")
            if raw:
                number = float(raw)
                if kind == "percentage":
                    return format_percent(number)
                if kind == "currency":
                    code = str(cell.getAttrNS(_OFFICE_NS, "currency") or "")
                    return format_currency(number, _CURRENCY_CODES.get(code.upper(), code))
                return format_number(number)
        elif kind == "date":
            raw = cell.getAttrNS(_OFFICE_NS, "date-value")
            if raw:
                return format_cell(datetime.fromisoformat(raw))
        elif kind == "boolean":
            raw = cell.getAttrNS(_OFFICE_NS, "boolean-value")
            if raw:
                return "TRUE" if raw.strip().lower() in ("true", "1") else "FALSE"
    except ValueError:
        pass  # a malformed typed value: the text shown in the cell instead
    text = _ods_paragraphs(cell)
    if not text and kind == "string":
        text = str(cell.getAttrNS(_OFFICE_NS, "string-value") or "")
    return _collapse(text)


def _ods_paragraphs(cell: Any) -> str:
    """The text of a cell's paragraphs, one space where a line or a tab breaks it."""
    parts: list[str] = []
    for para in cell.childNodes:
        if _qname(para) not in ((_TEXT_NS, "p"), (_TEXT_NS, "h")):
            continue
        parts.append(" ")
        stack = list(reversed(para.childNodes))
        while stack:
            node = stack.pop()
            qname = _qname(node)
            if qname is None:
                parts.append(str(getattr(node, "data", "")))
            elif qname in ((_TEXT_NS, "s"), (_TEXT_NS, "tab"), (_TEXT_NS, "line-break")):
                parts.append(" ")
            elif qname != (_OFFICE_NS, "annotation"):
                stack.extend(reversed(node.childNodes))
    return "".join(parts)
