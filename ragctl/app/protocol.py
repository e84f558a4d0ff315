"""The socket protocol between ``ragctl serve`` and its clients: where the service listens
(``serve.sock`` in the home), and one request as HTTP/1.1 over that Unix socket with the
standard library alone, so that ``ragctl search`` through the service starts fast."""

from __future__ import annotations

import json
import os
import socket
import sys

SOCKET = "serve.sock"  # in the home: where `ragctl serve` listens (service, client)


def home() -> str | None:
    """The ragctl home, as :func:`ragctl.config.home_dir` finds it (None on Windows,
    which has no Unix socket service)."""
    env = os.environ.get("RAGCTL_HOME")
    if env:
        return os.path.realpath(os.path.expanduser(env))
    if sys.platform == "win32":
        return None
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Application Support/ragctl")
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return os.path.join(xdg if xdg else os.path.expanduser("~/.config"), "ragctl")


def request(sock_path: str, path: str, payload: dict, *,
            timeout: float = 600.0) -> tuple[int, dict] | None:
    """POST ``payload`` to the service; (HTTP status, JSON reply), or None when no
    service answers as expected (the caller then takes the slower road)."""
    body = json.dumps(payload).encode()
    head = (f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(sock_path)
            sock.sendall(head + body)
            chunks = []
            while chunk := sock.recv(1 << 16):
                chunks.append(chunk)
    except OSError:
        return None
    header, _, data = b"".join(chunks).partition(b"\r\n\r\n")
    lines = header.decode("latin-1").split("\r\n")
    fields = {k.strip().lower(): v.strip() for k, _, v in
              (line.partition(":") for line in lines[1:])}
    try:
        status = int(lines[0].split(" ", 2)[1])
        if int(fields.get("content-length", -1)) != len(data):
            return None  # cut short (or chunked): not a reply this client reads
        reply = json.loads(data)
    except (IndexError, ValueError):
        return None
    return (status, reply) if isinstance(reply, dict) else None
