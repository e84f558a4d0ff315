"""Terminal rendering: progress bars and warnings on stderr, results on stdout."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
        self.progress.console.print(  # one line per file, however long, for grep
            Text.assemble(("warning: ", "yellow"), f"{short_path(path)}: {reason}"),
            soft_wrap=True)


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
    rows.append(("time", f"{s['seconds']:.1f} s (embedding {s['embed_seconds']:.1f} s)"))
    for k, v in rows:
        t.add_row(k, str(v))
    return t


def _where(path: str, place: str) -> str:
    return short_path(path) + (f" ({place})" if place else "")


def render_sources(sources: Any) -> None:
    """Each cited sentence: its number, file and place, offsets, and the sentence."""
    if not sources:
        return
    stdout.print(Text("Sources:", style="bold"))
    for c in sources:
        stdout.print(Text.assemble((f"  [{c.number}] ", "bold"),
                                   (_where(c.path, c.place), "cyan"),
                                   (f"  chars {c.start_char}-{c.end_char}", "dim")))
        stdout.print(Text(f"      {c.text}"))


def render_answer(answer: Any, *, streamed: bool) -> None:
    """The answer (re-printed with checked citations), then its sources."""
    if streamed:
        stdout.print("")
        if answer.answer != " ".join(answer.raw_answer.split()):
            stdout.print(Text.assemble(("Checked: ", "bold"),
                                       answer.answer or "(nothing the sources support)"))
    else:
        stdout.print(Text.assemble(("Answer: ", "bold"),
                                   answer.answer or "(the model gave no answer)"))
    for s in answer.sentences:
        if not s.supported:
            stdout.print(Text(f"  ! not supported by your documents: {s.text}", style="yellow"))
        elif s.attributed:
            stdout.print(Text(f"  (citation added by the checker: {s.text})", style="dim"))
    if answer.removed_citations:
        nums = ", ".join(f"[{n}]" for n in answer.removed_citations)
        stdout.print(Text(f"  removed citations to sentences never given: {nums}", style="dim"))
    if answer.confidence is not None:
        share = answer.candidates[0]["share"] if answer.candidates else 0.0
        stdout.print(Text(f"  confidence {answer.confidence:.3f} "
                          f"({share:.0%} of the candidates' probability)", style="dim"))
    render_sources(answer.sources)


def render_abstention(answer: Any) -> None:
    stdout.print(Text("Not found in your documents.", style="bold"))
    stdout.print(Text(f"  ({answer.abstain_reason})", style="dim"))
    closest = answer.passages[:3]
    if closest:
        stdout.print(Text("Closest passages:", style="bold"))
        for p in closest:
            snippet = p.text if len(p.text) <= 200 else p.text[:197].rstrip() + "…"
            stdout.print(Text.assemble(("  • ", "bold"), (_where(p.path, p.place), "cyan"),
                                       (f"  relevance {p.relevance:.2f}", "dim")))
            stdout.print(Text(f"      {snippet}"))


def render_explain(answer: Any) -> None:
    t = Table(title="retrieved → reranked", show_lines=False)
    for col in ("rank", "kept", "relevance", "cos", "passage"):
        t.add_column(col)
    for p in answer.passages:
        sim = f"{p.similarity:.2f}" if p.similarity is not None else "-"
        t.add_row(str(p.retrieval_rank), "yes" if p.kept else "", f"{p.relevance:.2f}", sim,
                  _where(p.path, p.place))
    stdout.print(t)
    if answer.filtered:
        f = Table(title="context filter")
        for col in ("kept", "score", "sentence"):
            f.add_column(col)
        for s in answer.filtered:
            text = s["text"] if len(s["text"]) <= 90 else s["text"][:87] + "…"
            f.add_row("yes" if s["kept"] else "", f"{s['score']:.2f}", text)
        stdout.print(f)
    tok = answer.tokens
    if tok.get("full_context"):
        saved = 1 - tok.get("context", 0) / tok["full_context"]
        stdout.print(f"context tokens: {tok.get('context', 0)} of {tok['full_context']} "
                     f"({saved:.0%} saved)")
    if answer.abstained:
        stdout.print(f"abstained: {answer.abstain_reason}")
    timings = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in answer.timings.items()
                        if k not in ("tokens_per_second",))
    stdout.print(Text(f"timings: {timings}", style="dim"))


def render_long(answer: Any) -> None:
    if answer.abstained:
        render_abstention(answer)
        return
    stdout.print(Text("Answer:", style="bold"))
    stdout.print(answer.answer or "(nothing found to say)")
    if answer.fluency_rejected:
        stdout.print(Text(f"  (fluency rewrite not used: {answer.fluency_rejected})", style="dim"))
    if answer.facets:
        stdout.print(Text("Facets, in rank order:", style="bold"))
        for f in answer.facets:
            how = "best nugget, verbatim" if f["fallback"] else "summary"
            cites = " ".join(f"[{n}]" for n in f["citations"])
            stdout.print(Text(f"  {f['rank']}. {how}, {len(f['nugget_ids'])} nuggets, "
                              f"relevance {f['score']:.2f}  {cites}", style="dim"))
    render_sources(answer.sources)
