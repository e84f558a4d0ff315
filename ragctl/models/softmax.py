"""A softmax over a question's embedding and its hashed words: the small NumPy models that
read a question alone (:mod:`ragctl.models.tableops`: which operation it asks of a table;
:mod:`ragctl.models.kinds`: which kind of answer it wants). A matrix, a bias and a list of
labels, saved as ``head.npz`` and ``manifest.json`` under ``models/``."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np


@dataclass(eq=False)  # not frozen: ``ragctl serve`` keeps a loaded model (registry.keep_loaded)
class SoftmaxHead:
    """Which of ``labels`` a question is: a softmax over its embedding (``weights`` dims ×
    labels, ``bias``), for questions embedded by ``embedder``, and its hashed words."""

    weights: np.ndarray
    bias: np.ndarray
    labels: tuple[str, ...]
    embedder: str
    threshold: float  # below this probability of its best label, the model does not say
    name: str = ""
    hashed: int = 0  # dimensions of the question's hashed words and word pairs (0: none)
    kind: ClassVar[str] = ""  # the manifest's "kind"

    def features(self, questions: list[str], vectors: np.ndarray) -> np.ndarray:
        """The model's inputs: each question's embedding, then its words and word pairs
        hashed into :attr:`hashed` dimensions (normalized): "how many", "the most",
        "how do I" say much of what is asked."""
        if not self.hashed:
            return vectors
        return np.hstack([vectors, np.stack([hashed_words(q, self.hashed)
                                             for q in questions])]).astype(np.float32)

    def probabilities(self, inputs: np.ndarray) -> np.ndarray:
        z = inputs @ self.weights + self.bias
        z -= z.max(axis=-1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=-1, keepdims=True)

    def predict(self, question: str, vector: np.ndarray) -> tuple[str, float]:
        p = self.probabilities(self.features([question], vector[None, :]))[0]
        k = int(np.argmax(p))
        return self.labels[k], float(p[k])

    @classmethod
    def load(cls, directory: Path) -> Self:
        meta = json.loads((directory / "manifest.json").read_text())
        with np.load(directory / "head.npz") as f:
            w, b = f["weights"], f["bias"]
        labels = meta.get("labels") or meta["operations"]  # "operations": before labels
        return cls(w.astype(np.float32), b.astype(np.float32), tuple(labels),
                   meta["embedder"], float(meta["threshold"]), meta.get("name", directory.name),
                   int(meta.get("hashed", 0)))

    def close(self) -> None:
        pass

    def save(self, directory: Path, **about: Any) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        np.savez(directory / "head.npz", weights=self.weights, bias=self.bias)
        (directory / "manifest.json").write_text(json.dumps(
            {"name": self.name, "kind": self.kind, "labels": list(self.labels),
             "embedder": self.embedder, "threshold": self.threshold, "hashed": self.hashed,
             **about}, indent=1)
            + "\n")


def hashed_words(question: str, dims: int) -> np.ndarray:
    """A question's words and word pairs (lower case), counted into ``dims`` buckets by
    a stable hash, and normalized."""
    import re

    words = re.findall(r"[a-z0-9]+", question.lower())
    grams = [*words, *(f"{a} {b}" for a, b in pairwise(words))]
    out = np.zeros(dims, dtype=np.float32)
    for g in grams:
        out[zlib.crc32(g.encode()) % dims] += 1.0
    norm = float(np.linalg.norm(out))
    return out / norm if norm else out
