from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from ragctl.app.cli import cli
from ragctl.errors import EXIT_ALL_FAILED, EXIT_USAGE
from tests.corpus import BAD, GOOD, make_corpus


@pytest.fixture
def runner(fake_embedder: str, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("RAGCTL_MAX_FILE_MB", "0.1")
    return CliRunner()


def test_every_command_has_help() -> None:
    assert isinstance(cli, click.Group)
    for name, command in cli.commands.items():
        assert command.help, f"{name} has no help text"
        result = CliRunner().invoke(cli, [name, "--help"])
        assert result.exit_code == 0 and "Usage" in result.output


def test_help_is_fast_and_imports_nothing_heavy() -> None:
    code = ("import sys; from ragctl.app.cli import cli\n"
            "heavy = {'torch', 'spacy', 'sentence_transformers', 'hnswlib', 'rich', 'numpy'}\n"
            "print(sorted(heavy & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_index_every_format_with_bad_files(runner: CliRunner, tmp_path: Path) -> None:
    corpus = make_corpus(tmp_path / "corpus")
    result = runner.invoke(cli, ["index", str(corpus), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["added"] == len(GOOD)
    assert summary["skipped"] == len(BAD)
    warned = {Path(w["path"]).name for w in summary["warnings"]}
    assert warned == BAD | {"loop", "dangling.md"}
    assert "warning:" in result.stderr and "encrypted" in result.stderr
    # each skipped file is reported on one line
    assert len([line for line in result.stderr.splitlines() if line.startswith("warning:")]) \
        >= len(BAD) + 2

    result = runner.invoke(cli, ["search", "dentist appointment", "--json", "-n", "3"])
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)["hits"]
    assert Path(hits[0]["path"]).name == "mail.eml"
    assert hits[0]["place"].startswith("Dentist appointment")

    result = runner.invoke(cli, ["search", "brake pads kilometres"])
    assert result.exit_code == 0
    assert "manual.rst (Bicycle manual > Brakes)" in result.stdout

    result = runner.invoke(cli, ["status", "--json"])
    info = json.loads(result.stdout)
    assert info["documents"] == len(GOOD) and info["embedder"] == "fake-hash"
    assert info["formats"]["pdf"] == 1 and info["total_bytes"] > 0
    assert info["last_run"]["status"] == "ok"

    result = runner.invoke(cli, ["status"])
    assert result.exit_code == 0 and "fake-hash (64 dims)" in result.stdout

    result = runner.invoke(cli, ["doctor"])
    assert result.exit_code == 0 and result.stdout.startswith("ok:")

    result = runner.invoke(cli, ["index", "--json"])
    assert json.loads(result.stdout)["unchanged"] == len(GOOD)


def test_human_summary(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("Hello world. This is a note.")
    result = runner.invoke(cli, ["index", str(tmp_path), "-q"])
    assert result.exit_code == 0
    assert "added" in result.stdout and "passages added" in result.stdout


def test_every_file_failing_exits_4(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "bad.pdf").write_bytes(b"not a pdf")
    (tmp_path / "empty.txt").write_text("")
    result = runner.invoke(cli, ["index", str(tmp_path)])
    assert result.exit_code == EXIT_ALL_FAILED
    assert "Error: none of the 2 files could be indexed" in result.stderr


def test_empty_folder_says_so(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "song.mp3").write_bytes(b"not text")
    result = runner.invoke(cli, ["index", str(tmp_path)])
    assert result.exit_code == 0
    assert "no files ragctl can read were found" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1  # one line, never wrapped


def test_missing_path_exits_2(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["index", str(tmp_path / "nope")])
    assert result.exit_code == EXIT_USAGE
    assert "does not exist" in result.stderr


def test_errors_are_one_line(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["search", "anything"])
    assert result.exit_code == 1
    assert result.stderr.strip().startswith("Error: no index named 'default'")
    assert len(result.stderr.strip().splitlines()) == 1
    result = runner.invoke(cli, ["status", "--index", "../x"])
    assert result.exit_code == 1 and "bad index name" in result.stderr
    (tmp_path / "a.txt").write_text("Some text here.")
    runner.invoke(cli, ["index", str(tmp_path)])
    result = runner.invoke(cli, ["index", str(tmp_path), "--embedder", "fake-hash-32"])
    assert result.exit_code == 1 and "--reembed" in result.stderr
    result = runner.invoke(cli, ["search", "   "])
    assert result.exit_code == 1 and "empty" in result.stderr


def test_named_indexes_are_separate(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Mail about the harbour festival.")
    assert runner.invoke(cli, ["index", str(tmp_path), "--index", "mail"]).exit_code == 0
    result = runner.invoke(cli, ["search", "harbour", "--index", "mail", "--json"])
    assert json.loads(result.stdout)["hits"][0]["text"].startswith("Mail about")
    result = runner.invoke(cli, ["search", "harbour"])
    assert result.exit_code == 1 and "indexes here: mail" in result.stderr


def test_search_modes(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Zebras have black and white stripes on their bodies.\n\n"
                                    "Lions have golden manes around their big heads.")
    runner.invoke(cli, ["index", str(tmp_path), "--chunk-words", "10"])
    for mode in ("hybrid", "vector", "bm25"):
        result = runner.invoke(cli, ["search", "zebras stripes", "--mode", mode, "--json"])
        hits = json.loads(result.stdout)["hits"]
        assert hits[0]["text"].startswith("Zebras have black"), mode
    bm25 = json.loads(runner.invoke(cli, ["search", "zebras", "--mode", "bm25", "--json"])
                      .stdout)["hits"]
    assert len(bm25) == 1 and bm25[0]["similarity"] is None


def test_ask_reads_the_question_from_stdin_keeps_a_log_and_checks_models_first(
        runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "dentist.txt").write_text("Your dentist appointment is on Thursday at 3 pm.")
    assert runner.invoke(cli, ["index", str(docs), "-q"]).exit_code == 0
    out = runner.invoke(cli, ["ask", "-m", "fake-gen", "--threshold", "0", "--json"],
                        input="When is the dentist appointment?\n")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["question"] == "When is the dentist appointment?"
    out = runner.invoke(cli, ["ask", "Where?", "-m", "fake-gen", "--no-log"])
    logs = json.loads(runner.invoke(cli, ["logs", "--json"]).stdout)
    assert [r["question"] for r in logs] == ["When is the dentist appointment?"]
    assert logs[0]["result"]["sources"][0]["path"].endswith("dentist.txt")
    human = runner.invoke(cli, ["logs", "dentist"])
    assert "When is the dentist appointment?" in human.stdout and "3 pm" in human.stdout
    # a typo in a model's name fails at once, before any model loads
    import ragctl.models.registry as models

    loaded: list[str] = []
    real = models.load
    monkeypatch.setattr(models, "load", lambda *a, **k: loaded.append(a[0]) or real(*a, **k))
    out = runner.invoke(cli, ["ask", "When?", "--model", "gemma"])
    assert out.exit_code == 1 and "no generator 'gemma'" in out.output and loaded == []


def test_a_first_run_that_indexes_nothing_leaves_no_index(runner: CliRunner,
                                                          tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "photo.png").write_bytes(b"\x89PNG")
    runner.invoke(cli, ["index", str(empty)])
    out = runner.invoke(cli, ["status"])
    assert out.exit_code == 1 and "no index named 'default'" in out.output


def test_progress_is_a_line_per_n_files_when_stderr_is_not_a_terminal(
        capsys: pytest.CaptureFixture[str]) -> None:
    from ragctl.app.progress import RichReporter

    reporter = RichReporter(enabled=True)
    reporter.LINE_FILES = 2
    with reporter:
        reporter.phase("indexing", total=5)
        for _ in range(5):
            reporter.advance(files=1, passages=3)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert [line.split(" passages")[0] for line in lines] == [
        "indexing: 2 of 5 files, 6", "indexing: 4 of 5 files, 12"]


def test_index_summary_gives_the_time_of_each_phase(runner: CliRunner, tmp_path: Path) -> None:
    from ragctl.index.indexer import PHASES

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Tea\n\nGreen tea steeps for two minutes.\n")
    result = runner.invoke(cli, ["index", str(docs), "--force"])
    assert result.exit_code == 0, result.output
    time_row = " ".join(result.stdout[result.stdout.index("time"):].split())
    assert all(f"{p.label} " in time_row for p in PHASES)
    result = runner.invoke(cli, ["index", str(docs), "--force", "--json"])
    summary = json.loads(result.stdout)
    assert set(summary["phases"]) == {p.name for p in PHASES}
    assert all(t >= 0 for t in summary["phases"].values())
    assert sum(summary["phases"].values()) <= summary["seconds"] + 0.01
