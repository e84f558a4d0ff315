"""The question-kind model: short answer or explanation, learned from TREC's labelled
questions (:mod:`ragctl.training.kinds`), and how ``ask`` uses it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragctl.ask.pipeline import Pipeline
from ragctl.ask.stages import AskOptions
from ragctl.config import load_settings
from ragctl.errors import RagctlError
from ragctl.index.indexer import Indexer
from ragctl.models.kinds import KINDS, KindModel
from ragctl.store.collection import Collection
from ragctl.training.kinds import read_trec, train, untokenized
from tests.fakes import FakeReader, HashEmbedder

TREC = [
    "DESC:manner How do you make a paintball ?",
    "DESC:reason Why do people get calluses ?",
    "DESC:def What is a caldera ?",
    "DESC:desc What did Delilah do to Samson 's hair ?",
    "HUM:ind Who killed Gandhi ?",
    "NUM:date When was Ozzy Osbourne born ?",
    "LOC:city What city is sometimes called Gotham ?",
    "NUM:count How many points make up a perfect fivepin bowling score ?",
]


def test_trec_questions_are_read_as_written_and_labelled_by_kind(tmp_path: Path) -> None:
    path = tmp_path / "train.label"
    path.write_text("\n".join(TREC) + "\n", encoding="latin-1")
    examples = list(read_trec(path))
    assert examples[3].question == "What did Delilah do to Samson's hair?"
    assert [e.kind for e in examples] == ["explanatory"] * 4 + ["factoid"] * 4
    assert untokenized("What 's the color of a ` heart ' ?") == "What's the color of a 'heart'?"
    path.write_text("not labelled\n")
    with pytest.raises(RagctlError, match="not a labelled question"):
        list(read_trec(path))


def test_the_model_learns_the_kinds_and_keeps_them_when_saved(tmp_path: Path) -> None:
    path = tmp_path / "train.label"
    # many paraphrases of both kinds, so that a tenth held out can be told apart
    lines = [f"DESC:manner How do I {v} the {n} ?" for v in ("fix", "clean", "reset", "open")
             for n in ("door", "printer", "router", "window", "boiler", "oven")]
    lines += [f"HUM:ind Who {v} the {n} ?" for v in ("owns", "sold", "built", "painted")
              for n in ("door", "printer", "router", "window", "boiler", "oven")]
    path.write_text("\n".join(lines) + "\n")
    embed = HashEmbedder(dim=64).embed
    model, report = train(list(read_trec(path)), embed, "fake-hash", held_out=0.25)
    assert report.trained + report.held_out == len(lines) and report.accuracy >= 0.8
    model.save(tmp_path / "kinds")
    again = KindModel.load(tmp_path / "kinds")
    assert again.labels == KINDS and again.embedder == "fake-hash"
    q = "How do I fix the kettle?"
    assert again.explanatory(q, embed([q])[0]) == pytest.approx(
        model.explanatory(q, embed([q])[0]), abs=1e-6)
    assert again.explanatory(q, embed([q])[0]) > 0.5
    assert again.explanatory("Who sold the kettle?", embed(["Who sold the kettle?"])[0]) < 0.5


class Says(KindModel):
    """A model that gives every question the same probability of wanting an explanation."""

    def explanatory(self, question: str, vector: np.ndarray) -> float:
        return self.threshold + 0.1


def test_ask_quotes_sentences_when_the_model_says_the_question_wants_an_explanation(
        tmp_path: Path, fake_embedder: str) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "boiler.md").write_text(
        "# Boiler\n\nThe boiler was serviced by Hansen Heating in May. Its pressure is reset "
        "by opening the filling loop until the gauge reads 1.5 bar.\n")
    with Collection.open(load_settings(), create=True) as c:
        c.lock()
        Indexer(c).run([root])
    opts = AskOptions(re_threshold=0.0, answer_threshold=0.0)
    with Collection.open(load_settings()) as c, Pipeline(c, reader=FakeReader("May")) as p:
        plain = p.ask("What is done to the boiler's pressure?", opts)
        p._kinds, p._kinds_loaded = Says(np.zeros((1, 2)), np.zeros(2), KINDS, "fake-hash",
                                         0.5), True
        said = p.ask("What is done to the boiler's pressure?", opts)
        yes_no = p.ask("Was the boiler serviced in May?", opts)
    assert plain.question_type == "factoid" and plain.kind == "span"
    assert said.question_type == "quote" and said.kind != "span"
    assert "filling loop" in said.answer
    assert yes_no.question_type == "yes-no"  # the question's form comes first


@pytest.mark.real
def test_the_shipped_model_tells_explanations_from_short_answers() -> None:
    from ragctl.models import registry as models

    settings = load_settings()
    model = models.load("kinds", "minilm-kinds", settings)
    if model is None:
        pytest.skip("the question-kind model is not installed")
    embedder = models.load("embedder", settings.embedder, settings, light=True)
    explain = ["What are the three main steps to set up maintenance mode on the app?",
               "What does the provider do with my data once the retention period is over?",
               "Why does the login page ask me to solve a CAPTCHA?"]
    short = ["What is the invoice number of the Harbour Supplies invoice?",
             "Who was the salesperson on invoice INV-100?", "When is the rent due?"]
    vectors = embedder.embed(explain + short)
    p = [model.explanatory(q, v) for q, v in zip(explain + short, vectors, strict=True)]
    assert all(x >= model.threshold for x in p[:3]), p
    assert all(x < model.threshold for x in p[3:]), p
