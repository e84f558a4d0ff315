"""`ask --long` on a quiet machine and with another process keeping one core busy.

llama.cpp's threads wait on each other, so a generator started with as many threads as
CPUs crawls when one of them is taken (3.7–5.9 s quiet, 23–124 s busy, measured before).
This indexes this checkout's README and docs into a temporary home, then times the same
`ragctl ask --long --no-service` runs, alternating quiet and busy (a `while True: pass`
process pinned to one CPU), for the automatic thread count and for the old fixed one
(all CPUs: RAGCTL_GENERATOR_THREADS=cpu_count). Reports medians and the busy ÷ quiet
ratio of each, all in one run.

Prints a table and writes bench/results/contention.json.
Usage: python bench/contention.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, median, print_table, save

QUESTIONS = ["What does ragctl doctor check and repair?",
             "How does ragctl keep an interrupted index usable?"]


def ragctl(home: Path, *args: str, env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess[str]:
    e = {**os.environ, "RAGCTL_HOME": str(home), "HF_HUB_OFFLINE": "1", **(env or {})}
    return subprocess.run([sys.executable, "-P", "-m", "ragctl", *args], capture_output=True,
                          text=True, env=e, cwd=ROOT, timeout=900)


def busy_loop() -> subprocess.Popen[bytes]:
    loop = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(loop.pid, {max(os.sched_getaffinity(0))})
    time.sleep(0.5)
    return loop


def timed(home: Path, question: str, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    r = ragctl(home, "ask", question, "--long", "--no-service", "--no-log", env=env)
    if r.returncode not in (0, 3):
        sys.exit(f"ask --long failed: {r.stderr.strip()[-500:]}")
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per question and condition")
    args = ap.parse_args()
    ncpu = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    modes = {"auto": {}, "all CPUs (before)": {"RAGCTL_GENERATOR_THREADS": str(ncpu)}}
    with tempfile.TemporaryDirectory(prefix="ragctl-contention-") as tmp:
        home = Path(tmp)
        r = ragctl(home, "index", "README.md", "docs", "-q")
        if r.returncode != 0:
            sys.exit(f"index failed: {r.stderr.strip()[-500:]}")
        timed(home, QUESTIONS[0], {})  # warm the page cache and the model files
        times: dict[str, dict[str, list[float]]] = {m: {"quiet": [], "busy": []} for m in modes}
        for _ in range(args.runs):
            for q in QUESTIONS:
                for mode, env in modes.items():
                    times[mode]["quiet"].append(timed(home, q, env))
                    loop = busy_loop()
                    try:
                        times[mode]["busy"].append(timed(home, q, env))
                    finally:
                        loop.kill()
                        loop.wait()
    rows = []
    result = {"cpus": ncpu, "runs": args.runs, "questions": QUESTIONS, "modes": {}}
    for mode in modes:
        quiet, busy = median(times[mode]["quiet"]), median(times[mode]["busy"])
        ratio = busy / quiet
        result["modes"][mode] = {"quiet_median_s": round(quiet, 2),
                                 "busy_median_s": round(busy, 2), "ratio": round(ratio, 2),
                                 "quiet_s": [round(x, 2) for x in times[mode]["quiet"]],
                                 "busy_s": [round(x, 2) for x in times[mode]["busy"]]}
        rows += [(f"{mode}: quiet median", f"{quiet:.2f} s", ""),
                 (f"{mode}: one core busy median", f"{busy:.2f} s", ""),
                 (f"{mode}: busy ÷ quiet", f"{ratio:.2f}×", "≤ 2×" if mode == "auto" else "")]
    print_table(f"ask --long under CPU contention ({ncpu} CPUs, {args.runs} runs × "
                f"{len(QUESTIONS)} questions each)", rows)
    print(f"\nwrote {save('contention', result)}")


if __name__ == "__main__":
    main()
