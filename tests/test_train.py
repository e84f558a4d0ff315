"""Training, export and loading back: tiny random models built here, real code paths."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ragctl.app.cli import cli
from ragctl.errors import RagctlError
from ragctl.models.ct2 import CT2Scorer
from ragctl.models.filter import CT2Filter
from ragctl.models.relevance import CT2Relevance
from ragctl.records import Hit, Sentence
from ragctl.text import passage_text
from ragctl.training.architectures import ARCHITECTURES, BI_INIT, BiEncoder, resolve_architecture
from ragctl.training.export import export_model
from ragctl.training.silver import SilverInput, SilverLabeler, write_silver
from ragctl.training.trainer import (
    PairScorer,
    Trainer,
    TrainOptions,
    fit_calibration,
    kl_loss,
    listwise_loss,
)

from .test_silver import AnswerInPrompt
from .tiny_models import hf_bert, hf_llama, hf_t5

torch = pytest.importorskip("torch")
pytest.importorskip("ctranslate2")

# questions and passages in the tiny models' vocabulary
FACTS = [("where is the office", "lisbon", "the office is lisbon"),
         ("where is the company", "porto", "the company is porto"),
         ("what is the rent", "euros", "the rent is euros"),
         ("who sat on the mat", "cat", "the cat sat on the mat"),
         ("what is thursday", "appointment", "thursday is dentist appointment"),
         ("where is the train", "porto", "the train is porto")]
NOISE = ["a question is a question", "the mat is a mat", "what is relevant context"]


def word_scorer() -> AnswerInPrompt:
    """log P(answer) −0.5 when the context holds the answer, else −5."""
    return AnswerInPrompt(hit=-0.5, miss=-5.0, none=-5.0)


def _silver(tmp: Path, n: int = 24) -> Path:
    items = []
    for i in range(n):
        q, a, fact = FACTS[i % len(FACTS)]
        noise = NOISE[i % len(NOISE)]
        other = FACTS[(i + 1) % len(FACTS)][2]
        passages = [("", f"{noise}. {other}."), ("", f"{noise}. {fact}."), ("", f"{other}.")]
        if i % 2:
            passages.reverse()
        items.append(SilverInput(f"q{i}", q, (a,), tuple(passages)))
    out = tmp / "silver.jsonl"
    write_silver(items, out, SilverLabeler(measures=["strinc", "lexical", "cxmi"],
                                           scorer=word_scorer()))
    return out


def _hf_bert(tmp: Path) -> Path:
    return hf_bert(tmp / "tiny-bert", extra_words=(".",))


def _hf_t5(tmp: Path) -> Path:
    return hf_t5(tmp / "tiny-t5")


def _hf_llama(tmp: Path) -> Path:
    return hf_llama(tmp / "tiny-llama")


def _train(tmp: Path, kind: str, base: Path, *, name: str, epochs: int = 2,
           **kw: object) -> Path:
    data = _silver(tmp) if not (tmp / "silver.jsonl").exists() else tmp / "silver.jsonl"
    opts = TrainOptions(kind=kind, base=str(base), epochs=epochs, batch_size=8,
                        learning_rate=3e-3, max_length=64, val_fraction=0.25, **kw)  # type: ignore[arg-type]
    out = tmp / "runs" / name
    res = Trainer(opts, [data], out).run()
    assert res.best_epoch >= 1 and len(res.history) == epochs
    assert (out / "model" / "train.json").exists()
    return out


def _hits(question: str) -> list[Hit]:
    _q, _a, fact = next(f for f in FACTS if f[0] == question)
    texts = [f"{NOISE[0]}. {FACTS[1][2]}.", f"{NOISE[1]}. {fact}.", "the mat is a mat."]
    return [Hit(passage_id=i, score=1.0, similarity=0.5, path="p.md", end_char=len(t), text=t)
            for i, t in enumerate(texts)]


@pytest.mark.parametrize("maker,arch,backend", [(_hf_bert, "bi-encoder", "ct2-bi-encoder"),
                                                (_hf_t5, "seq2seq", "ct2-seq2seq"),
                                                (_hf_llama, "decoder", "ct2-decoder")])
def test_train_filter_export_and_load_through_ask_backend(tmp_path: Path, maker, arch,
                                                          backend) -> None:
    run = _train(tmp_path, "filter", maker(tmp_path), name=f"f-{arch}",
                 architecture="bi-encoder" if arch == "bi-encoder" else "auto")
    meta = json.loads((run / "model" / "train.json").read_text())
    assert meta["architecture"] == arch
    out = tmp_path / "models" / "f"
    manifest = export_model(run, out, quantization="float32")
    assert manifest["backend"] == backend and manifest["kind"] == "filter"
    assert manifest["training"]["silver_measure"] == "strinc"
    flt = CT2Filter(out)
    assert flt.scorer.compute_type == "float32"  # "auto" keeps the exported type on CPU
    sents = [Sentence(id=i, passage_id=1, seq=i, path="p.md", end_char=1, text=t) for i, t in
             enumerate(["the mat is a mat", "the office is lisbon", "a question is a question"])]
    scores = flt.score("where is the office", sents)
    assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))
    # the exported model computes what the trained torch model computes
    a, b = manifest["calibration"]
    torch_scorer = PairScorer(ARCHITECTURES[arch](), run / "model", None,
                              TrainOptions(kind="filter", max_length=64), "cpu")
    if torch_scorer.head is not None:
        head = np.load(run / "model" / "head.npz")
        torch_scorer.head.weight.data = torch.tensor(head["weight"])
        torch_scorer.head.bias.data = torch.tensor(head["bias"])
    torch_scorer.train(False)
    with torch.no_grad():
        z = torch_scorer.logits([("where is the office", s.text) for s in sents]).numpy()
    pairs = [("where is the office", s.text) for s in sents]
    np.testing.assert_allclose(flt.scorer.z(pairs), z, atol=1e-3)
    np.testing.assert_allclose(scores, 1 / (1 + np.exp(-(a * flt.scorer.z(pairs) + b))),
                               atol=1e-5)


def test_trained_bi_encoder_learns_the_silver_sentence(tmp_path: Path) -> None:
    run = _train(tmp_path, "filter", _hf_bert(tmp_path), name="learn", epochs=6)
    meta = json.loads((run / "model" / "train.json").read_text())
    history = meta["history"]
    assert history[-1]["train_loss"] < history[0]["train_loss"]
    export_model(run, tmp_path / "m", quantization="float32")
    flt = CT2Filter(tmp_path / "m")
    correct = 0
    for q, _, fact in FACTS:
        sents = [Sentence(id=i, passage_id=1, seq=i, path="p", end_char=1, text=t)
                 for i, t in enumerate([NOISE[0], fact, NOISE[1], NOISE[2]])]
        correct += int(np.argmax(flt.score(q, sents)) == 1)
    assert correct >= 4  # of 6, from 18 training questions


@pytest.mark.parametrize("objective", ["kl", "has-answer"])
@pytest.mark.parametrize("maker,arch", [(_hf_bert, "auto"), (_hf_bert, "bi-encoder"),
                                        (_hf_t5, "auto"), (_hf_llama, "auto")])
def test_train_re_each_objective_and_base(tmp_path: Path, objective: str, maker,
                                          arch: str) -> None:
    run = _train(tmp_path, "re", maker(tmp_path), name="re", objective=objective,
                 architecture=arch)
    manifest = export_model(run, tmp_path / "models" / "re", quantization="float32")
    assert manifest["kind"] == "relevance"
    if arch == "bi-encoder":
        assert manifest["backend"] == "ct2-bi-encoder"
        assert "untrained_recall@1" in manifest["metrics"]
    assert manifest["training"]["objective"] == objective
    re_model = CT2Relevance(tmp_path / "models" / "re")
    probs = re_model.score("where is the office", _hits("where is the office"))
    assert probs.shape == (3,) and np.all((probs > 0) & (probs < 1))
    assert re_model.threshold == 0.05  # no abstain_threshold in the manifest: the default
    mf = tmp_path / "models" / "re" / "manifest.json"
    mf.write_text(json.dumps({**json.loads(mf.read_text()), "abstain_threshold": 0.07}))
    assert CT2Relevance(tmp_path / "models" / "re").threshold == 0.07


def test_resume_gives_the_same_weights_as_an_uninterrupted_run(tmp_path: Path) -> None:
    base = _hf_bert(tmp_path)
    data = _silver(tmp_path)
    opts = TrainOptions(kind="filter", base=str(base), epochs=2, batch_size=8,
                        learning_rate=3e-3, max_length=64)
    straight = Trainer(opts, [data], tmp_path / "a").run()
    one = TrainOptions(**{**opts.__dict__, "epochs": 1})
    Trainer(one, [data], tmp_path / "b").run()
    assert sorted(p.name for p in (tmp_path / "b" / "checkpoints").iterdir()) == ["epoch-1.pt"]
    with pytest.raises(RagctlError, match="--resume"):
        Trainer(opts, [data], tmp_path / "b").run()
    resumed = Trainer(opts, [data], tmp_path / "b").run(resume=True)
    assert resumed.resumed_from == 1
    assert [h.epoch for h in resumed.history] == [1, 2]
    a = torch.load(tmp_path / "a" / "checkpoints" / "epoch-2.pt", weights_only=False)
    b = torch.load(tmp_path / "b" / "checkpoints" / "epoch-2.pt", weights_only=False)
    for key, value in a["scorer"]["model"].items():
        assert torch.equal(value, b["scorer"]["model"][key]), key
    assert straight.history[-1].train_loss == pytest.approx(resumed.history[-1].train_loss)
    other = TrainOptions(**{**opts.__dict__, "measure": "lexical"})
    with pytest.raises(RagctlError, match="measure"):
        Trainer(other, [data], tmp_path / "b").run(resume=True)


def test_int8_agrees_with_float32(tmp_path: Path) -> None:
    run = _train(tmp_path, "re", _hf_bert(tmp_path), name="q", epochs=4)
    export_model(run, tmp_path / "f32", quantization="float32")
    export_model(run, tmp_path / "i8", quantization="int8")
    f32, i8 = CT2Relevance(tmp_path / "f32"), CT2Relevance(tmp_path / "i8")
    assert json.loads((tmp_path / "i8" / "manifest.json").read_text())["quantization"] == "int8"
    agree = []
    for q, _, _ in FACTS:
        a, b = f32.score(q, _hits(q)), i8.score(q, _hits(q))
        assert np.corrcoef(a, b)[0, 1] > 0.9
        agree.append(int(np.argmax(a)) == int(np.argmax(b)))
    assert sum(agree) >= 5


def test_int8_near_ties_are_scored_again_in_float32(tmp_path: Path) -> None:
    run = _train(tmp_path, "re", _hf_bert(tmp_path), name="q", epochs=1)
    export_model(run, tmp_path / "i8", quantization="int8")
    export_model(run, tmp_path / "f32", quantization="float32")
    i8 = CT2Scorer(tmp_path / "i8", refine_margin=1e9)  # every candidate is a near-tie
    plain = CT2Scorer(tmp_path / "i8", refine_margin=0.0)
    weights_in_f32 = CT2Scorer(tmp_path / "i8", compute_type="float32")
    assert i8.compute_type == "int8" and weights_in_f32.refine_margin == 0.0
    assert CT2Scorer(tmp_path / "f32").refine_margin == 0.0  # float32 needs no second look
    q = FACTS[0][0]
    pairs = [(q, passage_text(h.title, h.text)) for h in _hits(q)]
    z8, z32 = plain.z(pairs), weights_in_f32.z(pairs)
    assert not np.array_equal(z8, z32)
    np.testing.assert_allclose(i8.predict(pairs, refine=True), weights_in_f32.predict(pairs),
                               rtol=1e-5)
    np.testing.assert_array_equal(i8.predict(pairs), plain.predict(pairs))  # refine=False
    # a margin between the best two re-scores only the candidates inside it
    order = np.argsort(-z8)
    i8.refine_margin = float(z8[order[0]] - z8[order[1]]) + 1e-4
    z = i8.refine(pairs, z8)
    inside = z8 >= z8.max() - i8.refine_margin
    assert inside.sum() >= 2
    np.testing.assert_allclose(z[inside], z32[inside], rtol=1e-5)
    np.testing.assert_array_equal(z[~inside], z8[~inside])
    i8.refine_margin = 0.0
    np.testing.assert_array_equal(i8.refine(pairs, z8), z8)


def test_bad_data_and_bad_bases_give_clear_errors(tmp_path: Path) -> None:
    data = _silver(tmp_path)
    no_lp = tmp_path / "nolp.jsonl"
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    for r in rows:
        for p in r["passages"]:
            p["answer_logprob"] = None
    no_lp.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    bert = _hf_bert(tmp_path)
    with pytest.raises(RagctlError, match="passage-logprobs"):
        Trainer(TrainOptions(kind="re", base=str(bert)), [no_lp], tmp_path / "x").run()
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n".join(json.dumps({**r, "answers": []}) for r in rows) + "\n")
    with pytest.raises(RagctlError, match="empty answer"):
        Trainer(TrainOptions(kind="filter", base=str(bert)), [empty], tmp_path / "y").run()
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "1", "question": "q"}\n')
    with pytest.raises(RagctlError, match="not a silver-label line"):
        Trainer(TrainOptions(kind="filter", base=str(bert)), [broken], tmp_path / "z").run()
    not_model = tmp_path / "notamodel"
    not_model.mkdir()
    with pytest.raises(RagctlError, match=r"no config\.json"):
        Trainer(TrainOptions(kind="filter", base=str(not_model)), [data], tmp_path / "w").run()
    res = CliRunner().invoke(cli, ["train", "filter", "--data", str(data), "--base",
                                   str(not_model)])
    assert res.exit_code == 1 and "no config.json" in res.output
    assert "Traceback" not in res.output
    res = CliRunner().invoke(cli, ["export", "nothing-here"])
    assert res.exit_code != 0 and "Traceback" not in res.output


def test_cli_train_exports_and_models_use_makes_it_the_default(
        tmp_path: Path, ragctl_home: Path, model_defaults: None) -> None:
    data = _silver(tmp_path)
    bert = _hf_bert(tmp_path)
    res = CliRunner().invoke(cli, ["train", "re", "--data", str(data), "--base", str(bert),
                                   "--name", "tiny-re", "--epochs", "1", "--max-length", "64",
                                   "--quantization", "float32"])
    assert res.exit_code == 0, res.output
    assert (ragctl_home / "models" / "tiny-re" / "manifest.json").exists()
    listing = CliRunner().invoke(cli, ["models", "--json"])
    rows = json.loads(listing.stdout)
    assert any(r["name"] == "tiny-re" and r["kind"] == "relevance" for r in rows)
    bad = CliRunner().invoke(cli, ["models", "use", "filter", "tiny-re"])
    assert bad.exit_code == 1 and "relevance model" in bad.output
    ok = CliRunner().invoke(cli, ["models", "use", "relevance", "tiny-re"])
    assert ok.exit_code == 0, ok.output
    from ragctl import models
    from ragctl.config import load_settings

    settings = load_settings()
    assert settings.relevance == "tiny-re"
    est = models.load("relevance", settings.relevance, settings)
    assert isinstance(est, CT2Relevance)
    missing = CliRunner().invoke(cli, ["models", "use", "relevance", "nope"])
    assert missing.exit_code == 1 and "no model 'nope'" in missing.output


def test_kl_loss_is_zero_when_the_distributions_match() -> None:
    z = torch.tensor([0.0, 1.0, 2.0])
    assert float(kl_loss(torch, z, [0.0, 1.0, 2.0])) == pytest.approx(0.0, abs=1e-6)
    assert float(kl_loss(torch, z, [2.0, 1.0, 0.0])) > 0.5


def test_calibration_recovers_a_logistic_curve() -> None:
    rng = np.random.default_rng(0)
    z = rng.normal(size=4000) * 3
    y = (rng.random(4000) < 1 / (1 + np.exp(-(0.5 * z - 1.0)))).astype(float)
    a, b = fit_calibration(z, y)
    assert a == pytest.approx(0.5, abs=0.08) and b == pytest.approx(-1.0, abs=0.15)
    assert fit_calibration([1.0, 2.0], [1.0, 1.0]) == (1.0, 0.0)
    # separable, far-apart logits: bounded parameters that still order the classes
    a, b = fit_calibration([-40.0, -30.0, 30.0, 40.0], [0, 0, 1, 1])
    assert 0 < a < 10 and np.isfinite(b)
    assert 1 / (1 + np.exp(-(a * 30 + b))) > 0.5 > 1 / (1 + np.exp(-(a * -30 + b)))


def test_listwise_loss_puts_the_mass_on_the_positives() -> None:
    z = torch.tensor([0.0, 5.0, 0.0])
    assert float(listwise_loss(torch, z, [0, 1, 0])) < 0.02
    assert float(listwise_loss(torch, z, [1, 0, 0])) > 4.9
    # two positives: the loss counts their summed mass
    two = float(listwise_loss(torch, torch.tensor([1.0, 1.0, 1.0]), [1, 1, 0]))
    assert two == pytest.approx(float(np.log(3 / 2)), abs=1e-6)


def test_bi_encoder_starts_as_the_fallback_formula_and_needs_an_encoder(
        tmp_path: Path) -> None:
    bert = _hf_bert(tmp_path)
    scorer = PairScorer(BiEncoder(), bert, None, TrainOptions(kind="filter"), "cpu")
    scorer.train(False)
    pairs = [("where is the office", "the office is lisbon"),
             ("where is the office", "the mat is a mat")]
    with torch.no_grad():
        z = scorer.logits(pairs).numpy()
        vecs = scorer.arch.embed(scorer, [p for pair in pairs for p in pair]).numpy()
    (w_cos, w_lex), bias = BI_INIT["filter"]
    cos = np.array([vecs[0] @ vecs[1], vecs[2] @ vecs[3]])
    lex = np.array([1.0, 0.0])  # "office" is the question's one content word
    np.testing.assert_allclose(z, w_cos * cos + w_lex * lex + bias, atol=1e-4)
    assert w_cos / (w_cos + w_lex) == pytest.approx(0.7)  # SimilarityFilter's weight
    with pytest.raises(RagctlError, match="cannot be trained as a bi-encoder"):
        resolve_architecture(str(_hf_t5(tmp_path)), "bi-encoder")
    assert resolve_architecture(str(bert), "bi-encoder")[0].name == "bi-encoder"
    assert resolve_architecture(str(bert))[0].name == "bi-encoder"
    with pytest.raises(RagctlError, match="architecture must be"):
        resolve_architecture(str(bert), "cross-encoder")


def test_a_missing_default_model_falls_back_to_similarity_with_a_warning(
        model_defaults: None, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    import ragctl.models.registry as models
    from ragctl.config import load_settings
    from ragctl.models.relevance import SimilarityRelevance

    monkeypatch.setattr(models, "find_model", lambda name: None)
    settings = load_settings()
    with caplog.at_level("WARNING", logger="ragctl.models"):
        est = models.load("relevance", settings.relevance, settings)
    assert isinstance(est, SimilarityRelevance)
    err = caplog.text
    assert "minilm-re" in err and "similarity fallback" in err
    # a model the user named is not silently replaced
    with pytest.raises(RagctlError, match="no model 'my-re'"):
        models.load("relevance", "my-re", settings)
