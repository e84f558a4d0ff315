"""`ragctl serve`: a real service process (uvicorn on a Unix socket) with the test fakes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
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

from ragctl.app.cli import cli
from ragctl.app.client import ServiceError, request

ROOT = Path(__file__).resolve().parents[1]
# the service process registers the same fakes as this one (tests/conftest.py)
CHILD = ("import sys; sys.path.insert(0, {root!r}); import tests.conftest; "
         "from ragctl.app.cli import cli; cli()")


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
    from ragctl.app import quick

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
    from ragctl.app import quick

    assert quick.search(["cats"]) is None  # no socket
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(ragctl_home / "serve.sock"))  # a socket file nobody listens on
    s.close()
    assert quick.search(["cats"]) is None


def test_quick_knows_the_search_modes() -> None:
    from ragctl.app import quick
    from ragctl.ask.retrieve import MODES

    assert quick.MODES == MODES


@pytest.mark.parametrize("env", [{"RAGCTL_HOME": "~/x/../rh"}, {"XDG_CONFIG_HOME": "/tmp/xdg"},
                                 {}])
def test_quick_home_is_the_config_home(env: dict[str, str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from ragctl.app import quick
    from ragctl.config import home_dir

    for key in ("RAGCTL_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert quick.home() == str(home_dir())


# ------------------------------------------------- children, input checks and cleanup

def _wait_exit(pid: int) -> int:
    """The exit status of our child ``pid`` (a guard against a hang, not a timing test)."""
    for _ in range(600):
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # reaped already (subprocess's own clean-up)
            return 0
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    raise AssertionError(f"pid {pid} did not exit")


def _background(ragctl_home: Path) -> int:
    r = CliRunner().invoke(cli, ["serve", "--background", "--json"])
    assert r.exit_code == 0, r.output
    pid = int(json.loads(r.stdout)["pid"])
    assert (ragctl_home / "serve.sock").is_socket()
    assert (ragctl_home / "serve.pid").read_text().strip() == str(pid)
    return pid


def test_background_service_ignores_modules_in_the_working_folder(
        ragctl_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A downloaded folder with a json.py, inspect.py or email.py: `serve --background`
    started there must not import them (the child process gets no such sys.path entry)."""
    folder = tmp_path / "downloads"
    folder.mkdir()
    marker = tmp_path / "imported.txt"
    for name in ("json", "inspect", "email"):
        (folder / f"{name}.py").write_text(
            f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\n")
    monkeypatch.chdir(folder)
    pid = _background(ragctl_home)
    try:
        status = request("GET", "/status", home=ragctl_home)
        assert status is not None and status["pid"] == pid
        # a request through the whole stack: no index yet, the command line's error
        with pytest.raises(ServiceError, match="no index named 'default'"):
            request("POST", "/search", {"query": "cats"}, home=ragctl_home)
    finally:
        r = CliRunner().invoke(cli, ["serve", "--stop"])
    assert r.exit_code == 0 and f"pid {pid}" in r.output
    assert not marker.exists(), marker.read_text()


def test_stop_command_removes_the_socket_and_the_pid_file(ragctl_home: Path,
                                                          tmp_path: Path) -> None:
    pid = _background(ragctl_home)
    r = CliRunner().invoke(cli, ["serve", "--stop", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout) == {"stopped": pid}
    assert not (ragctl_home / "serve.sock").exists()
    assert not (ragctl_home / "serve.pid").exists()
    assert _wait_exit(pid) == 0
    r = CliRunner().invoke(cli, ["serve", "--stop"])
    assert r.exit_code == 0 and "no service was running" in r.output


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_removes_the_socket_and_the_pid_file(sig: signal.Signals,
                                                      ragctl_home: Path) -> None:
    pid = _background(ragctl_home)
    os.kill(pid, sig)
    assert _wait_exit(pid) == 0  # a clean end, not killed by the signal
    assert not (ragctl_home / "serve.sock").exists()
    assert not (ragctl_home / "serve.pid").exists()


def test_ending_keeps_the_files_of_a_newer_service(ragctl_home: Path) -> None:
    """The socket and pid file were taken over meanwhile (a newer service): the old one
    leaves them where they are when it ends."""
    pid = _background(ragctl_home)
    sock_path = ragctl_home / "serve.sock"
    sock_path.unlink()
    newer = socket.socket(socket.AF_UNIX)
    try:
        newer.bind(str(sock_path))
        newer.listen()
        (ragctl_home / "serve.pid").write_text(f"{os.getpid()}\n")
        os.kill(pid, signal.SIGTERM)
        assert _wait_exit(pid) == 0
        assert sock_path.is_socket()
        assert (ragctl_home / "serve.pid").read_text() == f"{os.getpid()}\n"
    finally:
        newer.close()


def test_stop_leaves_a_live_pid_file_of_a_service_without_socket(ragctl_home: Path) -> None:
    """Nothing listens on the socket: the socket file is stale, but the pid file names a
    live process (a service just starting, or one ending): it is not removed."""
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(ragctl_home / "serve.sock"))
    s.close()
    (ragctl_home / "serve.pid").write_text(f"{os.getpid()}\n")
    r = CliRunner().invoke(cli, ["serve", "--stop"])
    assert r.exit_code == 0 and "no service was running" in r.output
    assert not (ragctl_home / "serve.sock").exists()
    assert (ragctl_home / "serve.pid").exists()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (ragctl_home / "serve.pid").write_text(f"{dead.pid}\n")
    assert CliRunner().invoke(cli, ["serve", "--stop"]).exit_code == 0
    assert not (ragctl_home / "serve.pid").exists()


class FakeService:
    """What the web layer needs of a Service: the answers here are canned."""

    def __init__(self) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.worker = ThreadPoolExecutor(max_workers=1)
        self.busy = 0
        self.requests = 0
        self.last_request = 0.0
        self.seen: list[dict] = []

    def ask(self, payload: dict, on_token: object) -> dict:
        from ragctl.app.service import check_ask

        payload = check_ask(payload)  # as the real one does
        self.seen.append(payload)
        if payload["question"] == "fail inside":
            raise KeyError(f"secret detail from {__file__}")
        return {"schema": "ragctl.answer/1", "answer": "ok"}

    def search(self, payload: dict) -> dict:
        self.seen.append(payload)
        return {"query": payload["query"], "hits": []}

    def status(self) -> dict:
        return {"pid": os.getpid()}

    def close(self) -> None:
        pass


@pytest.fixture
def fake_service(ragctl_home: Path) -> Iterator[FakeService]:
    """The real web layer (Starlette on uvicorn, on the home's socket) over a fake."""
    import uvicorn

    from ragctl.app.service import make_app

    fake = FakeService()
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(ragctl_home / "serve.sock"))
    server = uvicorn.Server(uvicorn.Config(make_app(fake, http_token=None),
                                           log_level="critical", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(300):
        if server.started:
            break
        time.sleep(0.1)
    assert server.started
    yield fake
    server.should_exit = True
    thread.join(timeout=60)
    sock.close()


def _raw(home: Path, head: bytes, body: bytes = b"") -> tuple[int, dict]:
    """Send ``head`` and ``body`` as they are, and read the whole reply."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(60)  # a service that waits for the rest of the body fails here
        s.connect(str(home / "serve.sock"))
        # the service may answer and close before it took it all: as it should
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            s.sendall(head + body)
        data = b""
        # after the reply, a socket closed with the body unread reads as reset, not as EOF
        with contextlib.suppress(ConnectionResetError):
            while chunk := s.recv(65536):
                data += chunk
    header, _, content = data.partition(b"\r\n\r\n")
    return int(header.split()[1]), json.loads(content)


def _post(home: Path, path: str, body: bytes) -> tuple[int, dict]:
    head = (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    return _raw(home, head, body)


def _clean_error(reply: dict) -> str:
    """The error line, checked to be one line without internals."""
    assert set(reply) == {"error", "exit"} and isinstance(reply["exit"], int), reply
    error = reply["error"]
    assert error and "\n" not in error and len(error) < 300, error
    for internal in ("Traceback", ".py", "Error:", "Exception", "__init__", "<class"):
        assert internal not in error, error
    return error


BAD_REQUESTS = [
    ("/ask", b'{"question": 5}', "question must be a string, not a number"),
    ("/ask", b'{"question": "q", "settings": "x"}', "settings must be an object"),
    ("/ask", b'[{"question": "q"}]', "must be a JSON object, not an array"),
    ("/ask", b'"q"', "must be a JSON object, not a string"),
    ("/ask", b'{"question": "q", "settings": {"search_limit": "10"}}',
     "settings.search_limit must be an integer, not a string"),
    ("/ask", b'{"question": "q", "settings": {"top_k": 2.5}}', "settings.top_k must be an"),
    ("/ask", b'{"question": "q", "settings": {"index": null}}', "settings.index must be a str"),
    ("/ask", b'{"question": "q", "settings": {"filter_threshold": true}}', "must be a number"),
    ("/ask", b'{"question": "q", "options": {"top_k": "5"}}', "options.top_k must be an"),
    ("/ask", b'{"question": "q", "options": {"top_k": 0}}', "options.top_k must be between"),
    ("/ask", b'{"question": "q", "options": {"context": "all"}}',
     "options.context must be one of full, passages, filtered"),
    ("/ask", b'{"question": "q", "options": {"nope": 1}}', "options has no field 'nope'"),
    ("/ask", b'{"question": "q", "options": [1]}', "options must be an object"),
    ("/ask", b'{"question": "q", "long": true}', "long must be an object"),
    ("/ask", b'{"question": "q", "long": {"words": "many"}}', "long.words must be an int"),
    ("/ask", b'{"question": "q", "long": {"cluster_threshold": 1e999}}', "too large"),
    ("/ask", b'{"question": "q", "long": {"cluster_threshold": 2.5}}', "between 0 and 2"),
    ("/ask", b'{"question": "q", "options": {"re_threshold": NaN}}', "not JSON"),
    ("/ask", b'{"question": "q", "log": "yes"}', "log must be true or false"),
    ("/ask", b'{"question": "q", "stream": 1}', "stream must be true or false"),
    ("/ask", b'{"question": "\\ud800"}', "not a character"),
    ("/ask", b'{"question": "q"', "not JSON"),
    ("/ask", b"", "not JSON"),
    ("/ask", '{"question": "caf\u00e9"}'.encode("latin-1"), "not UTF-8"),
    ("/search", b'{"query": ["cats"]}', "query must be a string, not an array"),
    ("/search", b'{"query": "cats", "mode": 3}', "mode must be a string"),
    ("/search", b'{"query": "cats", "mode": "fuzzy"}', "unknown search mode 'fuzzy'"),
    ("/search", b'{"query": "cats", "settings": {"search_limit": "ten"}}',
     "settings.search_limit must be an integer"),
    ("/search", b'{"query": "cats", "client": {"flags": {"search_limit": "5"}}}',
     "client.flags.search_limit must be an integer"),
    ("/search", b'{"query": "cats", "client": {"flags": {"generator": "x"}}}',
     "client.flags takes only"),
    ("/search", b'{"query": "cats", "client": {"environ": {"RAGCTL_INDEX": {}}}}',
     "client.environ 'RAGCTL_INDEX' must be a string"),
    ("/search", b'{"query": "cats", "client": "me"}', "client must be an object"),
]


def test_bad_requests_get_400_with_one_line(fake_service: FakeService,
                                            ragctl_home: Path) -> None:
    for path, body, expected in BAD_REQUESTS:
        status, reply = _post(ragctl_home, path, body)
        assert status == 400, (body, reply)
        assert expected in _clean_error(reply), (body, reply)
    assert fake_service.seen == []  # none of them reached the work
    # the well-formed ones do, typed as the fields ask
    status, reply = _post(ragctl_home, "/ask", json.dumps(
        {"question": "q", "settings": {"top_k": 3, "filter_threshold": 1, "unknown": [1]},
         "options": {"top_k": None, "abstain": False}, "long": None}).encode())
    assert status == 200 and reply["answer"] == "ok"
    seen = fake_service.seen[-1]
    assert seen["settings"] == {"top_k": 3, "filter_threshold": 1.0}
    assert seen["options"] == {"top_k": None, "abstain": False} and seen["log"] is False
    status, reply = _post(ragctl_home, "/search", b'{"query": "cats", "client": {"flags": '
                          b'{"search_limit": 5}, "environ": {"TERM": "xterm"}, "width": 90}}')
    assert status == 200 and reply == {"query": "cats", "hits": []}
    # streamed: a bad field is refused before the stream starts
    status, reply = _post(ragctl_home, "/ask", b'{"question": "q", "stream": true, '
                                               b'"options": {"free": "yes"}}')
    assert status == 400 and "options.free must be true or false" in _clean_error(reply)
    # the client shows the one line, with the exit status
    with pytest.raises(ServiceError, match=r"^options.top_k must be an integer, not a string$"):
        request("POST", "/ask", {"question": "q", "options": {"top_k": "5"}}, home=ragctl_home)


def test_a_failure_inside_is_500_without_details(fake_service: FakeService,
                                                 ragctl_home: Path) -> None:
    for body in (b'{"question": "fail inside"}', b'{"question": "fail inside", "stream": false}'):
        status, reply = _post(ragctl_home, "/ask", body)
        assert status == 500
        error = _clean_error(reply)
        assert "secret" not in error and "KeyError" not in error
    tokens: list[str] = []
    with pytest.raises(ServiceError) as caught:  # streamed: the error line of the stream
        request("POST", "/ask", {"question": "fail inside"}, home=ragctl_home,
                on_token=tokens.append)
    assert "secret" not in str(caught.value) and "KeyError" not in str(caught.value)
    # Starlette's own errors are JSON too
    status, reply = _raw(ragctl_home, b"GET /nowhere HTTP/1.1\r\nHost: x\r\n"
                                      b"Connection: close\r\n\r\n")
    assert status == 404 and "no such endpoint" in _clean_error(reply)
    status, reply = _raw(ragctl_home, b"GET /ask HTTP/1.1\r\nHost: x\r\n"
                                      b"Connection: close\r\n\r\n")
    assert status == 405 and "GET is not allowed" in _clean_error(reply)


def test_deep_nesting_is_refused_without_recursion(fake_service: FakeService,
                                                   ragctl_home: Path) -> None:
    from ragctl.app.service import MAX_DEPTH, nesting

    # one level inside the body object: 1 + MAX_DEPTH - 1 levels pass, one more does not
    ok = b'{"question": "q", "extra": ' + b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1) + b"}"
    status, reply = _post(ragctl_home, "/ask", ok)
    assert status == 200, reply
    too_deep = ok.replace(b"[", b"[[", 1).replace(b"]", b"]]", 1)
    status, reply = _post(ragctl_home, "/ask", too_deep)
    assert status == 400 and f"more than {MAX_DEPTH} levels" in _clean_error(reply)
    # far past the recursion limit, objects and arrays, brackets inside strings ignored
    n = 100_000
    deep = b'{"question": ' + b'{"a": [' * n + b"]}" * n + b"}"
    status, reply = _post(ragctl_home, "/ask", deep)
    assert status == 400 and "levels deep" in _clean_error(reply)
    assert nesting('{"a": "[[[[{{{{\\"[[[", "b": [[]]}') == 3
    # the depth is measured in one pass: escaped quotes in an unterminated string do not
    # make it scan the rest again from each of them (the socket's timeout would trip)
    status, reply = _post(ragctl_home, "/ask", b'{"question": "' + b'a\\"' * 300_000)
    assert status == 400 and "not JSON" in _clean_error(reply)
    assert fake_service.seen[0]["question"] == "q" and len(fake_service.seen) == 1


def test_a_huge_body_is_cut_off(fake_service: FakeService, ragctl_home: Path) -> None:
    from ragctl.app.service import MAX_BODY

    # announced: refused before any of it is read (the rest never comes)
    head = (b"POST /ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 200000000\r\n\r\n")
    status, reply = _raw(ragctl_home, head, b'{"question": "')
    assert status == 413 and "larger than" in _clean_error(reply)
    # not announced (chunked): refused once past the limit, without waiting for its end
    head = (b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n")
    first = b'{"query": "cats'
    body = b"%x\r\n%s\r\n" % (len(first), first) + b"10000\r\n%s\r\n" % (b"x" * 0x10000) * 40
    status, reply = _raw(ragctl_home, head, body)
    assert status == 413 and f"larger than {MAX_BODY} bytes" in _clean_error(reply)
    # up to the limit is taken
    pad = MAX_BODY - len(b'{"question": "q", "pad": ""}')
    status, reply = _post(ragctl_home, "/ask", b'{"question": "q", "pad": "' + b"p" * pad + b'"}')
    assert status == 200, reply
    status, reply = _post(ragctl_home, "/ask", b'{"question": "q", "pad": "' + b"p" * pad +
                          b'p"}')
    assert status == 413
    assert [p["question"] for p in fake_service.seen] == ["q"]
