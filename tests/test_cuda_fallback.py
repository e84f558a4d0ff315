"""A GPU whose CUDA libraries CTranslate2 cannot open: the models run on the CPU instead.

Seen on a machine with an NVIDIA GPU and CUDA 13 alone (bench/cuda.py): CTranslate2 4.8
counts the GPU, loads a model on it, and fails at the first computation with "Library
libcublas.so.12 is not found or cannot be loaded". Here CTranslate2 is the real one, but
its CUDA side is made to fail the same way.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from ragctl.errors import RagctlError

MISSING = "Library libcublas.so.12 is not found or cannot be loaded"


class _BrokenCuda:
    """A model loaded on the GPU whose first computation fails, as CTranslate2's does."""

    def forward_batch(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(MISSING)


@pytest.fixture
def broken_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    ct2 = pytest.importorskip("ctranslate2")
    from ragctl.models import ct2 as module

    class FakeCT2:
        def __getattr__(self, name: str) -> Any:
            return getattr(ct2, name)

        def get_cuda_device_count(self) -> int:
            return 1

        def get_supported_compute_types(self, device: str) -> set[str]:
            if device == "cuda":
                return {"float32", "float16", "int8", "int8_float16"}
            return set(ct2.get_supported_compute_types(device))

        def Encoder(self, path: str, *, device: str = "cpu", **kwargs: Any) -> Any:
            return _BrokenCuda() if device == "cuda" else ct2.Encoder(path, device=device,
                                                                      **kwargs)

    monkeypatch.setattr(module, "load_ctranslate2", lambda: FakeCT2())
    monkeypatch.setattr(module, "_CUDA_FAILED", [])


def test_device_auto_warns_once_and_runs_on_the_cpu(
        broken_gpu: None, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from ragctl.models.ct2 import CT2Scorer
    from tests.tiny_models import build_bi_encoder

    path = build_bi_encoder(tmp_path / "re")
    with caplog.at_level(logging.WARNING, logger="ragctl.models"):
        first = CT2Scorer(path, device="auto")
        second = CT2Scorer(path, device="auto")
    assert (first.device, second.device) == ("cpu", "cpu")
    assert first.compute_type != "int8_float16"  # the CPU's type, not the GPU's
    assert first.z([("where is the cat", "the cat sat on the mat")]).shape == (1,)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "libcublas.so.12" in warnings[0]


def test_device_cuda_is_a_one_line_error(broken_gpu: None, tmp_path: Path) -> None:
    from ragctl.models.ct2 import CT2Scorer
    from tests.tiny_models import build_bi_encoder

    with pytest.raises(RagctlError, match=r"cannot compute on the GPU here .*libcublas"):
        CT2Scorer(build_bi_encoder(tmp_path / "re"), device="cuda")


def test_the_shipped_reader_and_entailment_model_fall_back_too(broken_gpu: None) -> None:
    from ragctl.models.entail import CT2Entailment
    from ragctl.models.manifest import bundled_models_dir
    from ragctl.models.reader import CT2Reader

    shipped = bundled_models_dir()
    if not (shipped / "minilm-reader" / "model.bin").exists():
        pytest.skip("the shipped models are not in this checkout")
    reader = CT2Reader(shipped / "minilm-reader", device="auto")
    assert reader.device == "cpu"
    assert reader.read("Where did the cat sit?", ["The cat sat on the mat."])[0]
    nli = CT2Entailment(shipped / "minilm-nli", device="auto")
    assert nli.device == "cpu"
    with pytest.raises(RagctlError, match="cannot compute on the GPU"):
        CT2Reader(shipped / "minilm-reader", device="cuda")
