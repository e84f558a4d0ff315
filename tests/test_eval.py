from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from ragctl.errors import RagctlError
from ragctl.eval.datasets import detect_format, load
from ragctl.eval.evaluate import answer_precision, threshold_table
from ragctl.text import contains_answer, exact_match, max_f1, normalize_answer, unigram_f1


def test_squad_normalization_and_em_f1() -> None:
    assert normalize_answer("The  Eiffel-Tower!") == "eiffeltower"
    assert normalize_answer("an apple, a pear") == "apple pear"
    assert exact_match("the Denver Broncos", ["Denver Broncos"]) == 1.0
    assert exact_match("Broncos", ["Denver Broncos"]) == 0.0
    # F1: prediction "denver broncos won", gold "denver broncos": P=2/3, R=1
    assert unigram_f1("Denver Broncos won", "Denver Broncos") == pytest.approx(0.8)
    assert max_f1("x", ["y", "x z"]) == pytest.approx(2 / 3)
    assert unigram_f1("", "") == 1.0 and unigram_f1("x", "") == 0.0
    assert contains_answer("It opened in 1889, in Paris.", ["1889"])
    assert not contains_answer("It opened in 18890.", ["1889"])


def test_answer_precision() -> None:
    # context tokens: paris is capital of france (5), answer tokens {paris}: 1/5
    assert answer_precision("Paris is the capital of France", ["Paris"]) == pytest.approx(0.2)
    assert answer_precision("", ["x"]) == 0.0


def test_threshold_search() -> None:
    best = [0.95, 0.6, 0.4, 0.2]
    unanswerable = [False, False, True, True]
    rows = {r["threshold"]: r for r in threshold_table(best, unanswerable, [0.5, 0.7])}
    assert (rows[0.5]["precision"], rows[0.5]["recall"], rows[0.5]["f1"]) == (1.0, 1.0, 1.0)
    # at 0.7: predicts 3 unanswerable, 2 right: P=2/3, R=1
    assert rows[0.7]["precision"] == pytest.approx(2 / 3) and rows[0.7]["recall"] == 1.0
    assert rows[0.7]["accuracy"] == pytest.approx(0.75)


def _write(path: Path, obj: object) -> Path:
    path.write_text(json.dumps(obj))
    return path


def test_squad_reader_splits_and_v2(tmp_path: Path) -> None:
    para = {"context": "Paris is in France.", "qas": [
        {"id": "q1", "question": "Where is Paris?", "answers": [{"text": "France"}]},
        {"id": "q2", "question": "Where is Atlantis?", "answers": [], "is_impossible": True}]}
    data = {"data": [{"title": "A0", "paragraphs": [para]}, {"title": "A1", "paragraphs": [
        {"context": "Rome is in Italy.", "qas": [
            {"id": "q3", "question": "Where is Rome?", "answers": [{"text": "Italy"}]}]}]}]}
    path = _write(tmp_path / "squad.json", data)
    assert detect_format(path) == "squad"
    dev, report = load(path, split="dev"), load(path, split="report")
    assert [p.title for p in dev.passages] == ["A0"]
    assert [p.title for p in report.passages] == ["A1"]
    assert [e.answerable for e in dev.examples] == [True, False]
    assert report.examples[0].answers == ("Italy",) and report.examples[0].gold_passages == ("1-0",)


def test_dpr_reader_with_nq_split(tmp_path: Path) -> None:
    path = tmp_path / "nq-open-oracle.jsonl.gz"
    rows = [{"question": f"q{i}", "answers": ["a"], "ctxs": [
        {"title": "T", "text": f"text {i}", "hasanswer": True, "isgold": True}]}
        for i in range(2003)]
    with gzip.open(path, "wt") as f:
        f.write("\n".join(json.dumps(r) for r in rows))
    assert detect_format(path) == "dpr"
    assert len(load(path, split="dev").examples) == 2000
    report = load(path, split="report")
    assert [e.question for e in report.examples] == ["q2000", "q2001", "q2002"]
    assert report.examples[0].gold_passages == ("p0",)


def test_hotpot_readers(tmp_path: Path) -> None:
    row = {"_id": "h1", "question": "Who?", "answer": "Ann", "type": "bridge", "level": "easy",
           "supporting_facts": {"title": ["X"], "sent_id": [1]},
           "context": {"title": ["X", "Y"], "sentences": [["S0. ", "Ann did it."], ["Other."]]}}
    path = _write(tmp_path / "hotpot.json", [row])
    assert detect_format(path) == "hotpot"
    ds = load(path)
    assert ds.examples[0].supporting == ("Ann did it.",)
    assert len(ds.passages) == 2 and ds.examples[0].gold_passages == ("h0",)
    para = tmp_path / "hp.jsonl"
    para.write_text(json.dumps({"question_id": "x", "question_text": "Who?",
                                "answers_objects": [{"spans": ["Ann"]}],
                                "contexts": [{"title": "X", "paragraph_text": "Ann did it.",
                                              "is_supporting": True},
                                             {"title": "Y", "paragraph_text": "Other.",
                                              "is_supporting": False}]}) + "\n")
    assert detect_format(para) == "hotpot-paragraphs"
    ds = load(para)
    assert ds.examples[0].gold_passages == ("p0",) and ds.examples[0].answers == ("Ann",)


def test_beir_reader(tmp_path: Path) -> None:
    root = tmp_path / "sci"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(
        json.dumps({"doc_id": 7, "title": "T", "abstract": ["One.", "Two."]}) + "\n")
    (root / "queries.jsonl").write_text(json.dumps({"_id": "1", "text": "claim"}) + "\n"
                                        + json.dumps({"_id": "2", "text": "no qrel"}) + "\n")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\t7\t1\n")
    ds = load(root)
    assert ds.passages[0].text == "One. Two." and ds.passages[0].id == "7"
    assert [e.id for e in ds.examples] == ["1"] and ds.examples[0].gold_passages == ("7",)


def test_reader_errors(tmp_path: Path) -> None:
    with pytest.raises(RagctlError, match="does not exist"):
        load(tmp_path / "nope.json")
    bad = _write(tmp_path / "bad.json", {"data": [{"title": "x"}]})
    with pytest.raises(RagctlError, match="does not look like squad"):
        load(bad, split="dev")


@pytest.mark.real
def test_eval_end_to_end_on_a_tiny_dataset(tmp_path: Path, fake_embedder: str) -> None:
    from click.testing import CliRunner

    from ragctl.app.cli import cli

    paras = [("Paris", "Paris is the capital of France. It has many museums."),
             ("Rome", "Rome is the capital of Italy. It was founded in 753 BC."),
             ("Oslo", "Oslo is the capital of Norway. It lies at the end of a fjord.")]
    data = {"data": [{"title": "skip", "paragraphs": []}, {"title": "Cities", "paragraphs": [
        {"context": text, "qas": [{"id": t, "question": f"What country is {t} the capital of?",
                                   "answers": [{"text": text.split("capital of ")[1][:-1]
                                                .split(".")[0]}]}]}
        for t, text in paras]}]}
    path = _write(tmp_path / "tiny.json", data)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["eval", "squad", str(path), "--out", str(out),
                                      "--model", "smollm2-135m"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert report["examples"] == 3 and report["split"] == "report"
    assert report["retrieval"]["recall@20"] == 1.0
    assert set(report["modes"]) == {"answer", "full", "passages", "filtered", "silver"}
    assert report["modes"]["silver"]["answer_in_context"] == 1.0
    assert report["filter"]["silver_recall"] >= 0.0
    assert "## Answers by context" in (out / "report.md").read_text()
    # a second run reuses the index
    again = CliRunner().invoke(cli, ["eval", "squad", str(path), "--json", "--no-generate"])
    assert again.exit_code == 0 and json.loads(again.stdout)["modes"] == {}


def test_supporting_fact_recall() -> None:
    from ragctl.ask.verify import LexicalEmbeddingSupport
    from ragctl.eval.evaluate import supporting_fact_recall

    golds = ["Ann founded the company in 1990.", "The company makes bicycles."]
    sources = {1: "Ann founded the company in 1990.", 2: "It rains a lot in Bergen."}
    answer = "Ann founded the company in 1990 [1]. Oslo is sunny [2]. Bikes are made [9]."
    recall, support = supporting_fact_recall(answer, sources, golds,
                                             LexicalEmbeddingSupport())
    # gold 1 is included and cited; gold 2 is never cited
    assert recall == 0.5
    # sentence 1 is supported, sentence 2 is not (its source is about Bergen), 3 cites nothing
    assert support == pytest.approx(1 / 3)
