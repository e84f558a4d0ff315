"""How long opening an index made by an earlier ragctl takes: the upgrade of its SQLite
full-text index to passages' places and text (migration 5), on a synthetic index of
``--passages`` passages of 100 words. Prints a table and writes bench/results/migrate.json.
Usage: python bench/migrate.py [--passages 100000]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import print_table, save


def main() -> None:
    import sqlite_utils

    from ragctl.store import sqlite as store

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--passages", type=int, default=100_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = sqlite_utils.Database(Path(tmp) / "old.db")
        db.execute("CREATE TABLE _ragctl_migrations (number INTEGER PRIMARY KEY, name TEXT, "
                   "applied TEXT)")
        for number, step in enumerate(store.MIGRATIONS[:4], start=1):  # as made before 5
            step(db)
            db.execute("INSERT INTO _ragctl_migrations VALUES (?, ?, 'then')",
                       [number, step.__name__])
        db.execute("INSERT INTO documents (id, path, format, title, size, mtime_ns, sha256, "
                   "n_passages, n_sentences, indexed_at) VALUES (1, '/x', 'txt', 't', 1, 1, "
                   "'h', 0, 0, 'now')")
        rng = random.Random(0)
        words = [f"w{i}" for i in range(30_000)]
        with db.conn:
            db.conn.executemany(
                "INSERT INTO passages (document_id, seq, place, start_char, end_char, text, "
                "n_words, hash, embedding) VALUES (1, ?, ?, 0, 0, ?, 100, 'h', x'00')",
                ((i, f"Section {i % 50} > Part {i % 7}",
                  " ".join(rng.choice(words) for _ in range(100))) for i in range(args.passages)))
        db.close()
        t0 = time.perf_counter()
        with store.Store(Path(tmp) / "old.db") as s:  # opening it upgrades it
            seconds = time.perf_counter() - t0
            assert s.schema_version == len(store.MIGRATIONS) and s.fts_problem() is None
    print_table(f"upgrade on open, {args.passages:,} passages of 100 words", [
        ("seconds", f"{seconds:.1f}", "")])
    print(f"wrote {save('migrate', {'passages': args.passages, 'seconds': seconds})}")


if __name__ == "__main__":
    main()
