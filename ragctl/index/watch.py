"""``ragctl watch``: keep an index current while files change.

Filesystem events (``watchdog``) under the watched folders are collected; once nothing
has changed for ``debounce`` seconds, an ordinary incremental index run brings the index
up to date — the same run as ``ragctl index``, so creations, edits, moves, deletions and
editors' atomic saves (write a temporary file, rename it over the old one) are all
handled the same way, per-file transactions and ``kill -9`` safety included. The
embedding model stays loaded between runs. One line per changed file goes to stderr.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ragctl.errors import IndexLockedError, RagctlError
from ragctl.index.ingest import file_format


class _Changes:
    """Paths that changed, and when the last one did (fed from watchdog's thread)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.paths: set[str] = set()
        self.last = 0.0

    def add(self, *paths: str) -> None:
        with self.lock:
            self.paths.update(p for p in paths if p)
            self.last = time.monotonic()

    def take(self, debounce: float) -> set[str] | None:
        """The changed paths once quiet for ``debounce`` s, else None."""
        with self.lock:
            if not self.paths or time.monotonic() - self.last < debounce:
                return None
            out, self.paths = self.paths, set()
            return out


def relevant(path: str) -> bool:
    """A change worth a run: a file ragctl reads, or a folder (moved or deleted)."""
    name = os.path.basename(path)
    if name.startswith(".") or name.endswith(("~", ".swp", ".tmp")):
        return False  # editors' temporary files; their final rename is seen on its own
    return file_format(Path(path)) is not None or os.path.isdir(path) or \
        not os.path.exists(path)


def watch(settings: Any, paths: Sequence[Path], *, debounce: float = 2.0,
          say: Callable[[str], None], stop: threading.Event | None = None,
          on_run: Callable[[Any], None] | None = None) -> None:
    """Index ``paths`` (or the folders indexed before), then keep them current until
    ``stop`` is set or Ctrl-C."""
    try:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer
    except ImportError:
        raise RagctlError("ragctl watch needs the watchdog package: pip install watchdog") \
            from None
    from ragctl.index.indexer import index_paths
    from ragctl.models import registry as models

    models.keep_loaded()  # the embedder is loaded once, not at every run
    stop = stop or threading.Event()
    summary, failure = index_paths(settings, list(paths))
    roots = _roots(settings, paths)
    if not roots:
        raise RagctlError("nothing to watch: give a folder, or index one first")
    say(f"watching {', '.join(roots)} (index {settings.index!r}); Ctrl-C stops")
    if on_run is not None:
        on_run(summary)
    changes = _Changes()

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: Any) -> None:
            if event.event_type in ("opened", "closed_no_write"):
                return
            src = str(event.src_path)
            dest = str(getattr(event, "dest_path", "") or "")
            if relevant(src) or (dest and relevant(dest)):
                changes.add(src, dest)

    observer = Observer()
    for root in roots:
        observer.schedule(Handler(), root, recursive=os.path.isdir(root))
    observer.start()
    try:
        while not stop.is_set():
            stop.wait(0.2)
            changed = changes.take(debounce)
            if changed is None:
                continue
            for p in sorted(changed):
                say(f"changed: {p}")
            try:
                summary, failure = index_paths(settings, [])
            except IndexLockedError:
                changes.add(*changed)  # another run is writing: try again after it
                continue
            say(_line(summary.to_dict()))
            if on_run is not None:
                on_run(summary)
    finally:
        observer.stop()
        observer.join(timeout=5)
        models.release()
    _ = failure


def _roots(settings: Any, paths: Sequence[Path]) -> list[str]:
    if paths:
        return [os.path.abspath(p) for p in paths if os.path.exists(p)]
    from ragctl.store.collection import Collection

    with Collection.open(settings) as c:
        return [r for r in c.store.roots() if os.path.exists(r)]


def _line(s: dict[str, Any]) -> str:
    parts = [f"{s[k]} {k}" for k in ("added", "updated", "moved", "removed", "skipped")
             if s.get(k)]
    return "index: " + (", ".join(parts) if parts else "nothing changed") + \
        f" ({s.get('seconds', 0):.1f} s)"
