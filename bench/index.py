"""Indexing benchmark on the SQuAD report split (one paragraph per file).

Measures, in one run:
- passages/s of a full ``ragctl index`` (in-process, model already loaded) against the bare
  sentence-transformers encode rate on the same passage texts: the ratio is the figure;
- the same through the real CLI in a subprocess (model loading included);
- the time of a re-run with nothing changed (CLI subprocess, Python start-up included);
- HNSW recall@10 against exact search over the stored vectors, and the query-time ratio;
- where the time of a run goes, phase by phase (reading, OCR, sentences, embedding,
  saving...: ``IndexSummary.phases``), in-process and through the CLI.

Prints the tables and writes bench/results/index.json. Usage: python bench/index.py
[--reps 3]; ``--folder DIR`` indexes a folder of one's own instead (the recall questions
are then passages of it), written to ``--out`` (default bench/results/index-folder.json).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import (
    Timer,
    machine,
    median,
    percentile,
    print_table,
    save,
    squad_articles,
    write_paragraphs,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3, help="repetitions of the timed runs")
    ap.add_argument("--queries", type=int, default=500, help="questions for the HNSW recall")
    ap.add_argument("--folder", type=Path,
                    help="index this folder (copied) instead of the SQuAD report split")
    ap.add_argument("--out", type=Path, help="where the JSON goes (default: bench/results/"
                    "index.json, or index-folder.json with --folder)")
    args = ap.parse_args()

    os.environ["HF_HUB_OFFLINE"] = "1"
    work = Path(tempfile.mkdtemp(prefix="ragctl-bench-"))
    os.environ["RAGCTL_HOME"] = str(work / "home")
    corpus = work / "corpus"
    articles: list[dict[str, Any]] = []
    if args.folder is not None:
        shutil.copytree(args.folder, corpus)
        n_files = sum(1 for f in corpus.rglob("*") if f.is_file())
        described = f"folder {args.folder}"
    else:
        articles = squad_articles("report")
        n_files = write_paragraphs(articles, corpus)
        described = "SQuAD v1.1 dev, report"

    from ragctl import models
    from ragctl.config import load_settings
    from ragctl.index.indexer import Indexer
    from ragctl.models.embed import make_fast_copy
    from ragctl.store.collection import Collection

    make_fast_copy(models.locate("embedder", "all-MiniLM-L6-v2"), name="all-MiniLM-L6-v2")
    # what `ragctl index` uses: the CTranslate2 copy; sentence-transformers for comparison
    embedder = models.load("embedder", "all-MiniLM-L6-v2", light=True)
    torch_embedder = models.load("embedder", "all-MiniLM-L6-v2")
    index_rates, bare_rates, torch_rates, passages = [], [], [], 0
    texts: list[str] = []
    run_phases: list[dict[str, float]] = []
    for rep in range(args.reps):
        name = f"bench{rep}"
        settings = load_settings(index=name)
        with Collection.open(settings, create=True) as c:
            c.lock()
            with Timer() as t:
                summary = Indexer(c, embedder_factory=lambda _n: embedder).run([corpus])
            passages = summary.passages_added
            index_rates.append(passages / t.seconds)
            run_phases.append({**asdict(summary.phases), "total": summary.seconds})
            if not texts:
                texts = [r[0] for r in c.store.db.execute("SELECT text FROM passages")]
        with Timer() as t:
            embedder.embed(texts, batch_size=settings.embed_batch_size)
        bare_rates.append(len(texts) / t.seconds)
        with Timer() as t:
            torch_embedder.embed(texts, batch_size=settings.embed_batch_size)
        torch_rates.append(len(texts) / t.seconds)
        print(f"rep {rep}: index {index_rates[-1]:.1f} passages/s, "
              f"bare encode {bare_rates[-1]:.1f} passages/s", file=sys.stderr)

    env = {**os.environ}
    cli = [sys.executable, "-P", "-m", "ragctl"]
    with Timer() as t:
        out = subprocess.run([*cli, "index", str(corpus), "--index", "cli", "-q", "--json"],
                             env=env, check=True, capture_output=True, text=True)
    cli_rate = passages / t.seconds
    first = json.loads(out.stdout)
    cli_phases = {**first["phases"], "total": first["seconds"]}
    rerun = []
    for _ in range(args.reps):
        with Timer() as t:
            out = subprocess.run([*cli, "index", str(corpus), "--index", "cli", "-q", "--json"],
                                 env=env, check=True, capture_output=True, text=True)
        rerun.append(t.seconds)
    unchanged = json.loads(out.stdout)["unchanged"]

    # HNSW recall@10 against exact search over the stored vectors
    settings = load_settings(index="bench0")
    rng = random.Random(0)
    questions = [q["question"] for a in articles for p in a["paragraphs"] for q in p["qas"]] \
        or texts  # a folder of one's own: its passages
    questions = rng.sample(questions, min(args.queries, len(questions)))
    with Collection.open(settings) as c:
        vi = c.vectors()
        assert vi is not None
        ids_list, vec_list = zip(*c.store.vectors(dim=vi.dim), strict=True)
        ids = np.concatenate(ids_list)
        matrix = np.concatenate(vec_list)
        qv = embedder.embed(questions)
        recalls, t_hnsw, t_exact = [], [], []
        for q in qv:
            with Timer() as t:
                labels, _ = vi.search(q, 10)
            t_hnsw.append(t.seconds)
            with Timer() as t:
                scores = matrix @ q
                top = ids[np.argpartition(-scores, 10)[:10]]
            t_exact.append(t.seconds)
            recalls.append(len(set(labels.tolist()) & set(top.tolist())) / 10)
    shutil.rmtree(work, ignore_errors=True)

    ratio = median(index_rates) / median(bare_rates)
    median_phases = {k: median([r[k] for r in run_phases]) for k in run_phases[0]}
    result = {
        "corpus": {"files": n_files, "passages": passages, "split": described},
        "index_passages_per_s": index_rates, "bare_encode_passages_per_s": bare_rates,
        "median_index_rate": median(index_rates), "median_bare_rate": median(bare_rates),
        "sentence_transformers_passages_per_s": torch_rates,
        "median_sentence_transformers_rate": median(torch_rates),
        "index_to_bare_ratio": ratio, "cli_passages_per_s_with_model_load": cli_rate,
        "rerun_unchanged_s": rerun, "rerun_unchanged_files": unchanged,
        "hnsw_recall_at_10": float(np.mean(recalls)), "queries": len(questions),
        "hnsw_query_ms_p50": median(t_hnsw) * 1e3, "exact_query_ms_p50": median(t_exact) * 1e3,
        "exact_to_hnsw_time_ratio": median(t_exact) / median(t_hnsw),
        "hnsw_query_ms_p95": percentile(t_hnsw, 95) * 1e3,
        "phases_s": {"in_process": run_phases, "in_process_median": median_phases,
                     "cli_first_run": cli_phases},
        "when_unix": time.time(),
    }
    print_table(f"ragctl index — {described}, {n_files} files, {passages} passages, "
                f"{args.reps} reps (medians)", [
        ("index rate (model loaded)", f"{median(index_rates):.1f} passages/s", ""),
        ("bare encode rate (CTranslate2 copy, what index uses)",
         f"{median(bare_rates):.1f} passages/s", ""),
        ("bare sentence-transformers encode rate", f"{median(torch_rates):.1f} passages/s",
         ""),
        ("index / bare ratio", f"{ratio:.3f}", "≥ 0.85"),
        ("CLI index rate (incl. model load)", f"{cli_rate:.1f} passages/s", ""),
        ("re-run, nothing changed", f"{median(rerun):.2f} s", "≤ 2 s"),
        ("HNSW recall@10 vs exact", f"{np.mean(recalls):.4f}", "≥ 0.99"),
        ("query time HNSW / exact (p50)",
         f"{median(t_hnsw) * 1e3:.3f} ms / {median(t_exact) * 1e3:.3f} ms", ""),
    ])
    print_phases(median_phases, cli_phases)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"benchmark": "index", "machine": machine(),
                                        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
                                        **result}, indent=2))
        print(f"\nwrote {args.out}")
    else:
        print(f"\nwrote {save('index-folder' if args.folder else 'index', result)}")


def print_phases(in_process: dict[str, float], cli: dict[str, float]) -> None:
    """Where a run's time goes: seconds and share of each phase, in-process (the model
    loaded before, median of the reps) and in the first CLI run (loading included)."""
    from ragctl.index.indexer import PHASES

    def cell(times: dict[str, float], name: str) -> str:
        share = times[name] / times["total"] if times["total"] else 0.0
        return f"{times[name]:.2f} s ({share:.0%})"

    w = max(len(p.label) for p in PHASES)
    print("\nwhere the time goes (in-process median | first CLI run)")
    print(f"| {'phase'.ljust(w)} | in-process     | CLI            |")
    print(f"|{'-' * (w + 2)}|----------------|----------------|")
    for p in PHASES:
        print(f"| {p.label.ljust(w)} | {cell(in_process, p.name):<14} | "
              f"{cell(cli, p.name):<14} |")
    total = [f"{t['total']:.2f} s" for t in (in_process, cli)]
    print(f"| {'total'.ljust(w)} | {total[0]:<14} | {total[1]:<14} |")


if __name__ == "__main__":
    main()
