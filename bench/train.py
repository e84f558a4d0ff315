"""Trained filter and relevance models against the fallbacks, on the REPORT splits.

For SQuAD (odd articles) and NQ-oracle (last 655 lines), a fixed-seed sample of questions
goes through ``ragctl.evaluate`` (the code behind ``ragctl eval``) once per configuration:

- relevance estimator: recall@1/@5 of an answer-bearing passage among the top 20,
  retriever order vs the estimator's order (RE-RAG Table 2);
- filter: recall of the first answer-bearing sentence (is it the kept sentence?) and
  context tokens kept;
- end answers: EM / F1 with the filtered context.

Then int8 against float32 for each trained model: the same top-1 passage / sentence on
the same questions, and the median scoring time per question.

Models: ``minilm-filter`` and ``minilm-re`` (bi-encoders) from models/;
``minilm-re-hasanswer`` and the ``--from-index`` filter from bench/.home/train/home/models
(see bench/models.py). (The cross-encoder rows of docs/benchmarks.md are from an earlier
run; that architecture was removed.)
Prints tables and writes bench/results/train.json. Usage: python bench/train.py [--limit 150]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, SHARED, median, save
from bench.squad_index import use_bench_home

TRAIN_HOME = ROOT / "bench" / ".home" / "train" / "home"
DATA = {"squad": ("squad", "squad/dev-v1.1.json"),
        "nq": ("dpr", "nq_oracle/nq-open-oracle.jsonl.gz")}


def table(title: str, rows: list[dict[str, Any]], cols: list[str]) -> None:
    def cell(v: Any, col: str = "") -> str:
        if v is None:
            return ""
        if col == "refine_margin":
            return f"{v:.2f}"
        if isinstance(v, float) and (col.endswith("_ms") or col in ("speedup", "seconds",
                                                                     "context_tokens")):
            return f"{v:.2f}"
        if isinstance(v, float):
            return f"{100 * v:.1f}" if abs(v) <= 1 and not isinstance(v, bool) else f"{v:.1f}"
        return str(v)

    print(f"\n{title}\n| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(cell(r.get(c), c) for c in cols) + " |")


def model_path(name: str) -> str | None:
    for d in (ROOT / "models", TRAIN_HOME / "models"):
        if (d / name / "manifest.json").exists():
            return str(d / name)
    return None


def configs() -> dict[str, tuple[str, str]]:
    """name → (relevance, filter); only those whose models exist.

    The shipped models are bi-encoders."""
    out = {"fallbacks": ("similarity", "similarity")}
    re_kl, re_ha = model_path("minilm-re"), model_path("minilm-re-hasanswer")
    flt = model_path("minilm-filter")
    mine = model_path("minilm-filter-from-index")
    if re_kl:
        out["RE kl"] = (re_kl, "similarity")
    if re_ha:
        out["RE has-answer"] = (re_ha, "similarity")
    if flt:
        out["filter"] = ("similarity", flt)
    if mine:
        out["filter from-index"] = ("similarity", mine)
    if re_kl and flt:
        out["RE kl + filter"] = (re_kl, flt)
    return out


def from_index_filter(ds: Any, settings: Any, questions: int) -> None:
    """Train a filter on questions written from the report documents (not their questions)."""
    import os
    import subprocess

    from ragctl.eval.evaluate import index_dataset

    target = TRAIN_HOME / "models" / "minilm-filter-from-index"
    if (target / "manifest.json").exists():
        return
    index = index_dataset(ds, settings)
    work = ROOT / "bench" / ".home" / "train"
    data = work / "silver" / "from-index-squad-report.jsonl"
    env = dict(os.environ)
    cli = [sys.executable, "-P", "-m", "ragctl"]
    subprocess.run([*cli, "silver", "--from-index", index, str(data), "--questions",
                    str(questions), "--top-k", "6", "--no-passage-logprobs"], check=True,
                   env=env)
    subprocess.run([*cli, "train", "filter", "--data", str(data), "--architecture",
                    "bi-encoder", "--negatives", "8", "--batch-size", "32", "--epochs", "2",
                    "--out",
                    str(work / "runs" / "minilm-filter-from-index"), "--resume",
                    "--no-export"], check=True, env=env)
    subprocess.run([*cli, "export", "minilm-filter-from-index", "--from",
                    str(work / "runs" / "minilm-filter-from-index"), "--out", str(target)],
                   check=True, env=env)


MARGINS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)  # near-tie refinement margins tried (z units)


def agreement(ds: Any, settings: Any, name: str, limit: int, seed: int) -> list[dict[str, Any]]:
    """int8 vs float32 exports of one trained model on the same questions: one row per
    near-tie refinement margin (0 = plain int8; see ragctl.models.ct2.REFINE_MARGIN)."""
    import random

    import numpy as np

    from ragctl.ask.pipeline import Pipeline
    from ragctl.eval.evaluate import index_dataset
    from ragctl.models.ct2 import REFINE_MARGIN, CT2Scorer
    from ragctl.store.collection import Collection
    from ragctl.text import passage_text
    from ragctl.training.export import export_model

    src = ROOT / "bench" / ".home" / "train" / "runs" / name
    path = model_path(name)
    if path is None or not src.exists():
        return []
    f32 = TRAIN_HOME / "models" / f"{name}-float32"
    export_model(src, f32, quantization="float32", name=f"{name}-float32")  # never stale
    kind = json.loads((Path(path) / "manifest.json").read_text())["kind"]
    int8 = CT2Scorer(Path(path), compute_type="int8")
    ref = CT2Scorer(f32, compute_type="float32")
    default = float(int8.manifest.get("refine_margin", REFINE_MARGIN))
    index = index_dataset(ds, settings)
    examples = random.Random(seed).sample(ds.examples, min(limit, len(ds.examples)))
    same: dict[float, list[bool]] = {m: [] for m in MARGINS}
    refined = {m: 0 for m in MARGINS}
    times: dict[Any, list[float]] = {m: [] for m in (*MARGINS, "float32")}
    flips: list[float] = []  # float32's top-1 minus top-2 z where plain int8 chose otherwise
    with Collection.open(settings.replace(index=index)) as c:
        pipe = Pipeline(c)
        for ex in examples:
            hits = pipe.retriever.search(ex.question, limit=20)
            if not hits:
                continue
            if kind == "relevance":
                pairs = [(ex.question, passage_text(h.title, h.text)) for h in hits]
            else:
                pairs = [(ex.question, s.text) for h in hits[:5]
                         for s in c.store.sentences_of([h.passage_id])[h.passage_id]]
            t = time.perf_counter()
            z32 = ref.z(pairs)
            times["float32"].append(time.perf_counter() - t)
            t = time.perf_counter()
            z8 = int8.z(pairs)
            t8 = time.perf_counter() - t
            for m in MARGINS:
                int8.refine_margin = m
                t = time.perf_counter()
                z = int8.refine(pairs, z8)
                times[m].append(t8 + time.perf_counter() - t)
                refined[m] += int(not np.array_equal(z, z8))
                same[m].append(int(z.argmax()) == int(z32.argmax()))
            if not same[0.0][-1]:
                top2 = np.sort(z32)[::-1][:2]
                flips.append(round(float(top2[0] - top2[1]), 4))
    t32 = median(times["float32"])
    return [{"model": name, "kind": kind, "questions": len(same[m]), "refine_margin": m,
             "default": m == default, "top1_agreement": sum(same[m]) / max(1, len(same[m])),
             "refined_questions": refined[m] / max(1, len(same[m])),
             **({"flip_margins_z": flips} if m == 0.0 else {}),
             "int8_ms": 1000 * median(times[m]), "float32_ms": 1000 * t32,
             "speedup": t32 / median(times[m])} for m in MARGINS]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=150)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", nargs="*", default=list(DATA))
    ap.add_argument("--configs", nargs="*",
                    help="only these configurations; their rows replace those in train.json")
    ap.add_argument("--from-index-questions", type=int, default=400,
                    help="sentences to write questions for in the --from-index run (0: skip)")
    ap.add_argument("--agreement-limit", type=int, default=500,
                    help="SQuAD questions for the int8-vs-float32 comparison")
    ap.add_argument("--agreement-split", choices=("report", "dev"), default="report",
                    help="dev: choose the near-tie margin (writes train-agreement-dev.json)")
    ap.add_argument("--skip-answers", action="store_true",
                    help="retrieval, relevance and filter metrics only (no generation)")
    args = ap.parse_args()
    use_bench_home()
    from ragctl.config import load_settings
    from ragctl.eval.datasets import load
    from ragctl.eval.evaluate import EvalOptions, evaluate

    base = load_settings()
    if args.from_index_questions:
        fmt, rel = DATA["squad"]
        from_index_filter(load(SHARED / "data" / rel, fmt=fmt, split="report"), base,
                          args.from_index_questions)
    results: dict[str, Any] = {"limit": args.limit, "seed": args.seed, "datasets": {},
                               "agreement": []}
    previous = ROOT / "bench" / "results" / "train.json"
    if args.configs and previous.exists():
        old = json.loads(previous.read_text())
        results["datasets"], results["agreement"] = old["datasets"], old["agreement"]
    for dname in args.only:
        fmt, rel = DATA[dname]
        ds = load(SHARED / "data" / rel, fmt=fmt, split="report")
        rows = [r for r in results["datasets"].get(dname, [])
                if args.configs and r["config"] not in args.configs]
        for cname, (relevance, flt) in configs().items():
            if args.configs and cname not in args.configs:
                continue
            settings = base.replace(relevance=relevance, context_filter=flt)
            t = time.perf_counter()
            rep = evaluate(ds, settings, EvalOptions(
                limit=args.limit, seed=args.seed, modes=("filtered",),
                generate=not args.skip_answers))
            m = rep.modes.get("filtered", {})
            rows.append({
                "config": cname,
                "retriever_r@1": rep.retrieval.get("recall@1"),
                "retriever_r@5": rep.retrieval.get("recall@5"),
                "re_r@1": rep.relevance.get("recall@1"),
                "re_r@5": rep.relevance.get("recall@5"),
                "sentence_recall": rep.filter.get("silver_recall"),
                "context_tokens": m.get("context_tokens"),
                "em": m.get("em"), "f1": m.get("f1"),
                "seconds": time.perf_counter() - t})
            print(f"{dname} {cname}: {rows[-1]}", file=sys.stderr, flush=True)
        order = list(configs())
        rows.sort(key=lambda r: order.index(r["config"]) if r["config"] in order else 99)
        results["datasets"][dname] = rows
        table(f"{dname} report split, {args.limit} questions", rows,
                    ["config", "retriever_r@1", "retriever_r@5", "re_r@1", "re_r@5",
                     "sentence_recall", "context_tokens", "em", "f1"])
    squad_fmt, squad_rel = DATA["squad"]
    squad = load(SHARED / "data" / squad_rel, fmt=squad_fmt, split=args.agreement_split)
    if args.agreement_split == "dev":
        results["agreement"] = []
    for name in ("minilm-re", "minilm-filter"):
        wanted = [c for c in configs() if c.startswith("RE kl" if name == "minilm-re"
                                                       else "filter")]
        if args.configs and not set(wanted) & set(args.configs):
            continue
        rows = agreement(squad, base, name, args.agreement_limit, args.seed)
        if rows:
            results["agreement"] = [r for r in results["agreement"] if r["model"] != name]
            results["agreement"].extend(rows)
    if results["agreement"]:
        table(f"int8 vs float32 (SQuAD {args.agreement_split} questions; refine_margin 0 ="
              " plain int8)", results["agreement"],
              ["model", "kind", "questions", "refine_margin", "default", "top1_agreement",
               "refined_questions", "int8_ms", "float32_ms", "speedup"])
    if args.agreement_split == "dev":
        save("train-agreement-dev", {"limit": args.agreement_limit, "seed": args.seed,
                                     "agreement": results["agreement"]})
    else:
        save("train", results)


if __name__ == "__main__":
    main()
