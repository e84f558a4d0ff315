"""The commands that look after indexes and models: ``status``, ``logs``, ``doctor``,
``copy``, ``models`` and ``eval``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ragctl.app.options import (
    command_errors,
    emit,
    flag_settings,
    index_option,
    json_option,
    options,
)
from ragctl.config import load_settings


@click.command(name="eval")
@click.argument("dataset", type=click.Choice(["squad", "nq", "dpr", "hotpot",
                                              "hotpot-paragraphs", "scifact", "beir"]))
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@options(
    click.option("--split", type=click.Choice(["dev", "report"]), default="report",
                 show_default=True, help="Which half of the built-in splits to use."),
    click.option("--limit", type=click.IntRange(min=1), help="Evaluate a sample of N examples."),
    click.option("--seed", type=int, default=0, show_default=True, help="Seed of the sample."),
    click.option("--modes", default="answer,full,passages,filtered,silver", show_default=True,
                 help="Context modes to generate answers with (comma-separated)."),
    click.option("--no-generate", is_flag=True, help="Only retrieval and relevance metrics."),
    click.option("--long-words", type=click.IntRange(min=10),
                 help="Also score `ask --long` answers within N words (datasets with "
                      "supporting facts)."),
    click.option("--out", type=click.Path(file_okay=False, path_type=Path),
                 help="Folder for report.md and report.json."),
    click.option("--model", "generator", metavar="NAME|GGUF", help="Generator to evaluate."),
    click.option("--relevance", metavar="NAME|DIR", help="Relevance estimator to evaluate."),
    click.option("--filter", "context_filter", metavar="NAME|DIR", help="Context filter."),
    json_option)
@command_errors
def evaluate_command(dataset: str, path: Path, split: str, limit: int | None, seed: int,
                     modes: str, no_generate: bool, long_words: int | None, out: Path | None,
                     generator: str | None, relevance: str | None, context_filter: str | None,
                     as_json: bool) -> None:
    """Measure retrieval, relevance, filtering and answers on a public dataset.

    Indexes the dataset's passages with the normal indexer (reused on a second run) and
    runs every question through the normal ask pipeline.

    \b
    Examples:
        ragctl eval squad ../shared/data/squad/dev-v1.1.json --limit 200
        ragctl eval nq ../shared/data/nq_oracle/nq-open-oracle.jsonl.gz --out results/nq
        ragctl eval scifact ../shared/data/scifact/beir_format --no-generate
    """
    from ragctl.app.progress import step_progress
    from ragctl.eval.datasets import load
    from ragctl.eval.evaluate import MODES, EvalOptions, evaluate, render_report, save_report

    chosen = tuple(m.strip() for m in modes.split(",") if m.strip())
    bad = [m for m in chosen if m not in MODES]
    if bad:
        raise click.BadParameter(f"unknown mode(s) {', '.join(bad)}; choose from "
                                 f"{', '.join(MODES)}", param_hint="--modes")
    settings = flag_settings(generator=generator, relevance=relevance,
                             context_filter=context_filter)
    ds = load(path, fmt=dataset, split=split)
    with step_progress(f"eval {dataset}") as update:
        report = evaluate(ds, settings, EvalOptions(limit=limit, seed=seed, modes=chosen,
                                                    generate=not no_generate,
                                                    long_words=long_words), progress=update)
    if out is not None:
        save_report(report, out)
    emit(as_json, report.to_dict(), "render_markdown", render_report(report))


@click.group(invoke_without_command=True)
@json_option
@click.pass_context
@command_errors
def models(ctx: click.Context, as_json: bool) -> None:
    """List the installed generators, embedders, filters and relevance models."""
    if ctx.invoked_subcommand is not None:
        return
    from dataclasses import asdict

    from ragctl.models.registry import available

    infos = available(flag_settings())
    emit(as_json, [asdict(i) for i in infos], "render_models", infos)


@models.command(name="use")
@click.argument("kind", type=click.Choice(["generator", "embedder", "filter", "relevance",
                                          "reader", "nli"]))
@click.argument("name")
@command_errors
def models_use(kind: str, name: str) -> None:
    """Make NAME the default KIND (written to config.toml)."""
    from ragctl.models.registry import use

    click.echo(f"default {kind}: {name} (in {use(kind, name)})")
    if kind == "embedder":
        click.echo("indexes built with another embedder need: ragctl index --reembed")


@click.command()
@click.option("--to", "to_url", metavar="URL", required=True,
              help="The PostgreSQL database (with pgvector) to copy into: "
                   "postgresql://user@host/db.")
@click.option("--index", "-i", "index_name", metavar="NAME", default=None,
              help="Which local index to copy (default: 'default').")
@click.option("--as", "new_name", metavar="NAME", default=None,
              help="The name of the copy (default: the same name).")
@json_option
@command_errors
def copy(to_url: str, index_name: str | None, new_name: str | None, as_json: bool) -> None:
    """Copy a local index into a shared PostgreSQL store, vectors included.

    Nothing is re-embedded; the copy is one transaction, so an interrupted copy leaves
    nothing behind. Afterwards use it with --store URL (or RAGCTL_STORE).

    \b
    Example:
        ragctl copy --to postgresql://me@db.example.org/docs --index notes
    """
    from ragctl.store.collection import Collection
    from ragctl.store.postgres import copy_index, is_url

    if not is_url(to_url):
        raise click.BadParameter("give a postgresql://user@host/db URL", param_hint="--to")
    settings = load_settings(index=index_name, store="")  # the local index
    with Collection.open(settings) as source:
        def seen(table: str, n: int) -> None:
            click.echo(f"  {table}: {n:,}", err=True)

        summary = copy_index(source, to_url, name=new_name,
                             on_table=None if as_json else seen)
    emit(as_json, summary.to_dict(), "render_line",
          f"copied index {summary.index!r} to {summary.store} in {summary.seconds:.1f} s "
          f"({summary.rows.get('documents', 0):,} documents, "
          f"{summary.rows.get('passages', 0):,} passages); use it with --store URL")


@click.command()
@index_option
@json_option
@command_errors
def status(index_name: str | None, as_json: bool) -> None:
    """Show what an index holds: documents, passages, sizes, models, last run."""
    from ragctl.store.collection import index_status

    info = index_status(flag_settings(index=index_name))
    emit(as_json, info, "render_status")
    if info["damaged"]:
        sys.exit(1)


@click.command()
@click.argument("query", required=False)
@index_option
@click.option("--limit", "-n", type=click.IntRange(min=1), default=20, show_default=True,
              help="How many questions.")
@json_option
@command_errors
def logs(query: str | None, index_name: str | None, limit: int, as_json: bool) -> None:
    """Show the questions asked of an index and their answers, newest first.

    \b
    Examples:
        ragctl logs
        ragctl logs boiler -n 5
    """
    from ragctl.store.collection import index_logs

    emit(as_json, index_logs(flag_settings(index=index_name), limit=limit, query=query),
          "render_logs")


@click.command()
@index_option
@click.option("--dry-run", is_flag=True, help="Only report problems; change nothing.")
@click.option("--full", is_flag=True,
              help="Compare every vector of the HNSW file with its passage's, not a "
                   "sample of 200 (slower).")
@json_option
@command_errors
def doctor(index_name: str | None, dry_run: bool, full: bool, as_json: bool) -> None:
    """Check that the store and the vector index agree, and repair what does not.

    Repairs rebuild the HNSW file from the vectors kept in the store (no re-embedding)
    and the full-text index from the passages, and read again the files of passages
    whose text was damaged on disk.
    """
    from ragctl.index.doctor import check_index

    report = check_index(flag_settings(index=index_name), repair=not dry_run, full=full)
    emit(as_json, {"ok": report.ok, "problems": report.problems, "repaired": report.repaired,
                    **report.info}, "render_doctor", report)
    if not report.ok:
        sys.exit(1)


COMMANDS = (evaluate_command, models, copy, status, logs, doctor)
