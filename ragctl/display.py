"""Terminal rendering: progress bars and warnings on stderr, results on stdout."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

stdout = Console(highlight=False, soft_wrap=True)
stderr = Console(stderr=True, highlight=False)


def short_path(path: str | Path) -> str:
    """A path as a person would type it: relative to here, or with ~ for home."""
    p = str(path)
    cwd = os.getcwd().rstrip("/") + "/"
    if p.startswith(cwd):
        return p[len(cwd):]
    home = os.path.expanduser("~").rstrip("/") + "/"
    if home != "/" and p.startswith(home):
        return "~/" + p[len(home):]
    return p


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


class _PassageRate(ProgressColumn):
    def __init__(self, reporter: RichReporter) -> None:
        super().__init__()
        self.reporter = reporter

    def render(self, task: Task) -> Text:
        elapsed = time.monotonic() - self.reporter.started
        rate = self.reporter.passages / elapsed if elapsed > 0 else 0.0
        return Text(f"{self.reporter.passages} passages, {rate:.0f}/s", style="progress.data.speed")


class RichReporter:
    """Index progress: a bar with files done, passages/s and ETA, on stderr."""

    def __init__(self, *, enabled: bool = True) -> None:
        self.passages = 0
        self.started = time.monotonic()
        self.progress = Progress(
            SpinnerColumn(), TextColumn("[bold]{task.description}"), BarColumn(),
            MofNCompleteColumn(), TextColumn("files"), _PassageRate(self),
            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
            console=stderr, disable=not enabled, transient=True,
        )
        self.task: Any = None

    def __enter__(self) -> RichReporter:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def phase(self, name: str, total: int | None = None) -> None:
        if self.task is None:
            self.task = self.progress.add_task(name, total=total)
        else:
            self.progress.update(self.task, description=name, total=total, completed=0)
        if total is not None:
            self.started = time.monotonic()
            self.passages = 0

    def advance(self, *, files: int = 0, passages: int = 0) -> None:
        self.passages += passages
        if self.task is not None:
            self.progress.update(self.task, advance=files)

    def warn(self, path: Path, reason: str) -> None:
        self.progress.console.print(
            Text.assemble(("warning: ", "yellow"), f"{short_path(path)}: {reason}"))


def index_summary_table(s: dict[str, Any]) -> Table:
    t = Table(title=f"index {s['index']!r}", show_header=False, box=None, pad_edge=False)
    t.add_column(style="bold")
    t.add_column(justify="right")
    rows = [
        ("files seen", s["files_seen"]), ("added", s["added"]), ("updated", s["updated"]),
        ("moved", s["moved"]), ("removed", s["removed"]), ("unchanged", s["unchanged"]),
        ("skipped", s["skipped"]), ("passages added", s["passages_added"]),
        ("passages removed", s["passages_removed"]),
        ("vectors reused", s["passages_reused_vectors"]),
    ]
    if s.get("reembedded"):
        rows.append(("re-embedded", s["reembedded"]))
    seconds = s["seconds"]
    rate = s["passages_added"] / seconds if seconds else 0.0
    rows.append(("time", f"{seconds:.1f} s ({rate:.0f} passages/s)"))
    for k, v in rows:
        t.add_row(k, str(v))
    return t
