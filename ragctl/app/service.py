"""``ragctl serve``: the models kept loaded for one ragctl home, answering over a socket.

The service listens on a Unix socket in the home (``serve.sock``, mode 0600, so only its
owner can connect) and, with ``--http PORT``, on ``127.0.0.1:PORT`` too, where every
request must carry ``Authorization: Bearer <token>``; the token is made on the first
start and kept in ``serve.token`` (mode 0600). The HTTP layer is Starlette on uvicorn.

Endpoints (JSON in, JSON out):

- ``POST /ask`` ``{"question", "settings", "options", "long", "log", "stream"}`` → the
  ``ragctl.answer/1`` (or ``ragctl.long-answer/1``) object; with ``"stream": true`` the
  reply is NDJSON: ``{"token": ...}`` lines while the generator writes, then
  ``{"result": {...}}``;
- ``POST /search`` ``{"query", "settings", "mode"}`` → ``{"query", "index", "mode", "hits"}``;
- ``GET /status`` → pid, uptime, requests served, memory, indexes open, models loaded.

Errors come back as ``{"error": "...", "exit": N}`` with HTTP status 400, and the client
prints them as the in-process command would. A request is checked before any work: its
body must be UTF-8 JSON, an object, at most :data:`MAX_BODY` bytes (else 413, found while
reading, so a huge body is cut off early) and nested at most :data:`MAX_DEPTH` levels
deep, and each field must have its type (``question`` a string, ``settings`` an object,
``settings.search_limit`` an integer, ...); the reply then says which field is wrong. A
failure inside the service is 500 with a one-line message; the details go to its log.

All work runs on one worker thread, one request after another (SQLite connections and
llama.cpp stay on the thread that made them); requests wait in a queue (``/status``
answers at once). An index changed by ``ragctl index`` (another SQLite
connection's commit, or a new HNSW file) is reopened before the next request; the models
stay loaded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
import re
import secrets
import signal
import socket
import sys
import time
import types
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, fields
from itertools import accumulate
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from ragctl.app.protocol import SOCKET
from ragctl.config import Settings, home_dir, index_dir
from ragctl.errors import RagctlError
from ragctl.files import pid_alive

logger = logging.getLogger("ragctl.service")

PIDFILE = "serve.pid"
TOKEN = "serve.token"
LOGFILE = "serve.log"
MAX_BODY = 1 << 20  # bytes in a request body; more is refused (413) as it arrives
MAX_DEPTH = 32  # levels of nested arrays and objects in a request body


def socket_path(home: Path | None = None) -> Path:
    return (home or home_dir()) / SOCKET


def token(home: Path | None = None, *, create: bool = False) -> str | None:
    """The HTTP token, made (0600) on first use when ``create``."""
    path = (home or home_dir()) / TOKEN
    if path.exists():
        return path.read_text().strip()
    if not create:
        return None
    value = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(value + "\n")
    return value


# ------------------------------------------------------------------- checking a request

class RequestError(RagctlError):
    """A request the service does not take (a body that is not a JSON object, a field of
    the wrong type); ``status`` is the HTTP status of the reply."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


# a JSON string; an unterminated one runs to the end, so that no text is scanned twice
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_MAX_INT = 2**31 - 1
_MAX_COUNT = 100_000  # the most an integer option (top_n, max_tokens, ...) may ask for


def nesting(text: str) -> int:
    """How deep arrays and objects nest in the JSON ``text``, counted without recursion
    (an upper bound when the text is not JSON)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_body(raw: bytes) -> dict[str, Any]:
    """The request body as a JSON object, or :class:`RequestError` saying why not."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RequestError("the request body is not UTF-8 text") from None
    if nesting(text) > MAX_DEPTH:
        raise RequestError("the request body nests arrays and objects more than "
                           f"{MAX_DEPTH} levels deep") from None
    try:
        data = json.loads(text, parse_constant=_no_constant)
        json.dumps(data, ensure_ascii=False).encode()  # a lone surrogate such as "\ud800"
    except UnicodeEncodeError:
        raise RequestError("the request body holds a \\u escape that is not a character") \
            from None
    except (ValueError, RecursionError):
        raise RequestError("the request body is not JSON") from None
    if not isinstance(data, dict):
        raise RequestError(f"the request body must be a JSON object, not {_kind(data)}")
    return data


def _kind(value: Any) -> str:
    """What a JSON value is, in words (the value itself is not repeated)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _name(key: str) -> str:
    return repr(key[:40] + ("..." if len(key) > 40 else ""))


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = {f.name: get_type_hints(cls)[f.name] for f in fields(cls)}
    return _HINTS[cls]


def _typed(label: str, kind: Any, value: Any) -> Any:
    """``value`` as a field of type ``kind`` takes it (bool, int, float, str, a Literal,
    or one of them or None); :class:`RequestError` when it is of another type."""
    optional = False
    if get_origin(kind) in (Union, types.UnionType):
        args = [a for a in get_args(kind) if a is not type(None)]
        optional = len(args) < len(get_args(kind))
        if value is None and optional:
            return None
        if len(args) == 1:
            kind = args[0]
    if get_origin(kind) is Literal:
        choices = [str(c) for c in get_args(kind)]
        if isinstance(value, str) and value in choices:
            return value
        raise RequestError(f"{label} must be one of {', '.join(choices)}")
    if kind is bool and isinstance(value, bool):
        return value
    if kind is int and isinstance(value, int) and not isinstance(value, bool):
        if abs(value) > _MAX_INT:
            raise RequestError(f"{label} is too large")
        return value
    if kind is float and isinstance(value, int | float) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise RequestError(f"{label} is too large")
        return number
    if kind is str and isinstance(value, str):
        return value
    want = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
    if kind not in want:
        raise RequestError(f"{label} cannot be set in a request")
    raise RequestError(f"{label} must be {want[kind]}{' or null' if optional else ''}, "
                       f"not {_kind(value)}")


def _object(label: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RequestError(f"{label} must be an object, not {_kind(value)}")
    return value


def _fields(cls: type, label: str, value: Any, *, ignore_unknown: bool = False,
            null_is_unset: bool = False) -> dict[str, Any]:
    """The object ``value`` checked against the fields of the dataclass ``cls``."""
    hints = _hints(cls)
    out: dict[str, Any] = {}
    for name, item in _object(label, value).items():
        if name not in hints:
            if ignore_unknown:
                continue  # a setting of a newer client
            raise RequestError(f"{label} has no field {_name(name)}; it takes "
                               f"{', '.join(sorted(hints))}")
        out[name] = None if item is None and null_is_unset else \
            _typed(f"{label}.{name}", hints[name], item)
    return out


def _options(cls: type, label: str, value: Any) -> dict[str, Any] | None:
    """``options`` or ``long``: the fields of :class:`AskOptions` or :class:`LongOptions`
    that the request sets (null: from the settings), within sensible ranges."""
    if value is None:
        return None
    out = _fields(cls, label, value, null_is_unset=True)
    for name, item in out.items():
        if isinstance(item, bool) or item is None:
            continue
        if isinstance(item, int) and not 1 <= item <= _MAX_COUNT:
            raise RequestError(f"{label}.{name} must be between 1 and {_MAX_COUNT}")
        top = 2.0 if name == "cluster_threshold" else 1.0
        if isinstance(item, float) and name.endswith("threshold") and not 0 <= item <= top:
            raise RequestError(f"{label}.{name} must be between 0 and {top:g}")
    return out


def _text(payload: dict[str, Any], name: str) -> str:
    value = payload.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise RequestError(f"{name} must be a string, not {_kind(value)}")
    return value


def _flag(payload: dict[str, Any], name: str) -> bool:
    value = payload.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise RequestError(f"{name} must be true or false, not {_kind(value)}")
    return value


def _client(value: Any) -> dict[str, Any] | None:
    """The quick client's description of itself (see :mod:`ragctl.quick`)."""
    if value is None:
        return None
    client = dict(_object("client", value))
    flags = _fields(Settings, "client.flags", client.get("flags") or {}, null_is_unset=True)
    if set(flags) - {"index", "search_limit", "store"}:
        raise RequestError("client.flags takes only index, search_limit and store")
    environ = _object("client.environ", client.get("environ") or {})
    for key, item in environ.items():
        if not isinstance(item, str):
            raise RequestError(f"client.environ {_name(key)} must be a string, "
                               f"not {_kind(item)}")
    for key in ("cwd", "home"):
        if client.get(key) is not None and not isinstance(client[key], str):
            raise RequestError(f"client.{key} must be a string, not {_kind(client[key])}")
    width = client.get("width")
    if width is not None and (isinstance(width, bool) or not isinstance(width, int)):
        raise RequestError(f"client.width must be an integer, not {_kind(width)}")
    return {**client, "flags": flags, "environ": environ}


def _common(payload: dict[str, Any]) -> dict[str, Any]:
    payload = _object("the request body", payload)
    settings = payload.get("settings")
    if settings is not None:
        settings = _fields(Settings, "settings", settings, ignore_unknown=True)
    return {"settings": settings, "client": _client(payload.get("client"))}


def check_ask(payload: dict[str, Any]) -> dict[str, Any]:
    """A ``/ask`` request with each field checked (:class:`RequestError` names a wrong one):
    ``question`` a string, ``settings``, ``options`` and ``long`` objects or null, ``log``
    and ``stream`` true or false."""
    from ragctl.ask.longform import LongOptions
    from ragctl.ask.pipeline import AskOptions

    return {**_common(payload), "question": _text(payload, "question"),
            "options": _options(AskOptions, "options", payload.get("options")),
            "long": _options(LongOptions, "long", payload.get("long")),
            "log": _flag(payload, "log"), "stream": _flag(payload, "stream")}


def check_search(payload: dict[str, Any]) -> dict[str, Any]:
    """A ``/search`` request with each field checked: ``query`` a string, ``mode`` one of
    the search modes, ``settings`` and ``client`` objects or null."""
    from ragctl.ask.retrieve import MODES

    mode = _object("the request body", payload).get("mode")
    if mode is None:
        mode = "hybrid"
    if not isinstance(mode, str):
        raise RequestError(f"mode must be a string, not {_kind(mode)}")
    if mode not in MODES:
        raise RequestError(f"unknown search mode {_name(mode)}; choose one of "
                           f"{', '.join(MODES)}")
    return {**_common(payload), "query": _text(payload, "query"), "mode": mode}


# ------------------------------------------------------------------------ the work itself

@dataclass
class _Open:
    collection: Any
    pipeline: Any
    stamp: tuple[Any, ...]
    warmed_to: int = -1  # passages up to this id have their scoring embeddings cached
    warmed: int = 0


class Service:
    """The pipelines (one per index and settings) and the models they share."""

    def __init__(self) -> None:
        from ragctl.models import registry as models

        models.keep_loaded()
        # every piece of work runs on this one thread: SQLite connections and llama.cpp
        # stay on the thread that made them, and requests wait their turn
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragctl-work")
        self.started = time.time()
        self.requests = 0
        self.busy = 0  # requests in flight
        self.last_request = 0.0
        self.open: dict[str, _Open] = {}
        self.stopping = False

    # While nobody asks, the service embeds the passages (relevance estimator) and their
    # sentences (context filter) of its open indexes ahead of time, 32 passages a step,
    # into the models' vector caches: a later question then only embeds itself.
    def warm_loop(self, *, idle_s: float = 2.0) -> None:
        while not self.stopping:
            time.sleep(0.5)
            if self.busy or time.monotonic() - self.last_request < idle_s:
                continue
            try:
                worked = self.worker.submit(self.warm_step).result()
            except RuntimeError:  # the worker was shut down
                return
            except Exception as e:  # warming must never take the service down
                logger.warning("warming stopped: %s", e)
                return
            if not worked:
                time.sleep(5.0)

    def warm_step(self, batch: int = 32) -> bool:
        """Embed the next ``batch`` passages of an open index; False when all are done."""
        from ragctl.models.filter import CT2Filter, split_long
        from ragctl.models.relevance import CT2Relevance
        from ragctl.text import passage_text

        for entry in list(self.open.values()):
            relevance = entry.pipeline.relevance
            context_filter = entry.pipeline.context_filter
            rows = entry.collection.store.passage_titles(entry.warmed_to, batch)
            if not rows:
                continue
            if isinstance(relevance, CT2Relevance):
                relevance.scorer.warm([passage_text(t, x) for _, t, x in rows])
            if isinstance(context_filter, CT2Filter):
                sentences = entry.collection.store.sentences_of([i for i, _, _ in rows])
                # as the filter will see them: long sentences in windows
                context_filter.scorer.warm([s.text for ss in sentences.values()
                                            for s in split_long(ss)])
            entry.warmed_to = rows[-1][0]
            entry.warmed += len(rows)
            return True
        return False

    def pipeline(self, settings: Settings) -> Any:
        """The open pipeline for these settings, reopened when the index changed."""
        from ragctl.ask.pipeline import Pipeline
        from ragctl.store.collection import Collection

        key = json.dumps(asdict(settings), sort_keys=True, default=str)
        entry = self.open.get(key)
        if entry is not None and entry.stamp == self._stamp(entry.collection):
            return entry.pipeline
        if entry is not None:
            self._close(key)
        collection = Collection.open(settings)
        pipeline = Pipeline(collection)
        self.open[key] = _Open(collection, pipeline, self._stamp(collection))
        return pipeline

    @staticmethod
    def _stamp(collection: Any) -> tuple[Any, ...]:
        return tuple(collection.stamp())

    def _close(self, key: str) -> None:
        entry = self.open.pop(key)
        with contextlib.suppress(Exception):
            entry.pipeline.close()
            entry.collection.close()

    def close(self) -> None:
        """Close the open indexes and the models (run it on the worker thread)."""
        from ragctl.models import registry as models

        self.stopping = True
        for key in list(self.open):
            self._close(key)
        models.release()

    def ask(self, payload: dict[str, Any], on_token: Callable[[str], None] | None) -> dict:
        from ragctl.ask.longform import LongOptions
        from ragctl.ask.pipeline import AskOptions, answer_with, clean_question

        payload = check_ask(payload)
        settings = _settings(payload)
        question = clean_question(payload["question"])
        pipeline = self.pipeline(settings)
        if payload["long"] is not None:
            long = LongOptions.from_settings(settings, **payload["long"])
            result = answer_with(pipeline, question, long=long, log=payload["log"])
        else:
            options = AskOptions.from_settings(settings, **(payload["options"] or {}))
            result = answer_with(pipeline, question, options=options, on_token=on_token,
                                 log=payload["log"])
        return result.to_dict()

    def search(self, payload: dict[str, Any]) -> dict:
        payload = check_search(payload)
        settings = _settings(payload)
        mode = payload["mode"]
        pipeline = self.pipeline(settings)
        hits = pipeline.retriever.search(payload["query"], limit=settings.search_limit,
                                         mode=mode)
        result = {"query": payload["query"], "index": settings.index, "mode": mode,
                  "hits": [h.to_dict() for h in hits]}
        client = payload["client"]
        if client is not None and client.get("render"):
            from ragctl.app.display import render_search, rendering_for

            with rendering_for(**_terminal(client)) as out:
                render_search(hits)
            result["text"] = out.getvalue()
        return result

    def status(self) -> dict:
        """What the service holds. It answers at once, even while the worker thread is
        busy with a long answer (it only reads; ``stop`` and ``--status`` rely on it)."""
        from ragctl.models import registry as models

        rss = None
        with contextlib.suppress(OSError, ValueError):
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
        entries = list(self.open.values())  # the worker may open another meanwhile
        kept: list[str] = []
        for _ in range(5):
            try:
                kept = models.kept()
                break
            except RuntimeError:  # a model was loaded while the list was being read
                continue
        return {"schema": "ragctl.service/1", "pid": os.getpid(), "home": str(home_dir()),
                "socket": str(socket_path()), "started": self.started,
                "uptime_s": round(time.time() - self.started, 1), "requests": self.requests,
                "rss_bytes": rss,
                "indexes": sorted({e.collection.name for e in entries}),
                "passages_warmed": {e.collection.name: e.warmed for e in entries},
                "models": kept}


def _settings(payload: dict[str, Any]) -> Settings:
    """The client's settings: as it resolved them (its flags, environment and config), or,
    from the quick client (:mod:`ragctl.quick`), resolved here from its flags and its
    ``RAGCTL_*`` variables. ``payload`` was checked (:func:`check_ask`, :func:`check_search`)."""
    from ragctl.config import load_settings, validate

    given = payload["settings"]
    client = payload["client"]
    if given is None and client is not None:
        return load_settings(environ=client["environ"], **client["flags"])
    if given is None:
        return load_settings()
    settings = Settings(**given)
    validate(settings)
    return settings


def _terminal(client: dict[str, Any]) -> dict[str, Any]:
    """How the quick client's stdout looks (see :func:`ragctl.app.display.rendering_for`)."""
    try:
        width = 80 if client.get("width") is None else int(client["width"])
        return {"tty": bool(client.get("tty")), "width": min(4096, max(20, width)),
                "environ": {str(k): str(v) for k, v in (client.get("environ") or {}).items()},
                "cwd": str(client.get("cwd") or "/"), "home": str(client.get("home") or "/")}
    except (TypeError, ValueError, AttributeError):
        raise RagctlError("bad client terminal description") from None


class Backend:
    """Where a long-lived client (``ragctl mcp``, ``ragctl chat``) sends its requests: the
    running service when there is one, else a :class:`Service` in this process, made on
    first use, that keeps the models loaded for the session."""

    def __init__(self, *, use_service: bool = True) -> None:
        self.use_service = use_service
        self._service: Service | None = None

    def call(self, path: str, payload: dict[str, Any],
             on_token: Callable[[str], None] | None = None) -> dict[str, Any]:
        if self.use_service:
            from ragctl.app.client import request

            found = request("POST", path, payload, on_token=on_token)
            if found is not None:
                return found
        if self._service is None:
            self._service = Service()
        service = self._service
        if path == "/ask":
            return dict(service.worker.submit(service.ask, payload, on_token).result())
        return dict(service.worker.submit(service.search, payload).result())

    def close(self) -> None:
        if self._service is not None:
            self._service.worker.submit(self._service.close).result()
            self._service.worker.shutdown()


# ------------------------------------------------------------------------- the web layer

FAILED = "the service failed on this request; its log has the details"
# a reply sent before the request body was read in full ends the connection, so that the
# rest of the body is not read (and thrown away) after it
_CLOSE = {"Connection": "close"}


def make_app(service: Any, *, http_token: str | None) -> Any:
    """The Starlette application for a :class:`Service` (or an object with its ``worker``,
    counters, ``ask``, ``search``, ``status`` and ``close``); requests that came over TCP
    must carry the token."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    worker = service.worker

    def authorized(request: Request) -> bool:
        server = request.scope.get("server")
        if not server or server[1] is None:  # the Unix socket: its mode guards it
            return True
        given = request.headers.get("authorization", "")
        return http_token is not None and secrets.compare_digest(
            given.encode(), f"Bearer {http_token}".encode())

    async def run(fn: Callable[..., Any], *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        service.busy += 1
        try:
            return await loop.run_in_executor(worker, fn, *args)
        finally:
            service.busy -= 1
            service.last_request = time.monotonic()

    def failure(e: BaseException) -> JSONResponse:
        """The reply to an error: its one-line message for a :class:`RagctlError`, else
        (a fault of the service) a fixed line, the details going to the log only."""
        if isinstance(e, RequestError):
            return JSONResponse({"error": str(e), "exit": e.exit_code},
                                status_code=e.status, headers=_CLOSE)
        if isinstance(e, RagctlError):
            return JSONResponse({"error": str(e), "exit": e.exit_code}, status_code=400)
        logger.error("request failed", exc_info=e)
        return JSONResponse({"error": FAILED, "exit": 1}, status_code=500)

    def unauthorized() -> JSONResponse:
        return JSONResponse({"error": "missing or wrong token", "exit": 1}, 401,
                            headers=_CLOSE)

    async def body(request: Request) -> dict[str, Any]:
        """The body as a JSON object, read as it arrives and refused (413) as soon as it is
        longer than :data:`MAX_BODY`."""
        too_large = RequestError(f"the request body is larger than {MAX_BODY} bytes", 413)
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > MAX_BODY:
            raise too_large
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in request.stream():
                size += len(chunk)
                if size > MAX_BODY:
                    raise too_large
                chunks.append(chunk)
        except ClientDisconnect:
            raise RequestError("the client went away while sending its request") from None
        return parse_body(b"".join(chunks))

    async def ask(request: Request) -> Response:
        if not authorized(request):
            return unauthorized()
        service.requests += 1
        try:
            payload = check_ask(await body(request))
        except RagctlError as e:
            return failure(e)
        if not payload["stream"]:
            try:
                return JSONResponse(await run(service.ask, payload, None))
            except Exception as e:
                return failure(e)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

        def on_token(t: str) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, ("token", t))

        def work() -> None:
            try:
                out: tuple[str, Any] = ("result", service.ask(payload, on_token))
            except RagctlError as e:
                out = ("error", {"error": str(e), "exit": e.exit_code})
            except Exception:
                logger.exception("request failed")
                out = ("error", {"error": FAILED, "exit": 1})
            loop.call_soon_threadsafe(queue.put_nowait, out)

        async def lines() -> AsyncIterator[bytes]:
            service.busy += 1
            try:
                future = loop.run_in_executor(worker, work)
                while True:
                    kind, value = await queue.get()
                    yield (json.dumps({kind: value}) + "\n").encode()
                    if kind != "token":
                        break
                await future
            finally:
                service.busy -= 1
                service.last_request = time.monotonic()

        return StreamingResponse(lines(), media_type="application/x-ndjson")

    async def search(request: Request) -> Response:
        if not authorized(request):
            return unauthorized()
        service.requests += 1
        try:
            payload = check_search(await body(request))
            return JSONResponse(await run(service.search, payload))
        except Exception as e:
            return failure(e)

    async def status(request: Request) -> Response:
        if not authorized(request):
            return unauthorized()
        try:
            return JSONResponse(service.status())  # not queued behind the work
        except Exception as e:
            return failure(e)

    async def http_error(request: Request, e: Exception) -> Response:
        """Starlette's own errors (no such endpoint, wrong method) as JSON too."""
        code = e.status_code if isinstance(e, HTTPException) else 500
        if code >= 500:  # uvicorn logs the exception itself
            return JSONResponse({"error": FAILED, "exit": 1}, status_code=500)
        message = {404: "no such endpoint; the service has POST /ask, POST /search and "
                        "GET /status",
                   405: f"{request.method} is not allowed here"}
        return JSONResponse({"error": message.get(code, f"HTTP {code}"), "exit": 1},
                            status_code=code, headers=_CLOSE)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        yield
        await asyncio.get_running_loop().run_in_executor(worker, service.close)
        worker.shutdown(wait=False)

    return Starlette(routes=[Route("/ask", ask, methods=["POST"]),
                             Route("/search", search, methods=["POST"]),
                             Route("/status", status, methods=["GET"])],
                     exception_handlers={HTTPException: http_error, Exception: http_error},
                     lifespan=lifespan)


# -------------------------------------------------------------------------- running it

def running_pid(home: Path | None = None, *, strict: bool = False) -> int | None:
    """The pid of the service answering on this home's socket, else None. A service that
    holds the socket but does not answer counts as none, or with ``strict`` is an error."""
    from ragctl.app.client import request

    try:
        st = request("GET", "/status", home=home, timeout=5)
    except RagctlError as e:
        if not strict:
            return None
        home = home or home_dir()
        pid = _pid_in(home / PIDFILE)
        raise RagctlError(f"a service holds {socket_path(home)} but does not answer ({e}); "
                          + (f"stop it with: kill {pid}" if pid else "stop it, or remove the "
                             "socket file")) from None
    return int(st["pid"]) if st else None


def _pid_in(pidfile: Path) -> int | None:
    """The pid a pid file names; None when there is none."""
    try:
        return int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return None


def _remove_pidfile(pidfile: Path, pid: int) -> None:
    """Remove the pid file if it still names ``pid`` (a newer service writes its own)."""
    if _pid_in(pidfile) == pid:
        with contextlib.suppress(OSError):
            pidfile.unlink()


def _remove_socket(path: Path, ours: tuple[int, int]) -> None:
    """Remove the socket file if it is still the one this service bound (device, inode):
    a newer service may have replaced it meanwhile."""
    with contextlib.suppress(OSError):
        st = os.lstat(path)
        if (st.st_dev, st.st_ino) == ours:
            path.unlink()


def _bind_unix(path: Path) -> socket.socket:
    """Bind the socket (0600) and listen, replacing a stale one left by a killed service.
    It listens at once: a client that connects before the server runs waits for it
    rather than taking the socket for a stale one."""
    if path.exists() or path.is_symlink():
        if running_pid(path.parent, strict=True) is not None:
            raise RagctlError(f"a service is already running for {path.parent} "
                              "(ragctl serve --status)")
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(path))
    except OSError:
        sock.close()
        raise
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(128)
    return sock


class _Stop(BaseException):
    """Raised by the signal handlers of :func:`serve` to end it (through its cleanup)."""


@contextlib.contextmanager
def _stop_on_signals(server: Any) -> Any:
    """While in the block, SIGTERM and SIGINT end :func:`serve` through its ``finally``
    (uvicorn catches them while it runs, shuts down gracefully, then raises the signal
    again: by default SIGTERM would then kill the process before its socket and pid file
    are removed), and SIGHUP (its terminal closed) asks uvicorn to shut down. Yields a
    function that ignores any further signal, for the cleanup."""
    import threading

    stopping = False

    def stop(signum: int, frame: Any) -> None:
        nonlocal stopping
        if not stopping:
            stopping = True
            raise _Stop

    def hang_up(signum: int, frame: Any) -> None:
        server.should_exit = True

    def quiet() -> None:
        nonlocal stopping
        stopping = True

    if threading.current_thread() is not threading.main_thread():
        yield quiet  # signals reach the main thread only; uvicorn handles none here
        return
    handlers = {signal.SIGTERM: stop, signal.SIGINT: stop}
    if hasattr(signal, "SIGHUP"):
        handlers[signal.SIGHUP] = hang_up
    previous = {sig: signal.signal(sig, handler) for sig, handler in handlers.items()}
    try:
        yield quiet
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def serve(settings: Settings, *, http_port: int | None = None, warm: bool = True,
          ready: Callable[[dict[str, Any]], None] | None = None) -> None:
    """Run the service in the foreground until SIGTERM, SIGINT (Ctrl-C) or SIGHUP. However
    it ends, it removes its socket and pid file, unless a newer service has taken them."""
    import threading

    import uvicorn

    home = home_dir()
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = socket_path(home)
    if len(str(path).encode()) > 100:
        raise RagctlError(f"the socket path {path} is too long for a Unix socket; "
                          "use a shorter RAGCTL_HOME")
    service = Service()
    preload(service, settings)
    if warm:
        threading.Thread(target=service.warm_loop, name="ragctl-warm", daemon=True).start()
    http_token = token(home, create=True) if http_port is not None else None
    config = uvicorn.Config(make_app(service, http_token=http_token), log_level="warning",
                            access_log=False, lifespan="on", timeout_graceful_shutdown=30)
    server = uvicorn.Server(config)
    pidfile = home / PIDFILE
    sockets: list[socket.socket] = []
    ours: tuple[int, int] | None = None
    with _stop_on_signals(server) as quiet:
        try:
            sockets.append(_bind_unix(path))
            st = os.lstat(path)
            ours = (st.st_dev, st.st_ino)
            if http_port is not None:
                tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sockets.append(tcp)
                tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    tcp.bind(("127.0.0.1", http_port))
                except OSError as e:
                    raise RagctlError(f"cannot listen on 127.0.0.1:{http_port}: "
                                      f"{e.strerror}") from None
            pidfile.write_text(f"{os.getpid()}\n")
            if ready is not None:
                ready({"pid": os.getpid(), "socket": str(path),
                       "http": f"http://127.0.0.1:{http_port}" if http_port else None,
                       "token_file": str(home / TOKEN) if http_port else None,
                       "models": service.status()["models"]})
            server.run(sockets=sockets)
        except _Stop:
            logger.info("stopped by a signal")
        finally:
            quiet()
            for s in sockets:
                s.close()
            if ours is not None:
                _remove_socket(path, ours)
            _remove_pidfile(pidfile, os.getpid())


def preload(service: Service, settings: Settings) -> None:
    """Load the models a default ``ask`` needs, when the index exists (else on first use)."""
    if not (index_dir(settings.index) / "ragctl.db").exists():
        return
    try:
        service.worker.submit(lambda: service.pipeline(settings).load()).result()
    except RagctlError as e:
        logger.warning("models not preloaded: %s", e)


def start_background(settings: Settings, *, http_port: int | None = None,
                     wait_s: float = 120.0) -> dict[str, Any]:
    """Start ``ragctl serve`` as a detached process (output to serve.log in the home) and
    wait until it answers.

    The child runs in the home, with ``python -P``: neither the folder this was started
    from nor the home is put on its ``sys.path``, so a ``json.py`` or ``inspect.py`` lying
    there is never imported into the service. The home (and the cache) are passed as
    absolute paths, so a relative ``RAGCTL_HOME`` still names the same folder."""
    import subprocess

    from ragctl.config import cache_dir

    home = home_dir()
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    if running_pid(home, strict=True) is not None:
        raise RagctlError(f"a service is already running for {home} (ragctl serve --status)")
    args = [sys.executable, "-P", "-m", "ragctl", "serve", "--index", settings.index]
    if http_port is not None:
        args += ["--http", str(http_port)]
    env = {**os.environ, "RAGCTL_HOME": str(home)}
    if os.environ.get("RAGCTL_CACHE"):
        env["RAGCTL_CACHE"] = str(cache_dir().absolute())
    log = home / LOGFILE
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=fd, stderr=fd,
                                cwd=home, env=env, start_new_session=True)
    finally:
        os.close(fd)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace").strip().splitlines()[-1:] or ["(no output)"]
            raise RagctlError(f"the service did not start: {tail[0]}")
        pid = running_pid(home)
        if pid is not None:
            return {"pid": pid, "socket": str(socket_path(home)), "log": str(log)}
        time.sleep(0.2)
    raise RagctlError(f"the service did not answer within {wait_s:g} s; see {log}")


def stop(home: Path | None = None, *, wait_s: float = 30.0) -> int | None:
    """Stop the running service; returns its pid, or None when none was running. The
    service removes its socket and pid file as it ends; what a killed one left is removed
    here, but never a file of another, newer service."""
    home = home or home_dir()
    path = socket_path(home)
    pidfile = home / PIDFILE
    pid = running_pid(home, strict=True)
    if pid is None:  # nothing listens on the socket: what is left of a service is stale
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)
        stale = _pid_in(pidfile)
        if stale is not None and not pid_alive(stale):
            _remove_pidfile(pidfile, stale)
        return None
    named = _pid_in(pidfile) == pid
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        # gone, or done with its cleanup (the pid file goes last; this process may be
        # its parent, and then it lingers as a zombie until reaped)
        if not pid_alive(pid) or (named and _pid_in(pidfile) != pid):
            break
        time.sleep(0.1)
    else:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    _remove_pidfile(pidfile, pid)
    with contextlib.suppress(RagctlError, OSError):
        if running_pid(home) is None:  # a killed service's socket; not a newer one's
            path.unlink(missing_ok=True)
    return pid
