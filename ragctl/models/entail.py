"""The entailment model at run time: an exported pair classifier (``ragctl train nli``,
backend ``ct2-pair``): CTranslate2 encodes premise and hypothesis together, and the head
of ``head.npz`` maps the mean of the token states to entailment, neutral and
contradiction."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ragctl.models.backends import Entailment


class CT2Entailment(Entailment):
    def __init__(self, path: Path, *, device: str = "auto", compute_type: str = "auto",
                 threads: int = 0) -> None:
        from ragctl.models.ct2 import (
            load_pair_encoder,
            load_tokenizer,
            read_manifest,
            resolve_compute_type,
            resolve_device,
        )

        self.path = Path(path)
        self.manifest = read_manifest(self.path, ["ct2-pair"])
        self.name = str(self.manifest.get("name", self.path.name))
        self.device = resolve_device(device)
        self.compute_type = resolve_compute_type(
            self.device, compute_type, str(self.manifest.get("quantization", "int8")))
        self.max_length = int(self.manifest.get("max_length", 128))
        self.tokenizer = load_tokenizer(self.path, self.max_length)
        self.tokenizer.enable_truncation(self.max_length, strategy="longest_first")
        head = np.load(self.path / "head.npz")
        self.weight = head["weight"].astype(np.float32)
        self.bias = head["bias"].astype(np.float32)
        self.model: Any = load_pair_encoder(self, device, compute_type, threads)

    def close(self) -> None:
        self.model = None

    def _probs(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        encs = self.tokenizer.encode_batch(pairs)
        res = self.model.forward_batch([e.tokens for e in encs],
                                       token_type_ids=[e.type_ids for e in encs])
        states = np.asarray(res.last_hidden_state, dtype=np.float32)
        lengths = np.array([len(e.tokens) for e in encs])
        mask = (np.arange(states.shape[1])[None, :] < lengths[:, None]).astype(np.float32)
        pooled = (states * mask[..., None]).sum(1) / lengths[:, None]
        z = pooled @ self.weight.T + self.bias
        z = np.exp(z - z.max(1, keepdims=True))
        return (z / z.sum(1, keepdims=True)).astype(np.float32)
