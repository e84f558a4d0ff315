"""The operation model of computed answers (:mod:`ragctl.ask.compute`): which operation a
question asks of a table, from its embedding (``models/minilm-tableops``, trained by
:mod:`ragctl.training.tableops`). NumPy only: a matrix and a softmax."""

from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

# The operations, in the order of the model's outputs. "lookup" is one cell (ragctl.ask.
# cells answers it); the others are computed (ragctl.ask.compute.execute).
OPERATIONS: tuple[str, ...] = ("lookup", "count", "sum", "average", "max", "min", "argmax",
                               "argmin", "difference", "first", "last", "next", "previous")


@dataclass(eq=False)  # not frozen: ``ragctl serve`` keeps a loaded model (registry.keep_loaded)
class OperationModel:
    """Which operation a question asks for: a softmax over the question's embedding
    (``weights`` dims × operations, ``bias``), for questions embedded by ``embedder``."""

    weights: np.ndarray
    bias: np.ndarray
    operations: tuple[str, ...]
    embedder: str
    threshold: float  # below this probability of its best operation, nothing is computed
    name: str = "minilm-tableops"
    hashed: int = 0  # dimensions of the question's hashed words and word pairs (0: none)

    def features(self, questions: list[str], vectors: np.ndarray) -> np.ndarray:
        """The model's inputs: each question's embedding, then its words and word pairs
        hashed into :attr:`hashed` dimensions (normalized): "how many", "the most",
        "after" say much of the operation."""
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
        return self.operations[k], float(p[k])

    @classmethod
    def load(cls, directory: Path) -> OperationModel:
        meta = json.loads((directory / "manifest.json").read_text())
        with np.load(directory / "head.npz") as f:
            w, b = f["weights"], f["bias"]
        return cls(w.astype(np.float32), b.astype(np.float32), tuple(meta["operations"]),
                   meta["embedder"], float(meta["threshold"]), meta.get("name", directory.name),
                   int(meta.get("hashed", 0)))

    def close(self) -> None:
        pass

    def save(self, directory: Path, **about: Any) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        np.savez(directory / "head.npz", weights=self.weights, bias=self.bias)
        (directory / "manifest.json").write_text(json.dumps(
            {"name": self.name, "kind": "tableops", "operations": list(self.operations),
             "embedder": self.embedder, "threshold": self.threshold, "hashed": self.hashed,
             **about}, indent=1)
            + "\n")


def hashed_words(question: str, dims: int) -> np.ndarray:
    """A question's words and word pairs (lower case), counted into ``dims`` buckets by
    a stable hash, and normalized."""
    words = re.findall(r"[a-z0-9]+", question.lower())
    grams = [*words, *(f"{a} {b}" for a, b in pairwise(words))]
    out = np.zeros(dims, dtype=np.float32)
    for g in grams:
        out[zlib.crc32(g.encode()) % dims] += 1.0
    norm = float(np.linalg.norm(out))
    return out / norm if norm else out
