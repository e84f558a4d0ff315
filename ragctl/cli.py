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
from contextlib import ExitStack, contextmanager
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
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path), metavar="[DATA] OUT")
@click.option("--format", "fmt", type=click.Choice(["squad", "dpr", "hotpot",
                                                     "hotpot-paragraphs", "beir"]),
              help="Input format (default: detected from the file).")
@click.option("--split", type=click.Choice(["dev", "report"]), default="dev",
              show_default=True, help="Which half of the built-in splits to use.")
@click.option("--limit", type=click.IntRange(min=1),
              help="Label a random sample of N examples (see --seed).")
@click.option("--measures", default="strinc,lexical", show_default=True,
              help="Comma-separated: strinc, lexical, cxmi.")
@click.option("--generator", metavar="NAME|GGUF|DIR",
              help="Generator for CXMI and passage likelihoods (default: the ask generator).")
@click.option("--passage-logprobs/--no-passage-logprobs", default=None,
              help="Score log P(answer | question, passage) per passage, the signal "
                   "'train re' learns from (default: on when a generator is loaded).")
@index_option
@click.option("--top-k", type=click.IntRange(min=1), default=8, show_default=True,
              help="Passages to retrieve per question from --index.")
@click.option("--retrieve", is_flag=True,
              help="Retrieve passages from --index for every question, not only for those "
                   "without passages.")
@click.option("--from-index", "from_index", metavar="NAME",
              help="No DATA: write questions from the documents of this index with the "
                   "local generator, keep those that retrieval finds again, then label them.")
@click.option("--questions", type=click.IntRange(min=1), default=200, show_default=True,
              help="With --from-index: how many sentences to try.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--restart", is_flag=True, help="Start OUT afresh instead of resuming it.")
@command_errors
def silver(paths: tuple[Path, ...], fmt: str | None, split: str, limit: int | None,
           measures: str, generator: str | None, passage_logprobs: bool | None,
           index_name: str | None, top_k: int, retrieve: bool, from_index: str | None,
           questions: int, seed: int, restart: bool) -> None:
    """Silver-label the sentences that support each answer (StrInc, Lexical, CXMI).

    Writes one JSON line per example to OUT with every sentence's scores and the
    sentences each measure selects. Re-running the same command resumes OUT.

    \b
    Examples:
        ragctl silver ../shared/data/squad/dev-v1.1.json squad-dev.jsonl
        ragctl silver nq-dev.jsonl.gz nq.jsonl --measures strinc,lexical,cxmi --limit 500
        ragctl silver squad.json re.jsonl --index squad-dev --retrieve --passage-logprobs
        ragctl silver --from-index default mine.jsonl --questions 300
    """
    from .display import stderr, task_progress
    from .silver import (
        SilverLabeler,
        inputs_from_dataset,
        load_answer_scorer,
        with_retrieved_passages,
        write_silver,
    )

    chosen = tuple(m.strip() for m in measures.split(",") if m.strip())
    want = 1 if from_index else 2
    if len(paths) != want:
        raise click.UsageError("give DATA and OUT, or --from-index NAME and OUT")
    data, out = (None, paths[0]) if from_index else paths
    if data is not None and not data.exists():
        raise click.BadParameter(f"{data} does not exist", param_hint="DATA")
    if out.is_dir():
        raise click.BadParameter(f"{out} is a folder; give a .jsonl file", param_hint="OUT")
    settings = _settings(index=from_index or index_name, generator=generator)
    wants_lp = bool(passage_logprobs)
    scorer = None
    if "cxmi" in chosen or wants_lp or from_index:
        scorer = load_answer_scorer(settings.generator)
    try:
        if from_index is not None:
            from .synth import SynthStats, synthesize

            stats = SynthStats()
            with task_progress(f"writing questions from {from_index}", questions) as step:
                items = synthesize(settings, scorer, n=questions, seed=seed, top_k=top_k,
                                   progress=step, stats=stats)
            stderr.print(f"{stats.kept} of {stats.tried} generated questions kept "
                         f"({stats.unparsed} unparsed, {stats.answer_not_in_sentence} answer "
                         f"not in the sentence, {stats.gives_answer_away} answer in the "
                         f"question, {stats.not_found_again} source not retrieved again)")
        else:
            assert data is not None
            items = inputs_from_dataset(data, fmt=fmt, split=split, limit=limit, seed=seed)
            if index_name is not None:
                from .collection import Collection
                from .retrieve import Retriever

                with Collection.open(settings) as collection:
                    items = with_retrieved_passages(items, Retriever(collection), top_k=top_k,
                                                    replace=retrieve)
        missing = sum(1 for it in items if not it.passages)
        if missing:
            stderr.print(f"[yellow]warning:[/] {missing} questions have no passages and are "
                         "skipped; give --index NAME to retrieve them")
        labeler = SilverLabeler(measures=chosen, scorer=scorer,
                                passage_logprobs=wants_lp if passage_logprobs is not None
                                else scorer is not None,
                                max_sentence_words=settings.max_sentence_words)
        with task_progress(f"labelling {out.name}", len(items)) as advance:
            run = write_silver(items, out, labeler, resume=not restart, progress=advance)
    finally:
        if scorer is not None:
            scorer.close()
    picked = ", ".join(f"{m} {run.selected.get(m, 0)}" for m in chosen)
    click.echo(f"{run.written} labelled, {run.skipped_done} already in {out}, "
               f"{run.skipped_bad} without passages; sentences selected: {picked}")


def _train_options(f: F) -> F:
    options = [
        click.option("--data", "data", multiple=True, required=True,
                     type=click.Path(exists=True, dir_okay=False, path_type=Path),
                     help="Silver-label JSONL from 'ragctl silver' (repeatable)."),
        click.option("--base", default="minilm", show_default=True,
                     help="'minilm' (the installed all-MiniLM-L6-v2), 'smollm2' (the GGUF "
                          "as a causal LM), or a local Hugging Face encoder, T5 or "
                          "causal-LM directory."),
        click.option("--architecture", default="auto", show_default=True,
                     type=click.Choice(["auto", "bi-encoder", "cross-encoder"]),
                     help="For an encoder base: bi-encoder (embeds question and text "
                          "apart; from MiniLM it starts as the similarity fallback) or "
                          "cross-encoder (reads them together). auto: bi-encoder for "
                          "sentence-transformers models such as MiniLM, else cross-encoder."),
        click.option("--name", help="Model name under models/ (default: <base>-<kind>)."),
        click.option("--out", type=click.Path(file_okay=False, path_type=Path),
                     help="Training folder (default: <home>/training/NAME)."),
        click.option("--epochs", type=click.IntRange(min=1), default=2, show_default=True),
        click.option("--batch-size", type=click.IntRange(min=1), default=16,
                     show_default=True, help="Pairs per optimizer step."),
        click.option("--lr", "learning_rate", type=float,
                     help="Learning rate (default 5e-5 encoders, 2e-5 generative)."),
        click.option("--head-lr", type=float, default=1e-3, show_default=True,
                     help="Bi-encoder: learning rate of the head's weights (cosine, "
                          "overlap, bias), which set the score's temperature."),
        click.option("--max-length", type=click.IntRange(min=16),
                     help="Tokens per pair (default 128 filter, 256 relevance)."),
        click.option("--layers", type=click.IntRange(min=1),
                     help="Keep only the first N encoder layers (smaller, faster)."),
        click.option("--limit", type=click.IntRange(min=1),
                     help="Train on a seeded sample of N examples."),
        click.option("--val-fraction", type=click.FloatRange(0.01, 0.5), default=0.1,
                     show_default=True, help="Held-out share for validation each epoch."),
        click.option("--seed", type=int, default=0, show_default=True),
        click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto",
                     show_default=True),
        click.option("--resume", is_flag=True,
                     help="Continue the run in --out from its last epoch checkpoint."),
        click.option("--no-export", is_flag=True,
                     help="Do not export the result to models/ (see: ragctl export)."),
        click.option("--quantization", default="int8", show_default=True,
                     type=click.Choice(["int8", "int8_float16", "int8_float32", "float16",
                                        "float32"]),
                     help="Quantization of the exported model."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _run_training(kind: str, data: tuple[Path, ...], base: str, name: str | None,
                  out: Path | None, resume: bool, no_export: bool, quantization: str,
                  **options: Any) -> None:
    from .config import home_dir, models_dir
    from .display import stderr, task_progress
    from .train import Trainer, TrainOptions

    name = name or f"{Path(base).name if base not in ('minilm', 'smollm2') else base}-{kind}"
    out = out or home_dir() / "training" / name
    opts = TrainOptions(kind=kind, base=base, **options)
    command = "ragctl " + " ".join(sys.argv[1:])
    trainer = Trainer(opts, data, out, command=command)
    bars = ExitStack()  # one progress bar per epoch, closed when the epoch ends
    advance: list[Callable[[int], None]] = []

    def on_step(epoch: int, step: int, steps: int, loss: float) -> None:
        if step == 1:
            advance[:] = [bars.enter_context(task_progress(f"epoch {epoch}/{opts.epochs}",
                                                           steps))]
        advance[0](1)

    def on_epoch(log: Any) -> None:
        bars.close()
        if log.epoch == 0:
            stderr.print(f"before training: validation loss "
                         f"{log.val_loss:.4f}, {trainer.metric_name} {log.val_metric:.3f}")
            return
        stderr.print(f"epoch {log.epoch}: train loss {log.train_loss:.4f}, validation loss "
                     f"{log.val_loss:.4f}, {trainer.metric_name} {log.val_metric:.3f} "
                     f"({log.seconds:.0f} s)")

    with bars:
        result = trainer.run(resume=resume, on_step=on_step, on_epoch=on_epoch)
    metrics = ", ".join(f"{k} {v}" for k, v in result.metrics.items())
    click.echo(f"trained {kind} ({result.architecture}, {result.examples} examples, best "
               f"epoch {result.best_epoch}): {metrics}")
    click.echo(f"training run: {out}")
    if not no_export:
        from .display import step_progress
        from .export import export_model

        target = models_dir() / name
        with step_progress("exporting") as update:
            manifest = export_model(out, target, quantization=quantization, name=name,
                                    on_progress=update)
        method = manifest["rounding"]["method"]
        click.echo(f"exported {quantization} model"
                   f"{f' ({method} rounding)' if method != 'none' else ''}: {target}")
        click.echo(f"use it: ragctl models use {'filter' if kind == 'filter' else 'relevance'} "
                   f"{name}")


@cli.group()
def train() -> None:
    """Train the context filter or the relevance estimator from silver labels."""


@train.command(name="filter")
@_train_options
@click.option("--measure", type=click.Choice(["strinc", "lexical", "cxmi"]),
              default="strinc", show_default=True,
              help="Which silver measure's sentences are the positives.")
@click.option("--negatives", type=click.IntRange(min=1), default=3, show_default=True,
              help="Other sentences of the same passages per positive.")
@command_errors
def train_filter(data: tuple[Path, ...], base: str, name: str | None, out: Path | None,
                 resume: bool, no_export: bool, quantization: str, **options: Any) -> None:
    """Train a sentence filter: P(sentence supports the answer | question, sentence).

    \b
    Example:
        ragctl silver squad.json squad.jsonl
        ragctl train filter --data squad.jsonl --epochs 2
    """
    _run_training("filter", data, base, name, out, resume, no_export, quantization,
                  **options)


@train.command(name="re")
@_train_options
@click.option("--objective", type=click.Choice(["kl", "has-answer"]), default="kl",
              show_default=True,
              help="kl: match the generator's answer likelihoods across passages (no "
                   "relevance labels); has-answer: the passage contains the answer.")
@command_errors
def train_re(data: tuple[Path, ...], base: str, name: str | None, out: Path | None,
             resume: bool, no_export: bool, quantization: str, **options: Any) -> None:
    """Train a relevance estimator: P(passage answers the question).

    \b
    Example:
        ragctl silver squad.json re.jsonl --index docs --retrieve --passage-logprobs
        ragctl train re --data re.jsonl --objective kl
    """
    _run_training("re", data, base, name, out, resume, no_export, quantization, **options)


@cli.command()
@click.argument("name")
@click.option("--from", "src", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Training folder (default: <home>/training/NAME).")
@click.option("--quantization", default="int8", show_default=True,
              type=click.Choice(["int8", "int8_float16", "int8_float32", "float16", "float32"]))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Target folder (default: <home>/models/NAME).")
@click.option("--data-licence", help="Licence of the training data, for the manifest.")
@click.option("--rounding", default="auto", show_default=True,
              type=click.Choice(["auto", "gptq", "nearest"]),
              help="int8 weight rounding: gptq calibrates on the run's training data "
                   "(auto: when it is still there), nearest is plain rounding.")
@command_errors
def export(name: str, src: Path | None, quantization: str, out: Path | None,
           data_licence: str | None, rounding: str) -> None:
    """Convert a trained model to a quantized CTranslate2 model under models/NAME."""
    from .config import home_dir, models_dir
    from .display import human_bytes, step_progress
    from .export import dir_size, export_model

    src = src or home_dir() / "training" / name
    target = out or models_dir() / name
    with step_progress("exporting") as update:
        manifest = export_model(src, target, quantization=quantization, name=name,
                                data_licence=data_licence, rounding=rounding,
                                on_progress=update)
    method = manifest["rounding"]["method"]
    click.echo(f"exported {manifest['kind']} model {name} ({manifest['architecture']}, "
               f"{quantization}{f', {method} rounding' if method != 'none' else ''}, "
               f"{human_bytes(dir_size(target))}): {target}")


@cli.group(invoke_without_command=True)
@json_option
@click.pass_context
@command_errors
def models(ctx: click.Context, as_json: bool) -> None:
    """List the installed generators, embedders, filters and relevance models."""
    if ctx.invoked_subcommand is not None:
        return
    from dataclasses import asdict

    from .models import list_models

    infos = list_models(_settings())
    if as_json:
        _print_json([asdict(i) for i in infos])
        return
    from rich.table import Table

    from .display import stdout

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


@models.command(name="use")
@click.argument("kind", type=click.Choice(["generator", "embedder", "filter", "relevance"]))
@click.argument("name")
@command_errors
def models_use(kind: str, name: str) -> None:
    """Make NAME the default KIND (written to config.toml)."""
    from .models import use_model

    path = use_model(kind, name)
    click.echo(f"default {kind}: {name} (in {path})")
    if kind == "embedder":
        click.echo("indexes built with another embedder need: ragctl index --reembed")


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
