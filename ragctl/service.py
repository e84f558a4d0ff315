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
prints them as the in-process command would. All work runs on one worker thread, one
request after another (SQLite connections and llama.cpp stay on the thread that made
them); requests wait in a queue. An index changed by ``ragctl index`` (another SQLite
connection's commit, or a new HNSW file) is reopened before the next request; the models
stay loaded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .config import Settings, home_dir, index_dir
from .errors import RagctlError
from .quick import SOCKET

logger = logging.getLogger("ragctl.service")

PIDFILE = "serve.pid"
TOKEN = "serve.token"
LOGFILE = "serve.log"


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
        from . import models

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
        from .filter import CT2Filter, split_long
        from .relevance import CT2Relevance
        from .text import passage_text

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
        from .collection import Collection
        from .pipeline import Pipeline

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
        from . import models

        self.stopping = True
        for key in list(self.open):
            self._close(key)
        models.release()

    def ask(self, payload: dict[str, Any], on_token: Callable[[str], None] | None) -> dict:
        from .longform import LongOptions
        from .pipeline import AskOptions, answer_with, clean_question

        settings = _settings(payload)
        question = clean_question(str(payload.get("question", "")))
        pipeline = self.pipeline(settings)
        if payload.get("long") is not None:
            long = LongOptions.from_settings(settings, **payload["long"])
            result = answer_with(pipeline, question, long=long, log=bool(payload.get("log")))
        else:
            options = AskOptions.from_settings(settings, **(payload.get("options") or {}))
            result = answer_with(pipeline, question, options=options, on_token=on_token,
                                 log=bool(payload.get("log")))
        return result.to_dict()

    def search(self, payload: dict[str, Any]) -> dict:
        from .retrieve import MODES

        settings = _settings(payload)
        mode = str(payload.get("mode", "hybrid"))
        if mode not in MODES:
            raise RagctlError(f"unknown search mode {mode!r}; choose one of {', '.join(MODES)}")
        pipeline = self.pipeline(settings)
        hits = pipeline.retriever.search(str(payload.get("query", "")),
                                         limit=settings.search_limit, mode=mode)
        result = {"query": payload.get("query"), "index": settings.index, "mode": mode,
                  "hits": [h.to_dict() for h in hits]}
        client = payload.get("client")
        if isinstance(client, dict) and client.get("render"):
            from .display import render_search, rendering_for

            with rendering_for(**_terminal(client)) as out:
                render_search(hits)
            result["text"] = out.getvalue()
        return result

    def status(self) -> dict:
        from . import models

        rss = None
        with contextlib.suppress(OSError, ValueError):
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
        return {"schema": "ragctl.service/1", "pid": os.getpid(), "home": str(home_dir()),
                "socket": str(socket_path()), "started": self.started,
                "uptime_s": round(time.time() - self.started, 1), "requests": self.requests,
                "rss_bytes": rss,
                "indexes": sorted({e.collection.name for e in self.open.values()}),
                "passages_warmed": {e.collection.name: e.warmed for e in self.open.values()},
                "models": models.kept()}


def _settings(payload: dict[str, Any]) -> Settings:
    """The client's settings: as it resolved them (its flags, environment and config), or,
    from the quick client (:mod:`ragctl.quick`), resolved here from its flags and its
    ``RAGCTL_*`` variables."""
    from .config import load_settings, validate

    given = payload.get("settings")
    client = payload.get("client")
    if given is None and isinstance(client, dict):
        flags = client.get("flags") or {}
        environ = client.get("environ") or {}
        if not isinstance(flags, dict) or set(flags) - {"index", "search_limit", "store"} \
                or not isinstance(environ, dict):
            raise RagctlError("bad client flags or environment")
        return load_settings(environ={str(k): str(v) for k, v in environ.items()}, **flags)
    if given is None:
        return load_settings()
    if not isinstance(given, dict):
        raise RagctlError("settings must be an object")
    try:
        settings = Settings(**{k: v for k, v in given.items()
                               if k in Settings.__dataclass_fields__})
    except TypeError as e:
        raise RagctlError(f"bad settings: {e}") from None
    validate(settings)
    return settings


def _terminal(client: dict[str, Any]) -> dict[str, Any]:
    """How the quick client's stdout looks (see :func:`ragctl.display.rendering_for`)."""
    try:
        return {"tty": bool(client.get("tty")), "width": max(20, int(client.get("width", 80))),
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
            from .client import request

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

def make_app(service: Service, *, http_token: str | None) -> Any:
    """The Starlette application; requests that came over TCP must carry the token."""
    from starlette.applications import Starlette
    from starlette.requests import Request
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

    def failure(e: Exception) -> JSONResponse:
        if isinstance(e, RagctlError):
            return JSONResponse({"error": str(e), "exit": e.exit_code}, status_code=400)
        logger.exception("request failed")
        return JSONResponse({"error": f"the service failed: {type(e).__name__}: {e}",
                             "exit": 1}, status_code=500)

    async def body(request: Request) -> dict[str, Any]:
        try:
            data = await request.json()
        except ValueError:
            raise RagctlError("the request body is not JSON") from None
        if not isinstance(data, dict):
            raise RagctlError("the request body must be a JSON object")
        return data

    async def ask(request: Request) -> Response:
        if not authorized(request):
            return JSONResponse({"error": "missing or wrong token", "exit": 1}, 401)
        service.requests += 1
        try:
            payload = await body(request)
        except RagctlError as e:
            return failure(e)
        if not payload.get("stream"):
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
            except Exception as e:
                logger.exception("request failed")
                out = ("error", {"error": f"the service failed: {type(e).__name__}: {e}",
                                 "exit": 1})
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
            return JSONResponse({"error": "missing or wrong token", "exit": 1}, 401)
        service.requests += 1
        try:
            return JSONResponse(await run(service.search, await body(request)))
        except Exception as e:
            return failure(e)

    async def status(request: Request) -> Response:
        if not authorized(request):
            return JSONResponse({"error": "missing or wrong token", "exit": 1}, 401)
        return JSONResponse(await run(service.status))

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        yield
        await asyncio.get_running_loop().run_in_executor(worker, service.close)
        worker.shutdown(wait=False)

    return Starlette(routes=[Route("/ask", ask, methods=["POST"]),
                             Route("/search", search, methods=["POST"]),
                             Route("/status", status, methods=["GET"])],
                     lifespan=lifespan)


# -------------------------------------------------------------------------- running it

def running_pid(home: Path | None = None) -> int | None:
    """The pid of the service answering on this home's socket, else None."""
    from .client import request

    try:
        st = request("GET", "/status", home=home, timeout=5)
    except RagctlError:
        return None
    return int(st["pid"]) if st else None


def _bind_unix(path: Path) -> socket.socket:
    """Bind the socket (0600), replacing a stale one left by a killed service."""
    if path.exists() or path.is_symlink():
        if running_pid(path.parent) is not None:
            raise RagctlError(f"a service is already running for {path.parent} "
                              "(ragctl serve --status)")
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(path))
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    return sock


def serve(settings: Settings, *, http_port: int | None = None, warm: bool = True,
          ready: Callable[[dict[str, Any]], None] | None = None) -> None:
    """Run the service in the foreground until SIGTERM or Ctrl-C."""
    import uvicorn

    home = home_dir()
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = socket_path(home)
    if len(str(path).encode()) > 100:
        raise RagctlError(f"the socket path {path} is too long for a Unix socket; "
                          "use a shorter RAGCTL_HOME")
    import threading

    service = Service()
    preload(service, settings)
    if warm:
        threading.Thread(target=service.warm_loop, name="ragctl-warm", daemon=True).start()
    sockets = [_bind_unix(path)]
    http_token = None
    if http_port is not None:
        http_token = token(home, create=True)
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            tcp.bind(("127.0.0.1", http_port))
        except OSError as e:
            sockets[0].close()
            path.unlink(missing_ok=True)
            raise RagctlError(f"cannot listen on 127.0.0.1:{http_port}: {e.strerror}") from None
        sockets.append(tcp)
    pidfile = home / PIDFILE
    pidfile.write_text(f"{os.getpid()}\n")
    app = make_app(service, http_token=http_token)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                            timeout_graceful_shutdown=30)
    server = uvicorn.Server(config)
    if ready is not None:
        ready({"pid": os.getpid(), "socket": str(path),
               "http": f"http://127.0.0.1:{http_port}" if http_port else None,
               "token_file": str(home / TOKEN) if http_port else None,
               "models": service.status()["models"]})
    try:
        server.run(sockets=sockets)
    finally:
        for s in sockets:
            s.close()
        path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            if pidfile.read_text().strip() == str(os.getpid()):
                pidfile.unlink()


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
    wait until it answers."""
    import subprocess

    home = home_dir()
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    if running_pid(home) is not None:
        raise RagctlError(f"a service is already running for {home} (ragctl serve --status)")
    args = [sys.executable, "-m", "ragctl", "serve", "--index", settings.index]
    if http_port is not None:
        args += ["--http", str(http_port)]
    log = home / LOGFILE
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=fd, stderr=fd,
                            start_new_session=True)
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
    """Stop the running service; returns its pid, or None when none was running. Stale
    socket and pid files are removed."""
    home = home or home_dir()
    pid = running_pid(home)
    if pid is None:
        socket_path(home).unlink(missing_ok=True)
        (home / PIDFILE).unlink(missing_ok=True)
        return None
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    socket_path(home).unlink(missing_ok=True)
    return pid

