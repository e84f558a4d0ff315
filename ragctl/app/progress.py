"""Progress on stderr for long work: the index bar, training epochs, exports and evals.

Kept apart from :mod:`ragctl.display` so that commands that only print an answer or a
list of passages never import rich's progress machinery.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from rich.text import Text

from ragctl.app.display import short_path, stderr, stdout

if TYPE_CHECKING:
    from ragctl.training.trainer import EpochLog, TrainJob


def _bar_columns() -> tuple[ProgressColumn, ...]:
    return (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
            MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("eta"),
            TimeRemainingColumn())


@contextmanager
def task_progress(description: str, total: int | None) -> Iterator[Callable[[int], None]]:
    """A progress bar with a count and an ETA on stderr; yields ``advance(n)``."""
    with Progress(*_bar_columns(), console=stderr, transient=True) as bar:
        task = bar.add_task(description, total=total)

        def advance(n: int = 1) -> None:
            bar.advance(task, n)

        yield advance


@contextmanager
def step_progress(description: str) -> Iterator[Callable[[int, int], None]]:
    """A progress bar for work that reports ``update(done, total)`` as it goes."""
    with Progress(*_bar_columns(), console=stderr, transient=True) as bar:
        task = bar.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


class _PassageRate(ProgressColumn):
    def __init__(self, reporter: RichReporter) -> None:
        super().__init__()
        self.reporter = reporter

    def render(self, task: Task) -> Text:
        elapsed = time.monotonic() - self.reporter.started
        rate = self.reporter.passages / elapsed if elapsed > 0 else 0.0
        return Text(f"{self.reporter.passages} passages, {rate:.0f}/s", style="progress.data.speed")


class RichReporter:
    """Index progress: a bar with the phase, the stage and file it is at, files done,
    passages/s and ETA, on stderr. When stderr is not a terminal (a log file, cron), a
    plain line instead every :attr:`LINE_FILES` files, and at least every
    :attr:`LINE_SECONDS` seconds while the run goes on (a short run prints none)."""

    LINE_FILES = 100
    LINE_SECONDS = 10.0
    SHOWN_NAME = 30  # characters of the current file's name the bar shows, at most

    def __init__(self, *, enabled: bool = True) -> None:
        self.passages = 0
        self.files = 0
        self.total: int | None = None
        self.name = ""
        self.stage_name = ""  # reading, OCR, tables, sentences, embedding, saving...
        self.path: Path | None = None  # the file the run is on
        self.note = ""  # a detail of the current file ("report.pdf: OCR p. 3 of 40")
        self.started = time.monotonic()
        self.phase_started = self.started
        self.lines = enabled and not stderr.is_terminal
        self._last_line = (0, time.monotonic())
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self.progress = Progress(
            SpinnerColumn(), TextColumn("[bold]{task.description}"), BarColumn(),
            MofNCompleteColumn(), TextColumn("files"), _PassageRate(self),
            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
            console=stderr, disable=not enabled, transient=True,
        )
        self.task: Any = None

    def __enter__(self) -> RichReporter:
        self.progress.start()
        if self.lines:  # a slow file, page or batch still shows the run is alive
            self._ticker = threading.Thread(target=self._tick, name="ragctl-progress",
                                            daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        self.progress.stop()

    def phase(self, name: str, total: int | None = None) -> None:
        if self.task is None:
            self.task = self.progress.add_task(name, total=total)
        else:
            self.progress.update(self.task, description=name, total=total, completed=0)
        if total is not None:
            self.started = time.monotonic()
            self.passages = 0
            self.files = 0
        self.name, self.total = name, total
        self.phase_started = time.monotonic()
        self.stage_name, self.note = "", ""

    def stage(self, name: str, path: Path | None = None) -> None:
        """What the run is doing now (empty: between stages) and on which file."""
        self.stage_name, self.note = name, ""
        if path is not None:
            self.path = path
        self._describe()

    def advance(self, *, files: int = 0, passages: int = 0) -> None:
        self.passages += passages
        self.files += files
        if self.task is not None and files:  # the next file: no detail of the last one
            self.note = ""
            self.progress.update(self.task, advance=files)
            self._describe()
        if self.lines:
            done, at = self._last_line
            now = time.monotonic()
            if self.files - done >= self.LINE_FILES or (
                    now - at >= self.LINE_SECONDS and (files or passages)):
                self._print_line(now)

    def detail(self, text: str) -> None:
        """What the current file is at (a long scan: "report.pdf: OCR p. 3 of 40")."""
        self.note = text
        self._describe()

    def warn(self, path: Path, reason: str) -> None:
        self.progress.console.print(  # one line per file, however long, for grep
            Text.assemble(("warning: ", "yellow"), f"{short_path(path)}: {reason}"),
            soft_wrap=True)

    def _where(self, *, bar: bool = False) -> str:
        """" · reading notes/a.md", " · report.pdf: OCR p. 3 of 40", or ""; on the bar,
        the file's name alone, cut to :attr:`SHOWN_NAME` characters."""
        if self.note:
            return f" · {self.note}"
        if not self.stage_name:
            return ""
        if self.path is None:
            return f" · {self.stage_name}"
        shown = short_path(self.path)
        if bar:
            shown = self.path.name
            if len(shown) > self.SHOWN_NAME:
                shown = shown[:self.SHOWN_NAME - 1] + "…"
        return f" · {self.stage_name} {shown}"

    def _describe(self) -> None:
        if self.task is not None:
            self.progress.update(self.task, description=self.name + self._where(bar=True))

    def _print_line(self, now: float) -> None:
        """"indexing: 40 of 120 files, 310 passages, 52/s · embedding notes/a.md"."""
        with self._lock:
            if self.total is None and not self.files and not self.passages:
                text = f"{self.name}: {now - self.phase_started:.0f} s"  # scanning
            else:
                rate = self.passages / max(now - self.started, 1e-9)
                of = f" of {self.total}" if self.total is not None else ""
                text = (f"{self.name}: {self.files}{of} files, {self.passages} passages, "
                        f"{rate:.0f}/s")
            stderr.print(text + self._where(), highlight=False, soft_wrap=True)
            self._last_line = (self.files, now)

    def _tick(self) -> None:
        """A line when none was printed for :attr:`LINE_SECONDS` (in its own thread: a
        single slow page or batch tells nothing while it runs)."""
        while not self._stop.wait(
                max(self._last_line[1] + self.LINE_SECONDS - time.monotonic(), 0.0)):
            now = time.monotonic()
            if now - self._last_line[1] < self.LINE_SECONDS:
                continue  # a line was printed meanwhile
            if self.name:
                self._print_line(now)
            else:  # nothing begun yet: nothing to tell
                with self._lock:
                    self._last_line = (self.files, now)


class TrainingProgress:
    """One progress bar per epoch, a line per validation, an export bar, then a summary."""

    def __init__(self, kind: str, epochs: int) -> None:
        from ragctl.training.trainer import metric_name

        self.kind, self.epochs, self.metric = kind, epochs, metric_name(kind)
        self.bars = ExitStack()
        self.advance: Callable[[int], None] | None = None
        self.update: Callable[[int, int], None] | None = None

    def __enter__(self) -> TrainingProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.bars.close()

    def step(self, epoch: int, step: int, steps: int, loss: float) -> None:
        if step == 1:
            self.bars.close()
            self.advance = self.bars.enter_context(
                task_progress(f"epoch {epoch}/{self.epochs}", steps))
        if self.advance is not None:
            self.advance(1)

    def epoch(self, log: EpochLog) -> None:
        self.bars.close()
        if log.epoch == 0:
            stderr.print(f"before training: validation loss {log.val_loss:.4f}, "
                         f"{self.metric} {log.val_metric:.3f}")
            return
        stderr.print(f"epoch {log.epoch}: train loss {log.train_loss:.4f}, validation loss "
                     f"{log.val_loss:.4f}, {self.metric} {log.val_metric:.3f} "
                     f"({log.seconds:.0f} s)")

    def export(self, done: int, total: int) -> None:
        if self.update is None:
            self.update = self.bars.enter_context(step_progress("exporting"))
        self.update(done, total)

    def done(self, job: TrainJob) -> None:
        self.bars.close()
        r = job.result
        metrics = ", ".join(f"{k} {v}" for k, v in r.metrics.items())
        stdout.print(f"trained {self.kind} ({r.architecture}, {r.examples} examples, best "
                     f"epoch {r.best_epoch}): {metrics}")
        stdout.print(f"training run: {job.out}")
        if job.exported is not None and job.manifest is not None:
            method = job.manifest["rounding"]["method"]
            stdout.print(f"exported {job.manifest['quantization']} model"
                         f"{f' ({method} rounding)' if method != 'none' else ''}: "
                         f"{job.exported}")
            kind = {"filter": "filter", "re": "relevance"}.get(self.kind, self.kind)
            stdout.print(f"use it: ragctl models use {kind} {job.name}")
