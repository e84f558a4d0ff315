"""The commands that keep running: ``serve`` (the warm service), ``mcp``, ``chat`` and
``watch``."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import click

from ragctl.app.options import (
    command_errors,
    emit,
    flag_settings,
    index_option,
    json_option,
    print_json,
    service_option,
)


@click.command()
@index_option
@click.option("--http", "http_port", type=click.IntRange(1, 65535), metavar="PORT",
              help="Also listen on 127.0.0.1:PORT (requests need the token in serve.token).")
@click.option("--background", is_flag=True, help="Start it detached and return.")
@click.option("--stop", is_flag=True, help="Stop the running service.")
@click.option("--status", is_flag=True, help="Whether a service is running, and what it holds.")
@json_option
@command_errors
def serve(index_name: str | None, http_port: int | None, background: bool, stop: bool,
          status: bool, as_json: bool) -> None:
    """Keep the models loaded and answer ask and search at once.

    Listens on a Unix socket in the ragctl home (only you can use it); `ragctl ask` and
    `ragctl search` use a running service by themselves. Runs in the foreground until
    Ctrl-C, or detached with --background. See docs/serve.md for the HTTP API.

    \b
    Examples:
        ragctl serve --background
        ragctl serve --status
        ragctl serve --http 8765          # also on localhost, with a token
        ragctl serve --stop
    """
    from ragctl.app import service

    if stop:
        pid = service.stop()
        emit(as_json, {"stopped": pid}, "render_line",
              f"stopped the service (pid {pid})" if pid else "no service was running")
        return
    if status:
        from ragctl.app.client import request

        st = request("GET", "/status")
        if st is None:
            emit(as_json, {"running": False}, "render_line", "no service is running")
            sys.exit(1)
        emit(as_json, {"running": True, **st}, "render_service_status", st)
        return
    settings = flag_settings(index=index_name)
    if background:
        info = service.start_background(settings, http_port=http_port)
        emit(as_json, info, "render_line",
              f"service running (pid {info['pid']}), socket {info['socket']}; "
              f"log: {info['log']}")
        return

    def ready(info: dict[str, Any]) -> None:
        if as_json:
            print_json(info)
        else:
            from ragctl.app import display

            display.render_service_ready(info)

    service.serve(settings, http_port=http_port, ready=ready)



@click.command()
@command_errors
def mcp() -> None:
    """Serve search, ask and ask_long as Model Context Protocol tools over stdio.

    For editors and agents that speak MCP; see docs/serve.md for the client
    configuration. Uses a running `ragctl serve` when there is one.

    \b
    Example (an MCP client's configuration):
        {"mcpServers": {"ragctl": {"command": "ragctl", "args": ["mcp"]}}}
    """
    logging.getLogger().handlers = [logging.StreamHandler(sys.stderr)]
    from ragctl.app.mcpserver import run

    run()


@click.command()
@index_option
@click.option("--no-log", is_flag=True, help="Do not keep the questions and answers.")
@service_option
@command_errors
def chat(index_name: str | None, no_log: bool, no_service: bool) -> None:
    """Ask questions one after another; a follow-up may refer to the last one.

    "and when did it end?" is rewritten into a question that stands alone before the
    search (the rewrite is shown). Inside: /sources, /explain, /long, /new, /help, /quit.
    Line editing and a history as in a shell.
    """
    from ragctl.app.chat import run
    from ragctl.models.registry import check_settings

    settings = flag_settings(index=index_name)
    check_settings(settings)
    run(settings, use_service=not no_service, log=not no_log)


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@index_option
@click.option("--debounce", type=click.FloatRange(min=0.1), default=2.0, show_default=True,
              help="Seconds without a change before the index is brought up to date.")
@command_errors
def watch(paths: tuple[Path, ...], index_name: str | None, debounce: float) -> None:
    """Keep an index current while files change.

    Indexes PATHS (or every folder indexed before), then re-indexes what changes:
    new, edited, moved and deleted files, editors' atomic saves. One line per change on
    stderr; Ctrl-C stops. Safe to stop at any moment, like ragctl index.

    \b
    Example:
        ragctl watch ~/notes
    """
    from ragctl.app.display import stderr
    from ragctl.index.watch import watch as run

    settings = flag_settings(index=index_name)
    run(settings, list(paths), debounce=debounce, say=lambda line: stderr.print(line))


COMMANDS = (serve, mcp, chat, watch)
