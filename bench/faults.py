"""The fault matrix: each file ragctl owns × each fault, through the real command line.

A small index of real documents (this checkout's README and docs) is built once; for each
fault a fresh copy of it is damaged, then `status`, `search`, `ask`, `index` (a re-run)
and `doctor` run as a user would run them. A cell passes when the command gives no
traceback and no crash (exit 0, 1 or 3 — 3 for "not found"), and the search results after
`doctor` are those from before the fault (nothing committed lost, nothing silently wrong).
Prints the matrix and writes bench/results/faults.json. Usage: python bench/faults.py
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, print_table, save

RAGCTL = [sys.executable, "-m", "ragctl"]
QUERIES = ["what happens if indexing is interrupted", "how are answers cited",
           "where are the models kept", "what does doctor repair"]
COMMANDS = {"status": ["status"], "search": ["search", QUERIES[0], "--json"],
            "ask": ["ask", "What does doctor repair?"], "index": ["index"],
            "doctor": ["doctor"]}


def ragctl(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RAGCTL_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([*RAGCTL, *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=600)


def hits(home: Path) -> list[list[str]]:
    out = []
    for q in QUERIES:
        r = ragctl(home, "search", q, "--json", "-n", "3")
        out.append([f"{Path(h['path']).name}:{h['start_char']}" for h in
                    json.loads(r.stdout)["hits"]] if r.returncode == 0 else [])
    return out


def db(home: Path) -> Path:
    return home / "index" / "default" / "ragctl.db"


def hnsw(home: Path) -> Path:
    return home / "index" / "default" / "vectors.hnsw"


def _checkpoint(home: Path) -> None:
    conn = sqlite3.connect(db(home))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def _garble(path: Path, at: float = 0.5, n: int = 256) -> None:
    data = bytearray(path.read_bytes())
    k = int(len(data) * at)
    data[k:k + n] = os.urandom(min(n, len(data) - k))
    path.write_bytes(bytes(data))


def garble_db_pages(home: Path) -> None:
    _checkpoint(home)
    data = bytearray(db(home).read_bytes())
    for k in range(4096, len(data), 4096 * 3):
        data[k + 4096 - 300:k + 4096 - 20] = os.urandom(280)
    db(home).write_bytes(bytes(data))


def truncate_db(home: Path) -> None:
    _checkpoint(home)
    data = db(home).read_bytes()
    db(home).write_bytes(data[:len(data) // 3])


def shuffle_vectors(home: Path) -> None:
    code = ("import numpy as np; from ragctl.store.collection import Collection; "
            "from ragctl.config import load_settings\n"
            "with Collection.open(load_settings()) as c:\n"
            "    vi = c.vectors(); ids = np.array(sorted(vi.labels()))\n"
            "    vi.add(ids, vi.items(ids)[::-1].copy()); c.lock(); c.save_vectors()\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT,
                   env={**os.environ, "RAGCTL_HOME": str(home)})


def drop_fts_rows(home: Path) -> None:
    conn = sqlite3.connect(db(home))
    conn.execute("INSERT INTO passages_fts(passages_fts, rowid, text) SELECT 'delete', id, "
                 "text FROM passages WHERE id % 3 = 0")
    conn.commit()
    conn.close()


def delete_db(home: Path) -> None:
    for p in db(home).parent.glob("ragctl.db*"):
        p.unlink()


def not_a_database(home: Path) -> None:
    _checkpoint(home)
    db(home).write_bytes(b"this is not a database" * 400)


def truncate_hnsw(home: Path) -> None:
    data = hnsw(home).read_bytes()
    hnsw(home).write_bytes(data[:len(data) // 2])


def read_only(home: Path) -> None:
    for p in (home / "index" / "default").iterdir():
        p.chmod(0o400)
    (home / "index" / "default").chmod(0o500)


FAULTS: dict[str, tuple[str, Callable[[Path], None]]] = {
    "database deleted": ("database", delete_db),
    "database truncated": ("database", truncate_db),
    "database pages garbled": ("database", garble_db_pages),
    "not a database": ("database", not_a_database),
    "full-text rows dropped": ("database", drop_fts_rows),
    "vector file deleted": ("HNSW file", lambda h: hnsw(h).unlink()),
    "vector file truncated": ("HNSW file", truncate_hnsw),
    "vector file garbled": ("HNSW file", lambda h: _garble(hnsw(h))),
    "vectors shuffled": ("HNSW file", shuffle_vectors),
    "index read-only": ("index folder", read_only),
}
RECOVERABLE = {"full-text rows dropped", "vector file deleted", "vector file truncated",
               "vector file garbled", "vectors shuffled", "index read-only"}


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="ragctl-faults-"))
    base = work / "base"
    r = ragctl(base, "index", "README.md", "docs", "-q")
    if r.returncode != 0:
        sys.exit(r.stderr)
    before = hits(base)
    cells: dict[str, dict[str, str]] = {}
    for name, (target, inject) in FAULTS.items():
        home = work / name.replace(" ", "-")
        shutil.copytree(base, home)
        inject(home)
        row: dict[str, str] = {}
        for cmd, args in COMMANDS.items():
            if cmd == "index":
                args = ["index", str(ROOT / "README.md"), str(ROOT / "docs"), "-q"]
            out = ragctl(home, *args)
            crashed = out.returncode < 0 or out.returncode not in (0, 1, 3)
            tb = "Traceback" in out.stderr
            row[cmd] = "FAIL" if crashed or tb else "pass"
        if name == "index read-only":
            (home / "index" / "default").chmod(0o700)
            for p in (home / "index" / "default").iterdir():
                p.chmod(0o600)
        if name in RECOVERABLE:
            ragctl(home, "doctor")
            row["after doctor"] = "pass" if hits(home) == before else "FAIL"
        else:  # the database is the source: doctor says so, or the index run above
            # already rebuilt it (a deleted database), and then it must find what it did
            report = ragctl(home, "doctor")
            said = report.returncode == 1 and "Traceback" not in report.stderr
            rebuilt = report.returncode == 0 and hits(home) == before
            row["after doctor"] = "pass" if said or rebuilt else "FAIL"
        cells[name] = {"file": target, **row}
        print(f"{name}: {row}", file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
    columns = [*COMMANDS, "after doctor"]
    rows = [(f"{c['file']}: {name}", "  ".join(f"{k} {c[k]}" for k in columns), "")
            for name, c in cells.items()]
    passed = sum(v == "pass" for c in cells.values() for k, v in c.items() if k != "file")
    total = sum(1 for c in cells.values() for k in c if k != "file")
    print_table(f"fault matrix: {passed} of {total} cells pass", rows)
    print(f"\nwrote {save('faults', {'cells': cells, 'passed': passed, 'total': total})}")


if __name__ == "__main__":
    main()
