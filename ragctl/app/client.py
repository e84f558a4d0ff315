"""The client side of ``ragctl serve``: one request over the home's Unix socket.

Only the standard library is imported here, so that a command answered by the service
starts in a fraction of a second. :func:`request` returns None when no service is
running (no socket, or nothing listening on it), and the command then does the work
itself.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragctl.errors import RagctlError


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.path)
        self.sock = sock


class ServiceError(RagctlError):
    """An error the service reported; its exit code is the one the command would give."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def request(method: str, path: str, payload: dict[str, Any] | None = None, *,
            home: Path | None = None, timeout: float = 600.0,
            on_token: Callable[[str], None] | None = None) -> dict[str, Any] | None:
    """Send one request to the service of ``home``; its JSON reply, or None when no
    service is running. With ``on_token`` the answer is streamed (NDJSON)."""
    from ragctl.app.protocol import SOCKET
    from ragctl.config import home_dir

    sock_path = (home or home_dir()) / SOCKET
    if not sock_path.exists():
        return None
    conn = _UnixConnection(str(sock_path), timeout)
    body = None
    if payload is not None:
        payload = {**payload, "stream": on_token is not None}
        body = json.dumps(payload).encode()
    try:
        conn.request(method, path, body=body,
                     headers={"Content-Type": "application/json"} if body else {})
        response = conn.getresponse()
    except (FileNotFoundError, ConnectionRefusedError):
        return None  # a stale socket: nothing listens there
    except OSError as e:
        raise RagctlError(f"the service at {sock_path} did not answer: {e}") from None
    try:
        if response.status == 200 and on_token is not None and \
                response.getheader("content-type", "").startswith("application/x-ndjson"):
            return _stream(response, on_token)
        raw = response.read()
    except (OSError, ValueError) as e:
        raise RagctlError(f"the service at {sock_path} broke off its reply: {e}") from None
    finally:
        conn.close()
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        data = None
    if response.status != 200:
        raise _error(data, f"the service answered HTTP {response.status}")
    if not isinstance(data, dict):
        raise RagctlError(f"the service at {sock_path} sent a reply that is not a JSON object")
    return data


def _error(data: Any, fallback: str) -> ServiceError:
    """The error the service reported (``{"error": ..., "exit": N}``), else ``fallback``."""
    if not isinstance(data, dict) or not isinstance(data.get("error"), str):
        return ServiceError(fallback)
    code = data.get("exit", 1)
    return ServiceError(data["error"], code if isinstance(code, int) and 0 < code < 256 else 1)


def _stream(response: http.client.HTTPResponse,
            on_token: Callable[[str], None]) -> dict[str, Any]:
    for line in response:
        if not line.strip():
            continue
        item = json.loads(line)
        if "token" in item:
            on_token(item["token"])
        elif "result" in item:
            return dict(item["result"])
        elif "error" in item:
            raise _error(item["error"], "the service failed on this request")
    raise RagctlError("the service ended its reply without an answer")
