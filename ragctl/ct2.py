"""CTranslate2 model directories exported by ragctl, and the scorers built on them.

An exported directory holds the converted CTranslate2 model, the tokenizer files
(``tokenizer.json``) and ``manifest.json``::

    {"kind": "relevance" | "filter",
     "backend": "ct2-encoder" | "ct2-seq2seq" | "ct2-decoder",
     "max_length": 256, ...}

For ``ct2-encoder`` (a cross-encoder) ``head.npz`` holds the classification head:
``weight`` (2 × hidden), ``bias`` (2) and ``pooling`` ("mean", "pooler" or "cls"); logit 1
is "true". Seq2seq and decoder models score the target words "true" and "false".
An optional ``calibration`` [a, b] in the manifest maps z = log P(true) − log P(false) to
σ(a·z + b), fitted on the validation slice when the model was trained.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .errors import ModelNotFoundError, RagctlError, missing_dependency
from .text import first_words

MANIFEST = "manifest.json"
BACKENDS = ("ct2-encoder", "ct2-seq2seq", "ct2-decoder")


def _ctranslate2() -> Any:
    try:
        import ctranslate2
    except ImportError:
        raise missing_dependency("ctranslate2", "generate") from None
    return ctranslate2


def resolve_device(device: str = "auto") -> str:
    if device != "auto":
        return device
    ct2 = _ctranslate2()
    try:
        return "cuda" if ct2.get_cuda_device_count() > 0 else "cpu"
    except Exception:  # a broken CUDA install must not stop a CPU run
        return "cpu"


def resolve_compute_type(device: str, compute_type: str = "auto") -> str:
    """int8 on CPU, int8_float16 on CUDA, unless the device cannot do it."""
    if compute_type != "auto":
        return compute_type
    wanted = "int8_float16" if device == "cuda" else "int8"
    try:
        supported = _ctranslate2().get_supported_compute_types(device)
    except Exception:
        return "default"
    return wanted if wanted in supported else "default"


def read_manifest(path: Path) -> dict[str, Any]:
    path = Path(path)
    mf = path / MANIFEST
    if not mf.exists():
        raise ModelNotFoundError(f"{path} is not a ragctl model directory (no {MANIFEST})")
    try:
        manifest: dict[str, Any] = json.loads(mf.read_text())
    except (OSError, ValueError) as e:
        raise ModelNotFoundError(f"cannot read {mf}: {e}") from None
    if manifest.get("backend") not in BACKENDS:
        raise ModelNotFoundError(
            f"{mf}: backend must be one of {', '.join(BACKENDS)}, not {manifest.get('backend')!r}")
    return manifest


def _tokenizer(path: Path, max_length: int) -> Any:
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


class CT2Scorer:
    """P(true | a, b) for text pairs, from any of the three exported backends."""

    def __init__(self, path: Path, *, device: str = "auto", compute_type: str = "auto",
                 threads: int = 0) -> None:
        self.path = Path(path)
        self.manifest = read_manifest(self.path)
        self.backend: str = self.manifest["backend"]
        self.device = resolve_device(device)
        self.compute_type = resolve_compute_type(self.device, compute_type)
        self.max_length = int(self.manifest.get("max_length", 256))
        self.tokenizer = _tokenizer(self.path, self.max_length)
        ct2 = _ctranslate2()
        kwargs = {"device": self.device, "compute_type": self.compute_type,
                  "intra_threads": threads}
        try:
            if self.backend == "ct2-encoder":
                self.model = ct2.Encoder(str(self.path), **kwargs)
                head = np.load(self.path / "head.npz")
                self.weight = head["weight"].astype(np.float32)
                self.bias = head["bias"].astype(np.float32)
                self.pooling = str(head["pooling"]) if "pooling" in head else "pooler"
            elif self.backend == "ct2-seq2seq":
                self.model = ct2.Translator(str(self.path), **kwargs)
            else:
                self.model = ct2.Generator(str(self.path), **kwargs)
        except (RuntimeError, ValueError, OSError, KeyError) as e:
            raise RagctlError(f"cannot load the CTranslate2 model in {self.path}: {e}") from None
        self.true_word = self.manifest.get("true", "true")
        self.false_word = self.manifest.get("false", "false")
        self.max_words = int(self.manifest.get("max_words", 0))
        a, b = self.manifest.get("calibration", [1.0, 0.0])
        self.calibration = (float(a), float(b))

    def close(self) -> None:
        self.model = None

    def predict(self, pairs: Sequence[tuple[str, str]], *, batch_size: int = 32) -> np.ndarray:
        """Calibrated P(true) per pair."""
        a, b = self.calibration
        z = self.z(pairs, batch_size=batch_size).astype(np.float64)
        return np.asarray(1.0 / (1.0 + np.exp(-(a * z + b))), dtype=np.float32)

    def z(self, pairs: Sequence[tuple[str, str]], *, batch_size: int = 32) -> np.ndarray:
        """Uncalibrated log P(true) − log P(false) per pair."""
        out = np.zeros(len(pairs), dtype=np.float32)
        for i in range(0, len(pairs), batch_size):
            part = list(pairs[i:i + batch_size])
            if self.backend == "ct2-encoder":
                logits = self.logits(part)
                out[i:i + len(part)] = logits[:, 1] - logits[:, 0]
            elif self.backend == "ct2-seq2seq":
                out[i:i + len(part)] = self._seq2seq(part)
            else:
                out[i:i + len(part)] = self._decoder(part)
        return out

    def logits(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Encoder backend only: the head's two logits (false, true) per pair."""
        encs = self.tokenizer.encode_batch(list(pairs))
        tokens = [e.tokens for e in encs]
        types = [e.type_ids for e in encs]
        out = self.model.forward_batch(tokens, token_type_ids=types)
        if self.pooling == "cls":
            feats = np.asarray(out.last_hidden_state)[:, 0, :]
        elif self.pooling == "mean":
            states = np.asarray(out.last_hidden_state, dtype=np.float32)
            lengths = np.array([len(t) for t in tokens])
            mask = (np.arange(states.shape[1])[None, :] < lengths[:, None]).astype(np.float32)
            feats = (states * mask[:, :, None]).sum(1) / np.maximum(lengths, 1)[:, None]
        else:
            feats = np.asarray(out.pooler_output)
        return np.asarray(feats @ self.weight.T + self.bias, dtype=np.float32)

    def _prompt(self, a: str, b: str) -> str:
        template = self.manifest.get("prompt", "Question: {a} Context: {b} Relevant:")
        return str(template.format(a=a, b=first_words(b, self.max_words)))

    def _word_tokens(self, word: str) -> list[str]:
        enc = self.tokenizer.encode(word, add_special_tokens=False)
        return list(enc.tokens)

    def _seq2seq(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        sources = [self.tokenizer.encode(self._prompt(a, b)).tokens for a, b in pairs]
        t_true, t_false = self._word_tokens(self.true_word), self._word_tokens(self.false_word)
        res_t = self.model.score_batch(sources, [t_true] * len(sources))
        res_f = self.model.score_batch(sources, [t_false] * len(sources))
        lt = np.array([r.log_probs[0] for r in res_t], dtype=np.float64)
        lf = np.array([r.log_probs[0] for r in res_f], dtype=np.float64)
        return np.asarray(lt - lf, dtype=np.float32)

    def _decoder(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        prompts = [self.tokenizer.encode(self._prompt(a, b)).tokens for a, b in pairs]
        t_true = self._word_tokens(" " + self.true_word)[:1]
        t_false = self._word_tokens(" " + self.false_word)[:1]
        res_t = self.model.score_batch([p + t_true for p in prompts])
        res_f = self.model.score_batch([p + t_false for p in prompts])
        lt = np.array([r.log_probs[-1] for r in res_t], dtype=np.float64)
        lf = np.array([r.log_probs[-1] for r in res_f], dtype=np.float64)
        return np.asarray(lt - lf, dtype=np.float32)
