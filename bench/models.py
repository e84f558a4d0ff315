"""Reproduce the shipped default models (``make models``) from the development splits only.

Steps (each one is skipped when its output exists, so an interrupted run resumes):

1. silver labels (StrInc, Lexical) for the SQuAD dev articles and the NQ-oracle dev lines;
2. the dev passages indexed, and for a sample of dev questions the top 8 retrieved
   passages with log P_gen(answer | question, passage) from the default generator;
3. ``ragctl train filter`` (StrInc targets) and ``ragctl train re`` (KL to the generator,
   and the has-answer alternative), MiniLM cross-encoders;
4. ``ragctl export`` int8 into ``models/`` with a model card each.

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
RE_NAME = "minilm-re"
LICENCE = ("SQuAD v1.1 (CC BY-SA 4.0) and Natural Questions open / NQ-oracle "
           "(CC BY-SA 3.0, packaging MIT)")


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
        "import sys, ragctl.datasets as d, ragctl.evaluate as e, ragctl.config as c;"
        f"ds=d.load(__import__('pathlib').Path({str(path)!r}), split='dev');"
        "print(e.index_dataset(ds, c.load_settings()))")
    env = dict(os.environ, RAGCTL_HOME=str(home), HF_HUB_OFFLINE="1")
    out = subprocess.run([sys.executable, "-c", code], check=True, env=env,
                         capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--re-questions", type=int, default=400,
                    help="SQuAD dev questions labelled with passage likelihoods (NQ: half)")
    ap.add_argument("--re-passages", type=int, default=6,
                    help="retrieved passages per question for the relevance estimator")
    ap.add_argument("--filter-examples", type=int, default=1500)
    ap.add_argument("--epochs", type=int, default=2, help="filter epochs")
    ap.add_argument("--re-epochs", type=int, default=4, help="relevance epochs")
    ap.add_argument("--layers", type=int, default=3,
                    help="encoder layers kept (3 of 6: half the CPU time, 17 MB int8)")
    ap.add_argument("--until", choices=["silver", "train", "export"], default="export")
    ap.add_argument("--models", type=Path, default=ROOT / "models")
    args = ap.parse_args()
    if not SQUAD.exists() or not NQ.exists():
        sys.exit(f"bench/models.py: the shared data is missing ({SQUAD.parent.parent})")
    home = WORK / "home"
    home.mkdir(parents=True, exist_ok=True)
    silver = WORK / "silver"
    silver.mkdir(parents=True, exist_ok=True)

    # 1. sentence-level silver labels
    for name, path in (("squad-dev", SQUAD), ("nq-dev", NQ)):
        run(["silver", str(path), str(silver / f"{name}.jsonl"), "--split", "dev"], home=home)
    # 2. passage-level likelihoods over retrieved passages
    for name, path, ds, n in (("squad", SQUAD, "squad", args.re_questions),
                              ("nq", NQ, "dpr", args.re_questions // 2)):
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

    # 3. training
    runs = WORK / "runs"
    trainings = {
        FILTER_NAME: ["train", "filter", "--data", str(silver / "squad-dev.jsonl"),
                      "--data", str(silver / "nq-dev.jsonl"), "--measure", "strinc",
                      "--limit", str(args.filter_examples), "--negatives", "2"],
        RE_NAME: ["train", "re", "--data", str(silver / "re-squad-dev.jsonl"),
                  "--data", str(silver / "re-nq-dev.jsonl"), "--objective", "kl",
                  "--max-length", "192", "--lr", "2e-4"],
        "minilm-re-hasanswer": ["train", "re", "--data", str(silver / "re-squad-dev.jsonl"),
                                "--data", str(silver / "re-nq-dev.jsonl"),
                                "--objective", "has-answer", "--max-length", "192",
                                "--lr", "2e-4"],
    }
    for name, cmd in trainings.items():
        out = runs / name
        if (out / "model" / "train.json").exists():
            continue
        epochs = args.epochs if cmd[1] == "filter" else args.re_epochs
        run([*cmd, "--epochs", str(epochs), "--layers", str(args.layers),
             "--out", str(out), "--resume", "--no-export"], home=home)
    if args.until == "train":
        return

    # 4. export and model cards
    for name in (FILTER_NAME, RE_NAME, "minilm-re-hasanswer"):
        target = args.models / name if name != "minilm-re-hasanswer" else home / "models" / name
        run(["export", name, "--from", str(runs / name), "--quantization", "int8",
             "--out", str(target), "--data-licence", LICENCE], home=home)
        if name != "minilm-re-hasanswer":
            write_card(target)


def report_lines(m: dict) -> list[str]:
    """The report-split comparison from bench/train.py, when it has been run."""
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


def write_card(path: Path) -> None:
    m = json.loads((path / "manifest.json").read_text())
    t = m["training"]
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    what = ("context filter: P(sentence supports the answer | question, sentence)"
            if m["kind"] == "filter" else
            "relevance estimator: P(passage answers the question | question, passage)")
    lines = [
        f"# {m['name']}",
        "",
        f"A {what}.",
        f"Architecture: {m['architecture']} ({m['backend']}), initialised from "
        f"all-MiniLM-L6-v2" + (f" (its first {t['layers']} of 6 layers)" if t.get("layers")
                               else "")
        + f", {m['quantization']} CTranslate2, {size / 1e6:.1f} MB.",
        "",
        "## Training data",
        "",
        "Development splits only: SQuAD v1.1 dev, even-indexed articles; NQ-oracle, the first "
        "2,000 lines. No report-split question, passage or answer was used.",
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
        *report_lines(m),
        "",
        "Reproduce with `make models` (needs ../shared/data).",
        "",
    ]
    (path / "README.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
