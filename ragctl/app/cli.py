"""The ``ragctl`` command line: options → one library call → one renderer.

Library errors become one-line messages with their own exit code; results go to stdout
(text, or ``--json``), progress and warnings to stderr. Heavy libraries (torch, spaCy,
hnswlib, rich) are imported inside the commands, so ``ragctl --help`` answers at once.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any

import click

from ragctl import __version__
from ragctl.app.options import (
    command_errors,
    emit,
    flag_settings,
    index_option,
    json_option,
    options,
    print_json,
    service_option,
)
from ragctl.errors import EXIT_INTERRUPTED, EXIT_NOT_FOUND
from ragctl.text import readable


class _LogFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {record.getMessage()}"


def _setup_logging(verbose: int) -> None:
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_LogFormatter())
    root = logging.getLogger("ragctl")
    root.handlers[:] = [handler]
    root.setLevel(level)


def _service(path: str, settings: Any, **payload: Any) -> dict[str, Any] | None:
    """The running service's reply (see ragctl serve), or None when none is running."""
    from dataclasses import asdict

    from ragctl.app.client import request

    return request("POST", path, {"settings": asdict(settings), **payload})


def _ask_service(settings: Any, question: str, options: dict[str, Any],
                 long: dict[str, Any] | None, *, log: bool) -> Any:
    data = _service("/ask", settings, question=question, options=options, long=long, log=log)
    if data is None:
        return None
    from ragctl.records import from_dict

    if long is not None:
        from ragctl.ask.longform import LongAnswer

        return from_dict(LongAnswer, data)
    from ragctl.records import Answer

    return from_dict(Answer, data)


class _Commands(click.Group):
    """The ``ragctl`` group; the training commands (:data:`TRAINING`) are loaded only when
    one of them is run or listed, so that asking and searching do not import them."""

    TRAINING = ("silver", "train", "export")

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.TRAINING})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.TRAINING and name not in self.commands:
            from ragctl.app.train import register

            register(self)
        return super().get_command(ctx, name)

    def invoke(self, ctx: click.Context) -> Any:
        """Under ``--json``, an error is also a JSON object on stdout — ``{"error": the
        one-line message, "code": the exit status}`` — so that a script reading stdout
        always gets one; the message still goes to stderr. Usage errors (a bad option) are
        raised while the command's own options are parsed, so they are caught here."""
        # the arguments left to the subcommand, before invoke consumes them
        as_json = _wants_json([*getattr(ctx, "_protected_args", []), *ctx.args])
        try:
            return super().invoke(ctx)
        except click.ClickException as e:
            if as_json:
                print_json({"error": e.format_message(), "code": e.exit_code})
            raise
        except SystemExit as e:
            if e.code == EXIT_INTERRUPTED and as_json:
                print_json({"error": "interrupted", "code": EXIT_INTERRUPTED})
            raise


def _wants_json(args: list[str]) -> bool:
    return "--json" in (args[:args.index("--")] if "--" in args else args)


def _question(text: str, what: str = "question") -> str:
    """The question as text that can be encoded again: bytes that are not UTF-8 (from
    argv, or a file piped in) become U+FFFD, with a one-line warning."""
    clean, replaced = readable(text)
    if replaced:
        click.echo(f"warning: the {what} holds bytes that are not UTF-8; each was read as "
                   "U+FFFD", err=True)
    return clean


def _read_stdin() -> str:
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape")


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ragctl")
@click.option("-v", "--verbose", count=True, help="More log output on stderr (-vv for debug).")
def cli(verbose: int) -> None:
    """Ask questions about your own documents, offline, with answers that cite their sources.

    \b
    Start with:
        ragctl index ~/Documents/notes
        ragctl ask "when is the lease up for renewal?"
    """
    os.umask(0o077)  # indexes, settings and models are the user's alone
    _setup_logging(verbose)


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@options(
    index_option,
    click.option("--embedder", metavar="NAME|DIR",
                 help="Embedding model: a registry name or a sentence-transformers directory."),
    click.option("--chunk-words", type=click.IntRange(min=10), help="Target words per passage."),
    click.option("--max-file-mb", type=click.FloatRange(min=0, min_open=True),
                 help="Skip files larger than this many MB."),
    click.option("--reembed", is_flag=True,
                 help="Re-embed every passage when the index was built with another model."),
    click.option("--force", is_flag=True, help="Re-read every file even if it looks unchanged."),
    click.option("--yes", "broad", is_flag=True,
                 help="Index even a very broad folder (/, a system folder, a whole home)."),
    click.option("--quiet", "-q", is_flag=True, help="No progress bar."),
    click.option("--verbose", is_flag=True,
                 help="List the files skipped as before too (their reasons were shown "
                      "when they were first met)."),
    json_option)
@command_errors
def index(paths: tuple[Path, ...], index_name: str | None, embedder: str | None,
          chunk_words: int | None, max_file_mb: float | None, reembed: bool, force: bool,
          broad: bool, quiet: bool, verbose: bool, as_json: bool) -> None:
    """Add files and folders to an index, or bring it up to date.

    Reads .txt .md .rst .html .pdf .docx .eml .mbox, spreadsheets (.csv .tsv .xlsx
    .xls .ods), and scans (.pdf pages without text, .png .jpg .tiff) through OCR when
    Tesseract is installed. Unchanged files are skipped,
    changed ones re-read, deleted ones removed. With no PATH, every folder indexed
    before is refreshed.

    \b
    Examples:
        ragctl index ~/notes ~/Documents/papers
        ragctl index                    # refresh what was indexed before
        ragctl index ~/mail --index mail
    """
    from ragctl.app.progress import RichReporter
    from ragctl.index.indexer import IndexOptions, index_paths

    settings = flag_settings(index=index_name, embedder=embedder, chunk_words=chunk_words,
                         max_file_mb=max_file_mb)
    with RichReporter(enabled=not quiet and not as_json) as reporter:
        summary, failure = index_paths(settings, list(paths), reporter=reporter,
                                       options=IndexOptions(reembed=reembed, force=force,
                                                            broad=broad))
    emit(as_json, summary.to_dict(), "render_index_summary")
    if not as_json:
        from ragctl.app.display import render_skip_summary

        render_skip_summary(summary.to_dict(), verbose=verbose)
    if failure is not None:
        raise failure


@cli.command()
@click.argument("query")
@index_option
@click.option("--limit", "-n", type=click.IntRange(min=1), help="How many passages (default 10).")
@click.option("--mode", type=click.Choice(["hybrid", "vector", "bm25"]), default="hybrid",
              show_default=True, help="Fuse both retrievers, or use one alone.")
@service_option
@json_option
@command_errors
def search(query: str, index_name: str | None, limit: int | None, mode: str, no_service: bool,
           as_json: bool) -> None:
    """Find the passages that best match QUERY.

    \b
    Example:
        ragctl search "notice period for the flat" -n 5
    """
    query = _question(query, "query")
    settings = flag_settings(index=index_name, search_limit=limit)
    found = None if no_service else _service("/search", settings, query=query, mode=mode)
    if found is not None:
        from ragctl.records import Hit, from_dict

        hits = [from_dict(Hit, h) for h in found["hits"]]
    else:
        from ragctl.ask.retrieve import search_index

        hits = search_index(settings, query, mode=mode)
    emit(as_json, {"query": query, "index": settings.index, "mode": mode,
                    "hits": [h.to_dict() for h in hits]}, "render_search", hits)


@cli.command()
@click.argument("question", required=False)
@options(
    index_option,
    click.option("--context", "context_mode", type=click.Choice(["filtered", "passages", "full"]),
                 default=None,
                 help="FILCO sentences (default), PSG whole passages, or FULL top-k."),
    click.option("--top-n", type=click.IntRange(min=1), help="Passages retrieved (default 20)."),
    click.option("--top-k", type=click.IntRange(min=1), help="Passages kept after reranking (5)."),
    click.option("--model", "-m", "generator", metavar="NAME|GGUF",
                 help="Generator: gemma-3-270m (default), smollm2-135m or a .gguf file."),
    click.option("--relevance", metavar="NAME|DIR",
                 help="Relevance estimator: 'similarity' or an exported model."),
    click.option("--filter", "context_filter", metavar="NAME|DIR",
                 help="Context filter: 'similarity' or an exported model."),
    click.option("--threshold", "re_threshold", type=click.FloatRange(0, 1),
                 help="Relevance below which ragctl says the answer is not in your documents."),
    click.option("--no-abstain", is_flag=True, help="Always answer, even from weak passages."),
    click.option("--free", is_flag=True,
                 help="Let the generator answer in its own words (checked against the "
                      "sentences) instead of quoting a span of them."),
    click.option("--reader", metavar="NAME|DIR",
                 help="Span reader: 'minilm-reader' (default), an exported model, or 'none'."),
    click.option("--strict", is_flag=True, hidden=True,
                 help="Kept for scripts: unsupported sentences are always dropped."),
    click.option("--marginalize", is_flag=True,
                 help="One candidate per passage, weighted by relevance (RE-RAG eq. 6)."),
    click.option("--explain", is_flag=True, help="Show retrieved, reranked and filtered passages."),
    click.option("--long", "long_answer", is_flag=True,
                 help="A long answer: one cited sentence per facet of the question."),
    click.option("--words", type=click.IntRange(min=10),
                 help="With --long: the most words in the answer (default 150)."),
    click.option("--facets", type=click.IntRange(min=1),
                 help="With --long: facets to summarize, more when --words allows (3)."),
    click.option("--fluent", is_flag=True, help="With --long: one rewrite pass for fluency."),
    click.option("--ranking", type=click.Choice(["relevance", "bm25"]), default="relevance",
                 show_default=True, help="With --long: how facets are ranked."),
    click.option("--cluster-threshold", type=click.FloatRange(0, 2),
                 help="With --long: cosine distance under which nuggets share a facet (0.35)."),
    click.option("--mark-spans", is_flag=True,
                 help="With --long: let the model mark the nugget inside each sentence."),
    click.option("--no-log", is_flag=True,
                 help="Do not keep this question and its answer (see: ragctl logs)."),
    click.option("--rules-off", metavar="NAME,...",
                 help="Answer without these answer rules (see docs/ask.md); for measuring "
                      "what each rule gains. Answers in this process, not the service."),
    service_option,
    json_option)
@command_errors
def ask(question: str | None, index_name: str | None, context_mode: str | None, top_n: int | None,
        top_k: int | None, generator: str | None, relevance: str | None,
        context_filter: str | None, re_threshold: float | None, no_abstain: bool, free: bool,
        reader: str | None, strict: bool,
        marginalize: bool, explain: bool, long_answer: bool, words: int | None,
        facets: int | None, fluent: bool, ranking: str, cluster_threshold: float | None,
        mark_spans: bool, no_log: bool, rules_off: str | None, no_service: bool,
        as_json: bool) -> None:
    """Answer QUESTION from your documents, citing the sentences used.

    Exits with status 3 when the documents do not hold the answer. Without QUESTION, it
    is read from standard input. Questions and answers are kept in the index (ragctl
    logs) unless --no-log.

    \b
    Examples:
        ragctl ask "when does the lease end?"
        ragctl ask "who signed the contract?" --explain
        ragctl ask "what is the deposit?" --json
        echo "when is the boiler serviced?" | ragctl ask
    """
    from ragctl.app import display
    from ragctl.models.registry import check_settings

    if question is None:
        if sys.stdin.isatty():
            raise click.UsageError("give a QUESTION, or pipe one in")
        question = _read_stdin()
    question = _question(question)
    settings = flag_settings(index=index_name, generator=generator, relevance=relevance,
                         context_filter=context_filter, reader=reader, top_n=top_n, top_k=top_k,
                         re_threshold=re_threshold, long_words=words, long_facets=facets,
                         cluster_threshold=cluster_threshold)
    check_settings(settings)  # a typo fails now, not after the other models have loaded
    long = {"fluent": fluent, "ranking": ranking, "mark_spans": mark_spans,
            "abstain": not no_abstain} if long_answer else None
    options: dict[str, Any] = {"context": context_mode, "abstain": not no_abstain,
                               "strict": strict, "marginalize": marginalize, "free": free}
    if rules_off:
        from ragctl.ask.ruletable import check_names

        options["rules_off"] = check_names(rules_off)
        no_service = True
    result: Any = None
    with display.working(not as_json):
        if not no_service:
            result = _ask_service(settings, question, options, long, log=not no_log)
        if result is None:
            from ragctl.ask.pipeline import AskOptions, LongOptions, ask_index

            how: dict[str, Any] = {"long": LongOptions.from_settings(settings, **long)} \
                if long is not None else {"options": AskOptions.from_settings(settings,
                                                                              **options)}
            result = ask_index(settings, question, log=not no_log, **how)
    if long_answer:
        emit(as_json, result.to_dict, "render_long", result)
    else:
        emit(as_json, result.to_dict, "render_answer", result, explain=explain)
    if result.abstained:
        sys.exit(EXIT_NOT_FOUND)


def _register() -> None:
    from ragctl.app import manage, serving

    for command in (*serving.COMMANDS, *manage.COMMANDS):
        cli.add_command(command)


_register()


if __name__ == "__main__":  # pragma: no cover
    cli()
