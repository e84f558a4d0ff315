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
