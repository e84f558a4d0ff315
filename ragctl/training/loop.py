"""The epoch loop of the models trained as an encoder with a linear head (the span reader,
the entailment model): a base encoder and a fresh head, AdamW with linear warm-up and
decay, batches of similar length in random order, a validation each epoch that keeps the
best epoch's model, and a checkpoint per epoch to resume from. Each model says what its
examples are, its loss and its validation (:class:`HeadTrainer`).
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragctl.errors import RagctlError
from ragctl.training.architectures import resolve_base
from ragctl.training.trainer import EpochLog, StepCallback, replace_dir, seeded_torch


@dataclass
class HeadResult:
    out: Path
    examples: int
    val_examples: int
    history: list[EpochLog] = field(default_factory=list)
    best_epoch: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    resumed_from: int = 0
    architecture: str = ""


class HeadTrainer(ABC):
    """``opts`` has base, epochs, batch_size, learning_rate, seed and device."""

    architecture: str = ""
    outputs: int = 1  # the head's logits per token (or per pair)
    metric: str = ""  # the validation measure that picks the best epoch

    def __init__(self, opts: Any, data: Sequence[Path], out: Path, *,
                 command: str = "") -> None:
        if opts.epochs < 1 or opts.batch_size < 1:
            raise RagctlError("epochs and batch size must be at least 1")
        self.opts = opts
        self.data = [Path(p) for p in data]
        self.out = Path(out)
        self.command = command

    @abstractmethod
    def examples(self) -> tuple[list[Any], list[Any]]:
        """The training and the validation examples."""

    @abstractmethod
    def length(self, example: Any) -> int:
        """How long an example is (batches hold examples of similar length)."""

    @abstractmethod
    def loss(self, tok: Any, model: Any, head: Any, batch: Sequence[Any], device: str) -> Any:
        """The batch's loss, a torch scalar."""

    @abstractmethod
    def validate(self, tok: Any, model: Any, head: Any, val: Sequence[Any],
                 device: str) -> dict[str, float]:
        """Validation measures, :attr:`metric` and ``val_loss`` among them."""

    @abstractmethod
    def meta(self, result: HeadResult) -> dict[str, Any]:
        """What ``train.json`` records of the run."""

    def init_head(self, head: Any, base: Path) -> None:  # noqa: B027 - most start afresh
        """Start the head from the base's own, when it has one (nothing by default)."""

    def run(self, *, resume: bool = False, on_step: StepCallback | None = None,
            on_epoch: Callable[[EpochLog], None] | None = None) -> HeadResult:
        opts = self.opts
        torch = seeded_torch(opts.seed)
        from transformers import AutoModel, AutoTokenizer

        train, val = self.examples()
        _, path, _ = resolve_base(opts.base)
        device = opts.device if opts.device != "auto" else (
            "cuda" if torch.cuda.is_available() else "cpu")
        try:
            tok = AutoTokenizer.from_pretrained(str(path))
            model = AutoModel.from_pretrained(str(path)).to(device)
        except (OSError, ValueError, KeyError) as e:
            raise RagctlError(f"cannot load base model {path}: {e}") from None
        torch.manual_seed(opts.seed)
        head = torch.nn.Linear(model.config.hidden_size, self.outputs).to(device)
        self.init_head(head, path)
        params = list(model.parameters()) + list(head.parameters())
        optim = torch.optim.AdamW(params, lr=opts.learning_rate, weight_decay=0.01)
        steps = opts.epochs * math.ceil(len(train) / opts.batch_size)
        warm = max(1, steps // 10)

        def rate(step: int) -> float:
            return step / warm if step < warm else max(0.0, (steps - step) / max(1, steps - warm))

        sched = torch.optim.lr_scheduler.LambdaLR(optim, rate)
        result = HeadResult(self.out, len(train), len(val), architecture=self.architecture)
        ckpt_dir = self.out / "checkpoints"
        if self.out.exists() and any(self.out.iterdir()) and not resume:
            raise RagctlError(f"{self.out} already holds a training run; use --resume to "
                              "continue it, or another --out")
        start, best = 1, -1.0
        files = sorted(ckpt_dir.glob("epoch-*.pt"), key=lambda f: int(f.stem.split("-")[1])) \
            if resume and ckpt_dir.exists() else []
        if files:
            state = torch.load(files[-1], weights_only=False)
            model.load_state_dict(state["model"])
            head.load_state_dict(state["head"])
            optim.load_state_dict(state["optim"])
            sched.load_state_dict(state["sched"])
            result.history = [EpochLog(**h) for h in state["history"]]
            result.best_epoch, best = state["best_epoch"], state["best"]
            result.resumed_from = state["epoch"]
            start = state["epoch"] + 1
        self.out.mkdir(parents=True, exist_ok=True)
        model.train()
        for epoch in range(start, opts.epochs + 1):
            t0 = time.perf_counter()
            rng = random.Random(opts.seed * 1000 + epoch)
            torch.manual_seed(opts.seed * 1000 + epoch)
            order = list(train)
            rng.shuffle(order)
            # batches of similar length (less padding), in random order
            chunks = [sorted(order[i:i + 512], key=self.length)
                      for i in range(0, len(order), 512)]
            batches = [c[i:i + opts.batch_size] for c in chunks
                       for i in range(0, len(c), opts.batch_size)]
            rng.shuffle(batches)
            losses = []
            for step, batch in enumerate(batches, start=1):
                loss = self.loss(tok, model, head, batch, device)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, 1.0)
                optim.step()
                sched.step()
                optim.zero_grad()
                losses.append(float(loss.detach()))
                if on_step is not None:
                    on_step(epoch, step, len(batches), losses[-1])
            model.eval()
            with torch.no_grad():
                metrics = self.validate(tok, model, head, val, device)
            model.train()
            log = EpochLog(epoch, float(np.mean(losses)) if losses else 0.0,
                           metrics["val_loss"], metrics[self.metric],
                           round(time.perf_counter() - t0, 1))
            result.history.append(log)
            if metrics[self.metric] > best or not (self.out / "model").exists():
                best, result.best_epoch = metrics[self.metric], epoch
                result.metrics = {k: round(v, 4) for k, v in metrics.items()}
                replace_dir(self.out / "model",
                            lambda d: _save(d, model, tok, head, self.meta(result)))
            ckpt_dir.mkdir(parents=True, exist_ok=True)
            tmp = ckpt_dir / f"epoch-{epoch}.pt.tmp"
            torch.save({"epoch": epoch, "model": model.state_dict(), "head": head.state_dict(),
                        "optim": optim.state_dict(), "sched": sched.state_dict(),
                        "history": [asdict(h) for h in result.history],
                        "best_epoch": result.best_epoch, "best": best}, tmp)
            os.replace(tmp, ckpt_dir / f"epoch-{epoch}.pt")
            for old in ckpt_dir.glob("epoch-*.pt"):
                if int(old.stem.split("-")[1]) < epoch:
                    old.unlink()
            if on_epoch is not None:
                on_epoch(log)
        (self.out / "model" / "train.json").write_text(json.dumps(self.meta(result), indent=2))
        return result


def _save(out: Path, model: Any, tok: Any, head: Any, meta: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    tok.save_pretrained(str(out))
    np.savez(out / "head.npz", weight=head.weight.detach().cpu().numpy().astype(np.float32),
             bias=head.bias.detach().cpu().numpy().astype(np.float32))
    (out / "train.json").write_text(json.dumps(meta, indent=2))
