"""Error-compensating int8 rounding (GPTQ) for encoder models before export.

CTranslate2 stores an int8 weight matrix as one scale per output row (127 / the row's
largest |w|) and rounds every weight to the nearest step. Rounding each weight on its own
ignores that the errors of one row add up in the layer's output. GPTQ (Frantar et al.,
2023) rounds the columns one at a time and moves the error of each onto the columns not yet
rounded, weighted by how the layer's inputs co-vary (H = XᵀX over calibration texts), so the
output changes less for the same int8 grid.

Here the grid is CTranslate2's own: each row keeps its step (largest |w| / 127) and every
weight ends on a multiple of it, so the converter's int8 quantization reproduces the chosen
values exactly. The model stays a plain Hugging Face directory; only its Linear weights move.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragctl.errors import RagctlError

CALIBRATION_QUESTIONS = 150
CALIBRATION_TEXTS_PER_QUESTION = 8


@dataclass
class RoundingReport:
    """What :func:`gptq_int8` did: layers rounded, calibration texts and tokens seen, and
    the layers' mean output error relative to round-to-nearest (lower is better)."""

    layers: int
    texts: int
    tokens: int
    error_vs_nearest: float
    off_grid_rows: int

    def to_dict(self) -> dict[str, Any]:
        return {"method": "gptq", "layers": self.layers, "calibration_texts": self.texts,
                "calibration_tokens": self.tokens,
                "output_error_vs_nearest": round(self.error_vs_nearest, 4),
                "rows_requantized": self.off_grid_rows}


def calibration_texts(examples: Sequence[Any], kind: str, *, seed: int = 0,
                      questions: int = CALIBRATION_QUESTIONS,
                      per_question: int = CALIBRATION_TEXTS_PER_QUESTION) -> list[str]:
    """Inputs like those the model sees at run time: questions with their passages (relevance)
    or sentences (filter), from silver-labelled examples. Labels are not used."""
    import random

    from ragctl.text import passage_text

    chosen = random.Random(seed).sample(list(examples), min(questions, len(examples)))
    texts: list[str] = []
    for ex in chosen:
        texts.append(ex.question)
        if kind == "re":
            cands = [passage_text(p.title, p.text) for p in ex.passages]
        else:
            cands = [s.text for p in ex.passages for s in p.sentences]
        texts.extend(cands[:per_question])
    return [t for t in texts if t.strip()]


def round_to_grid(w: np.ndarray) -> np.ndarray:
    """Round-to-nearest on CTranslate2's per-row int8 grid (what the converter does)."""
    step = np.maximum(np.abs(w).max(axis=1, keepdims=True), 1e-12) / 127.0
    return np.asarray(np.clip(np.rint(w / step), -127, 127) * step, dtype=w.dtype)


def gptq_rows(w: Any, h: Any, *, damp: float = 0.01) -> Any:
    """GPTQ on one weight matrix ``w`` (out × in, torch) with input second moments ``h``
    (in × in). Every row stays on its own round-to-nearest step (max |w| / 127)."""
    import torch

    w = w.detach().double().clone()
    h = h.double().clone()
    n = w.shape[1]
    step = w.abs().amax(dim=1).clamp(min=1e-12) / 127.0
    dead = torch.diag(h) == 0
    h[dead, dead] = 1.0
    w[:, dead] = 0.0
    h += damp * torch.mean(torch.diag(h)) * torch.eye(n, dtype=torch.float64)
    try:
        hinv = torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(h)),
                                     upper=True)
    except RuntimeError:  # not positive definite even with damping: nothing to exploit
        return torch.from_numpy(round_to_grid(w.numpy()))
    q = torch.zeros_like(w)
    for j in range(n):
        col = w[:, j]
        qcol = torch.clamp(torch.round(col / step), -127, 127) * step
        q[:, j] = qcol
        err = (col - qcol) / hinv[j, j]
        w[:, j:] -= err[:, None] * hinv[j, j:][None, :]
    return q


def pin_row_max(q: Any, original: Any) -> int:
    """Rows whose largest |q| fell below 127 steps would get a new scale in the converter;
    put their original largest weight back (it is on the grid) so the step is kept.
    Returns how many rows needed it."""
    import torch

    step = original.abs().amax(dim=1).clamp(min=1e-12) / 127.0
    top = torch.round(q.abs() / step[:, None]).amax(dim=1)
    rows = torch.nonzero(top < 127).flatten()
    for r in rows.tolist():
        j = int(original[r].abs().argmax())
        q[r, j] = torch.sign(original[r, j]) * 127 * step[r]
    return len(rows)


def gptq_int8(model: Any, tokenizer: Any, texts: Sequence[str], *, max_length: int = 256,
              batch_size: int = 16,
              on_progress: Callable[[int, int], None] | None = None) -> RoundingReport:
    """Round every Linear weight of ``model``'s encoder in place (see the module doc)."""
    import torch

    layers = {n: m for n, m in model.named_modules()
              if isinstance(m, torch.nn.Linear) and n.startswith("encoder")}
    if not layers:
        raise RagctlError("GPTQ rounding needs an encoder with Linear layers "
                          f"({type(model).__name__} has none under 'encoder')")
    if not texts:
        raise RagctlError("GPTQ rounding needs calibration texts")
    hess = {n: torch.zeros(m.in_features, m.in_features, dtype=torch.float64)
            for n, m in layers.items()}
    mask: list[Any] = [None]

    def hook(name: str) -> Callable[..., None]:
        def record(_mod: Any, inputs: tuple[Any, ...], _out: Any) -> None:
            x = inputs[0].reshape(-1, inputs[0].shape[-1])[mask[0]].double()
            hess[name] += x.T @ x
        return record

    handles = [m.register_forward_hook(hook(n)) for n, m in layers.items()]
    tokens = 0
    model.eval()
    try:
        for i in range(0, len(texts), batch_size):
            enc = tokenizer(list(texts[i:i + batch_size]), padding=True, truncation=True,
                            max_length=max_length, return_tensors="pt")
            mask[0] = enc["attention_mask"].reshape(-1).bool()
            tokens += int(mask[0].sum())
            with torch.no_grad():
                model(**enc)
            if on_progress:
                on_progress(min(i + batch_size, len(texts)), len(texts) + len(layers))
    finally:
        for handle in handles:
            handle.remove()
    ratios, off_grid = [], 0
    for k, (name, layer) in enumerate(layers.items()):
        w = layer.weight.data
        h = hess[name] / max(tokens, 1)
        q = gptq_rows(w, h)
        off_grid += pin_row_max(q, w.double())
        nearest = torch.from_numpy(round_to_grid(w.double().numpy()))
        e_q = torch.trace((q - w.double()) @ h @ (q - w.double()).T)
        e_n = torch.trace((nearest - w.double()) @ h @ (nearest - w.double()).T)
        ratios.append(float(e_q / e_n) if e_n > 0 else 1.0)
        layer.weight.data = q.to(w.dtype)
        if on_progress:
            on_progress(len(texts) + k + 1, len(texts) + len(layers))
    return RoundingReport(layers=len(layers), texts=len(texts), tokens=tokens,
                          error_vs_nearest=float(np.mean(ratios)), off_grid_rows=off_grid)
