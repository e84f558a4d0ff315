"""GPTQ int8 rounding (ragctl.quantize) and how export uses it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from ragctl.errors import RagctlError
from ragctl.training.export import export_model
from ragctl.training.quantize import gptq_int8, gptq_rows, pin_row_max, round_to_grid

from .test_train import _hf_bert, _train

torch = pytest.importorskip("torch")


def _correlated_inputs(n: int, dim: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    mix = rng.normal(size=(dim, dim)) * 0.3 + np.eye(dim)
    x = rng.normal(size=(n, dim)) @ mix
    x[:, 3] *= 8.0  # an outlier feature, as real activations have
    return x


def test_gptq_lowers_the_output_error_and_stays_on_the_converters_grid() -> None:
    rng = np.random.default_rng(1)
    w = torch.from_numpy(rng.normal(size=(48, 32)).astype(np.float32))
    x = torch.from_numpy(_correlated_inputs(2000, 32))
    h = x.T @ x / len(x)
    q = gptq_rows(w, h)
    pin_row_max(q, w.double())

    def out_err(m: torch.Tensor) -> float:
        d = m.double() - w.double()
        return float(torch.trace(d @ h @ d.T))

    nearest = torch.from_numpy(round_to_grid(w.double().numpy()))
    assert out_err(q) < 0.8 * out_err(nearest)
    # every weight is a whole number of its row's step, the step is unchanged, and the
    # converter's own rounding (per-row absmax / 127) gives the same values back
    step = w.double().abs().amax(dim=1) / 127
    steps = q / step[:, None]
    assert torch.allclose(steps, torch.round(steps), atol=1e-6)
    assert torch.allclose(q.abs().amax(dim=1), w.double().abs().amax(dim=1))
    again = round_to_grid(q.float().numpy())
    np.testing.assert_allclose(again, q.float().numpy(), rtol=0, atol=1e-6)


def test_gptq_int8_rounds_an_encoders_linear_layers(tmp_path: Path) -> None:
    from transformers import AutoModel, AutoTokenizer

    base = _hf_bert(tmp_path)
    model, tok = AutoModel.from_pretrained(str(base)), AutoTokenizer.from_pretrained(str(base))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    seen: list[tuple[int, int]] = []
    report = gptq_int8(model, tok, ["the cat sat on the mat ."] * 6 + ["a dog ."],
                       batch_size=4, on_progress=lambda d, n: seen.append((d, n)))
    linears = [n for n, m in model.named_modules()
               if isinstance(m, torch.nn.Linear) and n.startswith("encoder")]
    assert report.layers == len(linears) > 0 and report.texts == 7
    assert 0 < report.error_vs_nearest < 1.0
    assert seen[-1][0] == seen[-1][1]
    for name, p in model.named_parameters():
        changed = not torch.equal(p, before[name])
        assert changed == (name.startswith("encoder") and name.endswith(".weight")
                           and "LayerNorm" not in name), name
    with pytest.raises(RagctlError, match="calibration texts"):
        gptq_int8(model, tok, [])


def test_export_rounds_with_gptq_when_the_training_data_is_there(tmp_path: Path) -> None:
    run = _train(tmp_path, "re", _hf_bert(tmp_path), name="q", epochs=1,
                 architecture="bi-encoder")
    auto = export_model(run, tmp_path / "auto", quantization="int8")
    assert auto["rounding"]["method"] == "gptq" and auto["rounding"]["calibration_texts"] > 0
    assert not list(tmp_path.glob("*.gptq-tmp"))  # the rounded copy is cleaned up
    plain = export_model(run, tmp_path / "plain", quantization="int8", rounding="nearest")
    assert plain["rounding"] == {"method": "nearest"}
    assert (tmp_path / "auto" / "model.bin").read_bytes() != \
        (tmp_path / "plain" / "model.bin").read_bytes()
    f32 = export_model(run, tmp_path / "f32", quantization="float32")
    assert f32["rounding"] == {"method": "none"}  # only int8 is rounded
    with pytest.raises(RagctlError, match="int8"):
        export_model(run, tmp_path / "f32b", quantization="float32", rounding="gptq")
    # without the training data: auto falls back, an explicit gptq says what to do
    shutil.move(tmp_path / "silver.jsonl", tmp_path / "elsewhere.jsonl")
    assert export_model(run, tmp_path / "auto2")["rounding"] == {"method": "nearest"}
    with pytest.raises(RagctlError, match="--rounding nearest"):
        export_model(run, tmp_path / "gptq", rounding="gptq")
    manifest = json.loads((tmp_path / "auto" / "manifest.json").read_text())
    assert manifest["rounding"]["method"] == "gptq"
