"""Terminal rendering: progress bars and warnings on stderr, results on stdout.

One renderer per command result; the CLI calls exactly one of them.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from ragctl.ask.longform import LongAnswer
    from ragctl.models.registry import ModelInfo
    from ragctl.records import Answer, Citation, Hit
    from ragctl.store.collection import DoctorReport
    from ragctl.training.silver import SilverReport

stdout = Console(highlight=False, soft_wrap=True)
stderr = Console(stderr=True, highlight=False)
_client: tuple[str, str] | None = None  # (cwd, home) of the client rendered for


class _Terminal(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


@contextmanager
def rendering_for(*, tty: bool, width: int, environ: Mapping[str, str], cwd: str,
                  home: str) -> Iterator[io.StringIO]:
    """Results rendered into a string as they would look on another process's stdout
    (a client of ``ragctl serve``): its terminal or pipe, width, colour variables
    (``NO_COLOR``, ``FORCE_COLOR``, ``TERM``...) and the folder paths are relative to.
    Not thread-safe: the service renders on its one worker thread."""
    global stdout, _client
    buf = _Terminal(tty)
    saved = stdout, _client
    stdout = Console(file=buf, highlight=False, soft_wrap=True, width=width,
                     _environ=dict(environ))
    _client = (cwd, home)
    try:
        yield buf
    finally:
        stdout, _client = saved


def short_path(path: str | Path) -> str:
    """A path as a person would type it: relative to here, or with ~ for home."""
    p = str(path)
    here, home_dir = _client or (os.getcwd(), os.path.expanduser("~"))
    cwd = here.rstrip("/") + "/"
    if p.startswith(cwd):
        return p[len(cwd):]
    home = home_dir.rstrip("/") + "/"
    if home != "/" and p.startswith(home):
        return "~/" + p[len(home):]
    return p


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def render_index_summary(s: dict[str, Any]) -> None:
    stdout.print(index_summary_table(s))


def index_summary_table(s: dict[str, Any]) -> Table:
    t = Table(title=f"index {s['index']!r}", show_header=False, box=None, pad_edge=False)
    t.add_column(style="bold")
    t.add_column(justify="right")
    rows = [
        ("files seen", s["files_seen"]), ("added", s["added"]), ("updated", s["updated"]),
        ("moved", s["moved"]), ("removed", s["removed"]), ("unchanged", s["unchanged"]),
        ("skipped", _skipped(s)), ("passages added", s["passages_added"]),
        ("passages removed", s["passages_removed"]),
        ("vectors reused", s["passages_reused_vectors"]),
    ]
    if s.get("reembedded"):
        rows.append(("re-embedded", s["reembedded"]))
    from ragctl.index.indexer import time_line

    for k, v in rows:
        t.add_row(k, str(v))
    t.add_row("time", Text(time_line(s["seconds"], s.get("phases")), justify="left"))
    return t


def _skipped(s: dict[str, Any]) -> str:
    before = s.get("skipped_before", 0)
    return f"{s['skipped']} ({before} as before)" if before else str(s["skipped"])


def _by_reason(reasons: dict[str, int]) -> str:
    """"11 no text found, 1 empty file": skip counts, the most frequent first."""
    return ", ".join(f"{n} {k}" for k, n in sorted(reasons.items(), key=lambda kv: -kv[1]))


def render_skip_summary(s: dict[str, Any], *, verbose: bool) -> None:
    """Skipped files counted by reason on stderr; the ones skipped as before are named
    only with ``--verbose`` (their warnings were shown when they were first met)."""
    reasons = s.get("skipped_reasons") or {}
    if not reasons:
        return
    stderr.print(f"skipped by reason: {_by_reason(reasons)}", soft_wrap=True,
                 highlight=False)
    before = s.get("skipped_before", 0)
    if before and not verbose:
        stderr.print(f"{before} file{'s' if before != 1 else ''} skipped as before; "
                     "--verbose lists them", highlight=False)
    for row in s.get("skipped_before_files", []) if verbose else []:
        stderr.print(Text.assemble(("skipped: ", "yellow"),
                                   f"{short_path(row['path'])}: {row['reason']}"),
                     soft_wrap=True)


def _where(path: str, place: str) -> str:
    return short_path(path) + (f" ({place})" if place else "")


def render_search(hits: Sequence[Hit]) -> None:
    """Ranked passages: place, scores and the start of the text."""
    if not hits:
        stdout.print("no matching passages")
        return
    for rank, h in enumerate(hits, start=1):
        sim = f"  cos {h.similarity:.2f}" if h.similarity is not None else ""
        stdout.print(Text.assemble((f"{rank:>2}. ", "bold"), (_where(h.path, h.place), "cyan"),
                                   (f"  score {h.score:.4f}{sim}", "dim")))
        snippet = h.text if len(h.text) <= 400 else h.text[:397].rstrip() + "…"
        stdout.print(Text("    " + snippet))


def _quoted(text: str, highlight: str | None, *, width: int = 40) -> Text:
    """A cited sentence, the quoted answer in it in bold; a long sentence is cut to
    ``width`` words on either side of the answer."""
    i = text.find(highlight) if highlight else -1
    if i < 0 or not highlight:
        words = text.split()
        return Text(text if len(words) <= 3 * width else " ".join(words[:3 * width]) + " …")
    before, answer, after = text[:i], highlight, text[i + len(highlight):]
    lead, tail = before.split(), after.split()
    if len(lead) > width:
        before = "… " + " ".join(lead[-width:]) + " "
    if len(tail) > width:
        after = " " + " ".join(tail[:width]) + " …"
    return Text.assemble(before, (answer, "bold"), after)


def render_sources(sources: Sequence[Citation], *, highlight: str | None = None) -> None:
    """Each cited sentence: its number, file and place, offsets, and the sentence."""
    if not sources:
        return
    stdout.print(Text("Sources:", style="bold"))
    for c in sources:
        where = f"  chars {c.start_char}-{c.end_char}"
        if c.answer_start is not None:
            where += f", answer {c.answer_start}-{c.answer_end}"
        if c.column:  # a cell; a figure stated in a sentence has a row but no column
            where = f"  row {c.row}, column {c.column};{where}"
        elif c.row:
            where = f"  {c.row};{where}"
        path = f"{c.path}:{c.line}" if c.line is not None else c.path
        stdout.print(Text.assemble((f"  [{c.number}] ", "bold"),
                                   (_where(path, c.place), "cyan"), (where, "dim")))
        stdout.print(Text.assemble("      ", _quoted(
            c.text, highlight if c.answer_start is not None else None)))
        if c.also_in:
            stdout.print(Text("      also in " + ", ".join(short_path(p) for p in c.also_in),
                              style="dim"))


def render_answer(answer: Answer, *, explain: bool = False) -> None:
    """The answer once, with its citation numbers, then its sources — or, when the
    documents do not hold it, that and the closest evidence; then ``--explain``."""
    if answer.abstained:
        render_abstention(answer)
    else:
        stdout.print(Text.assemble(("Answer: ", "bold"), answer.answer))
        render_sources(answer.sources, highlight=answer.raw_answer)
    if explain:
        render_explain(answer)


def render_abstention(answer: Answer | LongAnswer) -> None:
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


def render_explain(answer: Answer) -> None:
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
    if answer.kind:
        how = {"span": "a span of a cited sentence, chosen by the reader",
               "cell": "a table cell, by the row the question names and the column it asks",
               "quote": "the supporting sentences, quoted",
               "free": "the generator's own words, checked against the sentences"}
        first = answer.candidates[0] if answer.candidates else {}
        rule = first.get("rule")
        if answer.kind == "yes-no" and rule == "not stated":
            said = (f"not stated: the best sentence states {first['stated']:.0%} of the "
                    f"question's words and is silent on {', '.join(first['silent_on'])} "
                    "(no name or number it could give another value of)")
        elif answer.kind == "yes-no" and "stated" in first:
            from ragctl.ask.yesno import YES_STATED

            said = (f"yes or no from {rule}: it states {first['stated']:.0%} of the "
                    f"question's words (yes above {YES_STATED:.0%})")
        elif answer.kind == "cell" and "column" in first:
            said = f"{how['cell']}: row {first['row']!r}, column {first['column']!r}"
        elif rule:
            said = f"a span of a cited sentence: {rule}"
        else:
            said = how.get(answer.kind, answer.kind)
        stdout.print(f"question: {answer.question_type or '?'}; answer: {said}")
    for c in answer.candidates[:1]:
        if "probability" in c:
            feats = ", ".join(f"{k} {v:.2f}" for k, v in c.items()
                              if k not in ("answer", "probability"))
            stdout.print(f"best span: {c['answer']!r}, P(answers) {c['probability']:.2f} "
                         f"({feats})")
    if answer.rules:
        stdout.print(f"rules fired: {', '.join(answer.rules)}")
    for note in answer.notes:
        stdout.print(Text(f"checker: {note}", style="dim"))
    if answer.abstained:
        stdout.print(f"abstained: {answer.abstain_reason}")
    timings = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in answer.timings.items()
                        if k not in ("tokens_per_second",))
    stdout.print(Text(f"timings: {timings}", style="dim"))


def render_long(answer: LongAnswer) -> None:
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


def render_markdown(text: str) -> None:
    from rich.markdown import Markdown

    stdout.print(Markdown(text))


def render_models(infos: Sequence[ModelInfo]) -> None:
    t = Table(box=None)
    for col in ("kind", "name", "default", "about", "location"):
        t.add_column(col)
    for i in infos:
        d = i.details
        about = d.get("description", "")
        if "architecture" in d:
            metrics = ", ".join(f"{k} {v}" for k, v in d.get("metrics", {}).items()
                                if not k.startswith("val_loss"))
            rounding = d.get("rounding", {}).get("method")
            about = f"{d['architecture']}, {d.get('quantization', '?')}" + \
                (f" ({rounding})" if rounding == "gptq" else "") + \
                (f"; {metrics}" if metrics else "")
        t.add_row(i.kind, i.name, "*" if i.default else "", about, i.location)
    stdout.print(t)


def render_status(info: dict[str, Any]) -> None:
    t = Table(title=f"index {info['index']!r}", show_header=False, box=None)
    t.add_column(style="bold")
    t.add_column()
    t.add_row("location", short_path(info["path"]))
    t.add_row("documents", f"{info['documents']}  "
              + ", ".join(f"{k} {v}" for k, v in info["formats"].items()))
    t.add_row("passages", str(info["passages"]))
    t.add_row("sentences", str(info["sentences"]))
    t.add_row("embedder", f"{info['embedder']} ({info['dim']} dims)" if info["embedder"]
              else "(none yet)")
    t.add_row("on disk", human_bytes(info["total_bytes"]))
    t.add_row("folders", "\n".join(short_path(r) for r in info["roots"]) or "(none)")
    if info.get("skipped"):
        n = info["skipped"]
        t.add_row("skipped", f"{n} file{'s' if n != 1 else ''} "
                  f"({_by_reason(info['skipped_reasons'])}); ragctl index "
                  "--verbose lists them")
    if info.get("read_in_part"):
        n = info["read_in_part"]
        t.add_row("read in part", f"{n} file{'s' if n != 1 else ''} with pages no OCR "
                  "read")
    if info["pending_vector_changes"]:
        t.add_row("pending", f"{info['pending_vector_changes']} vector changes "
                  "(an interrupted run; the next run or 'ragctl doctor' applies them)")
    run = info["last_run"]
    if run:
        t.add_row("last run", f"{run['started']}  {run['status']}")
    if info.get("read_only"):
        t.add_row("access", "read-only (searching and asking work; indexing does not)")
    for problem in info.get("damaged", []):
        t.add_row("[red]damaged[/]", f"{problem} (run: ragctl doctor)")
    stdout.print(t)


def render_line(text: str) -> None:
    stdout.print(Text(text))


def render_note(text: str) -> None:
    stdout.print(Text(text, style="dim"))


def render_error(text: str) -> None:
    stderr.print(Text(f"Error: {text}", style="red"))


def render_service_status(st: dict[str, Any]) -> None:
    t = Table(title="ragctl serve", show_header=False, box=None)
    t.add_column(style="bold")
    t.add_column()
    t.add_row("pid", str(st["pid"]))
    t.add_row("socket", short_path(st["socket"]))
    t.add_row("up", f"{st['uptime_s']:.0f} s, {st['requests']} requests")
    if st.get("rss_bytes"):
        t.add_row("memory", human_bytes(st["rss_bytes"]))
    t.add_row("indexes", ", ".join(st["indexes"]) or "(none open yet)")
    warmed = st.get("passages_warmed") or {}
    if warmed:
        t.add_row("prepared", ", ".join(f"{k}: {v} passages" for k, v in warmed.items()))
    t.add_row("models", "\n".join(st["models"]) or "(none loaded yet)")
    stdout.print(t)


def render_service_ready(info: dict[str, Any]) -> None:
    stderr.print(Text(f"ragctl serve: listening on {short_path(info['socket'])} "
                      f"(pid {info['pid']}); Ctrl-C stops it", style="bold"))
    if info.get("http"):
        stderr.print(Text(f"  also on {info['http']}; send 'Authorization: Bearer <token>' "
                          f"with the token in {short_path(info['token_file'])}"))
    if info.get("models"):
        stderr.print(Text("  loaded: " + ", ".join(info["models"]), style="dim"))


def render_doctor(report: DoctorReport) -> None:
    for p in report.problems:
        stdout.print(f"problem: {p}")
    for r in report.repaired:
        stdout.print(f"repaired: {r}")
    if not report.problems:
        stdout.print(f"ok: {report.info.get('documents', 0)} documents, "
                     f"{report.info.get('passages', 0)} passages, store and vectors agree")


def render_silver(report: SilverReport, out: Path, measures: Sequence[str]) -> None:
    synth = report.synth
    if synth is not None:
        stderr.print(f"{synth.kept} of {synth.tried} generated questions kept "
                     f"({synth.unparsed} unparsed, {synth.answer_not_in_sentence} answer "
                     f"not in the sentence, {synth.gives_answer_away} answer in the "
                     f"question, {synth.not_found_again} source not retrieved again)")
    run = report.run
    picked = ", ".join(f"{m} {run.selected.get(m, 0)}" for m in measures)
    stdout.print(f"{run.written} labelled, {run.skipped_done} already in {out}, "
                 f"{run.skipped_bad} without passages; sentences selected: {picked}")


def render_export(name: str, target: Path, manifest: dict[str, Any]) -> None:
    from ragctl.training.export import dir_size

    method = manifest["rounding"]["method"]
    stdout.print(f"exported {manifest['kind']} model {name} ({manifest['architecture']}, "
                 f"{manifest['quantization']}"
                 f"{f', {method} rounding' if method != 'none' else ''}, "
                 f"{human_bytes(dir_size(target))}): {target}")


@contextmanager
def working(enabled: bool = True, what: str = "working") -> Iterator[None]:
    """A spinner on stderr while models load and the answer is found."""
    if not enabled or not stderr.is_terminal:
        yield
        return
    with stderr.status(what, spinner="dots"):
        yield


def render_logs(rows: Sequence[dict[str, Any]]) -> None:
    """Each question asked, when, what was answered, and the first source."""
    if not rows:
        stdout.print("no questions asked yet")
        return
    for r in rows:
        stdout.print(Text.assemble((r["asked"].replace("T", " ")[:16], "dim"), "  ",
                                   (r["question"], "bold")))
        answer = "Not found in your documents." if r["abstained"] else r["answer"]
        stdout.print(Text(f"    {answer}"))
        for c in (r["result"].get("sources") or [])[:1]:
            stdout.print(Text(f"    {_where(c['path'], c.get('place', ''))}", style="cyan"))
