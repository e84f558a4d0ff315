"""`ragctl serve`: a real service process (uvicorn on a Unix socket) with the test fakes."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragctl.cli import cli
from ragctl.client import ServiceError, request

ROOT = Path(__file__).resolve().parents[1]
# the service process registers the same fakes as this one (tests/conftest.py)
CHILD = ("import sys; sys.path.insert(0, {root!r}); import tests.conftest; "
         "from ragctl.cli import cli; cli()")


def start(home: Path, *args: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", CHILD.format(root=str(ROOT)), "serve",
                             *args], cwd=ROOT, env=os.environ.copy(), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for _ in range(300):
        if proc.poll() is not None:
            raise AssertionError(f"serve exited: {proc.communicate()}")
        try:
            if request("GET", "/status", home=home, timeout=2) is not None:
                return proc
        except Exception:
            pass
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("the service did not start")


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def indexed(ragctl_home: Path, fake_embedder: str, tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RAGCTL_GENERATOR", "fake-gen")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "trains.txt").write_text("The night train to Porto leaves at nine from "
                                     "platform four.\n\nTickets cost twelve euros.\n")
    (docs / "cats.md").write_text("# Cats\n\nCats sleep sixteen hours a day.\n")
    assert CliRunner().invoke(cli, ["index", str(docs), "-q"]).exit_code == 0
    return docs


@pytest.fixture
def service(indexed: Path, ragctl_home: Path) -> Iterator[subprocess.Popen[str]]:
    proc = start(ragctl_home)
    yield proc
    stop(proc)


def _answer(args: list[str]) -> tuple[int, dict]:
    r = CliRunner().invoke(cli, ["ask", *args, "--json", "--no-log"])
    data = json.loads(r.stdout)
    data.pop("timings", None)
    return r.exit_code, data


def test_ask_and_search_through_the_socket_equal_in_process(
        service: subprocess.Popen[str], ragctl_home: Path) -> None:
    sock = ragctl_home / "serve.sock"
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    q = "When does the night train to Porto leave?"
    assert _answer([q]) == _answer([q, "--no-service"])
    r1 = CliRunner().invoke(cli, ["search", "train to Porto", "--json"])
    r2 = CliRunner().invoke(cli, ["search", "train to Porto", "--json", "--no-service"])
    assert r1.exit_code == 0 and json.loads(r1.stdout) == json.loads(r2.stdout)
    status = request("GET", "/status", home=ragctl_home)
    assert status is not None and status["requests"] >= 2 and status["indexes"] == ["default"]
    # the answer came from the service: the in-process run did not count as a request
    r = CliRunner().invoke(cli, ["serve", "--status", "--json"])
    assert json.loads(r.stdout)["pid"] == service.pid


def test_streamed_tokens_and_errors(service: subprocess.Popen[str], ragctl_home: Path) -> None:
    tokens: list[str] = []
    out = request("POST", "/ask", {"question": "When does the train leave?",
                                   "options": {"free": True, "abstain": False}},
                  home=ragctl_home, on_token=tokens.append)
    assert out is not None and out["schema"] == "ragctl.answer/1"
    assert out["raw_answer"] == "3 pm [1]"  # unsupported by the documents: not shown
    assert "".join(tokens).strip().startswith("3 pm")  # the fake generator's words
    with pytest.raises(ServiceError, match="question is empty"):
        request("POST", "/ask", {"question": "  "}, home=ragctl_home)
    r = CliRunner().invoke(cli, ["ask", "x", "--index", "nope"])
    assert r.exit_code == 1 and "no index named 'nope'" in r.output


def test_concurrent_clients_are_all_answered(service: subprocess.Popen[str],
                                             ragctl_home: Path) -> None:
    results: list[dict | None] = []

    def client(k: int) -> None:
        for _ in range(3):
            results.append(request("POST", "/ask", {"question": f"Where do cats sleep {k}?"},
                                   home=ragctl_home))

    threads = [threading.Thread(target=client, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 12 and all(r and r["schema"] == "ragctl.answer/1" for r in results)


def test_index_changes_are_seen(service: subprocess.Popen[str], indexed: Path) -> None:
    (indexed / "boat.txt").write_text("The ferry to Lisbon departs from pier seven.\n")
    assert CliRunner().invoke(cli, ["index", "-q"]).exit_code == 0
    r = CliRunner().invoke(cli, ["search", "ferry to Lisbon", "--json", "-n", "1"])
    assert json.loads(r.stdout)["hits"][0]["path"].endswith("boat.txt")


def test_stop_then_fallback_and_a_stale_socket(indexed: Path, ragctl_home: Path) -> None:
    proc = start(ragctl_home)
    r = CliRunner().invoke(cli, ["serve", "--stop"])
    assert r.exit_code == 0 and f"pid {proc.pid}" in r.output
    proc.wait(timeout=30)
    assert not (ragctl_home / "serve.sock").exists()
    assert CliRunner().invoke(cli, ["serve", "--status"]).exit_code == 1
    # a socket file left by a killed service: commands work in-process, serve replaces it
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(ragctl_home / "serve.sock"))
    s.close()
    assert request("GET", "/status", home=ragctl_home) is None
    r = CliRunner().invoke(cli, ["search", "cats", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["hits"]
    proc = start(ragctl_home)
    try:
        assert request("GET", "/status", home=ragctl_home)["pid"] == proc.pid  # type: ignore[index]
    finally:
        stop(proc)


def test_http_needs_the_token(indexed: Path, ragctl_home: Path) -> None:
    import http.client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = start(ragctl_home, "--http", str(port))
    try:
        token_file = ragctl_home / "serve.token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        token = token_file.read_text().strip()

        def get(headers: dict[str, str]) -> int:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("GET", "/status", headers=headers)
            return conn.getresponse().status

        assert get({}) == 401
        assert get({"Authorization": "Bearer wrong"}) == 401
        assert get({"Authorization": f"Bearer {token}"}) == 200
    finally:
        stop(proc)


# ----------------------------------------------------------------- the quick client

def test_quick_search_is_the_command_lines_output(service: subprocess.Popen[str],
                                                  ragctl_home: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """`ragctl search` answered by the service without click or rich in the client: the
    same bytes as the command line working in-process, and it did go through the service."""
    from ragctl import quick

    before = request("GET", "/status", home=ragctl_home)["requests"]  # type: ignore[index]
    cases = [["train to Porto"], ["train to Porto", "--json"], ["cats", "-n", "1", "--mode",
             "bm25"], ["--index=default", "--limit=1", "cats"], ["--", "-cats"]]
    for args in cases:
        assert quick.search(args) == 0
        out = capsys.readouterr().out
        r = CliRunner().invoke(cli, ["search", "--no-service", *args])
        assert r.exit_code == 0 and out == r.stdout, args
    assert "Porto" in CliRunner().invoke(cli, ["search", "train to Porto"]).stdout
    after = request("GET", "/status", home=ragctl_home)["requests"]  # type: ignore[index]
    assert after - before >= len(cases) + 1
    # an error reads as the command line's, with its exit status
    assert quick.search(["cats", "--index", "nope"]) == 1
    err = capsys.readouterr().err
    r = CliRunner().invoke(cli, ["search", "cats", "--index", "nope", "--no-service"])
    assert r.exit_code == 1 and err == r.stderr
    # what it does not handle goes to the command line
    for args in (["cats", "--help"], ["cats", "--no-service"], ["cats", "-n", "0"],
                 ["cats", "--mode", "fuzzy"], ["a", "b"], [], ["cats", "-n5"], ["cats", "-n"]):
        assert quick.search(args) is None, args


def test_quick_search_in_a_coloured_terminal(service: subprocess.Popen[str], indexed: Path,
                                             tmp_path: Path) -> None:
    """Through the real entry point, with FORCE_COLOR and another working folder: the
    same escape codes and relative paths as the command line in-process."""
    env = {**os.environ, "FORCE_COLOR": "1"}
    quick = subprocess.run([sys.executable, "-m", "ragctl", "search", "night train"],
                           cwd=indexed, env=env, capture_output=True, text=True, timeout=60)
    slow = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT)), "search",
                           "night train", "--no-service"], cwd=indexed, env=env,
                          capture_output=True, text=True, timeout=120)
    assert quick.returncode == 0 == slow.returncode, (quick.stderr, slow.stderr)
    assert "\x1b[" in quick.stdout and " 1. \x1b[0m\x1b[36mtrains.txt" in quick.stdout
    assert quick.stdout == slow.stdout


def test_quick_search_without_a_service(indexed: Path, ragctl_home: Path) -> None:
    from ragctl import quick

    assert quick.search(["cats"]) is None  # no socket
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(ragctl_home / "serve.sock"))  # a socket file nobody listens on
    s.close()
    assert quick.search(["cats"]) is None


def test_quick_knows_the_search_modes() -> None:
    from ragctl import quick
    from ragctl.retrieve import MODES

    assert quick.MODES == MODES


@pytest.mark.parametrize("env", [{"RAGCTL_HOME": "~/x/../rh"}, {"XDG_CONFIG_HOME": "/tmp/xdg"},
                                 {}])
def test_quick_home_is_the_config_home(env: dict[str, str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from ragctl import quick
    from ragctl.config import home_dir

    for key in ("RAGCTL_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert quick.home() == str(home_dir())
