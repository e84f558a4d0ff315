"""Fitting a softmax head (:class:`ragctl.models.softmax.SoftmaxHead`) to its inputs: full-
batch gradient descent, NumPy only (the table operation and question-kind models)."""

from __future__ import annotations

import numpy as np


def fit(vectors: np.ndarray, targets: np.ndarray, *, epochs: int = 300, lr: float = 0.5,
        l2: float = 1e-4, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A softmax fitted to soft ``targets`` (rows summing to 1) by full-batch gradient
    descent with momentum."""
    rng = np.random.default_rng(seed)
    n, d = vectors.shape
    k = targets.shape[1]
    w = rng.normal(0, 0.01, (d, k)).astype(np.float64)
    b = np.log(targets.mean(axis=0) + 1e-3)
    vw, vb = np.zeros_like(w), np.zeros_like(b)
    x = vectors.astype(np.float64)
    for _ in range(epochs):
        z = x @ w + b
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - targets) / n
        gw, gb = x.T @ g + l2 * w, g.sum(axis=0)
        vw, vb = 0.9 * vw + gw, 0.9 * vb + gb
        w -= lr * vw
        b -= lr * vb
    return w.astype(np.float32), b.astype(np.float32)
