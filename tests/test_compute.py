"""Computed answers over a table: numbers as cells write them, each operation with its
working, the operation model, and answers through ``ask`` that show and cite the working."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragctl.ask.compute import conditions, execute, number
from ragctl.ask.pipeline import AskOptions, Pipeline
from ragctl.config import load_settings
from ragctl.index.indexer import Indexer
from ragctl.models.tableops import OPERATIONS, OperationModel
from ragctl.store.collection import Collection
from ragctl.training.tableops import fit, matches, read_csv_text
from tests.fakes import FakeReader, HashEmbedder

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
    assert count is not None and count.result == "2" and count.condition is not None
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
