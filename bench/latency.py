"""What a person at the terminal waits for: `ragctl ask` and `search` from the shell.

Parts (all on the SQuAD report-split index of bench/.home, questions from that split):

* ``equality`` — the CTranslate2 copy of the embedder against sentence-transformers on
  every report-split question: largest difference, smallest cosine, and whether the top 10
  passages (exact search over the index's stored vectors) are the same list;
* ``cold`` — ``ragctl ask Q`` and ``ragctl search Q`` as new processes, shell to exit
  (the last answer byte), with no service running;
* ``warm`` — the same with ``ragctl serve`` running, and 4 clients asking at once;
* ``imports`` — ``python -X importtime`` of the ask path: the ten slowest imports.

Prints tables and writes bench/results/latency.json.
Usage: python bench/latency.py [-n 20] [--parts equality cold warm imports]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, median, percentile, print_table, save
from bench.squad_index import BENCH_HOME, squad_index, squad_questions

# the installed command, as a person types it (its script imports ragctl.quick directly)
_SCRIPT = Path(sys.executable).with_name("ragctl")
RAGCTL = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "ragctl"]


def env() -> dict[str, str]:
    return {**os.environ, "RAGCTL_HOME": str(BENCH_HOME), "HF_HUB_OFFLINE": "1"}


def equality(index: str, articles: list[dict[str, Any]]) -> dict[str, Any]:
    import numpy as np

    from ragctl import models
    from ragctl.config import load_settings
    from ragctl.models.embed import CT2Embedder, SentenceTransformerEmbedder, make_fast_copy
    from ragctl.store.collection import Collection

    path = models.locate("embedder", "all-MiniLM-L6-v2")
    fast_dir = make_fast_copy(path, name="all-MiniLM-L6-v2")
    assert fast_dir is not None
    slow, fast = SentenceTransformerEmbedder(path), CT2Embedder(fast_dir)
    questions = [q["question"] for q in squad_questions(articles, 100_000)]
    a = slow.embed(questions, batch_size=64)
    b = fast.embed(questions, batch_size=64)
    with Collection.open(load_settings(index=index)) as c:
        _ids, vecs = zip(*c.store.vectors(dim=c.dim or 384), strict=True)
    matrix = np.concatenate(vecs)
    top_a = np.argsort(-(a @ matrix.T), axis=1)[:, :10]
    top_b = np.argsort(-(b @ matrix.T), axis=1)[:, :10]
    same = float((top_a == top_b).all(axis=1).mean())
    same_set = float(np.mean([set(x) == set(y) for x, y in zip(top_a, top_b, strict=True)]))
    return {"questions": len(questions), "passages": int(matrix.shape[0]),
            "max_abs_diff": float(np.abs(a - b).max()),
            "min_cosine": float((a * b).sum(1).min()),
            "top10_identical_lists": same, "top10_same_sets": same_set}


def timed(args: list[str], *, stdin: str | None = None) -> tuple[float, int, str]:
    t0 = time.perf_counter()
    r = subprocess.run([*RAGCTL, *args], capture_output=True, text=True, env=env(),
                       cwd=ROOT, input=stdin, timeout=600)
    return time.perf_counter() - t0, r.returncode, r.stdout


def shell_times(index: str, questions: list[str], label: str) -> dict[str, Any]:
    ask, search, answers, stages = [], [], [], []
    timed(["ask", questions[0], "--index", index])  # page cache warm, as on a used laptop
    for q in questions:
        s, rc, out = timed(["ask", q, "--index", index, "--json"])
        ask.append(s)
        data = json.loads(out) if rc in (0, 3) else {}
        answers.append(data.get("answer"))
        t = data.get("timings") or {}
        stages.append(sum(t.get(k, 0.0) for k in ("retrieve", "relevance", "filter")))
        s, rc, _ = timed(["search", q, "--index", index, "-n", "5"])
        search.append(s)
    return {"label": label, "ask_p50": median(ask), "ask_p95": percentile(ask, 95),
            "search_p50": median(search), "search_p95": percentile(search, 95),
            "retrieve_relevance_filter_p50": median(stages), "answers": answers}


def imports() -> list[tuple[str, float]]:
    r = subprocess.run([sys.executable, "-X", "importtime", "-c",
                        "from ragctl.app.cli import cli; import ragctl.ask.pipeline"],
                       capture_output=True, text=True, env=env(), cwd=ROOT)
    rows = []
    for line in r.stderr.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \|( *)(\S+)", line)
        if m and len(m.group(2)) <= 2:  # top-level packages only
            rows.append((m.group(3), int(m.group(1)) / 1e6))
    return sorted(rows, key=lambda r: -r[1])[:10]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=20, help="questions (shell timings)")
    ap.add_argument("--parts", nargs="+", default=["equality", "cold", "warm", "imports"],
                    choices=["equality", "cold", "warm", "imports"])
    ap.add_argument("--out", default="latency")
    ap.add_argument("--keep-cache", action="store_true",
                    help="use ~/.cache/ragctl as is (default: an empty cache folder, so that "
                         "cold means cold: no passage embedded before)")
    args = ap.parse_args()
    if not args.keep_cache:
        import atexit
        import shutil
        import tempfile

        os.environ["RAGCTL_CACHE"] = cache = tempfile.mkdtemp(prefix="ragctl-bench-cache-")
        atexit.register(shutil.rmtree, cache, ignore_errors=True)
    index, articles = squad_index("report")
    questions = [q["question"] for q in squad_questions(articles, args.n, seed=1)]
    result: dict[str, Any] = {"n": len(questions)}
    if "equality" in args.parts:
        result["equality"] = eq = equality(index, articles)
        print_table("embedder: CTranslate2 copy vs sentence-transformers (report split)", [
            ("questions / passages", f"{eq['questions']} / {eq['passages']}", ""),
            ("largest difference", f"{eq['max_abs_diff']:.2e}", ""),
            ("smallest cosine", f"{eq['min_cosine']:.7f}", ""),
            ("top-10 lists identical", f"{100 * eq['top10_identical_lists']:.2f}%", "100%"),
            ("top-10 sets identical", f"{100 * eq['top10_same_sets']:.2f}%", "100%")])
    if "imports" in args.parts:
        result["imports"] = rows = imports()
        print_table("slowest imports of the ask path (s, cumulative)",
                    [(name, f"{s:.2f}", "") for name, s in rows])
    if "cold" in args.parts:
        subprocess.run([*RAGCTL, "serve", "--stop"], env=env(), cwd=ROOT,
                       capture_output=True)
        result["cold"] = cold = shell_times(index, questions, "cold")
        print_table("from the shell, no service", [
            ("ask p50 / p95", f"{cold['ask_p50']:.2f} / {cold['ask_p95']:.2f} s", "≤ 3 s"),
            ("search p50 / p95", f"{cold['search_p50']:.2f} / {cold['search_p95']:.2f} s",
             "")])
    if "warm" in args.parts:
        result["warm"] = warm_part(index, questions, result.get("cold"))
    save(args.out, result)


def warm_part(index: str, questions: list[str], cold: dict[str, Any] | None) -> dict[str, Any]:
    import threading

    import psutil

    proc = subprocess.Popen([*RAGCTL, "serve", "--index", index], env=env(), cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):
            if subprocess.run([*RAGCTL, "serve", "--status"], env=env(), cwd=ROOT,
                              capture_output=True).returncode == 0:
                break
            time.sleep(0.5)
        service = psutil.Process(proc.pid)
        # the service embeds the passages ahead of questions while idle: wait for it
        t0 = time.perf_counter()
        from ragctl.app.client import request

        last, still = -1, 0
        while still < 3 and time.perf_counter() - t0 < 1800:
            st = request("GET", "/status", home=BENCH_HOME) or {}
            warmed = sum((st.get("passages_warmed") or {}).values())
            still = still + 1 if warmed == last else 0
            last = warmed
            time.sleep(2.5)
        warm_s = time.perf_counter() - t0 - 7.5
        idle_rss = service.memory_info().rss
        warm = shell_times(index, questions, "warm")
        same = None
        if cold is not None:
            same = sum(a == b for a, b in zip(cold["answers"], warm["answers"], strict=True))
        peak = [service.memory_info().rss]
        results: list[tuple[int, float]] = []

        def client(qs: list[str]) -> None:
            for q in qs:
                s, rc, _ = timed(["ask", q, "--index", index, "--json"])
                results.append((rc, s))

        t0 = time.perf_counter()
        threads = [threading.Thread(target=client, args=(questions[k::4],)) for k in range(4)]
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            peak.append(service.memory_info().rss)
            time.sleep(0.1)
        wall = time.perf_counter() - t0
        answered = sum(rc in (0, 3) for rc, _ in results)
        out = {**warm, "same_answers_as_cold": same, "idle_rss_mb": idle_rss / 2**20,
               "passages_prepared": last, "prepare_s": warm_s,
               "peak_rss_4_clients_mb": max(peak) / 2**20, "four_clients": {
                   "questions": len(results), "answered": answered, "wall_s": wall,
                   "questions_per_s": len(results) / wall}}
        print_table("from the shell, with `ragctl serve` running", [
            ("ask p50 / p95", f"{warm['ask_p50']:.2f} / {warm['ask_p95']:.2f} s", "≤ 0.6 s"),
            ("search p50 / p95", f"{warm['search_p50']:.2f} / {warm['search_p95']:.2f} s",
             "≤ 0.15 s"),
            ("retrieve + relevance + filter in the service, p50",
             f"{1000 * warm['retrieve_relevance_filter_p50']:.0f} ms", "≤ 60 ms"),
            ("passages prepared while idle (s)", f"{last} ({warm_s:.0f} s)", ""),
            ("same answers as without the service",
             "—" if same is None else f"{same} of {len(questions)}", "all"),
            ("4 clients: answered", f"{answered} of {len(results)}", "all"),
            ("4 clients: questions/s", f"{len(results) / wall:.2f}", ""),
            ("service memory idle / 4 clients",
             f"{out['idle_rss_mb']:.0f} / {out['peak_rss_4_clients_mb']:.0f} MB", "")])
        return out
    finally:
        subprocess.run([*RAGCTL, "serve", "--stop"], env=env(), cwd=ROOT, capture_output=True)
        proc.wait(timeout=60)


if __name__ == "__main__":
    main()
