from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragctl import models
from tests.fakes import FakeGenerator, HashEmbedder

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# made-again files (the embedder's CTranslate2 copy, vector caches) in one folder per test
# session, never in the user's ~/.cache
_MADE_CACHE: str | None = None
if "RAGCTL_CACHE" not in os.environ:
    import tempfile

    _MADE_CACHE = os.environ["RAGCTL_CACHE"] = tempfile.mkdtemp(prefix="ragctl-test-cache-")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The session's cache folder goes with it (about 90 MB a run)."""
    if _MADE_CACHE is not None:
        import shutil

        shutil.rmtree(_MADE_CACHE, ignore_errors=True)

SHARED = Path(__file__).resolve().parents[1].parent / "shared"

FAKES: dict[str, HashEmbedder] = {}


def _fake(name: str, dim: int) -> HashEmbedder:
    FAKES[name] = HashEmbedder(name, dim)
    return FAKES[name]


models.register("embedder", "fake-hash", lambda settings, **_: _fake("fake-hash", 64),
                about="test fake: hashed bag of words, 64 dimensions")
models.register("embedder", "fake-hash-32", lambda settings, **_: _fake("fake-hash-32", 32),
                about="test fake: hashed bag of words, 32 dimensions")
models.register("generator", "fake-gen", lambda settings, **_: FakeGenerator(),
                about="test fake: answers '3 pm [1]'")


@pytest.fixture(autouse=True)
def ragctl_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("RAGCTL_HOME", str(home))
    for key in list(os.environ):
        if key.startswith("RAGCTL_") and key not in ("RAGCTL_HOME", "RAGCTL_CACHE"):
            monkeypatch.delenv(key)
    # unit tests pin the fallbacks; tests of the trained defaults use `model_defaults`
    monkeypatch.setenv("RAGCTL_RELEVANCE", "similarity")
    monkeypatch.setenv("RAGCTL_CONTEXT_FILTER", "similarity")
    monkeypatch.setenv("RAGCTL_READER", "none")
    monkeypatch.setenv("RAGCTL_NLI", "none")
    monkeypatch.setenv("RAGCTL_KINDS", "none")
    return home


@pytest.fixture
def model_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let config.toml and the built-in defaults choose the filter and relevance models."""
    monkeypatch.delenv("RAGCTL_RELEVANCE", raising=False)
    monkeypatch.delenv("RAGCTL_CONTEXT_FILTER", raising=False)
    monkeypatch.delenv("RAGCTL_READER", raising=False)
    monkeypatch.delenv("RAGCTL_NLI", raising=False)
    monkeypatch.delenv("RAGCTL_KINDS", raising=False)


@pytest.fixture
def fake_embedder(monkeypatch: pytest.MonkeyPatch) -> str:
    """Make the fake embedder the default for this test."""
    monkeypatch.setenv("RAGCTL_EMBEDDER", "fake-hash")
    return "fake-hash"
