"""Shared helpers for the benchmarks: data location, splits, tables, JSON output."""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("RAGCTL_SHARED", ROOT.parent / "shared"))
RESULTS = ROOT / "bench" / "results"


def squad_articles(split: str) -> list[dict[str, Any]]:
    """SQuAD v1.1 dev articles: even indexes are the dev split, odd ones the report split."""
    path = SHARED / "data" / "squad" / "dev-v1.1.json"
    if not path.exists():
        sys.exit(f"bench: {path} not found (the shared evaluation data is needed)")
    data = json.loads(path.read_text())["data"]
    parity = 1 if split == "report" else 0
    return [a for i, a in enumerate(data) if i % 2 == parity]


def write_paragraphs(articles: list[dict[str, Any]], out: Path) -> int:
    """One text file per paragraph: the realistic corpus of the shared README."""
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    for a in articles:
        for k, p in enumerate(a["paragraphs"]):
            name = f"{a['title'][:60]}_{k:03d}.txt".replace("/", "_")
            (out / name).write_text(p["context"])
            n += 1
    return n


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    if not s:
        return float("nan")
    k = min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))
    return s[k]


class Timer:
    def __enter__(self) -> Timer:
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.t0


def machine() -> dict[str, Any]:
    return {"python": platform.python_version(), "cpus": os.cpu_count(),
            "machine": platform.machine(), "system": platform.system()}


def print_table(title: str, rows: list[tuple[str, str, str]]) -> None:
    """rows: (metric, value, goal)."""
    w0 = max(len(r[0]) for r in [*rows, ("metric", "", "")])
    w1 = max(len(r[1]) for r in [*rows, ("", "value", "")])
    print(f"\n{title}")
    print(f"| {'metric'.ljust(w0)} | {'value'.ljust(w1)} | goal |")
    print(f"|{'-' * (w0 + 2)}|{'-' * (w1 + 2)}|------|")
    for m, v, g in rows:
        print(f"| {m.ljust(w0)} | {v.ljust(w1)} | {g} |")


def save(name: str, payload: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    payload = {"benchmark": name, "machine": machine(),
               "when": time.strftime("%Y-%m-%dT%H:%M:%S"), **payload}
    path.write_text(json.dumps(payload, indent=2))
    return path
