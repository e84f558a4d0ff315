"""Fit the span reader's answerability on the real-document DEV sets (never the test split).

The answerability model (a logistic over a span's signals, :data:`FEATURES`) picks the span
``ask`` answers with, the most probably answerable of the reader's candidates, and answers
only when that probability reaches the threshold. bench/reader.py fits it on SQuAD's dev
questions (Wikipedia paragraphs, crowd questions); this fits it on the questions people
asked of their own kinds of documents: the dev sets of bench/benchmark.py, read from one
run of it (``--name``, which keeps each answer's candidate spans and their signals).

Each candidate is labelled right when the benchmark would judge it right as the answer
(never for a question the documents do not answer). A question counts as done when the
span chosen is answered and right, or nothing is answered and the documents hold no
answer; the threshold is the one that does the most questions. Leave-one-set-out: the
model fitted on all other sets, and its threshold, are scored on each set in turn against
the reader's own model, so the table says what a refit does on documents it did not see.
A span the vetoes rule out (:func:`ragctl.ask.rules.vetoed`) stays ruled out. Questions
answered by another path (a table's cell, a computation, yes or no) are not counted.

With --write the reader's own model's threshold fitted on every set goes into its manifest
(``answering``): refitting its weights on these sets did worse on the set held out.
Prints the table and writes bench/results/answering-<name>.json. Usage:
python bench/answering.py bench/results/dev-s42b.json [--write models/minilm-reader]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.benchmark import SETS, spec_of, split_of
from bench.common import print_table, save
from bench.realdocs import judge
from ragctl.ask.rules import vetoed

FEATURES = ("margin", "relevance", "filter", "re_best", "overlap", "missing_numbers",
            "missing_dates", "missing_names", "type")
C = 1.0  # the logistic fit's inverse regularization


def rows_of(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per dev question that reached the reader's spans: its set, whether the
    documents answer it, its candidates (each with ``right``)."""
    specs = {name: spec_of(name)["questions"] for name in SETS if split_of(name) == "dev"}
    out = []
    for r in results["questions"]:
        cands = r.get("candidates") or ([r["best"]] if r.get("best") else [])
        if r["set"] not in specs or not cands or r["answer_kind"] not in ("span", None, ""):
            continue
        q = specs[r["set"]][r["n"] - 1]
        if q["q"] != r["question"] or q["kind"] == "long":
            continue
        for c in cands:
            c["right"] = q["kind"] != "unanswerable" and judge(
                q, {"answer": c["answer"]}, 0) == "right"
        out.append({"set": r["set"], "answerable": q["kind"] != "unanswerable",
                    "candidates": cands})
    return out


def _p(c: dict[str, Any], model: dict[str, Any]) -> float:
    if vetoed(c):
        return 0.0
    z = model["bias"] + sum(w * c.get(f, 0.0) for w, f in zip(model["weights"],
                                                              model["features"], strict=True))
    return float(1 / (1 + np.exp(-z)))


def chosen(row: dict[str, Any], model: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    """The candidate the model finds most probably answerable, and that probability."""
    return max(((_p(c, model), c) for c in row["candidates"]), key=lambda x: x[0])


def done(rows: list[dict[str, Any]], model: dict[str, Any], t: float) -> int:
    """Questions done: answered and right, or refused when the documents hold no answer."""
    n = 0
    for r in rows:
        p, c = chosen(r, model)
        n += (c["right"] if p >= t else not r["answerable"])
    return n


def best_threshold(rows: list[dict[str, Any]], model: dict[str, Any]) -> float:
    grid = [round(x, 2) for x in np.arange(0.05, 0.96, 0.01)]
    return max(grid, key=lambda t: (done(rows, model, t), -abs(t - 0.5)))


def fit(rows: list[dict[str, Any]]) -> dict[str, Any]:
    from sklearn.linear_model import LogisticRegression

    cands = [c for r in rows for c in r["candidates"] if not vetoed(c)]
    x = np.array([[c.get(f, 0.0) for f in FEATURES] for c in cands])
    y = np.array([int(c["right"]) for c in cands])
    m = LogisticRegression(C=C, max_iter=2000).fit(x, y)
    model = {"features": list(FEATURES), "weights": [round(float(w), 5) for w in m.coef_[0]],
             "bias": round(float(m.intercept_[0]), 5)}
    model["threshold"] = best_threshold(rows, model)
    return model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--reader", type=Path, default=Path("models/minilm-reader"))
    ap.add_argument("--write", action="store_true",
                    help="put the threshold fitted on every dev set into the reader's manifest")
    args = ap.parse_args()
    results = json.loads(args.results.read_text())
    rows = rows_of(results)
    manifest = json.loads((args.reader / "manifest.json").read_text())
    own = manifest["answering"]["answerability"]
    sets = sorted({r["set"] for r in rows})
    table, per_set = [], {}
    for name in sets:
        held = [r for r in rows if r["set"] == name]
        model = fit([r for r in rows if r["set"] != name])
        t = best_threshold([r for r in rows if r["set"] != name], own)
        a, b = done(held, own, own["threshold"]), done(held, model, model["threshold"])
        per_set[name] = {"questions": len(held), "reader": a, "refit": b,
                         "threshold": model["threshold"], "reader_threshold": t,
                         "reader_at_threshold": done(held, own, t)}
        table.append((name, f"{len(held)}",
                      f"{a} → {per_set[name]['reader_at_threshold']} (at {t}) → {b}"))
    a = sum(v["reader"] for v in per_set.values())
    b = sum(v["refit"] for v in per_set.values())
    at = sum(v["reader_at_threshold"] for v in per_set.values())
    table.append(("all (each set held out)", f"{len(rows)}", f"{a} → {at} → {b}"))
    whole = fit(rows)
    print_table(f"questions done: the reader's answerability → its threshold refit → the "
                f"model refit, on the other sets ({args.results.name})",
                [("set", "questions", "done"), *table])
    print(f"the reader's model, its threshold fitted on every set: "
          f"{best_threshold(rows, own)}")
    print(f"fitted on every set: {json.dumps(whole)}; done on them "
          f"{done(rows, whole, whole['threshold'])} (the reader's: "
          f"{done(rows, own, own['threshold'])})")
    save(f"answering-{args.results.stem}", {
        "results": args.results.name, "questions": len(rows), "features": list(FEATURES),
        "per_set": per_set, "held_out": {"reader": a, "refit": b}, "model": whole})
    if args.write:  # the threshold: refitting the weights did worse on sets held out
        t, was = best_threshold(rows, own), own["threshold"]
        manifest["answering"]["answerability"]["threshold"] = t
        manifest["answering"]["threshold_fitted_on"] = (
            f"the real-document dev sets' questions that reached the reader's spans "
            f"({len(rows)}, {args.results.name}; bench/answering.py): {t}, from "
            f"{was}; held out a set at a time, {a} → {at} questions done")
        (args.reader / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        print(f"wrote {args.reader / 'manifest.json'}")


if __name__ == "__main__":
    main()
