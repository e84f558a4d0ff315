"""``ragctl mcp``: the indexed documents as Model Context Protocol tools, over stdio.

Three tools, built with the official ``mcp`` SDK: ``search`` (passages with file paths and
character offsets), ``ask`` (a short answer quoted from the documents, with its citations,
or ``abstained: true`` when they do not hold it) and ``ask_long`` (a few cited sentences).
A running ``ragctl serve`` for the same home answers them; otherwise this process loads
the models once and keeps them for the session. stdout carries the protocol alone: every
log line goes to stderr.

A tool that fails returns a tool result with ``isError: true`` whose text is the one-line
reason (``no index named 'default' ...``), never a traceback. Every line that arrives on
stdin is checked before the SDK sees it (:func:`check_line`): one that is not a valid
JSON-RPC 2.0 message for MCP is answered here with the JSON-RPC error the specification
names (-32700 parse error, -32600 invalid request, -32602 invalid params), so a client
never waits for a reply that would not come; valid lines pass through unchanged.
"""

from __future__ import annotations

import errno
import functools
import json
import logging
import os
import sys
import threading
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO, TypeVar, cast

from ragctl.config import load_settings
from ragctl.errors import RagctlError

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

INSTRUCTIONS = (
    "Search and question the user's own indexed documents (PDFs, notes, mail, web pages). "
    "Every answer cites its sources with file paths and character offsets; an answer with "
    "abstained=true means the documents do not hold it: say so rather than guess.")

# JSON-RPC 2.0 error codes (https://www.jsonrpc.org/specification#error_object)
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


def _citations(sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: s.get(k) for k in ("number", "path", "title", "place", "start_char", "end_char",
                                   "text", "answer_start", "answer_end")} for s in sources]


# ------------------------------------------------------------------------- tool failures

def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def failure_reason(tool: str, error: BaseException) -> str:
    """What a client is told when ``tool`` raised ``error``: one line, no traceback."""
    import sqlite3

    if isinstance(error, RagctlError):
        text = str(error)
    elif isinstance(error, sqlite3.DatabaseError):  # pages damaged on disk, met while reading
        text = f"the index database is damaged ({error}); run: ragctl doctor"
    elif isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        text = "no space left on the device; free some space and try again"
    elif isinstance(error, OSError) and error.filename:
        text = f"cannot use {error.filename}: {error.strerror or error}"
    else:
        text = f"{tool} failed unexpectedly: {type(error).__name__}: {error}"
    return _one_line(text) or f"{tool} failed: {type(error).__name__}"


def _invalid_arguments(error: Any) -> str:
    """A pydantic ValidationError as one line: each field and what is wrong with it (the
    rejected values stay out: they are the caller's data)."""
    return "; ".join(f"{'.'.join(str(part) for part in e['loc']) or 'arguments'}: {e['msg']}"
                     for e in error.errors())


def _reported(fn: F) -> F:
    """Turn an exception from the tool into an ``isError`` result carrying its reason, so
    the client reads why (the SDK would show only 'Error executing tool NAME' for anything
    but its own ToolError) and stderr gets one line, not a traceback."""

    @functools.wraps(fn)
    def tool(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            from mcp.types import CallToolResult, TextContent

            reason = failure_reason(fn.__name__, e)
            if isinstance(e, RagctlError):
                logger.warning("mcp tool %s: %s", fn.__name__, reason)
            else:
                logger.error("mcp tool %s: %s", fn.__name__, reason)
                logger.debug("mcp tool %s failed", fn.__name__, exc_info=True)
            return CallToolResult(content=[TextContent(type="text", text=reason)],
                                  is_error=True)

    return cast(F, tool)


def build_server() -> Any:
    from dataclasses import asdict

    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from pydantic import ValidationError

    from ragctl import __version__
    from ragctl.app.service import Backend

    class Server(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any],
                            context: Any = None) -> Any:
            """Arguments that fail a tool's schema are reported in one line too (the SDK
            passes on pydantic's message: several lines and a link)."""
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as e:
                if type(e) is ToolError and isinstance(e.__cause__, ValidationError):
                    raise ToolError(f"bad arguments for {name}: "
                                    f"{_invalid_arguments(e.__cause__)}") from e.__cause__
                raise

    backend = Backend()
    server = Server("ragctl", version=__version__, instructions=INSTRUCTIONS,
                    log_level="WARNING")

    def settings(index: str | None, **overrides: Any) -> dict[str, Any]:
        return asdict(load_settings(index=index, **overrides))

    @server.tool()
    @_reported
    def search(query: str, limit: int = 5, index: str | None = None) -> dict[str, Any]:
        """Find the passages of the user's documents that best match a query. Each hit has
        the file path, its place (page, heading, mail subject) and character offsets."""
        out = backend.call("/search", {"settings": settings(index, search_limit=limit),
                                       "query": query, "mode": "hybrid"})
        return {"query": query, "hits": [
            {k: h.get(k) for k in ("path", "title", "place", "start_char", "end_char", "text",
                                   "score")} for h in out["hits"]]}

    @server.tool()
    @_reported
    def ask(question: str, index: str | None = None) -> dict[str, Any]:
        """Answer a question from the user's documents: a short answer quoted from one of
        their sentences, with citations (path, offsets). abstained=true: not in them."""
        out = backend.call("/ask", {"settings": settings(index), "question": question,
                                    "log": True})
        return {"question": question, "answer": out.get("answer", ""),
                "abstained": out.get("abstained", False),
                "abstain_reason": out.get("abstain_reason"),
                "confidence": out.get("confidence"),
                "sources": _citations(out.get("sources", []))}

    @server.tool()
    @_reported
    def ask_long(question: str, words: int = 150, index: str | None = None) -> dict[str, Any]:
        """A longer answer from the user's documents: one cited sentence per facet of the
        question, at most about ``words`` words."""
        out = backend.call("/ask", {"settings": settings(index, long_words=words),
                                    "question": question, "long": {}, "log": True})
        return {"question": question, "answer": out.get("answer", ""),
                "abstained": out.get("abstained", False),
                "abstain_reason": out.get("abstain_reason"),
                "sources": _citations(out.get("sources", []))}

    return server


# ------------------------------------------------------------- checking incoming lines

class _Unreadable(ValueError):
    pass


def _no_constant(name: str) -> Any:
    raise _Unreadable(f"{name} is not JSON")


def _dump(reply: Any) -> str:
    return json.dumps(reply, separators=(",", ":"))


def _error(code: int, message: str, id_: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}


def _is_mcp_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _reply_id(message: dict[str, Any]) -> Any:
    """The id to answer with: the request's own when it is one JSON-RPC allows (a string or
    a number), else null, as the specification says for an id that cannot be read."""
    value = message.get("id")
    if _is_mcp_id(value) or isinstance(value, float):
        return value
    return None


def _check_message(message: Any) -> dict[str, Any] | None:
    """The error answering one decoded message, or None when it is a well-formed JSON-RPC
    2.0 request, notification or response that the SDK can take (or one that must not be
    answered, which :func:`check_line` then drops)."""
    if not isinstance(message, dict):
        return _error(INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
    reply_id = _reply_id(message)
    if message.get("jsonrpc") != "2.0":
        return _error(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', reply_id)
    if "method" not in message:
        if "result" in message or "error" in message:
            return None  # a response to the server; never answered
        return _error(INVALID_REQUEST, 'Invalid Request: no "method"', reply_id)
    if not isinstance(message["method"], str):
        return _error(INVALID_REQUEST, 'Invalid Request: "method" must be a string', reply_id)
    params = message.get("params")
    if "id" not in message:  # a notification
        if params is not None and not isinstance(params, (dict, list)):
            return _error(INVALID_REQUEST,
                          'Invalid Request: "params" must be an object or an array')
        return None
    if not _is_mcp_id(message["id"]):
        return _error(INVALID_REQUEST,
                      'Invalid Request: "id" must be a string or an integer', reply_id)
    if params is not None and not isinstance(params, dict):
        return _error(INVALID_PARAMS, 'Invalid params: "params" must be an object', reply_id)
    return None


def check_line(line: str) -> tuple[bool, str | None]:
    """Check one line from the client: ``(forward, reply)``. ``forward`` says to hand the
    line to the SDK unchanged; ``reply`` is a JSON-RPC error (or an array of them, for a
    batch) to write back instead. A line that is neither (blank, or a message that must not
    be answered but cannot be used) is dropped with a log line."""
    if not line.strip():
        return False, None
    try:
        message = json.loads(line, parse_constant=_no_constant)
    except (ValueError, RecursionError) as e:
        logger.warning("mcp: a line that is not JSON was answered with a parse error: %s",
                       _one_line(str(e))[:200])
        return False, _dump(_error(PARSE_ERROR, "Parse error: the line is not JSON"))
    if isinstance(message, list):
        # MCP does not take JSON-RPC batches: each request in one gets its own error
        if not message:
            return False, _dump(_error(INVALID_REQUEST, "Invalid Request: empty batch"))
        errors = []
        for item in message:
            error = _check_message(item)
            if error is None and isinstance(item, dict) and "method" in item and "id" in item:
                error = _error(INVALID_REQUEST, "Invalid Request: MCP does not take batches; "
                               "send each message on a line of its own", item["id"])
            if error is not None:
                errors.append(error)
        logger.warning("mcp: a batch of %d messages was refused", len(message))
        return False, _dump(errors) if errors else None
    error = _check_message(message)
    if error is not None:
        logger.warning("mcp: refused a message: %s", error["error"]["message"])
        return False, _dump(error)
    return _sdk_takes(line, message)


def _sdk_takes(line: str, message: dict[str, Any]) -> tuple[bool, str | None]:
    """Last check, with the SDK's own reader, so nothing it would drop unanswered is
    forwarded: a request it cannot read gets -32600 with its id."""
    from mcp.types import jsonrpc_message_adapter

    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception as e:
        if "method" in message and "id" in message:
            logger.warning("mcp: refused request %r: %s", message["id"],
                           _one_line(str(e))[:200])
            return False, _dump(_error(
                INVALID_REQUEST, "Invalid Request: not a valid MCP message", message["id"]))
        logger.warning("mcp: dropped a message that is not a valid MCP message: %s",
                       _one_line(str(e))[:200])
        return False, None
    return True, None


class _Output:
    """stdout for the protocol: whole lines, one writer at a time, flushed at once, so a
    reply made here never tears a message the SDK is writing."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def _put(self, text: str) -> None:
        with self._lock:
            self._stream.write(text.encode("utf-8"))
            self._stream.flush()

    async def write(self, text: str) -> None:
        import anyio

        await anyio.to_thread.run_sync(self._put, text)

    async def flush(self) -> None:
        return None


class _CheckedInput:
    """stdin for the SDK: the lines :func:`check_line` lets through; the others are
    answered on ``out`` here."""

    def __init__(self, lines: AsyncIterable[str], out: _Output) -> None:
        self._lines = lines
        self._out = out

    def __aiter__(self) -> AsyncIterator[str]:
        return self._checked()

    async def _checked(self) -> AsyncIterator[str]:
        async for line in self._lines:
            forward, reply = check_line(line)
            if reply is not None:
                await self._out.write(reply + "\n")
            if forward:
                yield line


@contextmanager
def _protocol_streams() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """The client's stdin and stdout, on descriptors of their own; while serving, fd 0
    reads the null device and fd 1 goes to stderr, so stray output (a native library's
    print) cannot reach the protocol. Where the descriptors cannot be moved, the streams
    are used in place."""
    sys.stdout.flush()
    try:
        wire_in, wire_out = os.dup(0), os.dup(1)
    except OSError:
        wire_in = wire_out = -1
    moved = False
    if wire_in >= 0:
        try:
            null = os.open(os.devnull, os.O_RDONLY)
            try:
                os.dup2(null, 0)
            finally:
                os.close(null)
            os.dup2(2, 1)
            moved = True
        except OSError:
            os.dup2(wire_in, 0)
    try:
        if moved:  # closefd=False: a reading thread may still sit on it at the end
            yield (os.fdopen(wire_in, "rb", closefd=False),
                   os.fdopen(wire_out, "wb", closefd=False))
        else:
            yield sys.stdin.buffer, sys.stdout.buffer
    finally:
        sys.stdout.flush()
        if moved:
            os.dup2(wire_in, 0)
            os.dup2(wire_out, 1)


async def _serve(server: Any) -> None:
    from io import TextIOWrapper

    import anyio
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server
    with _protocol_streams() as (wire_in, wire_out):
        out = _Output(wire_out)
        lines = anyio.wrap_file(TextIOWrapper(wire_in, encoding="utf-8", errors="replace"))
        async with stdio_server(stdin=cast(Any, _CheckedInput(lines, out)),
                                stdout=cast(Any, out)) as (read_stream, write_stream):
            await lowlevel.run(read_stream, write_stream,
                               lowlevel.create_initialization_options())


def run() -> None:
    """Serve the tools on stdin/stdout until the client closes them."""
    os.environ.setdefault("OTEL_SDK_DISABLED", "true")  # nothing is ever sent anywhere
    try:
        server = build_server()
        import anyio
    except ImportError:
        raise RagctlError("the MCP server needs the mcp package: pip install mcp") from None
    if not hasattr(server, "_lowlevel_server"):  # an SDK laid out otherwise: unchecked
        logger.warning("mcp: this mcp SDK version is not known here; malformed messages "
                       "will not be answered")
        server.run("stdio")
        return
    ours = logging.getLogger("ragctl")
    if ours.handlers:  # the command gave the root logger a stderr handler (for the SDK's
        ours.propagate = False  # lines); ragctl's own lines go out once, through their own
    anyio.run(_serve, server)
