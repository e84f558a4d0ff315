"""A form's field found by what its label means (:func:`ragctl.ask.fields.matched_field`),
with the real embedder, and the labelled lines it reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragctl.ask.fields import asked_attribute, label_lines
from ragctl.ask.pipeline import Pipeline
from ragctl.ask.stages import AskOptions
from ragctl.config import load_settings
from ragctl.index.indexer import Indexer
from ragctl.records import Sentence
from ragctl.store.collection import Collection
from tests.fakes import FakeReader

SHEET = ("Character sheet\n\nCharacter Name: Mario\n\nAge: 24 years\n\nHeight: 5 ft 1 in\n\n"
         "Weight: 196 lbs\n\nEyes: blue\n\nOrganizations: Italian Plumbers Association\n")


def sentence(text: str, raw: str | None = None) -> Sentence:
    return Sentence(id=1, passage_id=1, seq=0, path="a.txt", title="a", place="",
                    start_char=0, end_char=len(text), text=text, raw=raw)


def test_labelled_lines_are_short_labels_with_short_values() -> None:
    raw = "Weight: 196 lbs\nDate of birth:\n08/29/2020\nItem: Coffee; Price: 2.50"
    text = " ".join(raw.split())
    got = [(x.label, x.value) for x in label_lines(sentence(text, raw))]
    # the value on the next line is taken; a table's row is not a labelled line
    assert got == [("Weight", "196 lbs"), ("Date of birth", "08/29/2020")]
    # prose wrapped before a colon, a web address and long prose are not labels
    raw = ("The aim is to standardize the structure of\ndocstrings: what they should contain\n"
           "See http: //example.org\nThe one thing we would like you to note: it is free")
    assert label_lines(sentence(" ".join(raw.split()), raw)) == []


def test_the_asked_attribute_leaves_out_the_names_asked_about() -> None:
    assert asked_attribute("How many kinds of PEP are there?") == "How many kinds of are there?"
    assert asked_attribute("How much did WaveOC USA refund on receipt 3330-0572?") == \
        "How much did refund on receipt"


@pytest.fixture
def sheet(tmp_path: Path) -> Path:
    root = tmp_path / "forms"
    root.mkdir()
    (root / "mario.txt").write_text(SHEET)
    with Collection.open(load_settings(), create=True) as c:
        c.lock()
        Indexer(c).run([root])
    return root


def test_a_field_is_found_by_what_its_label_means(sheet: Path) -> None:
    # the label says "Weight", the question "weigh"; the reader would take the age
    opts = AskOptions(re_threshold=0.0)
    with Collection.open(load_settings()) as c, \
            Pipeline(c, reader=FakeReader("24 years")) as p:
        weight = p.ask("How much does Mario weigh on his character sheet?", opts)
        member = p.ask("Which organization is Mario a member of?", opts)
        off = p.ask("How much does Mario weigh on his character sheet?",
                    AskOptions(re_threshold=0.0, answer_threshold=0.0,
                               rules_off=frozenset({"matched_label"})))
    assert weight.answer == "196 lbs [1]"
    assert weight.candidates[0]["rule"] == "the field its label names"
    src = weight.sources[0]
    assert src.answer_start is not None
    assert SHEET[src.answer_start:src.answer_end] == "196 lbs"
    assert member.answer == "Italian Plumbers Association [1]"
    assert off.answer == "24 years [1]"  # without the rule, the reader's span


def test_a_label_that_matches_nothing_asked_is_left_to_the_reader(sheet: Path) -> None:
    with Collection.open(load_settings()) as c, \
            Pipeline(c, reader=FakeReader("blue")) as p:
        a = p.ask("What is Mario's favourite colour?", AskOptions(re_threshold=0.0,
                                                                  answer_threshold=0.0))
    assert a.answer == "blue [1]" and a.candidates[0].get("rule") is None
