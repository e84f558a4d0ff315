"""Memory of `ragctl index` on very large files, through the real command line.

Builds plain-text files of the requested sizes from real prose (SQuAD dev contexts, each
paragraph numbered so that no two passages are the same text) and a zip-bomb DOCX, then
runs `ragctl index` on each in a fresh home while sampling the resident memory of the
process every 0.1 s. Two embedders:

* ``fake`` — the hashed bag-of-words test embedder: the whole file is indexed, so the
  peak covers reading, splitting, chunking, writing and the HNSW index for every passage;
* ``real`` — all-MiniLM-L6-v2, stopped after ``--real-seconds`` (embedding 200 MB of text
  on 2 cores takes hours); the peak covers the model and the steady state of the stream.

Prints a table and writes bench/results/memory.json.
Usage: python bench/memory.py [--sizes 50 200] [--real-seconds 240] [--only fake]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import contextlib

import psutil

from bench.common import ROOT, save, squad_articles

# Registers the test fake in the child process, then runs the real command line.
CHILD = ("import sys; sys.path.insert(0, {root!r}); from ragctl import models; "
         "from tests.fakes import HashEmbedder; "
         "models.register('embedder', 'fake-hash', "
         "lambda settings, **_: HashEmbedder('fake-hash', {dim})); "
         "from ragctl.app.cli import cli; cli()")


FAKE_DIM = 64


def make_text(path: Path, megabytes: float) -> int:
    """A text file of about ``megabytes`` MB of numbered real paragraphs."""
    paragraphs = [p["context"] for a in squad_articles("dev") for p in a["paragraphs"]]
    target = int(megabytes * 1_000_000)
    written = 0
    k = 0
    with path.open("w", encoding="utf-8") as f:
        while written < target:
            para = f"{k}. {paragraphs[k % len(paragraphs)]}\n\n"
            f.write(para)
            written += len(para.encode())
            k += 1
    return written


def make_zip_bomb(path: Path, megabytes: int = 400) -> int:
    """A DOCX whose document.xml inflates to ``megabytes`` MB (about 1 MB on disk)."""
    body = b"<w:p><w:r><w:t>" + b"A" * 1000 + b"</w:t></w:r></w:p>"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>')
        with z.open("word/document.xml", "w", force_zip64=True) as w:
            w.write(b'<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>')
            chunk = body * 1000
            for _ in range(megabytes * 1_000_000 // len(chunk)):
                w.write(chunk)
            w.write(b"</w:body></w:document>")
    return path.stat().st_size


def run_index(home: Path, target: Path, embedder: str, *, limit_s: float | None,
              max_file_mb: float) -> dict[str, object]:
    env = {**os.environ, "RAGCTL_HOME": str(home), "HF_HUB_OFFLINE": "1",
           "RAGCTL_MAX_FILE_SECONDS": "0"}
    cmd = [sys.executable, "-c", CHILD.format(root=str(ROOT), dim=FAKE_DIM), "index", str(target),
           "--embedder", embedder, "--max-file-mb", str(max_file_mb), "--quiet"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    ps = psutil.Process(proc.pid)
    peak = 0
    stopped = False
    timeline: list[tuple[float, int]] = []  # (seconds, MB) every 10 s
    while proc.poll() is None:
        with contextlib.suppress(psutil.Error):
            rss = ps.memory_info().rss
            peak = max(peak, rss)
            if not timeline or time.perf_counter() - t0 >= timeline[-1][0] + 10:
                timeline.append((round(time.perf_counter() - t0, 1), round(rss / 2**20)))
        if limit_s is not None and time.perf_counter() - t0 > limit_s:
            proc.send_signal(signal.SIGINT)
            stopped = True
            break
        time.sleep(0.1)
    _out, err = proc.communicate()
    seconds = time.perf_counter() - t0
    passages = _count(home)
    return {"exit": proc.returncode, "seconds": round(seconds, 1), "peak_rss_mb":
            round(peak / 2**20), "stopped_after_s": limit_s if stopped else None,
            "passages": passages, "stderr": err.strip().splitlines()[-3:],
            "rss_timeline_mb": timeline}


def _count(home: Path) -> int | None:
    import sqlite3

    dbs = list(home.glob("index/*/ragctl.db"))
    if not dbs:
        return 0
    try:
        with sqlite3.connect(f"file:{dbs[0]}?mode=ro", uri=True) as con:
            return int(con.execute("SELECT count(*) FROM passages").fetchone()[0])
    except sqlite3.Error:
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[50, 200])
    ap.add_argument("--real-seconds", type=float, default=240)
    ap.add_argument("--only", choices=["fake", "real", "bomb"], nargs="+",
                    default=["fake", "real", "bomb"])
    ap.add_argument("--fake-dim", type=int, default=64,
                    help="dimensions of the test embedder (384: the real model's vectors)")
    ap.add_argument("--out", default="memory")
    args = ap.parse_args()
    global FAKE_DIM
    FAKE_DIM = args.fake_dim
    rows = []
    with tempfile.TemporaryDirectory(prefix="ragctl-mem-") as tmp:
        work = Path(tmp)
        texts = {}
        for mb in args.sizes:
            texts[mb] = work / f"big-{mb:g}mb.txt"
            make_text(texts[mb], mb)
        if "bomb" in args.only:
            bomb = work / "bomb.docx"
            size = make_zip_bomb(bomb)
            r = run_index(work / "home-bomb", bomb, "fake-hash", limit_s=600, max_file_mb=300)
            rows.append({"file": f"zip-bomb DOCX ({size / 1e6:.1f} MB, 400 MB inflated)",
                         "embedder": "fake-hash", **r})
            print(rows[-1], flush=True)
        for mb in args.sizes:
            for kind in [k for k in ("fake", "real") if k in args.only]:
                embedder = "fake-hash" if kind == "fake" else "all-MiniLM-L6-v2"
                limit = None if kind == "fake" else args.real_seconds
                r = run_index(work / f"home-{kind}-{mb:g}", texts[mb], embedder,
                              limit_s=limit, max_file_mb=max(300, mb * 1.5))
                if kind == "fake":
                    embedder = f"fake-hash ({FAKE_DIM} dims)"
                rows.append({"file": f"text {mb:g} MB", "embedder": embedder, **r})
                print(rows[-1], flush=True)
    for r in rows:  # memory at a quarter, half, three quarters and the end of each run
        tl = r["rss_timeline_mb"]
        r["rss_quarters_mb"] = "/".join(str(tl[min(len(tl) - 1, len(tl) * k // 4)][1])
                                        for k in (1, 2, 3, 4)) if tl else "-"
    cols = ["file", "embedder", "exit", "seconds", "stopped_after_s", "passages",
            "rss_quarters_mb", "peak_rss_mb"]
    widths = [max(len(c), *(len(str(r[c])) for r in rows)) for c in cols]
    print("\nragctl index on large files (peak resident memory; goal under 1536 MB)")
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)))
    for r in rows:
        print("  ".join(str(r[c]).ljust(w) for c, w in zip(cols, widths, strict=True)))
    save(args.out, {"rows": rows, "limit_mb": 1536})


if __name__ == "__main__":
    main()
