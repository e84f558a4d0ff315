"""`ragctl chat`: the follow-up rewrite, the session commands, and the real models."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ragctl.app.chat import Turn, rewrite, topic
from ragctl.app.cli import cli


@pytest.mark.parametrize("first, answer, follow, expected", [
    ("When did the Norman conquest of England begin?", "1066", "and when did it end?",
     "When did the Norman conquest of England end?"),
    ("Where is the University of Notre Dame?", "Indiana", "who founded it?",
     "Who founded the University of Notre Dame?"),
    ("Who founded Apple?", "Steve Jobs", "where was he born?", "Where was Steve Jobs born?"),
    ("What does the lease say about pets?", "", "and about smoking?",
     "What does the lease say about smoking?"),
    ("When was Tesla founded?", "2003", "what about SpaceX?", "When was SpaceX founded?"),
    ("Who founded Apple?", "Steve Jobs", "What is the capital of France?",
     "What is the capital of France?"),  # not a follow-up: left alone
])
def test_rewrite(first: str, answer: str, follow: str, expected: str) -> None:
    assert rewrite(follow, [Turn(first, answer)]) == expected


def test_nothing_to_rewrite_without_history_or_topic() -> None:
    assert rewrite("when did it end?", []) == "when did it end?"
    assert topic("what happened next?") is None
    # no phrase to put in place of "it": the last question's words help the search
    assert rewrite("why did it happen?", [Turn("what happened next?", "")]) == \
        "why did it happen? (happened next)"


def test_session_commands(ragctl_home: Path, fake_embedder: str, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "boiler.md").write_text("# Boiler\n\nThe boiler was serviced by Hale & Sons. "
                                    "They come back every March.\n")
    assert CliRunner().invoke(cli, ["index", str(docs), "-q"]).exit_code == 0
    lines = "Who serviced the Boiler?\nwhen do they come back?\n/sources\n/explain\n/new\n" \
            "/nonsense\n/help\n/quit\n"
    r = CliRunner().invoke(cli, ["chat", "--no-log"], input=lines)
    assert r.exit_code == 0, r.output
    assert "(asking: When do the Boiler come back?)" in r.output
    assert "unknown command /nonsense" in r.output and "/sources" in r.output
    assert (ragctl_home / "chat_history").stat().st_mode & 0o077 == 0


@pytest.mark.real
def test_follow_up_with_the_real_models(ragctl_home: Path, tmp_path: Path,
                                        model_defaults: None) -> None:
    from ragctl.app.chat import Session
    from ragctl.config import load_settings

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tower.md").write_text(
        "# The Eiffel Tower\n\nThe Eiffel Tower in Paris was completed in 1889. It was "
        "designed by the engineer Gustave Eiffel's company.\n")
    (docs / "statue.md").write_text(
        "# The Statue of Liberty\n\nThe Statue of Liberty in New York was dedicated in 1886. "
        "It was designed by the sculptor Frédéric Auguste Bartholdi.\n")
    assert CliRunner().invoke(cli, ["index", str(docs), "-q"]).exit_code == 0
    session = Session(load_settings(), use_service=False, log=False)
    try:
        first = session.ask("When was the Statue of Liberty dedicated?")
        assert "1886" in first.answer
        question = rewrite("who designed it?", session.turns)
        assert question == "Who designed the Statue of Liberty?"
        second = session.ask(question)
        assert "Bartholdi" in second.answer
        assert Path(second.sources[0].path).name == "statue.md"
    finally:
        session.close()
