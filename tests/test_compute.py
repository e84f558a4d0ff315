"""Computed answers over a table: numbers as cells write them, each operation with its
working, the operation model, and answers through ``ask`` that show and cite the working."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from ragctl.ask.cells import Cell
from ragctl.ask.compute import (
    Condition,
    Table,
    TableRow,
    best_column,
    best_done,
    compared,
    comparisons,
    conditions,
    cued,
    execute,
    grouped,
    label_prefixes,
    number,
    one_leg,
    path_parts,
    quarter_ended,
    totals_apart,
    totals_row,
)
from ragctl.ask.pipeline import AskOptions, Pipeline
from ragctl.config import load_settings
from ragctl.index.indexer import Indexer
from ragctl.models.tableops import OPERATIONS, OperationModel
from ragctl.records import Answer, Sentence
from ragctl.store.collection import Collection
from ragctl.training.tableops import fit, matches, read_csv_text
from tests.fakes import FakeReader, HashEmbedder
from tests.test_cells import indexed

CLUBS = ("Club,Members,Founded,Town\nOslo Sailing Club,412,1921,Oslo\n"
         "Bergen Sailing Club,315,1921,Bergen\nTrondheim Yacht Club,280,1950,Trondheim\n")


def embed() -> HashEmbedder:
    return HashEmbedder("fake-hash", 64)


def test_numbers_as_cells_write_them() -> None:
    assert number("$1,998.00") == 1998 and number("(3)") == -3 and number("12%") == 12
    assert number("1.2 million") == 1.2e6 and number("−5") == -5 and number("7,169") == 7169
    for text in ("3–4", "12 of 20", "Did not qualify", ""):
        assert number(text) is None, text


def test_each_operation_shows_its_working() -> None:
    table = read_csv_text(CLUBS)
    e = embed().embed
    assert [c.value for c in conditions("How many more members does the Oslo Sailing Club "
                                        "have than the Bergen Sailing Club?", table)] == \
        ["Oslo Sailing Club", "Bergen Sailing Club"]
    diff = execute("difference", "How many more members does the Oslo Sailing Club have "
                   "than the Bergen Sailing Club?", table, e)
    assert diff is not None and diff.result == "97"
    assert diff.working == "= 412 − 315: Oslo Sailing Club 412, Bergen Sailing Club 315"
    count = execute("count", "How many clubs were founded in 1921?", table, e)
    assert count is not None and count.result == "2" and count.conditions
    most = execute("argmax", "Which club has the most members?", table, e)
    assert most is not None and most.result == "Oslo Sailing Club"
    total = execute("sum", "How many members do the clubs have in all?", table, e)
    assert total is not None and total.result == "1,007" and total.working.startswith("= 412")
    after = execute("next", "Which club comes after Bergen Sailing Club?", table, e)
    assert after is not None and after.result == "Trondheim Yacht Club"
    # nothing to compute: no number to add, no two rows named
    assert execute("sum", "What is the total of the towns?", read_csv_text(
        "Club,Town\nA,Oslo\nB,Bergen\n"), e) is None
    assert execute("difference", "How many more members than Oslo?", table, e) is None


RESULTS = ("Model,Year,Task,Score\nERNIE,2019,CoLA,61.1\nERNIE,2019,SST-2,95.0\n"
           "ERNIE,2020,CoLA,63.5\nBERT,2019,CoLA,60.5\nBERT,2018,SST-2,94.9\n")


def test_a_short_code_is_named_after_its_columns_name() -> None:
    table = read_csv_text("name,type,calories\nCorn Flakes,C,100\nMaypo,H,100\n"
                          "Quaker Oatmeal,H,100\nCheerios,C,110\n")
    assert [(c.column, c.value) for c in conditions(
        "How many of the cereals are hot cereals (type H)?", table)] == [("type", "H")]
    counted = execute("count", "How many of the cereals are hot cereals (type H)?", table,
                      embed().embed)
    assert counted is not None and counted.result == "2"
    # a lone letter the question writes elsewhere names nothing ("vitamin C")
    assert conditions("Which cereal has the most vitamin C?", table) == []


def test_conditions_across_columns_all_hold_and_within_one_any() -> None:
    table = read_csv_text(RESULTS)
    e = embed().embed
    count = execute("count", "How many ERNIE results from 2019 on CoLA are there?", table, e)
    assert count is not None and count.result == "1"
    assert count.working == "1 rows with Model ERNIE, Year 2019, Task CoLA"
    total = execute("sum", "What is the total score of BERT and ERNIE on SST-2?", table, e)
    assert total is not None and total.result == "189.9"
    assert [c.value for c in total.conditions] == ["BERT", "ERNIE", "SST-2"]
    best = execute("argmax", "Which model scored highest on CoLA in 2019?", table, e)
    assert best is not None and best.result == "ERNIE" and best.cells[0][1].value == "61.1"
    # a named value no row holds with the others is dropped, not a count of none
    some = execute("count", "How many results did ERNIE get in 2018?", table, e)
    assert some is not None and some.result == "3"


BIRTHS = ("year,month,day,births\n2007,1,1,9000\n2007,1,2,15200\n2008,2,29,11631\n"
          "2008,3,1,16000\n2009,9,9,15001\n")


def test_comparisons_of_a_column_with_a_number() -> None:
    table = read_csv_text(BIRTHS)
    e = embed().embed
    found, rest = comparisons("On how many days were more than 15,000 births recorded?",
                              table, e)
    assert [(c.column, c.op, c.value) for c in found] == [("births", ">", "15,000")]
    assert "15,000" not in rest
    count = execute("count", "On how many days were more than 15,000 births recorded?",
                    table, e)
    assert count is not None and count.result == "3"
    assert count.working == "3 rows with births > 15,000"
    assert execute("count", "How many days had 15,200 births or more?", table,
                   e).result == "2"  # type: ignore[union-attr]
    total = execute("sum", "How many births were there in 2007?", table, e)
    assert total is not None and total.result == "24,200"
    # a year is compared with years only; "no" is a count of zero
    assert comparisons("Which day after 2008 had fewer than 12,000 births?", table, e)[0] == [
        Condition("year", "2008", ">"), Condition("births", "12,000", "<")]
    assert comparisons("What came after 15,000 births?", table, e)[0] == []
    none = read_csv_text("airline,fatal_accidents\nA,0\nB,2\nC,0\n")
    zero = execute("count", "How many airlines had no fatal accidents?", none, e)
    assert zero is not None and zero.result == "2"


def test_two_columns_of_each_row_compared_choose_its_rows() -> None:
    table = read_csv_text("item,budget,spend,hours\nRent,500,520,1\nTravel,200,90,6\n"
                          "Printing,100,130,3\nPost,50,50,2\nTotal,850,790,12\n")
    e = embed().embed
    over = execute("count", "For how many items did the spending exceed the budget?", table, e)
    assert over is not None and over.result == "2"  # Rent, Printing; not the totals' row
    assert over.working == "2 rows with spend > budget"
    fewer = execute("count", "How many items had less spend than budget?", table, e)
    assert fewer is not None and fewer.result == "1"
    # an average over the rows chosen so
    assert execute("average", "What is the average spend of the items whose spend was "
                   "above their budget?", table, e).result == "325"  # type: ignore[union-attr]
    # a number is compared as before, and a difference asks for no rows to be chosen
    assert comparisons("How many items had spend above 100?", table, e,
                       versus=True)[0] == [Condition("spend", "100", ">")]
    assert comparisons("By how much did the spending exceed the budget?", table, e)[0] == []
    # a side that names no column compares nothing
    assert comparisons("How many items cost more than the Rent?", table, e,
                       versus=True)[0] == []


def test_counted_columns_are_added_and_grades_named_as_written() -> None:
    e = embed().embed
    births = read_csv_text(BIRTHS)
    total = execute("count", "What was the total number of births in 2007?", births, e)
    assert total is not None and total.operation == "sum" and total.result == "24,200"
    # one row: its cell is looked up, not counted; "days" are rows ("day" numbers them)
    assert execute("count", "How many births were there on 2008-02-29?", read_csv_text(
        "date,births\n2008-02-29,11631\n2008-03-01,16000\n"), e) is None
    assert execute("count", "On how many days were there 9000 births or fewer?", births,
                   e).result == "1"  # type: ignore[union-attr]
    counties = read_csv_text("name,total_population\nKeya Paha County,742\n"
                             "Holt County,10000\nBrown County,2900\n")
    assert execute("count", "How many people live in Keya Paha County?", counties, e) is None
    bonds = read_csv_text("SERIES,Issued,Redeemed\nSavings Notes,1000,900\nSeries EE,50,20\n")
    assert execute("count", "How many Savings Notes have been redeemed?", bonds, e) is None
    grades = read_csv_text("Pollster,Grade\nSelzer,A+\nSiena,A+\nYouGov,B\nRasmussen,A\n")
    count = execute("count", "How many pollsters have an A+ grade?", grades, e)
    assert count is not None and count.result == "2" and count.working == "2 rows with Grade A+"


def test_weak_labels_and_the_softmax() -> None:
    assert matches("97", ["97"]) and matches("1,007", ["1007"]) and not matches("96", ["97"])
    assert matches("Oslo", ["oslo"]) and not matches("Oslo", ["Oslo", "Bergen"])
    x = np.array([[1.0, 0.0], [0.0, 1.0]] * 20)
    y = np.array([[1.0, 0.0], [0.0, 1.0]] * 20)
    w, b = fit(x, y)
    model = OperationModel(w, b, ("lookup", "count"), "fake", 0.5)
    assert model.predict("how many?", np.array([0.0, 1.0]))[0] == "count"


class Always(OperationModel):
    """An operation model that always asks for one operation, surely."""

    def predict(self, question: str, vector: np.ndarray) -> tuple[str, float]:
        return self.operations[1], 0.99


@pytest.fixture
def clubs(tmp_path: Path, fake_embedder: str) -> Path:
    root = tmp_path / "clubs"
    root.mkdir()
    (root / "clubs.csv").write_text(CLUBS)
    (root / "towns.csv").write_text("Town,County\nOslo,Oslo\nBergen,Vestland\n")
    with Collection.open(load_settings(), create=True) as c:
        c.lock()
        Indexer(c).run([root])
    return root


def _always(op: str) -> OperationModel:
    return Always(np.zeros((1, 2), np.float32), np.zeros(2, np.float32), ("lookup", op),
                  "fake-hash", 0.5)


def test_a_computed_answer_shows_and_cites_its_working(clubs: Path) -> None:
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("412")) as p:
        p._tableops, p._tableops_loaded = _always("difference"), True
        a = p.ask("How many more members does the Oslo Sailing Club have than the Bergen "
                  "Sailing Club?", AskOptions(re_threshold=0.0))
    assert not a.abstained and a.kind == "computed" and a.raw_answer == "97"
    assert a.answer == "97 (= 412 − 315: Oslo Sailing Club 412, Bergen Sailing Club 315) [1] [2]"
    assert [(s.row, s.column) for s in a.sources] == [("Oslo Sailing Club", "Members"),
                                                      ("Bergen Sailing Club", "Members")]
    raw = (clubs / "clubs.csv").read_text()
    assert a.computation is not None and a.computation["operation"] == "difference"
    assert [x["value"] for x in a.computation["cells"]] == ["412", "315"]
    assert a.sources[0].path.endswith("clubs.csv") and raw  # cited to the sheet's rows


def test_a_computation_the_table_cannot_do_is_refused_not_answered_with_a_cell(
        clubs: Path) -> None:
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("412")) as p:
        p._tableops, p._tableops_loaded = _always("difference"), True
        a = p.ask("How many more members does the Oslo Sailing Club have?",
                  AskOptions(re_threshold=0.0, answer_threshold=0.0))
    assert a.abstained and "412" not in a.answer
    assert "cannot give it" in (a.abstain_reason or "")


def test_the_rows_flagged_as_the_question_asks_are_counted(tmp_path: Path,
                                                          fake_embedder: str) -> None:
    root = tmp_path / "releases"
    root.mkdir()
    rows = "\n".join(f"| {v}.0.0 | {'✅' if v > 36 else '🚫'} |" for v in range(40, 30, -1))
    (root / "timeline.md").write_text(
        "# Releases\n\nOur policy supports the latest 3 stable releases of Electron, "
        "as the release schedule of Electron explains.\n\n## Timeline\n\n"
        "| Electron | Supported |\n| --- | --- |\n" + rows + "\n")
    with Collection.open(load_settings(), create=True) as c:
        c.lock()
        Indexer(c).run([root])
    model = Lookup(np.zeros((1, 2), np.float32), np.zeros(2, np.float32), ("lookup", "count"),
                   "fake-hash", 0.5)
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("3")) as p:
        p._tableops, p._tableops_loaded = model, True
        a = p.ask("How many Electron versions are supported?",
                  AskOptions(re_threshold=0.0, top_k=1))
    assert a.kind == "computed" and a.raw_answer == "4", (a.answer, a.rules)


def test_the_shipped_operation_model_loads() -> None:
    from ragctl.models.manifest import bundled_models_dir

    directory = bundled_models_dir() / "minilm-tableops"
    if not (directory / "manifest.json").exists():
        pytest.skip("the operation model is not trained here")
    model = OperationModel.load(directory)
    assert model.operations == OPERATIONS
    assert model.weights.shape == (384 + model.hashed, len(OPERATIONS))
    assert 0.0 < model.threshold < 1.0


def test_a_count_is_of_what_the_question_names(clubs: Path) -> None:
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("412")) as p:
        p._tableops, p._tableops_loaded = _always("count"), True
        named = p.ask("How many clubs are there?", AskOptions(re_threshold=0.0))
        other = p.ask("How many records were returned?",
                      AskOptions(re_threshold=0.0, answer_threshold=0.0))
    assert named.kind == "computed" and named.raw_answer == "3"
    assert named.computation is not None and named.computation["column"] == "Club"
    # the table's rows are clubs, not records: no count of them is the answer
    assert other.kind != "computed" and "(3 rows)" not in other.answer


class Lookup(OperationModel):
    """An operation model that always leaves the question to the lookup."""

    def predict(self, question: str, vector: np.ndarray) -> tuple[str, float]:
        return "lookup", 0.9


def lookup_model() -> Lookup:
    return Lookup(np.zeros((1, 2), np.float32), np.zeros(2, np.float32), ("lookup", "count"),
                  "fake-hash", 0.5)


def asked_of_sheet(root: Path, csv: str, reads: str, *questions: str) -> list[Answer]:
    """``questions`` asked of a folder ``root`` that holds one sheet, ``csv``, indexed, with
    the operation model leaving every question to the lookup and a reader that reads
    ``reads``."""
    root.mkdir()
    (root / "sheet.csv").write_text(csv)
    with Collection.open(load_settings(), create=True) as c:
        c.lock()
        Indexer(c).run([root])
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader(reads)) as p:
        p._tableops, p._tableops_loaded = lookup_model(), True
        return [p.ask(q, AskOptions(re_threshold=0.0)) for q in questions]


def test_a_column_whose_words_the_question_says_and_a_sum_over_every_row(
        tmp_path: Path, fake_embedder: str) -> None:
    most, total, plain = asked_of_sheet(
        tmp_path / "league",
        "Team,Record,Runs,Runs Given,HRs\nBulkheads,9-3,80,43,15\nExcitables,9-3,89,34,17\n"
        "Dogfish,2-10,30,84,3\n", "9-3",
        # Runs, all of whose words the question says, not Runs Given
        "Which team scored the most runs?",
        # "all three teams": a sum over every row, of HRs spelled out as "home runs"
        "What is the combined number of home runs hit by all three teams?",
        # no word that makes it one over every row: a sum is no answer without a comparison
        "What is the number of home runs?")
    assert most.kind == "computed" and most.raw_answer == "Excitables", most.answer
    assert total.kind == "computed" and total.raw_answer == "35", total.answer
    assert plain.kind != "computed"


def test_growth_from_one_quarter_to_another_of_one_row(tmp_path: Path,
                                                        fake_embedder: str) -> None:
    # the quarters as written ("Q4 FY24"), and a third whose words the question holds too
    (grew,) = asked_of_sheet(
        tmp_path / "revenue", "Market,Q1 FY25,Q4 FY24,Q1 FY24\n"
        "Data Center,22563,18404,4284\nGaming,2647,2865,2240\n", "4284",
        "How much did Data Center revenue grow from Q4 FY24 to Q1 FY25?")
    assert grew.kind == "computed" and grew.raw_answer == "4,159", grew.answer


def test_the_question_form_asks_when_the_model_says_lookup(clubs: Path) -> None:
    model = lookup_model()
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("412")) as p:
        p._tableops, p._tableops_loaded = model, True
        most = p.ask("Which club has the most members?", AskOptions(re_threshold=0.0))
        count = p.ask("How many clubs have more than 300 members?", AskOptions(re_threshold=0.0))
        plain = p.ask("How many clubs were founded in 1921?", AskOptions(re_threshold=0.0))
        off = p.ask("Which club has the most members?", AskOptions(
            re_threshold=0.0, rules_off=frozenset({"operation_cue"})))
        # a row the question names answers first: its cell, not a count
        cell = p.ask("How many members does the Bergen Sailing Club have?",
                     AskOptions(re_threshold=0.0))
        # the row after the one named, not the named row's own cell
        after = p.ask("Which club is listed right after the Oslo Sailing Club?",
                      AskOptions(re_threshold=0.0))
        # another column named too ("the members list"): the named row's own column answers
        listed = p.ask("In the members list, which club is listed right after the Oslo "
                       "Sailing Club?", AskOptions(re_threshold=0.0))
        # a count with a comparison, though the question names a row's words
        over = p.ask("How many clubs in Oslo have more than 300 members?",
                     AskOptions(re_threshold=0.0))
        # which row has the most, though the question names a row's words
        which = p.ask("Which club founded in 1921 has the most members?",
                      AskOptions(re_threshold=0.0))
    assert cell.kind != "computed" and cell.raw_answer == "315"
    assert after.kind == "computed" and after.raw_answer == "Bergen Sailing Club", after.answer
    assert listed.kind == "computed" and listed.raw_answer == "Bergen Sailing Club", listed.answer
    assert which.kind == "computed" and which.raw_answer == "Oslo Sailing Club", which.answer
    assert over.kind == "computed" and over.raw_answer == "1", over.answer
    assert most.kind == "computed" and most.raw_answer == "Oslo Sailing Club"
    assert count.kind == "computed" and count.raw_answer == "2"
    assert off.kind != "computed"
    # a count or a sum the lookup left without a comparison is not the cue's to make
    assert plain.kind != "computed"
    # "what is the highest …" asks the value, not which row holds it
    assert cued("What is the highest 2023 turnout?") == ["max"]
    assert cued("What is the minimum boiling point of halogens?") == ["min"]
    assert cued("What county had the highest 2023 turnout?") == ["argmax"]
    assert cued("Who came after Ana Ruiz?") == []  # in time, perhaps: not the next row
    assert cued("Which session came right after 'Intro Git'?") == ["next"]
    assert cued("What was the single largest expense recorded?") == ["max"]


def test_a_question_naming_another_sheet_is_about_that_sheets_table(
        tmp_path: Path, fake_embedder: str) -> None:
    from openpyxl import Workbook

    book = Workbook()
    for month, payments in (("January", ["Cash", "Ewallet"]),
                            ("March", ["Ewallet", "Ewallet", "Cash"])):
        sheet = book.create_sheet(month)
        sheet.append(["Invoice", "Payment", "Total"])
        for i, pay in enumerate(payments):
            sheet.append([f"{month[:3]}-{i}", pay, 10 * (i + 1)])
    del book["Sheet"]
    data = io.BytesIO()
    book.save(data)
    indexed(tmp_path / "sales", {"sales.xlsx": data.getvalue()})
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("1")) as p:
        p._tableops, p._tableops_loaded = _always("count"), True
        a = p.ask("How many Ewallet payments were there in March?", AskOptions(re_threshold=0.0))
    assert a.kind == "computed" and a.raw_answer == "2"
    assert all(s.place == "March" for s in a.sources)


def test_a_rank_is_never_added_up_and_flags_are_conditions() -> None:
    e = embed().embed
    ranked = read_csv_text("Rank,Pollster,Polls,Banned\n1,Siena,95,no\n2,Selzer,53,no\n"
                           "3,Rasmussen,200,yes\n3,Trafalgar,40,yes\n5,YouGov,80,no\n")
    assert ranked.ordinal("Rank") and not ranked.ordinal("Polls")
    # "how many pollsters": the rows, not the rank column added up
    banned = execute("count", "How many pollsters are banned?", ranked, e)
    assert banned is not None and banned.result == "2"
    assert banned.working == "2 rows with Banned yes"
    kept = execute("count", "How many pollsters are not banned?", ranked, e)
    assert kept is not None and kept.result == "3"
    ranks = execute("sum", "What is the sum of the ranks?", ranked, e)
    assert ranks is None or ranks.column != "Rank"
    flag = compared("Is Selzer banned?", ranked, e)
    assert flag is not None and flag.result == "No" and flag.cells[0][1].value == "no"
    assert compared("Is Trafalgar banned?", ranked, e).result == "Yes"  # type: ignore[union-attr]
    # "which pollster has the most polls": the rank under the merged "Pollster" header
    # is no measure, and the unheaded names answer
    merged = read_csv_text("Pollster,,Pollster Rating ID,Polls,Grade\n1,Siena,448,95,A+\n"
                           "2,Selzer,304,53,A+\n3,SurveyUSA,325,856,A\n")
    most = execute("argmax", "Which pollster has the most polls?", merged, e)
    assert most is not None and most.result == "SurveyUSA" and most.column == "Polls"
    items = read_csv_text("Vendor,Part Name,List Price\nAcme,Gasket,17\nAcme,Microscope,1699\n"
                          "Bolt Co,Bolt,2\n")
    dearest = execute("argmax", "What is the most expensive single item by list price?",
                      items, e)
    assert dearest is not None and dearest.result == "Microscope"
    # flags drawn as marks, a cell that holds nothing ("--"), versions that are no numbers
    releases = read_csv_text("Electron,Alpha,Supported\n40.0.0,2025-Oct-30,✅\n"
                             "39.0.0,2025-Sep-04,✅\n14.0.0,--,🚫\n13.0.0,--,🚫\n12.0.0,,🚫\n")
    supported = execute("count", "How many Electron versions are supported?", releases, e)
    assert supported is not None and supported.result == "2"
    early = execute("count", "How many Electron versions have no alpha date?", releases, e)
    assert early is not None and early.result == "3" and early.working == "3 rows with no Alpha"
    assert number("40.0.0") is None and number("12.") == 12
    # a column of counts that starts at one is no rank
    counts = read_csv_text("Team,Wins\nA,1\nB,1\nC,2\nD,2\nE,3\n")
    assert not counts.ordinal("Wins")


def test_a_difference_of_two_rows_or_of_two_columns_of_one_row() -> None:
    e = embed().embed
    statement = read_csv_text('Item,2021,2020\nLicensing fees,"$19,984,378","$10,230,316"\n'
                              'Total revenue,"19,984,378","10,230,316"\n')
    q = "By how much did licensing-fee revenue grow from 2020 to 2021?"
    assert "difference" in cued(q)
    grew = execute("difference", q, statement, e)
    assert grew is not None and grew.result == "$9,754,062"  # in their currency
    assert [c.column for _, c in grew.cells] == ["2021", "2020"]
    assert "difference" in cued("What was the change in net income from 2020 to 2021?")
    assert "difference" in cued("How many more members does Oslo have than Bergen?")
    clubs = read_csv_text(CLUBS)
    more = execute("difference", "How many more members does the Oslo Sailing Club have "
                   "than the Bergen Sailing Club?", clubs, e)
    assert more is not None and more.result == "97"
    # one column named, or no row: no difference
    assert execute("difference", "By how much did fees grow in 2021?", statement, e) is None


def test_a_sign_is_a_comparison_and_a_leading_phrase_is_no_form() -> None:
    e = embed().embed
    growth = read_csv_text("Country,Population Growth 2050\nUSA,-0.06%\nEgypt,1.32%\n"
                           "Italy,-1.33%\n")
    q = "In the Lesson 1 table, how many countries have a negative population growth for 2050?"
    assert cued(q)[0] == "count"
    done = execute("count", q, growth, e)
    assert done is not None and done.result == "2"
    assert done.working == "2 rows with Population Growth 2050 < 0"


def test_yes_or_no_from_a_tables_cells() -> None:
    e = embed().embed
    births = read_csv_text(BIRTHS)
    more = compared("Were there more births in 2008 than in 2007?", births, e)
    assert more is not None and more.result == "Yes"
    assert more.working == "2008 27,631 > 2007 24,200: births"
    fewer = compared("Were there fewer births in 2008 than in 2007?", births, e)
    assert fewer is not None and fewer.result == "No"
    jobs = read_csv_text("Job Category,Percentage Male\nPharmacists,47.9\nElectricians,98.2\n")
    half = compared("Are more than half of pharmacists men?", jobs, e)
    assert half is not None and half.result == "No" and half.cells[0][1].value == "47.9"
    crashes = read_csv_text("airline,fatal_accidents\nKenya Airways,0\nQantas,2\n")
    assert compared("Did Qantas have any fatal accidents?", crashes, e).result == "Yes"  # type: ignore[union-attr]
    # nothing to compare: no row named, or no number
    assert compared("Are more than half of nurses men?", jobs, e) is None
    assert compared("Is Qantas an airline?", crashes, e) is None


def test_a_yes_no_question_over_a_table_is_answered_from_its_cells(clubs: Path) -> None:
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("412")) as p:
        a = p.ask("Does the Oslo Sailing Club have more members than the Bergen Sailing Club?",
                  AskOptions(re_threshold=0.0))
    assert a.kind == "yes-no" and a.raw_answer == "Yes" and a.answer.startswith("Yes (")
    assert [s.row for s in a.sources] == ["Oslo Sailing Club", "Bergen Sailing Club"]


def test_one_of_two_rows_by_the_column_asked_of() -> None:
    from ragctl.ask.compute import chosen

    e = embed().embed
    counties = read_csv_text("County,Population,Rank\nAlamance County,151131,10\n"
                             "Alexander County,37198,60\nAnson County,26948,70\n")
    bigger = chosen("Which county has a higher population, Alamance or Alexander?",
                    ("alamance", "alexander"), counties, e)
    assert bigger is not None and bigger.result == "Alamance County"
    assert bigger.working == "Population: Alamance County 151131, Alexander County 37198"
    # a higher rank is a smaller number
    ranked = chosen("Which county ranks higher, Anson or Alexander?", ("anson", "alexander"),
                    counties, e)
    assert ranked is not None and ranked.result == "Alexander County"
    # an option no row names, or no direction asked: the table does not say
    assert chosen("Which county is bigger, Alamance or Wake?", ("alamance", "wake"),
                  counties, e) is None
    assert chosen("Which county, Alamance or Anson?", ("alamance", "anson"), counties, e) is None


def test_a_year_the_table_lacks_and_the_table_the_question_names() -> None:
    from ragctl.ask.compute import best_done

    e = embed().embed
    births = read_csv_text(BIRTHS)
    assert execute("sum", "How many births were there in 2015?", births, e) is None
    crashes = read_csv_text("airline,fatal_accidents_85_99,fatal_accidents_00_14\n"
                            "Kenya Airways,0,2\nQantas,0,0\nAeroflot,14,1\n")
    # both tables can count; the one whose headers the question names is chosen
    q = "How many airlines had no fatal accidents between 2000 and 2014?"

    def alike(texts: list[str]) -> np.ndarray:  # every header equally near: words decide
        return np.full((len(texts), 4), 0.5)

    done = best_done(q, "count", [births, crashes], alike)
    assert done is not None and done.result == "1"
    assert done.conditions[0].column == "fatal_accidents_00_14"
    # a comparison is of the table whose headers the question names
    polls = read_csv_text("Pollster,# of Polls\nA,60\nB,10\nC,70\n")
    turnout = read_csv_text("County,2023 turnout\nA,55%\nB,40%\nC,51%\nD,20%\n")
    q = "In how many counties was 2023 turnout above 50%?"
    done = best_done(q, "count", [polls, turnout], e)
    assert done is not None and done.result == "2" and done.working.startswith("2 rows with 2023")


def test_a_percentage_change_a_rank_and_a_year_of_dates() -> None:
    e = embed().embed
    gold = read_csv_text("Year,Average Price\n2011,1571.52\n2012,1668.98\n2013,1411.23\n"
                         "2014,1266.40\n2015,1160.60\n")
    asked = cued("What was the percentage change in the average gold price from 2012 to 2015?")
    assert "percent_change" in asked and "difference" not in asked
    change = execute("percent_change", "What was the percentage change in the average gold "
                     "price from 2012 to 2015?", gold, e)
    assert change is not None and change.result == "-30.46%"
    assert change.working == "= (1160.60 − 1668.98) / 1668.98: 2012 Average Price 1668.98, " \
        "2015 Average Price 1160.60"
    # the second in order, not the first
    second = execute("argmax", "Which year had the second-highest average price?", gold, e)
    assert second is not None and second.result == "2011"
    assert second.working.startswith("the second most Average Price: 1571.52")
    # a difference asked with its unit between "how many" and "higher"
    assert "difference" in cued("How many points higher is o3's GPQA score than gpt-4o's?")
    # "in 2017" of a column of dates: the rows of that year
    log = read_csv_text("Date,Session,Attendance\n2017-09-14,Intro R,37\n"
                        "2017-10-05,Intro Git,12\n2017-11-02,Pandas,18\n2018-01-11,SQL,25\n")
    count = execute("count", "How many sessions in 2017 had 15 or more attendees?", log, e)
    assert count is not None and count.result == "2", count
    assert "Date in 2017" in count.working


def test_a_row_of_totals_is_no_item_and_a_share_is_of_the_total() -> None:
    e = embed().embed
    costs = read_csv_text("Item,Year 1,Total\nOffice 365 E5,192000,1152000\n"
                          "AD Premium P1,31200,187200\nBarracuda Essentials,36000,216000\n"
                          "Total,259200,1555200\n")
    most = execute("argmax", "Which line item has the largest total?", costs, e)
    assert most is not None and most.result == "Office 365 E5"
    count = execute("count", "How many line items are there?", costs, e)
    assert count is not None and count.result == "3"
    assert cued("What percentage of the grand total is the Office 365 E5 line?") == ["share"]
    assert cued("What percentage of librarians are men?") == []  # a cell, of no total
    assert not totals_row(TableRow((Cell("Airline", "All Nippon Airways", 0, 0),)))
    share = execute("share", "What percentage of the grand total is the Office 365 E5 line?",
                    costs, e)
    assert share is not None and share.result == "74.07%"
    assert share.working == "= 1152000 / 1555200: Office 365 E5 Total"
    # without a row of totals: of the rows' sum
    plain = read_csv_text("Item,Total\nA,30\nB,10\n")
    assert (execute("share", "What share of the total is A?", plain, e) or share).result \
        == "75%"


def test_a_column_marked_in_some_rows_is_a_flag() -> None:
    e = embed().embed
    m49 = read_csv_text("Region Name,Country or Area,Least Developed Countries (LDC)\n"
                        "Asia,Nepal,x\nAsia,Japan,\nAsia,Yemen,x\nEurope,Germany,\n")
    count = execute("count", "How many countries in Asia are Least Developed Countries "
                    "(LDC)?", m49, e)
    assert count is not None and count.result == "2", count
    other = execute("count", "How many countries in Asia are not Least Developed Countries "
                    "(LDC)?",
                    m49, e)
    assert other is not None and other.result == "1", other


def test_the_first_row_past_a_threshold() -> None:
    e = embed().embed
    glaciers = read_csv_text("Year,Mean cumulative mass balance,Number of observations\n"
                             "1993,-9.2,38\n1994,-9.8,39\n1995,-10.4,39\n1996,-10.6,40\n")
    q = "In which year did the mean cumulative mass balance first fall below -10?"
    assert cued(q)[0] == "first"
    first = execute("first", q, glaciers, e)
    assert first is not None and first.result == "1995", first


def test_blank_marks_leave_a_column_numeric_and_a_section_is_named_by_its_heading() -> None:
    from ragctl.ask.compute import named_place

    e = embed().embed
    courses = read_csv_text("Courses,Duration,Effort\nAlgorithms I,6 weeks,6-12 hours/week\n"
                            "Data Structures,25 weeks,3-10 hours/week\nThinking 1,-,-\n"
                            "Thinking 2,-,-\nMechanics,-,-\n")
    longest = execute("argmax", "Which course has the longest duration?", courses, e)
    assert longest is not None and longest.result == "Data Structures"
    places = {"Great Courses", "Great Courses > Math", "Great Courses > Theory"}
    assert named_place("Which course in the Theory section has the longest duration?",
                       places) == "Great Courses > Theory"
    assert named_place("Which course has the longest duration?", places) is None


def test_which_value_the_most_rows_hold() -> None:
    e = embed().embed
    proposals = read_csv_text("Proposal,Author,Expected Publication Year\nA,Ana,2025\n"
                              "B,Bo,2025\nC,Cy,2026\nD,Di,2025\nE,Ed,2027\n")
    most = execute("argmax", "Which expected publication year has the most proposals?",
                   proposals, e)
    assert most is not None and most.result == "2025", most
    assert most.working == "3 of 5 rows, the most"
    # a column of numbers the superlative names is compared, not counted
    assert execute("argmax", "Which club has the most members?", read_csv_text(CLUBS),
                   e).result == "Oslo Sailing Club"  # type: ignore[union-attr]


def test_a_column_of_identifiers_is_never_compared() -> None:
    e = embed().embed
    polls = read_csv_text("Pollster Rating ID,Pollster,# of Polls\n758,Thomas Partners,3\n"
                          "325,SurveyUSA,856\n12,Siena College,210\n")
    most = execute("argmax", "Which pollster has the most polls?", polls, e)
    assert most is not None and most.result == "SurveyUSA", most
    assert best_column(e, "Which pollster rating is the highest?", polls, numeric=True) == \
        "# of Polls"


def test_a_comparison_alone_ties_no_count_to_a_table_the_question_never_names() -> None:
    from ragctl.ask.compute import tied

    e = embed().embed
    axes = read_csv_text("PROFIL,i,d\nP8.2,1,100\nP8.3,2,101\nP8.4,3,6000\n")
    q = "How many comuni have more than 5,000 voters?"
    done = execute("count", q, axes, e)
    assert done is not None and not tied(q, done, axes)  # computed, but on no named column
    clubs = read_csv_text(CLUBS)
    q = "How many clubs have more than 300 members?"
    done = execute("count", q, clubs, e)
    assert done is not None and tied(q, done, clubs)


def test_a_count_or_a_sum_over_the_rows_that_share_a_named_value(
        tmp_path: Path, fake_embedder: str) -> None:
    from ragctl.ask.compute import Table, execute, grouped, in_currency

    # a result in the currency and with the cents its amounts are written with
    assert in_currency("263.1", ["£480.00", "£216.90"]) == "£263.10"
    assert in_currency("12", ["$5", "7"]) == "12"  # one without a sign: none

    # the rows that share a word the question names: counted, though nothing compares
    card = Table.of([(t, None) for t in (
        "Date Processed: Pending; Description: L'OLILO; Amount: £67.40",
        "Date Processed: Pending; Description: NOWTV.COM; Amount: £8.99",
        "Date Processed: 12-Dec-2019; Description: DELIVEROO; Amount: £18.89")])
    q = "How many transactions were still pending?"
    done = execute("count", q, card, embed())
    assert done is not None and done.result == "2" and grouped("count", done, q)
    # what the named value does that no column says ("did … win") is no such count
    q = "How many transactions did Pending win?"
    done = execute("count", q, card, embed())
    assert done is not None and not grouped("count", done, q)
    pending, day, year, times = asked_of_sheet(
        tmp_path / "card",
        "Date Processed,Description,Amount\nPending,L'OLILO LONDON,£67.40\n"
        "Pending,NOWTV.COM,£8.99\n12-Dec-2019,ROYAL LONDON INSURANCE,\"£1,183.23\"\n"
        "12-Dec-2019,DELIVEROO,£18.89\n03-Dec-2019,SPACE NK,£50.00\n", "no such span",
        # the rows that share a word the question names: counted, though nothing compares
        "How many transactions were still pending?",
        # the rows of the day it names, however the sheet writes it: added up, in pounds
        "What was the total of the transactions processed on 12 December 2019?",
        # a year or a number shared is no group to count ("people died in droughts in 1930"
        # of a table a disaster a row): not counted
        "How many transactions were processed in 2019?",
        # "how many times more": the ratio of two rows' values, not their difference
        "How many times more was the Deliveroo amount than the Nowtv.com amount?")
    assert pending.kind != "computed" or pending.raw_answer == "2", pending.answer
    assert day.kind == "computed" and day.raw_answer == "£1,202.12", day.answer
    assert year.kind != "computed", year.answer
    assert times.kind == "computed" and times.raw_answer == "2.1 times", times.answer
    assert "£18.89 ÷ £8.99" in times.answer


def test_which_thing_the_table_names_nowhere_gets_no_row(tmp_path: Path,
                                                         fake_embedder: str) -> None:
    player, team = asked_of_sheet(
        tmp_path / "standings", "Team,Record,HRs\nBulkheads,9-3,15\nExcitables,9-3,17\n"
        "Dogfish,2-10,3\n", "no such span",
        # a table of teams: no player is among its headers, cells or names
        "Which individual player hit the most HRs?",
        "Which team hit the most HRs?")
    assert player.kind != "computed" and "Excitables" not in player.answer, player.answer
    assert team.kind == "computed" and team.raw_answer == "Excitables", team.answer


def test_how_many_of_the_things_a_tables_first_header_names(tmp_path: Path,
                                                             fake_embedder: str) -> None:
    grants, largest = asked_of_sheet(
        tmp_path / "budget",
        "Other expected expenses,Raw amount,Currency,Euros\nTransaction fees,5000,EUR,5000\n"
        "Release trailer,1500,EUR,1500\nGrants - Funded but unpaid,Raw amount,Currency,Euros\n"
        "Improve docs,8000,EUR,8000\nCI research,500,USD,430\nLens platform,12250,USD,10535\n"
        ",,,18965\n", "no such span",
        # the rows of the table whose first column is headed by the grants, not those of
        # the expenses above it (the same other headers), nor its subtotal without a label
        "How many grants are listed as funded but unpaid?",
        # the largest grant, not the subtotal under the figures without a label
        "Which of the funded but unpaid grants is the largest in Euros?")
    assert grants.kind == "computed" and grants.raw_answer == "3", grants.answer
    assert largest.kind == "computed" and largest.raw_answer == "Lens platform", largest.answer


def test_a_cell_named_in_another_order_or_run_together() -> None:
    from ragctl.ask.compute import Table, conditions

    t = Table.of([(f"Outgoings Description: {d}; Outgoings Amount: {a}", None) for d, a in (
        ("Lunch (MC Donald's)", "£216.90"), ("Dinner (Dominos)", "£480.00"),
        ("Aldi", "£76.44"))])
    q = "How much more was spent on the Domino's dinner than on the McDonald's lunch?"
    assert [c.value for c in conditions(q, t)] == ["Dinner (Dominos)", "Lunch (MC Donald's)"]
    # a word inside another ("mcdonaldsland") names nothing
    assert conditions("How much was spent at McDonaldsland lunch?", t) == []


def test_which_group_has_the_largest_total_of_a_table_over_several_pages() -> None:
    from ragctl.ask.compute import page_headers, pages_on
    from ragctl.records import Sentence

    def row(label: str, part: str, budget: str) -> str:
        return (f"{label}; Part of: {part}; " if part else f"{label}; ") + \
            f"Fiscal Year 2021 Actual: 1; Fiscal Year 2023 Adopted Budget: {budget}"

    lines = [("p. 1", row("Personal Services", "Police", "753,577,996")),
             ("p. 1", row("Total", "Police", "788,044,264")),
             ("p. 2", row("Personal Services", "Fire", "350,000,000")),
             ("p. 2", row("Total", "Fire", "380,890,162")),
             ("p. 3", row("Total, General Fund", "", "5,842,480,000")),
             ("p. 4", "Name: Smith; Role: clerk")]
    sentences = [Sentence(id=i, passage_id=1, path="FY23.pdf", text=t, place=p)
                 for i, (p, t) in enumerate(lines)]
    # the pages that go on with rows under the same headers, not the page of another table
    headers = page_headers(sentences)
    assert pages_on("p. 2", headers) == {"p. 1", "p. 2", "p. 3"}
    assert pages_on("Sheet1", headers) == {"Sheet1"}
    table = Table.of([(t, None) for _, t in lines[:5]])
    most = execute("argmax", "Which department has the largest FY2023 adopted budget total?",
                   table, embed().embed)
    # the departments are the groups: the largest total of one, not the grand total's row
    assert most is not None and most.result == "Police"


def test_decimal_commas_and_a_threshold_named_by_what_it_is() -> None:
    assert number("6,3") == 6.3 and number("100,00") == 100 and number("6,3%") == 6.3
    assert number("1,234") == 1234 and number("12,345,678") == 12345678
    table = Table.of([(f"Group: {g}; Part of: {p}; % change May 2023 vs. Apr 2023: {m}; "
                       f"% change May 2023 vs. May 2022: {y}", None) for g, p, m, y in (
        ("All items", "", "0,2", "6,3"), ("Western Cape", "CPI per province", "0,2", "6,6"),
        ("Free State", "CPI per province", "0,1", "7,8"),
        ("Gauteng", "CPI per province", "0,2", "5,9"), ("1", "CPI per decile", "0,4", "9,9"),
        ("2", "CPI per decile", "0,3", "9,4"), ("10", "CPI per decile", "0,2", "5,9"))])
    e = embed().embed
    found, _ = comparisons("How many of the deciles had annual inflation above the headline "
                           "rate of 6,3%?", table, e)
    # "annual": the column of a month against the same month a year before
    assert [(c.column, c.op, c.value) for c in found] == [
        ("% change May 2023 vs. May 2022", ">", "6,3%")]
    # "which province", "how many of the deciles": the rows of the group that names them
    most = execute("argmax", "Which province had the highest annual inflation?", table, e)
    assert most is not None and most.result == "Free State"
    count = execute("count", "How many of the deciles had annual inflation above the "
                    "headline rate of 6,3%?", table, e)
    assert count is not None and count.result == "2"
    # a column of notes, each its own, is no group: "how many aerial tramways" counts all
    trams = Table.of([(f"Tramway: {n}; Year: {y}; Notes: {note}", None) for n, y, note in (
        ("Peak 2 Peak", "2008", "3S Aerial Tramway by Doppelmayr"), ("Vanoise", "2003", ""),
        ("Titlis", "1979", "Temporary aerial tramway"), ("Sandia", "1966", ""))])
    after = execute("count", "How many aerial tramways were inaugurated after 1970?", trams, e)
    assert after is not None and after.result == "3"


def test_the_difference_of_two_periods_rows_named_alike() -> None:
    # a statement with the rows of each year under a line naming it (as the PDF reader
    # labels them): "the total … from 2020 to 2022" is the Total row of each
    table = Table.of([(f"{label} (Year Ended December 31, {year}); Total: {total}; "
                       f"Charge-offs: {off}", None) for label, year, total, off in (
        ("Commercial", 2022, "397", "—"), ("Trial modifications", 2022, "228", "—"),
        ("Total", 2022, "2,883", "23"), ("Commercial", 2020, "3,042", "162"),
        ("Auto", 2020, "176", "93"), ("Trial modifications", 2020, "3", "—"),
        ("Total", 2020, "8,582", "268"))])
    e = embed().embed
    diff = execute("difference", "By how much did the total of the TDR modifications fall "
                   "from 2020 to 2022?", table, e)
    assert diff is not None and diff.result == "5,699"
    assert "Total (Year Ended December 31, 2020) 8,582" in diff.working
    # a period in brackets after "Total" is still a row of totals
    assert totals_row(table.rows[2]) and not totals_row(table.rows[0])
    most = execute("argmax", "What had the largest charge-offs in 2020?", table, e)
    assert most is not None and most.result.startswith("Commercial")


def test_a_sum_over_a_named_group_comes_before_any_one_cell(tmp_path: Path,
                                                             fake_embedder: str) -> None:
    # the reader (and the lookup) would give one project's capacity; "the combined … of
    # the planned projects" adds up the rows whose Status is Planned
    (combined,) = asked_of_sheet(
        tmp_path / "projects", "Status,Project,Capacity (tons/year)\n"
        "In production,Ejin Horo,500\nIn production,Ordos,10000\nPlanned,Envision,320000\n"
        "Planned,Ulanqab,100000\n", "500",
        "What is the combined capacity of the planned projects?")
    assert combined.kind == "computed" and combined.raw_answer == "420,000", combined.answer


def test_a_result_keeps_the_scale_and_currency_its_values_share() -> None:
    from ragctl.ask.compute import in_currency

    assert in_currency("41", ["$1,001M", "$960M"]) == "$41M"
    assert in_currency("-3", ["€5bn", "€8bn"]) == "−€3bn"
    assert in_currency("5", ["10", "5"]) == "5"
    assert in_currency("5", ["$10M", "$5"]) == "$5"  # scales that disagree: none


def test_one_rows_two_periods_by_the_statements_words_for_them() -> None:
    # "fiscal 2023" is the twelve months ended in 2023; "Services" of net sales, not of
    # cost of sales (its section, "Part of")
    cols = ("Three Months Ended September 30, 2023", "Three Months Ended September 24, 2022",
            "Twelve Months Ended September 30, 2023", "Twelve Months Ended September 24, 2022")
    rows = (("iPhone", "Net sales", "43,805", "42,626", "200,583", "205,489"),
            ("Services", "Net sales", "22,314", "19,188", "85,200", "78,129"),
            ("Services", "Cost of sales", "6,485", "5,664", "24,855", "22,075"))
    table = Table.of([(f"{label}; Part of: {part}; " + "; ".join(
        f"{c}: {v}" for c, v in zip(cols, vals, strict=True)), None)
        for label, part, *vals in rows])
    e = embed().embed
    change = execute("difference", "By how much did Services net sales change from fiscal "
                     "2022 to fiscal 2023?", table, e)
    assert change is not None and change.result == "7,071", change
    cost = execute("difference", "By how much did the cost of sales for services change "
                   "from fiscal 2022 to fiscal 2023?", table, e)
    assert cost is not None and cost.result == "2,780", cost
    average = execute("average", "What was the average iPhone net sales in fiscal 2023 and "
                      "fiscal 2022?", table, e)
    assert average is not None and average.result == "203,036", average
    grew = execute("percent_change", "What was the percentage change in iPhone net sales "
                   "from fiscal 2022 to fiscal 2023?", table, e)
    assert grew is not None and grew.result == "-2.39%", grew
    segments = Table.of([(f"{label}; Part of: {part}; Twelve Months Ended September 30, 2023: "
                          f"{v}", None) for label, part, v in (
        ("Products", "Net sales", "298,085"), ("Services", "Net sales", "85,200"),
        ("Americas", "Net sales by reportable segment", "162,560"),
        ("Europe", "Net sales by reportable segment", "94,294"),
        ("Japan", "Net sales by reportable segment", "24,257"))])
    most = execute("argmax", "Which of Apple's reportable segments had the largest net "
                   "sales in fiscal 2023?", segments, e)
    assert most is not None and most.result == "Americas", most


def test_the_largest_along_a_named_row_of_a_table_whose_columns_are_the_people() -> None:
    table = read_csv_text("Discipline,Amanda,Bernie,Javine H,Julia\nHurdles,3,1,6,5\n"
                          "Cycling,4,2,4,6\nTotal,19,16,45,36\n")
    e = embed().embed
    most = execute("argmax", "Who earned the most total points?", table, e)
    assert most is not None and most.result == "Javine H"
    assert most.working == "the most Total: 45 of 4"
    least = execute("argmin", "Who did worst at cycling?", table, e)
    assert least is not None and least.result == "Bernie"
    # a column the question names: the usual argmax down it
    down = execute("argmax", "Which discipline gave Julia the most points?", table, e)
    assert down is not None and down.result == "Cycling"


def test_a_sum_of_named_rows_and_the_totals_of_two_periods_groups() -> None:
    assert cued("What were Alphabet's combined research and development and sales and "
                "marketing expenses in Q2 2026?") == ["sum"]
    cols = ("March 31, 2026 Group", "March 31, 2026 Affiliates", "March 31, 2026 Total",
            "March 31, 2025 Group", "March 31, 2025 Affiliates", "March 31, 2025 Total")
    table = Table.of([(f"{label}; " + "; ".join(f"{c}: {v}" for c, v in zip(
        cols, vals, strict=True)), None) for label, *vals in (
        ("Other revenue", "466,075", "114,461", "529,784", "343,866", "78,882", "401,660"),
        ("Investment income", "11,436", "5,075", "16,511", "30,973", "5,684", "36,657"))])
    change = execute("percent_change", "By what percentage did investment income change in "
                     "Q1 2026 compared with Q1 2025?", table, embed().embed)
    assert change is not None and change.result == "-54.96%", change


def test_a_first_crossing_is_of_the_comparison_it_states() -> None:
    table = read_csv_text("year,tuition\n1969,358\n2003,4587\n2004,5027\n2005,5351\n")
    e = embed().embed
    found, _ = comparisons("In which year did tuition first exceed 5,000?", table, e)
    assert [(c.column, c.op, c.value) for c in found] == [("tuition", ">", "5,000")]
    first = execute("first", "In which year did tuition first exceed 5,000?", table, e)
    assert first is not None and first.result == "2004"


def test_a_change_between_two_dates_of_a_statement_with_a_third_of_the_same_year() -> None:
    # a balance sheet beside a quarter's statement: "March 31, 2025" holds the question's
    # words too ("2025" of December 31, 2025), but not its dates written whole
    q = ("How much did total cash and cash equivalents fall between December 31, 2025 and "
         "March 31, 2026?")
    assert "difference" in cued(q)
    assert "difference" in cued("How much did the mean balance change between 2000 and 2023?")
    cols = ("March 31, 2026 Total", "March 31, 2025 Total", "December 31, 2025 Total")
    table = Table.of([(f"{label}; " + "; ".join(f"{c}: {v}" for c, v in zip(
        cols, vals, strict=True)), None) for label, *vals in (
        ("Cash and cash equivalents", "588,077", "610,000", "945,590"),
        ("Accounts receivable, net", "1,376,926", "1,200,000", "1,245,062"))])
    fell = execute("difference", q, table, embed().embed)
    assert fell is not None and fell.result == "357,513", fell
    assert {c.column for _, c in fell.cells} == {cols[0], cols[2]}
    # the same dates written day first
    q = q.replace("December 31, 2025", "31 December 2025").replace("March 31,", "31 March")
    fell = execute("difference", q, table, embed().embed)
    assert fell is not None and fell.result == "357,513", fell


def test_a_row_named_in_the_possessive() -> None:
    from ragctl.ask.compute import Table, conditions

    t = Table.of([(f"Model: {m}; GPQA: {g}", None) for m, g in (
        ("o3-high", "83.4"), ("gpt-4o-2024-11-20", "46.0"), ("o3", "82.8"))])
    q = "How many points higher is o3-high's GPQA score than gpt-4o-2024-11-20's?"
    assert [c.value for c in conditions(q, t)] == ["o3-high", "gpt-4o-2024-11-20"]
    more = execute("difference", q, t, embed().embed)
    assert more is not None and more.result == "37.4"
    # a plural is no possessive: "o3s" names no row
    assert conditions("What did the o3s score on GPQA?", t) == []


LEDGER = ("Date,Payee,Account,Total\n"
          "2015/07/02,Uber,Expenses:Travel:Uber,22.46\n"
          "2015/07/02,Uber,Assets:Bank:Checking,-22.46\n"
          "2015/07/03,Uber,Expenses:Travel:Uber,7.88\n"
          "2015/07/03,Uber,Assets:Bank:Checking,-7.88\n"
          "2015/07/05,Long Island Rail Road,Expenses:Travel,25\n"
          "2015/07/05,Long Island Rail Road,Assets:Bank:Checking,-25\n"
          "2015/07/06,Andrea Deng,Expenses:Salary:Andrea Deng,320\n"
          "2015/07/06,Andrea Deng,Assets:Bank:Checking,-320\n"
          "2015/07/07,Max Wofford,Expenses:Salary:Max Wofford,720\n"
          "2015/07/07,Max Wofford,Assets:Bank:Checking,-720\n")


def test_a_level_of_a_category_path_names_the_rows_under_it() -> None:
    e = embed().embed
    ledger = read_csv_text(LEDGER)
    # the deepest level named: "expenses booked under travel" are under Expenses:Travel
    travel = execute("sum", "What was the total travel spending (all expenses booked under "
                     "travel)?", ledger, e)
    assert travel is not None and travel.result == "55.34"
    assert [c.value for c in conditions("all expenses booked under travel", ledger)] == \
        ["Travel"]
    # however inflected: "salaries" of "Expenses:Salary:…"
    paid = execute("sum", "How much was paid out in salaries in total?", ledger, e)
    assert paid is not None and paid.result == "1,040"
    # two columns' conditions both hold: Uber's rides expensed, not the bank's side
    rides = execute("count", "How many Uber rides were expensed?", ledger, e)
    assert rides is not None and rides.result == "2"
    # a time or a note is no path
    assert path_parts("Expenses:Travel:Uber") == ["Expenses", "Travel", "Uber"]
    assert path_parts("Food > Groceries") == ["Food", "Groceries"]
    assert path_parts("10:30") == [] and path_parts("Note: see the minutes") == []
    assert "sum" in cued("How much was paid out in salaries in total?")


def test_a_name_without_its_middle_initials_names_its_rows() -> None:
    e = embed().embed
    votes = read_csv_text("county,office,candidate,votes\nKent,Governor,KATHY S. DEMATTEIS,1115\n"
                          "Kent,Governor,JOHN J. MACHUREK,616\nSussex,Governor,KATHY S. "
                          "DEMATTEIS,1250\nSussex,Governor,JOHN J. MACHUREK,623\n"
                          "Kent,Governor,JOHN C. CARNEY JR.,44352\n")
    q = "How many votes did Kathy DeMatteis and John Machurek receive together?"
    assert {c.value for c in conditions(q, votes)} == {"KATHY S. DEMATTEIS",
                                                       "JOHN J. MACHUREK"}
    both = execute("count", q, votes, e)
    assert both is not None and both.result == "3,604"
    carney = conditions("How many votes did John Carney get?", votes)
    assert [c.value for c in carney] == [votes.rows[-1].cells[2].value]


SUMMARY = ("Expenses,FY 2014,FY 2015,FY 2016\nAdministrative,\"$53,867.62\",\"$53,951.64\","
           "\"$49,586.58\"\nPublications,\"$95,203.11\",\"$83,104.21\",\"$87,643.63\"\n"
           "Grants,\"$11,582.32\",\"$11,441.36\",\"$17,871.30\"\nAwards,\"$5,773.37\","
           "\"$6,965.52\",\"$5,067.95\"\n")


def test_one_rows_cells_over_the_years_named_or_spanned() -> None:
    e = embed().embed
    summary = read_csv_text(SUMMARY)
    q = "What was spent on grants in total over the three fiscal years 2014, 2015 and 2016?"
    total = execute("sum", q, summary, e)
    assert total is not None and total.result == "$40,894.98"
    assert total.working == "= $11,582.32 + $11,441.36 + $17,871.30: Grants FY 2014, " \
        "FY 2015, FY 2016"
    # a span of years names those between too
    mean = execute("average", "What was the average yearly grants spending across FY 2014 "
                   "to FY 2016?", summary, e)
    assert mean is not None and mean.result == "$13,631.66" and mean.count == 3
    # two years named: the two as before
    two = execute("average", "What was the average grants spending in FY 2014 and FY 2016?",
                  summary, e)
    assert two is not None and two.count == 2
    # a span of quarters
    flows = read_csv_text("Item,Q3 2025,Q4 2025,Q1 2026,Q2 2026,TTM\n"
                          'Free cash flow,"24,461","24,551","10,116","(5,855)","53,273"\n')
    mean = execute("average", "What was the average quarterly free cash flow over the four "
                   "quarters from Q3 2025 through Q2 2026?", flows, e)
    assert mean is not None and mean.result == "13,318.25" and mean.count == 4


def test_the_rows_whose_figure_went_up_from_one_column_to_another() -> None:
    e = embed().embed
    summary = read_csv_text(SUMMARY)
    up = execute("count", "How many expense lines went up from FY 2015 to FY 2016?", summary, e)
    assert up is not None and up.result == "2"  # Publications, Grants
    assert up.working == "2 rows with FY 2016 > FY 2015"
    down = execute("count", "How many expense lines fell between FY 2014 and FY 2015?",
                   summary, e)
    assert down is not None and down.result == "2"  # Publications, Grants


def test_the_documents_own_name_names_no_row_to_set_against_another() -> None:
    e = embed().embed
    sheet = read_csv_text(",FY 18 PLANNED,FY 17 ADOPTED\nSales Tax,256224000,241564000\n"
                          "GRAND TOTAL,774605000,729548000\nREVENUE ESTIMATE,645950000,\n")
    seed = Sentence(path="/docs/revenue_estimate.xlsx", title="revenue_estimate", place="",
                    start_char=0, end_char=1, text="x", id=1, passage_id=1, seq=0)
    sheet = Table(sheet.columns, tuple(TableRow(r.cells, seed) for r in sheet.rows))
    q = ("By how much does the FY 18 planned GRAND TOTAL exceed the FY 17 adopted GRAND "
         "TOTAL on the revenue estimate sheet?")
    more = execute("difference", q, sheet, e)
    assert more is not None and more.result == "45,057,000"


def test_what_the_question_sets_aside_is_left_out() -> None:
    e = embed().embed
    payments = read_csv_text("Payee,Kind,Amount\nAndrea,Salary,720\nInstacart,Food,121.43\n"
                             "Uber,Travel,22.46\nMax,Salary,320\n")
    top = execute("argmax", "Leaving salaries aside, which payee received the single largest "
                  "payment?", payments, e)
    assert top is not None and top.result == "Instacart"
    assert "Kind not Salary" in top.working
    rest = execute("sum", "What was paid in total, excluding travel?", payments, e)
    assert rest is not None and rest.result == "1,161.43"
    # the single largest payment is one row's value, not the payee most rows name
    assert execute("argmax", "Which payee received the single largest payment?",
                   payments, e).result == "Andrea"  # type: ignore[union-attr]


INCOME = ("Income source,FY 2014,FY 2015\nConferences,\"$599,649.00\",\"$603,466.86\"\n"
          "Dues,\"$65,946.33\",\"$79,753.92\"\nTotal,\"$751,108.33\",\"$783,219.78\"\n")


def test_the_totals_of_two_tables_the_question_names_by_their_headers() -> None:
    e = embed().embed
    expenses = read_csv_text(SUMMARY + "Total,\"$775,507.96\",\"$760,202.10\",\"$701,001.00\"\n")
    income = read_csv_text(INCOME)
    q = "In the FY 2014 figures, by how much did total expenses exceed total income?"
    for table in (expenses, income):  # neither table alone holds both
        assert execute("difference", q, table, e) is None
    done = best_done(q, "difference", [expenses, income], e)
    assert done is not None and done.result == "$24,399.63" and done.column == "FY 2014"
    assert "Expenses Total $775,507.96" in done.working
    # a question that names one table's header only sets nothing against it
    assert totals_apart("difference", "By how much did total expenses grow?",
                        [expenses, income], e) is None


def test_a_double_entry_ledgers_rows_are_each_entry_once() -> None:
    e = embed().embed
    ledger = read_csv_text(LEDGER)
    q = "What was the average total of an Uber ride?"  # the fake embedder reads no "cost"
    rides = execute("average", q, ledger, e)
    assert rides is not None and rides.result == "15.17" and rides.count == 2
    assert grouped("average", rides, q)
    # amounts that do not each cancel out are all kept
    kept = [(ledger.rows[0], ledger.rows[0].cells[3], 22.46),
            (ledger.rows[3], ledger.rows[3].cells[3], -7.88)]
    assert one_leg(kept) == kept


def test_a_table_whose_columns_are_the_things_counted_and_compared() -> None:
    centers = ("Presbyterian Medical Center", "Matthews Medical Center",
               "Orthopedic Hospital", "Forsyth Medical Center")
    cols = (*centers, "Three Months Ended March 31, 2026")
    table = Table.of([(f"{label}; " + "; ".join(f"{c}: {v}" for c, v in zip(
        cols, vals, strict=True)), None) for label, *vals in (
        ("Staffed Beds", "564", "150", "59", "900", "1,673"),
        ("Occupancy as % of Staffed Beds", "90.3%", "84.4%", "61.0%", "91.2%", "85.0%"),
        ("Total Births", "1,210", "560", "0", "1,386", "3,156"))])
    e = embed().embed
    q = "How many of its medical centers ran above 85% occupancy of staffed beds?"
    done = execute("count", q, table, e)
    # the row named by the most words; the period's total is no medical center
    assert done is not None and done.result == "2" and done.column.startswith("Occupancy")
    assert "Forsyth Medical Center 91.2%" in done.working
    # the most along a row labelled as a total, which the question names without "total"
    most = execute("argmax", "Which medical center recorded the most births?", table, e)
    assert most is not None and most.result == "Forsyth Medical Center", most


def test_the_row_that_changed_the_most_between_two_columns() -> None:
    e = embed().embed
    lines = read_csv_text("Expense,2014,2015\nTelephone,1112,1130\nInsurance,4954,3199\n"
                          "Equipment expensed,3233,3897\nDepreciation,1000,1653\n"
                          "Total,10299,9879\n")
    q = "Which expense line increased the most in pounds between 2014 and 2015?"
    assert "argmax" in cued(q)
    up = execute("argmax", q, lines, e)
    # by the change, not the largest figure (Insurance) nor the total
    assert up is not None and up.result == "Equipment expensed", up
    assert "+664" in up.working
    down = execute("argmax", "Which expense line fell the most from 2014 to 2015?", lines, e)
    assert down is not None and down.result == "Insurance" and "−1,755" in down.working


def test_rows_whose_labels_start_alike_and_a_share_of_funds() -> None:
    e = embed().embed
    spend = read_csv_text("Description,Total\nDay 1 catering,552\nDay 1 pizza,327.87\n"
                          "Day 1 venue hire,960\nDay 2 catering,620\nTotal,2459.87\n")
    assert label_prefixes(spend) == {"day 1": ("Description", "day 1")}
    q = "What did Day 1 cost in total?"
    day1 = execute("sum", q, spend, e)
    assert day1 is not None and day1.result == "1,839.87" and day1.count == 3
    assert "starts" in [c.op for c in day1.conditions]
    # funds with their total under them, unlabelled
    funds = read_csv_text("Organisation,Package,Amount\nTuring Institute,Platinum,5200\n"
                          "IOP,Silver,1000\nHSBC,Gold,1500\n,,7700\n")
    q = "What percentage of the incoming funds came from the Turing Institute?"
    assert cued(q) == ["share"]
    share = execute("share", q, funds, e)
    assert share is not None and share.result == "67.53%" and "7,700" in share.working
    budget = read_csv_text("Item,Funds\nPersonnel,166000\nSupplies,26699\nTotal direct costs,"
                           "298264\nIndirect costs,33140\nTotal,331404\n")
    q = "What are the indirect costs as a percentage of total direct costs?"
    share = execute(cued(q)[0], q, budget, e)
    assert share is not None and share.result == "11.11%", share  # not of the grand total
    # "£1,000 or more" of the one column written in pounds, which the question never names
    funds = read_csv_text("Organisation,Package,Amount\nTuring Institute,Platinum,£5200\n"
                          "IOP,Silver,£1000\nSPIE,Bronze,£500\n")
    q = "How many of the funders contributed £1,000 or more?"
    done = best_done(q, "count", [funds], e)
    assert done is not None and done.result == "2"


def test_what_went_out_written_negative_is_said_as_how_much() -> None:
    e = embed().embed
    ledger = read_csv_text("Month,Expense,Description\n2022-08,-59.82,AWS: Riju\n"
                           "2022-09,-90.45,AWS: Riju\n2022-09,34.00,GitHub Sponsors\n")
    spent = execute("sum", "How much was spent in total on AWS: Riju?", ledger, e)
    assert spent is not None and spent.result == "150.27" and spent.working.startswith("= −(")
    net = execute("sum", "What was the net total of AWS: Riju?", ledger, e)
    assert net is not None and net.result == "-150.27"


def test_a_quarter_named_by_its_number_is_the_three_months_ended_with_it() -> None:
    cols = ("Quarter Ended June 30, 2025", "Quarter Ended June 30, 2026",
            "Year To Date June 30, 2025", "Year To Date June 30, 2026")
    table = Table.of([(f"{label}; " + "; ".join(f"{c}: {v}" for c, v in zip(
        cols, vals, strict=True)), None) for label, *vals in (
        ("Google Services", "82,543", "94,540", "160,010", "184,100"),
        ("Google Cloud", "2,826", "8,814", "4,990", "14,990"))])
    q = "By what percentage did Google Cloud grow from Q2 2025 to Q2 2026?"
    grew = execute("percent_change", q, table, embed().embed)
    assert grew is not None and grew.result == "211.89%", grew
    assert {c.column for _, c in grew.cells} == set(cols[:2])
    # a quarter that ends no calendar quarter's month is none of them
    assert quarter_ended("Quarter Ended May 31, 2025") is None
    assert quarter_ended("Year To Date June 30, 2025") is None


def test_a_list_of_labelled_figures_is_a_table_under_its_heading(
        tmp_path: Path, fake_embedder: str) -> None:
    """An account's lines, "Staff Costs: 5,360.00" one a line under "EXPENDITURE" (an
    HTML description list): a table of two columns whose figures the heading names, from
    its first line to its total; the run before it, closed by its own total, is another."""
    from ragctl.ask.compute import labelled_run, labelled_value

    lines = "".join(f"<dt>{t}</dt><dd>{v}</dd>" for t, v in (
        ("Staff Costs", "5,360.00"), ("Footway Lighting", "£4,400.64"),
        ("Donations", "£1,275.00"), ("TOTAL EXPENDITURE", "£11,035.64")))
    income = "".join(f"<dt>{t}</dt><dd>{v}</dd>" for t, v in (
        ("Precept 1", "£5,333.33"), ("Bingo Night", "£236.00"), ("TOTAL INCOME", "£5,569.33")))
    page = (f"<html><body><h1>Accounts 2019-20</h1><p>INCOME</p><dl>{income}</dl>"
            f"<p>EXPENDITURE</p><dl>{lines}</dl></body></html>")
    indexed(tmp_path / "council", {"accounts.html": page})
    assert labelled_value("Staff Costs: 5,360.00") is not None
    assert labelled_value("Chair: Ana Ruiz") is None  # no figure
    assert labelled_value("Item: Relay; Cost: $8.00") is None  # a table's row
    with Collection.open(load_settings()) as c:
        every = c.store.sentences_like(str(tmp_path / "council" / "accounts.html"), ["%"])
        seed = next(s for s in every if s.text.startswith("Donations"))
        run, heading = labelled_run(every, seed)
        assert [s.text.split(":")[0] for s in run] == [
            "Staff Costs", "Footway Lighting", "Donations", "TOTAL EXPENDITURE"]
        assert heading == "EXPENDITURE"
        table = Table.listed(run, heading)
        assert table.columns == ("", "EXPENDITURE") and table.numeric("EXPENDITURE")
        with Pipeline(c, reader=FakeReader("5,360.00")) as p:
            p._tableops, p._tableops_loaded = _always("argmax"), True
            most = p.ask("Which was the largest expenditure heading in the 2019-20 accounts?",
                         AskOptions(re_threshold=0.0))
    assert most.kind == "computed" and most.raw_answer == "Staff Costs", most.answer


def test_years_counted_along_a_row_against_a_bound_a_cell_also_holds(
        tmp_path: Path, fake_embedder: str) -> None:
    """"In how many years did stormwater spending exceed $10,000": the year columns of the
    named row, those of the span named, the total's column and row left out; "$10,000" a
    bound, though a cell holds it too."""
    (years,) = asked_of_sheet(
        tmp_path / "hoa", "Category,2020*,2021,2022,2023,2024,2025,Total\n"
        'Reserve Transfers,"$0","$4,146","$6,000","$10,000","$11,000","$11,722","$42,868"\n'
        'Stormwater,"$0","$0","$20,372","$10,293","$10,312","$13,559","$54,536"\n'
        'TOTAL OUTFLOW,"$8,000","$28,276","$58,522","$35,393","$36,762","$43,531","$210,484"\n',
        "$10,000", "In how many years between 2020 and 2025 did the stormwater outflow "
        "exceed $10,000?")
    assert years.kind == "computed" and years.raw_answer == "4", years.answer
