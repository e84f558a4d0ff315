"""`ragctl ask` benchmark on the SQuAD REPORT split (odd articles, one paragraph per file).

For a fixed-seed sample of questions, in one run:
- per-stage latency p50/p95 (retrieve, relevance, filter, generate) at N=20, k=5;
- exact match, unigram F1, accuracy (answer contains a gold answer), prompt context
  tokens and citation support for FULL, PSG and FILCO side by side;
- llama.cpp generation speed inside ask against a bare llama-cpp-python call on the
  same prompts (same model file, same settings).

Prints a table and writes bench/results/ask.json. Usage: python bench/ask.py [-n 300]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import median, percentile, print_table, save
from bench.squad_index import squad_index, squad_questions

MODES = ("full", "passages", "filtered")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--questions", type=int, default=300)
    ap.add_argument("--split", choices=("report", "dev"), default="report")
    ap.add_argument("--speed-prompts", type=int, default=40)
    ap.add_argument("--generator", default=None)
    args = ap.parse_args()

    name, articles = squad_index(args.split)
    from ragctl.collection import Collection
    from ragctl.config import load_settings
    from ragctl.generate import build_prompt
    from ragctl.pipeline import AskOptions, Pipeline
    from ragctl.text import contains_answer, exact_match, max_f1

    questions = squad_questions(articles, args.questions, seed=0)
    settings = load_settings(index=name, generator=args.generator)
    per_mode: dict[str, dict[str, list[float]]] = {
        m: {"em": [], "f1": [], "acc": [], "tokens": [], "full_tokens": [], "support": [],
            "ctx_recall": []} for m in MODES}
    stages: dict[str, list[float]] = {k: [] for k in
                                      ("retrieve", "relevance", "filter", "pre_generate",
                                       "generate", "verify")}
    abstained = 0
    prompts: list[str] = []
    t0 = time.perf_counter()
    with Collection.open(settings) as c, Pipeline(c) as pipe:
        load_s = pipe.load()
        for i, q in enumerate(questions):
            for mode in MODES:
                opts = AskOptions.from_settings(settings, context=mode)
                a = pipe.ask(q["question"], opts)
                if mode == "filtered":
                    abstained += a.abstained
                    for k in ("retrieve", "relevance", "filter", "verify"):
                        stages[k].append(a.timings.get(k, 0.0))
                    stages["pre_generate"].append(a.timings["retrieve"] + a.timings["relevance"]
                                                  + a.timings.get("filter", 0.0))
                if a.abstained:  # score what it would have answered: ask again without
                    a = pipe.ask(q["question"], AskOptions.from_settings(
                        settings, context=mode, abstain=False))
                if mode == "filtered":
                    stages["generate"].append(a.timings["generate"])
                    if len(prompts) < args.speed_prompts:
                        prompts.append(build_prompt(q["question"], [s.text for s in a.context]))
                r = per_mode[mode]
                r["em"].append(exact_match(a.answer_text, q["answers"]))
                r["f1"].append(max_f1(a.answer_text, q["answers"]))
                r["acc"].append(float(contains_answer(a.answer_text, q["answers"])))
                r["tokens"].append(a.tokens["context"])
                r["full_tokens"].append(a.tokens["full_context"])
                r["support"].append(a.support_rate)
                r["ctx_recall"].append(float(any(contains_answer(s.text, q["answers"])
                                                 for s in a.context)))
            if (i + 1) % 25 == 0:
                print(f"{i + 1}/{len(questions)} questions, {time.perf_counter() - t0:.0f} s",
                      file=sys.stderr)
        speed = generation_speed(pipe.generator, prompts)
        generator = pipe.generator.name

    def mean(xs: list[float]) -> float:
        return sum(xs) / len(xs) if xs else float("nan")

    modes = {m: {k: mean(v) for k, v in r.items()} for m, r in per_mode.items()}
    lat = {k: {"p50_ms": median(v) * 1e3, "p95_ms": percentile(v, 95) * 1e3}
           for k, v in stages.items()}
    full_tok = modes["full"]["tokens"]
    result = {"split": args.split, "questions": len(questions), "generator": generator,
              "embedder": "all-MiniLM-L6-v2", "relevance": settings.relevance,
              "filter": settings.context_filter, "top_n": settings.top_n,
              "top_k": settings.top_k, "filter_top_m": settings.filter_top_m,
              "re_threshold": settings.re_threshold, "model_load_s": load_s,
              "modes": modes, "latency": lat, "abstained_filtered": abstained,
              "generation_speed": speed}
    rows = [(f"{k} p50 / p95", f"{v['p50_ms']:.0f} / {v['p95_ms']:.0f} ms",
             "≤ 200 ms p50" if k == "pre_generate" else "") for k, v in lat.items()]
    print_table(f"per-stage latency, {len(questions)} questions, N={settings.top_n}, "
                f"k={settings.top_k} (pre_generate = retrieve + relevance + filter)", rows)
    rows = []
    for m, label in (("full", "FULL"), ("passages", "PSG"), ("filtered", "FILCO")):
        v = modes[m]
        saved = 1 - v["tokens"] / full_tok if full_tok else 0.0
        rows.append((label, f"EM {100 * v['em']:.1f}  F1 {100 * v['f1']:.1f}  "
                     f"acc {100 * v['acc']:.1f}  tokens {v['tokens']:.0f} ({saved:.0%} fewer)  "
                     f"support {100 * v['support']:.1f}  answer-in-context "
                     f"{100 * v['ctx_recall']:.1f}", ""))
    print_table(f"answers by context mode ({generator})", rows)
    print_table("generation speed (same prompts, same model)", [
        ("inside ask", f"{speed['ask_tokens_per_s']:.1f} tokens/s", ""),
        ("bare llama-cpp-python", f"{speed['bare_tokens_per_s']:.1f} tokens/s", ""),
        ("ratio", f"{speed['ratio']:.3f}", "≥ 0.9")])
    print(f"abstained (FILCO, default threshold): {abstained}/{len(questions)}")
    print(f"\nwrote {save('ask' if args.split == 'report' else 'ask-dev', result)}")


def generation_speed(gen: Any, prompts: list[str]) -> dict[str, float]:
    """Tokens/s of ask's streaming completion vs a bare create_completion call."""
    ask_tok = bare_tok = 0
    ask_s = bare_s = 0.0
    for p in prompts:
        for order in range(2):
            gen.llm.reset()
            if order == 0:
                t = time.perf_counter()
                c = gen.complete(p, max_tokens=48, on_token=lambda _s: None)
                ask_s += time.perf_counter() - t
                ask_tok += c.completion_tokens
            else:
                t = time.perf_counter()
                out = gen.llm.create_completion(p, max_tokens=48, stop=["\n"], temperature=0.0)
                bare_s += time.perf_counter() - t
                bare_tok += out["usage"]["completion_tokens"]
    ask_rate = ask_tok / ask_s if ask_s else 0.0
    bare_rate = bare_tok / bare_s if bare_s else 0.0
    return {"prompts": len(prompts), "ask_tokens_per_s": ask_rate,
            "bare_tokens_per_s": bare_rate, "ratio": ask_rate / bare_rate if bare_rate else 0.0}


if __name__ == "__main__":
    main()
