"""`ragctl ask` benchmark on the SQuAD REPORT split (odd articles, one paragraph per file).

In one run:
1. For a fixed-seed sample of questions, ask's default answer (a span of a cited sentence,
   chosen by the reader), answering every question: exact match, F1, the share of
   answers that are verbatim spans of their cited sentence, citation support, empty
   answers printed as answers, and the per-stage latency p50/p95 (retrieve, relevance,
   filter, answer). Beside it, the generator's own words over FULL, PSG and FILCO context
   (FilCo's comparison), and llama.cpp's speed inside ask against a bare call.
2. Answerability (with --answerability N): over an index of the report split whose answer
   sentences were deleted for some questions (bench/answerable.py), N answerable, N
   on-topic unanswerable and N off-topic (NQ report) questions at the default threshold,
   and the selective-answering curve (share answered against the accuracy of what is
   answered) over thresholds, with the shipped models as they are (nothing is fitted).

Prints tables and writes bench/results/ask.json. Usage: python bench/ask.py [-n 200]
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

FREE_MODES = ("full", "passages", "filtered")
STAGES = ("retrieve", "relevance", "filter", "answer")


def default_answers(pipe: Any, settings: Any, questions: list[dict[str, Any]]
                    ) -> dict[str, Any]:
    """ask's default answer for every question (no abstention), scored."""
    from ragctl.ask.pipeline import AskOptions
    from ragctl.text import contains_answer, exact_match, max_f1

    opts = AskOptions.from_settings(settings, abstain=False)
    gated = AskOptions.from_settings(settings)
    out: dict[str, list[float]] = {k: [] for k in (
        "em", "f1", "verbatim", "support", "answer_in_kept", "abstained_at_default",
        "empty_printed", *STAGES, "pre_answer")}
    kinds: dict[str, int] = {}
    for q in questions:
        a = pipe.ask(q["question"], opts)
        text = a.answer_text
        kinds[a.kind or "none"] = kinds.get(a.kind or "none", 0) + 1
        out["em"].append(exact_match(text, q["answers"]))
        out["f1"].append(max_f1(text, q["answers"]))
        cited = " ".join(c.text for c in a.sources)
        if not a.abstained:
            out["verbatim"].append(float(bool(text) and (a.kind != "span" or text in cited)))
            out["support"].append(a.support_rate if a.kind == "free" else float(
                bool(a.sources) and float(pipe.checker.support(
                    text, [c.text for c in a.sources]).max()) >= 0.5))
            out["empty_printed"].append(float(not text.strip()))
        out["answer_in_kept"].append(float(contains_answer(" ".join(
            p.text for p in a.passages if p.kept), q["answers"])))
        for k in STAGES:
            out[k].append(a.timings.get(k, 0.0))
        out["pre_answer"].append(sum(a.timings.get(k, 0.0) for k in STAGES))
        out["abstained_at_default"].append(float(pipe.ask(q["question"], gated).abstained))
    means = {k: sum(v) / len(v) if v else 0.0 for k, v in out.items() if k not in STAGES
             and k != "pre_answer"}
    latency = {k: {"p50_ms": median(out[k]) * 1e3, "p95_ms": percentile(out[k], 95) * 1e3}
               for k in (*STAGES, "pre_answer")}
    return {"scores": means, "latency": latency, "kinds": kinds}


def free_modes(pipe: Any, settings: Any, questions: list[dict[str, Any]], speed_prompts: int
               ) -> dict[str, Any]:
    """The generator's own words with FULL, PSG and FILCO context (FilCo's comparison)."""
    from ragctl.ask.pipeline import AskOptions
    from ragctl.models.generate import build_prompt
    from ragctl.text import contains_answer, exact_match, max_f1

    per_mode: dict[str, dict[str, list[float]]] = {
        m: {"em": [], "f1": [], "acc": [], "tokens": [], "full_tokens": [], "support": [],
            "ctx_recall": []} for m in FREE_MODES}
    prompts, generate = [], []
    for q in questions:
        for mode in FREE_MODES:
            a = pipe.ask(q["question"], AskOptions.from_settings(
                settings, context=mode, abstain=False, free=True))
            r = per_mode[mode]
            r["em"].append(exact_match(a.answer_text, q["answers"]))
            r["f1"].append(max_f1(a.answer_text, q["answers"]))
            r["acc"].append(float(contains_answer(a.answer_text, q["answers"])))
            r["tokens"].append(a.tokens.get("context", 0))
            r["full_tokens"].append(a.tokens.get("full_context", 0))
            r["support"].append(a.support_rate)
            r["ctx_recall"].append(float(any(contains_answer(s.text, q["answers"])
                                             for s in a.context)))
            if mode == "filtered":
                generate.append(a.timings.get("generate", 0.0))
                if len(prompts) < speed_prompts:
                    prompts.append(build_prompt(q["question"], [s.text for s in a.context]))
    modes = {m: {k: sum(v) / len(v) for k, v in r.items()} for m, r in per_mode.items()}
    return {"modes": modes, "generate_p50_ms": median(generate) * 1e3,
            "speed": generation_speed(pipe.generator, prompts)}


def answerability(settings: Any, n: int) -> dict[str, Any]:
    """The default threshold and the selective-answering curve on the report split."""
    from bench.answerable import holes_index, question_sets
    from bench.reader import chosen, curve, point, re_threshold, run, scored_rows
    from ragctl import models

    index = holes_index("report")
    sets = question_sets("report", n)
    reader = models.load("reader", settings.reader, settings)
    fitted = dict(reader.fitted)
    threshold = float(fitted["answerability"]["threshold"])
    rows = run({k: index for k in sets}, settings.reader, sets, settings.reader_passages)
    re_t = re_threshold()
    table = curve(rows, fitted, re_t)
    at = point(scored_rows(rows, fitted, re_t), threshold)
    em_all = sum((c := chosen(r, fitted)) is not None and c["f1"] == 1.0
                 for r in rows if r["set"] == "answerable") / len(sets["answerable"])
    return {"index": index, "sets": {k: len(v) for k, v in sets.items()},
            "threshold": threshold, "at_default": at, "curve": table,
            "em_answerable_answering_all": em_all}


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--questions", type=int, default=200)
    ap.add_argument("--split", choices=("report", "dev"), default="report")
    ap.add_argument("--speed-prompts", type=int, default=40)
    ap.add_argument("--no-free", action="store_true", help="skip the generator's modes")
    ap.add_argument("--answerability", type=int, default=300, metavar="N",
                    help="questions per set for the answerability measures (0: skip)")
    args = ap.parse_args()

    name, articles = squad_index(args.split)
    from ragctl.ask.pipeline import Pipeline
    from ragctl.config import load_settings
    from ragctl.store.collection import Collection

    questions = squad_questions(articles, args.questions, seed=0)
    settings = load_settings(index=name)
    t0 = time.perf_counter()
    with Collection.open(settings) as c, Pipeline(c) as pipe:
        load_s = pipe.load()
        result: dict[str, Any] = {
            "split": args.split, "questions": len(questions), "model_load_s": load_s,
            "embedder": c.embedder_name, "relevance": settings.relevance,
            "filter": settings.context_filter, "reader": settings.reader,
            "top_n": settings.top_n, "top_k": settings.top_k,
            "reader_passages": settings.reader_passages,
            "default": default_answers(pipe, settings, questions)}
        print(f"default answers: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        if not args.no_free:
            result["free"] = free_modes(pipe, settings, questions, args.speed_prompts)
            result["generator"] = pipe.generator.name
    if args.answerability and args.split == "report":
        result["answerability"] = answerability(settings, args.answerability)

    d = result["default"]
    s, lat = d["scores"], d["latency"]
    print_table(f"ask's default answer, {len(questions)} {args.split} questions, answering all",
                [("EM / F1", f"{100 * s['em']:.1f} / {100 * s['f1']:.1f}", "≥ 50 / ≥ 60"),
                 ("answer is a verbatim span of its cited sentence",
                  f"{100 * s['verbatim']:.1f}%", "100%"),
                 ("citation support", f"{100 * s['support']:.1f}%", "≥ 95%"),
                 ("empty answers printed as answers", f"{100 * s['empty_printed']:.1f}%", "0"),
                 ("gold answer in a kept passage", f"{100 * s['answer_in_kept']:.1f}%", ""),
                 ("turned away at the default thresholds",
                  f"{100 * s['abstained_at_default']:.1f}%", ""),
                 ("answer kinds", str(d["kinds"]), "")])
    print_table("latency (ms)", [(f"{k} p50 / p95", f"{v['p50_ms']:.0f} / {v['p95_ms']:.0f}",
                                  "≤ 350 p50" if k == "pre_answer" else "")
                                 for k, v in lat.items()])
    if "free" in result:
        f = result["free"]
        full = f["modes"]["full"]["tokens"]
        rows = []
        for m, label in (("full", "FULL"), ("passages", "PSG"), ("filtered", "FILCO")):
            v = f["modes"][m]
            saved = 1 - v["tokens"] / full if full else 0.0
            rows.append((label, f"EM {100 * v['em']:.1f}  F1 {100 * v['f1']:.1f}  "
                         f"acc {100 * v['acc']:.1f}  tokens {v['tokens']:.0f} ({saved:.0%} "
                         f"fewer)  support {100 * v['support']:.1f}  answer-in-context "
                         f"{100 * v['ctx_recall']:.1f}", ""))
        print_table(f"the generator's own words ({result['generator']}), by context", rows)
        sp = f["speed"]
        print_table("generation speed (same prompts, same model)", [
            ("inside ask", f"{sp['ask_tokens_per_s']:.1f} tokens/s", ""),
            ("bare llama-cpp-python", f"{sp['bare_tokens_per_s']:.1f} tokens/s", ""),
            ("ratio", f"{sp['ratio']:.3f}", "≥ 0.9")])
    if "answerability" in result:
        a = result["answerability"]
        at = a["at_default"]
        print_table(f"answerability on the report split ({a['sets']}), default threshold "
                    f"{a['threshold']:.2f}", [
            ("answerable turned away", f"{100 * at['abstain_answerable']:.1f}% (answer in a "
             f"kept passage: {100 * at['abstain_found']:.1f}%)", "≤ 5%"),
            ("on-topic unanswerable caught", f"{100 * at['abstain_on-topic']:.1f}%", "≥ 60%"),
            ("off-topic caught", f"{100 * at['abstain_off-topic']:.1f}%", "≥ 80%"),
            ("accuracy of what is answered", f"{100 * at['accuracy_answered']:.1f}%", "")])
        print_table("selective answering (all three sets)", [
            (f"threshold {r['threshold']:.2f}", f"answers {100 * r['answered']:.1f}%, right "
             f"{100 * r['accuracy_answered']:.1f}% of those", "")
            for r in a["curve"][::5]])
    print(f"\nwrote {save('ask' if args.split == 'report' else 'ask-dev', result)}")


if __name__ == "__main__":
    main()
