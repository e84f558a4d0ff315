"""`ask` end to end with the real models: MiniLM, SmolLM2 in llama.cpp, CTranslate2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ragctl.app.cli import cli
from ragctl.errors import EXIT_NOT_FOUND
from ragctl.models.ct2 import CT2Scorer
from tests.tiny_models import build_bi_encoder, build_llama, build_t5

pytestmark = pytest.mark.real

NOTES = {
    "health.md": "# Health\n\nMy dentist appointment is on Thursday at 3 pm with Dr. Alves. "
                 "The clinic is on Rua Augusta.\n\n# Car\n\n"
                 "The car insurance renews every March and costs 420 euros a year.",
    "work.md": "# Report\n\nThe quarterly report is due on the 15th of June. Maria leads the "
               "audit team.\n\n# Office\n\nThe company opens its new office in Lisbon next "
               "spring. The office will have forty desks.",
}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    return {"encoder": build_bi_encoder(root / "tiny-bi"),
            "t5": build_t5(root / "tiny-t5"), "llama": build_llama(root / "tiny-llama")}


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    for name, text in NOTES.items():
        (root / name).write_text(text)
    assert CliRunner().invoke(cli, ["index", str(root), "-q"]).exit_code == 0
    return root


def test_bi_encoder_matches_torch(models: dict[str, Path]) -> None:
    import torch
    from transformers import BertModel

    from ragctl.text import overlap

    path = models["encoder"]
    scorer = CT2Scorer(path, device="cpu", compute_type="float32")
    pairs = [("what is the rent", "the rent is euros"), ("who sat", "the cat sat on mat")]
    got = scorer.predict(pairs)
    bert = BertModel.from_pretrained(str(path.parent / (path.name + "-hf"))).eval()
    head = np.load(path / "head.npz")

    def embed(text: str) -> np.ndarray:
        ids = scorer.tokenizer.encode(text).ids
        with torch.no_grad():
            states = bert(input_ids=torch.tensor([ids])).last_hidden_state[0].numpy()
        v = states.mean(0)
        return v / np.linalg.norm(v)

    want = []
    for a, b in pairs:
        z = head["weight"][0] @ np.array([embed(a) @ embed(b), overlap(a, b)]) + head["bias"][0]
        want.append(1 / (1 + np.exp(-z)))
    assert got == pytest.approx(np.array(want), abs=1e-4)
    assert CT2Scorer(path).compute_type == "int8"  # auto picks int8 on CPU


def test_seq2seq_and_decoder_scorers_match_torch(models: dict[str, Path]) -> None:
    import torch
    from transformers import LlamaForCausalLM, T5ForConditionalGeneration

    pair = [("what is the rent", "the rent is euros")]
    t5 = CT2Scorer(models["t5"], device="cpu", compute_type="float32")
    hf = T5ForConditionalGeneration.from_pretrained(
        str(models["t5"].parent / "tiny-t5-hf")).eval()
    ids = t5.tokenizer.encode("question what is the rent context the rent is euros relevant").ids
    vocab = t5.tokenizer.get_vocab()
    with torch.no_grad():
        logits = hf(input_ids=torch.tensor([ids]),
                    decoder_input_ids=torch.tensor([[0]])).logits[0, 0]
    lp = torch.log_softmax(logits, -1)
    want = 1 / (1 + np.exp(float(lp[vocab["false"]] - lp[vocab["true"]])))
    assert t5.predict(pair)[0] == pytest.approx(want, abs=1e-4)

    dec = CT2Scorer(models["llama"], device="cpu", compute_type="float32")
    hf2 = LlamaForCausalLM.from_pretrained(str(models["llama"].parent / "tiny-llama-hf")).eval()
    ids = dec.tokenizer.encode("question what is the rent context the rent is euros relevant").ids
    with torch.no_grad():
        lp = torch.log_softmax(hf2(input_ids=torch.tensor([ids])).logits[0, -1], -1)
    vocab = dec.tokenizer.get_vocab()
    want = 1 / (1 + np.exp(float(lp[vocab["false"]] - lp[vocab["true"]])))
    assert dec.predict(pair)[0] == pytest.approx(want, abs=1e-4)


def test_ask_json_with_real_models(notes: Path) -> None:
    result = CliRunner().invoke(cli, ["ask", "When is my dentist appointment?", "--json"])
    assert result.exit_code == 0, result.output
    a = json.loads(result.stdout)
    # the documented schema
    for key in ("schema", "question", "answer", "abstained", "sentences", "sources", "context",
                "passages", "filtered", "removed_citations", "tokens", "timings", "models",
                "support_rate"):
        assert key in a, key
    assert a["schema"] == "ragctl.answer/1"
    assert a["models"] == {"embedder": "all-MiniLM-L6-v2", "relevance": "similarity",
                           "filter": "similarity", "generator": "gemma-3-270m"}
    assert "3 pm" in a["answer"] or "Thursday" in a["answer"]
    assert a["sources"] and Path(a["sources"][0]["path"]).name == "health.md"
    assert a["sources"][0]["place"] == "Health"
    raw = (notes / "health.md").read_text()
    src = a["sources"][0]
    assert " ".join(raw[src["start_char"]:src["end_char"]].split()) == src["text"]
    assert a["tokens"]["context"] < a["tokens"]["full_context"]
    assert a["sentences"][0]["supported"]


def test_ask_abstains_on_absent_topic(notes: Path) -> None:
    result = CliRunner().invoke(cli, ["ask", "What is the melting point of tungsten?"])
    assert result.exit_code == EXIT_NOT_FOUND, result.output
    assert "Not found in your documents" in result.stdout
    assert "Closest passages" in result.stdout


def test_ask_streams_and_explains(notes: Path) -> None:
    result = CliRunner().invoke(cli, ["ask", "Where does the new office open?", "--explain"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Answer:")
    assert "Lisbon" in result.stdout and "Sources:" in result.stdout
    assert "context filter" in result.stdout and "tokens" in result.stdout


def test_ask_with_exported_ct2_models(notes: Path, models: dict[str, Path]) -> None:
    result = CliRunner().invoke(cli, [
        "ask", "When is my dentist appointment?", "--json", "--no-abstain",
        "--relevance", str(models["encoder"]), "--filter", str(models["t5"])])
    # random tiny models: the answer may well be unsupported, which is an abstention, but
    # never one for the relevance threshold that --no-abstain lifts
    assert result.exit_code in (0, EXIT_NOT_FOUND), result.output
    a = json.loads(result.stdout)
    assert a["abstained"] == (result.exit_code == EXIT_NOT_FOUND)
    assert "threshold" not in (a["abstain_reason"] or "")
    assert a["models"]["relevance"] == "tiny-bi" and a["models"]["filter"] == "tiny-t5"
    assert all(0.0 <= p["relevance"] <= 1.0 for p in a["passages"])
    assert a["context"]


def test_ask_errors(notes: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a model")
    result = CliRunner().invoke(cli, ["ask", "anything?", "--model", str(bad), "--no-abstain"])
    assert result.exit_code == 1 and "not a GGUF model file" in result.stderr
    result = CliRunner().invoke(cli, ["ask", "anything?", "--model", "nope-7b"])
    assert result.exit_code == 1 and "no generator 'nope-7b'" in result.stderr
    result = CliRunner().invoke(cli, ["ask", "anything?", "--relevance", str(tmp_path)])
    assert result.exit_code == 1 and "manifest.json" in result.stderr
    result = CliRunner().invoke(cli, ["ask", "anything?", "--index", "missing"])
    assert result.exit_code == 1 and "no index named 'missing'" in result.stderr


def test_long_answer_with_real_models(notes: Path) -> None:
    result = CliRunner().invoke(cli, ["ask", "What do my notes say about the office and the "
                                      "report?", "--long", "--words", "80", "--json",
                                      "--no-abstain", "--fluent"])
    assert result.exit_code == 0, result.output
    a = json.loads(result.stdout)
    assert a["schema"] == "ragctl.long-answer/1"
    assert a["nuggets"] and a["facets"] and a["sources"]
    assert a["words"] <= 80
    cited = {n for f in a["facets"] for n in f["citations"]}
    assert cited == {s["number"] for s in a["sources"]}
    for s in a["sources"]:  # every citation resolves to a real sentence of a real file
        raw = (notes / Path(s["path"]).name).read_text()
        assert " ".join(raw[s["start_char"]:s["end_char"]].split()) == s["text"]
    # every facet is either a supported summary or a verbatim nugget
    for f in a["facets"]:
        assert f["fallback"] or f["support"] >= 0.5
    assert a["fluent"] or a["fluency_rejected"]
    human = CliRunner().invoke(cli, ["ask", "What do my notes say about the office?", "--long",
                                     "--no-abstain"])
    assert human.exit_code == 0 and "Facets, in rank order" in human.stdout


def test_the_generator_cites_the_sentence_that_holds_the_answer() -> None:
    """The few-shot prompt teaches no citation number: with two sentences, the answer is
    cited to the one that holds it, first or second, and no number is invented."""
    from ragctl import models
    from ragctl.ask.verify import LexicalEmbeddingSupport, verify
    from ragctl.models.generate import build_prompt
    from ragctl.records import Sentence

    gen = models.load("generator", "gemma-3-270m")
    checker = LexicalEmbeddingSupport(models.load("embedder", "all-MiniLM-L6-v2"))
    context = [Sentence(id=1, passage_id=1, path="n.md",
                        text="The boiler is serviced every October by Termo Lisboa."),
               Sentence(id=2, passage_id=2, path="n.md",
                        text="The rent for the flat is 900 euros a month.")]
    try:
        for question, want, word in (("When is the boiler serviced?", 1, "October"),
                                     ("How much is the rent for the flat?", 2, "900")):
            text = gen.complete(build_prompt(question, [s.text for s in context])).text
            v = verify(text, context, checker)
            assert word in text, text
            assert not v.removed_citations, text
            assert v.sentences and v.sentences[0].citations == (want,), text
    finally:
        gen.close()


def test_vector_cache_and_the_service_warming_it(notes: Path, models: dict[str, Path],
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    from ragctl.app.service import Service
    from ragctl.config import load_settings
    from ragctl.models.ct2 import BiEncoderBackend
    from ragctl.store.sqlite import VectorCache
    from ragctl.text import passage_text

    monkeypatch.setenv("RAGCTL_CACHE", str(tmp_path / "cache"))  # empty
    monkeypatch.setenv("RAGCTL_RELEVANCE", str(models["encoder"]))
    monkeypatch.setenv("RAGCTL_FILTER", str(models["encoder"]))
    # a sentence longer than the filter reads at once: it is scored in windows
    (notes / "receipt.txt").write_text(
        "Receipt " + " ".join(f"item {i} costs {i + 2} euros" for i in range(14)) + ".")
    assert CliRunner().invoke(cli, ["index", str(notes), "-q"]).exit_code == 0
    service = Service()
    try:
        def work() -> tuple[int, int]:
            service.pipeline(load_settings()).load()
            steps = 0
            while service.warm_step(batch=2):
                steps += 1
            store = next(iter(service.open.values())).collection.store
            return steps, [passage_text(t, x) for _, t, x in store.passage_titles(0, 1000)]

        steps, texts = service.worker.submit(work).result()
        n = len(texts)
        entry = next(iter(service.open.values()))
        cache: VectorCache = entry.pipeline.relevance.scorer.vector_cache
        assert steps >= 2 and n >= 5
        # every passage, before any question, in the int8 model's vectors and in those of
        # its float32 refiner
        scorer = entry.pipeline.relevance.scorer
        for kind in (scorer.compute_type, "float32"):
            assert len(cache.get([f"{kind}\x00{t}" for t in texts])) == n, kind
        assert (cache.path.stat().st_mode & 0o777) == 0o600
    finally:
        service.worker.submit(service.close).result()
    # another process: only the question is embedded, the passages come from the cache
    embedded: list[int] = []
    orig = BiEncoderBackend._embed

    def counting(self, model, texts, batch_size):  # type: ignore[no-untyped-def]
        embedded.append(len(texts))
        return orig(self, model, texts, batch_size)

    monkeypatch.setattr(BiEncoderBackend, "_embed", counting)
    q = "Who leads the audit team?"
    out = CliRunner().invoke(cli, ["ask", q, "--json", "--no-abstain", "--no-log",
                                   "--no-service"])
    a = json.loads(out.stdout)
    # every model embedded only the question: passages, sentences, the windows of long
    # ones and the float32 refiner's vectors of them all came from the cache
    assert embedded and set(embedded) == {1}, embedded
    assert any(len(s["text"].split()) <= 30 and "item" in s["text"] for s in a["filtered"])
    # and the scores are those of the model without a cache
    plain = CT2Scorer(models["encoder"], device="cpu")
    plain.vector_cache = None
    want = plain.predict([(q, passage_text(p["title"], p["text"])) for p in a["passages"]],
                         refine=True)
    assert [p["relevance"] for p in a["passages"]] == pytest.approx(want.tolist(), abs=1e-4)


def test_a_broken_vector_cache_is_ignored(tmp_path: Path) -> None:
    from ragctl.store.sqlite import VectorCache

    path = tmp_path / "v.db"
    path.write_bytes(b"not a database" * 100)
    cache = VectorCache(path)
    assert cache.get(["a passage"]) == {}
    cache.put(["a passage"], np.ones((1, 4), dtype=np.float32))
    assert not cache.enabled
