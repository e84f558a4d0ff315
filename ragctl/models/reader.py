"""The span reader: an extractive question-answering model exported to CTranslate2.

``Reader`` proposes answer spans for a question in each of several contexts, with the
reader's own "no answer" score beside each (``SpanCandidate.null``); ``CT2Reader`` runs the
exported model (``ragctl train reader``, backend ``ct2-span``). Choosing among the spans
is the read path's (``ragctl.ask.answer``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragctl.models.backends import Backend


@dataclass(frozen=True)
class SpanCandidate:
    """An answer span in one context: character offsets into that context's text, its
    start + end score, and the context's null score."""

    context: int
    start: int
    end: int
    score: float
    null: float

    @property
    def margin(self) -> float:
        return self.score - self.null


def best_spans(start: np.ndarray, end: np.ndarray, positions: Sequence[int],
               max_tokens: int = 30, *, k: int = 5, top: int = 20
               ) -> list[tuple[float, int, int]]:
    """The ``k`` best (start + end logit, first token, last token) spans over
    ``positions``, at most ``max_tokens`` long, best first."""
    idx = np.asarray(positions, dtype=np.int64)
    if idx.size == 0:
        return []
    starts = idx[np.argsort(-start[idx])[:top]]
    ends = idx[np.argsort(-end[idx])[:top]]
    spans = [(float(start[s] + end[e]), int(s), int(e))
             for s in starts for e in ends if s <= e < s + max_tokens]
    spans.sort(reverse=True)
    return spans[:k]


class Reader(Backend):
    """Proposes answer spans for a question in each of several contexts."""

    max_answer_tokens: int = 30

    def read(self, question: str, contexts: Sequence[str], *, top: int = 5
             ) -> list[list[SpanCandidate]]:
        raise NotImplementedError


class CT2Reader(Reader):
    """An exported span reader (``ragctl train reader``, backend ``ct2-span``)."""

    def __init__(self, path: Path, *, device: str = "auto", compute_type: str = "auto",
                 threads: int = 0) -> None:
        from ragctl.models.ct2 import (
            load_pair_encoder,
            load_tokenizer,
            read_manifest,
            resolve_compute_type,
            resolve_device,
        )

        self.path = Path(path)
        self.manifest = read_manifest(self.path, ["ct2-span"])
        self.name = str(self.manifest.get("name", self.path.name))
        self.device = resolve_device(device)
        self.compute_type = resolve_compute_type(
            self.device, compute_type, str(self.manifest.get("quantization", "int8")))
        self.max_length = int(self.manifest.get("max_length", 256))
        self.max_answer_tokens = int(self.manifest.get("max_answer_tokens", 30))
        self.tokenizer = load_tokenizer(self.path, self.max_length)
        self.tokenizer.enable_truncation(self.max_length, strategy="only_second")
        self.fitted: dict[str, Any] = self.manifest.get("answering", {})  # bench/reader.py
        head = np.load(self.path / "head.npz")
        self.weight = head["weight"].astype(np.float32)
        self.bias = head["bias"].astype(np.float32)
        self.model: Any = load_pair_encoder(self, device, compute_type, threads)

    def close(self) -> None:
        self.model = None

    def logits(self, question: str, contexts: Sequence[str]) -> list[tuple[Any, ...]]:
        """(start logits, end logits, encoding) per context."""
        encs = self.tokenizer.encode_batch([(question, c) for c in contexts])
        out: list[tuple[Any, ...]] = []
        order = sorted(range(len(encs)), key=lambda i: len(encs[i].tokens))
        results: dict[int, tuple[Any, ...]] = {}
        for i in range(0, len(order), 16):
            idx = order[i:i + 16]
            tokens = [encs[j].tokens for j in idx]
            res = self.model.forward_batch(tokens, token_type_ids=[encs[j].type_ids for j in idx])
            states = np.asarray(res.last_hidden_state, dtype=np.float32)
            logits = states @ self.weight.T + self.bias
            for k, j in enumerate(idx):
                n = len(encs[j].tokens)
                results[j] = (logits[k, :n, 0], logits[k, :n, 1], encs[j])
        for j in range(len(encs)):
            out.append(results[j])
        return out

    def read(self, question: str, contexts: Sequence[str], *, top: int = 5
             ) -> list[list[SpanCandidate]]:
        out: list[list[SpanCandidate]] = []
        for c, (start, end, enc) in enumerate(self.logits(question, contexts)):
            positions = [t for t, sid in enumerate(enc.sequence_ids) if sid == 1]
            null = float(start[0] + end[0])
            spans = best_spans(start, end, positions, self.max_answer_tokens, k=top)
            out.append([SpanCandidate(c, int(enc.offsets[a][0]), int(enc.offsets[b][1]), score,
                                      null) for score, a, b in spans])
        return out
