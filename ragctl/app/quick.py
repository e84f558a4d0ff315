"""The ``ragctl`` command's entry point.

``ragctl search`` is answered by a running ``ragctl serve`` straight from here, with the
standard library alone: no click, no rich, no HTTP client library to import, so a search
through the service costs a Python start and one round trip. The service resolves the
settings from the flags and ``RAGCTL_*`` variables sent to it and renders the result as
this terminal would show it (see :func:`ragctl.app.display.rendering_for`), so the output is
the command line's own. Everything else — and any search this module does not fully
understand, no service, or a service that does not answer — goes to the click command
line (:mod:`ragctl.cli`), which gives the same result the slower way or the usual errors.
"""

from __future__ import annotations

import json
import os
import sys

from ragctl.app.protocol import SOCKET, home, request

MODES = ("hybrid", "vector", "bm25")  # ragctl.ask.retrieve.MODES, without importing it
_VALUED = {"--index": "index", "-i": "index", "--limit": "search_limit", "-n": "search_limit",
           "--mode": "mode", "--store": "store"}
# what the service needs of this process's environment: settings and terminal
_ENVIRON = ("TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE",
            "TTY_INTERACTIVE", "COLUMNS", "LINES")


def main() -> None:
    argv = sys.argv[1:]
    if argv[:1] == ["search"]:
        code = search(argv[1:])
        if code is not None:
            sys.exit(code)
    from ragctl.app.cli import cli

    cli(prog_name="ragctl")


def parse_search(args: list[str]) -> dict | None:
    """``search``'s arguments, or None for anything but a plain query with
    ``--index/-i``, ``--limit/-n``, ``--mode``, ``--store`` and ``--json`` (help, bad
    values and other options are the command line's to handle)."""
    flags: dict[str, object] = {}
    query: str | None = None
    mode, as_json = "hybrid", False
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            if query is not None or len(args) - i != 1:
                return None
            query = args[i]
            break
        if arg == "--json":
            as_json = True
            continue
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in _VALUED:
            if not eq:
                if i >= len(args):
                    return None
                value, i = args[i], i + 1
            key = _VALUED[name]
            if key == "mode":
                if value not in MODES:
                    return None
                mode = value
            elif key == "search_limit":
                if not value.isdigit() or int(value) < 1:
                    return None
                flags[key] = int(value)
            else:
                flags[key] = value
        elif arg.startswith("-") and arg != "-":
            return None
        elif query is None:
            query = arg
        else:
            return None
    if query is None:
        return None
    return {"query": query, "mode": mode, "flags": flags, "json": as_json}


def _width() -> int:
    """The terminal's width as rich finds it: the first standard stream that is a
    terminal, else ``$COLUMNS``, else 80."""
    width = 0
    for fd in (0, 1, 2):
        try:
            width = os.get_terminal_size(fd).columns
            break
        except OSError:
            continue
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit():
        width = int(columns)
    return width or 80


def search(args: list[str]) -> int | None:
    """``ragctl search`` through a running service; its exit status, or None when the
    command line should do it."""
    parsed = parse_search(args)
    where = home()
    if parsed is None or where is None:
        return None
    sock_path = os.path.join(where, SOCKET)
    if not os.path.exists(sock_path):
        return None
    environ = {k: v for k, v in os.environ.items()
               if k.startswith("RAGCTL_") or k in _ENVIRON}
    client = {"flags": parsed["flags"], "environ": environ, "render": not parsed["json"],
              "tty": sys.stdout.isatty(), "width": _width(), "cwd": os.getcwd(),
              "home": os.path.expanduser("~")}
    from ragctl.text import readable

    query, replaced = readable(parsed["query"])
    if replaced:
        return None  # the command line warns about the bytes that are not UTF-8
    found = request(sock_path, "/search",
                    {"query": query, "mode": parsed["mode"], "client": client})
    if found is None:
        return None
    status, reply = found
    if status == 200 and not parsed["json"] and "text" not in reply:
        return None  # a service from before rendering for clients
    if status != 200:
        if "error" not in reply:
            return None
        code = int(reply.get("exit", 1))
        if parsed["json"]:  # as the command line does: the error as JSON on stdout too
            sys.stdout.write(json.dumps({"error": reply["error"], "code": code}, indent=2,
                                        ensure_ascii=False) + "\n")
        sys.stderr.write(f"Error: {reply['error']}\n")
        return code
    try:
        if parsed["json"]:
            reply.pop("text", None)
            sys.stdout.write(json.dumps(reply, indent=2, ensure_ascii=False, default=str) + "\n")
        else:
            sys.stdout.write(reply.get("text", ""))
        sys.stdout.flush()
    except BrokenPipeError:  # `ragctl search ... | head`: the reader has gone
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0
