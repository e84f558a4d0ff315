"""Kill a real `ragctl index` with SIGKILL mid-run; the index must stay consistent."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.real

WORDS = ("river mountain lantern copper garden violin harbour meadow pencil thunder "
         "orchard saddle compass marble velvet canyon beacon falcon timber glacier").split()


def make_files(root: Path, n: int) -> None:
    rng = random.Random(7)
    root.mkdir()
    for i in range(n):
        sentences = []
        for _ in range(30):
            words = [rng.choice(WORDS) for _ in range(rng.randint(6, 14))]
            sentences.append(" ".join(words).capitalize() + ".")
        sentences.insert(5, f"The secret code of file {i} is token{i}x.")
        (root / f"doc{i:03d}.txt").write_text(" ".join(sentences))


def ragctl(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ragctl", *args], env=env,
                          capture_output=True, text=True, timeout=600)


def consistent_counts(db: Path) -> int:
    con = sqlite3.connect(db)
    try:
        docs = con.execute("SELECT id, n_passages, n_sentences FROM documents").fetchall()
        for doc_id, n_p, n_s in docs:
            got_p = con.execute("SELECT count(*) FROM passages WHERE document_id=?",
                                [doc_id]).fetchone()[0]
            got_s = con.execute("SELECT count(*) FROM sentences WHERE document_id=?",
                                [doc_id]).fetchone()[0]
            assert (got_p, got_s) == (n_p, n_s), f"document {doc_id} is half-written"
        return len(docs)
    finally:
        con.close()


def test_kill_9_mid_run_then_doctor_and_rerun(tmp_path: Path, ragctl_home: Path) -> None:
    corpus = tmp_path / "corpus"
    make_files(corpus, 120)
    env = {**os.environ, "RAGCTL_HOME": str(ragctl_home), "HF_HUB_OFFLINE": "1"}
    db = ragctl_home / "index" / "default" / "ragctl.db"

    for kill_after_docs in (1, 40):
        proc = subprocess.Popen([sys.executable, "-m", "ragctl", "index", str(corpus), "-q"],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 300
        indexed = 0
        while time.monotonic() < deadline and proc.poll() is None:
            if db.exists():
                try:
                    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
                    indexed = con.execute("SELECT count(*) FROM documents").fetchone()[0]
                    con.close()
                except sqlite3.Error:
                    indexed = 0
            if indexed >= kill_after_docs:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the run finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        n = consistent_counts(db)
        assert 0 < n < 120

        # the index is usable straight away, without a repair
        result = ragctl("search", "token0x", "--json", "-n", "3", env=env)
        assert result.returncode == 0, result.stderr
        assert any("token0x" in h["text"] for h in json.loads(result.stdout)["hits"])

    result = ragctl("doctor", "--json", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["ok"], report

    result = ragctl("index", str(corpus), "--json", env=env)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["added"] + summary["unchanged"] == 120
    assert consistent_counts(db) == 120
    result = ragctl("doctor", "--json", env=env)
    report = json.loads(result.stdout)
    assert report["ok"] and report["problems"] == [] and report["passages"] > 120
    result = ragctl("search", "token117x", "--json", "-n", "1", "--mode", "bm25", env=env)
    assert "token117x" in json.loads(result.stdout)["hits"][0]["text"]


def test_kill_9_during_doctor_leaves_an_index_doctor_can_finish(tmp_path: Path,
                                                                ragctl_home: Path) -> None:
    corpus = tmp_path / "corpus"
    make_files(corpus, 40)
    env = {**os.environ, "RAGCTL_HOME": str(ragctl_home), "HF_HUB_OFFLINE": "1"}
    assert ragctl("index", str(corpus), "-q", env=env).returncode == 0
    hnsw = ragctl_home / "index" / "default" / "vectors.hnsw"
    rng = random.Random(3)
    for _ in range(4):
        hnsw.unlink(missing_ok=True)  # doctor must rebuild it
        proc = subprocess.Popen([sys.executable, "-m", "ragctl", "doctor"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.5, 4.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        result = ragctl("search", "token7x", "--json", "-n", "3", "--mode", "vector", env=env)
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    result = ragctl("doctor", "--json", env=env)
    assert result.returncode == 0 and json.loads(result.stdout)["ok"], result.stdout
    result = ragctl("doctor", "--json", env=env)
    assert json.loads(result.stdout)["problems"] == []
    result = ragctl("search", "token7x", "--json", "-n", "3", "--mode", "bm25", env=env)
    assert "token7x" in json.loads(result.stdout)["hits"][0]["text"]
