"""Fit the span reader's answerability on the DEVELOPMENT split (never the report split).

Over an index of the SQuAD dev split whose answer sentences were deleted for some questions
(bench/answerable.py), built from the dev questions the reader's training held out (it
trained on the others, and on their holed paragraphs as no-answer examples, so its scores on
them flatter it; --all-dev takes them all anyway), every question of three sets —
answerable, on-topic unanswerable, off-topic (NQ dev questions) — goes through `ask` with no
thresholds, and each answer span it considered is kept with its features (the reader's span
score over its null score, the relevance of its passage, the filter's score of its sentence,
whether it is of the type the question asks for) and whether it is right (F1 ≥ 0.5 with a
gold answer; never for the unanswerable sets). A logistic model fitted on those spans both
ranks the spans (is this span right?); a second one, on each question's best span and the
relevance of the best passage, says whether the documents answer at all; its threshold is
the largest that abstains on at most 5% of the answerable questions whose answer is in a
kept passage (the others the retriever did not find: turning them away is right). With
--write, both models and the threshold go into the reader's manifest (``answering``).

Prints the tables and writes bench/results/reader-dev.json. Usage:
python bench/reader.py --reader minilm-reader [--write] [--passages 1 2 3 5] [--all-dev]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.answerable import HeldOut, answerable_index, held_out, holes_index, question_sets
from bench.common import print_table, save
from ragctl.ask.answer import shortest_of_near_ties
from ragctl.ask.rules import vetoed

FALSE_ABSTAIN = 0.05  # the most answerable questions the default may turn away
CANDIDATES = 20  # spans kept per question


def run(indexes: dict[str, str], reader: str, sets: dict[str, list[dict[str, Any]]],
        passages: int) -> list[dict[str, Any]]:
    """One row per question: its set, gold answers, the relevance gate's best score and the
    candidates' features."""
    from ragctl.ask.pipeline import AskOptions, Pipeline
    from ragctl.config import load_settings
    from ragctl.store.collection import Collection
    from ragctl.text import contains_answer, max_f1

    rows = []
    for index in dict.fromkeys(indexes[kind] for kind in sets):  # models loaded once each
        settings = load_settings(index=index, reader=reader)
        with Collection.open(settings) as c, Pipeline(c) as pipe:
            # every span of the reader's top ones, not the five an answer lists: the fit
            # then chooses among the same spans whatever order the manifest's model gave
            opts = AskOptions.from_settings(settings, re_threshold=0.0, answer_threshold=0.0,
                                            reader_passages=passages, candidates=CANDIDATES)
            for kind, q in ((k, q) for k, qs in sets.items() if indexes[k] == index
                            for q in qs):
                a = pipe.ask(q["question"], opts)
                kept = [p.relevance for p in a.passages if p.kept]
                found = bool(q["answers"]) and any(contains_answer(p.text, q["answers"])
                                                   for p in a.passages if p.kept)
                # a rule's candidates (a table's computation) may carry no answer text
                cands = [{**cand, "right": positive(kind)
                          and max_f1(cand.get("answer", ""), q["answers"]) >= 0.5,
                          "f1": max_f1(cand.get("answer", ""), q["answers"])
                          if q["answers"] else 0.0}
                         for cand in a.candidates]
                rows.append({"set": kind, "question": q["question"], "answers": q["answers"],
                             "re_best": max(kept, default=0.0), "kind": a.kind,
                             "found": found, "answer": a.answer_text,
                             "right": positive(kind)
                             and max_f1(a.answer_text, q["answers"]) >= 0.5,
                             "candidates": cands, "seconds": a.timings.get("total", 0.0)})
    return rows


def reader_held_out(reader: str) -> HeldOut:
    """The dev questions the reader's training held out, from its manifest's record."""
    from ragctl import models

    manifest = json.loads((models.model_dir(reader) / "manifest.json").read_text())
    training = manifest.get("training") or {}
    if not training.get("data"):
        sys.exit(f"bench: {reader} records no training data; use --all-dev")
    root = Path(__file__).resolve().parents[1]
    data = [str(p if Path(p).is_absolute() else root / p) for p in training["data"]]
    return held_out(data, seed=int(training.get("seed", 0)))


def re_threshold() -> float:
    """The relevance estimator's own threshold: quoted and yes/no answers need a passage
    that reaches it (span answers are judged by answerability)."""
    from ragctl import models
    from ragctl.config import load_settings

    settings = load_settings()
    return float(models.load("relevance", settings.relevance, settings).threshold)


RANKING = ("margin", "relevance", "filter", "type")
# The answer type is left out of answerability: on the dev sets it mostly tells typed
# questions (who, when: most off-topic ones) from untyped ones, and its fitted weight made a
# span of the wrong type *more* answerable. It still orders the spans (RANKING).
ANSWERABILITY = ("margin", "relevance", "filter", "re_best", "overlap", "missing_numbers",
                 "missing_dates", "missing_names")
# The sets: the first three from SQuAD's dev split (bench/answerable.py); with --squad2, two
# more from SQuAD 2.0's training set: its crowd-written unanswerable questions (on the
# subject of their article, some asking what it does not say, some swapping a name, a
# number or a word for its opposite) and answerable questions of the same articles.
KINDS = ("answerable", "on-topic", "off-topic", "answerable-crowd", "unanswerable-crowd")


def read_by_reader(row: dict[str, Any]) -> bool:
    """Whether a question's answer is the reader's span (its candidates carry the span's
    signals), not a rule's (a labelled field, a table cell)."""
    return row["kind"] == "span" and all("margin" in c for c in row["candidates"])


def positive(kind: str) -> bool:
    """Whether the questions of a set are answerable."""
    return kind.startswith("answerable")


def squad2_sets(path: Path, n: int, seed: int = 0
                ) -> tuple[str, dict[str, list[dict[str, Any]]]]:
    """Index the articles of a SQuAD 2.0 training file (one file per paragraph, in the
    bench home, as ``squad2-train``) and give its crowd-written unanswerable questions and
    as many answerable ones of the same articles, ``n`` of each at most."""
    import random

    from bench.common import write_paragraphs
    from bench.squad_index import BENCH_HOME, use_bench_home
    from ragctl.config import load_settings
    from ragctl.index.indexer import Indexer
    from ragctl.store.collection import Collection

    use_bench_home()
    data = json.loads(path.read_text())["data"]
    name = "squad2-train"
    corpus = BENCH_HOME / "corpora" / name
    if not corpus.exists():
        write_paragraphs(data, corpus)
    with Collection.open(load_settings(index=name), create=True) as c:
        c.lock()
        Indexer(c).run([corpus])
    with_holes = [a for a in data if any(q.get("is_impossible") for p in a["paragraphs"]
                                         for q in p["qas"])]
    qas = [(a["title"], q) for a in with_holes for p in a["paragraphs"] for q in p["qas"]]
    rng = random.Random(seed)
    no = [{"question": q["question"], "answers": [], "title": t}
          for t, q in qas if q.get("is_impossible")]
    yes = [{"question": q["question"], "answers": [x["text"] for x in q["answers"]],
            "title": t} for t, q in qas if not q.get("is_impossible")]
    return name, {"answerable-crowd": rng.sample(yes, min(n, len(yes))),
                  "unanswerable-crowd": rng.sample(no, min(n, len(no)))}


def _logistic(x: np.ndarray, y: np.ndarray, names: tuple[str, ...]) -> dict[str, Any]:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=1.0, max_iter=1000).fit(x, y)
    return {"features": list(names), "weights": [round(float(w), 5) for w in model.coef_[0]],
            "bias": round(float(model.intercept_[0]), 5)}


def _p(c: dict[str, Any], model: dict[str, Any]) -> float:
    z = model["bias"] + sum(w * c[f] for w, f in zip(model["weights"], model["features"],
                                                      strict=True))
    return float(1 / (1 + np.exp(-z)))


def fit(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The ranking model (is this span right?) on every candidate span, then the
    answerability model (is the question answerable?) on each question's best span."""
    spans = [r for r in rows if read_by_reader(r)]
    # which span is right is only known where there is a right one: the answerable set
    cands = [c for r in spans if positive(r["set"]) for c in r["candidates"]]
    ranking = _logistic(np.array([[c[f] for f in RANKING] for c in cands]),
                        np.array([int(c["right"]) for c in cands]), RANKING)
    tops = [(r, best(r, ranking)[1]) for r in spans]
    x = np.array([[c[f] for f in ANSWERABILITY] for r, c in tops if c is not None])
    y = np.array([int(positive(r["set"])) for r, c in tops if c is not None])
    return {"ranking": ranking, "answerability": _logistic(x, y, ANSWERABILITY)}


def best(row: dict[str, Any], ranking: dict[str, Any]) -> tuple[float, dict[str, Any] | None]:
    """The candidate the ranking model puts first, and its score."""
    top, score = None, -1.0
    for c in row["candidates"]:
        p = _p(c, ranking)
        if p > score:
            top, score = c, p
    return score, top


def answerable_p(c: dict[str, Any], model: dict[str, Any]) -> float:
    return 0.0 if vetoed(c) else _p(c, model["answerability"])


def chosen(row: dict[str, Any], model: dict[str, Any]) -> dict[str, Any] | None:
    """The span ask answers with: the most probably answerable, then the best ranked, then
    the shortest of its near-ties (as ragctl.ask.answer.choose orders them)."""
    ordered = sorted(row["candidates"],
                     key=lambda c: (-answerable_p(c, model), -_p(c, model["ranking"])))
    ordered = shortest_of_near_ties(ordered, lambda c: answerable_p(c, model),
                                    lambda c: str(c["answer"]))
    return ordered[0] if ordered else None


def scored_rows(rows: list[dict[str, Any]], model: dict[str, Any], re_t: float
                ) -> list[tuple[dict[str, Any], float, dict[str, Any] | None]]:
    """(row, P(answerable), the answer it gives). A span answer's P is the answerability
    model's; a quoted or yes/no answer is given (P = 1) when the relevance gate passes."""
    out: list[tuple[dict[str, Any], float, dict[str, Any] | None]] = []
    for r in rows:
        if r["kind"] in ("quote", "yes-no"):
            out.append((r, float(r["re_best"] >= re_t), {"right": r["right"], "f1": 0.0}))
            continue
        if not read_by_reader(r):  # a rule's answer (a field, a table cell): given
            out.append((r, 1.0, {"right": r["right"], "f1": 0.0}))
            continue
        c = chosen(r, model)
        out.append((r, answerable_p(c, model) if c is not None else 0.0, c))
    return out


def point(scored: list[tuple[dict[str, Any], float, dict[str, Any] | None]], t: float
          ) -> dict[str, float]:
    """At threshold ``t``: the share of each set turned away, and how right the answered
    are."""
    row: dict[str, float] = {"threshold": float(t)}
    for kind in KINDS:
        abstain = [p < t for r, p, _ in scored if r["set"] == kind]
        row[f"abstain_{kind}"] = float(np.mean(abstain)) if abstain else 0.0
    # answerable from what was retrieved: the answer is in a kept passage
    found = [p < t for r, p, _ in scored if positive(r["set"]) and r.get("found")]
    row["abstain_found"] = float(np.mean(found)) if found else 0.0
    answered = [(r, c) for r, p, c in scored if p >= t and c is not None]
    right = [positive(r["set"]) and c["right"] for r, c in answered]
    row["answered"] = len(answered) / len(scored)
    row["accuracy_answered"] = float(np.mean(right)) if right else 1.0
    return row


def curve(rows: list[dict[str, Any]], model: dict[str, Any], re_t: float
          ) -> list[dict[str, float]]:
    """The selective-answering curve: :func:`point` over thresholds."""
    scored = scored_rows(rows, model, re_t)
    return [point(scored, t) for t in [0.0, *np.round(np.arange(0.02, 0.98, 0.02), 2)]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reader", default="minilm-reader")
    ap.add_argument("-n", "--questions", type=int, default=300)
    ap.add_argument("--passages", type=int, nargs="*", default=[3],
                    help="how many of the most relevant passages the reader reads (tried)")
    ap.add_argument("--rows", type=Path, metavar="JSON",
                    help="refit from the rows of an earlier run's results instead of asking")
    ap.add_argument("--all-dev", action="store_true",
                    help="every dev question, not only those the reader's training held out "
                    "(it learnt the others, holes included: its scores flatter them)")
    ap.add_argument("--write", action="store_true",
                    help="store the fitted model and threshold in the reader's manifest")
    ap.add_argument("--squad2", type=Path, metavar="JSON",
                    help="a SQuAD 2.0 TRAINING file (never its dev set): its crowd-written "
                    "unanswerable questions join the fit (see docs/benchmarks.md)")
    args = ap.parse_args()
    from ragctl import models

    only = None if args.all_dev else reader_held_out(args.reader)
    index = holes_index("dev", only)
    indexes = {"answerable": answerable_index("dev", only), "on-topic": index,
               "off-topic": index}
    sets = question_sets("dev", args.questions, only=only)
    if args.squad2:
        name, crowd = squad2_sets(args.squad2, args.questions)
        indexes.update(dict.fromkeys(crowd, name))
        sets.update(crowd)

    re_t = re_threshold()
    results: dict[str, Any] = {"split": "dev", "index": indexes, "reader": args.reader,
                               "questions": "all" if only is None else "held out by the reader",
                               "sets": {k: len(v) for k, v in sets.items()},
                               "re_threshold": re_t, "runs": {}}
    picked = None
    for n in args.passages:
        t0 = time.perf_counter()
        rows = (json.loads(args.rows.read_text())["runs"][str(n)]["rows"] if args.rows
                else run(indexes, args.reader, sets, n))
        if not args.rows:  # kept at once: --rows refits from them without asking again
            from bench.squad_index import BENCH_HOME

            kept = BENCH_HOME / f"reader-dev-rows-{n}.json"
            kept.write_text(json.dumps({"runs": {str(n): {"rows": rows}}}))
            print(f"rows kept in {kept} (--rows refits from them)")
        model = fit(rows)
        table = curve(rows, model, re_t)
        ok = [r for r in table if r["abstain_found"] <= FALSE_ABSTAIN]
        pick = max(ok, key=lambda r: r["threshold"]) if ok else table[0]
        model["answerability"]["threshold"] = pick["threshold"]
        em = np.mean([((c := chosen(r, model)) is not None and c["f1"] == 1.0)
                      if read_by_reader(r) else bool(r["right"])
                      for r in rows if r["set"] == "answerable"])
        results["runs"][str(n)] = {"model": model, "curve": table, "chosen": pick,
                                   "rows": rows,
                                   "em_answerable_all": float(em),
                                   "squad2": str(args.squad2) if args.squad2 else None,
                                   "seconds": time.perf_counter() - t0,
                                   "ask_p50_ms": 1000 * float(np.median(
                                       [r["seconds"] for r in rows]))}
        print_table(f"reader reads {n} passages (dev, {sum(len(v) for v in sets.values())} "
                    "questions)", [
            ("EM on answerable, answering all", f"{100 * em:.1f}", ""),
            ("answerability model", json.dumps(model), ""),
            *[(f"t={r['threshold']:.2f}",
               f"turned away: answerable {100 * r['abstain_answerable']:.1f}% (with the "
               f"answer in a kept passage {100 * r['abstain_found']:.1f}%), on-topic "
               f"{100 * r['abstain_on-topic']:.1f}%, off-topic "
               f"{100 * r['abstain_off-topic']:.1f}%"
               + (f"; crowd: answerable {100 * r['abstain_answerable-crowd']:.1f}%, "
                  f"unanswerable {100 * r['abstain_unanswerable-crowd']:.1f}%"
                  if args.squad2 else "")
               + f"; accuracy of answered {100 * r['accuracy_answered']:.1f}%", "")
              for r in table[::3]]])
        if picked is None or em > picked[1]:
            picked = (n, float(em), model)
    assert picked is not None
    results["chosen"] = {"passages": picked[0], "model": picked[2]}
    print(f"chosen: the reader reads {picked[0]} passages; answerability {picked[2]}")
    if args.write:
        from bench.calibrate import update_manifest

        path = models.model_dir(args.reader)
        update_manifest(path, answering={
            **picked[2], "fitted_on": (
                f"SQuAD dev (even articles): {sum(len(v) for v in sets.values())} questions"
                f"{'' if only is None else ' its training held out'} — answerable, on-topic "
                "with the answer sentences deleted, off-topic (NQ dev) — reading "
                f"{picked[0]} passages (bench/reader.py)")},
            reader_passages=picked[0])
        print(f"wrote the answerability model into {path / 'manifest.json'}")
    print(f"\nwrote {save('reader-dev', results)}")


if __name__ == "__main__":
    main()
