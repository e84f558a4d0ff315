"""CTranslate2 model directories exported by ragctl, and the scorers built on them.

An exported directory holds the converted CTranslate2 model, the tokenizer files
(``tokenizer.json``) and ``manifest.json``::

    {"kind": "relevance" | "filter",
     "backend": "ct2-bi-encoder" | "ct2-seq2seq" | "ct2-decoder",
     "max_length": 256, ...}

The manifest's ``backend`` chooses the class that computes the score
z = log P(true) − log P(false) of a (question, text) pair (:data:`BACKENDS`):

- ``ct2-bi-encoder``: the encoder embeds each text alone (mean pooling, unit length) and
  ``head.npz`` holds ``weight`` (1 × 2) and ``bias`` (1) over two features: the cosine of
  the two embeddings and the share of the question's content words in the text;
- ``ct2-seq2seq`` / ``ct2-decoder``: a T5-style or causal model scores the target words
  "true" and "false" after the manifest's ``prompt``.

An optional ``calibration`` [a, b] in the manifest maps z to σ(a·z + b), fitted on the
validation slice when the model was trained.

Near-ties: int8 arithmetic moves z by a few hundredths, enough to swap two candidates that
float32 barely separates. When the stages rank one question's candidates
(``predict(..., refine=True)``), those whose int8 z lies within ``refine_margin`` of the
best are scored again in float32 from the same int8 weights (a second, lazily loaded copy
of the model), so the top choice matches a float32 model's while the rest stays int8. The
margin comes from the manifest (``refine_margin``, 0 turns it off) or REFINE_MARGIN.

On a GPU, CTranslate2 opens its CUDA libraries (cuBLAS) only when a model first computes,
so every model loaded on CUDA computes once at once (:func:`load_checked`): where the
libraries it was built for are missing (libcublas.so.12 beside CUDA 13 alone), ``device =
auto`` warns once and runs every model on the CPU, and ``device = cuda`` is a one-line
error instead of a traceback in the middle of an answer.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ragctl.errors import ModelNotFoundError, RagctlError, missing_dependency
from ragctl.text import first_words, overlap

MANIFEST = "manifest.json"
REFINE_MARGIN = 0.2  # z units; chosen on SQuAD dev questions
# (python bench/train.py --only --configs "RE kl" filter --agreement-split dev)
INT8_TYPES = ("int8", "int8_float32", "int8_float16", "int8_bfloat16")


def load_ctranslate2() -> Any:
    """The ctranslate2 module, or an error that says how to install it."""
    try:
        import ctranslate2
    except ImportError:
        raise missing_dependency("ctranslate2", "generate") from None
    return ctranslate2


logger = logging.getLogger("ragctl.models")
_CUDA_FAILED: list[str] = []  # why CTranslate2 could not compute on the GPU in this process


def resolve_device(device: str = "auto") -> str:
    if device != "auto":
        return device
    if _CUDA_FAILED:
        return "cpu"
    ct2 = load_ctranslate2()
    try:
        return "cuda" if ct2.get_cuda_device_count() > 0 else "cpu"
    except Exception:  # a broken CUDA install must not stop a CPU run
        return "cpu"


def resolve_compute_type(device: str, compute_type: str = "auto",
                         exported: str = "int8") -> str:
    """The type the model was exported in (``exported``), made to suit the device: on CPU
    float16 weights compute in float32 (int8_float16 in int8); on CUDA int8 runs as
    int8_float16. Falls back to CTranslate2's default when the device cannot do it."""
    if compute_type != "auto":
        return compute_type
    if device == "cuda":
        wanted = "int8_float16" if exported in ("int8", "int8_float32") else exported
    else:
        wanted = {"float16": "float32", "int8_float16": "int8"}.get(exported, exported)
    try:
        supported = load_ctranslate2().get_supported_compute_types(device)
    except Exception:
        return "default"
    return wanted if wanted in supported else "default"


def load_checked(model: Any, asked: str, compute_asked: str, exported: str,
                 load: Callable[[], Any], probe: Callable[[Any], Any]) -> Any:
    """``load()`` on ``model.device``; on CUDA, ``probe`` the loaded model once (see the
    module doc). When it fails: with ``asked`` = "auto", a warning (once) and the model on
    the CPU (``model.device`` and ``model.compute_type`` updated); else a RagctlError."""
    loaded = load()
    if model.device != "cuda":
        return loaded
    try:
        probe(loaded)
        return loaded
    except RuntimeError as e:
        reason = (str(e).strip().splitlines() or [type(e).__name__])[0]
    if asked != "auto":
        raise RagctlError(f"CTranslate2 cannot compute on the GPU here ({reason}); set "
                          "device = cpu (or auto)")
    if not _CUDA_FAILED:
        logger.warning("CTranslate2 cannot compute on the GPU here (%s); the models run on "
                       "the CPU", reason)
        _CUDA_FAILED.append(reason)
    model.device = "cpu"
    model.compute_type = resolve_compute_type("cpu", compute_asked, exported)
    return load()


def load_pair_encoder(model: Any, asked: str, compute_asked: str, threads: int) -> Any:
    """The CTranslate2 encoder of a model that reads (question, text) pairs together (the
    reader, the entailment model): ``model`` gives its path, manifest, tokenizer, device
    and compute type; checked on CUDA by :func:`load_checked`."""

    def load() -> Any:
        try:
            return load_ctranslate2().Encoder(
                str(model.path), device=model.device, compute_type=model.compute_type,
                intra_threads=threads)
        except (RuntimeError, ValueError, OSError) as e:
            raise RagctlError(f"cannot load the CTranslate2 model in {model.path}: "
                              f"{e}") from None

    def probe(encoder: Any) -> None:
        enc = model.tokenizer.encode("a", "b")
        encoder.forward_batch([enc.tokens], token_type_ids=[enc.type_ids])

    return load_checked(model, asked, compute_asked,
                        str(model.manifest.get("quantization", "int8")), load, probe)


def read_manifest(path: Path, backends: Sequence[str] | None = None) -> dict[str, Any]:
    """The manifest of an exported model directory, checked for a backend of
    ``backends`` (default: the pair scorers')."""
    from ragctl.models.manifest import read_manifest as read

    path = Path(path)
    backends = list(backends or BACKENDS)
    if not (path / MANIFEST).exists():
        raise ModelNotFoundError(f"{path} is not a ragctl model directory (no {MANIFEST})")
    manifest = read(path)
    if manifest.get("backend") not in backends:
        raise ModelNotFoundError(
            f"{path / MANIFEST}: backend must be one of {', '.join(backends)}, "
            f"not {manifest.get('backend')!r}")
    return manifest


def load_tokenizer(path: Path, max_length: int) -> Any:
    """The model's ``tokenizer.json``, truncating at ``max_length`` tokens."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise missing_dependency("tokenizers", "generate") from None
    file = path / "tokenizer.json"
    if not file.exists():
        raise ModelNotFoundError(f"{path} has no tokenizer.json")
    tok = Tokenizer.from_file(str(file))
    tok.no_padding()
    tok.enable_truncation(max_length)
    return tok


def mean_pool(states: np.ndarray, lengths: Sequence[int]) -> np.ndarray:
    """Mean of each row's first ``lengths[i]`` token states (the rest is padding)."""
    n = np.asarray(lengths)
    mask = (np.arange(states.shape[1])[None, :] < n[:, None]).astype(np.float32)
    return np.asarray((states * mask[:, :, None]).sum(1) / np.maximum(n, 1)[:, None],
                      dtype=np.float32)


def encode(model: Any, tokenizer: Any, texts: Sequence[str], batch_size: int = 32
           ) -> np.ndarray:
    """Unit-length mean-pooled embeddings from a CTranslate2 encoder, in batches of
    texts of similar length (less padding); rows in the order of ``texts``."""
    encs = tokenizer.encode_batch(list(texts))
    order = sorted(range(len(encs)), key=lambda i: len(encs[i].tokens))
    out: np.ndarray | None = None
    for i in range(0, len(order), batch_size):
        idx = order[i:i + batch_size]
        tokens = [encs[j].tokens for j in idx]
        res = model.forward_batch(tokens, token_type_ids=[[0] * len(t) for t in tokens])
        feats = mean_pool(np.asarray(res.last_hidden_state, dtype=np.float32),
                          [len(t) for t in tokens])
        if out is None:
            out = np.zeros((len(encs), feats.shape[1]), dtype=np.float32)
        out[idx] = feats
    if out is None:
        return np.zeros((0, 0), dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return np.asarray(out / np.maximum(norms, 1e-12), dtype=np.float32)


# ------------------------------------------------------------------------------ backends

class Backend:
    """How one exported architecture loads and scores pairs at run time."""

    name: ClassVar[str]

    def __init__(self, scorer: CT2Scorer) -> None:
        self.scorer = scorer

    def load(self, ct2: Any, path: Path, **kwargs: Any) -> Any:
        raise NotImplementedError

    def z(self, model: Any, pairs: Sequence[tuple[str, str]], batch_size: int) -> np.ndarray:
        raise NotImplementedError


class BiEncoderBackend(Backend):
    name = "ct2-bi-encoder"

    def load(self, ct2: Any, path: Path, **kwargs: Any) -> Any:
        head = np.load(path / "head.npz")
        self.weight = head["weight"].astype(np.float32)
        self.bias = head["bias"].astype(np.float32)
        return ct2.Encoder(str(path), **kwargs)

    CACHE_SIZE = 20_000  # texts: a service sees the same passages again and again

    def embed(self, model: Any, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Unit-length embeddings; texts embedded before by this model come from a cache."""
        cache: dict[tuple[str, str], np.ndarray] = self.__dict__.setdefault("_cache", {})
        kind = self.scorer.compute_type
        todo = list(dict.fromkeys(t for t in texts if (kind, t) not in cache))
        if todo:
            found: dict[str, np.ndarray] = {}
            disk = self.scorer.vector_cache
            if disk is not None:  # keyed by compute type too: int8 and float32 differ
                stored = disk.get([f"{kind}\x00{t}" for t in todo])
                found = {k.split("\x00", 1)[1]: v for k, v in stored.items()}
            missing = [t for t in todo if t not in found]
            if missing:
                new = self._embed(model, missing, batch_size)
                found.update(zip(missing, new, strict=True))
                if disk is not None:
                    disk.put([f"{kind}\x00{t}" for t in missing], new)
            if len(cache) + len(todo) > self.CACHE_SIZE:
                cache.clear()
            for t in todo:
                cache[(kind, t)] = found[t]
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([cache[(kind, t)] for t in texts])

    def _embed(self, model: Any, texts: Sequence[str], batch_size: int) -> np.ndarray:
        return encode(model, self.scorer.tokenizer, texts, batch_size)

    def z(self, model: Any, pairs: Sequence[tuple[str, str]], batch_size: int) -> np.ndarray:
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        texts = list(dict.fromkeys(t for pair in pairs for t in pair))
        index = {t: i for i, t in enumerate(texts)}
        vecs = self.embed(model, texts, batch_size)
        a = vecs[[index[q] for q, _ in pairs]]
        b = vecs[[index[t] for _, t in pairs]]
        feats = np.stack([(a * b).sum(1), [overlap(q, t) for q, t in pairs]], axis=1)
        return np.asarray(feats @ self.weight[0] + self.bias[0], dtype=np.float32)


class _TrueFalseBackend(Backend):
    """Generative scorers: log P("true") − log P("false") after a prompt."""

    def prompt(self, a: str, b: str) -> str:
        m = self.scorer.manifest
        template = m.get("prompt", "Question: {a} Context: {b} Relevant:")
        return str(template.format(a=a, b=first_words(b, int(m.get("max_words", 0)))))

    def word_tokens(self, word: str) -> list[str]:
        return list(self.scorer.tokenizer.encode(word, add_special_tokens=False).tokens)

    def words(self) -> tuple[str, str]:
        m = self.scorer.manifest
        return str(m.get("true", "true")), str(m.get("false", "false"))

    def z(self, model: Any, pairs: Sequence[tuple[str, str]], batch_size: int) -> np.ndarray:
        out = np.zeros(len(pairs), dtype=np.float32)
        for i in range(0, len(pairs), batch_size):
            part = list(pairs[i:i + batch_size])
            out[i:i + len(part)] = self.batch(model, part)
        return out

    def batch(self, model: Any, pairs: list[tuple[str, str]]) -> np.ndarray:
        raise NotImplementedError


class Seq2SeqBackend(_TrueFalseBackend):
    name = "ct2-seq2seq"

    def load(self, ct2: Any, path: Path, **kwargs: Any) -> Any:
        return ct2.Translator(str(path), **kwargs)

    def batch(self, model: Any, pairs: list[tuple[str, str]]) -> np.ndarray:
        tok = self.scorer.tokenizer
        sources = [tok.encode(self.prompt(a, b)).tokens for a, b in pairs]
        yes, no = self.words()
        res_t = model.score_batch(sources, [self.word_tokens(yes)] * len(sources))
        res_f = model.score_batch(sources, [self.word_tokens(no)] * len(sources))
        lt = np.array([r.log_probs[0] for r in res_t], dtype=np.float64)
        lf = np.array([r.log_probs[0] for r in res_f], dtype=np.float64)
        return np.asarray(lt - lf, dtype=np.float32)


class DecoderBackend(_TrueFalseBackend):
    name = "ct2-decoder"

    def load(self, ct2: Any, path: Path, **kwargs: Any) -> Any:
        return ct2.Generator(str(path), **kwargs)

    def batch(self, model: Any, pairs: list[tuple[str, str]]) -> np.ndarray:
        tok = self.scorer.tokenizer
        prompts = [tok.encode(self.prompt(a, b)).tokens for a, b in pairs]
        yes, no = self.words()
        t_true = self.word_tokens(" " + yes)[:1]
        t_false = self.word_tokens(" " + no)[:1]
        res_t = model.score_batch([p + t_true for p in prompts])
        res_f = model.score_batch([p + t_false for p in prompts])
        lt = np.array([r.log_probs[-1] for r in res_t], dtype=np.float64)
        lf = np.array([r.log_probs[-1] for r in res_f], dtype=np.float64)
        return np.asarray(lt - lf, dtype=np.float32)


BACKENDS: dict[str, type[Backend]] = {
    b.name: b for b in (BiEncoderBackend, Seq2SeqBackend, DecoderBackend)}


# ------------------------------------------------------------------------------ the scorer

def _vector_cache(path: Path, manifest: dict[str, Any]) -> Any:
    """The on-disk cache of this exact model's embeddings (see ``store.VectorCache``)."""
    import hashlib

    from ragctl.config import cache_dir
    from ragctl.store.sqlite import VectorCache

    weights = path / "model.bin"
    try:
        st = weights.stat()
    except OSError:
        return None
    stamp = f"{path.resolve()}:{st.st_size}:{st.st_mtime_ns}"
    digest = hashlib.sha256(stamp.encode()).hexdigest()[:12]
    name = str(manifest.get("name", path.name)).replace("/", "_")
    return VectorCache(cache_dir() / "vectors" / f"{name}-{digest}.db")


class CT2Scorer:
    """P(true | a, b) for text pairs, from an exported model of any backend."""

    def __init__(self, path: Path, *, device: str = "auto", compute_type: str = "auto",
                 threads: int = 0, refine_margin: float | None = None) -> None:
        self.path = Path(path)
        self.manifest = read_manifest(self.path)
        self.backend = BACKENDS[self.manifest["backend"]](self)
        self.device = resolve_device(device)
        self.compute_type = resolve_compute_type(
            self.device, compute_type, str(self.manifest.get("quantization", "int8")))
        self.max_length = int(self.manifest.get("max_length", 256))
        self.tokenizer = load_tokenizer(self.path, self.max_length)
        self.threads = threads
        self.model = load_checked(
            self, device, compute_type, str(self.manifest.get("quantization", "int8")),
            lambda: self._load(self.compute_type), self._probe)
        self.vector_cache = _vector_cache(self.path, self.manifest) \
            if isinstance(self.backend, BiEncoderBackend) else None
        if refine_margin is None:
            refine_margin = float(self.manifest.get("refine_margin", REFINE_MARGIN))
        self.refine_margin = refine_margin if self.compute_type in INT8_TYPES else 0.0
        self._refiner: CT2Scorer | None = None
        a, b = self.manifest.get("calibration", [1.0, 0.0])
        self.calibration = (float(a), float(b))

    def _probe(self, model: Any) -> None:
        """Compute once (CUDA opens its libraries then), caching nothing."""
        if isinstance(self.backend, BiEncoderBackend):
            self.backend._embed(model, ["a"], 1)
        else:
            self.backend.z(model, [("a", "b")], 1)

    def _load(self, compute_type: str) -> Any:
        try:
            return self.backend.load(load_ctranslate2(), self.path, device=self.device,
                                     compute_type=compute_type, intra_threads=self.threads)
        except (RuntimeError, ValueError, OSError, KeyError) as e:
            raise RagctlError(f"cannot load the CTranslate2 model in {self.path}: {e}") from None

    def close(self) -> None:
        self.model = None
        if self._refiner is not None:
            self._refiner.close()
            self._refiner = None

    def predict(self, pairs: Sequence[tuple[str, str]], *, batch_size: int = 32,
                refine: bool = False) -> np.ndarray:
        """Calibrated P(true) per pair. ``refine``: the pairs are one question's candidates;
        re-score the near-ties at the top in float32 (see the module doc)."""
        z = self.z(pairs, batch_size=batch_size)
        if refine:
            z = self.refine(pairs, z)
        return self.probability(z)

    def refine(self, pairs: Sequence[tuple[str, str]], z: np.ndarray) -> np.ndarray:
        """``z`` with the candidates within ``refine_margin`` of the best scored again in
        float32, when there are two or more of them and the model computes in int8."""
        if self.refine_margin <= 0 or len(z) < 2:
            return z
        close = np.flatnonzero(z >= z.max() - self.refine_margin)
        if len(close) < 2:
            return z
        out = z.copy()
        out[close] = self.refiner().z([pairs[int(i)] for i in close])
        return out

    def refiner(self) -> CT2Scorer:
        """This scorer again, its weights computed in float32 (loaded on first use)."""
        if self._refiner is None:
            refiner = copy.copy(self)
            refiner.backend = copy.copy(self.backend)
            refiner.backend.scorer = refiner
            refiner.backend.__dict__.pop("_cache", None)  # its own vectors, not int8's
            refiner.model, refiner.compute_type = refiner._load("float32"), "float32"
            refiner.refine_margin = 0.0
            self._refiner = refiner
        return self._refiner

    def probability(self, z: np.ndarray) -> np.ndarray:
        """σ(a·z + b) with the model's calibration (a, b)."""
        a, b = self.calibration
        return np.asarray(1.0 / (1.0 + np.exp(-(a * z.astype(np.float64) + b))),
                          dtype=np.float32)

    def z(self, pairs: Sequence[tuple[str, str]], *, batch_size: int = 32) -> np.ndarray:
        """Uncalibrated log P(true) − log P(false) per pair."""
        return self.backend.z(self.model, pairs, batch_size)

    def warm(self, texts: Sequence[str]) -> None:
        """Bi-encoder models: embed ``texts`` into the caches now, so that scoring them
        later costs only the question's embedding — the float32 refiner's too, since
        near-ties are scored again by it. Other models: nothing."""
        if isinstance(self.backend, BiEncoderBackend) and texts:
            self.backend.embed(self.model, texts)
            if self.refine_margin > 0:
                self.refiner().warm(texts)

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> np.ndarray:
        """Bi-encoder models: the unit-length embedding of each text."""
        if not isinstance(self.backend, BiEncoderBackend):
            raise RagctlError(f"{self.path} is not a bi-encoder model")
        return self.backend.embed(self.model, texts, batch_size)
