"""The span reader's training examples: SQuAD 2.0's unanswerable questions, table rows from
WikiTableQuestions, and examples written to a file and trained from elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragctl.errors import RagctlError
from ragctl.eval.datasets import load
from ragctl.training.reader import (
    SpanExample,
    read_spans,
    span_examples,
    split_by_group,
    table_span_examples,
    write_spans,
)


def _squad2(path: Path) -> Path:
    context = "The museum opens at nine. Tickets cost twelve euros. The cafe closes at five."
    path.write_text(json.dumps({"version": "v2.0", "data": [
        {"title": f"Museum {i}", "paragraphs": [{"context": context, "qas": [
            {"id": f"a{i}", "question": "How much do tickets cost?", "is_impossible": False,
             "answers": [{"text": "twelve euros", "answer_start": context.index("twelve")}]},
            {"id": f"u{i}", "question": "How much does parking cost?", "is_impossible": True,
             "answers": [], "plausible_answers": [{"text": "twelve euros",
                                                   "answer_start": 40}]}]}]}
        for i in range(3)]}))
    return path


def test_a_training_file_is_read_whole_and_the_shared_files_refuse_it(tmp_path: Path) -> None:
    path = _squad2(tmp_path / "train-v2.0.json")
    assert len(load(path, split="dev").examples) == 4  # articles 0 and 2: dev's parity
    assert len(load(path, split="all").examples) == 6
    shared = tmp_path / "dev-v1.1.json"
    shared.write_text(path.read_text())
    with pytest.raises(RagctlError, match="report split"):
        load(shared, split="all")


def test_unanswerable_questions_are_negatives_with_their_own_passage(tmp_path: Path) -> None:
    path = _squad2(tmp_path / "train-v2.0.json")
    examples = span_examples([path], split="all", negatives=0)
    by_id = {ex.id: ex for ex in examples}
    assert by_id["a0"].context[by_id["a0"].start:by_id["a0"].end] == "twelve euros"
    unanswerable = by_id["u0-negq"]
    assert not unanswerable.answerable and unanswerable.question == "How much does parking cost?"
    assert "twelve euros" in unanswerable.context
    # held out with its question: a question's negatives never train while it validates
    train, val = split_by_group(examples, 0.34, seed=0)
    val_ids = {ex.id.split("-neg")[0] for ex in val}
    assert not any(ex.id.split("-neg")[0] in val_ids for ex in train)


def _wtq(root: Path) -> Path:
    (root / "csv" / "200-csv").mkdir(parents=True)
    (root / "page" / "200-page").mkdir(parents=True)
    rows = ["Team,City,Founded,Titles", "Rovers,Leeds,1901,3", "Albion,Bristol,1899,5",
            "Harriers,Kidderminster,1886,1", "United,Carlisle,1904,0", "Athletic,Oldham,1895,2"]
    rows += [f"Club {n},Town {n},{1910 + n},{n % 4}" for n in range(40)]  # more than a window
    (root / "csv" / "200-csv" / "0.csv").write_text("\n".join(rows) + "\n")
    (root / "page" / "200-page" / "0.json").write_text(json.dumps({"title": "English clubs"}))
    (root / "data").mkdir()
    tsv = root / "data" / "random-split-1-train.tsv"
    tsv.write_text("id\tutterance\tcontext\ttargetValue\n"
                   "nt-0\twhat city are the harriers from?\tcsv/200-csv/0.csv\tKidderminster\n"
                   "nt-1\twhich team has the most titles?\tcsv/200-csv/0.csv\tAlbion\n"
                   "nt-2\thow many teams are there?\tcsv/200-csv/0.csv\t5\n"
                   "nt-3\twhen was rovers founded?\tcsv/200-csv/0.csv\t1901\n"
                   "nt-4\tname two teams\tcsv/200-csv/0.csv\tRovers|Albion\n")
    return tsv


def test_table_questions_answered_by_one_cell_of_a_named_row_teach_the_cell(
        tmp_path: Path) -> None:
    tsv = _wtq(tmp_path / "wtq")
    examples = table_span_examples(tsv, tmp_path / "wtq", negatives=1)
    positives = {ex.id: ex for ex in examples if ex.answerable}
    # a superlative needs every row, a count is no cell, a list is two: none is a lookup
    assert set(positives) == {"nt-0", "nt-3"}
    harriers = positives["nt-0"]
    assert harriers.context.startswith("English clubs. ")
    assert harriers.context[harriers.start:harriers.end] == "Kidderminster"
    assert "Team: Harriers; City: Kidderminster" in harriers.context  # as index reads a CSV
    negatives = [ex for ex in examples if not ex.answerable]
    assert negatives and all("Kidderminster" not in ex.context and "1901" not in ex.context
                             for ex in negatives)
    with pytest.raises(RagctlError, match="--tables"):
        span_examples([tsv])
    holed = table_span_examples(tsv, tmp_path / "wtq", negatives=0, holes=True)
    holes = {ex.id: ex for ex in holed if ex.id.endswith("-neghole")}
    assert set(holes) == {"nt-0-neghole", "nt-3-neghole"}
    hole = holes["nt-0-neghole"]  # the rows around Harriers', without Harriers'
    assert not hole.answerable and "Kidderminster" not in hole.context
    assert "Team: Albion" in hole.context or "Team: United" in hole.context


def test_examples_written_to_a_file_read_back_the_same(tmp_path: Path) -> None:
    examples = [SpanExample("q1", "Who?", "Ada wrote it.", 0, 3, ("Ada",), "g"),
                SpanExample("q1-neg0", "Who?", "Nothing here.", -1, -1, ("Ada",), "g"),
                SpanExample("q2", "When?", "In 1843.", 3, 7, ("1843",), "g")]
    path = tmp_path / "reader.spans.jsonl.gz"
    assert write_spans(examples, path) == 3
    assert span_examples([path]) == examples
    sample = read_spans(path, limit=1)
    assert len({ex.id.split("-neg")[0] for ex in sample}) == 1
    assert len(sample) in (1, 2)  # a question comes with its negatives
    cut = tmp_path / "cut.spans.jsonl.gz"
    cut.write_bytes(path.read_bytes()[:-12])  # an interrupted copy
    with pytest.raises(RagctlError, match="cannot be read"):
        read_spans(cut)
    broken = tmp_path / "broken.spans.jsonl"
    broken.write_text('{"id": "q1"}\n')
    with pytest.raises(RagctlError, match=r"broken\.spans\.jsonl:1"):
        read_spans(broken)


def test_a_run_of_one_step_trains(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from ragctl.training.reader import ReaderOptions, ReaderTrainer
    from tests.tiny_models import hf_bert

    base = hf_bert(tmp_path / "base")
    path = tmp_path / "one.spans.jsonl"
    write_spans([SpanExample("q1", "where is the cat", "the cat sat on the mat", 19, 22,
                             ("mat",), "g"),
                 SpanExample("q2", "where is the office", "the office is in lisbon", 17, 23,
                             ("lisbon",), "g")], path)
    result = ReaderTrainer(ReaderOptions(base=str(base), epochs=1, batch_size=4,
                                         max_length=32, val_fraction=0.5), [path],
                           tmp_path / "run").run()
    assert result.examples == 1 and result.val_examples == 1 and result.best_epoch == 1
