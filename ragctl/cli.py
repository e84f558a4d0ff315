"""The ``ragctl`` command line: parse, open the index, call the library, print.

Heavy libraries (torch, spaCy, hnswlib, rich) are imported inside the commands, so
``ragctl --help`` answers at once.
"""

from __future__ import annotations

import functools
import json
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from . import __version__
from .errors import EXIT_INTERRUPTED, RagctlError

F = TypeVar("F", bound=Callable[..., Any])


class RagctlClickError(click.ClickException):
    """A library error shown as one line, with the error's own exit code."""

    def __init__(self, error: RagctlError) -> None:
        super().__init__(str(error))
        self.exit_code = error.exit_code  # type: ignore[misc]


@contextmanager
def _errors() -> Iterator[None]:
    try:
        yield
    except RagctlError as e:
        raise RagctlClickError(e) from None
    except KeyboardInterrupt:
        click.echo("\ninterrupted; what was committed is kept, run the command again "
                   "to finish", err=True)
        sys.exit(EXIT_INTERRUPTED)


def index_option(f: F) -> F:
    return click.option(
        "--index", "-i", "index_name", metavar="NAME", default=None,
        help="Which index to use (default: 'default'; env RAGCTL_INDEX).")(f)


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True,
                        help="Print a machine-readable JSON result on stdout.")(f)


def _settings(**overrides: Any) -> Any:
    from .config import load_settings

    return load_settings(**overrides)


def _setup_logging(verbose: int) -> None:
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
    root = logging.getLogger("ragctl")
    root.handlers[:] = [handler]
    root.setLevel(level)


def _print_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def command_errors(f: F) -> F:
    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _errors():
            return f(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ragctl")
@click.option("-v", "--verbose", count=True, help="More log output on stderr (-vv for debug).")
def cli(verbose: int) -> None:
    """Ask questions about your own documents, offline, with answers that cite their sources.

    \b
    Start with:
        ragctl index ~/Documents/notes
        ragctl search "when is the lease up for renewal"
    """
    _setup_logging(verbose)


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@index_option
@click.option("--embedder", metavar="NAME|DIR",
              help="Embedding model: a registry name or a sentence-transformers directory.")
@click.option("--chunk-words", type=click.IntRange(min=10), help="Target words per passage.")
@click.option("--max-file-mb", type=click.FloatRange(min=0, min_open=True),
              help="Skip files larger than this many MB.")
@click.option("--reembed", is_flag=True,
              help="Re-embed every passage when the index was built with another model.")
@click.option("--force", is_flag=True, help="Re-read every file even if it looks unchanged.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@json_option
@command_errors
def index(paths: tuple[Path, ...], index_name: str | None, embedder: str | None,
          chunk_words: int | None, max_file_mb: float | None, reembed: bool, force: bool,
          quiet: bool, as_json: bool) -> None:
    """Add files and folders to an index, or bring it up to date.

    Reads .txt .md .rst .html .pdf .docx .eml .mbox. Unchanged files are skipped,
    changed ones re-read, deleted ones removed. With no PATH, every folder indexed
    before is refreshed.

    \b
    Examples:
        ragctl index ~/notes ~/Documents/papers
        ragctl index                    # refresh what was indexed before
        ragctl index ~/mail --index mail
    """
    from .collection import Collection
    from .display import RichReporter, index_summary_table, stdout
    from .errors import AllFilesFailedError
    from .indexer import Indexer, IndexOptions

    settings = _settings(index=index_name, embedder=embedder, chunk_words=chunk_words,
                         max_file_mb=max_file_mb)
    with Collection.open(settings, create=True) as collection:
        collection.lock()
        with RichReporter(enabled=not quiet and not as_json) as reporter:
            indexer = Indexer(collection, options=IndexOptions(reembed=reembed, force=force),
                              reporter=reporter)
            failure: AllFilesFailedError | None = None
            try:
                summary = indexer.run(list(paths))
            except AllFilesFailedError as e:
                failure, summary = e, indexer.summary
    if as_json:
        _print_json(summary.to_dict())
    else:
        stdout.print(index_summary_table(summary.to_dict()))
    if failure is not None:
        raise failure


@cli.command()
@click.argument("query")
@index_option
@click.option("--limit", "-n", type=click.IntRange(min=1), help="How many passages (default 10).")
@click.option("--mode", type=click.Choice(["hybrid", "vector", "bm25"]), default="hybrid",
              show_default=True, help="Fuse both retrievers, or use one alone.")
@json_option
@command_errors
def search(query: str, index_name: str | None, limit: int | None, mode: str,
           as_json: bool) -> None:
    """Find the passages that best match QUERY.

    \b
    Example:
        ragctl search "notice period for the flat" -n 5
    """
    from .collection import Collection
    from .retrieve import Retriever

    settings = _settings(index=index_name, search_limit=limit)
    with Collection.open(settings) as collection:
        hits = Retriever(collection).search(query, limit=settings.search_limit,
                                            mode=mode)  # type: ignore[arg-type]
    if as_json:
        _print_json({"query": query, "index": settings.index, "mode": mode,
                     "hits": [h.to_dict() for h in hits]})
        return
    from rich.text import Text

    from .display import short_path, stdout

    if not hits:
        stdout.print("no matching passages")
        return
    for rank, h in enumerate(hits, start=1):
        where = short_path(h.path) + (f" ({h.place})" if h.place else "")
        sim = f"  cos {h.similarity:.2f}" if h.similarity is not None else ""
        stdout.print(Text.assemble((f"{rank:>2}. ", "bold"), (where, "cyan"),
                                   (f"  score {h.score:.4f}{sim}", "dim")))
        snippet = h.text if len(h.text) <= 400 else h.text[:397].rstrip() + "…"
        stdout.print(Text("    " + snippet))


@cli.command()
@click.argument("question")
@index_option
@click.option("--context", "context_mode", type=click.Choice(["filtered", "passages", "full"]),
              default=None, help="FILCO sentences (default), PSG whole passages, or FULL top-k.")
@click.option("--top-n", type=click.IntRange(min=1), help="Passages retrieved (default 20).")
@click.option("--top-k", type=click.IntRange(min=1), help="Passages kept after reranking (5).")
@click.option("--model", "generator", metavar="NAME|GGUF",
              help="Generator: gemma-3-270m (default), smollm2-135m or a .gguf file.")
@click.option("--relevance", metavar="NAME|DIR",
              help="Relevance estimator: 'similarity' or an exported model.")
@click.option("--filter", "context_filter", metavar="NAME|DIR",
              help="Context filter: 'similarity' or an exported model.")
@click.option("--threshold", "re_threshold", type=click.FloatRange(0, 1),
              help="Relevance below which ragctl says the answer is not in your documents.")
@click.option("--no-abstain", is_flag=True, help="Always answer, even from weak passages.")
@click.option("--strict", is_flag=True, help="Drop answer sentences their sources do not support.")
@click.option("--marginalize", is_flag=True,
              help="One candidate per passage, weighted by relevance (RE-RAG eq. 6).")
@click.option("--explain", is_flag=True, help="Show retrieved, reranked and filtered passages.")
@click.option("--long", "long_answer", is_flag=True,
              help="A long answer: one cited sentence per facet of the question.")
@click.option("--words", type=click.IntRange(min=10), default=150, show_default=True,
              help="With --long: the most words in the answer.")
@click.option("--facets", type=click.IntRange(min=1), default=3, show_default=True,
              help="With --long: facets to summarize (more when --words allows).")
@click.option("--fluent", is_flag=True, help="With --long: one rewrite pass for fluency.")
@click.option("--ranking", type=click.Choice(["relevance", "bm25"]), default="relevance",
              show_default=True, help="With --long: how facets are ranked.")
@click.option("--cluster-threshold", type=click.FloatRange(0, 2), default=0.35,
              show_default=True,
              help="With --long: cosine distance under which nuggets share a facet.")
@click.option("--mark-spans", is_flag=True,
              help="With --long: let the model mark the nugget inside each sentence.")
@json_option
@command_errors
def ask(question: str, index_name: str | None, context_mode: str | None, top_n: int | None,
        top_k: int | None, generator: str | None, relevance: str | None,
        context_filter: str | None, re_threshold: float | None, no_abstain: bool, strict: bool,
        marginalize: bool, explain: bool, long_answer: bool, words: int, facets: int,
        fluent: bool, ranking: str, cluster_threshold: float, mark_spans: bool,
        as_json: bool) -> None:
    """Answer QUESTION from your documents, citing the sentences used.

    Exits with status 3 when the documents do not hold the answer.

    \b
    Examples:
        ragctl ask "when does the lease end?"
        ragctl ask "who signed the contract?" --explain
        ragctl ask "what is the deposit?" --json
    """
    from .collection import Collection
    from .display import render_abstention, render_answer, render_explain, stdout
    from .errors import EXIT_NOT_FOUND
    from .pipeline import AskOptions, Pipeline

    settings = _settings(index=index_name, generator=generator, relevance=relevance,
                         context_filter=context_filter, top_n=top_n, top_k=top_k,
                         re_threshold=re_threshold)
    if long_answer:
        from .display import render_long
        from .pipeline import LongOptions

        long_opts = LongOptions(top_n=settings.top_n, facets=facets, words=words,
                                fluent=fluent, ranking=ranking,  # type: ignore[arg-type]
                                cluster_threshold=cluster_threshold, mark_spans=mark_spans,
                                abstain=not no_abstain, re_threshold=settings.re_threshold,
                                filter_threshold=settings.filter_threshold)
        with Collection.open(settings) as collection, Pipeline(collection) as pipeline:
            result = pipeline.ask_long(question, long_opts)
        if as_json:
            _print_json(result.to_dict())
        else:
            render_long(result)
        if result.abstained:
            sys.exit(EXIT_NOT_FOUND)
        return
    options = AskOptions.from_settings(
        settings, context=context_mode, abstain=not no_abstain, strict=strict,
        marginalize=marginalize)
    streaming = not as_json and not strict and not marginalize
    started: list[bool] = []

    def show(token: str) -> None:
        if not started:
            started.append(True)
            stdout.print("[bold]Answer:[/bold] ", end="")
            token = token.lstrip()
        stdout.print(token, end="")

    with Collection.open(settings) as collection, Pipeline(collection) as pipeline:
        answer = pipeline.ask(question, options, on_token=show if streaming else None)
    if as_json:
        _print_json(answer.to_dict())
    elif answer.abstained:
        render_abstention(answer)
    else:
        render_answer(answer, streamed=bool(started))
    if explain and not as_json:
        render_explain(answer)
    if answer.abstained:
        sys.exit(EXIT_NOT_FOUND)


@cli.command(name="eval")
@click.argument("dataset", type=click.Choice(["squad", "nq", "dpr", "hotpot",
                                              "hotpot-paragraphs", "scifact", "beir"]))
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--split", type=click.Choice(["dev", "report"]), default="report",
              show_default=True, help="Which half of the built-in splits to use.")
@click.option("--limit", type=click.IntRange(min=1), help="Evaluate a sample of N examples.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the sample.")
@click.option("--modes", default="full,passages,filtered,silver", show_default=True,
              help="Context modes to generate answers with (comma-separated).")
@click.option("--no-generate", is_flag=True, help="Only retrieval and relevance metrics.")
@click.option("--long-words", type=click.IntRange(min=10),
              help="Also score `ask --long` answers within N words (datasets with "
                   "supporting facts).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for report.md and report.json.")
@click.option("--model", "generator", metavar="NAME|GGUF", help="Generator to evaluate.")
@click.option("--relevance", metavar="NAME|DIR", help="Relevance estimator to evaluate.")
@click.option("--filter", "context_filter", metavar="NAME|DIR", help="Context filter.")
@json_option
@command_errors
def evaluate_command(dataset: str, path: Path, split: str, limit: int | None, seed: int,
                     modes: str, no_generate: bool, long_words: int | None, out: Path | None,
                     generator: str | None,
                     relevance: str | None, context_filter: str | None, as_json: bool) -> None:
    """Measure retrieval, relevance, filtering and answers on a public dataset.

    Indexes the dataset's passages with the normal indexer (reused on a second run) and
    runs every question through the normal ask pipeline.

    \b
    Examples:
        ragctl eval squad ../shared/data/squad/dev-v1.1.json --limit 200
        ragctl eval nq ../shared/data/nq_oracle/nq-open-oracle.jsonl.gz --out results/nq
        ragctl eval scifact ../shared/data/scifact/beir_format --no-generate
    """
    from rich.progress import Progress

    from .datasets import load
    from .display import stderr
    from .evaluate import MODES, EvalOptions, evaluate, render_markdown

    fmt = {"nq": "dpr", "scifact": "beir"}.get(dataset, dataset)
    chosen = tuple(m.strip() for m in modes.split(",") if m.strip())
    bad = [m for m in chosen if m not in MODES]
    if bad:
        raise click.BadParameter(f"unknown mode(s) {', '.join(bad)}; choose from "
                                 f"{', '.join(MODES)}", param_hint="--modes")
    settings = _settings(generator=generator, relevance=relevance,
                         context_filter=context_filter)
    ds = load(path, fmt=fmt, split=split)
    with Progress(console=stderr, transient=True) as bar:
        task = bar.add_task(f"eval {dataset}", total=None)
        report = evaluate(ds, settings, EvalOptions(limit=limit, seed=seed, modes=chosen,
                                                    generate=not no_generate,
                                                    long_words=long_words),
                          progress=lambda n, total: bar.update(task, completed=n, total=total))
    markdown = render_markdown(report)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.md").write_text(markdown)
        (out / "report.json").write_text(json.dumps(report.to_dict(), indent=2))
    if as_json:
        _print_json(report.to_dict())
    else:
        from rich.markdown import Markdown

        from .display import stdout

        stdout.print(Markdown(markdown))


@cli.command()
@index_option
@json_option
@command_errors
def status(index_name: str | None, as_json: bool) -> None:
    """Show what an index holds: documents, passages, sizes, models, last run."""
    from .collection import Collection
    from .collection import status as collection_status

    settings = _settings(index=index_name)
    with Collection.open(settings) as collection:
        info = collection_status(collection)
    if as_json:
        _print_json(info)
        return
    from rich.table import Table

    from .display import human_bytes, short_path, stdout

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
    if info["pending_vector_changes"]:
        t.add_row("pending", f"{info['pending_vector_changes']} vector changes "
                  "(an interrupted run; the next run or 'ragctl doctor' applies them)")
    run = info["last_run"]
    if run:
        t.add_row("last run", f"{run['started']}  {run['status']}")
    stdout.print(t)


@cli.command()
@index_option
@click.option("--dry-run", is_flag=True, help="Only report problems; change nothing.")
@json_option
@command_errors
def doctor(index_name: str | None, dry_run: bool, as_json: bool) -> None:
    """Check that the store and the vector index agree, and repair what does not.

    Repairs rebuild the HNSW file from the vectors kept in the store (no re-embedding)
    and the full-text index from the passages.
    """
    from .collection import Collection

    settings = _settings(index=index_name)
    with Collection.open(settings) as collection:
        if not dry_run:
            collection.lock()
        report = collection.doctor(repair=not dry_run)
    if as_json:
        _print_json({"ok": report.ok, "problems": report.problems,
                     "repaired": report.repaired, **report.info})
    else:
        for p in report.problems:
            click.echo(f"problem: {p}")
        for r in report.repaired:
            click.echo(f"repaired: {r}")
        if not report.problems:
            click.echo(f"ok: {report.info.get('documents', 0)} documents, "
                       f"{report.info.get('passages', 0)} passages, store and vectors agree")
    if not report.ok:
        sys.exit(1)


if __name__ == "__main__":  # pragma: no cover
    cli()
