"""Citations a person can open: path:line for text files, row and column for cells."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragctl.ask.pipeline import AskOptions, Pipeline
from ragctl.config import load_settings
from ragctl.files import line_at
from ragctl.index.indexer import Indexer
from ragctl.records import Answer
from ragctl.store.collection import Collection
from tests.fakes import FakeReader


@pytest.mark.parametrize(("data", "char", "line"), [
    (b"one\ntwo\nthree", 0, 1), (b"one\ntwo\nthree", 4, 2), (b"one\ntwo\nthree", 8, 3),
    (b"one\r\ntwo\r\nthree", 4, 2),  # offsets count "\r\n" as one character
    ("caf\u00e9\nbar".encode(), 5, 2),  # characters, not bytes
    (b"\xef\xbb\xbfone\ntwo", 4, 2), ("one\ntwo".encode("utf-16"), 4, 2),
    ("caf\u00e9\nbar".encode("latin-1"), 5, 2), (b"short", 99, None),
])
def test_the_line_of_a_character_is_counted_as_the_text_was_read(
        data: bytes, char: int, line: int | None) -> None:
    assert line_at(data, char) == line


def test_an_answer_from_a_text_file_gives_its_line_and_an_edited_file_none(
        tmp_path: Path, fake_embedder: str) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    note = root / "dentist.md"
    note.write_text("# Dentist\n\nBring the insurance card.\n\n"
                    "The appointment is on Tuesday at 3 pm with Dr. Lee.\n")
    with Collection.open(load_settings(), create=True) as c:
        c.lock()
        Indexer(c).run([root])

    def ask() -> Answer:
        with Collection.open(load_settings()) as c, \
                Pipeline(c, reader=FakeReader("3 pm")) as p:
            return p.ask("When is the dentist appointment?",
                         AskOptions(re_threshold=0.0, answer_threshold=0.0))

    a = ask()
    src = a.sources[0]
    assert src.line == 5 and a.to_dict()["sources"][0]["line"] == 5
    note.write_text(note.read_text() + "\nMoved to Wednesday.\n")  # not indexed since
    assert ask().sources[0].line is None
