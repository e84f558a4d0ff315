"""The real bases: MiniLM cross-encoder and the SmolLM2 GGUF as a causal LM, each trained
for a few steps, exported int8 and used by ``ask``'s stages."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ragctl.cli import cli
from ragctl.export import export_model
from ragctl.relevance import CT2Relevance
from ragctl.silver import SilverInput, SilverLabeler, write_silver
from ragctl.train import Trainer, TrainOptions

from .test_train import word_scorer

pytestmark = pytest.mark.real
pytest.importorskip("torch")
pytest.importorskip("ctranslate2")

FACTS = [("Where is the company's office?", "Lisbon", "The office is in Lisbon."),
         ("How much is the monthly rent?", "900 euros", "The rent is 900 euros a month."),
         ("When is the dentist appointment?", "Thursday",
          "The dentist appointment is on Thursday at nine."),
         ("Which train goes to Porto?", "the 8:05", "The 8:05 train goes to Porto.")]
NOISE = "The weather was mild all week. Nobody remembered the meeting."


def _silver(tmp: Path) -> Path:
    items = []
    for i in range(12):
        q, a, fact = FACTS[i % len(FACTS)]
        other = FACTS[(i + 1) % len(FACTS)][2]
        items.append(SilverInput(f"q{i}", q, (a,), (("notes", f"{NOISE} {other}"),
                                                    ("notes", f"{NOISE} {fact}"))))
    out = tmp / "silver.jsonl"
    write_silver(items, out, SilverLabeler(measures=["strinc", "lexical", "cxmi"],
                                           scorer=word_scorer()))
    return out


def test_minilm_filter_trains_exports_int8_and_ask_uses_it(
        tmp_path: Path, ragctl_home: Path, model_defaults: None) -> None:
    data = _silver(tmp_path)
    res = CliRunner().invoke(cli, ["train", "filter", "--data", str(data), "--name", "f",
                                   "--epochs", "1", "--layers", "1", "--max-length", "64"])
    assert res.exit_code == 0, res.output
    manifest = json.loads((ragctl_home / "models" / "f" / "manifest.json").read_text())
    assert manifest["quantization"] == "int8" and manifest["backend"] == "ct2-encoder"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "office.md").write_text("# Office\n\nThe office is in Lisbon. " + NOISE + "\n")
    assert CliRunner().invoke(cli, ["index", str(docs), "-q"]).exit_code == 0
    assert CliRunner().invoke(cli, ["models", "use", "filter", "f"]).exit_code == 0
    out = CliRunner().invoke(cli, ["ask", "Where is the company's office?", "--json",
                                   "--no-abstain", "--model", "smollm2-135m"])
    assert out.exit_code == 0, out.output
    answer = json.loads(out.output)
    assert answer["models"]["filter"] == "f"
    assert any(s["kept"] for s in answer["filtered"])


def test_smollm2_gguf_base_trains_as_a_decoder_and_exports(tmp_path: Path) -> None:
    data = _silver(tmp_path)
    opts = TrainOptions(kind="re", base="smollm2", epochs=1, batch_size=8, max_length=96,
                        limit=8, val_fraction=0.25)
    res = Trainer(opts, [data], tmp_path / "run").run()
    assert res.architecture == "decoder"
    manifest = export_model(tmp_path / "run", tmp_path / "smol-re", quantization="int8")
    assert manifest["backend"] == "ct2-decoder" and manifest["base"] == "smollm2"
    from ragctl.retrieve import Hit

    est = CT2Relevance(tmp_path / "smol-re")
    hits = [Hit(i, 1.0, 0.5, "p", "", "", 0, len(t), t)
            for i, t in enumerate([NOISE, "The office is in Lisbon."])]
    probs = est.score("Where is the company's office?", hits)
    assert probs.shape == (2,) and np.all((probs > 0) & (probs < 1))


def test_shipped_models_load_by_name_and_rank_an_obvious_case(model_defaults: None) -> None:
    from ragctl.config import load_settings
    from ragctl.filter import SentenceRef
    from ragctl.models import bundled_models_dir, list_models
    from ragctl.pipeline import load_filter, load_relevance
    from ragctl.retrieve import Hit

    if not (bundled_models_dir() / "minilm-re" / "manifest.json").exists():
        pytest.skip("the shipped models are not in this checkout")
    settings = load_settings()
    assert settings.relevance == "similarity"  # they are not the defaults (README)
    names = {(m.kind, m.name) for m in list_models(settings)}
    assert {("relevance", "minilm-re"), ("filter", "minilm-filter")} <= names
    question = "Where is the company's office?"
    texts = [NOISE, "The company's office is in Lisbon, near the river."]
    re_probs = load_relevance("minilm-re", settings).score(
        question, [Hit(i, 1.0, 0.5, "p", "", "", 0, 1, t) for i, t in enumerate(texts)])
    assert re_probs[1] > re_probs[0]

    class NoRetriever:
        embedder = None

    flt = load_filter("minilm-filter", settings, NoRetriever())  # type: ignore[arg-type]
    sents = ["The weather was mild all week.", "The company's office is in Lisbon.",
             "Nobody remembered the meeting."]
    scores = flt.score(question, [SentenceRef(i, 1, i, "p", "", "", 0, 1, t)
                                  for i, t in enumerate(sents)])
    assert int(np.argmax(scores)) == 1
