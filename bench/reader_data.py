"""Build the span reader's training examples into one file, to train from anywhere.

The examples (``ragctl.training.reader``): the SQuAD v1.1 dev split's even articles and the
NQ-oracle dev lines from ../shared/data (gold passage, an on-topic negative, the passage
with its answer sentences deleted); a SQuAD 2.0 *training* file (``--squad2``; its
unanswerable questions are negatives with their own passage); WikiTableQuestions'
``random-split-1-train.tsv`` (``--wtq``: the release folder with csv/ and page/), the
questions answered by one cell of a row they name, each drawn ``--table-draws`` times with
other rows around it. Never a report split, SQuAD 2.0's dev set or WTQ's test tables.

Writes OUT (``*.spans.jsonl.gz``, for ``ragctl train reader --data OUT``) and
OUT.sources.json (each file, where it came from, how many examples). Usage:
python bench/reader_data.py --squad2 train-v2.0.json --squad2-from REPO@COMMIT:PATH \\
    --wtq WikiTableQuestions/ --wtq-from REPO@COMMIT --out reader.spans.jsonl.gz
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import SHARED
from ragctl.training.reader import span_examples, table_span_examples, write_spans

SQUAD = SHARED / "data" / "squad" / "dev-v1.1.json"
NQ = SHARED / "data" / "nq_oracle" / "nq-open-oracle.jsonl.gz"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--squad2", type=Path, help="a SQuAD 2.0 training file (all of it read)")
    ap.add_argument("--squad2-from", default="", help="where it came from (repo@commit:path)")
    ap.add_argument("--wtq", type=Path, help="WikiTableQuestions' release folder")
    ap.add_argument("--wtq-from", default="", help="where it came from (repo@commit)")
    ap.add_argument("--table-draws", type=int, default=3)
    ap.add_argument("--table-holes", action="store_true",
                    help="also each table answer's rows without its row, as a negative")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()

    parts: list[tuple[str, str, list]] = []
    shared = span_examples([SQUAD, NQ], split="dev", holes=True)
    parts.append(("../shared/data: SQuAD v1.1 dev even articles, NQ-oracle first 2,000 lines",
                  "shared", shared))
    if args.squad2:
        parts.append((str(args.squad2), args.squad2_from,
                      span_examples([args.squad2], split="all", holes=True)))
    if args.wtq:
        tsv = args.wtq / "data" / "random-split-1-train.tsv"
        drawn = [ex for seed in range(args.table_draws)
                 for ex in table_span_examples(tsv, args.wtq, seed=seed,
                                               holes=args.table_holes)]
        parts.append((f"{tsv.relative_to(args.wtq)} and csv/, page/", args.wtq_from, drawn))
    examples = [ex for _, _, exs in parts for ex in exs]
    n = write_spans(examples, args.out)
    sources = [{"data": name, "from": where, "examples": len(exs),
                "answerable": sum(ex.answerable for ex in exs),
                "questions": len({ex.id.split("-neg")[0] for ex in exs})}
               for name, where, exs in parts]
    Path(str(args.out) + ".sources.json").write_text(json.dumps(
        {"examples": n, "sources": sources,
         "by_kind": Counter("negative" if not ex.answerable else "answer" for ex in examples)},
        indent=2) + "\n")
    for s in sources:
        print(f"{s['examples']:>7} examples, {s['answerable']:>6} with the answer, "
              f"{s['questions']:>6} questions  {s['data']}")
    print(f"wrote {n} examples to {args.out}")


if __name__ == "__main__":
    main()
