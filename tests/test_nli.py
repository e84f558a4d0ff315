"""The entailment model: its training data, its export, and yes/no answers by it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ragctl.ask.pipeline import Pipeline
from ragctl.ask.stages import AskOptions
from ragctl.config import load_settings
from ragctl.errors import RagctlError
from ragctl.index.indexer import Indexer
from ragctl.store.collection import Collection
from ragctl.training.entail import LABELS, pair_examples
from tests.fakes import FakeEntailment, FakeGenerator, FakeReader


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_pairs_are_read_from_nli_files_of_every_shape(tmp_path: Path) -> None:
    mnli = _jsonl(tmp_path / "multinli_train.jsonl", [
        {"gold_label": "contradiction", "sentence1": "A man sleeps.", "sentence2": "He runs."},
        {"gold_label": "-", "sentence1": "No agreement.", "sentence2": "Skipped."},
        {"gold_label": "entailment", "sentence1": "A cat sat.", "sentence2": "An animal sat."}])
    anli = _jsonl(tmp_path / "anli.jsonl", [
        {"premise": "The shop opens at nine.", "hypothesis": "It opens at ten.", "label": "c"},
        {"context": "Rain fell.", "hypothesis": "It was wet.", "label": 0}])
    tsv = tmp_path / "train.tsv"
    tsv.write_text("index\tsentence1\tsentence2\tgold_label\n"
                   "0\tA dog barks.\tA dog is loud.\tneutral\n"
                   '1\tShe said "hi".\tShe spoke.\tentailment\n')
    pairs = pair_examples([mnli, anli, tsv])
    got = [(p.premise, p.hypothesis, LABELS[p.label], p.source) for p in pairs]
    assert got == [
        ("A man sleeps.", "He runs.", "contradiction", "multinli_train.jsonl"),
        ("A cat sat.", "An animal sat.", "entailment", "multinli_train.jsonl"),
        ("The shop opens at nine.", "It opens at ten.", "contradiction", "anli.jsonl"),
        ("Rain fell.", "It was wet.", "entailment", "anli.jsonl"),
        ("A dog barks.", "A dog is loud.", "neutral", "train.tsv"),
        ('She said "hi".', "She spoke.", "entailment", "train.tsv")]
    with pytest.raises(RagctlError, match="no labelled pairs"):
        pair_examples([_jsonl(tmp_path / "x.jsonl", [{"text": "nothing"}])])
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    with pytest.raises(RagctlError, match="cannot read"):
        pair_examples([bad])


def test_yes_no_questions_teach_yes_no_and_not_stated(tmp_path: Path) -> None:
    boolq = _jsonl(tmp_path / "train.jsonl", [
        {"question": "is the lake frozen in winter", "title": "Lake Tal", "answer": True,
         "passage": "The lake is frozen in winter, and people skate on it."},
        {"question": "do trains stop at oakham", "title": "Oakham", "answer": False,
         "passage": "Trains pass Oakham without stopping since the station closed."},
        {"question": "is the lake deep", "title": "Lake Mor", "answer": True,
         "passage": "The lake is deep, forty metres at its deepest."}])
    pairs = pair_examples([boolq])
    asked = {(p.hypothesis, LABELS[p.label]): p.premise for p in pairs}
    assert asked[("Is the lake frozen in winter?", "entailment")].startswith("Lake Tal. ")
    assert asked[("Do trains stop at oakham?", "contradiction")].startswith("Oakham. ")
    # the most word-overlapping other passage is on the topic but silent: neutral
    assert asked[("Is the lake frozen in winter?", "neutral")].startswith("Lake Mor. ")
    assert {p.source for p in pairs} == {"train.jsonl", "train.jsonl:neutral"}


@pytest.fixture
def policy(tmp_path: Path, fake_embedder: str) -> Path:
    root = tmp_path / "policy"
    root.mkdir()
    (root / "privacy.md").write_text(
        "# Privacy policy\n\nWe never share your location with advertisers. We keep your "
        "notes for as long as your account is open. Crash reports are sent to us only when "
        "you turn them on.\n")
    with Collection.open(load_settings(chunk_words=30), create=True) as c:
        c.lock()
        Indexer(c).run([root])
    return root


def test_a_sentence_that_contradicts_the_question_is_a_no_and_is_quoted(policy: Path) -> None:
    nli = FakeEntailment({("never share", "location"): "contradiction",
                          ("only when", "crash"): "entailment"})
    with Collection.open(load_settings()) as c, \
            Pipeline(c, reader=FakeReader(), generator=FakeGenerator(), nli=nli) as p:
        no = p.ask("Is my location shared with advertisers?", AskOptions(re_threshold=0.0))
        yes = p.ask("Are crash reports sent when I turn them on?",
                    AskOptions(re_threshold=0.0))
    assert no.kind == "yes-no" and no.answer_text == "No"
    assert no.answer == 'No. "We never share your location with advertisers." [1]'
    assert no.models["nli"] == "fake-nli" and Path(no.sources[0].path).name == "privacy.md"
    assert yes.answer_text == "Yes" and "only when you turn them on" in yes.answer
    # each sentence is read against the question itself, after its document's name
    assert any(pr.endswith(". We never share your location with advertisers.")
               and h == "Is my location shared with advertisers?" for pr, h in nli.seen)


def test_no_sentence_entails_or_contradicts_it_the_documents_do_not_say(policy: Path) -> None:
    nli = FakeEntailment()
    with Collection.open(load_settings()) as c, \
            Pipeline(c, reader=FakeReader(), generator=FakeGenerator(), nli=nli) as p:
        neutral = p.ask("Are my notes kept for as long as my account is open?",
                        AskOptions(re_threshold=0.0))
        silent = p.ask("Does the app keep my voice recordings?", AskOptions(re_threshold=0.0))
    assert neutral.abstained and neutral.answer == "" and not neutral.sources
    assert "do not say" in (neutral.abstain_reason or "")
    assert neutral.candidates and all(c["neutral"] > 0.5 for c in neutral.candidates)
    # sentences that never mention recordings are silent on it: refused, unless a
    # sentence surely decided it
    assert silent.abstained and "'recordings'" in (silent.abstain_reason or "")
    assert silent.candidates[0]["rule"] == "not stated" and "unsaid_words" in silent.rules
    with Collection.open(load_settings()) as c, \
            Pipeline(c, reader=FakeReader(), generator=FakeGenerator(), nli=nli) as p:
        read = p.ask("Does the app keep my voice recordings?", AskOptions(
            re_threshold=0.0, rules_off=frozenset({"unsaid_words"})))
    # without the rule, the entailment model alone decides: no sentence says it either way
    assert read.abstained and "no sentence found states it" in (read.abstain_reason or "")
    assert "unsaid_words" not in read.rules and "entailment" in read.candidates[0]
    with Collection.open(load_settings()) as c, \
            Pipeline(c, reader=FakeReader(), generator=FakeGenerator(),
                     nli=FakeEntailment({("never share", "recordings"): "contradiction"})
                     ) as p:
        sure = p.ask("Does the app share my voice recordings?", AskOptions(re_threshold=0.0))
    assert sure.answer_text == "No" and "never share" in sure.answer


def test_a_trained_entailment_model_exports_and_scores_like_its_torch_copy(
        tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("ctranslate2")
    from ragctl.models.entail import CT2Entailment
    from ragctl.training.entail import EntailOptions, EntailTrainer
    from ragctl.training.export import export_model
    from tests.tiny_models import hf_bert

    base = hf_bert(tmp_path / "base")
    data = _jsonl(tmp_path / "pairs.jsonl", [
        {"gold_label": LABELS[i % 3], "sentence1": "the cat sat on the mat",
         "sentence2": ["a cat sat", "the cat is a dentist", "the mat is empty"][i % 3]}
        for i in range(24)])
    run = tmp_path / "run"
    result = EntailTrainer(EntailOptions(base=str(base), batch_size=8, max_length=32,
                                         val_fraction=0.25, questions=False, denials=False),
                           [data], run).run()
    assert result.examples == 18 and result.val_examples == 6
    assert (run / "model" / "head.npz").exists()
    manifest = export_model(run, tmp_path / "nli", quantization="float32", rounding="nearest")
    assert manifest["kind"] == "nli" and manifest["backend"] == "ct2-pair"
    assert manifest["labels"] == list(LABELS)
    model = CT2Entailment(tmp_path / "nli")
    probs = model.probs(["the cat sat on the mat", "the mat"], "a cat sat")
    assert probs.shape == (2, 3) and np.allclose(probs.sum(1), 1.0, atol=1e-5)
    # the same numbers as the trained torch model: tokens, pooling and head agree
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(run / "model"))
    torch_model = AutoModel.from_pretrained(str(run / "model")).eval()
    head = np.load(run / "model" / "head.npz")
    enc = tok(["the cat sat on the mat", "the mat"], ["a cat sat"] * 2, padding=True,
              return_tensors="pt")
    with torch.no_grad():
        states = torch_model(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).float()
    z = ((states * mask).sum(1) / mask.sum(1)).numpy() @ head["weight"].T + head["bias"]
    expected = np.exp(z - z.max(1, keepdims=True))
    expected /= expected.sum(1, keepdims=True)
    assert np.allclose(probs, expected, atol=1e-3)


def test_statements_are_asked_as_yes_no_questions_only_when_the_subject_is_clear() -> None:
    from ragctl.training.entail import as_question

    assert as_question("The man is not sleeping.") == "Is the man not sleeping?"
    assert as_question("There is a dog in the park.") == "Is there a dog in the park?"
    assert as_question("They have been waiting.") == "Have they been waiting?"
    assert as_question("The flight was tracked by radar.") == "Was the flight tracked by radar?"
    # no auxiliary, a main-verb "has", or a clause before the auxiliary: not asked
    assert as_question("A man rides his motorcycle.") is None
    assert as_question("He has a hat.") is None
    assert as_question("I can't do it.") is None
    assert as_question("He smiled and it is to the left.") is None


def test_denying_a_hypothesis_gives_pairs_that_follow_from_the_labelled_one(
        tmp_path: Path) -> None:
    from ragctl.training.entail import negated

    assert negated("Two dogs are running.") == "Two dogs are not running."
    assert negated("The man is not sleeping.") == "The man is sleeping."
    assert negated("A man rides.") is None
    data = _jsonl(tmp_path / "nli.jsonl", [
        {"gold_label": "entailment", "sentence1": "The shop is closed on Sundays.",
         "sentence2": "The shop is closed on some days."},
        {"gold_label": "contradiction", "sentence1": "The shop opens every day.",
         "sentence2": "The shop is closed on Sundays."}])
    got = {(p.premise, p.hypothesis, LABELS[p.label])
           for p in pair_examples([data], questions=True, denials=True)}
    # P entails H: P contradicts not-H; not-H contradicts P, asked or stated
    assert ("The shop is closed on Sundays.", "The shop is not closed on some days.",
            "contradiction") in got
    assert ("The shop is not closed on some days.", "The shop is closed on Sundays.",
            "contradiction") in got
    assert ("The shop is not closed on some days.", "Is the shop closed on Sundays?",
            "contradiction") in got
    # P contradicts H: P entails not-H
    assert ("The shop opens every day.", "The shop is not closed on Sundays.",
            "entailment") in got


def test_an_interrupted_entailment_run_resumes_to_the_same_weights(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from ragctl.training.entail import EntailOptions, EntailTrainer
    from tests.tiny_models import hf_bert

    base = hf_bert(tmp_path / "base")
    data = _jsonl(tmp_path / "pairs.jsonl", [
        {"gold_label": LABELS[i % 3], "sentence1": "the cat sat on the mat",
         "sentence2": ["a cat sat", "the cat is a dentist", "the mat is empty"][i % 3]}
        for i in range(16)])

    def opts(epochs: int) -> EntailOptions:
        return EntailOptions(base=str(base), epochs=epochs, batch_size=4, max_length=32,
                             val_fraction=0.25)


    whole = EntailTrainer(opts(2), [data], tmp_path / "whole").run()

    def interrupt(log: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):  # stopped after its first epoch's checkpoint
        EntailTrainer(opts(2), [data], tmp_path / "halves").run(on_epoch=interrupt)
    resumed = EntailTrainer(opts(2), [data], tmp_path / "halves").run(resume=True)
    assert resumed.resumed_from == 1 and len(resumed.history) == 2
    assert [h.train_loss for h in resumed.history] == [h.train_loss for h in whole.history]
    with pytest.raises(RagctlError, match="already holds a training run"):
        EntailTrainer(opts(1), [data], tmp_path / "whole").run()


def test_the_span_reader_trains_on_the_shared_loop_and_exports(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from ragctl.training.export import export_model
    from ragctl.training.reader import ReaderOptions, ReaderTrainer
    from tests.tiny_models import hf_bert

    base = hf_bert(tmp_path / "base")
    paragraphs = [("the cat sat on the mat", "where is the cat", "mat"),
                  ("the dentist appointment is thursday", "when is the appointment",
                   "thursday"),
                  ("the rent is euros", "what is the rent", "euros"),
                  ("the office is in lisbon", "where is the office", "lisbon")]
    squad = {"version": "1.1", "data": [
        {"title": f"t{i}", "paragraphs": [{"context": c, "qas": [
            {"id": f"q{i}", "question": q, "answers": [{"text": a,
                                                        "answer_start": c.index(a)}]}]}]}
        for i, (c, q, a) in enumerate(paragraphs * 2)]}
    data = tmp_path / "squad.json"
    data.write_text(json.dumps(squad))
    run = tmp_path / "run"
    result = ReaderTrainer(ReaderOptions(base=str(base), epochs=1, batch_size=2,
                                         max_length=32, val_fraction=0.25), [data], run).run()
    assert result.examples > 0 and result.best_epoch == 1 and "f1" in result.metrics
    manifest = export_model(run, tmp_path / "reader", quantization="float32",
                            rounding="nearest")
    assert manifest["kind"] == "reader" and manifest["backend"] == "ct2-span"
