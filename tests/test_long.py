from __future__ import annotations

from pathlib import Path

import numpy as np

from ragctl.ask.longform import (
    Facet,
    LongOptions,
    Nugget,
    bm25_scores,
    cluster,
    fluency_pass,
    nuggets_from_filter,
    render,
    summarize_facets,
    verify_span,
    with_leads,
)
from ragctl.ask.pipeline import Pipeline
from ragctl.ask.verify import LexicalEmbeddingSupport
from ragctl.config import load_settings
from ragctl.index.indexer import Indexer
from ragctl.records import Hit, ScoredSentence, Sentence
from ragctl.store.collection import Collection
from tests.fakes import FakeGenerator


def nug(i: int, text: str, score: float = 0.5) -> Nugget:
    return Nugget(i, text, Sentence(id=i, passage_id=i, path=f"/d{i}.txt", end_char=len(text),
                                    text=text), score, 0.5)


def scripted(*replies: str) -> FakeGenerator:
    return FakeGenerator(replies=replies, name="scripted")


def test_cluster_groups_near_duplicates() -> None:
    base = np.eye(4, dtype=np.float32)
    vecs = np.stack([base[0], base[0] * 0.99 + base[1] * 0.14, base[2], base[3], base[2]])
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    groups = sorted(cluster(vecs, threshold=0.2))
    assert groups == [[0, 1], [2, 4], [3]]
    assert cluster(vecs[:3], threshold=0.9) == [[0], [1], [2]]  # fewer than four: singletons


def test_bm25_ranks_the_matching_facet_first() -> None:
    s = bm25_scores("boiler service october", ["rent is 750 euros", "the boiler service is "
                                               "in october", "train to porto"])
    assert int(np.argmax(s)) == 1 and s[0] == 0 and s[2] == 0


def test_span_must_be_copied_verbatim() -> None:
    s = "The   boiler is serviced every October by an engineer."
    assert verify_span(s, "serviced every October") is not None
    assert verify_span(s, "serviced each October") is None
    assert verify_span(s, "October") is None  # too short to be a nugget


def test_verify_fallback_replaces_unsupported_summary() -> None:
    facet = Facet((nug(0, "The rent is 750 euros per month.", 0.9),
                   nug(1, "Rent is due on the first of the month.", 0.4)), 0.8)
    good = scripted("The rent of 750 euros is due on the first of the month.")
    out = summarize_facets(good, LexicalEmbeddingSupport(), "rent?", [facet], {0: 1, 1: 2},
                           words=100)
    assert not out[0].fallback and out[0].citations == [1, 2]
    bad = scripted("Penguins enjoy cold weather in Antarctica every winter.")
    out = summarize_facets(bad, LexicalEmbeddingSupport(), "rent?", [facet], {0: 1, 1: 2},
                           words=100)
    assert out[0].fallback and out[0].text == "The rent is 750 euros per month."
    assert out[0].citations == [1]
    assert render(out) == "The rent is 750 euros per month [1]."
    # worded like its nuggets, but with a fact of its own: a number, a name, or several
    # words they never say
    for added in ("The rent of 850 euros is due on the first of the month.",
                  "The rent of 750 euros is due to Madrid on the first of the month.",
                  "The landlord's bank account takes the rent of 750 euros each month."):
        out = summarize_facets(scripted(added), LexicalEmbeddingSupport(), "rent?", [facet],
                               {0: 1, 1: 2}, words=100)
        assert out[0].fallback and out[0].text == "The rent is 750 euros per month.", added


def test_nuggets_hold_the_budget_then_only_strong_sentences() -> None:
    def sent(i: int, score: float, kept: bool = False) -> ScoredSentence:
        text = f"Sentence {i} says something about the question in ten words."
        return ScoredSentence(Sentence(id=i, passage_id=i, path="/d.txt", text=text), score,
                              kept)

    scored = [sent(0, 0.9, True)] + [sent(i, 0.2 - i / 100) for i in range(1, 8)]
    # 10 words a sentence: four of them hold a 40-word budget, weak or not; no more
    assert [n.sentence.id for n in nuggets_from_filter(scored, {}, words=40)] == [0, 1, 2, 3]
    # past the budget only sentences within the floor of the best join
    scored[6] = sent(6, 0.5)
    assert [n.sentence.id for n in nuggets_from_filter(scored, {}, words=40)] == [0, 6, 1, 2]
    assert [n.sentence.id for n in nuggets_from_filter(scored, {}, words=10)] == [0, 6]


def test_the_first_sentence_of_a_document_the_question_names_is_a_nugget() -> None:
    def doc(pid: int, title: str, *texts: str) -> tuple[Hit, list[Sentence]]:
        return (Hit(path=f"/{pid}.md", title=title, passage_id=pid),
                [Sentence(id=pid * 10 + k, passage_id=pid, path=f"/{pid}.md", text=t)
                 for k, t in enumerate(texts)])

    docs = [doc(1, "Ed Wood (film)", "Ed Wood is a 1994 American biographical film.",
                "It was directed by Tim Burton."),
            doc(2, "Scott Derrickson", "Scott Derrickson (born 1966) is an American director.",
                "He lives in Los Angeles."),
            doc(3, "Tyler Bates", "Tyler Bates is an American musician.")]
    hits = [h for h, _ in docs]
    per_passage = {h.passage_id: ss for h, ss in docs}
    scored = [ScoredSentence(s, 0.1 if s.id != 21 else 0.8, s.id == 21)
              for _, ss in docs for s in ss]
    q = "Were Scott Derrickson and Ed Wood of the same nationality?"
    out = {s.sentence.id: s for s in with_leads(q, hits, per_passage, scored)}
    assert out[20].kept and out[20].score == 0.8  # Scott Derrickson's own first sentence
    assert out[10].kept  # "Ed Wood (film)" is named as "Ed Wood"
    assert not out[30].kept and not out[11].kept and out[21].kept  # the rest as scored
    assert [s.sentence.id for s in nuggets_from_filter(list(out.values()), {}, words=10)
            ][:3] == [10, 20, 21]


def test_word_budget_stops_facets() -> None:
    facets = [Facet((nug(i, f"Fact number {i} is about topic {i} here."),), 1.0) for i in range(5)]
    gen = scripted(*[f"Fact number {i} is about topic {i} here." for i in range(5)])
    out = summarize_facets(gen, LexicalEmbeddingSupport(), "q", facets,
                           {i: i + 1 for i in range(5)}, words=20)
    assert sum(len(s.text.split()) for s in out) <= 20
    assert len(out) == 2  # 8 + 8; 4 words left are no sentence: not a cut-off third
    gen = scripted(*[f"Fact number {i} is about topic {i} here." for i in range(5)])
    out = summarize_facets(gen, LexicalEmbeddingSupport(), "q", facets,
                           {i: i + 1 for i in range(5)}, words=40)
    assert len(out) == 5 and not any(s.text.endswith("…") for s in out)  # budget filled


def test_fluency_keeps_citations_or_is_rejected() -> None:
    text = "Rent is 750 euros [1]. The boiler is serviced in October [2]."
    ok, why = fluency_pass(scripted("Rent is 750 euros [1], and the boiler is serviced in "
                                    "October [2]."), text)
    assert why is None and "[2]" in ok
    kept, why = fluency_pass(scripted("Rent is 750 euros and the boiler works [1]."), text)
    assert kept == text and "citation" in (why or "")
    kept, why = fluency_pass(scripted("Rent [1] [3]. Boiler [2]."), text)
    assert kept == text and why


def test_long_answer_end_to_end_with_fakes(tmp_path: Path, fake_embedder: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("The rent is 750 euros per month. The boiler is serviced "
                                "every October.")
    (docs / "b.txt").write_text("The rent is 750 euros per month.\n\nThe deposit was "
                                "900 euros and was paid in March.")
    (docs / "c.txt").write_text("Trains to Porto leave at nine.")
    s = load_settings(chunk_words=8)
    with Collection.open(s, create=True) as c:
        c.lock()
        Indexer(c).run([docs])
    gen = scripted("The rent is 750 euros per month.", "The deposit was 900 euros.",
                   "The boiler is serviced every October.")
    with Collection.open(s) as c, Pipeline(c, generator=gen) as p:
        a = p.ask_long("What about the rent, the deposit and the boiler?",
                       LongOptions(abstain=False, filter_threshold=0.0, max_nuggets=6,
                                   words=60, cluster_threshold=0.2))
    assert a.answer and a.sources and a.facets
    # the same rent sentence from two documents is one facet with both sources
    rent = [f for f in a.facets if "750" in f["text"]]
    assert len(rent) == 1
    ids = set(rent[0]["nugget_ids"])
    assert {Path(n["path"]).name for n in a.nuggets if n["id"] in ids} == {"a.txt", "b.txt"}
    assert len(rent[0]["citations"]) == 2  # one facet, both sources
    assert a.words <= 60
    assert a.support_rate > 0
    assert {Path(n["path"]).name for n in a.nuggets} >= {"a.txt", "b.txt"}
    d = a.to_dict()
    assert d["schema"] == "ragctl.long-answer/1" and "timings" in d
