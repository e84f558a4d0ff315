"""`ragctl mcp`: the tools listed and called through the official SDK's client over stdio."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ragctl.app.cli import cli

ROOT = Path(__file__).resolve().parents[1]
CHILD = ("import sys; sys.path.insert(0, {root!r}); import tests.conftest; "
         "from ragctl.app.cli import cli; cli()")


def test_tools_through_the_sdk_client(ragctl_home: Path, fake_embedder: str, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp import Client, StdioServerParameters

    monkeypatch.setenv("RAGCTL_GENERATOR", "fake-gen")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "boiler.txt").write_text("The boiler was serviced on 3 March 2025 by Hale & Sons.\n")
    assert CliRunner().invoke(cli, ["index", str(docs), "-q"]).exit_code == 0
    params = StdioServerParameters(command=sys.executable,
                                   args=["-c", CHILD.format(root=str(ROOT)), "mcp"],
                                   env=dict(os.environ), cwd=str(ROOT))

    async def session() -> tuple[list[str], dict, dict]:
        async with Client(params, read_timeout_seconds=120) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            found = await client.call_tool("search", {"query": "boiler serviced", "limit": 3})
            asked = await client.call_tool("ask", {"question": "Who serviced the boiler?"})
            return tools, found.structured_content or {}, asked.structured_content or {}

    tools, found, asked = asyncio.run(session())
    assert sorted(tools) == ["ask", "ask_long", "search"]
    hit = found["hits"][0]
    assert hit["path"] == str(docs / "boiler.txt")
    text = (docs / "boiler.txt").read_text()
    assert text[hit["start_char"]:hit["end_char"]].strip() == hit["text"]
    assert asked["question"] == "Who serviced the boiler?"
    assert "abstained" in asked and isinstance(asked["sources"], list)


# ------------------------------------------------- the protocol spoken over a raw pipe

REPLY_WAIT_S = 120  # a guard against a hang, never a measure: a reply comes or the test fails


class RawServer:
    """`ragctl mcp` in a child process, spoken to line by line; every read is bounded, so a
    request the server leaves unanswered fails the test instead of hanging the suite."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CHILD.format(root=str(ROOT)), "mcp"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=dict(os.environ), cwd=str(ROOT))
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr: list[bytes] = []
        self._threads = [threading.Thread(target=self._read_stdout, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for thread in self._threads:
            thread.start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        self.stderr.extend(self.proc.stderr)

    def send(self, line: str | bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((line.encode() if isinstance(line, str) else line) + b"\n")
        self.proc.stdin.flush()

    def receive(self) -> Any:
        try:
            line = self.lines.get(timeout=REPLY_WAIT_S)
        except queue.Empty:
            pytest.fail(f"no reply from `ragctl mcp` in {REPLY_WAIT_S} s; stderr:\n"
                        + b"".join(self.stderr).decode(errors="replace"))
        if line is None:
            pytest.fail("`ragctl mcp` closed stdout; stderr:\n"
                        + b"".join(self.stderr).decode(errors="replace"))
        return json.loads(line)  # stdout carries protocol messages alone

    def request(self, id_: int, method: str, params: dict[str, Any] | None = None) -> Any:
        self.send(json.dumps({"jsonrpc": "2.0", "id": id_, "method": method,
                              **({"params": params} if params is not None else {})}))
        return self.receive()

    def initialize(self) -> None:
        reply = self.request(1, "initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}})
        assert reply["id"] == 1 and "serverInfo" in reply["result"], reply
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def close(self) -> str:
        """Close stdin (the client leaves), wait for the exit, return stderr."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=REPLY_WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail("`ragctl mcp` did not exit when its stdin closed")
        for thread in self._threads:
            thread.join(timeout=REPLY_WAIT_S)
        assert self.lines.get_nowait() is None, "output after the last reply"
        return b"".join(self.stderr).decode(errors="replace")


@pytest.fixture
def raw_server(fake_embedder: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[RawServer]:
    monkeypatch.setenv("RAGCTL_GENERATOR", "fake-gen")
    server = RawServer()
    yield server
    if server.proc.poll() is None:
        server.proc.kill()
        server.proc.wait()


MALFORMED = [  # (line sent, JSON-RPC error code, id the error must carry)
    ("this is not json", -32700, None),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/li', -32700, None),
    ("", None, None),  # a blank line is no message: nothing is answered (checked below)
    ("[]", -32600, None),
    ("42", -32600, None),
    ('"ping"', -32600, None),
    ('{"jsonrpc": "1.0", "id": 3, "method": "ping"}', -32600, 3),
    ('{"id": 4, "method": "ping"}', -32600, 4),
    ('{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', -32600, None),
    ('{"jsonrpc": "2.0", "id": [5], "method": "ping"}', -32600, None),
    ('{"jsonrpc": "2.0", "id": true, "method": "ping"}', -32600, None),
    ('{"jsonrpc": "2.0", "id": null, "method": "ping"}', -32600, None),
    ('{"jsonrpc": "2.0", "id": 6, "method": 7}', -32600, 6),
    ('{"jsonrpc": "2.0", "id": 8}', -32600, 8),
    ('{"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": 5}', -32602, 9),
    ('{"jsonrpc": "2.0", "id": "ten", "method": "tools/list", "params": "x"}', -32602, "ten"),
    ('{"jsonrpc": "2.0", "id": 11, "method": "tools/list", "params": [1, 2]}', -32602, 11),
    ('{"jsonrpc": "2.0", "method": "notifications/initialized", "params": 3}', -32600, None),
]


def test_malformed_messages_get_json_rpc_errors(raw_server: RawServer) -> None:
    for line, code, id_ in MALFORMED:
        if code is None:
            raw_server.send(line)
            continue
        raw_server.send(line)
        reply = raw_server.receive()
        assert reply == {"jsonrpc": "2.0", "id": id_, "error": reply["error"]}, line
        assert reply["error"]["code"] == code, line
        assert isinstance(reply["error"]["message"], str) and reply["error"]["message"], line
    # then a normal session still works on the same connection
    raw_server.initialize()
    listed = raw_server.request(2, "tools/list")
    assert sorted(t["name"] for t in listed["result"]["tools"]) == ["ask", "ask_long", "search"]
    # a batch: MCP takes none, so each request in it is refused under its own id, and the
    # notification in it is not answered
    raw_server.send(json.dumps([
        {"jsonrpc": "2.0", "id": 20, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 21, "method": "tools/list"},
        17]))
    batch = raw_server.receive()
    assert isinstance(batch, list)
    assert [(e["id"], e["error"]["code"]) for e in batch] == [
        (20, -32600), (21, -32600), (None, -32600)]
    # a well-formed request for a method there is not, and one with params wrong for it
    unknown = raw_server.request(22, "no/such/method")
    assert (unknown["id"], unknown["error"]["code"]) == (22, -32601)
    wrong = raw_server.request(23, "tools/call", {"arguments": {}})  # no tool name
    assert (wrong["id"], wrong["error"]["code"]) == (23, -32602)
    # garbage between good requests changes nothing for the next one
    raw_server.send(b"\xff\xfe not utf-8 {")
    assert raw_server.receive()["error"]["code"] == -32700
    assert raw_server.request(24, "ping") == {"jsonrpc": "2.0", "id": 24, "result": {}}
    stderr = raw_server.close()
    assert "Traceback" not in stderr


def _call(server: RawServer, id_: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    reply = server.request(id_, "tools/call", {"name": tool, "arguments": arguments})
    assert reply["id"] == id_ and "result" in reply, reply
    return dict(reply["result"])


def test_tool_errors_carry_the_reason(raw_server: RawServer, ragctl_home: Path) -> None:
    raw_server.initialize()
    for id_, (tool, arguments) in enumerate([
            ("search", {"query": "boiler"}),
            ("ask", {"question": "Who serviced the boiler?"}),
            ("ask_long", {"question": "What happened to the boiler?"})], start=2):
        result = _call(raw_server, id_, tool, arguments)
        assert result["isError"] is True, result
        [content] = result["content"]
        assert content["type"] == "text"
        text = content["text"]
        assert "\n" not in text
        assert text.startswith("no index named 'default'"), text
        assert "ragctl index PATH" in text
    stderr = raw_server.close()
    assert "Traceback" not in stderr
    assert "no index named 'default'" in stderr  # one log line says what went wrong


def test_damaged_index_and_bad_argument_are_reported(raw_server: RawServer,
                                                     ragctl_home: Path) -> None:
    from ragctl.config import index_dir
    from ragctl.store.collection import DB_FILE

    damaged = index_dir("broken")
    damaged.mkdir(parents=True)
    (damaged / DB_FILE).write_bytes(b"this is not an SQLite database" * 100)
    raw_server.initialize()
    result = _call(raw_server, 2, "search", {"query": "boiler", "index": "broken"})
    assert result["isError"] is True
    [content] = result["content"]
    assert "damaged" in content["text"] and "\n" not in content["text"], content
    assert (damaged / DB_FILE).read_bytes() == b"this is not an SQLite database" * 100
    bad = _call(raw_server, 3, "ask", {"question": "anything", "index": "../outside"})
    assert bad["isError"] is True and "\n" not in bad["content"][0]["text"], bad
    stderr = raw_server.close()
    assert "Traceback" not in stderr


@pytest.mark.parametrize(("line", "forward", "reply"), [
    ('{"jsonrpc": "2.0", "id": 1, "method": "ping"}', True, None),
    ('{"jsonrpc": "2.0", "id": "a", "method": "tools/list", "params": {}}', True, None),
    ('{"jsonrpc": "2.0", "method": "notifications/initialized"}', True, None),
    ('{"jsonrpc": "2.0", "id": 5, "result": {}}', True, None),  # a response to the server
    ("   ", False, None),
    # a JSON-RPC notification with positional params: never answered, and MCP cannot use it
    ('{"jsonrpc": "2.0", "method": "notifications/initialized", "params": [1]}', False, None),
    ('{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', False, (-32600, 1.5)),
    ('{"jsonrpc": "2.0", "id": NaN, "method": "ping"}', False, (-32700, None)),
    ("[" * 100_000, False, (-32700, None)),
    ('{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": null}', True, None),
])
def test_check_line(line: str, forward: bool, reply: tuple[int, Any] | None) -> None:
    from ragctl.app.mcpserver import check_line

    forwarded, answer = check_line(line)
    assert forwarded is forward
    if reply is None:
        assert answer is None
    else:
        assert answer is not None
        error = json.loads(answer)
        assert (error["error"]["code"], error["id"], error["jsonrpc"]) == (*reply, "2.0")


def test_unexpected_tool_failure_is_one_line(caplog: pytest.LogCaptureFixture) -> None:
    import sqlite3

    from mcp.types import CallToolResult, TextContent

    from ragctl.app.mcpserver import _reported
    from ragctl.errors import IndexNotFoundError

    def crashes(question: str) -> dict[str, Any]:
        raise ValueError("first line\nsecond line")

    def damaged(question: str) -> dict[str, Any]:
        raise sqlite3.DatabaseError("file is not a database")

    def missing(question: str) -> dict[str, Any]:
        raise IndexNotFoundError("no index named 'x'")

    texts: list[str] = []
    for fn in (crashes, damaged, missing):
        with caplog.at_level("DEBUG", logger="ragctl"):
            result = _reported(fn)(question="q")
        assert isinstance(result, CallToolResult) and result.is_error
        [content] = result.content
        assert isinstance(content, TextContent)
        texts.append(content.text)
    assert texts == ["crashes failed unexpectedly: ValueError: first line second line",
                     "the index database is damaged (file is not a database); "
                     "run: ragctl doctor",
                     "no index named 'x'"]
    shown = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert [r.levelname for r in shown] == ["ERROR", "ERROR", "WARNING"]
    assert all(r.exc_info is None and "\n" not in r.getMessage() for r in shown)
    assert _reported(lambda question: {"answer": question})(question="q") == {"answer": "q"}
