"""The training commands: ``ragctl silver``, ``ragctl train filter|re``, ``ragctl export``.

Part of the command line (see :mod:`ragctl.cli`): options → one library call → one
renderer; the work is in :mod:`.silver`, :mod:`.trainer` and :mod:`.export`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ragctl.app.options import command_errors, index_option, options
from ragctl.config import QUANTIZATIONS


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path), metavar="[DATA] OUT")
@options(
    click.option("--format", "fmt", type=click.Choice(["squad", "dpr", "hotpot",
                                                        "hotpot-paragraphs", "beir"]),
                 help="Input format (default: detected from the file)."),
    click.option("--split", type=click.Choice(["dev", "report"]), default="dev",
                 show_default=True, help="Which half of the built-in splits to use."),
    click.option("--limit", type=click.IntRange(min=1),
                 help="Label a random sample of N examples (see --seed)."),
    click.option("--measures", default="strinc,lexical", show_default=True,
                 help="Comma-separated: strinc, lexical, cxmi."),
    click.option("--generator", metavar="NAME|GGUF|DIR",
                 help="Generator for CXMI and passage likelihoods (default: the ask generator)."),
    click.option("--passage-logprobs/--no-passage-logprobs", default=None,
                 help="Score log P(answer | question, passage) per passage, the signal "
                      "'train re' learns from (default: on when a generator is loaded)."),
    index_option,
    click.option("--top-k", type=click.IntRange(min=1), default=8, show_default=True,
                 help="Passages to retrieve per question from --index."),
    click.option("--retrieve", is_flag=True,
                 help="Retrieve passages from --index for every question, not only for those "
                      "without passages."),
    click.option("--from-index", "from_index", metavar="NAME",
                 help="No DATA: write questions from the documents of this index with the "
                      "local generator, keep those that retrieval finds again, then label them."),
    click.option("--questions", type=click.IntRange(min=1), default=200, show_default=True,
                 help="With --from-index: how many sentences to try."),
    click.option("--seed", type=int, default=0, show_default=True),
    click.option("--restart", is_flag=True, help="Start OUT afresh instead of resuming it."))
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
    from ragctl.app.display import render_silver
    from ragctl.app.progress import task_progress
    from ragctl.training.jobs import label
    from ragctl.training.silver import SilverJob

    if len(paths) != (1 if from_index else 2):
        raise click.UsageError("give DATA and OUT, or --from-index NAME and OUT")
    data, out = (None, paths[0]) if from_index else paths
    if data is not None and not data.exists():
        raise click.BadParameter(f"{data} does not exist", param_hint="DATA")
    if out.is_dir():
        raise click.BadParameter(f"{out} is a folder; give a .jsonl file", param_hint="OUT")
    from ragctl.config import load_settings

    settings = load_settings(index=from_index or index_name, generator=generator)
    job = SilverJob(out=out, data=data, fmt=fmt, split=split, limit=limit,
                    measures=tuple(m.strip() for m in measures.split(",") if m.strip()),
                    generator=settings.generator, passage_logprobs=passage_logprobs,
                    index=index_name, top_k=top_k, retrieve=retrieve, from_index=from_index,
                    questions=questions, seed=seed, restart=restart,
                    max_sentence_words=settings.max_sentence_words)
    render_silver(label(job, progress=task_progress), out, job.measures)


_train_options = options(
    click.option("--data", "data", multiple=True, required=True,
                 type=click.Path(exists=True, dir_okay=False, path_type=Path),
                 help="Silver-label JSONL from 'ragctl silver' (repeatable)."),
    click.option("--base", default="minilm", show_default=True,
                 help="'minilm' (the installed all-MiniLM-L6-v2), 'smollm2' (the GGUF as a "
                      "causal LM), or a local Hugging Face encoder, T5 or causal-LM directory."),
    click.option("--architecture", default="auto", show_default=True,
                 type=click.Choice(["auto", "bi-encoder", "seq2seq", "decoder"]),
                 help="What the base is trained as; auto follows the base (an encoder is a "
                      "bi-encoder that starts as the similarity fallback)."),
    click.option("--name", help="Model name under models/ (default: <base>-<kind>)."),
    click.option("--out", type=click.Path(file_okay=False, path_type=Path),
                 help="Training folder (default: <home>/training/NAME)."),
    click.option("--epochs", type=click.IntRange(min=1), default=2, show_default=True),
    click.option("--batch-size", type=click.IntRange(min=1), default=16, show_default=True,
                 help="Pairs per optimizer step."),
    click.option("--lr", "learning_rate", type=float, help="Learning rate (default 2e-5)."),
    click.option("--head-lr", type=float, default=1e-3, show_default=True,
                 help="Bi-encoder: learning rate of the head's weights (cosine, overlap, "
                      "bias), which set the score's temperature."),
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
                 type=click.Choice(QUANTIZATIONS), help="Quantization of the exported model."))


def _train(kind: str, data: tuple[Path, ...], name: str | None, out: Path | None,
           resume: bool, no_export: bool, quantization: str, **opts: Any) -> None:
    from ragctl.app.progress import TrainingProgress
    from ragctl.training.jobs import train_and_export
    from ragctl.training.trainer import TrainOptions

    with TrainingProgress(kind, opts["epochs"]) as show:
        job = train_and_export(TrainOptions(kind=kind, **opts), data, name=name, out=out,
                               resume=resume, export=not no_export, quantization=quantization,
                               command="ragctl " + " ".join(sys.argv[1:]),
                               on_step=show.step, on_epoch=show.epoch, on_export=show.export)
    show.done(job)


@click.group()
def train() -> None:
    """Train the context filter or the relevance estimator from silver labels."""


@train.command(name="filter")
@_train_options
@click.option("--measure", type=click.Choice(["strinc", "lexical", "cxmi"]), default="strinc",
              show_default=True, help="Which silver measure's sentences are the positives.")
@click.option("--negatives", type=click.IntRange(min=1), default=3, show_default=True,
              help="Other sentences of the same passages per positive.")
@command_errors
def train_filter(**opts: Any) -> None:
    """Train a sentence filter: P(sentence supports the answer | question, sentence).

    \b
    Example:
        ragctl silver squad.json squad.jsonl
        ragctl train filter --data squad.jsonl --epochs 2
    """
    _train("filter", **opts)


@train.command(name="re")
@_train_options
@click.option("--objective", type=click.Choice(["kl", "has-answer"]), default="kl",
              show_default=True,
              help="kl: match the generator's answer likelihoods across passages (no "
                   "relevance labels); has-answer: the passage contains the answer.")
@command_errors
def train_re(**opts: Any) -> None:
    """Train a relevance estimator: P(passage answers the question).

    \b
    Example:
        ragctl silver squad.json re.jsonl --index docs --retrieve --passage-logprobs
        ragctl train re --data re.jsonl --objective kl
    """
    _train("re", **opts)


@click.command()
@click.argument("name")
@click.option("--from", "src", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Training folder (default: <home>/training/NAME).")
@click.option("--quantization", default="int8", show_default=True,
              type=click.Choice(QUANTIZATIONS))
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
    from ragctl.app.display import render_export
    from ragctl.app.progress import step_progress
    from ragctl.training.export import export_run

    with step_progress("exporting") as update:
        target, manifest = export_run(name, src=src, out=out, quantization=quantization,
                                      data_licence=data_licence, rounding=rounding,
                                      on_progress=update)
    render_export(name, target, manifest)


@train.command(name="reader")
@options(
    click.option("--data", "data", multiple=True, required=True,
                 type=click.Path(exists=True, path_type=Path),
                 help="Question-answer data with passages: SQuAD JSON (2.0's unanswerable "
                      "questions too), DPR/NQ JSONL, WikiTableQuestions TSV (with --tables) "
                      "or examples written by bench/reader_data.py (*.spans.jsonl.gz) "
                      "(repeatable)."),
    click.option("--tables", type=click.Path(exists=True, file_okay=False),
                 help="WikiTableQuestions' release folder (its csv/ and page/), for TSV data: "
                      "the questions one cell of a named row answers."),
    click.option("--base", default="minilm", show_default=True,
                 help="'minilm' (the installed all-MiniLM-L6-v2) or a local Hugging Face "
                      "encoder directory."),
    click.option("--name", default="minilm-reader", show_default=True,
                 help="Model name under models/."),
    click.option("--out", type=click.Path(file_okay=False, path_type=Path),
                 help="Training folder (default: <home>/training/NAME)."),
    click.option("--split", type=click.Choice(["dev", "report", "all"]), default="dev",
                 show_default=True, help="Which half of the built-in splits to train on "
                 "('all': every question of a training file; the shared files that hold a "
                 "report split refuse it)."),
    click.option("--epochs", type=click.IntRange(min=1), default=2, show_default=True),
    click.option("--batch-size", type=click.IntRange(min=1), default=16, show_default=True),
    click.option("--lr", "learning_rate", type=float, default=1e-4, show_default=True),
    click.option("--max-length", type=click.IntRange(min=32), default=256, show_default=True,
                 help="Tokens of question and passage read together."),
    click.option("--negatives", type=click.IntRange(min=0), default=1, show_default=True,
                 help="Passages on the same topic without the answer, per question."),
    click.option("--holes/--no-holes", default=True, show_default=True,
                 help="Also the answer's passage with the answer sentences deleted, as a "
                      "negative (it talks about the subject but does not say the answer)."),
    click.option("--limit", type=click.IntRange(min=1),
                 help="Train on a seeded sample of N questions per data file."),
    click.option("--val-fraction", type=click.FloatRange(0.01, 0.5), default=0.05,
                 show_default=True, help="Held-out share of the questions."),
    click.option("--seed", type=int, default=0, show_default=True),
    click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto",
                 show_default=True),
    click.option("--resume", is_flag=True,
                 help="Continue the run in --out from its last epoch checkpoint."),
    click.option("--no-export", is_flag=True, help="Do not export the result to models/."),
    click.option("--quantization", default="int8", show_default=True,
                 type=click.Choice(QUANTIZATIONS), help="Quantization of the exported model."))
@command_errors
def train_reader(data: tuple[Path, ...], name: str, out: Path | None, resume: bool,
                 no_export: bool, quantization: str, **opts: Any) -> None:
    """Train the span reader: where the answer starts and ends in a passage, or that the
    passage does not hold it.

    \b
    Example:
        ragctl train reader --data ../shared/data/squad/dev-v1.1.json \\
            --data ../shared/data/nq_oracle/nq-open-oracle.jsonl.gz
    """
    from ragctl.app.progress import TrainingProgress
    from ragctl.training.jobs import train_and_export
    from ragctl.training.reader import ReaderOptions

    with TrainingProgress("reader", opts["epochs"]) as show:
        job = train_and_export(ReaderOptions(**opts), data, name=name, out=out,
                               resume=resume, export=not no_export, quantization=quantization,
                               command="ragctl " + " ".join(sys.argv[1:]),
                               on_step=show.step, on_epoch=show.epoch, on_export=show.export)
    show.done(job)


@train.command(name="nli")
@options(
    click.option("--data", "data", multiple=True, required=True,
                 type=click.Path(exists=True, dir_okay=False, path_type=Path),
                 help="Labelled pairs: MultiNLI / SNLI / ANLI (JSONL or TSV), or yes/no "
                      "questions with passages (BoolQ JSONL) (repeatable)."),
    click.option("--base", default="minilm", show_default=True,
                 help="'minilm' (the installed all-MiniLM-L6-v2), a local Hugging Face "
                      "encoder directory, or the model folder of an earlier nli run (its "
                      "head is kept: trained further)."),
    click.option("--name", default="minilm-nli", show_default=True,
                 help="Model name under models/."),
    click.option("--out", type=click.Path(file_okay=False, path_type=Path),
                 help="Training folder (default: <home>/training/NAME)."),
    click.option("--epochs", type=click.IntRange(min=1), default=1, show_default=True),
    click.option("--batch-size", type=click.IntRange(min=1), default=32, show_default=True),
    click.option("--lr", "learning_rate", type=float, default=5e-5, show_default=True),
    click.option("--max-length", type=click.IntRange(min=16), default=128, show_default=True,
                 help="Tokens of premise and hypothesis read together."),
    click.option("--limit", type=click.IntRange(min=1),
                 help="Train on a seeded sample of N records per data file."),
    click.option("--val-fraction", type=click.FloatRange(0.001, 0.5), default=0.03,
                 show_default=True, help="Held-out share of the pairs."),
    click.option("--seed", type=int, default=0, show_default=True),
    click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto",
                 show_default=True),
    click.option("--resume", is_flag=True,
                 help="Continue the run in --out from its last epoch checkpoint."),
    click.option("--no-export", is_flag=True, help="Do not export the result to models/."),
    click.option("--quantization", default="int8", show_default=True,
                 type=click.Choice(QUANTIZATIONS), help="Quantization of the exported model."))
@command_errors
def train_nli(data: tuple[Path, ...], name: str, out: Path | None, resume: bool,
              no_export: bool, quantization: str, **opts: Any) -> None:
    """Train the entailment model: whether a sentence says a statement or a yes/no
    question is true, false, or neither (yes/no answers, "not stated").

    \b
    Example:
        ragctl train nli --data multinli_1.0_train.jsonl --data boolq/train.jsonl
    """
    from ragctl.app.progress import TrainingProgress
    from ragctl.training.entail import EntailOptions
    from ragctl.training.jobs import train_and_export

    with TrainingProgress("nli", opts["epochs"]) as show:
        job = train_and_export(EntailOptions(**opts), data, name=name, out=out,
                               resume=resume, export=not no_export, quantization=quantization,
                               command="ragctl " + " ".join(sys.argv[1:]),
                               on_step=show.step, on_epoch=show.epoch, on_export=show.export)
    show.done(job)


@train.command(name="tableops")
@options(
    click.option("--data", "data", required=True,
                 type=click.Path(exists=True, dir_okay=False, path_type=Path),
                 help="WikiTableQuestions' training examples (training.tsv or a "
                      "random-split-N-train.tsv: id, utterance, context, targetValue)."),
    click.option("--tables", required=True,
                 type=click.Path(exists=True, file_okay=False, path_type=Path),
                 help="The folder that holds the release's csv/ tables."),
    click.option("--name", default="minilm-tableops", show_default=True,
                 help="Model name under models/."),
    click.option("--limit", type=click.IntRange(min=1), help="The first N examples only."),
    click.option("--seed", type=int, default=0, show_default=True))
@command_errors
def train_tableops(data: Path, tables: Path, name: str, limit: int | None,
                   seed: int) -> None:
    """Train the table operation model by weak supervision: which operation (a count, a
    sum, the largest, the row after …) a question asks of a table, learned from the
    operations that give each training question's answer on its table.

    \b
    Example:
        ragctl train tableops --data data/training.tsv --tables WikiTableQuestions/
    """
    from ragctl.training.tableops import read_wtq, train

    examples = list(read_wtq(data, tables, limit=limit))
    click.echo(f"{len(examples)} examples; labelling them by the operations that answer…",
               err=True)
    _fit_head(name, data, len(examples), seed, lambda embed, embedder: train(
        examples, embed, embedder, seed=seed,
        progress=lambda i, n: click.echo(f"  {i} of {n}", err=True)))


@train.command(name="kinds")
@options(
    click.option("--data", "data", required=True,
                 type=click.Path(exists=True, dir_okay=False, path_type=Path),
                 help="A question-classification file of TREC's form (train_5500.label: "
                      "one 'LABEL:fine question ?' a line)."),
    click.option("--name", default="minilm-kinds", show_default=True,
                 help="Model name under models/."),
    click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=0.8,
                 show_default=True,
                 help="From this probability on, a question is answered with sentences."),
    click.option("--seed", type=int, default=0, show_default=True))
@command_errors
def train_kinds(data: Path, name: str, threshold: float, seed: int) -> None:
    """Train the question-kind model: whether a question wants a short answer (a name, a
    date, a number) or an explanation (how, why, what something is or does), quoted as
    whole sentences.

    \b
    Example:
        ragctl train kinds --data train_5500.label
    """
    from ragctl.training.kinds import read_trec, train

    examples = list(read_trec(data))
    click.echo(f"{len(examples)} labelled questions", err=True)
    _fit_head(name, data, len(examples), seed, lambda embed, embedder: train(
        examples, embed, embedder, seed=seed, threshold=threshold))


def _fit_head(name: str, data: Path, examples: int, seed: int,
              fit: Callable[[Callable[..., Any], str], tuple[Any, Any]]) -> None:
    """Fit a model that reads a question's embedding (``fit(embed, embedder name)`` gives
    the model and its report) on the embedder ``index`` uses, save it under models/NAME
    with where it came from, and print its report."""
    import dataclasses
    import json

    from ragctl.config import load_settings, models_dir
    from ragctl.models import registry as models

    settings = load_settings()
    embedder = models.load("embedder", settings.embedder, settings, light=True)
    model, report = fit(embedder.embed, embedder.name)
    out = models_dir() / name
    model = dataclasses.replace(model, name=name)
    model.save(out, data=str(data), examples=examples, seed=seed,
               command="ragctl " + " ".join(sys.argv[1:]), report=dataclasses.asdict(report))
    click.echo(json.dumps(dataclasses.asdict(report), indent=1))
    click.echo(f"saved {out}")


def register(group: click.Group) -> None:
    """Add the training commands to the ``ragctl`` group."""
    for command in (silver, train, export):
        group.add_command(command)
