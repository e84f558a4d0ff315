"""Reproduce the shipped default models (``make models``) from the development splits only.

Steps (each one is skipped when its output exists, so an interrupted run resumes):

1. silver labels (StrInc, Lexical) for the SQuAD dev articles and the NQ-oracle dev lines,
   on their gold passages and, for a sample of questions, on the top 5 passages retrieved
   from an index of the dev passages (what the filter sees at run time);
2. for another sample of dev questions the top 6 retrieved passages with
   log P_gen(answer | question, passage) from the default generator;
3. ``ragctl train filter`` (StrInc targets) and ``ragctl train re`` (KL to the generator,
   and the has-answer alternative), MiniLM bi-encoders that start from the fallbacks;
4. ``ragctl train reader``: the span reader, on the gold passages of both dev splits with
   an on-topic passage without the answer per question (the null score), and with
   ``--squad2`` / ``--wtq`` a SQuAD 2.0 training file (its unanswerable questions) and
   WikiTableQuestions' training questions one table cell answers (bench/reader_data.py
   writes them all into one file; the shipped reader trained on it on a GPU);
5. ``ragctl export`` int8 (GPTQ rounding, calibrated on the training data) into
   ``models/`` with a model card each; the relevance model's
   calibration and abstention threshold from ``bench/calibrate.py --relevance``, the
   reader's answerability model from ``bench/reader.py``.

Everything runs through the ``ragctl`` command line. Work files go to bench/.home/train.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, SHARED

WORK = ROOT / "bench" / ".home" / "train"
SQUAD = SHARED / "data" / "squad" / "dev-v1.1.json"
NQ = SHARED / "data" / "nq_oracle" / "nq-open-oracle.jsonl.gz"
RAGCTL = [sys.executable, "-m", "ragctl"]

FILTER_NAME = "minilm-filter"
READER_NAME = "minilm-reader"
RE_NAME = "minilm-re"
RE_HAS_ANSWER = "minilm-re-hasanswer"
RE_RECIPE = ["--head-lr", "1e-2"]
LICENCE = ("SQuAD v1.1 (CC BY-SA 4.0) and Natural Questions open / NQ-oracle "
           "(CC BY-SA 3.0, packaging MIT)")
READER_LICENCE = ("SQuAD v1.1 and SQuAD 2.0 (CC BY-SA 4.0), Natural Questions open / "
                  "NQ-oracle (CC BY-SA 3.0, packaging MIT), WikiTableQuestions (CC BY-SA 4.0)")


def run(args: list[str], *, home: Path | None = None) -> None:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    if home is not None:
        env["RAGCTL_HOME"] = str(home)
    args = [a.replace(str(ROOT) + "/", "") for a in args]  # paths as in this checkout
    print("+ ragctl", " ".join(shlex.quote(a) for a in args), flush=True)
    subprocess.run(RAGCTL + args, check=True, env=env, cwd=ROOT)


def dev_index(dataset: str, path: Path, home: Path) -> str:
    """Index the dev split's passages with the normal indexer; returns the index name."""
    code = (
        "import sys, ragctl.eval.datasets as d, ragctl.eval.evaluate as e, ragctl.config as c;"
        f"ds=d.load(__import__('pathlib').Path({str(path)!r}), split='dev');"
        "print(e.index_dataset(ds, c.load_settings()))")
    env = dict(os.environ, RAGCTL_HOME=str(home), HF_HUB_OFFLINE="1")
    out = subprocess.run([sys.executable, "-P", "-c", code], check=True, env=env,
                         capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--re-questions", type=int, default=400,
                    help="SQuAD dev questions labelled with passage likelihoods (NQ: half)")
    ap.add_argument("--re-passages", type=int, default=6,
                    help="retrieved passages per question for the relevance estimator")
    ap.add_argument("--filter-questions", type=int, default=3000,
                    help="SQuAD dev questions given retrieved passages for the filter "
                         "(NQ: half)")
    ap.add_argument("--filter-examples", type=int, default=2400,
                    help="filter training sample (of both datasets)")
    ap.add_argument("--epochs", type=int, default=2, help="filter epochs")
    ap.add_argument("--re-epochs", type=int, default=4, help="relevance epochs")
    ap.add_argument("--reader-epochs", type=int, default=3,
                    help="span reader epochs (the shipped reader trained three)")
    ap.add_argument("--squad2", type=Path, help="a SQuAD 2.0 TRAINING file for the reader "
                    "(the shipped one: PhongNTDo/guide_train_MRC_transformers@631a448, "
                    "train-v2.0.json, its first 10 articles)")
    ap.add_argument("--wtq", type=Path, help="WikiTableQuestions' release folder for the "
                    "reader (ppasupat/WikiTableQuestions@7d455a5)")
    ap.add_argument("--only", nargs="*", help="train and export only these models")
    ap.add_argument("--until", choices=["silver", "train", "export"], default="export")
    ap.add_argument("--models", type=Path, default=ROOT / "models")
    args = ap.parse_args()
    if not SQUAD.exists() or not NQ.exists():
        sys.exit(f"bench/models.py: the shared data is missing ({SQUAD.parent.parent})")
    home = WORK / "home"
    home.mkdir(parents=True, exist_ok=True)
    silver = WORK / "silver"
    silver.mkdir(parents=True, exist_ok=True)

    needs_silver = not args.only or set(args.only) - {READER_NAME}
    # 1. sentence-level silver labels: gold passages, then retrieved passages (what the
    #    filter sees in ask: the sentences of the top passages)
    for name, path in (("squad-dev", SQUAD), ("nq-dev", NQ)) if needs_silver else ():
        run(["silver", str(path), str(silver / f"{name}.jsonl"), "--split", "dev"], home=home)
    for name, path, ds, n in (("squad", SQUAD, "squad", args.filter_questions),
                              ("nq", NQ, "dpr", args.filter_questions // 2)) \
            if needs_silver else ():
        marker = silver / f"ret-{name}-dev.done"
        if not marker.exists():
            index = dev_index(ds, path, home)
            run(["silver", str(path), str(silver / f"ret-{name}-dev.jsonl"), "--split", "dev",
                 "--index", index, "--retrieve", "--top-k", "5", "--no-passage-logprobs",
                 "--limit", str(n)], home=home)
            marker.touch()
    # 2. passage-level likelihoods over retrieved passages
    for name, path, ds, n in (("squad", SQUAD, "squad", args.re_questions),
                              ("nq", NQ, "dpr", args.re_questions // 2)) \
            if needs_silver else ():
        out = silver / f"re-{name}-dev.jsonl"
        marker = silver / f"re-{name}-dev.done"
        if marker.exists():
            continue
        index = dev_index(ds, path, home)
        run(["silver", str(path), str(out), "--split", "dev", "--index", index, "--retrieve",
             "--top-k", str(args.re_passages), "--passage-logprobs", "--limit", str(n)],
            home=home)
        marker.touch()
    if args.until == "silver":
        return

    # 3. training: MiniLM bi-encoders, which start from the similarity fallbacks
    runs = WORK / "runs"
    re_data = ["--data", str(silver / "re-squad-dev.jsonl"),
               "--data", str(silver / "re-nq-dev.jsonl")]
    trainings = {
        FILTER_NAME: ["train", "filter", "--architecture", "bi-encoder",
                      "--data", str(silver / "ret-squad-dev.jsonl"),
                      "--data", str(silver / "ret-nq-dev.jsonl"), "--measure", "strinc",
                      "--limit", str(args.filter_examples), "--negatives", "8",
                      "--batch-size", "32", "--epochs", str(args.epochs)],
        RE_NAME: ["train", "re", "--architecture", "bi-encoder", *re_data, "--objective",
                  "kl", *RE_RECIPE, "--epochs", str(args.re_epochs)],
        RE_HAS_ANSWER: ["train", "re", "--architecture", "bi-encoder", *re_data,
                        "--objective", "has-answer", *RE_RECIPE,
                        "--epochs", str(args.re_epochs)],
        READER_NAME: ["train", "reader", "--data", str(WORK / "reader.spans.jsonl.gz"),
                      "--epochs", str(args.reader_epochs), "--batch-size", "32"],
    }
    spans = WORK / "reader.spans.jsonl.gz"
    if (not args.only or READER_NAME in args.only) and not spans.exists():
        extra = [*(["--squad2", str(args.squad2)] if args.squad2 else []),
                 *(["--wtq", str(args.wtq)] if args.wtq else [])]
        subprocess.run([sys.executable, str(ROOT / "bench" / "reader_data.py"), *extra,
                        "--out", str(spans)], check=True, cwd=ROOT)
    for name, cmd in trainings.items():
        if args.only and name not in args.only:
            continue
        out = runs / name
        if (out / "model" / "train.json").exists():
            continue
        run([*cmd, "--out", str(out), "--resume", "--no-export"], home=home)
    if args.until == "train":
        return

    # 4. export and model cards (the has-answer alternative is measured, not shipped); the
    #    relevance model's probabilities are re-fitted on the same dev pairs as the
    #    fallback's curve, and its abstention threshold chosen the same way
    for name in (FILTER_NAME, RE_NAME, RE_HAS_ANSWER, READER_NAME):
        if args.only and name not in args.only:
            continue
        target = args.models / name if name != RE_HAS_ANSWER else home / "models" / name
        run(["export", name, "--from", str(runs / name), "--quantization", "int8",
             "--out", str(target), "--data-licence",
             READER_LICENCE if name == READER_NAME else LICENCE], home=home)
        if name == RE_NAME:
            subprocess.run([sys.executable, str(ROOT / "bench" / "calibrate.py"),
                            "--relevance", str(target), "--write-calibration"], check=True,
                           cwd=ROOT)
        if name == READER_NAME:
            subprocess.run([sys.executable, str(ROOT / "bench" / "reader.py"),
                            "--reader", str(target), "--write"], check=True, cwd=ROOT)
        if name != RE_HAS_ANSWER:
            write_card(target)


def reader_report_lines() -> list[str]:
    """The report-split numbers of the span reader, from bench/ask.py."""
    results = ROOT / "bench" / "results" / "ask.json"
    if not results.exists():
        return ["Report-split results: run bench/ask.py."]
    data = json.loads(results.read_text())
    s = data["default"]["scores"]
    lines = [f"## Report split (bench/ask.py, {data['questions']} SQuAD questions)", "",
             f"- exact match {100 * s['em']:.1f}, F1 {100 * s['f1']:.1f}, answering every "
             "question; every answer is a verbatim span of its cited sentence"]
    a = data.get("answerability")
    if a:
        at = a["at_default"]
        lines.append(f"- at the default threshold {a['threshold']:.2f}: "
                     f"{100 * at['abstain_on-topic']:.1f}% of on-topic unanswerable and "
                     f"{100 * at['abstain_off-topic']:.1f}% of off-topic questions turned "
                     f"away, {100 * at['abstain_answerable']:.1f}% of answerable ones "
                     f"({100 * at['abstain_found']:.1f}% of those whose answer was retrieved)")
    return lines


def report_lines(m: dict) -> list[str]:
    """The report-split comparison from bench/train.py, when it has been run."""
    if m["kind"] == "reader":
        return reader_report_lines()
    results = ROOT / "bench" / "results" / "train.json"
    if not results.exists():
        return ["Report-split results: run bench/train.py."]
    data = json.loads(results.read_text())
    config, metric, label = (("filter", "sentence_recall", "answer-sentence recall")
                             if m["kind"] == "filter" else ("RE kl", "re_r@1", "recall@1"))
    lines = [f"## Report splits ({data['limit']} questions each, bench/train.py)", ""]
    beats = True
    for name, rows in data["datasets"].items():
        by = {r["config"]: r for r in rows}
        if config not in by:
            continue
        mine, base = by[config], by["fallbacks"]
        beats = beats and mine[metric] > base[metric]
        lines.append(f"- {name}: {label} {100 * mine[metric]:.1f} vs "
                     f"{100 * base[metric]:.1f} for the similarity fallback; EM "
                     f"{100 * mine['em']:.1f} vs {100 * base['em']:.1f}")
    lines += ["", "It beats the fallback, so ragctl uses it by default." if beats else
              "It does not beat the similarity fallback, so it is not the default; select "
              f"it with `ragctl models use {m['kind']} {m['name']}`."]
    return lines


DATA_NOTES = {
    "filter": "Questions from those splits with the top 5 passages the hybrid retriever "
              "finds for them in an index of the split's own passages (3,000 SQuAD, 1,500 "
              "NQ; a seeded sample of 2,400 used); positives are the StrInc sentences, "
              "negatives up to 8 other sentences of the same passages per positive.",
    "relevance": "400 SQuAD and 200 NQ questions, each with its top 6 retrieved passages "
                 "and log P(answer | question, passage) from gemma-3-270m (the default "
                 "generator); no relevance labels.",
    "reader": "Every dev question whose passage holds its answer (SQuAD: the gold "
              "paragraph with its title; NQ: the gold passage), the answer's first "
              "occurrence as the span; as negatives (the null score), the most word-"
              "overlapping passage of the same article without the answer, and the "
              "question's own passage with the sentences that hold the answer deleted. "
              "Beside them, two public training sets (bench/reader_data.py, sources in "
              "bench/.home/train/reader.spans.jsonl.gz.sources.json): SQuAD 2.0's training "
              "file, its first 10 articles (PhongNTDo/guide_train_MRC_transformers@631a448, "
              "train-v2.0.json; 4,719 questions, its 348 unanswerable ones negatives with "
              "their own paragraph), and WikiTableQuestions' random-split-1-train "
              "(ppasupat/WikiTableQuestions@7d455a5): the 578 questions one cell of a row "
              "they name answers (no superlative, comparison, count or list), the table "
              "read as `index` reads a CSV, each drawn three times with other rows around "
              "it, and as many windows of the same table without the answer as negatives.",
}


def _rounding_lines(m: dict) -> list[str]:
    r = m.get("rounding", {"method": "nearest"})
    if r.get("method") != "gptq":
        return []
    return ["", f"int8 weights rounded by GPTQ (ragctl/quantize.py) on {r['calibration_texts']} "
            "questions, passages and sentences from the training data: the layers' output "
            f"error is {r['output_error_vs_nearest']:.2f}× that of plain rounding. At run "
            "time the candidates within the near-tie margin of the best are scored again "
            "in float32 from the same weights (ragctl/models/ct2.py), so the top choice matches "
            "the float32 model's (see README, int8 against float32)."]


def write_card(path: Path) -> None:
    m = json.loads((path / "manifest.json").read_text())
    t = m["training"]
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    what = {"filter": "context filter: P(sentence supports the answer | question, sentence)",
            "relevance": "relevance estimator: P(passage answers the question | question, "
                         "passage)",
            "reader": "span reader: where the answer starts and ends in a passage, or that "
                      "the passage does not hold it (the [CLS] null score)"}[m["kind"]]
    lines = [
        f"# {m['name']}",
        "",
        f"A {what}.",
        f"Architecture: {m['architecture']} ({m['backend']}), initialised from "
        f"all-MiniLM-L6-v2" + (f" (its first {t['layers']} of 6 layers)" if t.get("layers")
                               else "")
        + f", {m['quantization']} CTranslate2, {size / 1e6:.1f} MB."
        + (" Question and text are embedded apart; the score is w1 * cosine + w2 * (share "
           "of the question's content words in the text) + b, starting from the similarity "
           "fallback's formula." if m["architecture"] == "bi-encoder" else ""),
        *(_rounding_lines(m)),
        "",
        "## Training data",
        "",
        "Development splits only: SQuAD v1.1 dev, even-indexed articles; NQ-oracle, the first "
        "2,000 lines" + (", and the training sets below" if m["kind"] == "reader" else "")
        + ". No report-split question, passage or answer was used.",
        "",
        DATA_NOTES.get(m["kind"], ""),
        f"Licence of the data: {t['data_licence']}.",
        "",
        f"- objective: {t['objective']}"
        + (f" (silver measure: {t['silver_measure']})" if t.get("silver_measure") else ""),
        f"- examples: {t['examples']} training, {t['val_examples']} validation; "
        f"epochs {t['epochs']} (best {t['best_epoch']}), seed {t['seed']}",
        f"- command: `{t['command']}`",
        "",
        "## Validation metrics (held-out dev slice)",
        "",
        *[f"- {k}: {v}" for k, v in m["metrics"].items()],
        "",
        *(["The validation slice is small; the report-split numbers below, on 150 "
           "questions per dataset, are the ones to read.", ""]
          if (t.get("val_examples") or 0) < 100 else []),
        *([f"Answering: {json.dumps(m['answering'])}", ""] if "answering" in m else []),
        *([f"Probabilities: σ(a·z + b) with (a, b) = {tuple(m['calibration'])}, fitted by "
           f"bench/calibrate.py on {m['calibration_data']}. Abstention threshold "
           f"{m['abstain_threshold']}: the largest that wrongly abstains on at most 3% of "
           "answerable SQuAD dev questions (against NQ questions the corpus does not "
           "cover).", ""] if "abstain_threshold" in m else []),
        *report_lines(m),
        "",
        "Reproduce with `make models` (needs ../shared/data)"
        + ("; with the two training sets: `python bench/models.py --only minilm-reader "
           "--squad2 train-v2.0.json --wtq WikiTableQuestions/` (about a minute an epoch on "
           "a GPU, hours on 2 CPU cores)." if m["kind"] == "reader" else "."),
        "",
    ]
    (path / "README.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
