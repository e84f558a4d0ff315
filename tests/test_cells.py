"""Table cells answered by the row the question names and the column it asks for."""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path

import pytest

from ragctl.ask.cells import key_cells, row_cells, word_key, written_code
from ragctl.ask.pipeline import AskOptions, Pipeline
from ragctl.config import load_settings
from ragctl.index.indexer import Indexer
from ragctl.records import Answer, Sentence
from ragctl.store.collection import Collection
from tests.fakes import FakeReader

CLUBS = """Club,City,Members,Founded,Chair
Oslo Rowing Club,Oslo,412,1898,Kari Nordmann
Bergen Sailing Club,Bergen,250,1921,Ola Hansen
Trondheim Chess Club,Trondheim,87,1955,Ingrid Berg
"""


def test_a_row_is_read_as_cells_with_their_offsets() -> None:
    text = "Club: Bergen Sailing Club; Members: 250; Founded: 1921."
    cells = row_cells(text)
    assert [(c.column, c.value) for c in cells] == [
        ("Club", "Bergen Sailing Club"), ("Members", "250"), ("Founded", "1921")]
    assert all(text[c.start:c.end] == c.value for c in cells)


@pytest.mark.parametrize("text", [
    "The rent is 900 euros a month; it is paid on the first.",
    "Capital: Wellington",  # one labelled value is a field, not a row
    "Note that this is long prose before a colon. It goes on: yes; and: no",
    "Q1 | 1,200 | 3%",
])
def test_prose_and_single_fields_are_not_rows(text: str) -> None:
    assert row_cells(text) == []


def test_the_question_names_a_row_by_its_values() -> None:
    cells = row_cells("Club: Bergen Sailing Club; City: Bergen; Members: 250")
    key, score = key_cells(cells, "How many members does the Bergen club have?")
    # "Bergen" names the city whole (1) and, a name of the question, the club, whose
    # other word the question uses counts half, less a tenth for a cell named in part
    assert key == (0, 1) and score == pytest.approx(1.4)
    assert key_cells(cells, "How many members does the Oslo club have?") == ((), 0.0)


def indexed(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """A new folder ``root`` holding ``files`` (name → text, or bytes: a workbook),
    indexed."""
    root.mkdir()
    for name, content in files.items():
        if isinstance(content, bytes):
            (root / name).write_bytes(content)
        else:
            (root / name).write_text(content)
    with Collection.open(load_settings(), create=True) as c:
        c.lock()
        Indexer(c).run([root])
    return root


@pytest.fixture
def clubs(tmp_path: Path, fake_embedder: str) -> Path:
    return indexed(tmp_path / "clubs", {
        "clubs.csv": CLUBS, "rent.md": "# Flat\n\nThe rent is 900 euros a month.\n"})


def _ask(question: str, reader: FakeReader) -> Answer:
    with Collection.open(load_settings()) as c, Pipeline(c, reader=reader) as p:
        return p.ask(question, AskOptions(re_threshold=0.0, answer_threshold=0.0))


def test_the_cell_of_the_named_row_answers_not_its_neighbour(clubs: Path) -> None:
    # the reader would take the first row's number; the row the question names answers
    a = _ask("How many members does the Bergen club have?", FakeReader("412"))
    assert not a.abstained and a.kind == "cell"
    assert a.answer_text == "250"
    cand = a.candidates[0]
    assert (cand["row"], cand["column"]) == ("Bergen Sailing Club; Bergen", "Members")
    src = a.sources[0]
    assert "Bergen" in src.text and src.answer_start is not None
    b = _ask("Who is the chair of the Trondheim club?", FakeReader("412"))
    assert b.answer_text == "Ingrid Berg"


def test_a_cell_is_no_answer_to_a_difference(clubs: Path) -> None:
    # the table gives the members, not their growth: the cell is an input, not the result
    a = _ask("By how much has the number of members of the Bergen club grown?",
             FakeReader("250"))
    assert a.abstained and "difference" in (a.abstain_reason or ""), a.answer
    assert "no_input_as_result" in a.rules


def test_a_markdown_table_cell_is_answered_from_its_row(tmp_path: Path,
                                                        fake_embedder: str) -> None:
    table = "\n".join("| " + " | ".join(line.split(",")) + " |" for line in
                      CLUBS.strip().splitlines())
    rule = "| --- | --- | --- | --- | --- |"
    head, *body = table.splitlines()
    indexed(tmp_path / "notes", {"clubs.md": "# Clubs\n\n" + "\n".join([head, rule, *body])
                                 + "\n"})
    a = _ask("How many members does the Bergen club have?", FakeReader("412"))
    assert not a.abstained and a.kind == "cell" and a.answer_text == "250"


def test_an_abbreviated_header_is_named_in_full_and_a_units_column_is_shown(
        tmp_path: Path, fake_embedder: str) -> None:
    from ragctl.ask.cells import spoken

    assert spoken("MAX") == "maximum" and spoken("Qty.") == "quantity"
    rows = ["| PARAMETER | CONDITION | MIN | MAX | UNITS |", "| --- | --- | --- | --- | --- |",
            "| Conversion Time | 9-bit resolution | | 93.75 | ms |",
            "| Conversion Time | 12-bit resolution | | 750 | ms |",
            "| Thermometer Error | 0°C to +70°C | | ±0.5 | °C |",
            "| Thermometer Error | -55°C to +125°C | | ±2 | °C |"]
    indexed(tmp_path / "sheet", {"ds1631.md": "# Characteristics\n\n" + "\n".join(rows)
                                 + "\n"})
    a = _ask("What is the maximum conversion time at 12-bit resolution?", FakeReader("ms"))
    assert not a.abstained and a.kind == "cell" and a.answer == "750 ms [1]"
    assert a.sources[0].column == "MAX"
    # the parameter the question asks for is the row's own: its one number answers
    b = _ask("What thermometer error does it have from -55°C to +125°C?", FakeReader("°C"))
    assert not b.abstained and b.answer == "±2 °C [1]" and "sole_measure" in b.rules


def test_an_acronym_header_is_the_words_the_question_spells_it_with(
        tmp_path: Path, fake_embedder: str) -> None:
    from ragctl.ask.cells import spelled_out

    assert spelled_out("HRs", "How many home runs did they hit?") == "home runs"
    assert spelled_out("YTD", "What was withheld year to date?") == "year to date"
    assert spelled_out("GST", "How much goods and services tax?") == "goods and services tax"
    # no run of words that say something spells it: as it was ("hrs" is hours)
    assert spelled_out("ID", "What is declared?") == "ID"
    assert spelled_out("Hrs", "How many home runs?") == "hours"
    # a longer header's other words say what it holds: "WEO" names the report asked of
    assert spelled_out("Difference from WEO Projections", "In the World Economic Outlook, "
                       "what is projected?") == "Difference from WEO Projections"
    # a short word the question writes whole: "Int" of "URBAN AREA Int." is interstate;
    # not a word the question's words only start alike ("Net" of "networks": 3 letters
    # more are needed, "Rate" of "rated")
    q = "How many miles of urban interstate does Morris County have?"
    assert spelled_out("URBAN AREA Int", q) == "URBAN AREA interstate"
    assert spelled_out("Loco", "How many locomotives?") == "locomotives"
    assert spelled_out("Rate", "How was it rated?") == "Rate"
    indexed(tmp_path / "club", {"standings.csv": "Team,Record,Runs,Runs Given,HRs\n"
                                "Clippers,8-4,80,60,25\nDogfish,2-10,30,84,3\n"})
    a = _ask("How many home runs did the Clippers hit?", FakeReader("80"))
    assert not a.abstained and a.kind == "cell" and a.answer_text == "25"
    assert a.sources[0].column == "HRs"


def test_how_much_of_a_row_named_by_one_cell_is_its_one_amount(tmp_path: Path,
                                                                fake_embedder: str) -> None:
    indexed(tmp_path / "cards", {"statement.csv": "Date Processed,Description,Amount\n"
                                 "03-Dec-2019,V & A MUSEUM SALES LONDON GBR,£10.00\n"
                                 "05-Dec-2019,NEXT DIRECTORY ONLINE GBR,£80.99\n"})
    a = _ask("How much did the card statement show for Next Directory?", FakeReader("GBR"))
    assert not a.abstained and a.kind == "cell" and a.answer_text == "£80.99"
    # a row with two amounts does not say which one is meant
    indexed(tmp_path / "items", {"items.csv": "Item,Unit price,Total\n"
                                 "Kettle,£20.00,£40.00\nToaster,£30.00,£30.00\n"})
    b = _ask("How much did the order show for the Kettle?", FakeReader("Kettle"))
    assert b.kind != "cell" or b.abstained


def test_a_header_counts_as_written_too(tmp_path: Path, fake_embedder: str) -> None:
    from ragctl.ask.cells import said_share, spoken

    # "Q3" is said "third quarter", and a question that writes "Q3 FY24" names it as written
    assert spoken("Q3 FY24") == "third quarter FY24"
    asked = {"gaming", "revenue", "q3", "fy24"}
    assert said_share("Q3 FY24", asked) == 1.0 and said_share("Q1 FY24", asked) == 0.5
    indexed(tmp_path / "revenue", {"markets.csv": "Market,Q1 FY24,Q4 FY23,Q3 FY24\n"
                                   "Gaming,2240,1831,2856\nAuto,296,294,261\n"})
    a = _ask("What was the Gaming revenue in Q3 FY24?", FakeReader("2240"))
    assert not a.abstained and a.kind == "cell" and a.answer_text == "2856"


def test_rows_named_alike_agree_on_a_number_however_written(tmp_path: Path,
                                                            fake_embedder: str) -> None:
    from ragctl.ask.cells import _as_value

    assert _as_value("$2,856.00") == _as_value("2856") != _as_value("2,857")
    # a quarter's figure in each of the tables stacked on the sheet, one of them in dollars
    indexed(tmp_path / "quarters", {"q.csv": "Market,Q1 FY24,Q3 FY24\nGaming,2240,2856\n",
                                    "r.csv": "Market,Q3 FY24,Q1 FY24\n"
                                             "Gaming,\"$2,856.00\",\"$2,240.00\"\n"})
    a = _ask("What was the Gaming revenue in Q3 FY24?", FakeReader("2240"))
    assert not a.abstained and a.kind == "cell" and a.answer_text in ("2856", "$2,856.00")


def test_a_year_the_sheet_is_named_by_is_held_by_its_rows(
        tmp_path: Path, fake_embedder: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from openpyxl import Workbook

    def book(sheet: str) -> bytes:
        wb = Workbook()
        ws = wb.active
        ws.title = sheet
        for row in [["Friday, July 4"], ["10:00", "Riptide @ Fringe"],
                    ["12:30", "Dogfish @ Outsiders"]]:
            ws.append(row)
        out = io.BytesIO()
        wb.save(out)
        return out.getvalue()

    def ask() -> Answer:
        with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("12:30")) as p:
            return p.ask("At what time was the Dogfish vs. Outsiders game on July 4, 2025?",
                         AskOptions(re_threshold=0.0, answer_threshold=0.01))

    indexed(tmp_path / "named", {"schedule.xlsx": book("2025 Schedule")})
    a = ask()
    assert not a.abstained and a.answer_text == "12:30"
    # a sheet of another year's games does not answer for 2025
    monkeypatch.setenv("RAGCTL_HOME", str(tmp_path / "home-2024"))
    indexed(tmp_path / "other", {"schedule.xlsx": book("2024 Schedule")})
    assert ask().abstained


def test_a_row_of_the_document_that_names_the_subject_elsewhere_answers(
        tmp_path: Path, fake_embedder: str) -> None:
    # the rows never say "Galaxy Gaming"; the filing's text does. Two of its tables give
    # the total, one with "$": they agree
    filing = ("# Annual report\n\nGalaxy Gaming licenses casino table games.\n\n"
              "| Item | 2021 | 2020 |\n| --- | --- | --- |\n"
              "| Total revenue | 19,984,378 | 10,230,316 |\n\nBy region:\n\n"
              "| Region | 2021 | 2020 |\n| --- | --- | --- |\n"
              "| Total revenue | $19,984,378 | $10,230,316 |\n")
    other = ("# Acme facts\n\n| Year | Revenue |\n| --- | --- |\n| 2021 | 168,088 |\n"
             "| 2020 | 143,015 |\n")
    indexed(tmp_path / "filings", {"glxz-10k.md": filing, "acme.md": other})
    a = _ask("What was Galaxy Gaming's total revenue for 2021?", FakeReader("2020"))
    assert not a.abstained and a.kind == "cell" and a.answer_text == "19,984,378"


def test_a_code_written_as_the_row_writes_it_names_that_row(
        tmp_path: Path, fake_embedder: str) -> None:
    rows = ["| ORDERING NUMBER | PACKAGE MARKING | DESCRIPTION |", "| --- | --- | --- |",
            "| DS1631Z | DS1631Z | DS1631 in 150 mil 8-Pin SO |",
            "| DS1631Z+ | DS1631Z (See Note) | DS1631 in Lead-Free 150 mil 8-Pin SO |",
            "| DS1631Z+T&R | DS1631Z (See Note) | DS1631 in Lead-Free SO, Tape-and-Reel |"]
    indexed(tmp_path / "sheet", {"ordering.md": "# Ordering\n\n" + "\n".join(rows) + "\n"})
    a = _ask("What is the package marking for ordering number DS1631Z+?", FakeReader("SO"))
    assert not a.abstained and a.kind == "cell" and a.answer_text == "DS1631Z (See Note)"


def test_a_column_the_table_lacks_is_refused_not_answered_next_door(clubs: Path) -> None:
    a = _ask("What is the annual fee of the Bergen club?", FakeReader("250"))
    assert a.abstained
    reason = a.abstain_reason or ""
    assert "no column" in reason and "Members" in reason


def test_prose_questions_are_left_to_the_reader(clubs: Path) -> None:
    a = _ask("How much is the rent of the flat?", FakeReader("900 euros"))
    assert not a.abstained and a.kind == "span"
    assert a.answer_text == "900 euros"


def test_names_in_other_languages_are_prose_not_a_row() -> None:
    assert row_cells("The Normans (Norman: Nourmands; French: Normands; Latin: Normanni) "
                     "were the people who gave their name to Normandy.") == []


def test_a_row_the_table_lacks_is_refused(clubs: Path) -> None:
    # Bergen and 1898 are both in the table, never in one row
    a = _ask("How many members did the Bergen club have in 1898?", FakeReader("412"))
    assert a.abstained and a.answer == "" and not a.sources
    assert "holds 1898 and bergen together" in (a.abstain_reason or "")


def test_a_number_that_heads_a_column_asks_for_that_column(
        tmp_path: Path, fake_embedder: str) -> None:
    indexed(tmp_path / "rates", {"rates.csv": "Country,Independence,1990,2010\n"
                                 "Nigeria,1960,213,143\nPeru,1821,80,20\nChad,1990,215,173\n"})
    # 1990 is also Chad's year of independence: it is still no row the table lacks
    a = _ask("What was the mortality rate in Nigeria in 1990?", FakeReader("80"))
    assert not a.abstained and a.answer_text == "213"
    # a number heading a column says nothing of what it counts: the table must name it
    b = _ask("What was the GDP of Nigeria in 1990?", FakeReader("no such span"))
    assert b.kind != "cell" and b.answer_text != "213"
def test_a_cell_is_cited_by_its_row_and_column(clubs: Path) -> None:
    a = _ask("How many members does the Bergen club have?", FakeReader("412"))
    src = a.sources[0]
    assert (src.row, src.column) == ("Bergen Sailing Club; Bergen", "Members")
    assert src.line is None  # a spreadsheet is placed by its row, not a line


def test_a_count_is_never_a_date_cell() -> None:
    from ragctl.ask.cells import Row, column_scores
    from ragctl.records import Sentence
    from tests.fakes import HashEmbedder

    text = ("Notice Date: 06/30/2015; Company: McGraw-Hill Education; City: Monterey; "
            "Workers: 137")
    row = Row(Sentence(id=1, passage_id=1, seq=0, path="warn.pdf", title="", place="",
                       start_char=0, end_char=len(text), text=text, raw=None),
              tuple(row_cells(text)), (1,), 1.0)
    embed = HashEmbedder("fake-hash", 64).embed
    scored = column_scores(embed, "How many workers does the McGraw-Hill notice cover?",
                           row, "number")
    # the notice's date shares the question's words; a count is a number that is no date
    assert [c.column for _, c in scored] == ["Workers"]
    # a question that asks no type weighs every cell
    assert len(column_scores(embed, "What does the McGraw-Hill notice say?", row, "any")) == 3
    # a column of codes counts nothing ("Region Code: 142" of "how many countries in Asia")
    text = "Region Code: 142; Region Name: Asia; Country or Area: Japan; Population: 124"
    coded = Row(Sentence(id=2, passage_id=1, seq=0, path="m49.html", title="", place="",
                         start_char=0, end_char=len(text), text=text, raw=None),
                tuple(row_cells(text)), (2,), 1.0)
    asked = column_scores(embed, "How many countries or areas are in Asia?", coded, "number")
    assert "Region Code" not in [c.column for _, c in asked]
    assert "Region Code" in [c.column for _, c in column_scores(
        embed, "What is the region code of Japan?", coded, "any")]


def test_a_row_is_named_by_the_date_its_cell_holds() -> None:
    from ragctl.ask.cells import matched_rows, spoken
    from ragctl.records import Sentence

    def row(i: int, text: str, path: str = "us-employment.csv") -> Sentence:
        return Sentence(id=i, passage_id=1, seq=i, path=path, title=Path(path).stem,
                        place="", start_char=0, end_char=len(text), text=text, raw=None)

    months = [row(1, "month: 2009-05-01; construction: 6150; manufacturing: 11800"),
              row(2, "month: 2009-06-01; construction: 6010; manufacturing: 11726"),
              row(3, "month: 2010-06-01; construction: 5600; manufacturing: 11500")]
    for question in ("How many construction jobs were there in June 2009?",
                     "What was construction employment in 2009-06?"):
        found = matched_rows(question, months)
        assert [r.sentence.id for r in found] == [2], question
        assert found[0].of_subject
    # a year alone names every month of it
    assert {r.sentence.id for r in matched_rows("construction jobs in 2009", months)} == {1, 2}
    # the question's name that only the file's name holds ("Iowa") names its rows too
    power = [row(4, "year: 2010-01-01; source: Nuclear Energy; net_generation: 4451",
                 "iowa-electricity.csv")]
    (found,) = matched_rows("How much electricity did nuclear energy generate in Iowa in "
                            "2010?", power)
    assert found.of_subject and found.key == (0, 1)
    assert spoken("net_generation") == "net generation"
    assert spoken("netGeneration") == "net Generation"


def test_dates_as_far_as_the_text_gives_them() -> None:
    from ragctl.text import calendar_dates, same_date

    assert calendar_dates("June 2009, 2009-06-01 and 5 June 2009") == [
        (2009, 6, None), (2009, 6, 1), (2009, 6, 5)]
    assert calendar_dates("on 25/12/2019 or 06/01/2009, in 1990") == [
        (2019, 12, 25), (2009, 6, 1), (1990, None, None)]
    assert calendar_dates("1,200 people, Q2 units, 12:30") == []
    assert calendar_dates("2009-13-01") == []  # no month 13, and a year within a name
    # a statement's "12-Dec-2019", one mark between its parts; not "12-Dec/2019"
    assert calendar_dates("12-Dec-2019, 1.Mar.2020, 12-Dec/2019") == [
        (2019, 12, 12), (2020, 3, 1)]
    assert same_date((2009, 6, None), (2009, 6, 1)) and same_date((2009, None, None),
                                                                  (2009, 12, 31))
    assert not same_date((2009, 6, 5), (2009, 6, 1))


CENSUS = """Region,Year,Sex,Value
North,2020,Male,1200
North,2020,Female,1350
South,2020,Male,900
South,2020,Female,950
"""


@pytest.fixture
def census(tmp_path: Path, fake_embedder: str) -> Path:
    return indexed(tmp_path / "census", {"census.csv": CENSUS})


def test_a_table_of_counts_by_dimensions_answers_its_one_measure(census: Path) -> None:
    # the question names three of the row's cells and asks how many: "Value" is the one
    # number left, though its header says nothing of residents
    a = _ask("How many Female residents did North have in 2020?", FakeReader("1200"))
    assert not a.abstained and a.kind == "cell", a.abstain_reason
    assert a.answer_text == "1350" and "sole_measure" in a.rules
    # a year that the table never holds: no row of it answers
    b = _ask("How many Female residents did North have in 2012?", FakeReader("1200"))
    assert b.abstained and "holds 2012" in (b.abstain_reason or "")
    # an attribute the table lacks is still refused, not answered from "Value"
    c = _ask("What was the median age of Female residents of North in 2020?",
             FakeReader("1200"))
    assert c.abstained and "no column" in (c.abstain_reason or ""), c.answer_text


def test_rows_named_alike_are_told_apart_by_their_own_words() -> None:
    import numpy as np

    from ragctl.ask.cells import Row, nearest_row
    from ragctl.records import Sentence

    def make_sentence(text: str) -> Sentence:
        return Sentence(id=1, passage_id=1, path="p.csv", text=text)

    texts = ["Sex: Male; Age: 45 - 64; Value: 199000", "Sex: Female; Age: 45 - 64; Value: 210000"]
    rows = [Row(make_sentence(t), tuple(row_cells(t)), (1,), 1.0) for t in texts]
    near = {"men aged 45-64": [1.0, 0.0, 0.0], "Male": [0.8, 0.6, 0.0],
            "Female": [0.5, 0.0, 0.866], "Drought": [0.0, 1.0, 0.0]}

    def vectors(items):  # type: ignore[no-untyped-def]
        return np.array([near[t] for t in items])

    assert nearest_row(vectors, "men aged 45-64", rows, []) is rows[0]
    # another row of the table is nearer still: none of these is the one asked about
    other = make_sentence("Sex: Drought; Age: 45 - 64; Value: 5")
    near["men aged 45-64"] = [0.0, 1.0, 0.0]
    assert nearest_row(vectors, "men aged 45-64", rows, [other]) is None


def test_a_name_ending_in_ss_is_no_plural_and_names_its_row_whole() -> None:
    from ragctl.ask.cells import key_cells

    q = "What is the average price for Hass avocados in cartons 2 layer, size 48s?"
    plain = row_cells("VARIEDAD: Hass; EMPAQUE: cartons 2 layer; CALIBRE: 48s; PROMEDIO: 29.25")
    organic = row_cells("VARIEDAD: Organic Hass; EMPAQUE: cartons 2 layer; CALIBRE: 48s; "
                        "PROMEDIO: 47.25")
    # "Hass" is not the plural of "has" (a word that names nothing): the row it names whole
    # is named better than the one whose "Organic Hass" it names in part
    assert key_cells(plain, q)[0] == (0, 1, 2)
    assert key_cells(plain, q)[1] > key_cells(organic, q)[1]


def test_a_word_of_a_longer_name_that_a_row_holds_alone_is_not_asked_of_every_row() -> None:
    from ragctl.ask.cells import matched_rows
    from ragctl.records import Sentence

    q = ("In the City of Philadelphia General Fund Obligation History, what is the Police "
         "department's Personal Services adopted budget for FY2023?")
    texts = ["Personal Services; Part of: Office of the Inspector General; Fiscal Year 2023 "
             "Adopted Budget: 1,500,000",
             "Personal Services; Part of: Police; Fiscal Year 2023 Adopted Budget: 753,577,996"]
    rows = matched_rows(q, [Sentence(id=i, passage_id=1, path="FY23.pdf", text=t)
                            for i, t in enumerate(texts)])
    named = {r.sentence.id: r.named for r in rows}
    # "General" and "Fund" are two of six words of the report's name: no row's own
    assert named[1] == {"personal", "service", "police"}
    assert named[0] == {"personal", "service"}
    assert rows[0].sentence.id == 1


def test_a_month_no_header_of_the_row_holds_is_not_in_the_table() -> None:
    from ragctl.ask.cells import Row, month_not_held
    from ragctl.records import Sentence

    text = ("Group: All items (CPI Headline); % change May 2023 vs. Apr 2023: 0,2; "
            "% change May 2023 vs. May 2022: 6,3")
    row = Row(Sentence(id=1, passage_id=1, path="P0141May2023.pdf", text=text),
              tuple(row_cells(text)), (0,), 1.0)
    assert month_not_held("What was the headline rate for June 2023?", row) == "June 2023"
    assert month_not_held("What was the headline rate for May 2023?", row) is None
    dated = "Date: 2009-06-01; Index (Dec 2021=100): 98,1"
    day = Row(Sentence(id=2, passage_id=1, path="cpi.csv", text=dated),
              tuple(row_cells(dated)), (0,), 1.0)
    assert month_not_held("What was the index in June 2009?", day) is None  # its own cell


def test_a_day_no_header_of_the_row_nor_its_document_holds_is_not_in_the_table() -> None:
    from types import SimpleNamespace

    from ragctl.ask.cells import Row, day_not_held
    from ragctl.records import Sentence

    text = ("Reserve balances; Week ended Mar 4, 2026: 3,015,531; Change from week ended "
            "Feb 25, 2026: -51,802")
    row = Row(Sentence(id=1, passage_id=1, path="h41.pdf", text=text),
              tuple(row_cells(text)), (0,), 1.0)
    released = Sentence(id=2, passage_id=1, path="h41.pdf", text="Release date: March 5, 2026")
    store = SimpleNamespace(sentences_like=lambda path, patterns, limit: [released])
    stages = SimpleNamespace(collection=SimpleNamespace(store=store))
    asked = "What were reserve balances for the week ended {}, in the release of March 5, 2026?"
    assert day_not_held(stages, asked.format("February 18, 2026"), row) == "February 18, 2026"
    assert day_not_held(stages, asked.format("March 4, 2026"), row) is None
    assert day_not_held(stages, asked.format("25 February 2026"), row) is None


def test_the_number_of_a_table_the_question_points_to_names_no_row() -> None:
    from ragctl.ask.cells import Asked

    asked = Asked.of("In the report's SFT comparison (Table 4), what GPQA-Diamond (Avg@8) "
                     "score does the GDN-H baseline get on page 11?")
    assert "8" in asked.wanted and "4" not in asked.wanted and "11" not in asked.wanted


def test_the_day_of_a_date_the_question_names_names_no_row() -> None:
    from ragctl.ask.cells import Asked, date_named

    question = "How many concession members were there on 30 June 2016?"
    full = row_cells("Full Members; 1/07/2015: 22; 30/06/2016: 30")
    concession = row_cells("Concession Members; 1/07/2015: 4; 30/06/2016: 15")
    assert key_cells(full, question) == ((), 0.0)  # its cell of 30 is no key
    assert key_cells(concession, question)[1] == 2.0
    asked = Asked.of(question)
    assert "30" not in asked.wanted and "2016" in asked.wanted
    assert date_named("30 June 2016", asked) is not None  # a date cell still is named


def test_a_row_of_what_the_question_sets_aside_is_not_the_one_asked_of() -> None:
    question = "How much went to the General Fund in the adopted (not tentative) 2013 budget?"
    adopted = row_cells("year: 2013; budget: adopted; fund: General Fund; taxes: 33093095")
    tentative = row_cells("year: 2013; budget: tentative; fund: General Fund; taxes: 33547095")
    assert key_cells(adopted, question) == ((0, 1, 2), 4.0)
    assert key_cells(tentative, question) == ((0, 2), 2.0)  # "tentative" set aside


def test_a_code_the_question_writes_keeps_the_rows_other_named_cells_keys() -> None:
    import numpy as np

    from ragctl.ask.cells import Row, column_scores
    from ragctl.records import Sentence

    text = "year: 2010-2011; budget: adopted; fund: Pool; appropriation: 989159"
    row = Row(Sentence(id=1, passage_id=1, path="funds.csv", text=text),
              tuple(row_cells(text)), (0, 1, 2), 3.0)
    scored = column_scores(lambda texts: np.ones((len(texts), 4)), "What appropriation did "
                           "the adopted 2010-2011 budget give the Pool fund?", row, "number")
    assert [c.value for _, c in scored] == ["989159"]  # not "Pool" nor "adopted"


def test_a_headers_year_counts_for_it_when_asked_and_against_it_when_another() -> None:
    from ragctl.ask.cells import header_years, year_weight

    q = "What was the 2023 turnout in Allegheny County?"
    assert year_weight(q, "2023 cvap_turnout") > 0 > year_weight(q, "Change in % turnout from 2021")
    assert year_weight(q, "Turnout") == 0 == year_weight("What was the turnout?", "2023 turnout")
    # a span of years in two digits
    assert header_years("fatalities_85_99") >= {"1985", "1992", "1999"}
    assert header_years("incidents_00_14") >= {"2000", "2014"} and not header_years("v1_2")
    asked = "How many fatalities did Japan Airlines have between 1985 and 1999?"
    assert year_weight(asked, "fatalities_85_99") > 0 > year_weight(asked, "fatalities_00_14")
    # the year that names the document ("the January 2023 Outlook") picks no column
    outlook = Sentence(id=1, passage_id=1, seq=0, path="weo.pdf", place="p. 7", start_char=0,
                       end_char=1, text="", raw=None,
                       title="World Economic Outlook Update, January 2023")
    q = "In the January 2023 World Economic Outlook, what is Spain's growth for 2024?"
    assert year_weight(q, "Projections 2024", outlook) > 0 > year_weight(
        q, "Projections 2023", outlook)
    assert year_weight(q, "Projections 2023") > 0  # without the document, both are asked



def test_a_units_column_of_numbers_is_no_unit(tmp_path: Path, fake_embedder: str) -> None:
    indexed(tmp_path / "budget", {
        "budget.csv": "Component,Unit price,Units,Price\nHDMI switch,2200,1,2200\n"
                      "XLR cables,180,6,1080\n"})
    b = _ask("What unit price is listed for the HDMI switch?", FakeReader("x"))
    assert b.answer_text == "2200"  # "Units: 1" counts switches; it is no unit of 2200


def test_the_question_form_names_the_kind_of_column() -> None:
    """ "How many …" asks a row's count, "what share …" its percentage, whatever else the
    question says; the rule off, no column gets more."""
    from ragctl.ask.cells import COLUMN_WEIGHTS, form_weight
    from ragctl.ask.switches import rules_off

    more = COLUMN_WEIGHTS["form"]
    q = "How many AES/EBU XLR cables are planned on the Budget sheet?"
    assert form_weight(q, "Units") == more and form_weight(q, "Qty") == more
    assert form_weight(q, "Unit price") == 0.0 and form_weight(q, "Price") == 0.0
    assert form_weight(q, "Order Quantitiy") == more  # as a budget misspells it
    assert form_weight("How many glaciers were observed in 1980?",
                       "Number of observations") == more
    q = "What share of Microsoft does BlackRock hold?"
    assert form_weight(q, "Percentage") == more and form_weight(q, "Shareholder name") == 0.0
    assert form_weight("Who holds the largest share?", "Percentage") == 0.0
    # what a line "came to" is its total, not its unit price
    q = "How much did the Online Course Fee come to on the receipt?"
    assert form_weight(q, "Subtotal") == more and form_weight(q, "Price") == 0.0
    assert form_weight("How much is the Online Course Fee?", "Subtotal") == 0.0
    with rules_off(frozenset({"form_column"})):
        assert form_weight("How many cables?", "Units") == 0.0


def test_rows_come_from_the_document_the_question_names_most(tmp_path: Path,
                                                              fake_embedder: str) -> None:
    # two reports hold a row for South Africa; the question names the one it is about by
    # its publisher too, and a row named only by its report's own title word is no row
    indexed(tmp_path / "reports", {
        "world-economic-outlook.csv": "Economy,Inflation May 2023,Growth 2023\n"
                                      "World Growth Based on Market Rates,5.1,2.4\n"
                                      "South Africa,1.2,1.3\n",
        "statssa-cpi-release.csv": "Region,Inflation May 2023,Inflation April 2023\n"
                                   "South Africa,6.3,6.8\nFree State,7.1,7.4\n",
        "outlook-notes.txt": "The outlook does not cover Australia this year.\n"})
    a = _ask("What inflation did Statssa report for South Africa in May 2023?",
             FakeReader("1.2"))
    assert a.answer == "6.3 [1]" and "statssa" in a.sources[0].path
    b = _ask("What growth does the World Economic Outlook give Australia for 2023?",
             FakeReader("2.4"))
    assert not (b.sources and "Market Rates" in (b.sources[0].row or "")), b.answer


def test_the_phrase_naming_a_document_picks_no_column(tmp_path: Path,
                                                     fake_embedder: str) -> None:
    # "fatal crash report" names the report, not its Fatalities or Crashes column; "City
    # of Melbourne" names the dataset, though one row's name says "City" and others
    # "Melbourne"
    indexed(tmp_path / "reports", {
        "crashes-2022.csv": "County,Driver,Pedestrian,Fatalities,Crashes\n"
                            "Camden,23,26,55,52\nBergen,20,14,44,38\n",
        "venues.csv": "Trading name,Small area,Number of patrons\n"
                      "Waterside Hotel,Docklands,983\nRACV City Club,Southbank,150\n"
                      "Icebar Melbourne,Melbourne (CBD),166\n"})
    q = ("According to the State Police 2022 fatal crash report, how many pedestrians "
         "were killed in Camden County?")
    assert _ask(q, FakeReader("55")).answer == "26 [1]"
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("55")) as p:
        off = p.ask(q, AskOptions(re_threshold=0.0, answer_threshold=0.0,
                                  rules_off=frozenset({"source_phrase"})))
    assert off.answer != "26 [1]"
    b = _ask("In the City of Melbourne bars and pubs dataset, what is the patron capacity "
             "of the Waterside Hotel?", FakeReader("x"))
    assert b.answer == "983 [1]", (b.answer, b.abstain_reason)


def test_a_cell_that_holds_nothing_is_refused_not_its_neighbour(tmp_path: Path,
                                                                fake_embedder: str) -> None:
    indexed(tmp_path / "evals", {"evals.csv": "Model,MMLU,HumanEval,SimpleQA\n"
                                              "o1,91.8,-,42.6\no3-high,93.3,88.4,48.6\n"})
    a = _ask("What is the HumanEval of o1?", FakeReader("42.6"))
    # refused, not "-" (the row's field) nor its neighbour's 42.6; with the real embedder
    # the reason names the empty cell: "the table's row for o1 gives no HumanEval ('-' in
    # evals.csv)"; the hashed test embedder finds no column near enough
    assert a.abstained and a.answer_text == "" and "row for o1" in (a.abstain_reason or "")
    b = _ask("What is the HumanEval of o3-high?", FakeReader("x"))
    assert b.answer_text == "88.4"


def test_the_sheet_the_question_names_holds_the_row(tmp_path: Path, fake_embedder: str) -> None:
    from openpyxl import Workbook

    book = Workbook()
    first = book.active
    first.title = "PROFILEDEF"
    for r in (["PROFIL", "a", "d"], ["P8.2", 100, 103], ["P8.3", 112, 115]):
        first.append(r)
    axes = book.create_sheet("AXISDEF")
    for r in (["PROFIL", "i", "d"], ["P8.2", 1, 100], ["P8.3", 2, 101]):
        axes.append(r)
    data = io.BytesIO()
    book.save(data)
    indexed(tmp_path / "book", {"profiles.xlsx": data.getvalue()})
    a = _ask("What is d for P8.3 in the AXISDEF sheet?", FakeReader("115"))
    assert a.answer_text == "101", a.answer


def test_of_two_documents_with_the_named_row_the_one_whose_column_answers(
        tmp_path: Path, fake_embedder: str) -> None:
    indexed(tmp_path / "statements", {
        "q1.csv": "Product,Mac net sales in the three months ended December 31 2022,"
                  "Mac net sales in the three months ended December 25 2021\n"
                  "Mac,7735,10852\niPad,9396,7248\n",
        "q4.csv": "Product,Three Months Ended September 30 2023,Three Months Ended September 24 "
                  "2022\nMac,7614,11508\niPad,6443,7174\n"})
    a = _ask("What were Mac net sales in the three months ended September 30 2023?",
             FakeReader("7735"))
    assert a.answer_text == "7614", a.answer


def test_a_count_of_things_comes_from_a_row_that_names_them() -> None:
    from ragctl.ask.cells import names_counted
    from ragctl.records import Sentence

    def row(text: str, place: str = "", path: str = "release.pdf") -> Sentence:
        return Sentence(id=1, passage_id=1, seq=0, path=path, title="", place=place,
                        start_char=0, end_char=len(text), text=text, raw=None)

    income = row("Total income from operations; Part of: Operating income (loss); Quarter "
                 "Ended June 30, 2025: 31,271; Quarter Ended June 30, 2026: 40,770")
    assert not names_counted("How many employees did Alphabet have?", income)
    # named by a cell, a header, its section or its file; prose and other questions pass
    assert names_counted("How many employees did Alphabet have?",
                         row("Item: Number of employees; Q1: 187,103; Q2: 190,167"))
    assert names_counted("How many members does Bergen have?",
                         row("Club: Bergen; Total: 412", place="Members by club"))
    assert names_counted("How many employees did Alphabet have?",
                         row("Alphabet had 190,167 employees."))
    assert names_counted("What was the income?", income)


def test_a_month_is_keyed_alike_however_written() -> None:
    assert {word_key(w) for w in ("October", "Oct", "Oct.", "oct")} == {"oct"}
    assert word_key("Sept") == word_key("September") == "sep"
    # a name or a word that starts like a month is not one
    assert word_key("Jane") == "jane" and word_key("mayor") == "mayor"
    assert word_key("marathon") == "marat" and word_key("clubs") == word_key("Club")


def test_a_code_the_question_writes_is_no_count_of_three_digits() -> None:
    assert written_code("DS1631Z+", "What is part number DS1631Z+?")
    assert written_code("12345678", "What is on invoice 12345678?")
    # "Option 2" writes no code "2" (a row's Nb of 2 is not the row asked about)
    assert not written_code("2", "What is the price under Option 2?")
