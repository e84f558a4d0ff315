"""Fit ask's defaults on the DEVELOPMENT split only (SQuAD even articles, NQ first 2,000).

1. The similarity fallback of the relevance estimator: a logistic curve
   P(passage holds the answer | cosine) fitted on (cosine, has-answer) pairs of the
   top-20 passages of SQuAD dev questions.
2. The abstention threshold: the best relevance among the kept top-k passages for
   answerable SQuAD dev questions vs NQ questions asked of the SQuAD corpus (which it
   does not cover); reports abstention rates and the "no answer" F1 per threshold.
3. With --generate N: the context filter's top-m / threshold and the generator (the
   registry's models) by exact match on N dev questions.

Writes bench/results/calibrate.json (calibrate-NAME.json with --relevance NAME). Never
reads the report split.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import print_table, save
from bench.squad_index import nq_questions, squad_index, squad_questions


def fit_logistic(x: np.ndarray, y: np.ndarray, iters: int = 50) -> tuple[float, float]:
    """Newton's method for P(y=1|x) = sigmoid(a·x + b); returns (center, scale)."""
    a, b = 1.0, 0.0
    X = np.stack([x, np.ones_like(x)], axis=1)
    w = np.array([a, b])
    for _ in range(iters):
        p = 1 / (1 + np.exp(-(X @ w)))
        grad = X.T @ (y - p)
        hess = -(X.T * (p * (1 - p))) @ X - 1e-6 * np.eye(2)
        w = w - np.linalg.solve(hess, grad)
    a, b = float(w[0]), float(w[1])
    return -b / a, 1 / a


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=600)
    ap.add_argument("--nq", type=int, default=300)
    ap.add_argument("--generate", type=int, default=0,
                    help="also tune filter and generator by exact match on N questions")
    ap.add_argument("--generators", nargs="*", default=None,
                    help="registry names to compare (default: all)")
    ap.add_argument("--relevance", default=None,
                    help="a trained relevance model (name or folder): refit its calibration "
                         "on the same dev pairs as the fallback's curve and choose the "
                         "abstention threshold with it (--write-calibration stores the fit "
                         "in its manifest)")
    ap.add_argument("--write-calibration", action="store_true")
    ap.add_argument("--configs", nargs="*", default=None,
                    help="filter settings to try as TOP_M:THRESHOLD (or 'full')")
    args = ap.parse_args()

    name, articles = squad_index("dev")
    from ragctl.ask.retrieve import Retriever
    from ragctl.config import load_settings
    from ragctl.models.relevance import SimilarityRelevance
    from ragctl.store.collection import Collection
    from ragctl.text import contains_answer

    squad = squad_questions(articles, args.questions, seed=1)
    nq = nq_questions("train", args.nq, seed=1)
    settings = load_settings(index=name)
    result: dict[str, Any] = {"split": "dev", "squad_questions": len(squad), "nq": len(nq)}
    with Collection.open(settings) as c:
        retriever = Retriever(c)
        rows = []  # (question kind, question, answers, hits)
        for q in squad:
            rows.append(("squad", q["question"], q["answers"],
                         retriever.search(q["question"], limit=20)))
        for q in nq:
            rows.append(("nq", q["question"], q["answers"],
                         retriever.search(q["question"], limit=20)))
        xs = np.array([h.similarity for kind, _, _, hits in rows if kind == "squad"
                       for h in hits])
        ys = np.array([float(contains_answer(h.text, ans)) for kind, _, ans, hits in rows
                       if kind == "squad" for h in hits])
        center, scale = fit_logistic(xs, ys)
        result.update(similarity_center=center, similarity_scale=scale,
                      positive_rate=float(ys.mean()))
        re: Any = SimilarityRelevance(center=center, scale=scale)
        scored: list[np.ndarray] | None = None  # a trained model's probabilities per row
        if args.relevance:
            re, scored = calibrate_model(args.relevance, rows, settings, result)

        best, answerable = [], []
        for i, (_kind, question, ans, hits) in enumerate(rows):
            probs = scored[i] if scored is not None else re.score(question, hits)
            top = np.argsort(-probs, kind="stable")[:5]
            best.append(float(probs[top].max()))
            answerable.append(any(contains_answer(hits[i].text, ans) for i in top))
        best_a, ans_a = np.array(best), np.array(answerable)
        table = []
        grid = [*np.round(np.arange(0.01, 0.10, 0.01), 2), *np.round(np.arange(0.1, 0.96, 0.05), 2)]
        for t in grid:
            abst = best_a < t
            tp = int(np.sum(abst & ~ans_a))
            fp = int(np.sum(abst & ans_a))
            fn = int(np.sum(~abst & ~ans_a))
            prec = tp / (tp + fp) if tp + fp else 0.0
            rec = tp / (tp + fn) if tp + fn else 0.0
            f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
            table.append({"threshold": float(t), "false_abstain": fp / max(1, int(ans_a.sum())),
                          "abstain_unanswerable": rec, "precision": prec, "f1": f1})
        result["abstention"] = table
        ok = [r for r in table if r["false_abstain"] <= 0.03]
        chosen = max(ok, key=lambda r: r["threshold"]) if ok else table[0]
        result["re_threshold"] = chosen["threshold"]
        if args.relevance and args.write_calibration:
            a, b = re.scorer.calibration
            update_manifest(re.scorer.path, calibration=[round(a, 6), round(b, 6)],
                            calibration_data=(
                                "SQuAD dev (even articles): top-20 passages of "
                                f"{sum(r[0] == 'squad' for r in rows)} questions, has-answer "
                                "labels (bench/calibrate.py)"),
                            abstain_threshold=chosen["threshold"])
        print_table(f"similarity → P(answer) fit on {len(xs)} dev passages", [
            ("center", f"{center:.3f}", ""), ("scale", f"{scale:.3f}", ""),
            ("share of passages with the answer", f"{ys.mean():.3f}", "")])
        print_table("abstention on dev (SQuAD answerable vs NQ / no answer in top-5)", [
            (f"t={r['threshold']:.2f}", f"false-abstain {r['false_abstain']:.3f}  "
             f"catch {r['abstain_unanswerable']:.3f}  F1 {r['f1']:.3f}", "")
            for r in table])
        print(f"chosen re_threshold (most abstention with ≤ 3% false abstention): "
              f"{chosen['threshold']}")

        if args.generate:
            result["generation"] = tune_generation(c, retriever, re, squad[: args.generate],
                                                   args.generators, args.configs)
    out = f"calibrate-{Path(args.relevance).name}" if args.relevance else "calibrate"
    print(f"\nwrote {save(out, result)}")


def calibrate_model(name: str, rows: list[Any], settings: Any, result: dict[str, Any]
                    ) -> tuple[Any, list[np.ndarray]]:
    """Platt-fit a trained estimator's logits on the SQuAD dev pairs (has-answer labels).

    Returns the estimator, re-calibrated, and its probabilities for every row."""
    from ragctl.models.registry import model_dir
    from ragctl.models.relevance import CT2Relevance
    from ragctl.text import contains_answer, passage_text
    from ragctl.training.trainer import fit_calibration

    est = CT2Relevance(model_dir(name), device=settings.device,
                       compute_type=settings.compute_type)
    z_rows = []
    for _kind, question, _ans, hits in rows:  # as CT2Relevance.score: near-ties refined
        pairs = [(question, passage_text(h.title, h.text)) for h in hits]
        z_rows.append(est.scorer.refine(pairs, est.scorer.z(pairs)))
    zs = [float(v) for (kind, *_), z in zip(rows, z_rows, strict=True) if kind == "squad"
          for v in z]
    ys = [float(contains_answer(h.text, ans)) for kind, _q, ans, hits in rows
          if kind == "squad" for h in hits]
    a, b = fit_calibration(zs, ys)
    old = est.scorer.calibration
    est.scorer.calibration = (a, b)
    result["relevance_model"] = {"name": name, "calibration": [a, b],
                                 "previous_calibration": list(old), "pairs": len(zs)}
    print(f"{name}: calibration on {len(zs)} dev pairs {a:.4f}, {b:.4f} "
          f"(was {old[0]:.4f}, {old[1]:.4f})")
    return est, [est.scorer.probability(z) for z in z_rows]


def update_manifest(path: Path, **fields: Any) -> None:
    import json

    mf = Path(path) / "manifest.json"
    manifest = json.loads(mf.read_text())
    manifest.update(fields)
    mf.write_text(json.dumps(manifest, indent=2) + "\n")


def tune_generation(c: Any, retriever: Any, re: Any, questions: list[dict[str, Any]],
                    generators: list[str] | None, config_args: list[str] | None
                    ) -> dict[str, Any]:
    from ragctl import models
    from ragctl.ask.verify import strip_citations
    from ragctl.models.filter import SimilarityFilter
    from ragctl.models.generate import build_prompt
    from ragctl.text import contains_answer, exact_match, max_f1

    filt = SimilarityFilter(retriever.embedder)
    prepared = []
    for q in questions:
        hits = retriever.search(q["question"], limit=20)
        probs = re.score(q["question"], hits)
        kept = [hits[i] for i in np.argsort(-probs, kind="stable")[:5]]
        per_passage = c.store.sentences_of([h.passage_id for h in kept])
        sents = [s for h in kept for s in per_passage[h.passage_id]]
        scores = filt.score(q["question"], sents)
        prepared.append((q, kept, sents, scores))
    configs: list[tuple[Any, Any]] = [(1, 0.0)] + [(m, t) for m in (2, 3) for t in (0.0, 0.45)]
    if config_args:
        configs = [("full", None) if x == "full" else (int(x.split(":")[0]),
                                                       float(x.split(":")[1]))
                   for x in config_args]
    else:
        configs.append(("full", None))
    out: dict[str, Any] = {"questions": len(questions), "configs": []}
    rows = []
    for gen_name in generators or models.registered("generator"):
        gen = models.load("generator", gen_name)
        for m, t in configs:
            em = f1 = acc = 0.0
            recall = 0.0
            for q, _kept, sents, scores in prepared:
                if m == "full":
                    ctx = [s.text for s in sents]
                else:
                    order = np.argsort(-scores, kind="stable")
                    keep = sorted([int(i) for i in order[:m] if scores[i] >= t] or [int(order[0])])
                    ctx = [sents[i].text for i in keep]
                recall += any(contains_answer(s, q["answers"]) for s in ctx)
                text, _ = strip_citations(gen.complete(build_prompt(q["question"], ctx)).text)
                em += exact_match(text, q["answers"])
                f1 += max_f1(text, q["answers"])
                acc += contains_answer(text, q["answers"])
            n = len(prepared)
            row = {"generator": gen_name, "top_m": m, "threshold": t, "em": 100 * em / n,
                   "f1": 100 * f1 / n, "accuracy": 100 * acc / n,
                   "answer_sentence_recall": 100 * recall / n}
            out["configs"].append(row)
            rows.append((f"{gen_name} m={m} t={t}",
                         f"EM {row['em']:.1f}  F1 {row['f1']:.1f}  acc {row['accuracy']:.1f}  "
                         f"ctx-recall {row['answer_sentence_recall']:.1f}", ""))
            print(rows[-1], file=sys.stderr)
        gen.close()
    print_table(f"generation on {len(prepared)} dev questions", rows)
    best = max((r for r in out["configs"] if r["top_m"] != "full"), key=lambda r: r["f1"])
    out["best"] = best
    return out


if __name__ == "__main__":
    main()
