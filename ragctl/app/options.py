"""What the commands share: click options, settings from the flags, one-line errors and
the JSON or human rendering of a result (``ragctl.app.cli`` and ``ragctl.app.train``)."""

from __future__ import annotations

import errno
import functools
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click

from ragctl.config import load_settings
from ragctl.errors import EXIT_INTERRUPTED, RagctlError

F = TypeVar("F", bound=Callable[..., Any])


class RagctlClickError(click.ClickException):
    """A library error shown as one line, with the error's own exit code."""

    def __init__(self, error: RagctlError) -> None:
        super().__init__(str(error))
        self.exit_code = error.exit_code  # type: ignore[misc]


@contextmanager
def errors() -> Iterator[None]:
    import sqlite3

    try:
        yield
    except RagctlError as e:
        raise RagctlClickError(e) from None
    except sqlite3.DatabaseError as e:  # found while reading: pages damaged on disk
        raise click.ClickException(f"the index database is damaged ({e}); "
                                   "run: ragctl doctor") from None
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.EDQUOT):
            raise click.ClickException(
                f"no space left on the device{f' for {e.filename}' if e.filename else ''}; "
                "what was committed before is kept: free some space and run the command "
                "again") from None
        if e.errno in (errno.EROFS, errno.EACCES) and e.filename:
            raise click.ClickException(f"cannot write {e.filename}: {e.strerror}") from None
        raise
    except Exception as e:
        if not type(e).__module__.startswith("psycopg"):
            raise
        from ragctl.store.postgres import _first_line

        raise click.ClickException(f"the PostgreSQL store failed: {_first_line(e)}; what "
                                   "was committed before is kept") from None
    except KeyboardInterrupt:
        click.echo("\ninterrupted; what was committed is kept, run the command again "
                   "to finish", err=True)
        sys.exit(EXIT_INTERRUPTED)


def command_errors(f: F) -> F:
    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with errors():
            return f(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _keep_store(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value:
        ctx.meta["ragctl.store"] = value


def index_option(f: F) -> F:
    f = click.option(
        "--store", metavar="URL", default=None, expose_value=False, callback=_keep_store,
        help="Keep the index in a PostgreSQL database with pgvector "
             "(postgresql://user@host/db) instead of under the home (env RAGCTL_STORE).")(f)
    return click.option(
        "--index", "-i", "index_name", metavar="NAME", default=None,
        help="Which index to use (default: 'default'; env RAGCTL_INDEX).")(f)


def flag_settings(**overrides: Any) -> Any:
    """Settings from the flags given (``--store`` included), the environment and the
    config file."""
    ctx = click.get_current_context(silent=True)
    store = ctx.meta.get("ragctl.store") if ctx is not None else None
    return load_settings(store=store, **overrides)


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True,
                        help="Print a machine-readable JSON result on stdout.")(f)


def options(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """Several click options as one decorator, in the order given."""
    def apply(f: F) -> F:
        for d in reversed(decorators):
            f = d(f)
        return f
    return apply


def print_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def service_option(f: F) -> F:
    return click.option("--no-service", is_flag=True,
                        help="Work in this process even when `ragctl serve` is running.")(f)


def emit(as_json: bool, data: Any, render: str, *args: Any, **kwargs: Any) -> None:
    """``data`` as JSON on stdout, or ``display.<render>(*args or data)`` for people.
    ``data`` may be a function that makes it, called only for JSON."""
    if as_json:
        print_json(data() if callable(data) else data)
    else:
        from ragctl.app import display

        getattr(display, render)(*(args or (data,)), **kwargs)
