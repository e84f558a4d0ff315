"""The real bases: MiniLM (a bi-encoder by default) and the SmolLM2 GGUF as a causal LM,
each trained for a few steps, exported int8 and used by ``ask``'s stages."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ragctl import models
from ragctl.app.cli import cli
from ragctl.models.relevance import CT2Relevance
from ragctl.records import Hit, Sentence
from ragctl.training.export import export_model
from ragctl.training.silver import SilverInput, SilverLabeler, write_silver
from ragctl.training.trainer import Trainer, TrainOptions

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
                                   "--epochs", "1", "--max-length", "64"])
    assert res.exit_code == 0, res.output
    assert "before training" in res.output  # a bi-encoder from MiniLM by default
    manifest = json.loads((ragctl_home / "models" / "f" / "manifest.json").read_text())
    assert manifest["quantization"] == "int8" and manifest["backend"] == "ct2-bi-encoder"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "office.md").write_text("# Office\n\nThe office is in Lisbon. " + NOISE + "\n")
    assert CliRunner().invoke(cli, ["index", str(docs), "-q"]).exit_code == 0
    assert CliRunner().invoke(cli, ["models", "use", "filter", "f"]).exit_code == 0
    out = CliRunner().invoke(cli, ["ask", "Where is the company's office?", "--json",
                                   "--no-abstain", "--model", "smollm2-135m"])
    assert out.exit_code == 0, out.output
    answer = json.loads(out.stdout)
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
    est = CT2Relevance(tmp_path / "smol-re")
    hits = [Hit(passage_id=i, score=1.0, similarity=0.5, path="p", end_char=len(t), text=t)
            for i, t in enumerate([NOISE, "The office is in Lisbon."])]
    probs = est.score("Where is the company's office?", hits)
    assert probs.shape == (2,) and np.all((probs > 0) & (probs < 1))


def test_shipped_models_load_by_name_and_rank_an_obvious_case(model_defaults: None) -> None:
    from ragctl.config import load_settings

    if not (models.bundled_models_dir() / "minilm-re" / "manifest.json").exists():
        pytest.skip("the shipped models are not in this checkout")
    settings = load_settings()
    # they beat the fallbacks on the report splits (README), so they are the defaults
    assert (settings.relevance, settings.context_filter) == ("minilm-re", "minilm-filter")
    names = {(m.kind, m.name) for m in models.available(settings)}
    assert {("relevance", "minilm-re"), ("filter", "minilm-filter")} <= names
    question = "Where is the company's office?"
    texts = [NOISE, "The company's office is in Lisbon, near the river."]
    re_probs = models.load("relevance", "minilm-re", settings).score(
        question, [Hit(passage_id=i, similarity=0.5, path="p", text=t)
                   for i, t in enumerate(texts)])
    assert re_probs[1] > re_probs[0]

    flt = models.load("filter", "minilm-filter", settings)
    sents = ["The weather was mild all week.", "The company's office is in Lisbon.",
             "Nobody remembered the meeting."]
    scores = flt.score(question, [Sentence(id=i, passage_id=1, seq=i, path="p", text=t)
                                  for i, t in enumerate(sents)])
    assert int(np.argmax(scores)) == 1


def test_untrained_minilm_bi_encoder_is_the_similarity_fallback() -> None:
    """Training starts from the fallback: same embeddings, same filter and RE scores."""
    import torch

    from ragctl.models.filter import SimilarityFilter
    from ragctl.training.architectures import BI_INIT, resolve_architecture
    from ragctl.training.trainer import PairScorer

    arch, path, _ = resolve_architecture("minilm", "bi-encoder")
    question = "Where is the company's office?"
    sents = ["The weather was mild all week.", "The company's office is in Lisbon.",
             "Nobody remembered the meeting.", "Rent for the office is 900 euros."]
    fallback = SimilarityFilter(models.load("embedder", "minilm")).score(
        question, [Sentence(id=i, passage_id=1, seq=i, path="p", text=t)
                   for i, t in enumerate(sents)])
    scorer = PairScorer(arch, path, None, TrainOptions(kind="filter"), "cpu")
    scorer.train(False)
    with torch.no_grad():
        z = scorer.logits([(question, s) for s in sents]).numpy()
    (w_cos, w_lex), bias = BI_INIT["filter"]
    np.testing.assert_allclose(z, (w_cos + w_lex) * fallback + bias, atol=1e-3)
    re = PairScorer(arch, path, None, TrainOptions(kind="re"), "cpu")
    re.train(False)
    with torch.no_grad():
        z_re = re.logits([(question, s) for s in sents]).numpy()
        cos = (arch.embed(re, [question]) @ arch.embed(re, sents).T).numpy()[0]
    np.testing.assert_allclose(z_re, (cos - 0.799) / 0.142, atol=1e-4)


def test_ask_uses_the_shipped_models_by_default(tmp_path: Path, model_defaults: None) -> None:
    if not (models.bundled_models_dir() / "minilm-re" / "manifest.json").exists():
        pytest.skip("the shipped models are not in this checkout")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "office.md").write_text("# Office\n\n" + NOISE + " The company's office is in "
                                    "Lisbon, near the river.\n")
    (docs / "rent.md").write_text("# Rent\n\nThe rent is 900 euros a month. " + NOISE + "\n")
    assert CliRunner().invoke(cli, ["index", str(docs), "-q"]).exit_code == 0
    out = CliRunner().invoke(cli, ["ask", "Where is the company's office?", "--json",
                                   "--model", "smollm2-135m"])
    assert out.exit_code == 0, out.output
    answer = json.loads(out.stdout)
    assert answer["models"]["relevance"] == "minilm-re"
    assert answer["models"]["filter"] == "minilm-filter"
    kept = [s["text"] for s in answer["filtered"] if s["kept"]]
    assert any("Lisbon" in t for t in kept)


def test_the_shipped_reader_answers_with_a_span_and_abstains_without_its_sentence(
        tmp_path: Path, model_defaults: None) -> None:
    if not (models.bundled_models_dir() / "minilm-reader" / "manifest.json").exists():
        pytest.skip("the shipped reader is not in this checkout")
    docs = tmp_path / "docs"
    docs.mkdir()
    office = docs / "office.md"
    office.write_text("# Office\n\nThe company opened in 2019. Its office is in Lisbon, near "
                      "the river. The office has forty desks and a small kitchen.\n")
    (docs / "rent.md").write_text("# Rent\n\nThe rent is 900 euros a month. " + NOISE + "\n")
    assert CliRunner().invoke(cli, ["index", str(docs), "-q"]).exit_code == 0
    out = CliRunner().invoke(cli, ["ask", "Where is the company's office?", "--json"])
    assert out.exit_code == 0, out.output
    answer = json.loads(out.stdout)
    assert answer["kind"] == "span" and answer["models"]["reader"] == "minilm-reader"
    assert "Lisbon" in answer["answer"]
    src = answer["sources"][0]
    raw = office.read_text()
    assert raw[src["answer_start"]:src["answer_end"]] in answer["answer"]
    assert "Lisbon" in raw[src["answer_start"]:src["answer_end"]]
    # the same folder without the sentence that says where: not in your documents
    office.write_text("# Office\n\nThe company opened in 2019. The office has forty desks "
                      "and a small kitchen.\n")
    assert CliRunner().invoke(cli, ["index", str(docs), "-q"]).exit_code == 0
    out = CliRunner().invoke(cli, ["ask", "Where is the company's office?", "--json"])
    assert out.exit_code == 3, out.output
    assert json.loads(out.stdout)["abstained"] is True


def test_the_shipped_entailment_model_reads_a_denial_as_a_no_and_quotes_it(
        tmp_path: Path, model_defaults: None) -> None:
    if not (models.bundled_models_dir() / "minilm-nli" / "manifest.json").exists():
        pytest.skip("the shipped entailment model is not in this checkout")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "privacy.md").write_text(
        "# Acme privacy policy\n\nWe never share your location with advertisers. We keep "
        "your notes for as long as your account is open. " + NOISE + "\n")
    assert CliRunner().invoke(cli, ["index", str(docs), "-q"]).exit_code == 0
    out = CliRunner().invoke(cli, ["ask", "Does Acme share my location with advertisers?",
                                   "--json"])
    assert out.exit_code == 0, out.output
    answer = json.loads(out.stdout)
    assert answer["kind"] == "yes-no" and answer["models"]["nli"] == "minilm-nli"
    assert answer["answer"].startswith('No. "We never share your location with advertisers."')
    (docs / "privacy.md").write_text(
        "# Acme privacy policy\n\nWe share your location with advertisers to show you local "
        "offers. We keep your notes for as long as your account is open. " + NOISE + "\n")
    assert CliRunner().invoke(cli, ["index", str(docs), "-q"]).exit_code == 0
    out = CliRunner().invoke(cli, ["ask", "Does Acme share my location with advertisers?",
                                   "--json"])
    assert json.loads(out.stdout)["answer"].startswith("Yes.")
