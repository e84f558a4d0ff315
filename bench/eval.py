"""Run `ragctl eval` on every report split of ../shared/data and collect the tables.

Same code as the CLI (ragctl.evaluate); each dataset's report.md / report.json is written
to bench/results/eval/<name>/ and a combined summary to bench/results/eval.json.
Usage: python bench/eval.py [--limit 100] [--only squad nq hotpot scifact]
[--modes answer filtered] [--long-words 0]
(re-running some datasets keeps the others' results in eval.json)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import RESULTS, SHARED, save
from bench.squad_index import use_bench_home

RUNS = {
    "squad": ("squad", "squad/dev-v1.1.json", True),
    "nq": ("dpr", "nq_oracle/nq-open-oracle.jsonl.gz", True),
    "hotpot": ("hotpot", "hotpotqa/hotpot_dev_distractor_100.json", True),
    "scifact": ("beir", "scifact/beir_format", False),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=150)
    ap.add_argument("--only", nargs="*", default=list(RUNS))
    ap.add_argument("--modes", nargs="*", default=None,
                    help="context modes to answer with (default: all of ragctl eval's)")
    ap.add_argument("--long-words", type=int, default=100,
                    help="also score ask --long within N words where supporting facts exist")
    args = ap.parse_args()
    use_bench_home()
    from ragctl.config import load_settings
    from ragctl.eval.datasets import load
    from ragctl.eval.evaluate import EvalOptions, evaluate, render_report

    settings = load_settings()
    previous = RESULTS / "eval.json"
    summary = json.loads(previous.read_text())["datasets"] if previous.exists() else {}
    for name in args.only:
        fmt, rel, generate = RUNS[name]
        ds = load(SHARED / "data" / rel, fmt=fmt, split="report")

        def progress(n: int, total: int, name: str = name) -> None:
            if n % 25 == 0 or n == total:
                print(f"{name}: {n}/{total}", file=sys.stderr)

        modes = {"modes": tuple(args.modes)} if args.modes else {}
        rep = evaluate(ds, settings, EvalOptions(limit=args.limit, generate=generate,
                                                 long_words=args.long_words or None,
                                                 **modes),
                       progress=progress)
        out = RESULTS / "eval" / name
        out.mkdir(parents=True, exist_ok=True)
        md = render_report(rep)
        (out / "report.md").write_text(md)
        (out / "report.json").write_text(json.dumps(rep.to_dict(), indent=2))
        print(md)
        summary[name] = rep.to_dict()
    print(f"wrote {save('eval', {'limit': args.limit, 'datasets': summary})}")


if __name__ == "__main__":
    main()
