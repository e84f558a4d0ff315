"""Silver labels on hand-made examples: StrInc order, the Lexical threshold, CXMI's sign."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragctl.app.cli import cli
from ragctl.errors import RagctlError
from ragctl.training.silver import (
    AnswerScorer,
    SilverInput,
    SilverLabeler,
    lexical_score,
    read_silver,
    select_lexical,
    write_silver,
)
from tests.fakes import FakeGenerator


class AnswerInPrompt(AnswerScorer):
    """log P(answer) is high when the prompt's context holds the answer, else low."""

    name = "fake"

    def __init__(self, hit: float = -1.0, miss: float = -6.0, none: float = -4.0) -> None:
        self.hit, self.miss, self.none = hit, miss, none
        self.batches: list[int] = []

    def logprobs(self, prompts: Sequence[str], answer: str) -> list[float]:
        self.batches.append(len(prompts))
        out = []
        for p in prompts:
            context = p.rsplit("Context:", 1)[1].split("\nQuestion:")[0]
            if not context.strip():
                out.append(self.none)
            else:
                out.append(self.hit if answer.lower() in context.lower() else self.miss)
        return out


PARIS = SilverInput(
    "q1", "Where is the company's office?", ("Lisbon",),
    (("Notes", "The company was founded in 2001. Its office moved to Porto in 2010."),
     ("Office", "The office is in Lisbon. Lisbon is the capital of Portugal.")))


def test_strinc_picks_the_first_containing_sentence_in_rank_order() -> None:
    ex = SilverLabeler(measures=["strinc"]).label(PARIS)
    assert [s.strinc for s in ex.passages[0].sentences] == [False, False]
    assert [s.strinc for s in ex.passages[1].sentences] == [True, True]
    assert ex.selected["strinc"] == [[1, 0]]
    assert ex.passages[1].has_answer and not ex.passages[0].has_answer


def test_strinc_selects_nothing_without_the_answer() -> None:
    item = SilverInput("q", "Who?", ("Gustave Eiffel",), (("", "Nobody is named here."),))
    assert SilverLabeler(measures=["strinc"]).label(item).selected["strinc"] == []


def test_lexical_threshold_is_inclusive_at_one_half() -> None:
    # "red apple" vs "red car": F1 = 0.5 → kept; "red car trip" vs "red apple": 0.4 → not
    assert lexical_score("red car", ["red apple"], "q") == pytest.approx(0.5)
    keep = SilverLabeler(measures=["lexical"]).label(
        SilverInput("a", "q?", ("red apple",), (("", "Red car."),)))
    drop = SilverLabeler(measures=["lexical"]).label(
        SilverInput("b", "q?", ("red apple",), (("", "Red car trip."),)))
    assert keep.selected["lexical"] == [[0, 0]]
    assert drop.passages[0].sentences[0].lexical == pytest.approx(0.4)
    assert drop.selected["lexical"] == []
    assert select_lexical(drop, lam=0.4) == [[0, 0]]


def test_lexical_scores_against_the_question_when_there_is_no_answer() -> None:
    assert lexical_score("vitamin d lowers risk", [], "vitamin d lowers risk") == 1.0


def test_cxmi_sign_selects_only_sentences_that_raise_the_answer_likelihood() -> None:
    scorer = AnswerInPrompt()
    ex = SilverLabeler(measures=["cxmi"], scorer=scorer).label(PARIS)
    cx = [s.cxmi for p in ex.passages for s in p.sentences]
    assert cx == [-2.0, -2.0, 3.0, 3.0]  # log ratios: miss − none, hit − none
    assert ex.selected["cxmi"] == [[1, 0]]
    assert ex.no_context_logprob == -4.0
    assert [p.answer_logprob for p in ex.passages] == [-6.0, -1.0]
    assert scorer.batches == [1 + 2 + 2 * 2]  # one batch per example

    worse = SilverLabeler(measures=["cxmi"], scorer=AnswerInPrompt(hit=-5.0)).label(PARIS)
    assert all(s.cxmi is not None and s.cxmi < 0 for p in worse.passages for s in p.sentences)
    assert worse.selected["cxmi"] == []  # ratio below 1 everywhere


def test_cxmi_needs_a_generator_and_measures_are_checked() -> None:
    with pytest.raises(RagctlError, match="generator"):
        SilverLabeler(measures=["cxmi"])
    with pytest.raises(RagctlError, match="unknown measure"):
        SilverLabeler(measures=["bleu"])


def test_write_silver_resumes_and_cuts_a_torn_line(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    items = [SilverInput(f"q{i}", f"Where is office {i}?", ("Lisbon",),
                         (("", "The office is in Lisbon."),)) for i in range(4)]
    labeler = SilverLabeler(measures=["strinc", "lexical"])
    first = write_silver(items[:2], out, labeler)
    assert first.written == 2
    with out.open("a") as f:
        f.write('{"id": "q2", "quest')  # an interrupted write
    again = write_silver(items, out, labeler)
    assert (again.written, again.skipped_done) == (2, 2)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["q0", "q1", "q2", "q3"]
    back = list(read_silver(out))
    assert back[3].selected["strinc"] == [[0, 0]]
    assert back[3].sentence([0, 0]).text == "The office is in Lisbon."


def test_questions_without_passages_are_skipped(tmp_path: Path) -> None:
    run = write_silver([SilverInput("x", "Why?", ("because",), ())], tmp_path / "o.jsonl",
                       SilverLabeler(measures=["strinc"]))
    assert (run.written, run.skipped_bad) == (0, 1)


def _squad_file(path: Path) -> Path:
    para = {"context": "The office is in Lisbon. The rent is 900 euros.",
            "qas": [{"id": "a", "question": "Where is the office?",
                     "answers": [{"text": "Lisbon", "answer_start": 17}]},
                    {"id": "b", "question": "How much is the rent?",
                     "answers": [{"text": "900 euros", "answer_start": 37}]}]}
    data = {"data": [{"title": "Office", "paragraphs": [para]},
                     {"title": "Other", "paragraphs": [para]}]}
    path.write_text(json.dumps(data))
    return path


def test_cli_silver_on_squad_json(tmp_path: Path) -> None:
    data = _squad_file(tmp_path / "squad.json")
    out = tmp_path / "silver.jsonl"
    res = CliRunner().invoke(cli, ["silver", str(data), str(out), "--split", "dev"])
    assert res.exit_code == 0, res.output
    assert "2 labelled" in res.output
    rows = list(read_silver(out))
    assert {r.id for r in rows} == {"a", "b"}
    rent = next(r for r in rows if r.id == "b")
    assert rent.sentence(rent.selected["strinc"][0]).text == "The rent is 900 euros."
    again = CliRunner().invoke(cli, ["silver", str(data), str(out), "--split", "dev"])
    assert "0 labelled, 2 already" in again.output


def test_cli_silver_reports_bad_data_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "ctxs": []}\n')
    res = CliRunner().invoke(cli, ["silver", str(bad), str(tmp_path / "o.jsonl")])
    assert res.exit_code == 1
    assert "missing" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(cli, ["silver", str(tmp_path / "o.jsonl")])
    assert res.exit_code == 2  # neither DATA nor --from-index



def question_writer(table: dict[str, str]) -> FakeGenerator:
    """A generator that writes one question per sentence from a fixed table."""

    def write(prompt: str) -> str:
        sentence = prompt.rsplit("Sentence: ", 1)[1].split("\n")[0]
        return next((text for key, text in table.items() if key in sentence),
                    " I do not know.")

    return FakeGenerator(write, name="fake-writer")


def test_from_index_keeps_only_questions_that_pass_every_check(tmp_path: Path,
                                                               fake_embedder: str) -> None:
    from ragctl.config import load_settings
    from ragctl.index.indexer import Indexer
    from ragctl.store.collection import Collection
    from ragctl.training.silver import LlamaAnswerScorer
    from ragctl.training.synth import SynthStats, parse, synthesize

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "office.md").write_text(
        "The company office moved to Lisbon in the spring of 2019 after the merger.\n\n"
        "The monthly rent for the flat on Rua Augusta is nine hundred euros in total.\n\n"
        "Our dentist appointment was moved to Thursday morning at nine o'clock sharp.\n")
    settings = load_settings(chunk_words=12)
    with Collection.open(settings, create=True) as c:
        c.lock()
        Indexer(c).run([docs])
    writer = question_writer({
        "Lisbon": " Where did the company office move in 2019?\nAnswer: Lisbon",
        "rent": " What is the rent of the Rua Augusta flat?\nAnswer: Paris",  # not in it
        "dentist": " When is the dentist appointment on Thursday?\nAnswer: Thursday"})
    stats = SynthStats()
    items = synthesize(settings, LlamaAnswerScorer(writer), n=10, stats=stats, top_k=2)
    assert [(i.question, i.answers) for i in items] == [
        ("Where did the company office move in 2019?", ("Lisbon",))]
    assert items[0].passages and "Lisbon" in items[0].passages[0][1]
    assert (stats.tried, stats.kept, stats.answer_not_in_sentence,
            stats.gives_answer_away) == (3, 1, 1, 1)
    assert parse(" no question here") is None
    assert parse(" Who?\nAnswer: x") is None  # too short to be a question
