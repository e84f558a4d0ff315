from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import numpy as np
import pytest

from ragctl.embed import Embedder, register_embedder

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


class HashEmbedder(Embedder):
    """Deterministic bag-of-words vectors: texts sharing words are close."""

    def __init__(self, name: str = "fake-hash", dim: int = 64) -> None:
        self.name = name
        self.dim = dim
        self.calls = 0
        self.texts = 0

    def _embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        self.texts += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"\w+", t.lower()):
                h = int(hashlib.md5(w.encode()).hexdigest(), 16)
                out[i, h % self.dim] += 1.0
            out[i, 0] += 0.01
        return out


FAKES: dict[str, HashEmbedder] = {}


def _fake(name: str, dim: int) -> HashEmbedder:
    FAKES[name] = HashEmbedder(name, dim)
    return FAKES[name]


register_embedder("fake-hash", lambda: _fake("fake-hash", 64))
register_embedder("fake-hash-32", lambda: _fake("fake-hash-32", 32))


@pytest.fixture(autouse=True)
def ragctl_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("RAGCTL_HOME", str(home))
    for key in list(os.environ):
        if key.startswith("RAGCTL_") and key != "RAGCTL_HOME":
            monkeypatch.delenv(key)
    # unit tests pin the fallbacks; tests of the trained defaults use `model_defaults`
    monkeypatch.setenv("RAGCTL_RELEVANCE", "similarity")
    monkeypatch.setenv("RAGCTL_CONTEXT_FILTER", "similarity")
    return home


@pytest.fixture
def model_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let config.toml and the built-in defaults choose the filter and relevance models."""
    monkeypatch.delenv("RAGCTL_RELEVANCE", raising=False)
    monkeypatch.delenv("RAGCTL_CONTEXT_FILTER", raising=False)


@pytest.fixture
def fake_embedder(monkeypatch: pytest.MonkeyPatch) -> str:
    """Make the fake embedder the default for this test."""
    monkeypatch.setenv("RAGCTL_EMBEDDER", "fake-hash")
    return "fake-hash"
