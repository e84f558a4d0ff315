"""Spreadsheets read into rows of cell strings: real XLSX, ODS, CSV and TSV files built here."""

from __future__ import annotations

import datetime as dt
import io
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from ragctl.index import sheets
from ragctl.index.sheets import (
    MAX_COLUMNS,
    Sheet,
    SheetError,
    format_cell,
    read_delimited,
    read_ods,
    read_xls,
    read_xlsx,
)

# ----------------------------------------------------------------------------- helpers


def _rewrite_member(path: Path, member: str, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` in one member of the zip at ``path``."""
    with zipfile.ZipFile(path) as src:
        items = [(info, src.read(info.filename)) for info in src.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for info, body in items:
            if info.filename == member:
                text = body.decode("utf-8")
                assert old in text
                body = text.replace(old, new).encode("utf-8")
            dst.writestr(info, body)


def _xlsx(tmp_path: Path) -> Path:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Budget"
    ws.append(["Item", "Count", "Price", "Share", "Cost", "Due"])
    ws.append(["  Rent   for\n March ", 1200.0, 0.1 + 0.2, 0.125, 1234.5, dt.date(2025, 3, 31)])
    ws.append(["Coffee", 3, 2.5, 0.12, -7, dt.datetime(2025, 4, 1, 14, 30)])
    ws.append([None, None, None])  # an empty row: dropped
    ws.append(["Flag", True, False])
    for cell in ("D2", "D3"):
        ws[cell].number_format = "0.0%"
    ws["D3"].number_format = "0%"
    ws["E2"].number_format = '"$"#,##0.00'
    ws["E3"].number_format = "[$€-407]#,##0.00;-[$€-407]#,##0.00"
    other = wb.create_sheet("Notes")
    other["B2"] = "only"  # column A and row 1 empty: trimmed
    other["C3"] = "cells"
    wb.create_sheet("Empty")
    path = tmp_path / "book.xlsx"
    wb.save(path)
    return path


def _ods(tmp_path: Path) -> Path:
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableCell, TableRow
    from odf.text import LineBreak, P, S

    def cell(text: str = "", **attrs: object) -> TableCell:
        c = TableCell(**attrs)
        if text:
            c.addElement(P(text=text))
        return c

    doc = OpenDocumentSpreadsheet()
    table = Table(name="Ledger")
    rows = [
        [cell("Name"), cell("Amount"), cell("Rate"), cell("Paid"), cell("When"), cell("Ok")],
        [
            cell("Rent"),
            cell("1,200.00", valuetype="float", value="1200"),
            cell("12.50 %", valuetype="percentage", value="0.125"),
            cell("$1,234.50", valuetype="currency", currency="USD", value="1234.5"),
            cell("31/03/25", valuetype="date", datevalue="2025-03-31"),
            cell("TRUE", valuetype="boolean", booleanvalue="true"),
        ],
        [
            cell("0.3", valuetype="float", value=repr(0.1 + 0.2)),
            cell(numbercolumnsrepeated=3),  # an empty run between two cells
            cell("x", numbercolumnsrepeated=2),  # a repeated run with text
            cell(numbercolumnsrepeated=1000),  # padding to the right
        ],
    ]
    for cells in rows:
        row = TableRow()
        for c in cells:
            row.addElement(c)
        table.addElement(row)
    two_lines = TableCell(valuetype="string")
    para = P(text="two")
    para.addElement(S(c=3))
    para.addElement(LineBreak())
    para.addText("lines")
    two_lines.addElement(para)
    two_lines.addElement(P(text="and more"))
    row = TableRow()
    row.addElement(two_lines)
    row.addElement(cell(numbercolumnsrepeated=1023))
    table.addElement(row)
    empty_rows = TableRow(numberrowsrepeated=1_000_000)  # padding to the bottom
    empty_rows.addElement(cell(numbercolumnsrepeated=1024))
    table.addElement(empty_rows)
    doc.spreadsheet.addElement(table)
    second = Table(name="Twice")
    repeated = TableRow(numberrowsrepeated=2)
    repeated.addElement(cell("same"))
    second.addElement(repeated)
    doc.spreadsheet.addElement(second)
    path = tmp_path / "ledger.ods"
    doc.save(str(path))
    return path


# ----------------------------------------------------------------------------- cell text


@pytest.mark.parametrize(
    ("value", "number_format", "expected"),
    [
        (1200.0, None, "1200"),
        (1200, "General", "1200"),
        (0.1 + 0.2, None, "0.3"),
        (1 / 3, None, "0.3333333333"),
        (-0.0, None, "0"),
        (dt.datetime(2025, 3, 31), None, "2025-03-31"),
        (dt.datetime(2025, 3, 31, 9, 5), None, "2025-03-31 09:05"),
        (dt.date(2025, 3, 31), None, "2025-03-31"),
        (True, None, "TRUE"),
        (False, "0%", "FALSE"),
        (0.12, "0%", "12%"),
        (0.125, "0.0%", "12.5%"),
        (0.125, "0%", "13%"),
        (1234.5, '"$"#,##0.00', "$1,234.50"),
        (1234.5, "$#,##0", "$1,234.50"),
        (-1234.5, "[$€-407]#,##0.00", "-€1,234.50"),
        (1234.5, "#,##0.00 [$£-809]", "£1,234.50"),
        (1234.5, "[$-409]#,##0", "1234.5"),  # a locale tag, no currency
        ("  a \t b\n c ", None, "a b c"),
        (None, None, ""),
    ],
)
def test_format_cell(value: object, number_format: str | None, expected: str) -> None:
    assert format_cell(value, number_format) == expected


# ----------------------------------------------------------------------------- XLSX


def test_xlsx_values_formats_and_sheets(tmp_path: Path) -> None:
    got = read_xlsx(_xlsx(tmp_path).read_bytes(), "book.xlsx")
    assert [s.name for s in got] == ["Budget", "Notes", "Empty"]
    budget, notes, empty = got
    assert budget.rows == [
        ["Item", "Count", "Price", "Share", "Cost", "Due"],
        ["Rent for March", "1200", "0.3", "12.5%", "$1,234.50", "2025-03-31"],
        ["Coffee", "3", "2.5", "12%", "-€7.00", "2025-04-01 14:30"],
        ["Flag", "TRUE", "FALSE"],
    ]
    assert budget.row_offsets is None and budget.notes == []
    assert notes.rows == [["only"], ["", "cells"]]
    assert empty.rows == [] and empty.notes == []


def test_xlsx_reads_saved_formula_results_never_formula_text(tmp_path: Path) -> None:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"] = 21
    ws["B1"] = "=A1*2"
    ws["C1"] = "=SUM(A1:B1)"  # left without a saved result
    ws["D1"] = "=A1/0"
    path = tmp_path / "formulas.xlsx"
    wb.save(path)
    _rewrite_member(path, "xl/worksheets/sheet1.xml", "<f>A1*2</f><v></v>", "<f>A1*2</f><v>42</v>")
    _rewrite_member(
        path, "xl/worksheets/sheet1.xml", '<c r="D1"><f>A1/0</f><v></v>',
        '<c r="D1" t="e"><f>A1/0</f><v>#DIV/0!</v>',
    )
    (sheet,) = read_xlsx(path.read_bytes(), "formulas.xlsx")
    assert sheet.rows == [["21", "42", "", "#DIV/0!"]]
    assert not any("A1" in cell or "SUM" in cell for cell in sheet.rows[0])
    assert sheet.notes == [
        "sheet 'Sheet': 1 formula cell has no saved result (the file was never opened in a "
        "spreadsheet program); shown empty"
    ]


def test_xlsx_columns_past_the_limit_are_cut_with_a_note(tmp_path: Path) -> None:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Wide"
    ws.append([f"c{i}" for i in range(MAX_COLUMNS + 50)])
    path = tmp_path / "wide.xlsx"
    wb.save(path)
    (sheet,) = read_xlsx(path.read_bytes(), "wide.xlsx")
    assert len(sheet.rows[0]) == MAX_COLUMNS
    assert sheet.notes == [f"sheet 'Wide': only the first {MAX_COLUMNS} columns are read"]


def test_xlsx_far_apart_cells_are_not_padded(tmp_path: Path) -> None:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"] = "top"
    ws["A1048576"] = "bottom"  # a million missing rows in between
    path = tmp_path / "tall.xlsx"
    wb.save(path)
    started = time.perf_counter()
    (sheet,) = read_xlsx(path.read_bytes(), "tall.xlsx")
    assert time.perf_counter() - started < 10
    assert sheet.rows == [["top"], ["bottom"]]


def test_row_limit_cuts_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sheets, "MAX_ROWS", 3)
    sheet = read_delimited("a\nb\n\nc\nd\ne\n", "many")
    assert sheet.rows == [["a"], ["b"], ["c"]]
    assert sheet.row_offsets is not None and len(sheet.row_offsets) == 3
    assert sheet.notes == ["sheet 'many': only the first 3 rows are read"]


# ----------------------------------------------------------------------------- ODS


def test_ods_typed_cells_and_repeated_runs(tmp_path: Path) -> None:
    data = _ods(tmp_path).read_bytes()
    started = time.perf_counter()
    ledger, twice = read_ods(data, "ledger.ods")
    assert time.perf_counter() - started < 5  # the million padded rows are never expanded
    assert ledger.name == "Ledger"
    assert ledger.rows == [
        ["Name", "Amount", "Rate", "Paid", "When", "Ok"],
        ["Rent", "1200", "12.5%", "$1,234.50", "2025-03-31", "TRUE"],
        ["0.3", "", "", "", "x", "x"],
        ["two lines and more"],
    ]
    assert ledger.notes == [] and ledger.row_offsets is None
    assert twice.rows == [["same"], ["same"]]


def test_ods_text_past_the_column_limit_is_cut(tmp_path: Path) -> None:
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableCell, TableRow
    from odf.text import P

    doc = OpenDocumentSpreadsheet()
    table = Table(name="Wide")
    row = TableRow()
    filled = TableCell(numbercolumnsrepeated=100_000)
    filled.addElement(P(text="v"))
    row.addElement(filled)
    table.addElement(row)
    doc.spreadsheet.addElement(table)
    path = tmp_path / "wide.ods"
    doc.save(str(path))
    (sheet,) = read_ods(path.read_bytes(), "wide.ods")
    assert sheet.rows == [["v"] * MAX_COLUMNS]
    assert sheet.notes == [f"sheet 'Wide': only the first {MAX_COLUMNS} columns are read"]


def test_ods_without_content_is_refused(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        z.writestr("META-INF/manifest.xml", "<manifest/>")
    with pytest.raises(SheetError, match=r"^not a valid ODS spreadsheet \(no content.xml\)$"):
        read_ods(buf.getvalue(), "x.ods")


# ----------------------------------------------------------------------------- CSV / TSV


def test_csv_quoted_delimiters_newlines_and_exact_offsets(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    path.write_bytes(
        b'name,city,note\r\n"Doe, Jane",Paris,"line one\nline two"\n\n'
        b'Bob,"Rome","said ""hi"""\nlast,row,no newline'
    )
    text = path.read_text(encoding="utf-8")
    sheet = read_delimited(text, path.stem)
    assert isinstance(sheet, Sheet) and sheet.name == "people"
    assert sheet.rows == [
        ["name", "city", "note"],
        ["Doe, Jane", "Paris", "line one line two"],
        ["Bob", "Rome", 'said "hi"'],
        ["last", "row", "no newline"],
    ]
    assert sheet.row_offsets is not None and len(sheet.row_offsets) == len(sheet.rows)
    spans = [text[a:b] for a, b in sheet.row_offsets]
    assert spans == [
        "name,city,note",
        '"Doe, Jane",Paris,"line one\nline two"',
        'Bob,"Rome","said ""hi"""',
        "last,row,no newline",
    ]
    for (a, b), row in zip(sheet.row_offsets, sheet.rows, strict=True):
        for cell in row:
            assert cell.split()[0].replace('"', "") in text[a:b].replace('""', '"')


def test_tsv_is_sniffed() -> None:
    text = "\ufeffid\tname\tprice\n1\tWidget, large\t3.50\n2\tGadget, small\t4\n"
    sheet = read_delimited(text, "items")
    assert sheet.rows == [
        ["id", "name", "price"], ["1", "Widget, large", "3.50"], ["2", "Gadget, small", "4"]
    ]
    assert sheet.row_offsets is not None
    assert text[slice(*sheet.row_offsets[1])] == "1\tWidget, large\t3.50"


def test_single_column_falls_back_and_explicit_delimiter_wins() -> None:
    assert read_delimited("alpha\nbeta\n", "one").rows == [["alpha"], ["beta"]]
    assert read_delimited("a;b\n", "semi", delimiter=",").rows == [["a;b"]]
    assert read_delimited("", "none").rows == []


# ----------------------------------------------------------------------------- errors


def _damaged_zip(tmp_path: Path) -> bytes:
    data = bytearray(_xlsx(tmp_path).read_bytes())
    return bytes(data[: len(data) // 2])  # the central directory is gone


def _corrupt_member(tmp_path: Path) -> bytes:
    data = bytearray(_xlsx(tmp_path).read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        info = z.getinfo("xl/worksheets/sheet1.xml")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    for i in range(start + 5, start + info.compress_size - 5):
        data[i] ^= 0x5A
    return bytes(data)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (_damaged_zip, r"^not a valid XLSX workbook \(zip is damaged\)$"),
        (_corrupt_member, r"^not a valid XLSX workbook \(.+\)$"),
        (lambda _: bytes(range(256)) * 8, r"^not a valid XLSX workbook \(not a zip file\)$"),
        (
            lambda _: sheets.OLE_MAGIC + b"\xa1\xb1\x1a\xe1" + b"\0" * 100
            + "EncryptedPackage".encode("utf-16-le") + b"\0" * 400,
            r"^password-protected workbook; skipped$",
        ),
        (lambda _: sheets.OLE_MAGIC + b"\0" * 508, r"^not a valid XLS workbook \(.+\)$"),
    ],
)
def test_bad_xlsx_gives_one_line_sheet_error(
    tmp_path: Path, make: Callable[[Path], bytes], message: str
) -> None:
    with pytest.raises(SheetError, match=message) as info:
        read_xlsx(make(tmp_path), "bad.xlsx")
    assert "\n" not in str(info.value)


def test_other_zip_is_not_a_workbook(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("hello.txt", "hi")
    with pytest.raises(SheetError, match=r"^not an XLSX workbook"):
        read_xlsx(buf.getvalue(), "x.xlsx")
    with pytest.raises(SheetError, match=r"^not a valid ODS spreadsheet \(no content.xml\)$"):
        read_ods(buf.getvalue(), "x.ods")
    xlsx = _xlsx(tmp_path).read_bytes()
    with pytest.raises(SheetError, match=r"^not a valid ODS spreadsheet \(no content.xml\)$"):
        read_ods(xlsx, "book.ods")


def test_ods_given_random_bytes_or_a_workbook_with_bad_xml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SheetError, match=r"^not a valid ODS spreadsheet \(not a zip file\)$"):
        read_ods(b"\x00garbage" * 50, "x.ods")
    path = _ods(tmp_path)
    _rewrite_member(path, "content.xml", "<office:body>", "<office:body><broken")
    with pytest.raises(SheetError, match=r"^not a valid ODS spreadsheet \(.+\)$") as info:
        read_ods(path.read_bytes(), "ledger.ods")
    assert "\n" not in str(info.value)
    assert capsys.readouterr().out == ""  # odfpy would print the whole part


# ------------------------------------------------------------------ indexed as tables


def _budget_xlsx(path: Path) -> None:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sales 2025"
    ws.append(["Quarter", "Units", "Returns", "Revenue"])
    ws.append(["Q1", 1200, 0.03, 15000])
    ws.append(["Q2", 1450, 0.02, 18125.5])
    ws["C2"].number_format = "0%"
    ws["C3"].number_format = "0%"
    ws["D3"].number_format = '"$"#,##0.00'
    other = wb.create_sheet("Staff")
    other.append(["Name", "Role"])
    other.append(["Ana Ruiz", "Treasurer"])
    wb.save(path)


def test_a_workbook_is_parsed_as_sheets_of_rows_that_keep_their_header(tmp_path: Path) -> None:
    from ragctl.index.ingest import parse

    book = tmp_path / "budget.xlsx"
    _budget_xlsx(book)
    doc = parse(book, book.read_bytes())
    assert doc.format == "xlsx" and [s.place for s in doc.sections] == ["Sales 2025", "Staff"]
    assert doc.sections[0].text.split("\n\n") == [
        "Quarter: Q1; Units: 1200; Returns: 3%; Revenue: 15000",
        "Quarter: Q2; Units: 1450; Returns: 2%; Revenue: $18,125.50"]
    assert doc.sections[1].text == "Name: Ana Ruiz; Role: Treasurer"
    csv = tmp_path / "plans.csv"
    csv.write_text("Plan,Price,Seats\nBasic,$5,1\nTeam,$12,10\n")
    rows = parse(csv, csv.read_bytes()).sections[0].text.split("\n\n")
    assert rows == ["Plan: Basic; Price: $5; Seats: 1", "Plan: Team; Price: $12; Seats: 10"]
    # a first row of data, not of names: each row's cells as they are
    raw = tmp_path / "raw.tsv"
    raw.write_text("Q1\t1200\t3%\nQ2\t1450\t2%\n")
    assert parse(raw, raw.read_bytes()).sections[0].text == "Q1 | 1200 | 3%\n\nQ2 | 1450 | 2%"


def test_spreadsheets_are_indexed_and_found_and_a_broken_one_is_a_warning(
        tmp_path: Path, fake_embedder: str) -> None:
    from ragctl.config import load_settings
    from ragctl.index.indexer import index_paths
    from ragctl.store.collection import Collection

    folder = tmp_path / "papers"
    folder.mkdir()
    _budget_xlsx(folder / "budget.xlsx")
    (folder / "plans.csv").write_text("Plan,Price,Seats\nBasic,$5,1\nTeam,$12,10\n")
    (folder / "broken.xlsx").write_bytes(b"PK\x03\x04 not really a workbook")
    summary, failed = index_paths(load_settings(), [folder])
    assert failed is None and summary.added == 2 and summary.skipped == 1
    assert [Path(w["path"]).name for w in summary.warnings] == ["broken.xlsx"]
    assert "\n" not in summary.warnings[0]["reason"]
    with Collection.open(load_settings()) as c:
        formats = c.store.format_counts()
        assert formats == {"csv": 1, "xlsx": 1}
        found = c.store.sentences_like(str(folder / "budget.xlsx"), ["%Q2%"])
        assert [s.text for s in found] == [
            "Quarter: Q2; Units: 1450; Returns: 2%; Revenue: $18,125.50"]
        assert found[0].place == "Sales 2025"


def test_a_title_and_notes_above_the_header_do_not_hide_it() -> None:
    from ragctl.index.ingest import sheet_lines

    rows = [["Paper savings bonds, by series"], ["As of June 30, 2013"],
            ["", "", "'A'", "'B'"],  # column letters name nothing
            ["Series", "", "Issued", "Outstanding"],
            ["Series 'EE'", "EE", "1979524598", "504867450"],
            ["Series 'I'", "I", "171559581", "92000"]]
    assert sheet_lines(rows) == [
        "Paper savings bonds, by series", "As of June 30, 2013", "'A' | 'B'",
        "Series: Series 'EE'; EE; Issued: 1979524598; Outstanding: 504867450",
        "Series: Series 'I'; I; Issued: 171559581; Outstanding: 92000"]


def test_a_cell_with_semicolons_and_full_stops_stays_one_row() -> None:
    from ragctl.ask.cells import row_cells
    from ragctl.index.ingest import sheet_lines
    from ragctl.index.sentences import SentenceSplitter

    rows = [["Vendor", "Part Name", "List Price"],
            ["Acme", "Drawer, 30 In.\nL;11-3/4 In. W;Gray", "19.32"],
            ["Acme", "Microscope; trinocular. Zoom 7X-45X", "1699"]]
    lines = sheet_lines(rows)
    assert lines[1] == "Vendor: Acme; Part Name: Microscope, trinocular. Zoom 7X-45X; " \
        "List Price: 1699"
    text = "\n\n".join(lines)
    assert [text[s.start:s.end] for s in SentenceSplitter().split(text)] == lines
    assert [c.column for c in row_cells(lines[0])] == ["Vendor", "Part Name", "List Price"]


def test_a_header_of_two_levels_names_each_column_by_its_group() -> None:
    from ragctl.index.ingest import sheet_lines

    rows = [["Summer School 2016 Budget"],
            ["", "Option 1 Leukerbad", "", "", "Option 2 Bristol", "", ""],
            ["", "Price", "Nb", "Total", "Price", "Nb", "Total"],
            ["Coffee breaks", "6", "272", "1632", "9.5", "272", "2584"],
            ["Total expenses", "", "", "32102", "", "", "33554"]]
    assert sheet_lines(rows)[2:] == [
        "Coffee breaks; Option 1 Leukerbad Price: 6; Option 1 Leukerbad Nb: 272; "
        "Option 1 Leukerbad Total: 1632; Option 2 Bristol Price: 9.5; Option 2 Bristol Nb: "
        "272; Option 2 Bristol Total: 2584",
        "Total expenses; Option 1 Leukerbad Total: 32102; Option 2 Bristol Total: 33554"]
    # names that repeat with no row of groups above them name no columns
    assert sheet_lines([["Price", "Nb", "Price"], ["6", "272", "9.5"]]) == [
        "Price | Nb | Price", "6 | 272 | 9.5"]


def test_tables_side_by_side_are_read_apart_each_under_its_own_header() -> None:
    from ragctl.index.ingest import sheet_blocks, sheet_lines

    # a schedule (days, then games by time of day) and, two empty columns to its right,
    # the standings under a title, in rows the schedule fills only in part
    rows = [["2025 Softball"],
            ["Saturday, May 24", "", "", "", ""],
            ["10:00", "Excitables (11) @ Riptide (2)"],
            ["12:00", "Fringe (7) @ Dogfish (2)", "", "", "Standings"],
            ["", "", "", "", "Team", "Record", "HRs"],
            ["Sunday, May 25", "", "", "", "Clippers", "8-4", "25"],
            ["10:00", "Dogfish (0) @ Excitables (16)", "", "", "Dogfish", "2-10", "3"],
            ["", "", "", "", "", "", ""],
            ["", "", "", "", "Riptide", "2-10", "5"]]
    assert [max(len(r) for r in b) for b in sheet_blocks(rows)] == [2, 3]
    assert sheet_lines(rows) == [
        "2025 Softball", "Saturday, May 24", "10:00 | Excitables (11) @ Riptide (2)",
        "12:00 | Fringe (7) @ Dogfish (2)", "Sunday, May 25",
        "10:00 | Dogfish (0) @ Excitables (16)",
        "Standings", "Team: Clippers; Record: 8-4; HRs: 25",
        "Team: Dogfish; Record: 2-10; HRs: 3",
        # a part under an empty row, without a header of its own: the one above it
        "Team: Riptide; Record: 2-10; HRs: 5"]
    # one table's columns with two empty columns between them, in the same rows: one table
    one = [["Name", "", "", "Score"], ["Ana", "", "", "12"], ["Bo", "", "", "9"]]
    assert len(sheet_blocks(one)) == 1
    assert sheet_lines(one) == ["Name: Ana; Score: 12", "Name: Bo; Score: 9"]
    # one empty column between a budget's spending and its funds, each under a header of
    # its own, in rows they fill only in part: two tables
    budget = [["Budget actuals", "", "", "Incoming Funds"],
              ["Description", "Total", "", "Organisation", "Package", "Amount"],
              ["Day 1 catering", "552", "", "Turing Institute", "Platinum", "5200"],
              ["Day 1 pizza", "327.87", "", "IOP", "Silver", "1000"],
              ["Day 2 catering", "620"], ["Total", "1499.87"]]
    assert [max(len(r) for r in b) for b in sheet_blocks(budget)] == [2, 3]
    assert "Organisation: IOP; Package: Silver; Amount: 1000" in sheet_lines(budget)
    # a spacer column inside one table, its right side under no header of its own: one
    spaced = [["Item", "Cost", "", "Note"], ["Tea", "3", "", "weekly"], ["Rent", "500"],
              ["Pens", "2"], ["Total", "505"]]
    assert len(sheet_blocks(spaced)) == 1
    # options side by side, a spacer between them, their rows named left of the first
    options = [["", "Option 1", "", "", "", "Option 2"],
               ["", "Price", "Nb", "Total", "", "Price", "Nb", "Total"],
               ["Coffee breaks", "6", "272", "1632", "", "9.5", "272", "2584"],
               ["Rent", "2000", "1", "2000", "", "2500", "1", "2500"],
               ["Participants", "30"], ["Speakers", "4"], ["Total", "34"]]
    assert len(sheet_blocks(options)) == 1


def test_a_table_stacked_under_another_is_read_under_its_own_header() -> None:
    from ragctl.index.ingest import sheet_lines

    rows = [["", "Degree", "", "Diploma", ""],
            ["", "Sex", "Value", "Sex", "Value"],
            ["Age 16-24", "Female", "120", "Female", "80"],
            ["Age 25-34", "Diploma", "", "Certificate"],  # groups of the table under it
            ["", "Sex", "Value", "Sex", "Value"],
            ["", "Female", "210", "Female", "732"]]
    assert sheet_lines(rows) == [
        "Degree | Diploma",
        "Age 16-24; Degree Sex: Female; Degree Value: 120; Diploma Sex: Female; "
        "Diploma Value: 80",
        "Age 25-34 | Diploma | Certificate",
        "Diploma Sex: Female; Diploma Value: 210; Certificate Sex: Female; "
        "Certificate Value: 732"]
    # the names again under a row of figures: a table of its own, without groups
    rows = [["", "Option 1", "", "Option 2", ""], ["", "Price", "Nb", "Price", "Nb"],
            ["Coffee", "6", "272", "9.5", "272"], ["Total", "298", "", "346", ""],
            ["", "Price", "Nb", "Price", "Nb"], ["Food", "364.75", "40", "150", "40"]]
    assert sheet_lines(rows)[-3:] == [
        "Total; Option 1 Price: 298; Option 2 Price: 346",
        "Price | Nb | Price | Nb", "Food | 364.75 | 40 | 150 | 40"]
    # the next quarter's table under the last one: its periods shifted by one
    rows = [["($ in millions)", "Q1 FY25", "Q4 FY24", "Q3 FY24"],
            ["Gaming", "2647", "2865", "2856"],
            ["($ in millions)", "Q4 FY24", "Q3 FY24", "Q2 FY24"],
            ["Gaming", "2865", "2856", "2486"]]
    assert sheet_lines(rows) == [
        "($ in millions): Gaming; Q1 FY25: 2647; Q4 FY24: 2865; Q3 FY24: 2856",
        "($ in millions): Gaming; Q4 FY24: 2865; Q3 FY24: 2856; Q2 FY24: 2486"]
    # a row of new names under a row of figures, with figures under them: a table of
    # its own (a budget's lunch order under its income and outgoings)
    rows = [["Sponsor", "Amount", "Description", "Amount"],
            ["ACME", "£2,019.00", "Lunch", "£216.90"],
            ["TOTAL", "£2,019.00", "TOTAL", "£216.90"],
            ["Lunch", "Order Quantity", "Subtotal", "Price Per Unit"],
            ["Double Cheese burgers", "80", "£127.20", "£1.59"],
            ["Veggie Wraps", "30", "£89.70", "£2.99"]]
    assert sheet_lines(rows)[-2:] == [
        "Lunch: Double Cheese burgers; Order Quantity: 80; Subtotal: £127.20; "
        "Price Per Unit: £1.59",
        "Lunch: Veggie Wraps; Order Quantity: 30; Subtotal: £89.70; Price Per Unit: £2.99"]
    # a label and a figure above a table: a labelled value
    rows = [["Exchange rate dollar to euro", "0.86"], ["Position", "Monthly", "Currency"],
            ["Blogging", "600.00", "USD"], ["Bisector", "500.00", "EUR"]]
    assert sheet_lines(rows)[:2] == ["Exchange rate dollar to euro: 0.86",
                                     "Position: Blogging; Monthly: 600.00; Currency: USD"]
    # a second line of the header (the columns' formulas), right under it: not a table
    rows = [["Series", "Issued", "Redeemed", "Outstanding"],
            ["", "(A)", "(B)", "(A - B)"],
            ["Series E", "4599", "4566", "33"], ["Series EE", "1979", "1474", "505"]]
    assert sheet_lines(rows)[-1].startswith("Series: Series EE; Issued: 1979")


def test_a_time_of_day_over_other_times_is_no_header_but_times_may_name_columns() -> None:
    from ragctl.index.ingest import sheet_lines

    assert sheet_lines([["10:00", "Opening talk"], ["11:30", "Lunch"]]) == [
        "10:00 | Opening talk", "11:30 | Lunch"]
    assert sheet_lines([["Room", "09:00", "10:00"], ["A", "Yoga", "Chess"]]) == [
        "Room: A; 09:00: Yoga; 10:00: Chess"]


def test_a_legacy_xls_workbook_is_read_with_its_formats(tmp_path: Path) -> None:
    import xlwt

    from ragctl.index.ingest import parse

    wb = xlwt.Workbook()
    ws = wb.add_sheet("Costs")
    money = xlwt.easyxf(num_format_str="$#,##0.00")
    day = xlwt.easyxf(num_format_str="yyyy-mm-dd")
    for j, head in enumerate(["Item", "Year 1", "Units", "Since"]):
        ws.write(0, j, head)
    ws.write(1, 0, "Office 365 E5")
    ws.write(1, 1, 192000, money)
    ws.write(1, 2, 500)
    ws.write(1, 3, dt.date(2021, 3, 1), day)
    ws.write(2, 0, "AD Premium")
    ws.write(2, 2, 12.5)
    wb.add_sheet("Empty")
    f = tmp_path / "costs.xls"
    wb.save(str(f))
    data = f.read_bytes()
    got = read_xls(data, "costs")
    assert [s.name for s in got] == ["Costs", "Empty"]
    assert got[0].rows == [["Item", "Year 1", "Units", "Since"],
                           ["Office 365 E5", "$192,000.00", "500", "2021-03-01"],
                           ["AD Premium", "", "12.5"]]
    assert read_xlsx(data, "costs")[0].rows == got[0].rows  # saved under the newer name
    # indexed as a sheet: each row keyed by its header
    doc = parse(f, data)
    assert "Item: Office 365 E5; Year 1: $192,000.00; Units: 500; Since: 2021-03-01" in \
        doc.sections[0].text
    with pytest.raises(SheetError, match=r"^not a valid XLS workbook \(not an OLE"):
        read_xls(b"<html><table></table></html>", "page.xls")


def test_parts_under_the_header_above_though_labels_repeat_past_it() -> None:
    from ragctl.index.ingest import _table_lines

    # a part of a sheet under the header of the part above it, its labels repeated right
    # of its figures past the header's last named column, as the rows above it are
    head = ["", "FY 18 PLANNED", "FY 17 ADOPTED"]
    part = [["Water", "113", "106", "", "Water"], ["Sewer", "106", "98", "", "Sewer"]]
    assert _table_lines(part, head, wide=5) == [
        "Water; FY 18 PLANNED: 113; FY 17 ADOPTED: 106; Water",
        "Sewer; FY 18 PLANNED: 106; FY 17 ADOPTED: 98; Sewer"]
    # wider than the part above too: another table, read cell by cell
    assert _table_lines(part, head, wide=3) == ["Water | 113 | 106 | Water",
                                                "Sewer | 106 | 98 | Sewer"]


def test_a_sheets_titled_parts_are_sections_under_their_titles(tmp_path: Path) -> None:
    """Two builds' parts one under the other, each under its own title and header: each
    part a section placed under its title, so a question that names a build reads its
    rows and its total; the sheet's own title, over the first part's, stays the sheet's."""
    import openpyxl

    from ragctl.index.ingest import parse

    wb = openpyxl.Workbook()
    ws = wb.active
    for row in (["RFID Door Project"], ["Arduino Build"], ["Item", "Cost", "Vendor"],
                ["Arduino Uno", 25, "Adafruit"], ["Door strike", 75, "Amazon"],
                ["Total", 100], ["Raspberry Pi Build"], ["Item", "Cost", "Vendor"],
                ["Powered USB Hub", 10, "Amazon"], ["Door strike", 75, "Amazon"],
                ["Total", 85]):
        ws.append(row)
    path = tmp_path / "door.xlsx"
    wb.save(path)
    doc = parse(path, path.read_bytes())
    places = [s.place for s in doc.sections]
    assert places == ["Sheet", "Sheet > Arduino Build", "Sheet > Raspberry Pi Build"], places
    pi = doc.sections[2].text
    assert pi.startswith("Raspberry Pi Build\n\n") and "Item: Total; Cost: 85" in pi
    assert all(doc.sections[k].offset == doc.sections[k - 1].offset + len(
        doc.sections[k - 1].text) + 2 for k in (1, 2))
