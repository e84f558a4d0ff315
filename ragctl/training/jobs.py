"""Training jobs as the commands run them: silver labels written from a dataset or from
an index (``ragctl silver``), and a model trained, then exported (``ragctl train``).
They sit above the steps they chain, so that no step imports another's job."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ragctl.errors import RagctlError
from ragctl.training.silver import (
    ProgressFactory,
    SilverJob,
    SilverLabeler,
    SilverReport,
    SilverRun,
    _no_progress,
    inputs_from_dataset,
    load_answer_scorer,
    with_retrieved_passages,
    write_silver,
)
from ragctl.training.trainer import (
    EpochLog,
    StepCallback,
    Trainer,
    TrainJob,
    default_name,
)


def label(job: SilverJob, *, progress: ProgressFactory = _no_progress) -> SilverReport:
    """Read or write the questions, give them passages, label them into ``job.out``."""
    import logging

    from ragctl.config import load_settings

    logger = logging.getLogger("ragctl.silver")
    wants_lp = bool(job.passage_logprobs)
    scorer = None
    if "cxmi" in job.measures or wants_lp or job.from_index:
        scorer = load_answer_scorer(job.generator)
    report = SilverReport(SilverRun())
    try:
        if job.from_index is not None:
            from ragctl.training.synth import SynthStats, synthesize

            report.synth = SynthStats()
            with progress(f"writing questions from {job.from_index}", job.questions) as step:
                items = synthesize(load_settings(index=job.from_index), scorer,
                                   n=job.questions, seed=job.seed, top_k=job.top_k,
                                   progress=step, stats=report.synth)
        else:
            if job.data is None:
                raise RagctlError("give a dataset to label, or --from-index NAME")
            items = inputs_from_dataset(job.data, fmt=job.fmt, split=job.split,
                                        limit=job.limit, seed=job.seed)
            if job.index is not None:
                from ragctl.ask.retrieve import Retriever
                from ragctl.store.collection import Collection

                with Collection.open(load_settings(index=job.index)) as collection:
                    items = with_retrieved_passages(items, Retriever(collection),
                                                    top_k=job.top_k, replace=job.retrieve)
        report.without_passages = sum(1 for it in items if not it.passages)
        if report.without_passages:
            logger.warning("%d questions have no passages and are skipped; give --index NAME "
                           "to retrieve them", report.without_passages)
        labeler = SilverLabeler(measures=job.measures, scorer=scorer,
                                passage_logprobs=wants_lp if job.passage_logprobs is not None
                                else scorer is not None,
                                max_sentence_words=job.max_sentence_words)
        with progress(f"labelling {job.out.name}", len(items)) as advance:
            report.run = write_silver(items, job.out, labeler, resume=not job.restart,
                                      progress=advance)
    finally:
        if scorer is not None:
            scorer.close()
    return report


def train_and_export(opts: Any, data: Sequence[Path], *, name: str | None = None,
                     out: Path | None = None, resume: bool = False, export: bool = True,
                     quantization: str = "int8", command: str = "",
                     on_step: StepCallback | None = None,
                     on_epoch: Callable[[EpochLog], None] | None = None,
                     on_export: Callable[[int, int], None] | None = None) -> TrainJob:
    """Train on ``data`` into ``out`` (default ``<home>/training/NAME``), then export as
    ``<home>/models/NAME``. ``opts``: :class:`TrainOptions` (filter, relevance) or
    :class:`~.reader.ReaderOptions` (the span reader) or :class:`~.entail.EntailOptions`
    (the entailment model)."""
    from ragctl.config import home_dir, models_dir
    from ragctl.training.entail import EntailOptions, EntailTrainer
    from ragctl.training.export import export_model
    from ragctl.training.reader import ReaderOptions, ReaderTrainer

    kind = "reader" if isinstance(opts, ReaderOptions) else \
        "nli" if isinstance(opts, EntailOptions) else opts.kind
    name = name or default_name(opts.base, kind)
    out = out or home_dir() / "training" / name
    trainer: Trainer | ReaderTrainer | EntailTrainer = (
        ReaderTrainer(opts, data, out, command=command) if isinstance(opts, ReaderOptions)
        else EntailTrainer(opts, data, out, command=command)
        if isinstance(opts, EntailOptions) else Trainer(opts, data, out, command=command))
    job = TrainJob(trainer.run(resume=resume, on_step=on_step, on_epoch=on_epoch), name, out)
    if export:
        job.exported = models_dir() / name
        job.manifest = export_model(out, job.exported, quantization=quantization, name=name,
                                    on_progress=on_export)
    return job
