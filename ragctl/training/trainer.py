"""Training the context filter and the relevance estimator from silver labels.

Both are pair scorers: a logit z(a, b) = log P(true) − log P(false) for a question and a
sentence (filter) or a passage (relevance estimator); :mod:`.architectures` holds the
models (bi-encoder, seq2seq, decoder).

Objectives: the filter learns the silver-selected sentences (for the bi-encoder, a softmax
over the sentences of the same passages; binary cross-entropy otherwise). The relevance
estimator learns, without relevance labels, to match the generator: P_RE = softmax over a
question's passages of z, Q_G = softmax of log P_gen(answer | question, passage), loss
KL(P_RE ‖ Q_G) (RE-RAG eq. 8–10); or, as the alternative, binary cross-entropy on
has-answer. After training, a logistic calibration fitted on the validation slice maps z
to P(true) (has-answer labels for the relevance estimator, silver labels for the filter).

Runs are deterministic for a seed: data order and dropout are seeded per epoch, so a run
resumed from its epoch checkpoint ends with the same weights as an uninterrupted one.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragctl.errors import RagctlError, missing_dependency
from ragctl.models.embed import offline
from ragctl.text import passage_text
from ragctl.training.architectures import Architecture, BiEncoder, resolve_architecture
from ragctl.training.silver import SilverExample, read_silver

KINDS = ("filter", "re")
OBJECTIVES = ("kl", "has-answer")


@dataclass
class TrainOptions:
    kind: str
    base: str = "minilm"
    architecture: str = "auto"  # auto, or one of architectures.ARCHITECTURES
    measure: str = "strinc"  # filter: which silver measure is the target
    objective: str = "kl"  # re: kl | has-answer
    epochs: int = 2
    batch_size: int = 16  # pairs per optimizer step
    learning_rate: float | None = None
    head_lr: float = 1e-3  # bi-encoder: the head's three scalars
    max_length: int | None = None  # tokens
    max_words: int = 180  # passage words kept in generative prompts
    negatives: int = 3  # filter: other sentences per positive
    layers: int | None = None  # keep the first N encoder layers
    val_fraction: float = 0.1
    max_val: int = 300
    limit: int | None = None
    seed: int = 0
    device: str = "auto"

    def resolved_max_length(self) -> int:
        return self.max_length or (128 if self.kind == "filter" else 256)


@dataclass
class EpochLog:
    epoch: int
    train_loss: float
    val_loss: float
    val_metric: float
    seconds: float


@dataclass
class TrainResult:
    out: Path
    architecture: str
    examples: int
    val_examples: int
    history: list[EpochLog] = field(default_factory=list)
    best_epoch: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    resumed_from: int = 0
    initial_metric: float | None = None  # bi-encoder: validation before training


@dataclass
class Group:
    """One question with the texts scored against it."""

    question: str
    texts: list[str]
    labels: list[float]
    target: list[float] | None = None  # log P_gen(answer | q, passage), for KL


# data ------------------------------------------------------------------------------------
def filter_groups(examples: Sequence[SilverExample], measure: str, *, negatives: int,
                  rng: random.Random, full: bool = False) -> list[Group]:
    """Silver-positive sentences with ``negatives`` others each (all of them if ``full``)."""
    out = []
    for ex in examples:
        refs = ex.selected.get(measure)
        if refs is None:
            raise RagctlError(f"example {ex.id} has no {measure!r} labels; label the data "
                              f"with: ragctl silver --measures {measure}")
        if not refs:
            continue
        pos = {tuple(r) for r in refs}
        others = [ex.sentence(r).text for r in
                  ((p, s) for p, psg in enumerate(ex.passages) for s in range(len(psg.sentences)))
                  if r not in pos]
        if not full:
            others = rng.sample(others, min(negatives * len(pos), len(others)))
        rows = [(ex.sentence(r).text, 1.0) for r in sorted(pos)] + [(t, 0.0) for t in others]
        rng.shuffle(rows)  # no position carries the label
        out.append(Group(ex.question, [t for t, _ in rows], [y for _, y in rows]))
    return out


def re_groups(examples: Sequence[SilverExample], objective: str) -> list[Group]:
    out = []
    missing = 0
    for ex in examples:
        if len(ex.passages) < 2:
            continue
        target = [p.answer_logprob for p in ex.passages]
        if objective == "kl" and any(t is None for t in target):
            missing += 1
            continue
        out.append(Group(ex.question, [passage_text(p.title, p.text) for p in ex.passages],
                         [float(p.has_answer) for p in ex.passages],
                         [float(t) for t in target] if objective == "kl" else None))  # type: ignore[arg-type]
    if not out and missing:
        raise RagctlError("the data has no passage log-likelihoods for the KL objective; "
                          "label it with: ragctl silver ... --passage-logprobs, or train "
                          "with --objective has-answer")
    return out


def load_examples(paths: Sequence[Path], *, limit: int | None = None,
                  seed: int = 0) -> list[SilverExample]:
    examples: list[SilverExample] = []
    for p in paths:
        examples.extend(read_silver(Path(p)))
    bad = [ex.id for ex in examples if not ex.answers]
    if bad and len(bad) == len(examples):
        raise RagctlError("every example has an empty answer list; nothing to learn from")
    examples = [ex for ex in examples if ex.answers and ex.question.strip()]
    if limit is not None and limit < len(examples):
        examples = random.Random(seed).sample(examples, limit)
    return examples


def split_examples(examples: Sequence[SilverExample], fraction: float, max_val: int,
                   seed: int) -> tuple[list[SilverExample], list[SilverExample]]:
    order = list(examples)
    random.Random(seed).shuffle(order)
    n_val = min(max_val, max(1, int(len(order) * fraction))) if len(order) > 1 else 0
    return order[n_val:], order[:n_val]


def metric_name(kind: str) -> str:
    """The validation measure of a kind: top-1 sentence (filter), recall@1 (relevance),
    answer F1 (reader), accuracy (nli)."""
    return {"filter": "top1", "reader": "f1", "nli": "accuracy"}.get(kind, "recall@1")


# models ----------------------------------------------------------------------------------
def seeded_torch(seed: int) -> Any:
    """torch, quiet, on every core, with Python's, NumPy's and torch's generators seeded."""
    torch = load_torch()
    quiet_transformers()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return torch


def load_torch() -> Any:
    try:
        import torch
    except ImportError:
        raise missing_dependency("torch", "train") from None
    return torch


def quiet_transformers() -> None:
    offline()
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        return
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


class PairScorer:
    """A torch model of one architecture: ``logits(pairs)`` gives z per pair."""

    def __init__(self, arch: Architecture, path: Path, gguf: str | None, opts: TrainOptions,
                 device: str) -> None:
        from transformers import AutoTokenizer

        self.torch = load_torch()
        self.arch = arch
        self.architecture = arch.name
        self.device = device
        self.max_length = opts.resolved_max_length()
        self.max_words = opts.max_words
        self.prompt = arch.prompt()
        self.head: Any = None
        self.model: Any = None
        kw: dict[str, Any] = {"gguf_file": gguf} if gguf else {}
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(path), **kw)
            arch.build(self, path, gguf, opts)
        except (OSError, ValueError, KeyError) as e:
            raise RagctlError(f"cannot load base model {path}: {e}") from None
        for part in (self.model, self.head):
            if part is not None:
                part.to(device)

    def parameters(self) -> list[Any]:
        params = list(self.model.parameters())
        if self.head is not None:
            params += list(self.head.parameters())
        return params

    def head_parameters(self) -> list[Any]:
        """The head's few scalars (they learn at a higher rate)."""
        return list(self.head.parameters()) if self.head is not None else []

    def train(self, mode: bool = True) -> None:
        self.model.train(mode)
        if self.head is not None:
            self.head.train(mode)

    def state_dict(self) -> dict[str, Any]:
        return {"model": self.model.state_dict(),
                "head": self.head.state_dict() if self.head is not None else None}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.model.load_state_dict(state["model"])
        if self.head is not None and state.get("head") is not None:
            self.head.load_state_dict(state["head"])

    def logits(self, pairs: Sequence[tuple[str, str]]) -> Any:
        return self.arch.logits(self, pairs)

    def save(self, out: Path) -> None:
        """The model in Hugging Face layout (what the exporter converts) plus the head."""
        out.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(str(out))
        self.tokenizer.save_pretrained(str(out))
        arrays = self.arch.head_arrays(self)
        if arrays is not None:
            np.savez(out / "head.npz", **arrays)


# losses and metrics ------------------------------------------------------------------
def kl_loss(torch: Any, z: Any, target: Sequence[float]) -> Any:
    """KL(P_RE ‖ Q_G) for one question: both softmaxes over its passages."""
    log_p = torch.log_softmax(z, dim=0)
    log_q = torch.log_softmax(torch.tensor(target, dtype=z.dtype, device=z.device), dim=0)
    return (log_p.exp() * (log_p - log_q)).sum()


def listwise_loss(torch: Any, z: Any, labels: Sequence[float]) -> Any:
    """−log of the softmax mass on the positives, over one question's texts."""
    pos = torch.tensor([y > 0 for y in labels], device=z.device)
    return torch.logsumexp(z, 0) - torch.logsumexp(z[pos], 0)


def _group_loss(torch: Any, z: Any, g: Group, kind: str, objective: str,
                arch: Architecture) -> Any:
    if kind == "re" and objective == "kl":
        assert g.target is not None
        return kl_loss(torch, z, g.target)
    if kind == "filter" and arch.filter_objective == "silver-listwise" and any(g.labels):
        return listwise_loss(torch, z, g.labels)
    labels = torch.tensor(g.labels, dtype=z.dtype, device=z.device)
    return torch.nn.functional.binary_cross_entropy_with_logits(z, labels)


def fit_calibration(z: Sequence[float], y: Sequence[float], *,
                    ridge: float = 1e-2) -> tuple[float, float]:
    """Logistic regression p = σ(a·z + b) (Platt scaling); (1, 0) when it cannot fit.

    Fitted on standardized logits with a small ridge penalty and step halving, so
    separable or degenerate data cannot send the parameters to infinity.
    """
    x = np.asarray(z, dtype=np.float64)
    t = np.asarray(y, dtype=np.float64)
    if x.size < 2 or t.min() == t.max() or x.std() == 0:
        return 1.0, 0.0
    mu, sd = x.mean(), x.std()
    u = (x - mu) / sd

    def loss(w: np.ndarray) -> float:
        m = w[0] * u + w[1]
        return float(np.sum(np.logaddexp(0, m) - t * m) + ridge * w[0] ** 2)

    w = np.zeros(2)
    cur = loss(w)
    for _ in range(100):
        p = 1 / (1 + np.exp(-(w[0] * u + w[1])))
        g = np.array([np.sum((p - t) * u) + 2 * ridge * w[0], np.sum(p - t)])
        h = p * (1 - p)
        hess = np.array([[np.sum(h * u * u) + 2 * ridge, np.sum(h * u)],
                         [np.sum(h * u), np.sum(h) + 1e-9]])
        try:
            step = np.linalg.solve(hess, g)
        except np.linalg.LinAlgError:
            break
        scale = 1.0
        while scale > 1e-4 and loss(w - scale * step) > cur:
            scale /= 2
        w_new = w - scale * step
        new = loss(w_new)
        done = cur - new < 1e-10
        w, cur = w_new, min(cur, new)
        if done:
            break
    a, b = w[0] / sd, w[1] - w[0] * mu / sd
    if not (math.isfinite(a) and math.isfinite(b)) or a <= 0:
        return 1.0, 0.0
    return float(a), float(b)


# the loop --------------------------------------------------------------------------------
StepCallback = Callable[[int, int, int, float], None]  # epoch, step, steps, loss


class Trainer:
    def __init__(self, opts: TrainOptions, data: Sequence[Path], out: Path, *,
                 command: str = "") -> None:
        if opts.kind not in KINDS:
            raise RagctlError(f"kind must be one of {', '.join(KINDS)}, not {opts.kind!r}")
        if opts.objective not in OBJECTIVES:
            raise RagctlError(f"objective must be one of {', '.join(OBJECTIVES)}")
        if opts.epochs < 1 or opts.batch_size < 1:
            raise RagctlError("epochs and batch size must be at least 1")
        self.opts = opts
        self.data = [Path(p) for p in data]
        self.out = Path(out)
        self.command = command

    def _device(self, torch: Any) -> str:
        if self.opts.device != "auto":
            return self.opts.device
        return "cuda" if torch.cuda.is_available() else "cpu"

    def run(self, *, resume: bool = False, on_step: StepCallback | None = None,
            on_epoch: Callable[[EpochLog], None] | None = None) -> TrainResult:
        opts = self.opts
        torch = seeded_torch(opts.seed)
        examples = load_examples(self.data, limit=opts.limit, seed=opts.seed)
        train_ex, val_ex = split_examples(examples, opts.val_fraction, opts.max_val, opts.seed)
        val_groups = self._groups(val_ex, random.Random(opts.seed), full=True)
        if not self._groups(train_ex, random.Random(opts.seed), full=False):
            raise RagctlError(self._no_data_message())
        arch, path, gguf = resolve_architecture(opts.base, opts.architecture)
        self.architecture = arch.name
        device = self._device(torch)
        scorer = PairScorer(arch, path, gguf, opts, device)
        lr = opts.learning_rate or arch.learning_rate
        head = {id(p) for p in scorer.head_parameters()}
        optim = torch.optim.AdamW(
            [{"params": [p for p in scorer.parameters() if id(p) not in head]},
             {"params": scorer.head_parameters(), "lr": opts.head_lr, "weight_decay": 0.0}],
            lr=lr, weight_decay=0.01)
        result = TrainResult(self.out, arch.name, len(train_ex), len(val_ex))
        ckpt_dir = self.out / "checkpoints"
        start = 1
        best = -1.0
        self._check_out(resume)
        if resume:
            state = self._latest_checkpoint(ckpt_dir, torch)
            if state is not None:
                scorer.load_state_dict(state["scorer"])
                optim.load_state_dict(state["optim"])
                result.history = [EpochLog(**h) for h in state["history"]]
                result.best_epoch = state["best_epoch"]
                best = state["best"]
                start = state["epoch"] + 1
                result.resumed_from = state["epoch"]
                result.initial_metric = state.get("initial_metric")
        self.out.mkdir(parents=True, exist_ok=True)
        if isinstance(arch, BiEncoder) and start == 1:  # training starts at the fallback
            t0 = time.perf_counter()
            val_loss, metric, _, _ = self.validate(scorer, val_groups)
            result.initial_metric = round(metric, 4)
            if on_epoch is not None:  # epoch 0: before training
                on_epoch(EpochLog(0, 0.0, val_loss, metric,
                                  round(time.perf_counter() - t0, 1)))
        for epoch in range(start, opts.epochs + 1):
            t0 = time.perf_counter()
            rng = random.Random(opts.seed * 1000 + epoch)
            torch.manual_seed(opts.seed * 1000 + epoch)
            groups = self._groups(train_ex, rng, full=False)
            rng.shuffle(groups)
            batches = _batches(groups, opts.batch_size)
            scorer.train(True)
            losses = []
            for step, batch in enumerate(batches, start=1):
                optim.zero_grad()
                pairs = [(g.question, t) for g in batch for t in g.texts]
                z = scorer.logits(pairs)
                loss: Any = 0.0
                k = 0
                for g in batch:
                    loss = loss + _group_loss(torch, z[k:k + len(g.texts)], g, opts.kind,
                                              opts.objective, arch)
                    k += len(g.texts)
                loss = loss / len(batch)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(scorer.parameters(), 1.0)
                optim.step()
                losses.append(float(loss.detach()))
                if on_step is not None:
                    on_step(epoch, step, len(batches), losses[-1])
            val_loss, metric, _, _ = self.validate(scorer, val_groups)
            log = EpochLog(epoch, float(np.mean(losses)) if losses else 0.0, val_loss, metric,
                           round(time.perf_counter() - t0, 1))
            result.history.append(log)
            if metric > best or not (self.out / "model").exists():
                best = metric
                result.best_epoch = epoch
                replace_dir(self.out / "model", scorer.save)
            self._save_checkpoint(ckpt_dir, torch, epoch, scorer, optim, result, best)
            if on_epoch is not None:
                on_epoch(log)
        # calibration and final metrics on the best weights
        best_state = self._checkpoint_state(ckpt_dir, torch, result.best_epoch)
        if best_state is not None:
            scorer.load_state_dict(best_state["scorer"])
        val_loss, metric, z_all, y_all = self.validate(scorer, val_groups)
        a, b = fit_calibration(z_all, y_all)
        result.metrics = {"val_loss": round(val_loss, 4), self.metric_name: round(metric, 4)}
        if result.initial_metric is not None:
            result.metrics[f"untrained_{self.metric_name}"] = result.initial_metric
        if opts.kind == "re":  # the retriever's order, for comparison
            result.metrics["retriever_recall@1"] = round(self.baseline(val_groups), 4)
        meta = {"kind": opts.kind, "architecture": arch.name, "base": opts.base,
                "options": asdict(opts), "data": [str(p) for p in self.data],
                "command": self.command, "examples": len(train_ex),
                "val_examples": len(val_ex), "history": [asdict(h) for h in result.history],
                "best_epoch": result.best_epoch, "metrics": result.metrics,
                "calibration": [round(a, 6), round(b, 6)],
                "prompt": scorer.prompt,
                "max_length": scorer.max_length, "max_words": opts.max_words}
        (self.out / "model" / "train.json").write_text(json.dumps(meta, indent=2))
        return result

    # -- pieces
    @property
    def metric_name(self) -> str:
        return metric_name(self.opts.kind)

    def _no_data_message(self) -> str:
        if self.opts.kind == "filter":
            return (f"no example has a sentence selected by {self.opts.measure!r}; "
                    "try another --measure")
        return "no example has two or more passages; label the data with --index NAME"

    def _groups(self, examples: Sequence[SilverExample], rng: random.Random, *,
                full: bool) -> list[Group]:
        if self.opts.kind == "filter":
            return filter_groups(examples, self.opts.measure, negatives=self.opts.negatives,
                                 rng=rng, full=full)
        return re_groups(examples, self.opts.objective)

    def validate(self, scorer: PairScorer, groups: Sequence[Group]
                 ) -> tuple[float, float, list[float], list[float]]:
        """(loss, top-1 hit rate, all logits, all labels) on the validation groups."""
        torch = scorer.torch
        scorer.train(False)
        losses: list[float] = []
        hits: list[float] = []
        zs: list[float] = []
        ys: list[float] = []
        with torch.no_grad():
            for g in groups:
                z = torch.cat([scorer.logits([(g.question, t) for t in g.texts[i:i + 32]])
                               for i in range(0, len(g.texts), 32)])
                losses.append(float(_group_loss(torch, z, g, self.opts.kind,
                                                self.opts.objective, scorer.arch)))
                zn = z.float().cpu().numpy()
                if any(g.labels):
                    hits.append(float(g.labels[int(np.argmax(zn))] > 0))
                zs.extend(float(v) for v in zn)
                ys.extend(g.labels)
        scorer.train(True)
        return (float(np.mean(losses)) if losses else 0.0,
                float(np.mean(hits)) if hits else 0.0, zs, ys)

    @staticmethod
    def baseline(groups: Sequence[Group]) -> float:
        """Top-1 of the input order: the retriever's rank (or the silver order)."""
        rows = [g.labels[0] > 0 for g in groups if any(g.labels)]
        return float(np.mean(rows)) if rows else 0.0

    def _check_out(self, resume: bool) -> None:
        if self.out.exists() and any(self.out.iterdir()) and not resume:
            raise RagctlError(f"{self.out} already holds a training run; use --resume to "
                              "continue it, or another --out")

    def _save_checkpoint(self, ckpt_dir: Path, torch: Any, epoch: int, scorer: PairScorer,
                         optim: Any, result: TrainResult, best: float) -> None:
        ckpt_dir.mkdir(parents=True, exist_ok=True)
        state = {"epoch": epoch, "scorer": scorer.state_dict(), "optim": optim.state_dict(),
                 "history": [asdict(h) for h in result.history],
                 "best_epoch": result.best_epoch, "best": best, "options": asdict(self.opts),
                 "initial_metric": result.initial_metric}
        tmp = ckpt_dir / f"epoch-{epoch}.pt.tmp"
        torch.save(state, tmp)
        os.replace(tmp, ckpt_dir / f"epoch-{epoch}.pt")
        for old in ckpt_dir.glob("epoch-*.pt"):
            n = int(old.stem.split("-")[1])
            if n < epoch and n != result.best_epoch:
                old.unlink()

    def _checkpoint_state(self, ckpt_dir: Path, torch: Any, epoch: int) -> Any:
        f = ckpt_dir / f"epoch-{epoch}.pt"
        return torch.load(f, weights_only=False) if f.exists() else None

    def _latest_checkpoint(self, ckpt_dir: Path, torch: Any) -> Any:
        files = sorted(ckpt_dir.glob("epoch-*.pt"), key=lambda f: int(f.stem.split("-")[1]))
        if not files:
            return None
        state = torch.load(files[-1], weights_only=False)
        saved = state.get("options", {})
        for key in ("kind", "base", "architecture", "measure", "objective", "seed", "layers"):
            was = saved.get(key, "auto" if key == "architecture" else None)
            if was != getattr(self.opts, key):
                raise RagctlError(f"the checkpoint in {ckpt_dir} was trained with {key}="
                                  f"{was!r}, not {getattr(self.opts, key)!r}")
        return state


def _batches(groups: Sequence[Group], pairs_per_step: int) -> list[list[Group]]:
    out: list[list[Group]] = []
    cur: list[Group] = []
    n = 0
    for g in groups:
        cur.append(g)
        n += len(g.texts)
        if n >= pairs_per_step:
            out.append(cur)
            cur, n = [], 0
    if cur:
        out.append(cur)
    return out


def replace_dir(target: Path, write: Callable[[Path], None]) -> None:
    """Write a directory next to ``target`` and swap it in, so a crash leaves the old one."""
    tmp = target.with_name(target.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    write(tmp)
    old = target.with_name(target.name + ".old")
    if target.exists():
        os.replace(target, old)
    os.replace(tmp, target)
    if old.exists():
        shutil.rmtree(old)


# the whole job ---------------------------------------------------------------------------
@dataclass
class TrainJob:
    """A training run and, unless ``export`` is off, its export under ``<home>/models``."""

    result: Any  # TrainResult, or loop.HeadResult (reader, nli)
    name: str
    out: Path
    exported: Path | None = None
    manifest: dict[str, Any] | None = None


def default_name(base: str, kind: str) -> str:
    """``<base>-<kind>``: the base's folder name for a directory."""
    return f"{base if base in ('minilm', 'smollm2') else Path(base).name}-{kind}"
